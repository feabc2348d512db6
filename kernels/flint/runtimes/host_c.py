"""Flint's GPU sources on the CPU: the translator's and the interpreter's CUDA C compiled for host cores.

Paper 004 §5.6 / Table 5.4 compares the GPU runtimes with the same methods on the CPU: the Flint
interpreter on one core ("IS CPU-1") and the translated model compiled for one core or, with OpenMP,
eight threads ("TS CPU-1", "TS CPU-8"; an i7 930 there).  Runtimes ``c`` and ``c-is`` do that: the
thread-per-cell source of :func:`.codegen.ts_source` (``c``, :mod:`.host_ts`) or of the bytecode
interpreter :func:`.codegen.is_source` (``c-is``, :mod:`.host_is`) — the very texts NVRTC compiles — are compiled by the host's
C++ compiler with the CUDA keywords defined away, and a small driver steps every cell through Euler or
RK4 stages exactly as the GPU launches do (a stage finishes for all cells before the next reads
neighbours), the cells of a stage spread over ``threads`` OpenMP threads.  FMA contraction is off,
as with NVRTC ``--fmad=false``, so the traces agree with the NumPy/IS/TS runtimes to the math
library's rounding.

The compiled library is cached by a hash of its source and flags under the user's cache folder, so a
model (``c``) or a size class of the interpreter (``c-is``) compiles once.  No compiler on the
machine → :class:`BackendUnavailable` naming what to install.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ... import hostcc
from ...hostcc import CUDA_HOST_PRELUDE as HOST_PRELUDE, find_compiler  # noqa: F401
from .base import Runtime
from .codegen import is_source, ts_source

# One call of the step kernel for cell threadIdx.x: the translator's or the interpreter's.
_CALLS = {"ts": "flint_ts_step(K, P, y, kin, cdt, t, dt, mode, w, kout, acc, yout, n, net)",
          "is": "flint_is_step(code, index, K, P, y, kin, cdt, t, dt, mode, w, kout, acc, yout, dslot, ns, n, net)"}

# Euler (mode 0) or the four RK4 stages (modes 1, 2, 2, 3; c = 0, ½, ½, 1; weights ⅙ ⅓ ⅓ ⅙), the
# same sequence of kernel calls as the GPU runtimes' step (gpu.GpuRuntime._step), over all cells of a stage.
_DRIVER = r"""
static void flint_c_sweep(const int* code, const int* index, const int* dslot, int ns, int threads,
                          const REAL* K, const REAL* P, const REAL* y, const REAL* kin, double cdt, double t,
                          double dt, int mode, double w, REAL* kout, REAL* acc, REAL* yout, int n, int net) {
    blockIdx.x = 0; blockDim.x = (unsigned)n;
    #pragma omp parallel for num_threads(threads) if (threads > 1 && n > 1) schedule(static)
    for (int i = 0; i < n; ++i) {
        threadIdx.x = (unsigned)i;
        FLINT_CALL;
    }
}

