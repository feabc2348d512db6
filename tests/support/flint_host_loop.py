"""What the CPU tests of the many-steps kernels share (issue 23): a mixin that drives a host-compiled
loop kernel in chunks of random lengths, and the check that such a runtime equals its one-step
reference bit for bit and the NumPy runtime to 1e-10 on a fresh random LR ensemble.

Used by tests/flint/test_flint_loop.py (the translator's loop), tests/flint/test_flint_is_loop.py (the
interpreter's) and tests/flint/test_flint_coupled.py (lines and rings)."""
from __future__ import annotations

import ctypes

import numpy as np


def ptr(a: np.ndarray) -> ctypes.c_void_p:
    """A NumPy array as a C pointer argument."""
    return a.ctypes.data_as(ctypes.c_void_p)


class HostChunks:
    """Mixin of a test runtime whose kernel is compiled for the host: :meth:`run_loop` hands it chunks
    of 1 … 3·every + 1 steps (random), each recording into a fresh NaN buffer, through
    :meth:`launch` (the subclass's call of its kernel: ``rec`` / ``col`` as the device kernels take
    them, ``buf`` of shape (samples ≥ 1, len(rec), len(cells)))."""

    def loops(self) -> bool:
        return True

    def launch(self, step: int, kl: int, dt: float, every: int, rec, col, n_cells: int, buf) -> None:
        raise NotImplementedError

    def run_loop(self, k, dt, step0, every, record, cells) -> list:
        if getattr(self, "rng", None) is None:
            self.rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
        col = np.full(self.n, -1, dtype=np.int32)
        col[cells] = np.arange(len(cells), dtype=np.int32)
        rec = np.asarray(record, dtype=np.int32)
        out, step, end = [], step0, step0 + k
        while step < end:
            kl = int(min(end - step, self.rng.integers(1, 3 * every + 2)))
            m = (step + kl) // every - step // every
            buf = np.full((max(m, 1), len(rec), len(cells)), np.nan, dtype=self.dtype)
            self.launch(step, kl, dt, every, rec, col, len(cells), buf)
            out.extend(buf[j].copy() for j in range(m))
            step += kl
        return out


def assert_same_bits(loop, reference, numpy, dtype: str, shape: tuple) -> None:
    """(times, samples, final state) of a many-steps runtime against its one-step ``reference``: equal
    bit for bit, samples of ``shape``; times equal to the NumPy runtime's, and in float64 its samples
    within 1e-10 of NumPy's (relative to each state's range)."""
    (ta, sa, ya), (tb, sb, yb), (tc, sc) = loop[:3], reference[:3], numpy[:2]
    np.testing.assert_array_equal(ta, tb)
    assert sa.shape == sb.shape == shape
    np.testing.assert_array_equal(sa, sb)              # same operations in the same order: bit for bit
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(ta, tc)
    if dtype == "float64":
        scale = np.abs(sc).max(axis=(0, 2), keepdims=True)
        assert (np.abs(sa - sc) / np.maximum(scale, 1e-300)).max() <= 1e-10


def check_loop_equals_reference(model, loop_runtime: str, reference: str, integrator: str, dtype: str,
                                steps: int) -> None:
    """``loop_runtime`` (a :class:`HostChunks` runtime) against ``reference`` (the one-step kernel on
    the host: same operations in the same order) bit for bit, and against NumPy to 1e-10 in float64:
    a fresh random LR ensemble of 5–39 members, two ``advance`` calls, random ``every``, recorded
    states (either order) and recorded cells (repeats, any order)."""
    from kernels.flint import Simulation
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    n = int(rng.integers(5, 40))
    member = {"g_Na": rng.uniform(15, 25, n), "g_si": rng.uniform(0.06, 0.1, n)}
    every = int(rng.integers(1, 60))
    record = sorted(rng.choice(model.n_states, size=int(rng.integers(1, model.n_states + 1)), replace=False).tolist())
    record = record[::-1] if rng.random() < 0.5 else record
    cells = rng.integers(0, n, size=int(rng.integers(1, 2 * n)))        # repeats, any order
    y0 = np.array([model.states[s] for s in model.states])[:, None] * rng.uniform(0.99, 1.01, (model.n_states, n))
    res = {}
    for rt in (loop_runtime, reference, "cpu"):
        sim = Simulation(model, runtime=rt, n=n, member_params=member, integrator=integrator, dtype=dtype, y0=y0)
        t1, s1 = sim.advance(steps // 2 + 3, 0.01, record=record, every=every, cells=cells)
        t2, s2 = sim.advance(steps - steps // 2 - 3, 0.01, record=record, every=every, cells=cells)
        res[rt] = (np.concatenate([t1, t2]), np.concatenate([s1, s2]), sim.state())
    assert_same_bits(res[loop_runtime], res[reference], res["cpu"], dtype, (steps // every, len(record), len(cells)))
    sa = res[loop_runtime][1]
    if 0 in record and steps * 0.01 > 20:
        assert sa[:, record.index(0)].max() > 0          # the stimulus (a function of t) fired inside the loop
