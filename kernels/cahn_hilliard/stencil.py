"""The 13-point Cahn–Hilliard stencil as whole-array code (NumPy or CuPy).

F(φ) = m L(μ),  μ = f'(φ) − K L(φ),  f'(φ) = −bφ + uφ³ (paper 000 Eq. 2),
with L the 5-point (2D) / 7-point (3D) Laplacian
L(g)_i = (Σ_neighbours g − 2·dim·g_i) / dx².  Composing the two Laplacians
touches the 13 (2D) or 25 (3D) cells within radius 2: the paper's Fig. 5.

Boundaries are ghost cells of width 2 (paper 000 names wrap-around, mirror
and fixed): periodic wraps, mirror reflects about the cell face (zero flux, so
mean φ is conserved), fixed holds φ = boundary_value in the ghosts.

This is the reference every GPU kernel variant is tested against; it also is
the "naive array" GPU baseline when run with CuPy.
"""
from __future__ import annotations

from ..backend import array_module

PAD_MODE = {"periodic": "wrap", "mirror": "symmetric", "fixed": "constant"}
HALO = 2


def pad(phi, boundary: str, value: float = 0.0, width: int = HALO):
    """φ with ``width`` ghost cells on every side filled per the boundary rule."""
    xp = array_module(phi)
    mode = PAD_MODE[boundary]
    if mode == "constant":
        return xp.pad(phi, width, mode="constant", constant_values=value)
    return xp.pad(phi, width, mode=mode)


def _laplacian_inner(g, dx2):
    """5/7-point Laplacian of g evaluated on g[1:-1, 1:-1(, 1:-1)]."""
    nd = g.ndim
    inner = (slice(1, -1),) * nd
    acc = None
    for ax in range(nd):
        lo = list(inner); lo[ax] = slice(0, -2)
        hi = list(inner); hi[ax] = slice(2, None)
        term = g[tuple(lo)] + g[tuple(hi)]
        acc = term if acc is None else acc + term
    return (acc - (2 * nd) * g[inner]) / dx2


def rhs(phi, p):
    """F(φ) = m ∇²(−bφ + uφ³ − K∇²φ) on the interior (same shape as φ)."""
    dtype = phi.dtype.type
    dx2 = dtype(p.dx * p.dx)
    P = pad(phi, p.boundary, p.boundary_value)          # N+4
    core = P[(slice(1, -1),) * phi.ndim]                 # N+2
    mu = dtype(-p.b) * core + dtype(p.u) * core * core * core - dtype(p.K) * _laplacian_inner(P, dx2)
    return dtype(p.m) * _laplacian_inner(mu, dx2)


def update(src, base, coef, p, out=None):
    """out = base + coef·F(src): one explicit stage (Euler step, RK2 half/full step)."""
    r = rhs(src, p)
    dtype = src.dtype.type
    res = base + dtype(coef) * r
    if out is None:
        return res
    out[...] = res
    return out
