"""`python main.py flint MODEL.xml --method dopri5|rodas4|auto`: an SBML model as an adaptive ensemble
(cli/flint_ensemble.py, issue 34) on engines numpy and c (c: the GPU's CUDA source compiled by g++ for
the host), against the CPU reference simulator, the SBML Test Suite's results and SciPy's LSODA, with
fresh random parameters; method auto for a model the fixed-step compiler refuses; bad options; (marked
gpu) engine ts against numpy."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from cli import main
from kernels.filegate import ENV_ALLOW_OUTSIDE
from kernels.flint.adaptive_run import EnsembleRun, available_engines
from kernels.flint.run import Vary
from kernels.flint.sbml.reference import load_reference, run_reference
from support.paths import MODELS, ROOT, SUITE
from support.sbml_docs import SUB_SBML, sbml_top
from support.stiff_sbml import robertson_rules

BIOMD = MODELS / "BIOMD0000000127.xml"          # Izhikevich's neuron: a current step and a spike reset (events)
ENGINES = ["numpy", "c"]
#: the ensemble's Dormand–Prince (rtol 1e-8) against the reference simulator's LSODA, both root-finding the
#: spike resets: |Δ| ≤ ATOL + RTOL·|ref| at the output points, firing times within T_TOL (measured: Δ ≤ 1.1e-4
#: on v ≈ −70 mV, firing times within 6e-7)
ATOL, RTOL, T_TOL = 1e-3, 1e-4, 1e-5


def _engine(engine: str) -> str:
    if engine not in available_engines("dopri5"):
        pytest.skip(f"engine {engine} cannot run here (no host C++ compiler)")
    return engine


def _biomd() -> str:
    if not BIOMD.is_file():
        pytest.skip(f"{BIOMD} is not here (../shared/models)")
    return str(BIOMD)


def _flint(capsys, *args) -> tuple[int, str, str]:
    status = main(["flint", *map(str, args)])
    cap = capsys.readouterr()
    return status, cap.out, cap.err


def _read_csv(path, names, n):
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["t"] + [f"{r}[{m}]" for r in names for m in range(n)]
    data = np.array([[float(x) for x in row] for row in rows[1:]])
    return data[:, 0], data[:, 1:].reshape(len(data), len(names), n)


@pytest.mark.parametrize("engine", ENGINES)
def test_biomodels_ensemble_matches_the_reference_and_the_library(engine, tmp_path, capsys, rng):
    """--ensemble 4 --vary a=LO:HI of BIOMD0000000127: every member's traces (CSV) equal the library's
    EnsembleRun bit for bit and the CPU reference simulator with the member's own `a` within ATOL/RTOL;
    member 0's firings (--json) are the reference's."""
    path, engine = _biomd(), _engine(engine)
    lo, hi = float(rng.uniform(0.015, 0.022)), float(rng.uniform(0.025, 0.04))
    d_val = float(rng.uniform(6.0, 10.0))
    out = tmp_path / "e.csv"
    status, text, err = _flint(capsys, path, "--method", "dopri5", "--engine", engine, "--ensemble", 4,
                               "--vary", f"a={lo!r}:{hi!r}", "--set", f"d={d_val!r}", "--t-end", 60, "--dt", 0.5,
                               "--every", 1, "--csv", out, "--json")
    assert status == 0 and err == "", err
    j = json.loads(text)
    assert (j["method"], j["engine"], j["n_cells"], j["steps"], j["dtype"]) == ("dopri5", engine, 4, 120, "float64")
    names = list(j["variables"])
    assert names == ["v", "U", "i"] and j["n_events"] == 2 and j["events"]["reported"]
    times, got = _read_csv(out, names, 4)
    lib = EnsembleRun(path, method="dopri5", engine=engine, n=4, t_end=60, dt=0.5, params=(("d", d_val),),
                      vary=(Vary("a", lo, hi),)).run()
    np.testing.assert_array_equal(times, lib.times)
    np.testing.assert_array_equal(got, lib.values)
    assert j["events"]["times"] == lib.event_times(0).tolist() and j["events"]["count"] == len(lib.event_times(0))
    ref = load_reference(path)
    for m, a in enumerate(np.linspace(lo, hi, 4)):
        fired = []
        want = run_reference(ref, times, names, params={"a": a, "d": d_val},
                             on_event=lambda t, _e: fired.append(t)).values
        assert np.all(np.abs(got[:, :, m] - want) <= ATOL + RTOL * np.abs(want)), m
        if m == 0:
            assert len(fired) == j["events"]["count"] >= 3              # the current step and spikes
            np.testing.assert_allclose(j["events"]["times"], fired, rtol=0, atol=T_TOL)
    v = np.asarray(j["variables"]["v"]["final"])                         # the summary is the CSV's
    np.testing.assert_array_equal(v, got[-1, 0, :])
    assert j["variables"]["v"]["min"] == got[:, 0, :].min() and j["variables"]["v"]["max"] == got[:, 0, :].max()


def test_method_auto_takes_a_model_the_compiler_refuses(capsys):
    """--method auto: BIOMD0000000127 (events) runs as an adaptive ensemble and one line says what was
    picked and why; the default method (euler) keeps refusing it, naming --method auto in the hint."""
    path = _biomd()
    status, text, err = _flint(capsys, path, "--t-end", 5)
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--method auto" in err and "event" in err
    status, text, err = _flint(capsys, path, "--method", "auto", "--engine", "numpy", "--backend", "cpu",
                               "--ensemble", 2, "--t-end", 20, "--dt", 0.5, "--every", 1, "--json")
    assert status == 0 and err == "", err
    j = json.loads(text)
    assert (j["method"], j["engine"], j["runtime"]) == ("dopri5", "numpy", "dopri-cpu")
    assert j["runtime_choice"].startswith("auto → dopri5 on numpy: the fixed-step compiler refuses it")
    status, twin, _ = _flint(capsys, path, "--method", "dopri5", "--engine", "numpy", "--ensemble", 2,
                             "--t-end", 20, "--dt", 0.5, "--every", 1, "--json")
    assert json.loads(twin)["variables"] == j["variables"] and json.loads(twin)["runtime_choice"] is None
    if "c" in available_engines("dopri5"):                           # engine auto on the CPU: the host build
        status, text, err = _flint(capsys, path, "--method", "auto", "--backend", "cpu", "--t-end", 20, "--dt", 0.5)
        assert status == 0, err
        lines = text.splitlines()
        assert "with dopri5 on engine c" in lines[0] and lines[1].startswith("auto → dopri5 on c: ")
        assert "the engine's own pick, not stiff" in lines[1] and "--backend cpu" in lines[1]


def test_every_keeps_the_lsoda_grid_and_the_plain_cli_contract(tmp_path):
    """A plain `python main.py flint … --method rodas4`: exit 0, the --every grid is the reference
    simulator's (every N output intervals, t = 0 and t end included), one stdout JSON object."""
    path = _biomd()
    out = tmp_path / "r.csv"
    r = subprocess.run([sys.executable, "main.py", "flint", path, "--method", "rodas4", "--engine", "numpy",
                        "--t-end", "10.25", "--dt", "0.25", "--every", "4", "--record", "v,U", "--csv", str(out),
                        "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    j = json.loads(r.stdout)
    assert j["method"] == "rodas4" and list(j["variables"]) == ["v", "U"]
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["t", "v", "U"]
    assert [float(x[0]) for x in rows[1:]] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 10.25]


def _suite_case(case):
    d = SUITE / "cases" / case
    xml = d / f"{case}-sbml-l3v2.xml"
    if not xml.is_file():
        pytest.skip(f"SBML Test Suite case {case} is not at {d}")
    st = dict(line.split(":", 1) for line in (d / f"{case}-settings.txt").read_text().splitlines() if ":" in line)
    return d, xml, {k.strip(): v.strip() for k, v in st.items()}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case, tag, method, ran", [("00026", "EventNoDelay", "dopri5", "dopri5"),
                                                    ("00039", "AlgebraicRule", "auto", "rodas4")])
