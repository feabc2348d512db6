"""SBML Test Suite runner: parsing, the pass rule, results.csv layout, worker isolation, CI sample, CLI."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from cli import flint_suite as H
from kernels.flint.sbml import conformance as S
from kernels.flint.schemes import register_backend
from support.fake_suite import LOCAL_GROUP, TIMEOUT, local_run, make_suite
from support.fake_suite import fake_runtime as _fake_runtime, make_case as _make_case
from support.paths import ROOT

SUITE = H.suite_dir()
needs_suite = pytest.mark.skipif(not (SUITE / "cases").is_dir(),
                                 reason=f"SBML Test Suite not found at {SUITE} (set GSE_SBML_SUITE)")
needs_rr = pytest.mark.skipif(importlib.util.find_spec("roadrunner") is None,
                              reason="libRoadRunner not installed (pip install libroadrunner)")


# ------------------------------------------------------------ a tiny fake suite and runtime

# the fake suite and runtime (backend "fake"): tests/support/fake_suite.py, shared with
# tests/sweep/test_sweep_suite.py, which checks the same local run

@pytest.fixture
def fake_suite(tmp_path):
    return make_suite(tmp_path / "suite")


# ------------------------------------------------------------ parsing

def test_parse_settings_and_times():
    s = S.parse_settings("start: 1.5\nduration: 3\nsteps: 6\nvariables: S1, S2 ,P\nabsolute: 1.000000e-007\n"
                         "relative: 0.0001 \namount: S1\nconcentration: S2\n\n")
    assert (s.start, s.duration, s.steps, s.absolute, s.relative) == (1.5, 3.0, 6, 1e-7, 1e-4)
    assert s.variables == ["S1", "S2", "P"] and s.amount == ["S1"] and s.concentration == ["S2"]
    t = s.times()
    assert len(t) == 7 and t[0] == 1.5 and t[-1] == 4.5 and np.allclose(np.diff(t), 0.5)
    with pytest.raises(InvalidParameter):
        S.parse_settings("start: 0\nduration:\nsteps: 5\n")


def test_parse_tags_first_block_and_empty():
    text = ("(*\ncomponentTags: AssignmentRule, CSymbolTime , Parameter \ntestTags:      \n"
            "testType:      TimeCourse\n*)\ncomponentTags: Other\ntestTags: X\n")
    assert S.parse_tags(text) == (["AssignmentRule", "CSymbolTime", "Parameter"], [], "TimeCourse")


def test_parse_case_ids():
    assert S.parse_case_ids(["3-5", "00001", "10,2"]) == ["00001", "00002", "00003", "00004", "00005", "00010"]
    for bad in (["abc"], ["5-3"], ["0"]):
        with pytest.raises(InvalidParameter):
            S.parse_case_ids(bad)


def test_discover_fake_suite(fake_suite, monkeypatch):
    monkeypatch.setenv("GSE_SBML_SUITE", str(fake_suite))
    assert H.suite_dir() == fake_suite and H.suite_dir("/x") == Path("/x")
    cases = S.discover(H.suite_dir(), ids=["00002", "00004", "00099"])
    assert [c.id for c in cases] == ["00002", "00004"]
    assert cases[0].tags == ["Species", "Parameter", "Amount"] and cases[0].model.name == "00002-sbml-l3v2.xml"
    with pytest.raises(InvalidParameter, match="not found.*git clone"):
        S.discover(fake_suite / "nowhere")


@pytest.mark.parametrize("layout", ["cases/semantic", "semantic", "."])
def test_discover_upstream_layouts(fake_suite, tmp_path, layout):
    """A clone of sbmlteam/sbml-test-suite (cases/semantic/NNNNN), the release zip (semantic/NNNNN) and
    a bare folder of cases are found as well as the project's cases/NNNNN layout."""
    import shutil
    root = tmp_path / "suite"
    shutil.copytree(fake_suite / "cases", root / layout, dirs_exist_ok=True)
    assert [c.id for c in S.discover(root, ids=["00002", "00004"])] == ["00002", "00004"]


# ------------------------------------------------------------ the pass rule

def _res(t, **cols):
    names = ["time", *cols]
    return S.Results(",".join(names), names, np.column_stack([t, *cols.values()]))


