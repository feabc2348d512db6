"""The Flint wing's shape (issue 22): modules of at most ~600 lines, no private (``_name``) imports
between modules, and no runtime name compared as a string outside the runtime classes."""
from __future__ import annotations

import re
from support.paths import ROOT

FLINT = ROOT / "kernels" / "flint"
MAX_LINES = 600


def _sources():
    return sorted(FLINT.rglob("*.py"))


def test_flint_modules_are_small():
    big = {str(p.relative_to(ROOT)): n for p in _sources() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def test_no_private_imports_between_flint_modules():
    pat = re.compile(r"^\s*from\s+\S+\s+import\s+(\([^)]*\)|[^\n]*)", re.M)
    bad = []
    for p in _sources() + [ROOT / "cli" / "flint.py", ROOT / "cli" / "flint_suite.py", ROOT / "cli" / "flint_sweep.py"]:
        for m in pat.finditer(p.read_text()):
            names = [n.split("#")[0].strip(" ()\n").split(" as ")[0] for n in m.group(1).split(",")]
            bad += [f"{p.relative_to(ROOT)}: {n}" for n in names if n.startswith("_") and n != "__future__"
                    and not n.startswith("__")]
    assert not bad, bad


def test_runtime_names_are_not_compared_outside_the_registry():
    """``runtime == "ts"``, ``runtime in ("c", "c-is")`` and the like: a runtime's traits are class
    attributes of its Runtime (device, compiler, mappings, threaded, info()), not string tests."""
    pat = re.compile(r"""runtime\w*\s*(?:==|!=|\bin\b)\s*(?:\([^)]*)?["'](?:cpu|is|ts|c|c-is)["']|GPU_RUNTIMES|HOST_RUNTIMES""")
    files = [ROOT / "cli" / "flint.py", ROOT / "cli" / "flint_sweep.py", ROOT / "explorer" / "flint" / "workspace.py",
             ROOT / "explorer" / "flint" / "worker.py", ROOT / "kernels" / "sweep" / "tasks.py"]
    files += list((FLINT / "runtimes").glob("*.py"))
    bad = [f"{p.relative_to(ROOT)}:{i}: {ln.strip()}" for p in files
           for i, ln in enumerate(p.read_text().splitlines(), 1) if pat.search(ln)]
    assert not bad, bad
