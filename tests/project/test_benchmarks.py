"""The benchmarks run: each accepts ``--quick``, and the ones that can run on the CPU do so here
(like pyqtgraph's examples test, on the CPU backend, about 30 s together); the GPU-only ones are
skipped with a reason (they run with ``--quick`` on the device).
Benchmarks use only the public kernels API (no ``_private`` names from kernels).

Markdown goes to $OUT (a temporary folder here), never into the checkout.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.backend import gpu_available
from support.paths import ROOT, SUITE

BENCH = ROOT / "benchmarks"
GPU_OK, GPU_WHY = gpu_available()

#: benchmark → (runs on the CPU, extra arguments beside --quick to keep the CPU run short)
BENCHMARKS = {
    "bfs.py": (False, []),
    "ch.py": (False, []),
    "ch_scan.py": (False, []),
    "ch_fig10.py": (True, ["--budget", "0.05"]),          # seconds of timed steps a point
    "clustering001.py": (True, ["--cpu-repeats", "1", "--sizes", "ws=500,1000", "--sizes", "ba=500,1000"]),
    "flint.py": (True, ["--no-gpu", "--steps", "200", "--only", "ensembles", "--runtimes", "cpu",
                        "--ensemble-sizes", "1,1000"]),
    "flint_compile.py": (True, []),
    "flint_ensembles.py": (True, ["--sections", "stiff"]),
    "flint_thesis.py": (True, ["--no-gpu", "--sections", "accuracy,memory", "--accuracy-t-end", "20"]),
    "fw.py": (True, ["--sections", "launch", "--host-n", "128", "--n", "512"]),
    "fw_ncu.py": (False, []),
    "gpu_layer.py": (False, []),
    "graph_view.py": (True, ["--only", "layout", "--no-gpu", "--peer-sizes", "150,300", "--quality-n", "500"]),
    "graphs.py": (False, []),
    "interop.py": (False, []),
    "multigpu.py": (False, []),
    "occupancy.py": (False, []),
    "paper001_multigpu.py": (True, ["--repeats", "1", "--rng-numbers", "1e6", "--cc-sizes", "500,1000"]),
    "pfhub.py": (True, ["--t-end", "10"]),               # every run and study, to t = 10 (quick: 100)
    "rng.py": (True, ["--streams", "3072"]),             # approach 1 on 3 072 streams, not the paper's 30 720
    "sbml_suite.py": (True, ["--suite-dir", str(SUITE), "--workers", "1"]),   # one worker process
    "sweeps.py": (True, ["--workers", "1", "--runs", "4"]),   # one worker: two cluster starts, not three
    "table2.py": (True, []),
    "unstructured.py": (False, []),
}
NOT_BENCHMARKS = {"report.py",          # the shared markdown writer
                  "ch_temporal.py",     # kernel E's temporal-blocking rows of ch.py (ch.py --temporal)
                  "ch_ncu.py"}          # a few CH steps for Nsight Compute to profile (device only)


def test_every_benchmark_is_listed_and_takes_quick():
    found = {p.name for p in BENCH.glob("*.py")} - NOT_BENCHMARKS
    assert found == set(BENCHMARKS), found ^ set(BENCHMARKS)
    for name in found:
        assert '"--quick"' in (BENCH / name).read_text(encoding="utf-8"), f"{name} has no --quick"


def _private_kernels_names(path: Path) -> list[str]:
    """``from kernels… import _x`` and ``mod._x`` where ``mod`` is a kernels module (or an object
    imported from kernels) in one benchmark's source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_kernels: set[str] = set()
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kernels":
            for al in node.names:
                if al.name.startswith("_"):
                    bad.append(f"from {node.module} import {al.name}")
                from_kernels.add(al.asname or al.name)
        elif isinstance(node, ast.Import):
            for al in node.names:
                if al.name.split(".")[0] == "kernels":
                    if any(part.startswith("_") for part in al.name.split(".")):
                        bad.append(f"import {al.name}")
                    from_kernels.add((al.asname or al.name).split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in from_kernels):
            bad.append(f"{node.value.id}.{node.attr}")
    return bad


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmarks_use_only_public_kernels_api(name):
    assert _private_kernels_names(BENCH / name) == []


def test_the_private_name_check_can_fail(tmp_path):
    p = tmp_path / "b.py"
    p.write_text("from kernels.backend import _gpu_backend\nfrom kernels.rng import gpu as rg\nrg._module('f4')\n")
    assert _private_kernels_names(p) == ["from kernels.backend import _gpu_backend", "rg._module"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmark_quick_runs(name, tmp_path):
    on_cpu, extra = BENCHMARKS[name]
    if not on_cpu:
        pytest.skip(f"{name} is GPU-only: `python benchmarks/{name} --quick` runs it on the device")
    if name == "sbml_suite.py" and not SUITE.is_dir():
        pytest.skip(f"the SBML Test Suite is not at {SUITE}")
    if name == "flint_compile.py" and not GPU_OK and not shutil.which("g++"):
        pytest.skip("flint_compile.py needs NVRTC (a GPU) or g++")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHONPATH": path, "GSE_BACKEND": "cpu"}
    r = subprocess.run([sys.executable, str(BENCH / name), "--quick", *extra], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{name}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert "|" in r.stdout                          # it printed its markdown table
    assert not [p for p in tmp_path.iterdir() if p.name != "out"]    # nothing beside $OUT
