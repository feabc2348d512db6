"""A wheel built from the checkout works outside it: CUDA/C++ sources, shipped models and presets
are package data found through importlib.resources, and the ``gpu-science-explorer`` console script
runs a Cahn–Hilliard batch and a shipped Flint model from an unrelated directory.

Offline: the wheel is built without build isolation (setuptools ≥ 77 from the dev extra) from a
copy of the tracked files (the worktree stays clean), and the fresh venv gets the dependencies
through a .pth line naming this interpreter's site-packages — only the wheel's own packages come
from the wheel, and they shadow nothing of the checkout (the commands run in another directory).
"""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from support.paths import ROOT


SHIPPED = ["pyproject.toml", "README.md", "main.py", "kernels", "explorer", "cli", "resources"]


def _run(cmd, cwd, timeout=300, env=None):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=env)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, console script, a working directory outside the checkout)."""
    import setuptools
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.fail("the dev extra needs setuptools ≥ 77 (PEP 639 license string): pip install -e .[dev]")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SHIPPED:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(p, src / name)
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", dist, src], cwd=tmp)
    wheels = list(dist.glob("gpu_science_explorer-*.whl"))
    assert len(wheels) == 1
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).strip())
    # pip --python: this pip installs into the fresh venv (scripts get the venv's interpreter)
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index", wheels[0]], cwd=tmp)
    deps = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    (purelib / "_gse_test_deps.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    work = tmp / "elsewhere"
    work.mkdir()
    return py, env_dir / "bin" / "gpu-science-explorer", work


def _clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GSE_BACKEND")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def test_the_wheel_holds_its_data_and_imports_from_the_venv(installed):
    py, _exe, work = installed
    code = (
        "import json, kernels, resources, explorer.presets as pr\n"
        "from importlib.resources import files\n"
        "from kernels.flint import shipped_models\n"
        "print(json.dumps({'kernels': kernels.__file__,\n"
        "  'cu': (files('kernels.cahn_hilliard') / 'cuda' / 'ch_kernels.cu').is_file(),\n"
        "  'cuh': (files('kernels.graphs') / 'cuda' / 'fw_common.cuh').is_file(),\n"
        "  'flint_cu': (files('kernels.flint.runtimes') / 'cuda' / 'flint_is.cu').is_file(),\n"
        "  'cpp': (files('kernels.graphs.apsp') / 'host' / 'dijkstra.cpp').is_file(),\n"
        "  'models': sorted(shipped_models()),\n"
        "  'presets': [p['name'] for p in pr.load_presets('cahn_hilliard')]}))\n")
    out = json.loads(_run([py, "-c", code], cwd=work, env=_clean_env()))
    assert str(ROOT) not in out["kernels"] and "site-packages" in out["kernels"]
    assert out["cu"] and out["cuh"] and out["flint_cu"] and out["cpp"]
    assert "luo_rudy_1991.flint" in out["models"] and "wang_buzsaki_1996.xml" in out["models"]
    assert len(out["presets"]) >= 3


def test_console_script_runs_ch_and_a_shipped_flint_model_elsewhere(installed):
    _py, exe, work = installed
    res = json.loads(_run([exe, "ch", "--size", "32", "--steps", "10", "--json", "--backend", "cpu"], cwd=work,
                          env=_clean_env()))
    assert res["steps"] == 10 and res["size"] == 32
    out = json.loads(_run([exe, "flint", "luo_rudy_1991", "--runtime", "cpu", "--t-end", "5", "--dt", "0.01",
                           "--json"], cwd=work, env=_clean_env()))
    assert out["model"] == "luo_rudy_1991" and out["steps"] == 500 and out["runtime"] == "cpu"
    assert -90 < out["variables"]["V"]["final"] < -80          # the LR-1991 cell at rest (mV)
    assert not list(work.iterdir())                  # nothing written where it ran
