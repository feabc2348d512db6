"""The stiff ensemble integrator Rodas4: the symbolic Jacobian against finite differences, the NumPy
twin against SciPy's LSODA on Robertson's problem with fresh random rate constants per member and on
SBML Test Suite cases with events, the CUDA source run on the host CPU against the twin, and (marked
gpu) the CUDA kernel against the twin."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from cli.flint_suite import suite_dir
from kernels.flint.compiler import compile_model
from kernels.flint.ensemble.jacobian import jacobian_model
from kernels.flint.ensemble.rk import Problem, numpy_function
from kernels.flint.ensemble.rosenbrock import StiffProblem, integrate, lu_factor, lu_solve, simulate_file
from kernels.flint.expr import parse
from kernels.flint.model import Model
from kernels.flint.sbml import conformance as suite
from kernels.flint.sbml.core import lower_system

gpu = pytest.mark.gpu

_MATH = '<math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/>{}</apply></math>'


def species_ref(s, n=1):
    return f'<speciesReference species="{s}" stoichiometry="{n}" constant="true"/>'


def reaction(rid, reactants, products, law):
    return (f'<reaction id="{rid}" reversible="false"><listOfReactants>{reactants}</listOfReactants>'
            f'<listOfProducts>{products}</listOfProducts><kineticLaw>'
            + _MATH.format("".join(f"<ci>{x}</ci>" for x in law)) + "</kineticLaw></reaction>")


def robertson_sbml() -> str:
    """Robertson's chemical kinetics (Hairer & Wanner II §IV.1): A → B (k1), 2B → B + C (k2), B + C → A + C (k3)."""
    sp = "".join(f'<species id="{s}" compartment="c" initialAmount="{v}" hasOnlySubstanceUnits="true" '
                 f'boundaryCondition="false" constant="false"/>' for s, v in (("A", 1), ("B", 0), ("C", 0)))
    pars = "".join(f'<parameter id="{k}" value="{v}" constant="true"/>' for k, v in (("k1", 0.04), ("k2", 3e7), ("k3", 1e4)))
    rxs = (reaction("r1", species_ref("A"), species_ref("B"), ["k1", "A"]) + reaction("r2", species_ref("B", 2), species_ref("B") + species_ref("C"), ["k2", "B", "B"])
           + reaction("r3", species_ref("B") + species_ref("C"), species_ref("A") + species_ref("C"), ["k3", "B", "C"]))
    return ('<?xml version="1.0" encoding="UTF-8"?><sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
            'level="3" version="2"><model id="robertson"><listOfCompartments><compartment id="c" size="1" '
            f'constant="true"/></listOfCompartments><listOfSpecies>{sp}</listOfSpecies><listOfParameters>{pars}'
            f'</listOfParameters><listOfReactions>{rxs}</listOfReactions></model></sbml>')


def _robertson(tmp_path, n, rng):
    path = tmp_path / "robertson.xml"
    path.write_text(robertson_sbml())
    core = lower_system(str(path), ["A", "B", "C"], {"A", "B", "C"}, set())
    k = {"k1": 0.04 * rng.uniform(0.5, 2, n), "k2": 3e7 * rng.uniform(0.5, 2, n), "k3": 1e4 * rng.uniform(0.5, 2, n)}
    return core, k


def _lsoda(k, m, times):
    def f(t, y):
        a, b, c = y
        k1, k2, k3 = k["k1"][m], k["k2"][m], k["k3"][m]
        return [-k1 * a + k3 * b * c, k1 * a - k2 * b * b - k3 * b * c, k2 * b * b]
    return solve_ivp(f, (0, times[-1]), [1, 0, 0], method="LSODA", t_eval=times, rtol=1e-10, atol=1e-14).y.T


def test_jacobian_matches_finite_differences():
    rng = np.random.default_rng()
    c = rng.uniform(0.5, 2.0, 6)
    m = Model(name="j", time="t", states={"x": 0.7, "y": 1.3, "z": 0.4}, params={f"c{i}": float(v) for i, v in enumerate(c)},
              assigns={"a": parse("c0*x*y/(c1 + z)"), "b": parse("exp(-c2*x) + sqrt(y)*sin(t)"),
                       "g": parse("where(x > y, pow(x, c3), min(y, z)) + abs(z - 0.5)")},
              odes={"x": parse("-a + b*z"), "y": parse("a - g*log(1 + y) + tanh(c4*t)"), "z": parse("pow(y, z) - c5*z*g")})
    jm, jac, dfdt = jacobian_model(m)
    prog = compile_model(jm, 1)
    f = numpy_function(prog, [nm for *_, nm in jac] + [nm for _, nm in dfdt], scalar=True)
    rhs = numpy_function(compile_model(m, 1), scalar=True)
    y, t = rng.uniform(0.2, 1.5, 3).tolist(), float(rng.uniform(0, 3))
    vals = f(y, t, [], [float(v) for v in prog.consts])
    J = np.zeros((3, 3))
    for (r, cc, _), v in zip(jac, vals):
        J[r, cc] = v
    K = [float(v) for v in compile_model(m, 1).consts]
    for cc in range(3):
        e = 1e-6
        yp, ym = list(y), list(y)
        yp[cc] += e
        ym[cc] -= e
        fd = (np.array(rhs(yp, t, [], K)) - np.array(rhs(ym, t, [], K))) / (2 * e)
        assert np.allclose(J[:, cc], fd, rtol=1e-6, atol=1e-7), (cc, J[:, cc], fd)
    T = np.zeros(3)
    for (r, _), v in zip(dfdt, vals[len(jac):]):
        T[r] = v
    fd_t = (np.array(rhs(y, t + 1e-6, [], K)) - np.array(rhs(y, t - 1e-6, [], K))) / 2e-6
    assert np.allclose(T, fd_t, rtol=1e-6, atol=1e-7)


