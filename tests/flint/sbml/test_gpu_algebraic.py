"""Algebraic rules and fast reactions on the stiff ensemble integrator (Rodas4 with a mass matrix,
``lower_system(dae=True)``): a model with an algebraic rule at fresh random parameters against the
CPU reference simulator, suite cases, and the CUDA source run on the host against the NumPy twin."""
from __future__ import annotations

import numpy as np
import pytest

from cli.flint_suite import suite_dir
from kernels.flint.ensemble.rosenbrock import StiffProblem, integrate, simulate_file
from kernels.flint.sbml import conformance as suite
from kernels.flint.sbml.core import lower_system
from kernels.flint.sbml.simulate import simulate_file as reference

MATHML = 'xmlns="http://www.w3.org/1998/Math/MathML"'


def dae_sbml(k: float, total: float) -> str:
    """A → B at rate k·A (A(0) = 1); C (a boundary species) from the algebraic rule
    0 = B + C − total·(1 + sin t)/2."""
    sp = "".join(f'<species id="{s}" compartment="c" initialAmount="{v}" hasOnlySubstanceUnits="true" '
                 f'boundaryCondition="{b}" constant="false"/>' for s, v, b in (("A", 1, "false"), ("B", 0, "false"),
                                                                              ("C", 0.5, "true")))
    pars = f'<parameter id="k" value="{k!r}" constant="true"/><parameter id="T" value="{total!r}" constant="true"/>'
    rule = (f'<listOfRules><algebraicRule><math {MATHML}><apply><minus/><apply><plus/><ci>B</ci><ci>C</ci></apply>'
            f'<apply><times/><ci>T</ci><cn>0.5</cn><apply><plus/><cn>1</cn><apply><sin/>'
            f'<csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/time">t</csymbol>'
            f'</apply></apply></apply></apply></math></algebraicRule></listOfRules>')
    rx = (f'<listOfReactions><reaction id="r" reversible="false"><listOfReactants><speciesReference species="A" '
          f'stoichiometry="1" constant="true"/></listOfReactants><listOfProducts><speciesReference species="B" '
          f'stoichiometry="1" constant="true"/></listOfProducts><kineticLaw><math {MATHML}><apply><times/>'
          f'<ci>k</ci><ci>A</ci></apply></math></kineticLaw></reaction></listOfReactions>')
    return ('<?xml version="1.0" encoding="UTF-8"?><sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
            'level="3" version="2"><model id="dae"><listOfCompartments><compartment id="c" size="1" '
            f'constant="true"/></listOfCompartments><listOfSpecies>{sp}</listOfSpecies><listOfParameters>{pars}'
            f'</listOfParameters>{rule}{rx}</model></sbml>')


def _model(tmp_path):
    rng = np.random.default_rng()
    k, total = float(rng.uniform(0.3, 3.0)), float(rng.uniform(2.0, 5.0))
    p = tmp_path / "dae.xml"
    p.write_text(dae_sbml(k, total))
    return p


def test_algebraic_rule_matches_reference(tmp_path):
    p = _model(tmp_path)
    times = np.linspace(0.0, 5.0, 11)
    names = ["A", "B", "C"]
    got = simulate_file(p, times, names, set(names), set())
    want = reference(p, times, names, set(names), set())
    # the states to 1e-6; the algebraic C at output points comes from Rodas4's dense output (not re-solved
    # there), which leaves the constraint B + C = g(t) off by up to ~3e-5 in CI runs: C is checked to the
    # SBML Test Suite's usual tolerance (1e-4 relative and absolute)
    for v in names:
        assert np.allclose(got[v], want[v], rtol=1e-4 if v == "C" else 1e-6, atol=1e-4 if v == "C" else 1e-9), v


def test_lowering_marks_the_algebraic_state(tmp_path):
    core = lower_system(str(_model(tmp_path)), ["C"], {"C"}, set(), dae=True)
    assert len(core.algebraic) == 1 and core.algebraic[0] == core.model.n_states - 1


@pytest.mark.slow
def test_host_source_equals_twin_on_a_dae(tmp_path):
    from kernels.flint.ensemble.rodas_gpu import integrate_device, stiff_problem
    p = _model(tmp_path)
    times = np.linspace(0.0, 5.0, 11)
    twin = integrate(StiffProblem(lower_system(str(p), ["B", "C"], {"B", "C"}, set(), dae=True), 2), times)
    host = integrate_device(stiff_problem(lower_system(str(p), ["B", "C"], {"B", "C"}, set(), dae=True), 2),
                            times, "ts", "host")
    assert np.allclose(host, twin, rtol=1e-12, atol=1e-15)


def test_suite_algebraic_and_fast_cases():
    root = suite_dir()
    if not (root / "cases").is_dir():
        pytest.skip(f"SBML Test Suite not found at {root} (set GSE_SBML_SUITE)")
    cases = suite.discover(root, ["00039", "00531"])
    outs = [suite.run_case(c, simulate_file) for c in cases]
    assert [o.status for o in outs] == ["passed"] * 2, [(o.case, o.message) for o in outs]
