"""The compiled multi-threaded CPU stepper (variant ``cpu-threads``): paper 001 §4's CPU versions.

Paper 001 (Fig. 10) runs the finite-differencing step on one core, on four cores with pThreads
(each thread a band of rows) and with TBB (64×64 tiles).  Here the stage ``out = base + coef·F(src)``
of :mod:`.stencil` is C++ (``host/ch_omp.cpp``) compiled once per machine by the host compiler with
OpenMP (:func:`kernels.hostcc.compile_library`, cached by source hash), every pass split into
contiguous bands of rows (2D) or planes (3D), one per thread — the pThreads decomposition.
``CHParams.threads`` sets the thread count (0: every core OpenMP sees); ``threads = 1`` is the
paper's single-core version.

Contract: on every boundary, dimension and dtype the result equals the NumPy reference
(:class:`.steppers.ReferenceStepper`) to the last bit — the C++ performs the reference's operations
in the same order and precision (``-ffp-contract=off``, no fast-math) — and does not depend on the
thread count.  Needs host (NumPy) arrays: on the GPU backend the variant is refused with a message.
No compiler → :class:`~kernels.errors.BackendUnavailable` naming what to install.
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from ..errors import BackendUnavailable
from ..hostcc import compile_library
from . import temporal
from .base import Stepper

SOURCE_PATH = os.path.join(os.path.dirname(__file__), "host", "ch_omp.cpp")
#: boundary name → the source's ``bc`` code
BC_CODE = {"periodic": 0, "mirror": 1, "fixed": 2}

#: most slow-axis rows (2D rows, 3D planes) per band of a k-step pass
BAND_ROWS = 64

_lib = None
_lock = threading.Lock()


def library():
    """The compiled stage library (compiled on first use, then cached on disk and in memory)."""
    global _lib
    with _lock:
        if _lib is None:
            # idle threads sleep at the barriers rather than spin (as paper 001's pThreads wait on
            # condition variables): spinning threads that share cores with other work made 2 threads
            # 10× slower than one on a busy 2-core machine.  Read by libgomp when it loads; the
            # user's own setting wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "passive")
            with open(SOURCE_PATH) as fh:
                src = fh.read()
            lib = compile_library(src, what="the multi-threaded CPU Cahn–Hilliard stepper (cpu-threads)",
                                  kind="ch-c", prefix="ch_omp")
            f64p = ctypes.c_void_p
            args = (f64p, f64p, f64p, f64p, f64p, ctypes.c_int, ctypes.c_longlong, ctypes.c_int,
                    ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double,
                    ctypes.c_double, ctypes.c_double, ctypes.c_int)
            for name in ("ch_stage_f32", "ch_stage_f64"):
                fn = getattr(lib, name)
                fn.argtypes, fn.restype = args, None
            tb = (f64p, f64p, ctypes.c_int, ctypes.c_longlong, ctypes.c_int) + (ctypes.c_double,) * 8 + \
                (ctypes.c_int, ctypes.c_longlong, ctypes.c_int)
            for name in ("ch_rk2_tb_f32", "ch_rk2_tb_f64"):
                fn = getattr(lib, name)
                fn.argtypes, fn.restype = tb, None
            lib.ch_max_threads.argtypes, lib.ch_max_threads.restype = (), ctypes.c_int
            _lib = lib
        return _lib


def max_threads() -> int:
    """Threads OpenMP offers on this machine (1 when the library was built without OpenMP)."""
    return int(library().ch_max_threads())


def resolve_threads(asked: int) -> int:
    """The thread count a run uses: ``asked``, or every core when 0."""
    return int(asked) if asked and asked > 0 else max(1, os.cpu_count() or 1)


class ThreadedStepper(Stepper):
    """Explicit Euler / RK2 whose stage is the compiled OpenMP C++ (see the module docstring)."""

    name = "cpu-threads"
    #: field + tmp + out + the padded copy and μ (each ≈ one field)
    buffers = 5

    def __init__(self, params, backend):
        super().__init__(params, backend)
        if backend.is_gpu:
            raise BackendUnavailable("the cpu-threads variant runs on host cores: start on the CPU backend "
                                     "(--backend cpu), or choose a CUDA kernel variant on the GPU")
        self._lib = library()
        self._scratch = None
        if self._lib.ch_max_threads() == 1 and resolve_threads(params.threads) > 1:
            self.notes.append("the C++ compiler has no OpenMP: cpu-threads runs on one thread")

    @property
    def threads(self) -> int:
        return resolve_threads(self.params.threads)

    def _work(self, src):
        """The padded copy P ((n+4)^d) and μ ((n+2)^d), reused between calls."""
        n, d = src.shape[0], src.ndim
        key = (n, d, src.dtype)
        if self._scratch is None or self._scratch[0] != key:
            self._scratch = (key, np.empty((n + 4) ** d, src.dtype), np.empty((n + 2) ** d, src.dtype))
        return self._scratch[1], self._scratch[2]

    # ---- temporal blocking (issue #38): k RK2 steps per pass over the field ----------------------
    def steps_per_pass(self) -> int:
        """k of this stepper's RK2 passes: ``params.steps_per_pass`` resolved by :mod:`.temporal` (lowered
        where periodic / mirror halos 4k exceed the grid); 1 for Euler."""
        p = self.params
        if p.integrator != "rk2":
            return 1
        return temporal.fits(p, temporal.requested(p), np.dtype(p.dtype).itemsize, None)

    def band_rows(self, n: int, k: int) -> int:
        """Slow-axis rows per band of a k-step pass: at most :data:`BAND_ROWS`, the bands a multiple of
        the thread count (each band carries 8k halo rows of recomputation)."""
        nt = self.threads
        per = -(-n // nt)
        return max(1, -(-per // -(-per // BAND_ROWS)))

    def fused_steps(self, src, out, k: int):
        """out = k RK2 steps of src in one pass (``ch_rk2_tb``: bands with 4k halo rows per thread);
        bit for bit k steps of :meth:`update` pairs."""
        p = self.params
        for a in (src, out):
            if not (isinstance(a, np.ndarray) and a.flags.c_contiguous and a.dtype == src.dtype):
                raise TypeError("cpu-threads needs C-contiguous NumPy arrays of one dtype")
        fn = {np.dtype(np.float32): self._lib.ch_rk2_tb_f32, np.dtype(np.float64): self._lib.ch_rk2_tb_f64}.get(
            src.dtype)
        if fn is None:
            raise TypeError(f"cpu-threads supports float32 and float64 fields, not {src.dtype}")
        n = src.shape[0]
        fn(src.ctypes.data, out.ctypes.data, src.ndim, n, BC_CODE[p.boundary], float(p.boundary_value),
           float(p.b), float(p.u), float(p.K), float(p.m), float(p.dx), float(0.5 * p.dt), float(p.dt), int(k),
           self.band_rows(n, k), self.threads)
        return out

    def step(self, phi, n: int = 1):
        """``n`` steps; RK2 runs as passes of :meth:`steps_per_pass` fused steps, the remainder as single
        steps (:func:`.temporal.plan`)."""
        k = self.steps_per_pass()
        if k == 1:
            return super().step(phi, n)
        plan = temporal.plan(n, k)
        fused = sum(1 for s in plan if s > 1)
        _, out = self._buffers(phi)
        for _ in range(fused):
            self.fused_steps(phi, out, k)
            phi, out = out, phi
        self._out = out
        return super().step(phi, n - fused * k) if n > fused * k else phi

    def update(self, src, base, coef, out):
        p = self.params
        for a in (src, base, out):
            if not (isinstance(a, np.ndarray) and a.flags.c_contiguous and a.dtype == src.dtype):
                raise TypeError("cpu-threads needs C-contiguous NumPy arrays of one dtype")
        if src.dtype == np.float32:
            fn = self._lib.ch_stage_f32
        elif src.dtype == np.float64:
            fn = self._lib.ch_stage_f64
        else:
            raise TypeError(f"cpu-threads supports float32 and float64 fields, not {src.dtype}")
        P, mu = self._work(src)
        fn(src.ctypes.data, base.ctypes.data, out.ctypes.data, P.ctypes.data, mu.ctypes.data, src.ndim,
           src.shape[0], BC_CODE[p.boundary], float(p.boundary_value), float(p.b), float(p.u), float(p.K),
           float(p.m), float(p.dx), float(coef), self.threads)
        return out
