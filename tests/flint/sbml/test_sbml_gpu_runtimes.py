"""The ODE-core lowering (sbml_core), the adaptive Dormand–Prince twin (ensemble_rk) and its CUDA
kernels (ensemble_gpu / ensemble_rk.cu): analytic checks, SBML Test Suite cases, the CUDA source run
as C++ on the host, and (marked gpu) the IS and TS kernels against the twin."""
from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest

from kernels.errors import Unsupported
from cli.flint_suite import suite_dir
from kernels.flint.sbml import conformance as suite
from kernels.flint.ensemble.rk import Problem, integrate, simulate_file
from kernels.flint.sbml.core import is_core_case, lower_system
from support.paths import ROOT

gpu = pytest.mark.gpu

# 30 ODE-core TimeCourse cases: reactions, rules, rateOf, events (priorities, persistence,
# trigger-time values, t0 firing), compartments, conversion factors, MathML
CASES = ["00001", "00026", "00031", "00041", "00051", "00057", "00068", "00097", "00113", "00135",
         "00172", "00349", "00928", "00930", "00935", "00954", "00972", "00975", "00978", "00995",
         "01124", "01198", "01248", "01252", "01272", "01282", "01330", "01333", "01336", "01402",
         "00963"]


def _sbml(species: str, reactions: str = "", rules: str = "", events: str = "", params: str = "") -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">
<model id="m">
<listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>
<listOfSpecies>{species}</listOfSpecies>
<listOfParameters>{params}</listOfParameters>
{rules}{reactions}{events}
</model></sbml>"""


def _sp(i, amount):
    return (f'<species id="{i}" compartment="c" initialAmount="{amount}" hasOnlySubstanceUnits="true" '
            f'boundaryCondition="false" constant="false"/>')


def _decay(k=0.7):
    rx = """<listOfReactions><reaction id="r" reversible="false">
<listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/></listOfReactants>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/><ci>k</ci><ci>A</ci></apply></math>
</kineticLaw></reaction></listOfReactions>"""
    return _sbml(_sp("A", 2.0), rx, params=f'<parameter id="k" value="{k}" constant="true"/>')


def _run(xml, times, names, **kw):
    core = lower_system(xml, names, set(names), set())
    return core, integrate(Problem(core, 1), times, **kw)


def test_exponential_decay_matches_analytic():
    t = np.linspace(0, 5, 11)
    _, out = _run(_decay(), t, ["A"], rtol=1e-10)
    assert np.max(np.abs(out[:, 0, 0] - 2.0 * np.exp(-0.7 * t))) < 1e-9


def test_ensemble_members_have_their_own_parameters():
    t = np.linspace(0, 3, 7)
    core = lower_system(_decay(), ["A"], {"A"}, set())
    ks = np.array([0.1, 0.7, 2.0, 5.0])
    out = integrate(Problem(core, 4, {"k": ks}), t, rtol=1e-10)
    ref = 2.0 * np.exp(-np.outer(t, ks))
    assert np.max(np.abs(out[:, 0, :] - ref)) < 1e-9


def _event_model(k):
    rx = """<listOfReactions><reaction id="r" reversible="false">
<listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/></listOfReactants>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/><ci>k</ci><ci>A</ci></apply></math>
</kineticLaw></reaction></listOfReactions>"""
    ev = """<listOfEvents><event id="e" useValuesFromTriggerTime="true">