def test_lu_solves_random_systems():
    rng = np.random.default_rng()
    ns, m = 5, 7
    E = rng.normal(size=(ns, ns, m))
    b = rng.normal(size=(ns, m))
    LU, piv, ok = lu_factor(E)
    assert ok.all()
    x = lu_solve(LU, piv, b)
    for j in range(m):
        assert np.allclose(E[:, :, j] @ x[:, j], b[:, j], atol=1e-10)


def test_robertson_twin_equals_lsoda(tmp_path):
    rng = np.random.default_rng()
    n = 3
    core, k = _robertson(tmp_path, n, rng)
    times = np.linspace(0.0, 40.0, 11)
    res = integrate(StiffProblem(core, n, k), times, rtol=1e-6, atol=1e-10, hmax=40.0)
    for m in range(n):
        ref = _lsoda(k, m, times)
        assert np.all(np.abs(res[:, :, m] - ref) <= 1e-8 + 1e-5 * np.abs(ref)), m


def _suite():
    root = suite_dir()
    if not (root / "cases").is_dir():
        pytest.skip(f"SBML Test Suite not found at {root} (set GSE_SBML_SUITE)")
    return root


def test_twin_on_suite_event_cases():
    cases = suite.discover(_suite(), ["00026", "01402"])
    outs = [suite.run_case(c, simulate_file) for c in cases]
    assert [o.status for o in outs] == ["passed"] * 2, [(o.case, o.message) for o in outs]


def _host_vs_twin(tmp_path, flavour, device="host"):
    from kernels.flint.ensemble.rodas_gpu import integrate_device, stiff_problem
    rng = np.random.default_rng()
    n = 3
    core, k = _robertson(tmp_path, n, rng)
    times = np.linspace(0.0, 40.0, 11)
    twin = integrate(StiffProblem(core, n, k), times, rtol=1e-6, atol=1e-10, hmax=40.0)
    core2, _ = _robertson(tmp_path, n, rng)
    dev = integrate_device(stiff_problem(core2, n, k), times, flavour, device, rtol=1e-6, atol=1e-10, hmax=40.0)
    assert np.allclose(dev, twin, rtol=1e-12, atol=1e-15)


def test_host_ts_source_equals_twin(tmp_path):
    _host_vs_twin(tmp_path, "ts")


@pytest.mark.slow
def test_host_is_source_equals_twin(tmp_path):
    _host_vs_twin(tmp_path, "is")


@gpu
@pytest.mark.parametrize("flavour", ["ts", "is"])
def test_gpu_kernel_equals_twin(tmp_path, flavour):
    _host_vs_twin(tmp_path, flavour, "cuda")


def test_problem_subclass_keeps_dp_interface(tmp_path):
    core, k = _robertson(tmp_path, 2, np.random.default_rng())
    pb = StiffProblem(core, 2, k)
    assert isinstance(pb, Problem)
    J, T = pb.jacobian(0.0, pb.y0)
    assert J.shape == (3, 3, 2) and T.shape == (3, 2)
    assert np.allclose(J[0, 0], -k["k1"])      # ∂(−k1·A + k3·B·C)/∂A at (1, 0, 0)


def test_fired_events_match_dormand_prince():
    from kernels.flint.ensemble import rk
    root = _suite()
    (case,) = suite.discover(root, ["00026"])
    core = lower_system(str(case.model), [], set(), set())
    times = np.linspace(0.0, 5.0, 11)
    a, b = [], []
    rk.integrate(rk.Problem(core, 1), times, fired=a)
    integrate(StiffProblem(core, 1), times, fired=b)
    assert a and [e for _, _, e in a] == [e for _, _, e in b]
    assert np.allclose([t for _, t, _ in a], [t for _, t, _ in b], rtol=1e-6)
