"""Fused CuPy kernels for the semi-implicit spectral step and the adaptive step-doubling attempt.

At small grids (PFHub 1: 200²) a GPU step costs what CuPy spends per operation (launch and Python),
not arithmetic; these kernels do in one launch what the array code does in several.  Each computes
exactly the NumPy expression named in its docstring (up to floating-point contraction), and each
caller keeps that NumPy expression as the CPU path and the reference (tests/test_pfhub_gpu.py
compares the GPU adaptive runs of PFHub 1a/1b with the CPU runs).  The kernels are compiled on first
use, so this module imports without CuPy.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional.
from functools import lru_cache

import numpy as np

#: the boundaries whose free energy :func:`energy_density` evaluates (else: the array code)
ENERGY_BOUNDARIES = ("periodic", "mirror")


@lru_cache(maxsize=None)
def _kernels() -> dict:
    import cupy as cp
    return {
        "nonlinear": cp.ElementwiseKernel(
            "T phi, T u, T b", "T nl", "nl = u * phi * phi * phi - b * phi", "gse_ch_nonlinear"),
        "combine": cp.ElementwiseKernel(
            "T f, T g, R a, R c, raw T dc", "T o",
            "o = (i == 0) ? dc[0] : (T)(a * f + c * g)", "gse_ch_spectral_combine"),
        "extrapolate": cp.ElementwiseKernel(
            "T full, T w", "T half, float64 d2",
            "T d = half - full; d2 = (double)d * (double)d; half = half + d * w;", "gse_ch_extrapolate"),
        "energy": cp.ElementwiseKernel(
            "raw T phi, int32 n0, int32 n1, int32 n2, int32 periodic, float64 cb, float64 cu, float64 ck",
            "float64 e",
            """
            const ptrdiff_t s1 = n2, s0 = (ptrdiff_t)n1 * n2;
            const int x = (int)(i % n2), y = (int)((i / n2) % n1), z = (int)(i / s0);
            const double f = (double)phi[i];
            double g = 0.0, d;
            if (x + 1 < n2) { d = (double)phi[i + 1] - f; g += d * d; }
            else if (periodic) { d = (double)phi[i + 1 - n2] - f; g += d * d; }
            if (y + 1 < n1) { d = (double)phi[i + s1] - f; g += d * d; }
            else if (periodic) { d = (double)phi[i + s1 - s0] - f; g += d * d; }
            if (z + 1 < n0) { d = (double)phi[i + s0] - f; g += d * d; }
            else if (periodic) { d = (double)phi[i + s0 - s0 * n0] - f; g += d * d; }
            const double f2 = f * f;
            e = cb * f2 + cu * f2 * f2 + ck * g;
            """, "gse_ch_energy_density"),
    }


def nonlinear(phi, u, b):
    """N(φ) = u φ³ − b φ (``u``, ``b``: scalars of φ's dtype), one launch."""
    return _kernels()["nonlinear"](phi, u, b)


def spectral_combine(f, g, a, c, dc):
    """a·f + c·g, with element 0 (the k = 0 mode) set to ``dc[0]`` (``dc``: a device array of f's
    dtype, read in the kernel: no host transfer), one launch."""
    return _kernels()["combine"](f, g, a, c, dc)


def extrapolate(half, full, w, d2):
    """In place: d = half − full, d2 = d² (float64), half += w·d (``w``: scalar of half's dtype)."""
    _kernels()["extrapolate"](full, w, half, d2)


def energy_density(phi, p, out):
    """Per-cell free energy into ``out`` (float64, φ's shape): −b/2 φ² dxᵈ + u/4 φ⁴ dxᵈ + K/2 dxᵈ⁻²
    Σ_{+axis links} (Δφ)², so that Σ out = :func:`~kernels.cahn_hilliard.diagnostics.free_energy`
    (periodic: wrapped links; mirror: the links to the ghost cells have Δφ = 0).  ``phi`` C-contiguous,
    2-D or 3-D, ``p.boundary`` in :data:`ENERGY_BOUNDARIES`."""
    shape = (1,) * (3 - phi.ndim) + tuple(phi.shape)
    vol = p.dx ** p.dim
    _kernels()["energy"](phi, np.int32(shape[0]), np.int32(shape[1]), np.int32(shape[2]),
                         np.int32(p.boundary == "periodic"), -0.5 * p.b * vol, 0.25 * p.u * vol,
                         0.5 * p.K * p.dx ** (p.dim - 2), out)