// nsteps steps of dt from step number step0; y (ns x n) is updated in place.
extern "C" void flint_c_advance(const int* code, const int* index, const int* dslot,
                                const REAL* K, const REAL* P, REAL* y, REAL* y2, REAL* k1, REAL* k2, REAL* acc,
                                int ns, int n, int net, long long step0, long long nsteps, double dt, int rk4,
                                int threads) {
    static const double C[4] = {0.0, 0.5, 0.5, 1.0}, W[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
    REAL* a = y; REAL* b = y2;
    for (long long k = 0; k < nsteps; ++k) {
        double t = (double)(step0 + k) * dt;
        if (!rk4) flint_c_sweep(code, index, dslot, ns, threads, K, P, a, nullptr, 0.0, t, dt, 0, 0.0, nullptr, acc, b,
                                n, net);
        else {
            REAL* kin = nullptr; REAL* kout = k1;
            for (int j = 0; j < 4; ++j) {
                int mode = j == 0 ? 1 : (j == 3 ? 3 : 2);
                flint_c_sweep(code, index, dslot, ns, threads, K, P, a, kin, C[j] * dt, t + C[j] * dt, dt, mode, W[j],
                              kout, acc, b, n, net);
                kin = kout; kout = kout == k1 ? k2 : k1;
            }
        }
        REAL* s = a; a = b; b = s;
    }
    if (a != y) memcpy(y, a, sizeof(REAL) * (size_t)ns * (size_t)n);
}
"""


def host_source(gpu_src: str, flavour: str) -> str:
    """The whole host translation unit for a ``flavour`` ("ts" or "is") source: prelude, the GPU source
    (``extern "C" __global__`` made ``static`` so the kernel can be inlined into the sweep), driver."""
    return (HOST_PRELUDE + gpu_src.replace('extern "C" __global__', "static")
            + f"#define FLINT_CALL {_CALLS[flavour]}\n" + _DRIVER)


def compile_library(source: str, timeout: float = 600.0) -> ctypes.CDLL:
    """The model's host library (see :func:`kernels.hostcc.compile_library`)."""
    return hostcc.compile_library(source, timeout, what="the model", kind="flint-c", prefix="flint")


def load_advance(gpu_src: str, flavour: str, real: str):
    """The compiled ``flint_c_advance`` of a ``flavour`` source, with its argument types set, and the
    ctypes pointer type of its REAL arrays."""
    fn = compile_library(host_source(gpu_src, flavour)).flint_c_advance
    ptr = ctypes.POINTER(ctypes.c_double if real == "double" else ctypes.c_float)
    ip = ctypes.POINTER(ctypes.c_int32)
    fn.argtypes = [ip] * 3 + [ptr] * 7 + [ctypes.c_int] * 3 + [ctypes.c_longlong] * 2 + [ctypes.c_double] \
        + [ctypes.c_int] * 2
    fn.restype = None
    return fn, ptr


class HostRuntime(Runtime):
    """Base of runtimes ``c`` and ``c-is``: a GPU source (``flavour`` "ts" or "is") compiled for host
    cores; cells spread over ``threads`` OpenMP threads."""
    mappings = ("cell",)
    threaded = True
    compiler = "the host C++ compiler"
    flavour = "ts"

    @classmethod
    def mapping_note(cls) -> str:
        return "(cells spread over host threads); the expression mapping is a GPU thread layout: use is or ts"

    @classmethod
    def unavailable(cls) -> str | None:
        return None if hostcc.find_compiler() else \
            f"runtime {cls.name} needs a host C++ compiler (g++ or clang++, or set CXX)"

    @classmethod
    def memory(cls, n_states, n_functions, n, n_pvar, mapping, itemsize):
        return itemsize * n * 5 * n_states, 0            # y2, k1, k2, acc and the caller's y

    def build(self, prog, dtype) -> None:
        self.prog, self.dtype = prog, np.dtype(dtype)
        real = "double" if self.dtype == np.float64 else "float"
        self.source = ts_source(prog, real) if self.flavour == "ts" else is_source(prog, real)
        self._c_advance, self._c_ptr = load_advance(self.source, self.flavour, real)
        self.y = np.zeros((prog.n_states, self.n), dtype=self.dtype)
        self.P = np.ascontiguousarray(prog.pvar_values.astype(self.dtype)) if prog.pvar_values.size \
            else np.zeros((1, self.n), dtype=self.dtype)
        self.K = np.ascontiguousarray(prog.consts.astype(self.dtype)) if prog.consts.size \
            else np.zeros(1, dtype=self.dtype)
        # the arrays that stay put, and their pointers, made once (y is passed per call: set_state replaces it)
        ip = ctypes.POINTER(ctypes.c_int32)
        self._c_keep = [np.ascontiguousarray(a, dtype=np.int32) if a is not None else None
                        for a in (prog.code, prog.index, prog.deriv_slots)]
        self._c_keep += [np.zeros_like(self.y) for _ in range(4)]      # y2, k1, k2, acc
        ptr = [a.ctypes.data_as(ip) if a is not None else None for a in self._c_keep[:3]]
        self._c_before_y = ptr + [a.ctypes.data_as(self._c_ptr) for a in (self.K, self.P)]
        self._c_after_y = [a.ctypes.data_as(self._c_ptr) for a in self._c_keep[3:]]

    def advance(self, k: int, dt: float, step0: int) -> None:
        """``k`` steps in the compiled host library; y is updated in place."""
        self._c_advance(*self._c_before_y, self.y.ctypes.data_as(self._c_ptr), *self._c_after_y,
                        self.prog.n_states, self.n, self.net_code, int(step0), int(k), float(dt),
                        int(self.integrator == "rk4"), self.threads)
