"""Packaging hygiene (issue 36): the licence file matches pyproject's, CITATION.cff names the
software and its five papers, the changelog exists, and the kernels/ API reference builds."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib

import pytest
from support.paths import ROOT, SHARED



def test_license_is_the_one_pyproject_names():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "LICENSE").read_text()
    assert meta["license"] == "MIT" and text.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in text


def test_citation_names_the_software_and_the_five_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == meta["version"] and cff["license"] == meta["license"]
    refs = cff["references"]
    assert len(refs) == 5
    seeds = SHARED / "seeds"
    titles = [r["title"] for r in refs]
    if seeds.is_dir():                     # each title appears in its paper's text
        texts = " ".join(" ".join(p.read_text(errors="replace").split()) for p in sorted(seeds.glob("00*.txt")))
        for t in titles:
            assert t.replace("–", "-") in texts.replace("–", "-"), t
    assert any(r.get("doi") == "10.1002/cpe.1462" for r in refs)
    assert all(r["authors"] for r in refs)


def test_changelog_has_the_current_version():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog") and meta["version"] in text


@pytest.mark.slow                                       # imports every kernels module (~10–60 s)
@pytest.mark.skipif(importlib.util.find_spec("pdoc") is None, reason="pdoc is not installed (dev extra)")
def test_api_reference_of_kernels_builds(tmp_path):
    r = subprocess.run([sys.executable, "scripts/api_docs.py", "-o", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "index.html").is_file()
    page = (tmp_path / "kernels" / "appdirs.html").read_text()
    assert "platformdirs" in page and "settings_file" in page     # from the module's docstrings
    assert (tmp_path / "kernels" / "cahn_hilliard").is_dir()       # subpackages too
