"""Many steps a launch (issue 23): the translator's loop kernel (``codegen.ts_loop_source``) and the
driver that hands it whole chunks (``Simulation._advance_looped`` / ``Runtime.run_loop``), checked on
the CPU.  The kernel's CUDA C is compiled for the host (the CUDA keywords defined away, as runtime
``c`` does with the one-step kernel) and launched over every cell in chunks of random lengths; its
samples and final states must equal runtime ``c`` (the one-step kernel, same operations in the same
order) bit for bit and the NumPy runtime to 1e-10 — for Euler and RK4, float64 and float32, any
``every``, recorded states and cells (repeats, any order).  The GPU side: tests/test_flint_gpu.py."""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from kernels import hostcc
from kernels.flint import Simulation, load_model
from kernels.flint.runtimes import register, unregister
from kernels.flint.runtimes.codegen import loopable, ts_loop_source
from kernels.flint.runtimes.host_ts import HostTranslatorRuntime

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                                reason="no host C++ compiler (g++/clang++)")

_HOST_LAUNCH = r"""
extern "C" void flint_loop_launch(const REAL* K, const REAL* P, REAL* y, long long step0, int k, double dt,
                                  int n, long long every, const int* rec, int n_rec, const int* col, int n_col,
                                  REAL* out) {
    blockIdx.x = 0; blockDim.x = (unsigned)n;
    for (int i = 0; i < n; ++i) { threadIdx.x = (unsigned)i;
        flint_ts_loop(KARG P, y, step0, k, dt, n, every, rec, n_rec, col, n_col, out); }
}
"""


class HostLoopRuntime(HostTranslatorRuntime):
    """The loop kernel on the host: ``run_loop`` launches it in chunks of random lengths."""
    name = "test-c-loop"
    help = "tests only: the many-steps kernel compiled for the host"
    #: constants written as literals (the GPU default) instead of read from the table K
    literal = False

    def build(self, prog, dtype) -> None:
        super().build(prog, dtype)
        real = "double" if self.dtype == np.float64 else "float"
        src = ts_loop_source(prog, real, self.integrator, const_memory=False, literal=self.literal)
        assert ("K[" in src) != self.literal
        launch = _HOST_LAUNCH.replace("KARG", "" if self.literal else "K,")
        lib = hostcc.compile_library(hostcc.CUDA_HOST_PRELUDE + src.replace('extern "C" __global__', "static")
                                     + launch, kind="flint-c", prefix="flint-loop-test")
        self._fn = lib.flint_loop_launch
        self.rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))

    def loops(self) -> bool:
        return True

    def run_loop(self, k, dt, step0, every, record, cells) -> list:
        col = np.full(self.n, -1, dtype=np.int32)
        col[cells] = np.arange(len(cells), dtype=np.int32)
        rec = np.asarray(record, dtype=np.int32)
        out, step, end = [], step0, step0 + k
        p = lambda a: a.ctypes.data_as(ctypes.c_void_p)        # noqa: E731
        while step < end:
            kl = int(min(end - step, self.rng.integers(1, 3 * every + 2)))
            m = (step + kl) // every - step // every
            buf = np.full((max(m, 1), len(rec), len(cells)), np.nan, dtype=self.dtype)
            self._fn(p(self.K), p(self.P), p(self.y), ctypes.c_longlong(step), ctypes.c_int(kl),
                     ctypes.c_double(dt), ctypes.c_int(self.n), ctypes.c_longlong(every), p(rec),
                     ctypes.c_int(len(rec)), p(col), ctypes.c_int(len(cells)), p(buf))
            out.extend(buf[j].copy() for j in range(m))
            step += kl
        return out