def test_compare_tolerance_edge_and_worst_point():
    t = np.arange(4.0)
    exp = _res(t, A=np.array([1.0, 10.0, 100.0, 0.0]), B=np.ones(4))
    allowed = 1e-3 + 1e-2 * np.array([1.0, 10.0, 100.0, 0.0])
    sim = {"A": exp.column("A") + 0.9 * allowed, "B": np.ones(4)}
    sim["A"][2] = 100.0 - 0.99 * allowed[2]  # the worst ratio, at t=2
    c = S.compare(exp, sim, 1e-3, 1e-2)
    assert c.ok and c.worst["variable"] == "A" and c.worst["time"] == 2.0
    assert c.worst["ratio"] == pytest.approx(0.99)
    sim["B"] = np.array([1.0, 1.0, 1.0, 1.0 + 1.5 * (1e-3 + 1e-2)])
    c = S.compare(exp, sim, 1e-3, 1e-2)
    assert not c.ok and c.worst["variable"] == "B" and c.worst["time"] == 3.0 and "B" in c.message


def test_compare_nan_inf_exact():
    t = np.arange(3.0)
    exp = _res(t, X=np.array([np.inf, -np.inf, np.nan]))
    assert S.compare(exp, {"X": np.array([np.inf, -np.inf, np.nan])}, 1e-3, 1e-3).ok
    for bad in ([np.inf, np.inf, np.nan], [np.inf, -np.inf, 0.0], [1e308, -np.inf, np.nan],
                [np.nan, -np.inf, np.nan]):
        assert not S.compare(exp, {"X": np.array(bad)}, 1e-3, 1e-3).ok, bad
    fin = _res(t, X=np.ones(3))
    assert not S.compare(fin, {"X": np.array([1.0, np.nan, 1.0])}, 1e9, 1e9).ok
    assert not S.compare(fin, {"X": np.array([1.0, 1.0, np.inf])}, 1e9, 1e9).ok


def test_compare_missing_and_wrong_length():
    exp = _res(np.arange(3.0), X=np.ones(3))
    assert "missing" in S.compare(exp, {"Y": np.ones(3)}, 1, 1).message
    c = S.compare(exp, {"X": np.ones(4)}, 1, 1)
    assert not c.ok and "4 points" in c.message


# ------------------------------------------------------------ results.csv layout

def _roundtrip(src: Path, tmp_path: Path):
    like = S.read_results(src)
    vals = {c: like.column(c) for c in like.columns[1:]}
    out = tmp_path / "out.csv"
    S.write_results(out, like, like.times, vals)
    raw_in, raw_out = src.read_bytes(), out.read_bytes()
    nl = b"\r\n" if b"\r\n" in raw_in else b"\n"
    assert raw_out.split(nl)[0] == raw_in.split(nl)[0]                    # same header line
    assert raw_out.count(nl) == raw_in.count(nl) and raw_out.endswith(nl) == raw_in.endswith(nl)
    back = S.read_results(out)
    assert back.columns == like.columns
    np.testing.assert_array_equal(back.data, like.data)                   # NaN-aware, bit-exact values


@needs_suite
@pytest.mark.parametrize("cid", ["00001", "00950", "01810", "01820"])
def test_results_layout_roundtrip_real(cid, tmp_path):
    _roundtrip(SUITE / "cases" / cid / f"{cid}-results.csv", tmp_path)


@needs_suite
def test_results_layout_roundtrip_crlf_and_no_final_newline(tmp_path):
    odd = [p for p in sorted((SUITE / "cases").glob("*/*-results.csv"))
           if b"\r\n" in p.read_bytes() or not p.read_bytes().endswith(b"\n")]
    assert odd, "the suite has CRLF / unterminated results.csv files"
    for p in odd:
        _roundtrip(p, tmp_path)


def test_write_results_rejects_wrong_rows(tmp_path):
    like = _res(np.arange(3.0), X=np.ones(3))
    with pytest.raises(InvalidParameter):
        S.write_results(tmp_path / "x.csv", like, np.arange(3.0), {"X": np.ones(2)})


# ------------------------------------------------------------ isolation in the one executor (the sweep layer)