def test_suite_cases_as_an_ensemble(engine, case, tag, method, ran, tmp_path, capsys):
    """SBML Test Suite cases as a 2-member ensemble: an event (00026, --method dopri5) and an algebraic
    rule (00039, --method auto: the fixed-step compiler refuses it, Rodas4 runs the DAE); both members
    equal the suite's results within its tolerances."""
    engine = _engine(engine)
    d, xml, st = _suite_case(case)
    assert tag in (d / f"{case}-model.m").read_text()
    dur, steps = float(st["duration"]), int(st["steps"])
    names = [v.strip() for v in st["variables"].split(",")]
    out = tmp_path / "s.csv"
    status, text, err = _flint(capsys, xml, "--method", method, "--engine", engine, "--ensemble", 2,
                               "--t-end", dur, "--dt", dur / steps, "--every", 1, "--record", ",".join(names),
                               "--csv", out, "--json")
    assert status == 0, err
    j = json.loads(text)
    assert j["method"] == ran and (j["runtime_choice"] is not None) == (method == "auto")
    assert j["events"]["count"] >= 1 if tag.startswith("Event") else j["n_events"] == 0
    times, got = _read_csv(out, names, 2)
    want = list(csv.DictReader((d / f"{case}-results.csv").open()))
    assert len(want) == len(times) == steps + 1
    atol, rtol = float(st["absolute"]), float(st["relative"])
    for i, w in enumerate(want):
        assert float(w["time"]) == pytest.approx(times[i], abs=1e-12)
        for k, nm in enumerate(names):
            e = float(w[nm])
            assert np.all(np.abs(got[i, k, :] - e) <= atol + rtol * abs(e)), (i, nm, got[i, k], e)


