"""CuPy parts of the force layout's iteration (:mod:`.force`): a deterministic mass deposit and
deterministic edge sums, plus cuFFT.

* Deposit: cloud-in-cell weights × masses are added to the grid as 64-bit fixed-point integers
  (``atomicAdd`` on ``unsigned long long``), so the sum does not depend on the order the atomics
  land in; the grid is converted back to float32.  The scale is the largest power of two ≤ 2⁴⁰
  with (total mass × scale) < 2⁶², so no cell can overflow.
* Attraction Σ_{j ∈ N(i)} (x_j − x_i): the arc differences in CSR order, an inclusive float64
  prefix sum per coordinate, and the difference of the prefix sums at the row ends (no atomics;
  balanced for hubs of any degree).

Everything is launched on the current stream without host synchronisation.
"""
from __future__ import annotations

import math

import numpy as np

_KERNELS: dict = {}


def deposit_kernel():
    """The fixed-point deposit ElementwiseKernel (compiled once per process)."""
    k = _KERNELS.get("deposit")
    if k is None:
        import cupy as cp
        k = _KERNELS["deposit"] = cp.ElementwiseKernel(
            "int64 idx, float32 w, float64 scale", "raw uint64 grid",
            "atomicAdd(&grid[idx], (unsigned long long)llrint((double)w * scale));",
            "gse_layout_deposit_fixed")
    return k


def fixed_point_scale(total_mass: float) -> float:
    """2^k ≤ 2⁴⁰ with total_mass · 2^k < 2⁶²."""
    k = min(40, int(math.floor(62 - math.log2(max(total_mass, 1.0)))) - 1)
    return float(2.0 ** k)


class GpuOps:
    """CuPy versions of :class:`~kernels.graphs.layout.force.CpuOps`'s operations."""

    def __init__(self, g, backend):
        import cupy as cp
        import cupy.fft
        self.xp = cp
        csr = g.csr()
        self.indptr = cp.asarray(csr.indptr.astype(np.int64))
        self.indices = cp.asarray(csr.indices.astype(np.int64))
        self.src = cp.asarray(csr.sources().astype(np.int64))
        self.scale = fixed_point_scale(float(g.degrees().sum() + g.n))
        self.rfft2, self.irfft2 = cupy.fft.rfft2, cupy.fft.irfft2

    def attraction(self, x):
        cp = self.xp
        out = cp.empty_like(x)
        if self.indices.size == 0:
            out[:] = 0
            return out
        for c in range(2):
            xc = x[:, c]
            d = (xc[self.indices] - xc[self.src]).astype(cp.float64)
            s = cp.concatenate([cp.zeros(1, cp.float64), cp.cumsum(d)])
            out[:, c] = (s[self.indptr[1:]] - s[self.indptr[:-1]]).astype(cp.float32)
        return out

    def deposit(self, idx, w, size):
        cp = self.xp
        grid = cp.zeros(size, dtype=cp.uint64)
        deposit_kernel()(idx, w.astype(cp.float32), self.scale, grid)
        return (grid.astype(cp.float64) * (1.0 / self.scale)).astype(cp.float32)

    def scalar(self, v):
        return self.xp.asarray(v, dtype=self.xp.float64)
