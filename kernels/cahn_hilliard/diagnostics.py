"""Cahn–Hilliard diagnostics: conserved mean, free energy, structure factor, length scale.

Free energy (discrete, matching the finite-difference operator, so it is
non-increasing for stable dt with periodic or mirror boundaries):
    E = Σ_cells [ −b/2 φ² + u/4 φ⁴ ] dx^d + K/2 Σ_links (Δφ)² dx^(d−2)
Structure factor S(k) = |FFT(φ − ⟨φ⟩)|² / Ncells, circularly averaged;
characteristic length L = 2π / k₁ with k₁ = Σ|k| S(k) / Σ S(k)
(the usual first-moment definition used for coarsening, L ∝ t^(1/3)).
"""
from __future__ import annotations

import math

import numpy as np

from ..backend import array_module
from .domains import domain_mask, masked_free_energy
from .stencil import pad


def mean(phi) -> float:
    xp = array_module(phi)
    return float(xp.mean(phi, dtype=xp.float64))


def free_energy(phi, p) -> float:
    """E of the module docstring; on a masked domain (kernels.cahn_hilliard.domains) the region's
    cells and internal links only."""
    xp = array_module(phi)
    mask = domain_mask(p, xp)
    if mask is not None:
        return masked_free_energy(phi, p, mask)
    f = phi.astype(xp.float64)
    bulk = xp.sum(-0.5 * p.b * f * f + 0.25 * p.u * f ** 4) * p.dx ** p.dim
    grad = 0.0
    if p.boundary == "periodic":
        for ax in range(f.ndim):
            grad += xp.sum((xp.roll(f, -1, axis=ax) - f) ** 2)
    else:
        P = pad(f, p.boundary, p.boundary_value, width=1)
        for ax in range(f.ndim):
            # all N+1 links along this axis between interior rows (and to ghosts)
            sl_hi = [slice(1, -1)] * f.ndim; sl_hi[ax] = slice(1, None)
            sl_lo = [slice(1, -1)] * f.ndim; sl_lo[ax] = slice(0, -1)
            grad += xp.sum((P[tuple(sl_hi)] - P[tuple(sl_lo)]) ** 2)
    grad = 0.5 * p.K * grad * p.dx ** (p.dim - 2)
    return float(bulk + grad)


def _kmag(shape, dx, xp):
    k2 = None
    for ax, n in enumerate(shape):
        if ax == len(shape) - 1:
            k = 2 * math.pi * xp.fft.rfftfreq(n, d=dx)
        else:
            k = 2 * math.pi * xp.fft.fftfreq(n, d=dx)
        sh = [1] * len(shape); sh[ax] = k.size
        k = k.reshape(sh) ** 2
        k2 = k if k2 is None else k2 + k
    return xp.sqrt(k2)


def _rfft_weights(shape, xp):
    """Count each rfft coefficient twice except the self-conjugate planes."""
    n = shape[-1]
    w = xp.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w.reshape((1,) * (len(shape) - 1) + (-1,))


def length_scale(phi, dx: float = 1.0) -> float:
    """L = 2π/k₁, k₁ the first moment of the structure factor (inf for a uniform field)."""
    xp = array_module(phi)
    f = phi.astype(xp.float64)
    S = xp.abs(xp.fft.rfftn(f - f.mean())) ** 2 * _rfft_weights(f.shape, xp)
    k = _kmag(f.shape, dx, xp)
    tot = float(S.sum())
    if tot <= 1e-30:
        return float("inf")
    k1 = float((k * S).sum()) / tot
    return 2 * math.pi / k1 if k1 > 0 else float("inf")


def structure_factor(phi, dx: float = 1.0, nbins: int | None = None):
    """Circularly averaged S(k): returns (k, S) as NumPy arrays, k in radians per length."""
    xp = array_module(phi)
    f = phi.astype(xp.float64)
    S = xp.abs(xp.fft.rfftn(f - f.mean())) ** 2 / f.size
    k = _kmag(f.shape, dx, xp)
    w = _rfft_weights(f.shape, xp) * xp.ones_like(S)
    kmax = math.pi / dx
    nbins = nbins or max(8, min(f.shape) // 2)
    edges = xp.linspace(0, kmax, nbins + 1)
    idx = xp.clip(xp.searchsorted(edges, k.ravel(), side="right") - 1, 0, nbins)
    num = xp.bincount(idx, weights=(S * w).ravel(), minlength=nbins + 1)[:nbins]
    den = xp.bincount(idx, weights=w.ravel(), minlength=nbins + 1)[:nbins]
    centers = 0.5 * (edges[1:] + edges[:-1])
    to_np = (lambda a: a.get()) if xp is not np else np.asarray
    num, den, centers = to_np(num), to_np(den), to_np(centers)
    ok = den > 0
    return centers[ok], num[ok] / den[ok]


def fit_power_law(t, L, tmin_frac: float = 0.2):
    """Fit L ∝ t^α over the later part of a run (t ≥ tmin_frac·t_end): returns (α, prefactor)."""
    t = np.asarray(t, float); L = np.asarray(L, float)
    ok = np.isfinite(L) & (t > 0) & (L > 0)
    if ok.sum() < 3:
        return float("nan"), float("nan")
    t, L = t[ok], L[ok]
    sel = t >= tmin_frac * t[-1]
    if sel.sum() < 3:
        sel = slice(None)
    a, c = np.polyfit(np.log(t[sel]), np.log(L[sel]), 1)
    return float(a), float(np.exp(c))