def _lsoda(k1, k2, k3, times):
    def f(_t, y):
        a, b, c = y
        return [-k1 * a + k3 * b * c, k1 * a - k2 * b * b - k3 * b * c, k2 * b * b]
    return solve_ivp(f, (0, times[-1]), [1, 0, 0], method="LSODA", t_eval=times, rtol=1e-10, atol=1e-14).y.T


@pytest.mark.parametrize("engine", ENGINES)
def test_rodas4_on_a_stiff_model(engine, tmp_path, capsys, rng):
    """Robertson's problem, --method rodas4, --vary k1 and --set k3 (fresh random values): every member
    equals SciPy's LSODA (rtol 1e-10) within 1e-8 + 1e-5·|y| (Rodas4 runs at rtol 1e-8)."""
    if engine not in available_engines("rodas4"):
        pytest.skip(f"engine {engine} cannot run rodas4 here")
    path = robertson_rules(tmp_path / "robertson.xml")
    lo, hi, k3 = 0.04 * rng.uniform(0.5, 1.0), 0.04 * rng.uniform(1.0, 2.0), 1e4 * rng.uniform(0.5, 2.0)
    out = tmp_path / "r.csv"
    status, text, err = _flint(capsys, path, "--method", "rodas4", "--engine", engine, "--ensemble", 3,
                               "--vary", f"k1={lo!r}:{hi!r}", "--set", f"k3={k3!r}", "--t-end", 40, "--dt", 4,
                               "--every", 1, "--csv", out, "--json")
    assert status == 0, err
    assert json.loads(text)["method"] == "rodas4"
    times, got = _read_csv(out, ["A", "B", "C"], 3)
    for m, k1 in enumerate(np.linspace(lo, hi, 3)):
        want = _lsoda(k1, 3e7, k3, times)
        assert np.all(np.abs(got[:, :, m] - want) <= 1e-8 + 1e-5 * np.abs(want)), m


@pytest.mark.parametrize("args, msg", [
    (["--vary", "Q=1:2", "--ensemble", "2"], "--vary: 'Q' is not a constant parameter"),
    (["--vary", "a=x:2"], "--vary must be a number"),
    (["--set", "i=3"], "--set: 'i' is not a constant parameter"),
    (["--set", "a=nan"], "--set a must be a finite number"),
    (["--engine", "gpu"], "--engine must be one of"),
    (["--engine", "roadrunner"], "--engine must be one of"),
    (["--backend", "cpu", "--engine", "ts"], "--engine ts runs on the GPU, but --backend cpu"),
    (["--dtype", "float32"], "--dtype float32 does not apply to --method dopri5"),
    (["--mapping", "expression"], "--mapping expression does not apply"),
    (["--line", "4"], "--line/--ring does not apply"),
    (["--threads", "2"], "--threads 2 does not apply"),
    (["--ensemble", "1000000", "--dt", "0.001"], "more than 200,000,000 values"),
    (["--dt", "1e-9"], "more than 10,000,000 output points"),
    (["--record", "Q"], "'Q' is not in the model"),
    (["--runtime", "sbml"], "--method does not apply to --runtime sbml"),
])
def test_bad_ensemble_options_give_one_error_line(args, msg, capsys):
    status, _text, err = _flint(capsys, _biomd(), "--method", "dopri5", "--t-end", 10, *args)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error:") and msg in lines[0], err


def test_non_sbml_model_and_missing_file_are_refused(capsys):
    for args, msg in ((["luo_rudy_1991", "--method", "rodas4"], "runs an SBML model as an ensemble"),
                      (["nosuch.xml", "--method", "dopri5"], "no such model file")):
        status, _t, err = _flint(capsys, *args)
        assert status == 2 and err.startswith("error:") and msg in err and len(err.strip().splitlines()) == 1