<trigger initialValue="false" persistent="true"><math xmlns="http://www.w3.org/1998/Math/MathML">
<apply><lt/><ci>A</ci><cn>1</cn></apply></math></trigger>
<listOfEventAssignments><eventAssignment variable="B"><math xmlns="http://www.w3.org/1998/Math/MathML">
<csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/time">t</csymbol></math>
</eventAssignment><eventAssignment variable="A"><math xmlns="http://www.w3.org/1998/Math/MathML"><cn>4</cn></math>
</eventAssignment></listOfEventAssignments></event></listOfEvents>"""
    return _sbml(_sp("A", 2.0), rx, events=ev, params=f'<parameter id="k" value="{k}" constant="true"/>'
                 '<parameter id="B" value="-1" constant="false"/>')


def test_event_at_root_found_time():
    """dA/dt = −kA; when A < 1 the event sets B = time and A = 4: B = ln 2 / k exactly (root finding)."""
    k = 0.7
    xml = _event_model(k)
    t = np.linspace(0, 1.5, 16)
    _, out = _run(xml, t, ["A", "B"], rtol=1e-10)
    te = math.log(2) / k
    assert abs(out[-1, 1, 0] - te) < 1e-9
    after = t > te                          # A jumps to 4 at te, then decays again
    assert np.max(np.abs(out[after, 0, 0] - 4.0 * np.exp(-k * (t[after] - te)))) < 1e-8
    assert np.max(np.abs(out[~after, 0, 0] - 2.0 * np.exp(-k * t[~after]))) < 1e-9


def test_ensemble_members_fire_events_at_their_own_times():
    ks = np.array([0.5, 0.7, 1.3, 2.9])
    core = lower_system(_event_model(0.7), ["A", "B"], {"A", "B"}, set())
    t = np.linspace(0, 2.0, 9)
    out = integrate(Problem(core, len(ks), {"k": ks}), t, rtol=1e-10)
    # A falls below 1 at ln2/k, jumps to 4, falls below 1 again every ln4/k: firings ln2/k + j·ln4/k
    first, period = math.log(2) / ks, math.log(4) / ks
    n_fired = np.where(t[:, None] >= first, np.floor((t[:, None] - first) / period) + 1, 0)
    last = first + (n_fired - 1) * period
    refA = np.where(n_fired > 0, 4.0 * np.exp(-ks * (t[:, None] - last)), 2.0 * np.exp(-ks * t[:, None]))
    refB = np.where(n_fired > 0, last, -1.0)
    assert n_fired[-1].tolist() == [1, 1, 2, 4]            # members fire different numbers of times
    assert np.max(np.abs(out[:, 1, :] - refB)) < 1e-9
    assert np.max(np.abs(out[:, 0, :] - refA)) < 1e-8


def test_stiff_problem_is_refused_or_accurate():
    """A fast–slow linear system (λ = −1e6, −1): either refused as stiff or right to 1e-6.  An explicit
    method stays stable only for h < 3.3e-6 here (≈ 1.5e7 steps to t = 50), so the step budget
    decides the refusal whatever its size; 2 000 steps reach it sooner than 20 000 did."""
    rx = """<listOfReactions>
