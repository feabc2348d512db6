"""Many steps a launch (issue 23): the translator's loop kernel (``codegen.ts_loop_source``) and the
driver that hands it whole chunks (``Simulation._advance_looped`` / ``Runtime.run_loop``), checked on
the CPU.  The kernel's CUDA C is compiled for the host (the CUDA keywords defined away, as runtime
``c`` does with the one-step kernel) and launched over every cell in chunks of random lengths; its
samples and final states must equal runtime ``c`` (the one-step kernel, same operations in the same
order) bit for bit and the NumPy runtime to 1e-10 — for Euler and RK4, float64 and float32, any
``every``, recorded states and cells (repeats, any order).  The GPU side: tests/flint/test_flint_gpu.py."""
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
from support.flint_host_loop import HostChunks, check_loop_equals_reference, ptr

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


class HostLoopRuntime(HostChunks, HostTranslatorRuntime):
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

    def launch(self, step, kl, dt, every, rec, col, n_cells, buf) -> None:
        self._fn(ptr(self.K), ptr(self.P), ptr(self.y), ctypes.c_longlong(step), ctypes.c_int(kl),
                 ctypes.c_double(dt), ctypes.c_int(self.n), ctypes.c_longlong(every), ptr(rec),
                 ctypes.c_int(len(rec)), ptr(col), ctypes.c_int(n_cells), ptr(buf))


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
    check_loop_equals_reference(lr, "test-c-loop", "c", integrator, dtype, steps)


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
