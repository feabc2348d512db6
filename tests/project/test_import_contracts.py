"""The house's layering rules as checks: import-linter's contracts in pyproject.toml hold.

This is the one layering check (kernels/ knows no screen, the systems are independent, a view
imports only its own system, the GPU layer sits below the systems): import-linter reads every
import, those inside functions too, so no test re-imports the packages to look for Qt.

import-linter is a dev dependency (``pip install -e .[dev]``), so this test runs rather than
skips.  The second test shows the contract types used there do catch a violation: a throw-away
project with the same module names in which one compute system imports another.
"""
import os
import shutil
import subprocess
import sys
import textwrap
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)


def _lint_imports() -> list[str]:
    exe = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")
    assert exe, "import-linter is a dev dependency: pip install -e .[dev]"
    return [exe]


def _run(cwd, *args):
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(_lint_imports() + list(args), cwd=cwd, capture_output=True, text=True,
                          timeout=240, env=env)


def test_import_contracts_hold():
    r = _run(ROOT, "--no-cache")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    for name in ("kernels knows no screen", "workspaces are independent", "compute systems are independent",
                 "layers: main window, workspaces, kernels", *VIEW_CONTRACTS):
        assert f"{name} KEPT" in out, out[-4000:]


#: "a view imports only its own system" (issue 33), one contract per workspace package
VIEW_CONTRACTS = tuple(f"a view imports only its own system: {w}"
                       for w in ("Cahn–Hilliard", "Graphs", "Occupancy", "Flint", "random numbers"))
SYSTEMS = ("cahn_hilliard", "graphs", "occupancy", "flint", "rng")


def test_each_view_contract_forbids_every_other_system_without_ignores():
    """The view contracts name every other compute system (a new system must be added to them), the
    app's cross-system kernels, and ignore nothing."""
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        contracts = tomllib.load(fh)["tool"]["importlinter"]["contracts"]
    views = {c["name"]: c for c in contracts if c["name"] in VIEW_CONTRACTS}
    assert set(views) == set(VIEW_CONTRACTS)
    for c in views.values():
        (src,) = c["source_modules"]
        own = "kernels." + src.split(".")[1]
        want = {f"kernels.{s}" for s in SYSTEMS} - {own} | {"kernels.app_kernels"}
        assert set(c["forbidden_modules"]) == want, c["name"]
        assert "ignore_imports" not in c
    on_disk = {d for d in os.listdir(os.path.join(ROOT, "explorer"))
               if os.path.isfile(os.path.join(ROOT, "explorer", d, "__init__.py")) and d != "__pycache__"}
    assert {c["source_modules"][0].split(".")[1] for c in views.values()} == on_disk & set(SYSTEMS)


def test_the_contracts_catch_a_system_importing_another(tmp_path):
    with open(os.path.join(ROOT, "pyproject.toml")) as fh:
        text = fh.read()
    config = text[text.index("\n[tool.importlinter]\n"):]
    (tmp_path / "pyproject.toml").write_text(config)
    files = {
        "kernels/__init__.py": "",
        "kernels/launches.py": "",
        "kernels/app_kernels.py": "",
        "kernels/sweep/__init__.py": "",
        "kernels/rng/__init__.py": "from .. import launches\n",
        "kernels/cahn_hilliard/__init__.py": "from .. import rng\n",          # allowed: a lower layer
        "kernels/graphs/__init__.py": "",
        "kernels/graphs/bfs.py": "from ..occupancy import calc\n",           # forbidden: a sibling
        "kernels/occupancy/__init__.py": "",
        "kernels/occupancy/calc.py": "",
        "kernels/flint/__init__.py": "",
        "kernels/gpu/__init__.py": "from .. import launches\n",                # allowed: below the systems
        "cli/__init__.py": "",
        "explorer/__init__.py": "",
        "explorer/main_window.py": "from . import graphs\n",
        "explorer/cahn_hilliard/__init__.py": "",
        "explorer/graphs/__init__.py": "from kernels import graphs, gpu\n",   # its system and a shared layer
        "explorer/occupancy/__init__.py": "from kernels.graphs import bfs\n",  # forbidden: another system
        "explorer/flint/__init__.py": "",
        "explorer/rng/__init__.py": "",
    }
    for rel, body in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(body))
    r = _run(tmp_path, "--no-cache")
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "compute systems are independent BROKEN" in out
    assert "kernels.graphs.bfs -> kernels.occupancy.calc" in out
    assert "workspaces are independent KEPT" in out and "kernels knows no screen KEPT" in out
    assert "a view imports only its own system: Occupancy BROKEN" in out
    assert "explorer.occupancy -> kernels.graphs.bfs" in out
    for name in VIEW_CONTRACTS:
        if not name.endswith("Occupancy"):
            assert f"{name} KEPT" in out, out
