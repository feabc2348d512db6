"""CPU reference SBML simulator: semantics on small inline models against analytic solutions, and a
sample of the SBML Test Suite (skipped when the suite is absent) where no case may be answered wrong."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from kernels.errors import InvalidParameter, Unsupported
from kernels.flint.sbml.simulate import simulate, simulate_file
from kernels.flint.sbml.system import read_sbml_system
from support.paths import SUITE
from support.sbml_docs import TIME, apply, ci, cn, doc, math_, param


def run(text, times, variables, amount=(), concentration=(), tmp_path=None):
    p = tmp_path / "m.xml"
    p.write_text(text)
    return simulate_file(p, np.asarray(times, float), list(variables), set(amount), set(concentration))


DECAY = doc(f"""
<listOfCompartments><compartment id="C" size="2" spatialDimensions="3" constant="true"/></listOfCompartments>
<listOfSpecies><species id="S" compartment="C" initialConcentration="1.5" hasOnlySubstanceUnits="false"
  boundaryCondition="false" constant="false"/></listOfSpecies>
<listOfParameters>{param("k", 0.7)}</listOfParameters>
<listOfReactions><reaction id="R" reversible="false">
  <listOfReactants><speciesReference species="S" stoichiometry="1" constant="true"/></listOfReactants>
  <kineticLaw>{math_(apply("times", ci("k"), ci("S"), ci("C")))}</kineticLaw></reaction></listOfReactions>""")


def test_decay_amount_and_concentration_in_compartment_of_size_2(tmp_path):
    t = np.linspace(0, 5, 11)
    r = run(DECAY, t, ["S", "R"], amount=["S"], tmp_path=tmp_path)
    conc = 1.5 * np.exp(-0.7 * t)
    np.testing.assert_allclose(r["S"], 2 * conc, rtol=1e-7)          # amount = size · concentration
    np.testing.assert_allclose(r["R"], 0.7 * conc * 2, rtol=1e-7)    # reaction id = kinetic-law value
    r = run(DECAY, t, ["S"], concentration=["S"], tmp_path=tmp_path)
    np.testing.assert_allclose(r["S"], conc, rtol=1e-7)


def test_event_fires_at_root_found_time(tmp_path):
    # dx/dt = 1 from x = 0; when x > 2.37 record the time in tf and reset x to 0 (fires again at 4.74)
    body = f"""<listOfParameters>{param("x", 0, False)}{param("tf", -1, False)}{param("n", 0, False)}
    </listOfParameters>
    <listOfRules><rateRule variable="x">{math_(cn(1))}</rateRule></listOfRules>
    <listOfEvents><event id="E" useValuesFromTriggerTime="true">
      <trigger initialValue="true" persistent="true">{math_(apply("gt", ci("x"), cn(2.37)))}</trigger>
      <listOfEventAssignments>
        <eventAssignment variable="tf">{math_(TIME)}</eventAssignment>
        <eventAssignment variable="x">{math_(cn(0))}</eventAssignment>
        <eventAssignment variable="n">{math_(apply("plus", ci("n"), cn(1)))}</eventAssignment>
      </listOfEventAssignments></event></listOfEvents>"""
    t = np.array([0.0, 1.0, 3.0, 4.0, 6.0])
    r = run(doc(body), t, ["x", "tf", "n"], tmp_path=tmp_path)
    assert r["tf"][2] == pytest.approx(2.37, abs=1e-10)
    assert r["tf"][4] == pytest.approx(4.74, abs=1e-10)
    np.testing.assert_allclose(r["n"], [0, 0, 1, 1, 2])
    np.testing.assert_allclose(r["x"], [0, 1, 3 - 2.37, 4 - 2.37, 6 - 4.74], atol=1e-9)


def test_delayed_event_trigger_time_vs_assignment_time_values(tmp_path):
    # at t > 1 two events with delay 2 copy the rising parameter p (= time via rate rule)
    def ev(eid, target, uvftt):
        return f"""<event id="{eid}" useValuesFromTriggerTime="{uvftt}">
          <trigger initialValue="true" persistent="true">{math_(apply("gt", TIME, cn(1)))}</trigger>
          <delay>{math_(cn(2))}</delay>
          <listOfEventAssignments><eventAssignment variable="{target}">{math_(ci("p"))}</eventAssignment>
          </listOfEventAssignments></event>"""
    body = f"""<listOfParameters>{param("p", 0, False)}{param("a", 0, False)}{param("b", 0, False)}
    </listOfParameters><listOfRules><rateRule variable="p">{math_(cn(1))}</rateRule></listOfRules>
    <listOfEvents>{ev("E1", "a", "true")}{ev("E2", "b", "false")}</listOfEvents>"""
    r = run(doc(body), [0, 2.9, 3.5], ["a", "b"], tmp_path=tmp_path)
    np.testing.assert_allclose(r["a"], [0, 0, 1.0], atol=1e-9)   # value of p at the trigger time 1
    np.testing.assert_allclose(r["b"], [0, 0, 3.0], atol=1e-9)   # value of p at the execution time 3


def test_t0_firing_depends_on_initial_value(tmp_path):
    def body(init):
        return f"""<listOfParameters>{param("q", 0, False)}</listOfParameters><listOfEvents>
        <event id="E" useValuesFromTriggerTime="true"><trigger initialValue="{init}" persistent="true">
        {math_(apply("geq", TIME, cn(0)))}</trigger><listOfEventAssignments>
        <eventAssignment variable="q">{math_(cn(5))}</eventAssignment></listOfEventAssignments></event>
        </listOfEvents>"""
    assert run(doc(body("false")), [0, 1], ["q"], tmp_path=tmp_path)["q"].tolist() == [5, 5]
    assert run(doc(body("true")), [0, 1], ["q"], tmp_path=tmp_path)["q"].tolist() == [0, 0]


def test_rate_rule_on_compartment_dilutes_concentration(tmp_path):
    body = f"""<listOfCompartments><compartment id="V" size="1" spatialDimensions="3" constant="false"/>
    </listOfCompartments><listOfSpecies><species id="S" compartment="V" initialAmount="3"
      hasOnlySubstanceUnits="false" boundaryCondition="false" constant="false"/></listOfSpecies>
    <listOfRules><rateRule variable="V">{math_(cn(0.5))}</rateRule></listOfRules>"""
    t = np.linspace(0, 4, 5)
    r = run(doc(body), t, ["S", "V"], concentration=["S"], tmp_path=tmp_path)
    np.testing.assert_allclose(r["V"], 1 + 0.5 * t, rtol=1e-9)
    np.testing.assert_allclose(r["S"], 3 / (1 + 0.5 * t), rtol=1e-8)


def test_initial_assignments_and_rules_order_independent(tmp_path):
    # IA of a uses the assignment-rule variable b, which uses c set by another IA later in the document
    body = f"""<listOfParameters>{param("a", None, True)}{param("b", None, False)}{param("c", 1, True)}
    </listOfParameters>
    <listOfInitialAssignments>
      <initialAssignment symbol="a">{math_(apply("times", cn(2), ci("b")))}</initialAssignment>
      <initialAssignment symbol="c">{math_(cn(4))}</initialAssignment>
    </listOfInitialAssignments>
    <listOfRules><assignmentRule variable="b">{math_(apply("plus", ci("c"), TIME))}</assignmentRule></listOfRules>"""
    r = run(doc(body), [0, 1, 2], ["a", "b"], tmp_path=tmp_path)
    np.testing.assert_allclose(r["a"], [8, 8, 8])          # 2 · b(t0) = 2 · (4 + 0)
    np.testing.assert_allclose(r["b"], [4, 5, 6])


def test_function_definition_and_uncommon_mathml(tmp_path):
    fd = f"""<listOfFunctionDefinitions><functionDefinition id="f">{math_(
        "<lambda><bvar><ci>u</ci></bvar><bvar><ci>w</ci></bvar>" + apply("power", ci("u"), ci("w")) + "</lambda>")}
    </functionDefinition></listOfFunctionDefinitions>"""
    root3 = "<apply><root/><degree><cn>3</cn></degree><ci>z</ci></apply>"
    log2 = "<apply><log/><logbase><cn>2</cn></logbase><ci>z</ci></apply>"
    body = f"""<listOfParameters>{param("z", 8)}{param("g", None, False)}{param("h", None, False)}
    {param("s", None, False)}{param("fa", None, False)}</listOfParameters><listOfRules>
    <assignmentRule variable="g">{math_("<apply><ci>f</ci><ci>z</ci><cn>2</cn></apply>")}</assignmentRule>
    <assignmentRule variable="h">{math_(apply("plus", root3, log2))}</assignmentRule>
    <assignmentRule variable="s">{math_(apply("plus", apply("sec", cn(0.3)), apply("arccoth", cn(3)),
                                              apply("xor", "<true/>", "<true/>", "<true/>")))}</assignmentRule>
    <assignmentRule variable="fa">{math_(apply("plus", apply("factorial", cn(5)), apply("ceiling", cn(1.2)),
                                               apply("quotient", cn(7), cn(2)), apply("rem", cn(7), cn(2))))}
    </assignmentRule></listOfRules>"""
    r = run(doc(body, fd), [0, 1], ["g", "h", "s", "fa"], tmp_path=tmp_path)
    assert r["g"][0] == pytest.approx(64)
    assert r["h"][0] == pytest.approx(2 + 3)
    assert r["s"][0] == pytest.approx(1 / math.cos(0.3) + math.atanh(1 / 3) + 1)
    assert r["fa"][0] == pytest.approx(120 + 2 + 3 + 1)


def test_division_by_zero_gives_ieee_values(tmp_path):
    body = f"""<listOfParameters>{param("z", 0)}{param("q", None, False)}{param("w", None, False)}
    </listOfParameters><listOfRules>
    <assignmentRule variable="q">{math_(apply("divide", cn(1), ci("z")))}</assignmentRule>
    <assignmentRule variable="w">{math_(apply("divide", ci("z"), ci("z")))}</assignmentRule></listOfRules>"""
    r = run(doc(body), [0, 1], ["q", "w"], tmp_path=tmp_path)
    assert np.all(np.isposinf(r["q"])) and np.all(np.isnan(r["w"]))


def test_algebraic_rule_dae(tmp_path):
    # 0 = x + y - 3 with dy/dt = 1, y(0) = 0  →  x = 3 - t
    body = f"""<listOfParameters>{param("x", 0, False)}{param("y", 0, False)}</listOfParameters>
    <listOfRules><algebraicRule>{math_(apply("minus", apply("plus", ci("x"), ci("y")), cn(3)))}</algebraicRule>
    <rateRule variable="y">{math_(cn(1))}</rateRule></listOfRules>"""
    t = np.linspace(0, 2, 5)
    np.testing.assert_allclose(run(doc(body), t, ["x"], tmp_path=tmp_path)["x"], 3 - t, atol=1e-9)


def test_fast_reaction_rapid_equilibrium(tmp_path):
    # A <-> B fast (kf A - kr B), B -> ∅ slow (k B): B = kf/(kf+kr)·T, T' = -k·kf/(kf+kr)·T
    def rxn(rid, reac, prod, law, fast):
        r = "".join(f'<speciesReference species="{x}" stoichiometry="1" constant="true"/>' for x in reac)
        p = "".join(f'<speciesReference species="{x}" stoichiometry="1" constant="true"/>' for x in prod)
        return (f'<reaction id="{rid}" reversible="true" fast="{fast}"><listOfReactants>{r}</listOfReactants>'
                + (f"<listOfProducts>{p}</listOfProducts>" if prod else "")
                + f"<kineticLaw>{math_(law)}</kineticLaw></reaction>")
    sp = "".join(f'<species id="{x}" compartment="C" initialAmount="{v}" hasOnlySubstanceUnits="true" '
                 f'boundaryCondition="false" constant="false"/>' for x, v in (("A", 4), ("B", 0)))
    body = f"""<listOfCompartments><compartment id="C" size="1" spatialDimensions="3" constant="true"/>
    </listOfCompartments><listOfSpecies>{sp}</listOfSpecies>
    <listOfParameters>{param("kf", 2.0)}{param("kr", 1.0)}{param("k", 0.3)}</listOfParameters>
    <listOfReactions>{rxn("F", ["A"], ["B"], apply("minus", apply("times", ci("kf"), ci("A")),
                                                   apply("times", ci("kr"), ci("B"))), "true")}
    {rxn("S", ["B"], [], apply("times", ci("k"), ci("B")), "false")}</listOfReactions>"""
    doc1 = doc(body).replace("level3/version2/core\" level=\"3\" version=\"2\"",
                             "level3/version1/core\" level=\"3\" version=\"1\"")
    t = np.linspace(0, 3, 7)
    T = 4 * np.exp(-0.3 * 2 / 3 * t)
    r = run(doc1, t, ["A", "B"], amount=["A", "B"], tmp_path=tmp_path)
    np.testing.assert_allclose(r["B"], 2 / 3 * T, rtol=1e-7)
    np.testing.assert_allclose(r["A"], 1 / 3 * T, rtol=1e-7)


def test_delay_csymbol(tmp_path):
    # dp/dt = 1, p(0) = 0; y = delay(p, 1): 0 before t = 1 (initial value), then t - 1
    dl = '<csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/delay">delay</csymbol>'
    body = f"""<listOfParameters>{param("p", 0, False)}{param("y", None, False)}</listOfParameters>
    <listOfRules><rateRule variable="p">{math_(cn(1))}</rateRule>
    <assignmentRule variable="y">{math_(f"<apply>{dl}<ci>p</ci><cn>1</cn></apply>")}</assignmentRule></listOfRules>"""
    t = np.linspace(0, 3, 7)
    np.testing.assert_allclose(run(doc(body), t, ["y"], tmp_path=tmp_path)["y"], np.maximum(t - 1, 0), atol=1e-8)


def test_refusals_and_malformed_input(tmp_path):
    # an algebraic rule over constants only determines nothing: refused, naming the rule
    alg = f"""<listOfParameters>{param("x", 1, True)}</listOfParameters>
    <listOfRules><algebraicRule>{math_(apply("minus", ci("x"), cn(1)))}</algebraicRule></listOfRules>"""
    with pytest.raises(Unsupported, match="algebraicRule"):
        simulate(read_sbml_system(doc(alg)), [0.0, 1.0])
    with pytest.raises(InvalidParameter, match="malformed"):
        read_sbml_system("<sbml><model id='x'><listOf")
    with pytest.raises(InvalidParameter, match="not found"):
        read_sbml_system(str(tmp_path / "missing.xml"))
    comp = """<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core" level="3" version="1"
      xmlns:comp="http://www.sbml.org/sbml/level3/version1/comp/version1" comp:required="true">
  <model id="m"><comp:listOfSubmodels><comp:submodel comp:id="A" comp:modelRef="ext"/></comp:listOfSubmodels>
  </model>
  <comp:listOfExternalModelDefinitions>
    <comp:externalModelDefinition comp:id="ext" comp:source="no_such_model.xml"/>
  </comp:listOfExternalModelDefinitions>
