"""Flint (paper 004 ch. 5) on the CPU: formats, compiler optimisations, NumPy runtime vs SciPy Radau."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kernels.errors import ExplorerError, InvalidParameter, SimulationBlowUp
from kernels.flint import CompileOptions, Network, Simulation, compile_model, load_model, parse_text
from kernels.flint.runtimes import network_stimulus
from kernels.flint.sbml import read_sbml, write_sbml
from support.paths import MODELS as SHARED

LR = "luo_rudy_1991.flint"


@pytest.fixture(scope="module")
def lr():
    return load_model(LR)


def test_native_lr_structure(lr):
    assert lr.n_states == 8 and list(lr.states)[0] == "V"
    p = compile_model(lr)
    st = p.stats()
    assert st["odes"] == 8 and st["phases"] >= 2 and p.code[-1] == 1 - 1 + p.code[-1]   # END present
    assert "END" in p.listing().splitlines()[-1]


def test_native_text_round_trip(lr):
    m2 = parse_text(lr.to_text())
    assert m2.states == lr.states and m2.params == lr.params
    assert {k: str(v) for k, v in m2.assigns.items()} == {k: str(v) for k, v in lr.assigns.items()}


@pytest.mark.parametrize("text, msg", [
    ("model a\nstate x = 1\n", "has no ODE"),
    ("model a\nstate x = 1\node x = y\n", "undefined"),
    ("model a\nstate x = 1\nlet u = v\nlet v = u\node x = u\n", "algebraic loop"),
    ("model a\nstate x = 1\node x = foo(x)\n", "unsupported function foo"),
    ("model a\nstate x = abc\node x = 1\n", "initial value"),
    ("model a\nstate x = 1\node x = {x}\n", "unsupported construct"),
    # a name declared twice is refused, never the second kept silently (issue 35)
    ("model a\nstate x = 1\nstate x = 2\node x = -x\n", "'x' already stands on line 2"),
    ("model a\nparam k = 1\nstate x = 1\nparam k = 3\node x = -k*x\n", "'k' already stands on line 2"),
    ("model a\nstate x = 1\nlet u = x\nlet u = 2*x\node x = -u\n", "'u' already stands on line 3"),
    ("model a\nstate x = 1\node x = -x\node x = x\n", "an ODE for 'x' already stands on line 3"),
])
def test_bad_native_models(text, msg):
    with pytest.raises(InvalidParameter, match=msg):
        parse_text(text)


def _run(model, opts=None, n=4, steps=300, integrator="euler", network=None, member=None, bytecode=True):
    if member is None and network is None:
        member = {"g_Na": np.linspace(16, 23, n)}
    if network is not None:
        member = network_stimulus(model, network.n_cells)
    sim = Simulation(model, n=n, member_params=member, network=network, integrator=integrator,
                     options=opts, bytecode_on_cpu=bytecode)
    return sim.advance(steps, 0.01, every=50)[1], sim


# Bit-identity shows at any length: 300 Euler / 30 RK4 steps (6 recorded rows each) cover the upstroke.
_OPT_RUNS = {"euler": dict(integrator="euler", steps=300), "rk4": dict(integrator="rk4", steps=30),
             "ring": dict(network=Network("ring", 6, "V", 1.0), n=6, steps=300)}


@pytest.fixture(scope="module")
def all_optimisations_on(lr):
    """The traces with every optimisation on, computed once for all flags (they do not depend on it)."""
    return {k: _run(lr, CompileOptions(), **kw)[0] for k, kw in _OPT_RUNS.items()}


@pytest.mark.parametrize("flag", CompileOptions.names())
def test_each_optimisation_off_gives_identical_traces(lr, flag, all_optimisations_on):
    """Every optimisation on/off: bit-identical traces from the bytecode interpreter (ensemble + ring)."""
    off = dataclasses.replace(CompileOptions(), **{flag: False})
    for key, kw in _OPT_RUNS.items():
        b, _ = _run(lr, off, **kw)
        assert np.array_equal(all_optimisations_on[key], b), (flag, key)


def test_optimisations_change_the_bytecode(lr):
    base = compile_model(lr, 4, {"g_Na": np.arange(4.0)}, options=CompileOptions(
        cse=False, fold=False, nary=False, merge=False, reorder=False, remap=False, unify=False))
    opt = compile_model(lr, 4, {"g_Na": np.arange(4.0)})
    assert base.index is not None and opt.index is None          # unify: one bytecode for all members
    assert opt.code.size < base.code.size / 4
    assert opt.stats()["cse_temps"] > 0 and base.stats()["cse_temps"] == 0
    assert opt.stats()["phases"] <= base.stats()["phases"]     # merge never adds phases
    assert "CONST_IND" in compile_model(lr, 4, {"g_Na": np.arange(4.0)}).listing()


def test_numpy_runtime_matches_bytecode_interpreter(lr):
    a, _ = _run(lr, bytecode=True, steps=400)
    b, _ = _run(lr, bytecode=False, steps=400)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _apd(t, V):
    rest = V[0]
    i_pk = int(np.argmax(V))
    peak = V[i_pk]
    v90 = peak - 0.9 * (peak - rest)
    up = np.where((V[:-1] < v90) & (V[1:] >= v90))[0][0]
    dn = i_pk + np.where((V[i_pk:-1] > v90) & (V[i_pk + 1:] <= v90))[0][0]
    tu = t[up] + (v90 - V[up]) / (V[up + 1] - V[up]) * (t[up + 1] - t[up])
    td = t[dn] + (v90 - V[dn]) / (V[dn + 1] - V[dn]) * (t[dn + 1] - t[dn])
    return rest, peak, td - tu


def test_lr1991_euler_matches_radau(lr):
    """Euler dt 0.01 ms vs solve_ivp Radau rtol 1e-8: resting potential, peak and APD90 within 1 %.

    The peak is compared relative to the AP amplitude (peak − rest, ~131 mV): Euler's overshoot on
    the 400 mV/ms upstroke is 0.8 mV, 1.8 % of the peak value itself but 0.6 % of the amplitude."""
    from scipy.integrate import solve_ivp
    sim = Simulation(lr, n=1)
    t_e, y = sim.advance(40000, 0.01, record=[0], every=10)
    t_e = np.concatenate([[0.0], t_e])
    V_e = np.concatenate([[lr.states["V"]], y[:, 0, 0]])
    f = sim.engine.rhs
    K = [float(k) for k in sim.engine.K]

    def rhs(t, yy):
        return f(list(yy), None, 0.0, t, None, K, None)
    y0 = list(lr.states.values())
    ts, Vs = [], []
    for a, b in ((0, 10), (10, 12), (12, 400)):          # split at the stimulus edges
        r = solve_ivp(rhs, (a, b), y0, method="Radau", rtol=1e-8, atol=1e-10, dense_output=True,
                      max_step=1.0)
        assert r.success
        tt = np.arange(a, b, 0.01)
        ts.append(tt)
        Vs.append(r.sol(tt)[0])
        y0 = r.y[:, -1]
    ref = _apd(np.concatenate(ts), np.concatenate(Vs))
    got = _apd(t_e, V_e)
    assert 80 < ref[1] - ref[0] and 200 < ref[2] < 450, ref
    amp = ref[1] - ref[0]
    assert abs(got[0] - ref[0]) <= 0.01 * abs(ref[0]), (got, ref)      # resting potential
    assert abs(got[1] - ref[1]) <= 0.01 * amp, (got, ref)              # peak, 1 % of the AP amplitude
    assert abs(got[2] - ref[2]) <= 0.01 * ref[2], (got, ref)           # APD90


def test_line_propagates(lr):
    """A stimulated end of an LR line excites the far end later (diffusive coupling)."""
    net = Network("line", 20, "V", 2.0)
    sim = Simulation(lr, network=net, member_params=network_stimulus(lr, 20))
    t, y = sim.advance(6000, 0.01, record=[0], every=20)
    V = y[:, 0, :]
    t_first = t[np.argmax(V[:, 0] > 0)]
    t_last = t[np.argmax(V[:, -1] > 0)]
    assert V[:, -1].max() > 20 and t_last > t_first + 1.0


def test_sbml_round_trip(lr, tmp_path):
    x = write_sbml(lr)
    m2 = read_sbml(x)
    x2 = write_sbml(m2)
    m3 = read_sbml(x2)
    assert m3.states == lr.states and m3.params == lr.params and set(m3.assigns) == set(lr.assigns)
    y = list(lr.states.values())
    for t in (0.0, 11.0):
        np.testing.assert_allclose(m3.rhs_reference(t, y), lr.rhs_reference(t, y), rtol=1e-14)
    shipped = load_model("luo_rudy_1991.xml")
    np.testing.assert_allclose(shipped.rhs_reference(11.0, y), lr.rhs_reference(11.0, y), rtol=1e-14)


@pytest.mark.skipif(not SHARED.is_dir(), reason="third-party models in ../shared/models not present")
def test_third_party_models():
    lr_c = load_model(SHARED / "luo_rudy_1991.cellml")          # CellML 1.0
    assert lr_c.n_states == 8
    hh = load_model(SHARED / "hodgkin_huxley_squid_axon_1952.cellml")   # CellML 2.0
    hh_s = load_model(SHARED / "BIOMD0000000020.xml")                   # SBML rules
    assert hh.n_states == 4 and hh_s.n_states == 4
    rep = load_model(SHARED / "BIOMD0000000012.xml")                     # reactions
    assert rep.n_states == 6
    for m in (lr_c, hh, rep):
        Simulation(m).advance(200, 0.01)
    with pytest.raises(InvalidParameter, match="event"):
        load_model(SHARED / "BIOMD0000000127.xml")
    # CellML LR (repository version, stimulus at 100 ms) rests near our hand-written model
    s = Simulation(lr_c)
    s.advance(5000, 0.01)
    assert abs(s.state()[list(lr_c.states).index("V"), 0] - (-84.0)) < 1.0


def test_bad_files(tmp_path):
    p = tmp_path / "bad.xml"
    p.write_text("<sbml><model id='x'><listOf")
    with pytest.raises(InvalidParameter, match="malformed"):
        load_model(p)
    with pytest.raises(InvalidParameter, match="no such model"):
        load_model(tmp_path / "missing.flint")
    c = tmp_path / "bad.cellml"
    c.write_text('<model xmlns="http://www.cellml.org/cellml/2.0#" name="m"><component name="c">'
                 '<variable name="x" units="second" interface="public_and_private"/></component></model>')
    with pytest.raises(InvalidParameter):
        load_model(c)


def test_blow_up_is_reported(lr):
    m = parse_text("model boom\nstate x = 1\node x = x*x\n")
    with pytest.raises(SimulationBlowUp, match="x"):
        Simulation(m, n=2).advance(2000, 0.1)


def test_gpu_runtimes_refused_without_gpu(lr):
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present")
    with pytest.raises(Exception, match="needs a GPU"):
        Simulation(lr, runtime="is")


def test_sbml_inconsistent_units_are_refused_by_name():
    from kernels.flint.sbml import read_sbml
    doc = """<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">
  <model id="m" timeUnits="second"><listOfParameters>
    <parameter id="k" value="2" units="mole" constant="true"/>
    <parameter id="x" value="1" units="UNITS" constant="false"/>
    <parameter id="y" value="0" constant="false"/></listOfParameters>
    <listOfRules><assignmentRule variable="x">
      <math xmlns="http://www.w3.org/1998/Math/MathML"><ci> k </ci></math>
    </assignmentRule><rateRule variable="y">
      <math xmlns="http://www.w3.org/1998/Math/MathML"><cn> 1 </cn></math>
    </rateRule></listOfRules>
  </model></sbml>"""
    with pytest.raises(InvalidParameter, match=r"inconsistent units, line \d+: .*assignmentRule.*'x'"):
        read_sbml(doc.replace("UNITS", "second"), "u.xml")
    m = read_sbml(doc.replace("UNITS", "mole"), "u.xml")          # same units: accepted
    assert m.assigns and "x" in m.assigns
    m = read_sbml(doc.replace("UNITS", "second"), "u.xml", check_units=False)
    assert "x" in m.assigns


def test_sbml_uncommon_mathml_is_lowered_for_the_compiler():
    """xor / implies / root / sec / n-ary and via the shared MathML converter, lowered to compiler ops."""
    import math as _m
    rng = np.random.default_rng()
    x = float(rng.uniform(0.1, 1.2))
    mm = 'xmlns="http://www.w3.org/1998/Math/MathML"'
    rules = {
        "a1": "<apply><xor/><true/><false/><true/></apply>",
        "a2": "<apply><implies/><false/><false/></apply>",
        "a3": f"<apply><root/><degree><cn>3</cn></degree><apply><times/><ci>x</ci><cn>27</cn></apply></apply>",
        "a4": "<apply><sec/><ci>x</ci></apply>",
        "a5": "<apply><lt/><cn>1</cn><ci>x</ci><cn>2</cn></apply>",
        "a6": "<apply><and/><true/><apply><gt/><ci>x</ci><cn>0</cn></apply><true/></apply>",
    }
    params = "".join(f'<parameter id="{k}" value="0" constant="false"/>' for k in rules)
    rr = "".join(f'<assignmentRule variable="{k}"><math {mm}>{v}</math></assignmentRule>' for k, v in rules.items())
    doc = f"""<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2"><model id="m">