@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.xdist_group(LOCAL_GROUP)
def test_run_cases_isolates_hang_and_crash(tmp_path_factory):
    """The local scheduler: a crashing case and a hung one (past the time limit) fail alone.  The limit
    is generous (a loaded 2-core box starts Dask workers slowly); the hung case sleeps far beyond it.
    (The run is support.fake_suite.local_run, made once: tests/sweep/test_sweep_suite.py checks it too.)"""
    run = local_run(tmp_path_factory)
    cases, out, seen = run.cases, run.outcomes, run.seen
    st = {o.case: o for o in out}
    assert [o.case for o in out] == [c.id for c in cases]
    assert st["00001"].status == "failed" and "crashed: worker process died" in st["00001"].message
    assert st["00003"].status == "failed" and st["00003"].message == f"timed out after {TIMEOUT:g} s (worker killed)"
    assert st["00004"].status == "failed" and "wrong numbers" in st["00004"].message and st["00004"].worst
    assert st["00005"].status == "refused" and "<delay>" in st["00005"].message
    assert st["00006"].status == "failed" and "ZeroDivisionError" in st["00006"].message
    assert [st[c].status for c in ("00002", "00007", "00008")] == ["passed"] * 3
    assert [d for d, _, _ in seen] == list(range(1, 9)) and all(n == 8 for _, n, _ in seen)
    written = sorted(p.name for p in run.out_dir.iterdir())
    assert written == ["00002.csv", "00004.csv", "00007.csv", "00008.csv"]
    # the written case re-checks against results.csv by the same rule
    like = S.read_results(cases[1].results_path)
    back = S.read_results(run.out_dir / "00002.csv")
    assert S.compare(like, {c: back.column(c) for c in back.columns[1:]}, 1e-6, 1e-4).ok
    rep = S.report(cases, out, "fake", 1.0)
    assert rep["totals"] == {"passed": 3, "failed": 4, "refused": 1, "total": 8}
    assert rep["tags"]["test:Odd"] == {"passed": 1, "failed": 2, "refused": 1}  # cases 1, 3, 5, 7
    assert rep["tags"]["component:Species"]["failed"] == 4
    json.dumps(rep, allow_nan=False)
    assert "test:Odd" in S.format_tag_table(rep["tags"])


# ------------------------------------------------------------ CI sample

def test_stratified_sample_synthetic():
    def case(i, tags):
        return S.Case(f"{i:05d}", Path("."), None, None, list(tags), [], "TimeCourse")
    cases = [case(i, ["Common"] + (["Rare"] if i == 37 else [])) for i in range(1, 101)]
    cases.append(S.Case("00200", Path("."), None, None, ["Fbc"], [], "FluxBalanceSteadyState"))
    ids = S.stratified_sample(cases, n=10)
    assert len(ids) == 10 and "00037" in ids and "00200" not in ids
    assert ids == S.stratified_sample(list(reversed(cases)), n=10)
    assert int(ids[-1]) > 80 and int(ids[0]) < 20  # spread over the range


@needs_suite
def test_fixed_sample_file_covers_every_tag():
    cases = S.discover(SUITE)
    ids = H.read_sample()
    assert len(ids) >= 150 and len(set(ids)) == len(ids)
    assert ids == S.stratified_sample(cases, 150), "tests/data/sbml_suite_sample.txt is out of date"
    chosen = {t for c in cases if c.id in set(ids) for t in c.tags}
    assert chosen == {t for c in cases for t in c.tags}


# ------------------------------------------------------------ CLI