</sbml>"""
    (tmp_path / "top.xml").write_text(comp)
    with pytest.raises(InvalidParameter, match="no_such_model.xml"):
        read_sbml_system(str(tmp_path / "top.xml"))


def test_simulate_returns_all_ids():
    s = read_sbml_system(DECAY)
    r = simulate(s, [0.0, 1.0])
    assert set(r) >= {"C", "S", "k", "R", "@a:S"}
    assert r["@a:S"][1] == pytest.approx(3 * math.exp(-0.7), rel=1e-8)


# --- SBML Test Suite sample ---------------------------------------------------------------------------
# the first TimeCourse case that brings a new component/test tag, in case order (covers every tag)
SAMPLE = ["00001", "00003", "00007", "00021", "00023", "00025", "00026", "00027", "00029", "00031", "00033",
          "00039", "00048", "00051", "00054", "00056", "00060", "00068", "00071", "00374", "00406", "00456",
          "00851", "00870", "00922", "00928", "00930", "00932", "00936", "00937", "00952", "00960", "00972",
          "00974", "00975", "01124", "01125", "01126", "01128", "01130", "01137", "01142", "01143", "01149",
          "01165", "01198", "01234", "01248", "01272", "01282", "01518", "01523", "01565"]


def _settings(case_dir: Path, case: str) -> dict:
    out = {}
    for line in (case_dir / f"{case}-settings.txt").read_text().splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


@pytest.mark.skipif(not SUITE.is_dir(), reason=f"SBML Test Suite not found at {SUITE}")
@pytest.mark.parametrize("case", SAMPLE)
def test_suite_case_never_wrong(case):
    d = SUITE / "cases" / case
    if "TimeCourse" not in (d / f"{case}-model.m").read_text():
        pytest.skip("not a TimeCourse case")
    st = _settings(d, case)
    xml = sorted(d.glob(f"{case}-sbml-l*.xml"))[-1]
    start, dur, steps = float(st["start"]), float(st["duration"]), int(st["steps"])
    times = np.linspace(start, start + dur, steps + 1)
    names = lambda k: [v.strip() for v in st.get(k, "").split(",") if v.strip()]  # noqa: E731
    try:
        res = simulate_file(xml, times, names("variables"), set(names("amount")), set(names("concentration")))
    except Unsupported as exc:
        assert str(exc).strip()               # a refusal must name the construct
        pytest.skip(f"refused: {exc}")
    header = (d / f"{case}-results.csv").read_text().splitlines()[0].split(",")
    expected = np.genfromtxt(d / f"{case}-results.csv", delimiter=",", skip_header=1, ndmin=2)
    A, R = float(st["absolute"]), float(st["relative"])
    for j, v in enumerate(header[1:], start=1):
        e, x = expected[:, j], np.asarray(res[v.strip()])
        with np.errstate(invalid="ignore"):
            ok = np.where(np.isnan(e), np.isnan(x), np.where(np.isinf(e), x == e, np.abs(x - e) <= A + R * np.abs(e)))
        assert ok.all(), f"{case} {v}: first mismatch at t={times[np.argmin(ok)]}"


def test_output_hook_reports_every_point_and_stop_ends_the_run():
    from kernels.flint.sbml.simulate import Stopped, simulate
    from kernels.flint.sbml.solver import CompiledSbml
    from kernels.flint.sbml.system import read_sbml_system
    c = CompiledSbml(read_sbml_system(DECAY))
    t = np.linspace(0, 5, 21)
    seen = {}
    res = simulate(c, t, on_output=lambda i, tt, row: seen.__setitem__(i, (tt, np.array(row))))
    assert sorted(seen) == list(range(len(t)))
    j = c.out_names.index("S")
    np.testing.assert_array_equal([seen[i][1][j] for i in range(len(t))], res["S"])
    assert [seen[i][0] for i in range(len(t))] == pytest.approx(t)
    calls = []
    with pytest.raises(Stopped):
        simulate(c, t, on_output=lambda i, *_: calls.append(i), stop=lambda: len(calls) >= 5)
    assert calls == [0, 1, 2, 3, 4]


def test_event_executions_are_reported_with_their_times(tmp_path, rng):
    """``on_event(t, id)`` at each execution: x' = k, reset to 0 when x > thr fires at j·thr/k."""
    from kernels.flint.sbml.reference import reference_fallback, run_reference
    from support.sbml_docs import event_sbml
    k, thr = float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.0, 3.0))
    ref = reference_fallback(event_sbml(tmp_path, k, thr))
    seen = []
    run_reference(ref, np.linspace(0.0, 10.0, 101), ["x"], on_event=lambda t, eid: seen.append((t, eid)))
    want = thr / k * np.arange(1, int(10.0 * k / thr) + 1)
    assert [e for _t, e in seen] == ["E"] * len(want)
    np.testing.assert_allclose([t for t, _e in seen], want, rtol=1e-6)