@pytest.fixture
def host_loop(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg"))
    register(HostLoopRuntime)
    yield HostLoopRuntime
    unregister(HostLoopRuntime.name)


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991.flint")


@pytest.mark.parametrize("integrator, dtype, steps, literal", [
    ("euler", "float64", 2300, True), ("rk4", "float64", 1100, False), ("rk4", "float64", 900, True),
    ("euler", "float32", 1700, True), ("euler", "float64", 1300, False)])
def test_loop_kernel_equals_one_step_kernel(lr, host_loop, integrator, dtype, steps, literal, monkeypatch):
    """…also with the constants written as literals (bit-identical: only IEEE-exact folding)."""
    monkeypatch.setattr(host_loop, "literal", literal)
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    n = int(rng.integers(5, 40))
    member = {"g_Na": rng.uniform(15, 25, n), "g_si": rng.uniform(0.06, 0.1, n)}
    every = int(rng.integers(1, 60))
    record = sorted(rng.choice(lr.n_states, size=int(rng.integers(1, lr.n_states + 1)), replace=False).tolist())
    record = record[::-1] if rng.random() < 0.5 else record
    cells = rng.integers(0, n, size=int(rng.integers(1, 2 * n)))        # repeats, any order
    y0 = np.array([lr.states[s] for s in lr.states])[:, None] * rng.uniform(0.99, 1.01, (lr.n_states, n))
    res = {}
    for rt in ("test-c-loop", "c", "cpu"):
        sim = Simulation(lr, runtime=rt, n=n, member_params=member, integrator=integrator, dtype=dtype, y0=y0)
        t1, s1 = sim.advance(steps // 2 + 3, 0.01, record=record, every=every, cells=cells)
        t2, s2 = sim.advance(steps - steps // 2 - 3, 0.01, record=record, every=every, cells=cells)
        res[rt] = (np.concatenate([t1, t2]), np.concatenate([s1, s2]), sim.state())
    (ta, sa, ya), (tb, sb, yb), (tc, sc, yc) = res["test-c-loop"], res["c"], res["cpu"]
    np.testing.assert_array_equal(ta, tb)
    assert sa.shape == sb.shape == (steps // every, len(record), len(cells))
    np.testing.assert_array_equal(sa, sb)              # same operations in the same order: bit for bit
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(ta, tc)
    if dtype == "float64":
        scale = np.abs(sc).max(axis=(0, 2), keepdims=True)
        assert (np.abs(sa - sc) / np.maximum(scale, 1e-300)).max() <= 1e-10
    if 0 in record and steps * 0.01 > 20:
        assert sa[:, record.index(0)].max() > 0          # the stimulus (a function of t) fired inside the loop



def test_default_run_loop_matches_stepped_driver(lr):
    """The looped driver with ``Runtime.run_loop``'s default (the NumPy runtime) equals the stepped one."""
    from kernels.flint.runtimes.cpu import CpuRuntime

    class CpuLooped(CpuRuntime):
        name = "test-cpu-loop"

        def loops(self) -> bool:
            return True
    register(CpuLooped)
    try:
        n, cells = 6, [5, 0, 0, 3]
        a = Simulation(lr, runtime="test-cpu-loop", n=n, member_params={"g_Na": np.linspace(15, 25, n)})
        b = Simulation(lr, runtime="cpu", n=n, member_params={"g_Na": np.linspace(15, 25, n)})
        for k in (37, 300, 1):
            ta, ya = a.advance(k, 0.01, record=[0, 7], every=9, cells=cells)
            tb, yb = b.advance(k, 0.01, record=[0, 7], every=9, cells=cells)
            np.testing.assert_array_equal(ta, tb)
            np.testing.assert_array_equal(ya, yb)
        assert a.steps == b.steps == 338
    finally:
        unregister(CpuLooped.name)


def test_loopable_refuses_networks(lr):
    from kernels.flint import Network, compile_model
    assert loopable(compile_model(lr, 3))
    prog = compile_model(lr, 4, None, Network("ring", 4, "V", 1.0))
    assert not loopable(prog)
    with pytest.raises(ValueError, match="neighbour coupling"):
        ts_loop_source(prog)