def _cli(*args, env=None):
    return subprocess.run([sys.executable, "main.py", "flint-suite", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def _no_gpu():
    from kernels.backend import gpu_available
    return not gpu_available()[0]


@pytest.mark.skipif(not _no_gpu(), reason="a GPU is present: the is/ts runtimes run instead of refusing")
@pytest.mark.parametrize("runtime", ["is", "ts"])
def test_cli_gpu_runtimes_without_a_gpu(runtime):
    r = _cli("1", "--runtime", runtime)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert f"runtime {runtime} needs a GPU" in lines[0] and "dopri-cpu" in lines[0]


@pytest.mark.parametrize("args, msg", [
    (["--runtime", "bogus"], "--runtime"),
    (["--workers", "0"], "--workers"),
    (["1-x"], "range"),
    (["1", "--suite-dir", "/nonexistent/suite"], "not found"),
])
def test_cli_bad_arguments(args, msg):
    r = _cli(*args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and msg in lines[0], r.stderr


@needs_suite
@needs_rr
def test_cli_roadrunner_pass_and_fail(tmp_path):
    r = _cli("1", "2", "--runtime", "roadrunner", "--workers", "1", "--out-dir", str(tmp_path / "o"),
             "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["totals"]["passed"] == 2 and [c["case"] for c in d["cases"]] == ["00001", "00002"]
    assert (tmp_path / "o" / "00001.csv").read_text().splitlines()[0] == \
        (SUITE / "cases/00001/00001-results.csv").read_text().splitlines()[0]
    # a copy of case 1 whose expected numbers are off must fail the run (exit 1)
    fake = tmp_path / "suite" / "cases" / "00001"
    fake.mkdir(parents=True)
    for p in (SUITE / "cases" / "00001").iterdir():
        (fake / p.name).write_bytes(p.read_bytes())
    res = fake / "00001-results.csv"
    lines = res.read_text().splitlines()
    lines[5] = ",".join([lines[5].split(",")[0]] + [repr(float(x) * 1.1 + 1e-3) for x in lines[5].split(",")[1:]])
    res.write_text("\n".join(lines) + "\n")
    r = _cli("1", "--runtime", "roadrunner", "--suite-dir", str(tmp_path / "suite"))
    assert r.returncode == 1 and "failed 00001: wrong numbers" in r.stdout, r.stdout + r.stderr


@needs_suite
@needs_rr
def test_cli_sample_json_stdout():
    r = _cli("--sample", "--runtime", "roadrunner", "--workers", "2", "--json", "-")
    d = json.loads(r.stdout)
    ids = H.read_sample()
    assert [c["case"] for c in d["cases"]] == ids and d["totals"]["total"] == len(ids)
    assert r.returncode == (1 if d["totals"]["failed"] else 0)
    assert d["totals"]["passed"] > len(ids) // 2
    assert f"[{len(ids)}/{len(ids)}]" in r.stderr  # the final progress line


# ------------------------------------------------------------ the project's simulator on the CI sample

@needs_suite
@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.skipif(importlib.util.find_spec("kernels.flint.sbml.solver") is None,
                    reason="kernels.flint.sbml.solver (the CPU SBML simulator) does not exist yet")
def test_cpu_runtime_sample_has_no_failures():
    from kernels.sweep.suite_tasks import run_cases
    cases = S.discover(SUITE, H.read_sample())
    out = run_cases(cases, "cpu", workers=2, timeout=120, scheduler="local")   # 120 s: a loaded shared box
    failed = [f"{o.case}: {o.message}" for o in out if o.status == "failed"]
    assert not failed, f"{len(failed)} of {len(out)} sample cases failed:\n" + "\n".join(failed)
    assert sum(o.status == "passed" for o in out) > 0


def test_registered_backend_runs_from_the_cli(tmp_path, capsys):
    """register_backend from the caller's code is one of ``flint-suite --runtime``'s choices (the CLI
    reads the registry, not a copy): a fake backend registered here runs two ok cases and one wrong."""
    from cli import main
    root = tmp_path / "suite"
    for i, what in enumerate(["ok", "wrong", "ok"], start=1):
        _make_case(root, f"{i:05d}", what)
    register_backend("fake-cli", _fake_runtime, "a fake backend of this test", replace=True)
    try:
        with pytest.raises(SystemExit):
            main(["flint-suite", "--help"])
        assert "fake-cli: a fake backend of this test" in " ".join(capsys.readouterr().out.split())
        rc = main(["flint-suite", "--runtime", "fake-cli", "--suite-dir", str(root), "--workers", "1", "--json", "-"])
        rep = json.loads(capsys.readouterr().out)
        assert rc == 1 and rep["runtime"] == "fake-cli"
        assert rep["totals"] == {"passed": 2, "failed": 1, "refused": 0, "total": 3}
    finally:
        from kernels.flint.schemes import ADAPTIVE_BACKENDS
        ADAPTIVE_BACKENDS.unregister("fake-cli")


# ------------------------------------------------------------ issue 34: --method / --engine of flint-suite

@pytest.mark.parametrize("method, engine, target", [
    (None, None, "cpu"), ("lsoda", "numpy", "cpu"), ("dopri5", "numpy", "dopri-cpu"), ("dopri5", None, "dopri-cpu"),
    (None, "ts", "auto-ts"), ("dopri5", "is", "is"), ("cvode", None, "roadrunner"), ("auto", "roadrunner", "roadrunner"),
])
def test_suite_method_and_engine_pick_the_backend(method, engine, target):
    from kernels.flint.schemes import ADAPTIVE_BACKENDS, pair
    p = pair(method, engine, "flint-suite")
    assert p.target == target and p.target in ADAPTIVE_BACKENDS and p.kind == "adaptive"


@pytest.mark.parametrize("args, msg", [
    (["--method", "euler"], "--method must be one of dopri5, rodas4, lsoda, cvode or auto"),
    (["--engine", "gpu"], "--engine must be one of"),
    (["--method", "cvode", "--engine", "numpy"], "engine numpy offers lsoda, dopri5, rodas4, not method 'cvode'"),
    (["--runtime", "cpu", "--engine", "numpy"], "--runtime is the old spelling"),
])
def test_cli_bad_method_engine(args, msg):
    r = _cli("1", *args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and msg in lines[0], r.stderr
