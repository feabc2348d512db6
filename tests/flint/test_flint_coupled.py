"""Coupled cells many steps a launch (issue 23): the translator's grid-synchronised kernels of
:mod:`kernels.flint.runtimes.coupled` for lines and rings.

On the CPU the generated CUDA C is compiled for the host (the CUDA keywords defined away, as runtime
``c`` does with the one-step kernel) and run as one block of OpenMP threads — ``__syncthreads`` an
OpenMP barrier — in chunks of random lengths: the register kernel with more threads than cells (idle
threads still take every barrier), the grid-stride kernel with fewer.  Samples and final states must
equal runtime ``c`` (the one-step kernel, one call a stage) bit for bit and the NumPy runtime to 1e-10,
line and ring, Euler and RK4, float64 and float32, fresh random initial states and parameters.

On the GPU (``@pytest.mark.gpu``): the cooperative launches equal TS one launch a step bit for bit
(both kernels; the stride kernel on a forced small grid and on a line longer than the co-resident
grid), and the NumPy runtime to 1e-10."""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from kernels import hostcc
from kernels.backend import gpu_available
from kernels.flint import Network, Simulation, load_model
from kernels.flint.runtimes import register, unregister
from kernels.flint.runtimes.coupled import coupled_source, coupled_states
from kernels.flint.runtimes.host_ts import HostTranslatorRuntime
from support.flint_host_loop import HostChunks, assert_same_bits, ptr

HAVE_CXX = shutil.which("g++") is not None or shutil.which("clang++") is not None
GPU, WHY = gpu_available()

_HOST_CUDA = r"""
#ifdef _OPENMP
#include <omp.h>
#endif
static D3 gridDim;
static inline void __syncthreads() {
#ifdef _OPENMP
#pragma omp barrier
#endif
}
static inline void __threadfence() {}
static inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }
static inline unsigned atomicExch(unsigned* p, unsigned v) { unsigned o = *p; *p = v; return o; }
"""

_HOST_LAUNCH = r"""
// One block of `threads` OpenMP threads runs kernel `stride` (0: registers, 1: grid-stride); returns the
// threads it got (the kernel runs only with all of them), or -1 without OpenMP.
extern "C" int flint_coupled_launch(int stride, int threads, const REAL* K, const REAL* P, REAL* y, REAL* B0,
                                    REAL* B1, REAL* B2, REAL* B3, unsigned* bar, int reach, long long step0, int k,
                                    double dt,
                                    int n, int net, long long every, const int* rec, int n_rec, const int* col,
                                    int n_col, REAL* out) {
#ifdef _OPENMP
    int got = 0;
    blockIdx.x = 0; blockDim.x = (unsigned)threads; gridDim.x = 1;
    omp_set_dynamic(0);
    #pragma omp parallel num_threads(threads)
    {
        threadIdx.x = (unsigned)omp_get_thread_num();
        #pragma omp single
        got = omp_get_num_threads();
        if (got == threads) {
            if (stride) flint_ts_coupled_stride(K, P, y, B0, B1, B2, B3, bar, reach, step0, k, dt, n, net, every, rec,
                                                n_rec, col, n_col, out);
            else flint_ts_coupled(K, P, y, B0, B1, B2, B3, bar, reach, step0, k, dt, n, net, every, rec, n_rec, col,
                                  n_col, out);
        }
    }
    return got;
#else
    return -1;
#endif
}
"""


