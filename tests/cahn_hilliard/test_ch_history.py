"""The Cahn–Hilliard diagnostics history stays bounded over long runs (issue 19: it grew by ~45 MB
an hour in the GUI) without changing what the plots and the coarsening fit show."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernels.cahn_hilliard import CahnHilliard, CHParams
from kernels.cahn_hilliard.diagnostics import fit_power_law
from kernels.cahn_hilliard.simulation import HISTORY_FIELDS, History


def _bound(h: History, records: int) -> int:
    return h.capacity + 2 ** (h.log_bits - 1) * math.ceil(math.log2(records)) + 2 ** h.log_bits + 1


def test_history_is_bounded_and_spans_the_whole_run():
    rng = np.random.default_rng(5)
    h = History(capacity=128)
    n, most = 100_000, 0
    for k in range(n):
        h.append(0.01 * k, 10 * k, 0.1, -float(k), float(rng.random()))
        most = max(most, len(h))
    assert most <= _bound(h, n) < 800                  # vs 100 000 points unbounded
    assert h.index[0] == 0 and h.index[-1] == n - 1    # first and newest record always kept
    assert h.steps == [10 * k for k in h.index] and h.t == [0.01 * k for k in h.index]
    assert all(b > a for a, b in zip(h.index, h.index[1:]))
    # evenly spread over the run (no gap wider than two strides) …
    assert max(np.diff(h.index)) <= 2 * h.stride
    # … and resolved at early times: every octave of the record number holds points
    for e in range(h.log_bits, 16):
        inside = [k for k in h.index if 2 ** e <= k < 2 ** (e + 1)]
        assert len(inside) >= 2 ** (h.log_bits - 1), e


def test_fit_of_a_decimated_history_matches_the_full_one():
    """Record a real coarsening run into an unbounded and a small bounded history: the L ∝ t^α
    fit (over the later part of the run, as the plot and the CLI summary do) agrees."""
    sim = CahnHilliard(CHParams(size=64, integrator="spectral", dt=0.5, seed=3))
    full = History(capacity=10 ** 9)
    sim.history = History(capacity=48, log_bits=4)
    small = sim.history
    for _ in range(700):
        sim.step(5)
        full.append(*(getattr(small, k)[-1] for k in HISTORY_FIELDS))
    assert len(full) == 700 and len(small) < 200
    a_full, _ = fit_power_law(full.t, full.length)
    a_small, _ = fit_power_law(small.t, small.length)
    assert 0.15 < a_full < 0.6                          # a coarsening exponent, near 1/3
    assert a_small == pytest.approx(a_full, abs=0.02)
    assert small.energy[-1] == full.energy[-1] and small.mean[0] == full.mean[0]
    s = sim.summary()                                   # the CLI summary still reads first and last
    assert s["free_energy_final"] == full.energy[-1] and s["length_scale_final"] == full.length[-1]


def test_load_restores_points_and_keeps_the_bound():
    h = History(capacity=64)
    for k in range(1000):
        h.append(float(k), k, 0.0, 0.0, 1.0)
    copy = History(capacity=64)
    copy.load(h.as_dict(), h.index)
    assert copy.as_dict() == h.as_dict() and copy.index == h.index and copy.stride == h.stride
    copy.append(1000.0, 1000, 0.0, 0.0, 1.0)
    h.append(1000.0, 1000, 0.0, 0.0, 1.0)
    assert copy.index == h.index
    older = History(capacity=64)                        # a session without record numbers
    older.load({k: list(range(500)) for k in HISTORY_FIELDS})
    assert len(older) <= _bound(older, 500) and older.t[-1] == 499
    with pytest.raises(ValueError):
        History().load({"t": [0, 1], "steps": [0], "mean": [0], "energy": [0], "length": [0]})
    with pytest.raises(ValueError):
        History().load({k: [0, 1] for k in HISTORY_FIELDS}, index=[1, 1])
