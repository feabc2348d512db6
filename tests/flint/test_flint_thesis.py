"""benchmarks/flint_thesis.py, the thesis's Tables 5.3 / 5.5 / 5.9 and Fig. 5.10 (paper 004 ch. 5) and the
issue-23 auto check: its counting helpers (fast), its ``--quick`` CPU sections with sanity checks on the
numbers it prints (slow), and its GPU sections (``gpu``)."""
from __future__ import annotations

import csv
import importlib.util
import io
import os
import subprocess
import sys

import numpy as np
import pytest

from kernels.backend import gpu_available
from support.paths import ROOT

SCRIPT = ROOT / "benchmarks" / "flint_thesis.py"
GPU_OK, GPU_WHY = gpu_available()


@pytest.fixture(scope="module")
def ft():
    spec = importlib.util.spec_from_file_location("flint_thesis", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(tmp_path, *args) -> dict:
    """Run the benchmark with ``--format csv``; its tables as {title prefix: [row dicts]}."""
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    r = subprocess.run([sys.executable, str(SCRIPT), "--format", "csv", *args], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    tables: dict = {}
    header = None
    for line in r.stdout.splitlines():
        if line.startswith("table,"):
            header = next(csv.reader([line]))
        elif header and line.startswith('"') or header and line and not line.startswith(("#", " ", "auto within",
                                                                                        "bytecode", "Peak", "Δ")):
            row = next(csv.reader(io.StringIO(line)))
            if len(row) == len(header):
                d = dict(zip(header, row))
                tables.setdefault(d["table"].split(":")[0], []).append(d)
    assert (tmp_path / "out" / "flint_thesis.csv").is_file()
    return tables


def test_bytecode_refs_match_the_compilers_listing(ft):
    from kernels.flint import compile_model, load_model
    prog = compile_model(load_model("luo_rudy_1991"), 1)
    listing = [ln.split()[1] for ln in prog.listing().splitlines()]
    assert listing[-1] == "END" and listing.count("END") == 1       # the listing covers the whole code
    assert ft.bytecode_refs(prog.code) == sum(op in ft.MEM_OPS for op in listing) > 0
    comp, refs = ft.step_bytes(prog, "cell")
    comp_e, _ = ft.step_bytes(prog, "expression")
    assert comp == 8 * (2 * prog.n_states + prog.consts.size)
    assert comp_e - comp == 8 * 2 * prog.n_slots                     # the expression mapping's slots


def test_error_measures_and_breakpoints(ft):
    from kernels.flint import load_model
    rng = np.random.default_rng(7)
    ref = rng.normal(size=(50, 3)) + 5.0
    off = rng.uniform(0.1, 1.0)
    rms_v, rr_v, rr_max = ft.errors(ref + np.array([off, 0.0, 2 * off]), ref, 0)
    assert rms_v == pytest.approx(off) and rr_v == pytest.approx(off / np.sqrt(np.mean(ref[:, 0] ** 2)))
    assert rr_max == pytest.approx(2 * off / np.sqrt(np.mean(ref[:, 2] ** 2)))
    lr = load_model("luo_rudy_1991")
    start, dur = float(lr.params["stim_start"]), float(lr.params["stim_duration"])
    assert ft.breakpoints(lr, 100.0) == [0.0, start, start + dur, 100.0]


def test_radau_reference_of_a_linear_model(ft):
    """The reference integrator against the closed form x(t) = x0·exp(−k t)."""
    from kernels.flint import parse_text
    k = float(np.random.default_rng(3).uniform(0.05, 0.5))
    m = parse_text(f"model decay\nstate x = 2.0\nparam k = {k}\node x = -k*x")
    t = np.linspace(0.1, 10.0, 37)
    got = ft.radau_reference(m, t)[:, 0]
    assert np.max(np.abs(got - 2.0 * np.exp(-k * t))) < 1e-8


@pytest.mark.slow
def test_quick_cpu_sections_are_sane(tmp_path):
    t = _run(tmp_path, "--quick", "--no-gpu", "--sections", "accuracy,memory,auto", "--dts", "0.01,0.005")
    acc = [r for r in t["Table 5.9 (issue 23 form)"] if r["integrator"] in ("euler", "rk4")]
    err = {(r["integrator"], r["dt (ms)"], r["precision"]): float(r["RMS(V) (mV)"]) for r in acc}
    for dt in ("0.01", "0.005"):
        assert err["rk4", dt, "float64"] < err["euler", dt, "float64"]
    for integ in ("euler", "rk4"):                           # both converge as dt halves
        assert err[integ, "0.005", "float64"] < err[integ, "0.01", "float64"]
    for r in acc:
        if r["precision"] == "float32":                      # rounding: below the method's own error
            vs64 = float(r["float32: RMS(V) vs the float64 run (mV)"])
            assert 0 < vs64 < err["euler", "0.01", "float64"]
        assert 0 < float(r["RRMSE(V)"]) <= float(r["max RRMSE over states"]) < 1
    thesis = t["Table 5.9 (thesis form)"]
    assert {r["runtime"] for r in thesis} >= {"c (cell)"}
    for r in thesis:                                         # c and the NumPy runtime: c-is's numbers
        assert float(r["RRMSE"]) <= 1e-12
    mem = t["Table 5.3"]
    assert {r["runtime"] for r in mem} >= {"cpu", "c-is"}
    for r in mem:
        assert float(r["estimate host"].replace(",", "")) > 0
        one = float(r["results (1 sample)"].replace(",", ""))
        if one >= 10:                                        # KB to one decimal: compare where that is exact enough
            assert float(r["results of 1000 samples"].replace(",", "")) == pytest.approx(1000 * one, rel=1e-2)
    auto = t["issue 23"]
    assert {r["cells"] for r in auto} == {"ensemble", "line"}
    for r in auto:
        times = {k: float(v) for k, v in r.items() if k in ("c (1 core)", "cpu")}
        assert r["fastest"] == min(times, key=times.get).split(" ")[0]
        assert float(r["auto / fastest"]) >= 1.0 and r["≤ 1.2×"] in ("PASS", "FAIL")


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason=f"no GPU: {GPU_WHY}")
def test_quick_gpu_sections(tmp_path):
    t = _run(tmp_path, "--quick")
    checked = 0
    for r in t["Table 5.3"]:                                 # real allocation against the computed rows
        if r["runtime"] in ("is", "ts") and r["measured / sum"] != "—" \
                and float(r["sum at build"].replace(",", "")) >= 100:     # 512 B rounding negligible
            assert 0.8 <= float(r["measured / sum"]) <= 1.5, r
            checked += 1
    assert checked >= 4
    bw = t["Table 5.5"]
    assert {(r["runtime"], r["mapping"]) for r in bw} >= {("is", "cell"), ("ts", "expression")}
    for r in bw:
        assert 0 < float(r["compulsory GB/s"]) and float(r["compulsory / peak"].rstrip(" %")) < 100
    for r in t["Fig. 5.10"]:                                 # switching one off changes little but time
        for k, v in r.items():
            if k.endswith(" off") or k == "all on":
                assert "(Δ" not in v or float(v.split("Δ")[1].strip(" )")) < 1e-9, (k, v)
    for r in t["Table 5.9 (thesis form)"]:                   # GPU runtimes against c-is, float64
        assert float(r["RRMSE"]) < 1e-12, r
    gpu_acc = [r for r in t["Table 5.9 (issue 23 form)"] if r["runtime"].startswith(("ts", "is"))]
    assert {r["precision"] for r in gpu_acc} == {"float64", "float32"}
    assert all(r["≤ 1.2×"] in ("PASS", "FAIL") for r in t["issue 23"])
