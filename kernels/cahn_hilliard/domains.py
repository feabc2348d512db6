"""Domain shapes of a Cahn–Hilliard run: the whole box, or a masked region inside it (PFHub 1c's T).

A domain is chosen by ``CHParams.domain`` through :data:`DOMAINS` (name → class).  A masked domain
gives a boolean ``mask`` of the grid's shape (True = the cell takes part).  On a mask the 5-/7-point
Laplacian becomes the no-flux (Neumann) operator of the region:

    (L_m g)_i = Σ_{j ∈ nbr(i), mask_j} (g_j − g_i) / dx²        (cells i with mask_i; 0 outside)

i.e. every link that leaves the region carries no flux.  L_m is symmetric and Σ_i (L_m g)_i = 0, so
the explicit update φ ← φ + dt·m L_m(μ) conserves Σ_mask φ to rounding, and cells outside never
change.  The free energy sums the bulk term over the region's cells and the gradient term over its
internal links.  Links that cross the box's edge follow the run's boundary rule only for the box
domain; a masked region is closed (no flux) on every edge.

Which steppers can run a masked domain is a class flag (``Stepper.masks``) read by
:func:`kernels.cahn_hilliard.steppers.make_stepper`.
"""
from __future__ import annotations

import numpy as np

from ..backend import array_module
from ..errors import InvalidParameter


class BoxDomain:
    """The whole grid (no mask): every stepper variant runs it."""

    name = "box"
    masked = False

    @staticmethod
    def mask(shape, dx: float):
        return None


class TShapeDomain:
    """PFHub benchmark 1c's T (Jokisaari et al. 2017, Fig. 2c): total width a = 100, total height
    b = 100 + 20 = 120, a horizontal bar of height c = 20 across the full width at the top and a
    vertical stem of width d = 20 centred below it, in length units; the grid must span exactly
    100 × 120 (nx·dx = 100, ny·dx = 120).  Row 0 is y = 0 (the bottom of the stem): the bar is the
    top rows.  A cell belongs to the T when its centre lies inside."""

    name = "t-shape"
    masked = True
    WIDTH, HEIGHT, BAR, STEM = 100.0, 120.0, 20.0, 20.0

    @classmethod
    def mask(cls, shape, dx: float):
        if len(shape) != 2:
            raise InvalidParameter("the T-shaped domain (PFHub 1c) is 2D")
        ny, nx = shape
        if abs(nx * dx - cls.WIDTH) > 1e-9 * cls.WIDTH or abs(ny * dx - cls.HEIGHT) > 1e-9 * cls.HEIGHT:
            raise InvalidParameter(f"the T-shaped domain needs a {cls.WIDTH:g} × {cls.HEIGHT:g} box: "
                                   f"size·dx = {cls.WIDTH:g} and size_y·dx = {cls.HEIGHT:g} (got "
                                   f"{nx}·{dx:g} × {ny}·{dx:g})")
        x = (np.arange(nx) + 0.5) * dx
        y = (np.arange(ny) + 0.5) * dx
        bar = y >= cls.HEIGHT - cls.BAR
        stem = np.abs(x - 0.5 * cls.WIDTH) < 0.5 * cls.STEM
        return bar[:, None] | stem[None, :]


#: CHParams.domain → the domain class
DOMAINS = {c.name: c for c in (BoxDomain, TShapeDomain)}


def domain_mask(p, xp=np):
    """The mask of ``p``'s domain as an ``xp`` bool array, or None for the whole box."""
    m = DOMAINS[p.domain].mask(p.shape, p.dx)
    return None if m is None else xp.asarray(m)


def link_weights(mask):
    """Per axis, the 0/1 weight of the link between cell i and cell i+1 (both inside), as an array
    one shorter along that axis (same dtype as a float field after casting)."""
    xp = array_module(mask)
    out = []
    for ax in range(mask.ndim):
        lo = [slice(None)] * mask.ndim; lo[ax] = slice(0, -1)
        hi = [slice(None)] * mask.ndim; hi[ax] = slice(1, None)
        out.append(xp.logical_and(mask[tuple(lo)], mask[tuple(hi)]))
    return out


def masked_laplacian(g, weights, dx2):
    """L_m g (module docstring) with the link ``weights`` of :func:`link_weights` (cast to g's dtype)."""
    xp = array_module(g)
    out = xp.zeros_like(g)
    for ax, w in enumerate(weights):
        lo = [slice(None)] * g.ndim; lo[ax] = slice(0, -1)
        hi = [slice(None)] * g.ndim; hi[ax] = slice(1, None)
        lo, hi = tuple(lo), tuple(hi)
        flux = w * (g[hi] - g[lo])            # the flux on each internal link
        out[lo] += flux
        out[hi] -= flux
    return out / dx2


def masked_update(src, base, coef, p, mask_weights, out=None):
    """out = base + coef·m L_m(−bφ + uφ³ − K L_m φ) on the masked region (cells outside: base)."""
    dtype = src.dtype.type
    dx2 = dtype(p.dx * p.dx)
    w = [x.astype(src.dtype) for x in mask_weights]
    mu = dtype(-p.b) * src + dtype(p.u) * src * src * src - dtype(p.K) * masked_laplacian(src, w, dx2)
    res = base + dtype(coef) * dtype(p.m) * masked_laplacian(mu, w, dx2)
    if out is None:
        return res
    out[...] = res
    return out


def masked_free_energy(phi, p, mask) -> float:
    """E = Σ_mask [−b/2 φ² + u/4 φ⁴] dx^d + K/2 Σ_internal links (Δφ)² dx^(d−2) (float64)."""
    xp = array_module(phi)
    f = phi.astype(xp.float64)
    bulk = xp.sum(xp.where(mask, -0.5 * p.b * f * f + 0.25 * p.u * f ** 4, 0.0)) * p.dx ** p.dim
    grad = 0.0
    for ax, w in enumerate(link_weights(mask)):
        lo = [slice(None)] * f.ndim; lo[ax] = slice(0, -1)
        hi = [slice(None)] * f.ndim; hi[ax] = slice(1, None)
        grad += xp.sum(xp.where(w, (f[tuple(hi)] - f[tuple(lo)]) ** 2, 0.0))
    return float(bulk + 0.5 * p.K * grad * p.dx ** (p.dim - 2))