<reaction id="f" reversible="true"><listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/>
</listOfReactants><listOfProducts><speciesReference species="B" stoichiometry="1" constant="true"/></listOfProducts>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/><cn>1000000</cn><apply><minus/><ci>A</ci>
<ci>B</ci></apply></apply></math></kineticLaw></reaction></listOfReactions>"""
    xml = _sbml(_sp("A", 1.0) + _sp("B", 0.0), rx)
    t = np.linspace(0, 50, 6)
    try:
        _, out = _run(xml, t, ["A", "B"], rtol=1e-10, max_steps=2_000)
    except Unsupported as exc:
        assert "stiff" in str(exc)
        return
    assert np.max(np.abs(out[1:, :, 0] - 0.5)) < 1e-6


# ---------------------------------------------------------------- suite cases
def _suite():
    root = suite_dir()
    if not (root / "cases").is_dir():
        pytest.skip(f"SBML Test Suite not found at {root} (set GSE_SBML_SUITE)")
    return root


def test_twin_on_suite_cases():
    root = _suite()
    cases = suite.discover(root, CASES)
    assert len(cases) == len(CASES)
    assert all(is_core_case(c.tags) for c in cases)
    outs = [suite.run_case(c, simulate_file) for c in cases]
    bad = [(o.case, o.message) for o in outs if o.status != "passed"]
    assert not bad, bad


def _cli(*args):
    import os
    import sys
    root = ROOT
    return subprocess.run([sys.executable, "main.py", "flint-suite", *args], cwd=root, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))


def test_cli_dopri_cpu_runs_and_gpu_runtimes_refuse_without_gpu(tmp_path):
    _suite()
    r = _cli("1", "26", "--runtime", "dopri-cpu", "--workers", "1", "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    import json
    assert json.loads((tmp_path / "r.json").read_text())["totals"]["passed"] == 2
    from kernels import backend as bk
    if bk.gpu_available()[0]:
        return
    for rt in ("is", "ts"):
        r = _cli("1", "--runtime", rt)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and "needs a GPU" in lines[0]


# ---------------------------------------------------------------- the CUDA source on the host (engines c / c-is)
HOST_CASES = ["00001", "00026", "00349", "00978", "01248", "01336"]


@pytest.mark.parametrize("flavour", ["ts", "is"])
def test_cuda_source_runs_on_host(flavour):
    """ensemble_rk.cu with the TS / IS model functions, compiled for the host by kernels.gpu.host (the
    engines c / c-is) equals the NumPy twin to 1e-9 relative (same algorithm, same arithmetic up to
    the evaluation order of the generated code) on suite cases and ensembles."""
    from kernels import hostcc
    if hostcc.find_compiler() is None:
        pytest.skip("no host C++ compiler")
    from kernels.flint.ensemble.gpu import gpu_problem, integrate_host
    root = _suite()
    probs = []
    for c in suite.discover(root, HOST_CASES):
        s = c.settings
        core = lower_system(c.model, s.variables, set(s.amount), set(s.concentration))
        probs.append((gpu_problem(core), s.times()))
    ens = lower_system(_decay(), ["A"], {"A"}, set())
    probs.append((gpu_problem(ens, 3, {"k": [0.2, 0.7, 3.0]}), np.linspace(0, 4, 9)))
    evm = lower_system(_event_model(0.7), ["A", "B"], {"A", "B"}, set())
    probs.append((gpu_problem(evm, 4, {"k": [0.5, 0.7, 1.3, 2.9]}), np.linspace(0, 2, 9)))
    for pb, times in probs:
        ref = integrate(pb, times)
        got = integrate_host(pb, times, flavour)
        err = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-12))
        assert err < 1e-9, (pb.core.source, err)


# ---------------------------------------------------------------- GPU (H100)
def _gpu_ok():
    from kernels import backend as bk
    ok, why = bk.gpu_available()
    if not ok:
        pytest.skip(why)


@gpu
@pytest.mark.parametrize("flavour", ["is", "ts"])
def test_gpu_kernels_match_twin_on_suite_cases(flavour):
    _gpu_ok()
    from kernels.flint.ensemble import gpu as ensemble_gpu
    from kernels.flint.ensemble.gpu import gpu_problem, integrate_gpu
    root = _suite()
    for c in suite.discover(root, CASES):
        s = c.settings
        core = lower_system(c.model, s.variables, set(s.amount), set(s.concentration))
        pb = gpu_problem(core)
        ref = integrate(pb, s.times())
        got = integrate_gpu(pb, s.times(), flavour)
        err = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-12))
        assert err < 1e-8, (c.id, flavour, err)
        o = suite.run_case(c, getattr(ensemble_gpu, f"simulate_file_{flavour}"))
        assert o.status == "passed", (c.id, o.message)


@gpu
@pytest.mark.parametrize("flavour", ["is", "ts"])
def test_gpu_ensemble_decay(flavour):
    _gpu_ok()
    from kernels.flint.ensemble.gpu import gpu_problem, integrate_gpu
    core = lower_system(_decay(), ["A"], {"A"}, set())
    ks = np.linspace(0.1, 3.0, 1000)
    t = np.linspace(0, 3, 7)
    got = integrate_gpu(gpu_problem(core, len(ks), {"k": ks}), t, flavour, rtol=1e-10)
    assert np.max(np.abs(got[:, 0, :] - 2.0 * np.exp(-np.outer(t, ks)))) < 1e-9


@gpu
@pytest.mark.parametrize("flavour", ["is", "ts"])
def test_gpu_ensemble_events_match_twin(flavour):
    _gpu_ok()
    from kernels.flint.ensemble.gpu import gpu_problem, integrate_gpu
    ks = np.linspace(0.3, 4.0, 257)                       # not a multiple of the block size
    pb = gpu_problem(lower_system(_event_model(0.7), ["A", "B"], {"A", "B"}, set()), len(ks), {"k": ks})
    t = np.linspace(0, 2, 9)
    ref = integrate(pb, t, rtol=1e-10)
    got = integrate_gpu(pb, t, flavour, rtol=1e-10)
    assert np.max(np.abs(got - ref)) < 1e-9


def test_is_kernel_source_depends_only_on_the_size_class():
    """The IS adaptive kernel is an interpreter: two different models of one size class compile to
    the same source (bytecode, constants, sizes and tables are arguments); TS sources differ."""
    from kernels.flint.ensemble.gpu import cuda_source, gpu_problem, is_caps, is_table
    a = gpu_problem(lower_system(_decay(0.7), ["A"], {"A"}, set()))
    b = gpu_problem(lower_system(_event_model(1.3), ["A", "B"], {"A", "B"}, set()))
    assert a.ns != b.ns and is_caps(a) == is_caps(b)
    assert cuda_source(a, "is") == cuda_source(b, "is")
    assert cuda_source(a, "ts") != cuda_source(b, "ts")
    assert not np.array_equal(is_table(a), is_table(b))


def test_gpu_problem_refuses_too_many_events():
    """More events than the kernel's tables hold (MAX_GPU_EVENTS): refused by name before compiling."""
    from kernels.errors import Unsupported
    from kernels.flint.ensemble.gpu import MAX_GPU_EVENTS, gpu_problem
    n = MAX_GPU_EVENTS + 1
    m = 'xmlns="http://www.w3.org/1998/Math/MathML"'
    tm = '<csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/time">t</csymbol>'
    ev = "".join(f'<event id="e{i}" useValuesFromTriggerTime="true"><trigger initialValue="true" persistent="true">'
                 f'<math {m}><apply><gt/>{tm}<cn>{i}</cn></apply></math></trigger><listOfEventAssignments>'
                 f'<eventAssignment variable="A"><math {m}><cn>{i}</cn></math></eventAssignment>'
                 f'</listOfEventAssignments></event>' for i in range(n))
    core = lower_system(_sbml(_sp("A", 1.0), events=f"<listOfEvents>{ev}</listOfEvents>"), ["A"], {"A"}, set())
    with pytest.raises(Unsupported, match=rf"{n} events .*at most {MAX_GPU_EVENTS}"):
        gpu_problem(core)
