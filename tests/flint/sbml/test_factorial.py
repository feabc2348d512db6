"""factorial of a non-constant argument as a Flint expression (kernels.flint.sbml.factorial) against
math.gamma / math.factorial, at fresh random arguments."""
from __future__ import annotations

import math

import numpy as np

from kernels.flint.expr import evaluate, sym
from kernels.flint.sbml.factorial import factorial_expr


def test_factorial_matches_gamma_at_random_reals():
    rng = np.random.default_rng()
    x = np.concatenate([rng.uniform(-0.5, 170.0, 200), rng.uniform(-30.0, -0.5, 50)])
    x = x[np.abs(x - np.round(x)) > 1e-6]                       # away from the poles
    got = evaluate(factorial_expr(sym("x")), {"x": x})
    want = np.array([math.gamma(v + 1.0) for v in x])
    assert np.all(np.abs(got / want - 1.0) <= 1e-13 * np.maximum(1.0, np.abs(x)))   # pow's conditioning grows with x


def test_factorial_of_integers_and_overflow():
    rng = np.random.default_rng()
    n = rng.integers(0, 171, 40).astype(float)
    got = evaluate(factorial_expr(sym("x")), {"x": n})
    want = np.array([float(math.factorial(int(v))) for v in n])
    assert np.all(np.abs(got / want - 1.0) <= 1e-13 * np.maximum(1.0, n))
    assert np.all(np.isinf(evaluate(factorial_expr(sym("x")), {"x": np.array([171.0, 500.0, 1e300])})))