def test_outside_references_need_the_flag_and_are_listed(tmp_path, capsys, rng):
    """An SBML comp model whose submodel file lies outside its folder: refused (one error line) unless
    --allow-outside-references, then run (x' = −0.5 x from the fresh x0) with both files in files_read."""
    (tmp_path / "parts").mkdir()
    (tmp_path / "models").mkdir()
    x0 = float(rng.uniform(1.0, 3.0))
    (tmp_path / "parts" / "sub.xml").write_text(SUB_SBML.format(x0=x0))
    top = sbml_top(tmp_path / "models", "../parts/sub.xml")
    args = [top, "--method", "dopri5", "--engine", "numpy", "--t-end", 2, "--dt", 0.5, "--json"]
    status, _t, err = _flint(capsys, *args)
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--allow-outside-references" in err
    before = os.environ.get(ENV_ALLOW_OUTSIDE)
    status, text, err = _flint(capsys, *args, "--allow-outside-references")
    assert status == 0, err
    assert os.environ.get(ENV_ALLOW_OUTSIDE) == before               # the option does not outlive the run
    j = json.loads(text)
    assert j["files_read"] == [str(top), str(tmp_path / "parts" / "sub.xml")]
    assert j["variables"]["s1__x"]["final"] == pytest.approx(x0 * np.exp(-1.0), rel=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("model, method", [("biomd", "dopri5"), ("biomd", "auto"), ("robertson", "rodas4")])
def test_ts_equals_numpy(model, method, tmp_path, capsys, rng):
    """Engine ts (the GPU, generated CUDA C) gives the NumPy twin's traces (CSV, every member) and member
    0's firings: BIOMD0000000127 with dopri5 and method auto (64 members, a fresh spread of `a`), and
    Robertson's stiff problem with rodas4 (a fresh spread of k1)."""
    if model == "biomd":
        path, vary, grid = _biomd(), f"a={float(rng.uniform(0.015, 0.022))!r}:0.04", ["--t-end", 100, "--dt", 0.5]
    else:
        path, vary = robertson_rules(tmp_path / "robertson.xml"), f"k1={0.04 * rng.uniform(0.5, 1)!r}:0.08"
        grid = ["--t-end", 40, "--dt", 4]
    runs = {}
    for engine in ("ts", "numpy"):
        out = tmp_path / f"{engine}.csv"
        status, text, err = _flint(capsys, path, "--method", method, "--engine", engine, "--ensemble", 64,
                                   "--vary", vary, *grid, "--every", 1, "--csv", out, "--json")
        assert status == 0, err
        j = json.loads(text)
        runs[engine] = (j, _read_csv(out, list(j["variables"]), 64)[1])
    (ts, y_ts), (twin, y_twin) = runs["ts"], runs["numpy"]
    assert ts["method"] == twin["method"] != "auto"
    np.testing.assert_allclose(y_ts, y_twin, rtol=1e-6, atol=1e-9)
    if ts["events"]["reported"] and twin["events"]["reported"]:
        np.testing.assert_allclose(ts["events"]["times"], twin["events"]["times"], rtol=1e-8)


def test_explicit_auto_runs_a_stiff_sbml_model_on_rodas4(capsys):
    """Robertson (an SBML file the fixed-step compiler takes): an explicit --method auto on an engine with
    its own pick runs the adaptive ensemble, whose stiffness test picks Rodas4 (A + B + C stays 1 in every
    member, fresh random k1 spread); fixed-step Euler blows up and its one error line names the stiff hint."""
    if "c" not in available_engines("dopri5"):
        pytest.skip("no host C++ compiler")
    path = ROOT / "resources" / "models" / "robertson.xml"
    lo = float(np.random.default_rng().uniform(0.01, 0.05))
    status, text, err = _flint(capsys, path, "--method", "auto", "--engine", "c", "--backend", "cpu", "--ensemble", 3,
                               "--vary", f"k1={lo}:{2 * lo}", "--t-end", 40, "--dt", 4, "--json")
    assert status == 0, err
    j = json.loads(text)
    assert j["method"] == "rodas4" and "not fixed-step Euler" in j["runtime_choice"]
    total = sum(np.array(j["variables"][s]["final"]) for s in ("A", "B", "C"))
    assert np.allclose(total, 1.0, atol=1e-8) and np.all(np.array(j["variables"]["C"]["final"]) > 0)
    status, _, err = _flint(capsys, path, "--engine", "numpy", "--backend", "cpu", "--t-end", 1, "--dt", 0.01)
    assert status == 2 and len(err.strip().splitlines()) == 1 and "may be stiff: --method rodas4" in err
