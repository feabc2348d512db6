"""The hand-written LR-1991 CUDA kernel (``lr1991.cu`` beside this file): the floor of the Flint
ensemble benchmark (issues 23, 38) — one thread a cell, every step in registers, Euler or RK4.

:class:`HandLR91` runs it on the GPU (CuPy ``RawModule``, NVRTC's defaults: FMA contraction on, as a
CUDA programmer would compile it); :func:`host_run` runs the same source on the CPU (compiled by
:func:`kernels.hostcc.compile_library` after its CUDA prelude) for the tests, which check it against
Flint's NumPy runtime.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from kernels.hostcc import CUDA_HOST_PRELUDE, compile_library

SOURCE = Path(__file__).with_name("lr1991.cu")
STATES = ("V", "m", "h", "j", "d", "f", "X", "Cai")
_HOST = None


def initial_states(model, n: int) -> np.ndarray:
    """(8, n) float64: the model's initial states for every cell (``model``: the loaded LR-1991)."""
    return np.array([model.states[s] for s in STATES], dtype=np.float64)[:, None].repeat(n, 1)


def host_run(y: np.ndarray, steps: int, dt: float, step0: int = 0, rk4: bool = False) -> np.ndarray:
    """``steps`` steps of the hand-written kernel on the CPU from states ``y`` (8, n); a new array."""
    global _HOST
    if _HOST is None:
        _HOST = compile_library(CUDA_HOST_PRELUDE + SOURCE.read_text(), what="the hand-written LR-1991 kernel",
                                kind="peers", prefix="lr1991", openmp=False)
        _HOST.lr91_host.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong,
                                    ctypes.c_double, ctypes.c_int]
        _HOST.lr91_host.restype = None
    out = np.ascontiguousarray(y, dtype=np.float64).copy()
    _HOST.lr91_host(out.ctypes.data, out.shape[1], int(step0), int(steps), float(dt), int(rk4))
    return out


class HandLR91:
    """The kernel on the GPU for ``n`` cells from ``y0`` (8, n): :meth:`run` takes steps in one launch
    (blocks of :attr:`block`), :meth:`state` reads the states back."""

    def __init__(self, y0: np.ndarray, block: int = 128, options=("-std=c++14",)):
        import cupy as cp
        self.cp = cp
        self.y = cp.asarray(np.ascontiguousarray(y0, dtype=np.float64))
        self.n = int(self.y.shape[1])
        self.block = int(block)
        self.fn = cp.RawModule(code=SOURCE.read_text(), options=tuple(options)).get_function("lr91")
        self.step = 0

    def run(self, steps: int, dt: float, rk4: bool = False) -> None:
        cp = self.cp
        grid = ((self.n + self.block - 1) // self.block,)
        self.fn(grid, (self.block,), (self.y, np.int32(self.n), np.int64(self.step), np.int64(steps),
                                      np.float64(dt), np.int32(rk4)))
        self.step += int(steps)
        cp.cuda.Device().synchronize()

    def state(self) -> np.ndarray:
        return self.cp.asnumpy(self.y)
