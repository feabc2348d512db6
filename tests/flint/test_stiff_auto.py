"""Method auto of the adaptive engines (kernels.flint.ensemble.auto): a stiff model runs with Rodas4
instead of being refused, a non-stiff one with Dormand–Prince; results against the exact solution."""
from __future__ import annotations

import numpy as np

from kernels.flint.ensemble.auto import integrate_auto
from kernels.flint.sbml.core import lower_system
from test_rosenbrock import reaction, species_ref


def _pair_sbml(kf: float, kb: float) -> str:
    """A ⇌ B, rates kf·A and kb·B, A(0) = 1: A(t) = (kb + kf·e^{−(kf+kb)t}) / (kf + kb)."""
    sp = "".join(f'<species id="{s}" compartment="c" initialAmount="{v}" hasOnlySubstanceUnits="true" '
                 f'boundaryCondition="false" constant="false"/>' for s, v in (("A", 1), ("B", 0)))
    pars = f'<parameter id="kf" value="{kf!r}" constant="true"/><parameter id="kb" value="{kb!r}" constant="true"/>'
    rxs = reaction("f", species_ref("A"), species_ref("B"), ["kf", "A"]) + reaction("b", species_ref("B"), species_ref("A"), ["kb", "B"])
    return ('<?xml version="1.0" encoding="UTF-8"?><sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
            'level="3" version="2"><model id="pair"><listOfCompartments><compartment id="c" size="1" '
            f'constant="true"/></listOfCompartments><listOfSpecies>{sp}</listOfSpecies><listOfParameters>{pars}'
            f'</listOfParameters><listOfReactions>{rxs}</listOfReactions></model></sbml>')


def _exact(kf, kb, t):
    return (kb + kf * np.exp(-(kf + kb) * t)) / (kf + kb)


def _run(tmp_path, kf, kb, t_end):
    p = tmp_path / "pair.xml"
    p.write_text(_pair_sbml(kf, kb))
    core = lower_system(str(p), ["A"], {"A"}, set())
    times = np.linspace(0.0, t_end, 6)
    method, res = integrate_auto(core, times, "numpy", rtol=1e-8)
    return method, res[:, 0, 0], _exact(kf, kb, times)


def test_stiff_model_runs_with_rodas(tmp_path):
    rng = np.random.default_rng()
    kf, kb = float(rng.uniform(2e4, 5e4)), float(rng.uniform(0.5, 2.0))
    method, got, want = _run(tmp_path, kf, kb, 10.0)
    assert method == "rodas4"
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9)


def test_non_stiff_model_runs_with_dopri(tmp_path):
    rng = np.random.default_rng()
    kf, kb = float(rng.uniform(0.5, 2.0)), float(rng.uniform(0.5, 2.0))
    method, got, want = _run(tmp_path, kf, kb, 2.0)
    assert method == "dopri5"
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9)