<listOfParameters><parameter id="x" value="{x!r}" constant="true"/><parameter id="y" value="0" constant="false"/>
{params}</listOfParameters><listOfRules>{rr}
<rateRule variable="y"><math {mm}><csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/time">t</csymbol></math></rateRule>
</listOfRules></model></sbml>"""
    v = read_sbml(doc, "m.xml").initial_values()
    want = {"a1": 0.0, "a2": 1.0, "a3": 3 * x ** (1 / 3), "a4": 1 / _m.cos(x), "a5": float(1 < x < 2), "a6": 1.0}
    for k, w in want.items():
        assert v[k] == pytest.approx(w, rel=1e-14), k
    six = read_sbml(doc.replace(rules["a4"], "<apply><factorial/><cn>3</cn></apply>"), "m.xml")
    assert six.initial_values()["a4"] == 6.0
    bad = doc.replace(rules["a4"], "<apply><factorial/><ci>x</ci></apply>")
    with pytest.raises(ExplorerError, match="factorial.*not supported by the Flint compiler"):
        read_sbml(bad, "m.xml")


def test_sbml_round_trip_keeps_every_double_exactly():
    """libsbml prints 15 digits; write_sbml restores the shortest exact repr (17 digits at most)."""
    from kernels.flint.expr import evaluate
    rng = np.random.default_rng()
    for _ in range(20):
        k, y0, c, d = map(float, rng.random(4))
        d *= 10.0 ** int(rng.integers(-12, 12))
        m = parse_text(f"model x\ntime t\nparam k = {k!r}\nstate y = {y0!r}\node y = -{c!r}*y + {d!r}*k\n")
        r = read_sbml(write_sbml(m))
        env = {"k": k, "y": y0, "t": 0.0}
        assert r.params["k"] == k and r.states["y"] == y0
        assert evaluate(r.odes["y"], env) == evaluate(m.odes["y"], env)


@pytest.mark.parametrize("let", ["", "let z = b*y\n"])
@pytest.mark.parametrize("opts", [{}, {"cse": False}, {"merge": False, "reorder": False}])
def test_ode_roots_shared_with_other_functions(opts, let):
    """An ODE right-hand side that is also a sub-expression of other ODEs / a named variable with the
    same tree / two identical ODEs: every runtime path equals the direct evaluation."""
    rng = np.random.default_rng()
    a, b = map(float, rng.uniform(0.1, 2.0, 2))
    m = parse_text(f"model s\ntime t\nparam a = {a!r}\nparam b = {b!r}\nstate x = 1.0\nstate y = 2.0\n"
                   "state w = 0.5\nstate u = 0.25\n" + let + "let q = a*x*y\n"
                   "ode x = -a*x*y + b*y\node y = a*x*y - b*y\node w = b*y\node u = b*y\n")
    y0 = np.array(list(m.states.values()))
    want = y0 + 0.01 * np.array(m.rhs_reference(0.0, y0))
    for kw in ({}, {"bytecode_on_cpu": True}, {"bytecode_on_cpu": True, "mapping": "expression"}):
        sim = Simulation(m, "cpu", n=2, options=CompileOptions(**opts), **kw)
        sim.advance(1, 0.01)
        np.testing.assert_allclose(sim.state()[:, 0], want, rtol=1e-14, err_msg=str(kw))