class HostCoupledRuntime(HostChunks, HostTranslatorRuntime):
    """The coupled-cells kernels on the host: ``run_loop`` launches them in chunks of random lengths."""
    name = "test-c-coupled"
    help = "tests only: the grid-synchronised coupled-cells kernels compiled for the host"
    stride = False
    barrier = "grid"

    def build(self, prog, dtype) -> None:
        super().build(prog, dtype)
        real = "double" if self.dtype == np.float64 else "float"
        src = coupled_source(prog, real, self.integrator, self.barrier)
        lib = hostcc.compile_library(hostcc.CUDA_HOST_PRELUDE + _HOST_CUDA
                                     + src.replace('extern "C" __global__', "static") + _HOST_LAUNCH,
                                     kind="flint-c", prefix="flint-coupled-test")
        self._fn = lib.flint_coupled_launch
        self._fn.restype = ctypes.c_int
        self.scratch = [np.full_like(self.y, np.nan) for _ in range(4)]
        self.bar = np.zeros(1, dtype=np.uint32)

    def launch(self, step, kl, dt, every, rec, col, n_cells, buf) -> None:
        threads = int(self.rng.integers(2, max(3, self.n // 2))) if self.stride else \
            self.n + int(self.rng.integers(0, 5))
        got = self._fn(ctypes.c_int(int(self.stride)), ctypes.c_int(threads), ptr(self.K), ptr(self.P), ptr(self.y),
                       *[ptr(a) for a in self.scratch], ptr(self.bar), ctypes.c_int(1), ctypes.c_longlong(step),
                       ctypes.c_int(kl),
                       ctypes.c_double(dt), ctypes.c_int(self.n), ctypes.c_int(self.net_code),
                       ctypes.c_longlong(every), ptr(rec), ctypes.c_int(len(rec)), ptr(col), ctypes.c_int(n_cells),
                       ptr(buf))
        if got != threads:
            pytest.skip(f"the host compiler's OpenMP gave {got} of {threads} threads")


def _host_class(kernel: str) -> type:
    """The host runtime of ``kernel``: "registers", "stride" or "registers-neighbours" (the barrier with
    the neighbouring blocks; one block here, so its code is compiled and run as ``__syncthreads``)."""
    return type(f"HostCoupled_{kernel}", (HostCoupledRuntime,),
                {"name": f"test-c-coupled-{kernel}", "stride": kernel == "stride",
                 "barrier": "neighbours" if kernel.endswith("neighbours") else "grid"})


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991.flint")


def _random_line(lr, rng, n_lo=5, n_hi=17):
    """A line or ring of random length, per-cell parameters and initial states, a stimulus in cells 0–2."""
    n = int(rng.integers(n_lo, n_hi))
    kind = str(rng.choice(["line", "ring"]))
    amp = np.zeros(n)
    amp[:3] = lr.params["stim_amplitude"]
    member = {"stim_amplitude": amp, "g_Na": rng.uniform(15, 25, n), "g_si": rng.uniform(0.06, 0.1, n)}
    y0 = np.array([lr.states[s] for s in lr.states])[:, None] * rng.uniform(0.99, 1.01, (lr.n_states, n))
    y0[0] += rng.uniform(-2, 2, n)
    return Network(kind, n, "V", float(rng.uniform(0.5, 1.5))), member, y0


def _sampling(lr, rng, n):
    every = int(rng.integers(1, 40))
    record = rng.choice(lr.n_states, size=int(rng.integers(1, lr.n_states + 1)), replace=False).tolist()
    cells = rng.integers(0, n, size=int(rng.integers(1, 2 * n)))          # repeats, any order
    return every, record, cells


def _run(lr, runtime, steps, net, member, y0, integrator, dtype, every, record, cells):
    sim = Simulation(lr, runtime=runtime, network=net, member_params=member, integrator=integrator, dtype=dtype, y0=y0)
    t1, s1 = sim.advance(steps // 2 + 3, 0.01, record=record, every=every, cells=cells)
    t2, s2 = sim.advance(steps - steps // 2 - 3, 0.01, record=record, every=every, cells=cells)
    return np.concatenate([t1, t2]), np.concatenate([s1, s2]), sim.state(), sim


def test_coupled_states_are_the_ones_neighbours_read(lr):
    from kernels.flint import compile_model
    prog = compile_model(lr, 4, None, Network("line", 4, "V", 1.0))
    assert coupled_states(prog) == [list(lr.states).index("V")]
    assert coupled_states(compile_model(lr, 4)) == []


def test_coupled_plan_rule():
    """The measured rule: grid-synchronised while every cell has a resident thread, else a launch a step."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    resident = int(rng.integers(1000, 200_000))
    assert TranslatorRuntime.coupled_plan(2, resident) == "sync"
    assert TranslatorRuntime.coupled_plan(resident, resident) == "sync"
    assert TranslatorRuntime.coupled_plan(resident + 1, resident) == "step"
    assert TranslatorRuntime.coupled_plan(2, 0) == "step"          # a kernel that cannot launch at all


@pytest.mark.skipif(not HAVE_CXX, reason="no host C++ compiler (g++/clang++)")
@pytest.mark.parametrize("kernel", ["registers", "stride", "registers-neighbours"])
@pytest.mark.parametrize("integrator, dtype, steps", [("euler", "float64", 1700), ("rk4", "float64", 700),
                                                      ("euler", "float32", 900)])
def test_coupled_kernel_equals_one_step_kernel_on_host(lr, tmp_path_factory, monkeypatch, kernel, integrator, dtype,
                                                       steps):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg"))
    cls = _host_class(kernel)
    register(cls)
    try:
        rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
        net, member, y0 = _random_line(lr, rng)
        every, record, cells = _sampling(lr, rng, net.n_cells)
        args = (steps, net, member, y0, integrator, dtype, every, record, cells)
        got = _run(lr, cls.name, *args)
        ref, numpy = _run(lr, "c", *args), _run(lr, "cpu", *args)
    finally:
        unregister(cls.name)
    assert_same_bits(got, ref, numpy, dtype, (steps // every, len(record), len(cells)))
    ya = got[2]
    if steps * 0.01 > 14:
        assert ya[0].max() > -20                         # the stimulus (a function of t) fired inside the loop


# ---- GPU ----------------------------------------------------------------------------------------
on_gpu = pytest.mark.skipif(not GPU, reason=f"no GPU: {WHY}")


@pytest.fixture
def ts_mode(monkeypatch):
    """Set TranslatorRuntime's coupled mode ("sync" / "step") and the stride kernel's block cap."""
    from kernels.flint.runtimes.translator import TranslatorRuntime

    def set_mode(mode, max_blocks=None, barrier="grid"):
        monkeypatch.setattr(TranslatorRuntime, "coupled_mode", mode)
        monkeypatch.setattr(TranslatorRuntime, "coupled_max_blocks", max_blocks)
        monkeypatch.setattr(TranslatorRuntime, "coupled_barrier", barrier)
    return set_mode


@pytest.mark.gpu
@on_gpu
@pytest.mark.parametrize("integrator, steps", [("euler", 2100), ("rk4", 900)])
@pytest.mark.parametrize("kernel", ["registers", "stride", "registers-neighbours"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sync_equals_one_launch_a_step(lr, ts_mode, integrator, steps, kernel, dtype):
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    net, member, y0 = _random_line(lr, rng, 40, 700)
    every, record, cells = _sampling(lr, rng, net.n_cells)
    args = (steps, net, member, y0, integrator, dtype, every, record, cells)
    ts_mode("sync", 2 if kernel == "stride" else None, "neighbours" if kernel.endswith("neighbours") else "grid")
    ta, sa, ya, sim = _run(lr, "ts", *args)
    assert sim.engine.loops() and sim.engine.info()["coupled_kernel"] == (
        "flint_ts_coupled_stride" if kernel == "stride" else "flint_ts_coupled")
    assert sim.engine.coupled.barrier == ("neighbours" if kernel.endswith("neighbours") else "grid")
    ts_mode("step")
    tb, sb, yb, ref = _run(lr, "ts", *args)
    assert not ref.engine.loops()
    np.testing.assert_array_equal(ta, tb)
    np.testing.assert_array_equal(sa, sb)
    np.testing.assert_array_equal(ya, yb)
    if dtype == "float64":
        tc, sc, _, _ = _run(lr, "cpu", *args)
        scale = np.abs(sc).max(axis=(0, 2), keepdims=True)
        assert (np.abs(sa - sc) / np.maximum(scale, 1e-300)).max() <= 1e-10


@pytest.mark.gpu
@on_gpu
@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_line_longer_than_the_resident_grid(lr, ts_mode, integrator):
    """A line of more cells than the register kernel's co-resident grid holds: the stride kernel on the
    whole co-resident grid, bit for bit with one launch a step."""
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    ts_mode("sync")
    probe = Simulation(lr, runtime="ts", network=Network("line", 64, "V", 1.0))
    n = int(probe.engine.coupled.resident_threads(1024) * rng.uniform(1.1, 1.6))
    n = max(n, 2 * probe.engine.coupled.resident_threads(32))
    net = Network(str(rng.choice(["line", "ring"])), n, "V", 1.0)
    amp = np.zeros(n)
    amp[:5] = lr.params["stim_amplitude"]
    member = {"stim_amplitude": amp, "g_Na": rng.uniform(15, 25, n)}
    y0 = np.array([lr.states[s] for s in lr.states])[:, None] * rng.uniform(0.99, 1.01, (lr.n_states, n))
    cells = np.sort(rng.choice(n, size=300, replace=False))
    args = (700 if integrator == "euler" else 300, net, member, y0, integrator, "float64", 50, [0, 2], cells)
    ta, sa, ya, sim = _run(lr, "ts", *args)
    assert sim.engine.info()["coupled_kernel"] == "flint_ts_coupled_stride"
    ts_mode("step")
    tb, sb, yb, _ = _run(lr, "ts", *args)
    np.testing.assert_array_equal(sa, sb)
    np.testing.assert_array_equal(ya, yb)
    assert np.isfinite(ya).all()


@pytest.mark.gpu
@on_gpu
def test_auto_follows_the_rule(lr, ts_mode):
    """With coupled_mode "auto" the runtime takes the path coupled_plan names for its line."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    ts_mode("sync")
    resident = Simulation(lr, runtime="ts", network=Network("line", 8, "V", 1.0)).engine.coupled.resident_threads(
        TranslatorRuntime.COUPLED_RULE_BLOCK)
    ts_mode("auto")
    for n in (2, 100, 300, resident + 1000):
        sim = Simulation(lr, runtime="ts", network=Network("ring", n, "V", 1.0))
        assert sim.engine.loops() == (TranslatorRuntime.coupled_plan(n, resident) == "sync"), n
        if n <= TranslatorRuntime.COUPLED_ONE_BLOCK:                # one block, untuned
            sim.advance(600, 0.01, every=100)
            assert sim.block_size == -(-n // 32) * 32 and not sim.block_history
