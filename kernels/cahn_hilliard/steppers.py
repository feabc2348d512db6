"""Time integrators for Cahn–Hilliard.

* ``euler``: φⁿ⁺¹ = φⁿ + dt F(φⁿ).
* ``rk2``: explicit midpoint, two stencil passes per step as in paper 000
  §3.1.3 (Fig. 3): φ* = φⁿ + dt/2 F(φⁿ), then φⁿ⁺¹ = φⁿ + dt F(φ*).
* ``spectral``: semi-implicit, linearly stabilised Fourier stepper (periodic;
  beyond the papers, which mention but do not use a Fourier route), or its cosine
  twin for mirror (no-flux) boundaries (the DCT-II diagonalises the mirror Laplacian).

Class flags say what each stepper supports (read by :func:`make_stepper`, never by name):
``rectangles`` (nx ≠ ny grids), ``masks`` (a masked domain, kernels.cahn_hilliard.domains),
``boundaries`` (of the spectral steppers) and ``order`` (local error order, for adaptive steps).

Every stepper exposes ``update(src, base, coef, out)`` (out = base + coef·F(src))
so that kernel variants only implement that one stage; the integrator logic
lives here once.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional, and SciPy's DCT loads only for the cosine (mirror-boundary)
# spectral steppers.
import math
from dataclasses import replace

import numpy as np

# scipy.fft / cupyx.scipy.fft are imported where a cosine stepper needs them (CuPy stays optional)
from ..errors import InvalidParameter
from ..registry import Registry
from . import domains, fused, stencil
from .base import Stepper
from .cpu_threads import ThreadedStepper
from .cuda_stepper import CudaStepper
from .multigpu import DEFAULT_GRAPH, MultiGPUStepper, resolve_devices
from .params import GPU_VARIANTS, CHParams

__all__ = ["Stepper", "ReferenceStepper", "SpectralStepper", "CosineStepper", "MaskedCosineStepper",
           "make_stepper", "stepper_class", "check_support", "VARIANT_STEPPERS"]


class ReferenceStepper(Stepper):
    """Whole-array NumPy/CuPy reference (pads, slices, no custom kernels); on a masked domain the
    no-flux operator of :mod:`.domains`."""

    name = "reference"
    buffers = 10
    rectangles = True
    masks = True

    def __init__(self, params, backend):
        super().__init__(params, backend)
        mask = domains.domain_mask(params, self.xp)
        self._weights = None if mask is None else domains.link_weights(mask)

    def update(self, src, base, coef, out):
        if self._weights is not None:
            return domains.masked_update(src, base, coef, self.params, self._weights, out=out)
        return stencil.update(src, base, coef, self.params, out=out)


def laplacian_symbol(shape, dx: float, xp=np, dtype=np.float64):
    """Eigenvalues Λ(k) ≥ 0 of −L (the 5/7-point Laplacian) on a periodic grid, rfft layout."""
    lam = None
    for ax, n in enumerate(shape):
        if ax == len(shape) - 1:
            k = xp.arange(n // 2 + 1, dtype=dtype)
        else:
            k = xp.fft.fftfreq(n, d=1.0 / n).astype(dtype)
        term = (4.0 / dx ** 2) * xp.sin(math.pi * k / n) ** 2
        sh = [1] * len(shape); sh[ax] = term.size
        term = term.reshape(sh)
        lam = term if lam is None else lam + term
    return lam


def cosine_symbol(shape, dx: float, xp=np, dtype=np.float64):
    """Eigenvalues Λ(k) ≥ 0 of −L with mirror boundaries (reflection about the cell face): the
    DCT-II basis cos(πk(i + ½)/n) has Λ = Σ_axes (4/dx²) sin²(πk/(2n)), k = 0 … n−1."""
    lam = None
    for ax, n in enumerate(shape):
        k = xp.arange(n, dtype=dtype)
        term = (4.0 / dx ** 2) * xp.sin(math.pi * k / (2 * n)) ** 2
        sh = [1] * len(shape); sh[ax] = n
        term = term.reshape(sh)
        lam = term if lam is None else lam + term
    return lam


def _scipy_fft(xp):
    """scipy.fft for NumPy arrays, cupyx.scipy.fft for CuPy arrays (both have dctn / idctn)."""
    if xp is np:
        import scipy.fft as sf
    else:
        import cupyx.scipy.fft as sf
    return sf


class SpectralStepper(Stepper):
    """Semi-implicit Fourier stepper, unconditionally energy stable for S ≥ max f''/2.

    In Fourier space with Λ(k) the symbol of −L (so the scheme solves the same
    discrete operator as the finite-difference steppers):
        (1 + dt m Λ S + dt m K Λ²) φ̂ⁿ⁺¹ = (1 + dt m Λ S) φ̂ⁿ − dt m Λ N̂(φⁿ),
    N(φ) = uφ³ − bφ explicit, the stiff K∇⁴ term implicit, S = 2b stabilising.
    Stable at dt far beyond the explicit limit (tested at 50×).  First order in time.
    """

    name = "spectral"
    buffers = 8
    rectangles = True
    order = 1
    fresh_output = True
    #: the boundary rules this transform diagonalises
    boundaries = ("periodic",)

    def __init__(self, params, backend):
        super().__init__(params, backend)
        self._key = None
        self._lam_key = None
        self._recent: dict = {}

    def symbol(self, shape, dx):
        return laplacian_symbol(shape, dx, self.xp, np.float64)

    def forward(self, a):
        return self.xp.fft.rfftn(a)

    def inverse(self, a, shape):
        return self.xp.fft.irfftn(a, s=shape, axes=tuple(range(len(shape))))

    def _coeffs(self, shape, dtype):
        p = self.params
        lam_key = (shape, p.dx)
        if lam_key != self._lam_key:
            self._lam = self.symbol(shape, p.dx)
            self._lam_key = lam_key
            self._recent.clear()
        key = (shape, p.dt, p.m, p.K, p.b, p.dx, dtype)
        if key != self._key:
            # a few recent dt kept: adaptive steps alternate between h and h/2
            if key not in self._recent:
                lam = self._lam
                S = 2.0 * p.b
                denom = 1.0 + p.dt * p.m * lam * S + p.dt * p.m * p.K * lam ** 2
                if len(self._recent) >= 4:
                    self._recent.pop(next(iter(self._recent)))
                self._recent[key] = (((1.0 + p.dt * p.m * lam * S) / denom).astype(dtype),
                                     (-p.dt * p.m * lam / denom).astype(dtype))
            self._a, self._c = self._recent[key]
            self._key = key
        return self._a, self._c

    def step(self, phi, n: int = 1):
        p = self.params
        rdt = np.float32 if phi.dtype == np.float32 else np.float64
        a, c = self._coeffs(phi.shape, rdt)
        if self.xp is not np:
            return self._step_fused(phi, n, rdt, a, c)
        k0, dc = (0,) * phi.ndim, None
        for _ in range(n):
            nl = rdt(p.u) * phi * phi * phi - rdt(p.b) * phi
            f = self.forward(phi)
            if dc is None:
                dc = f[k0].copy()
            ph = a * f + c * self.forward(nl)
            # the scheme keeps the k = 0 mode (the mean) exactly (a(0) = 1, c(0) = 0): pin it, so
            # that float32 round-off cannot make the mean drift over many steps
            ph[k0] = dc
            phi = self.inverse(ph, phi.shape).astype(phi.dtype, copy=False)
        return phi

    def _step_fused(self, phi, n, rdt, a, c):
        """:meth:`step` on the GPU with the fused kernels of :mod:`.fused` (the same expressions:
        N(φ) in one launch, a·f + c·ĝ with the k = 0 pin in another; the pinned value is read on
        the device from the first step's transform)."""
        p, dc = self.params, None
        u, b = rdt(p.u), rdt(p.b)
        for _ in range(n):
            nl = fused.nonlinear(phi, u, b)
            f = self.forward(phi)
            if dc is None:
                dc = f
            phi = self.inverse(fused.spectral_combine(f, self.forward(nl), a, c, dc),
                               phi.shape).astype(phi.dtype, copy=False)
        return phi


class CosineStepper(SpectralStepper):
    """The same semi-implicit scheme in the cosine (DCT-II, orthonormal) basis, which diagonalises
    the mirror-boundary (no-flux) Laplacian exactly: mirror boundaries, e.g. PFHub 1b."""

    name = "spectral-cosine"
    boundaries = ("mirror",)

    def symbol(self, shape, dx):
        return cosine_symbol(shape, dx, self.xp, np.float64)

    def forward(self, a):
        return _scipy_fft(self.xp).dctn(a, type=2, norm="ortho")

    def inverse(self, a, shape):
        return _scipy_fft(self.xp).idctn(a, type=2, norm="ortho")


class MaskedCosineStepper(CosineStepper):
    """The same semi-implicit scheme on a masked domain (kernels.cahn_hilliard.domains), A = −L_m:

        (I + dt m (S A + K A²)) φⁿ⁺¹ = φⁿ + dt m S A φⁿ − dt m A N(φⁿ),

    solved by conjugate gradients on the region's cells (the operator is symmetric positive definite
    there and the identity outside), preconditioned by the whole box's operator inverted in the cosine
    basis (they differ only on the links that leave the region).  The residual is brought below
    ``cg_tol`` × |rhs|; the tiny mass error of an inexact solve is then put back uniformly over the
    region (1ᵀA = 0, so the exact solution keeps Σφ).  A solve that does not converge in ``cg_max``
    iterations returns NaN: the adaptive step rejects it and halves dt (a fixed-dt run stops)."""

    name = "spectral-masked"
    masks = True
    cg_tol = 1e-10
    cg_max = 1000

    def __init__(self, params, backend):
        super().__init__(params, backend)
        self.mask = domains.domain_mask(params, self.xp)
        self._weights = domains.link_weights(self.mask)
        self._cast = {}                   # the link weights as float arrays, per dtype
        self.cg_iterations = 0            # of the last solve, for diagnostics

    def _minus_lap(self, g):
        w = self._cast.get(g.dtype)
        if w is None:
            w = self._cast[g.dtype] = [x.astype(g.dtype) for x in self._weights]
        return -domains.masked_laplacian(g, w, self.params.dx * self.params.dx)

    def step(self, phi, n: int = 1):
        xp, p = self.xp, self.params
        rdt = np.float32 if phi.dtype == np.float32 else np.float64
        self._coeffs(phi.shape, rdt)
        lam = self._lam
        S, g = 2.0 * p.b, p.dt * p.m
        pinv = (1.0 / (1.0 + g * lam * S + g * p.K * lam ** 2)).astype(rdt)
        inside = self.mask

        def precond(r):
            return xp.where(inside, self.inverse(pinv * self.forward(xp.where(inside, r, 0)), r.shape), 0)

        def op(v):
            av = self._minus_lap(v)
            return v + rdt(g) * (rdt(S) * av + rdt(p.K) * self._minus_lap(av))

        for _ in range(n):
            nl = rdt(p.u) * phi * phi * phi - rdt(p.b) * phi
            rhs = phi + rdt(g) * (rdt(S) * self._minus_lap(phi) - self._minus_lap(nl))
            x = xp.where(inside, precond(rhs), phi)
            r = xp.where(inside, rhs - op(x), 0)
            z = precond(r)
            d = z
            rz = float(xp.vdot(r, z))
            limit = self.cg_tol * float(xp.linalg.norm(xp.where(inside, rhs, 0)))
            for it in range(self.cg_max):
                if float(xp.linalg.norm(r)) <= limit:
                    break
                md = op(d)
                alpha = rz / float(xp.vdot(d, md))
                x = x + alpha * d
                r = r - alpha * md
                z = precond(r)
                rz_new = float(xp.vdot(r, z))
                d = z + (rz_new / rz) * d
                rz = rz_new
            else:
                x = xp.full_like(phi, np.nan)
            self.cg_iterations = it
            count = int(inside.sum())
            x = xp.where(inside, x + (xp.sum(xp.where(inside, rhs, 0)) - xp.sum(xp.where(inside, x, 0))) / count,
                         phi)
            phi = x.astype(phi.dtype, copy=False)
        return phi


#: the semi-implicit spectral steppers; the one whose ``boundaries`` hold the run's boundary and whose
#: ``masks`` flag matches the domain is used
SPECTRAL_STEPPERS = (SpectralStepper, CosineStepper, MaskedCosineStepper)


def make_stepper(params: CHParams, backend) -> Stepper:
    """The stepper for ``params.integrator`` / ``params.variant`` on ``backend``.

    ``params.gpus`` > 1 gives the slab-decomposed multi-GPU stepper (paper 001);
    what cannot be honoured (missing GPUs, the single-GPU spectral stepper) is
    explained in the stepper's ``notes`` and run on fewer GPUs.
    """
    notes = []
    if params.gpus > 1 and (params.rectangular or domains.DOMAINS[params.domain].masked):
        notes.append("rectangles and masked domains run on one GPU")
        params = replace(params, gpus=1)
    if params.gpus > 1:
        if params.variant == "cpu-threads":
            notes.append("cpu-threads runs on host cores, not split over GPUs")
        elif params.integrator == "spectral":
            notes.append("the semi-implicit spectral stepper runs on one GPU")
        else:
            devices, notes = resolve_devices(params.gpus, backend)
            if len(devices) > 1:
                st = MultiGPUStepper(params, backend, devices, params.exchange,
                                     graph=DEFAULT_GRAPH)
                st.notes[:0] = notes
                return st
    st = _single_stepper(params, backend)
    st.notes.extend(notes)
    return st


#: kernel variant → its Stepper class (a :class:`kernels.registry.Registry`, read like the dict it was);
#: every CUDA variant (A–E) shares CudaStepper, which runs on the GPU or, on the CPU backend, the same
#: CUDA source on the host (kernels.gpu's host device)
VARIANT_STEPPERS: Registry = Registry("kernel variant", base=Stepper)
VARIANT_STEPPERS.register(ReferenceStepper, name="reference")
VARIANT_STEPPERS.register(ThreadedStepper, name="cpu-threads")
for _v in GPU_VARIANTS:
    VARIANT_STEPPERS.register(CudaStepper, name=_v)
del _v


def stepper_class(variant: str):
    """The Stepper class of ``variant`` (see :data:`VARIANT_STEPPERS`; an unknown name is one
    InvalidParameter naming the choices)."""
    return VARIANT_STEPPERS.get(variant)


def _single_stepper(params: CHParams, backend) -> Stepper:
    if params.integrator == "spectral":
        masked = domains.DOMAINS[params.domain].masked
        cls = next((c for c in SPECTRAL_STEPPERS if params.boundary in c.boundaries and c.masks == masked), None)
        if cls is None:
            raise InvalidParameter(f"the spectral integrator runs the masked {params.domain} domain with mirror "
                                   "(no-flux) boundaries only")
    else:
        cls = stepper_class(params.variant)
    check_support(cls, params)
    return cls(params, backend)


def check_support(cls, params: CHParams) -> None:
    """Refuse (InvalidParameter) a rectangle or a masked domain that stepper class ``cls`` cannot run
    (its class flags ``rectangles`` / ``masks``)."""
    what = f"the {cls.name} stepper" if params.integrator == "spectral" else f"kernel variant {params.variant}"
    if domains.DOMAINS[params.domain].masked and not getattr(cls, "masks", False):
        raise InvalidParameter(f"{what} cannot run the masked {params.domain} domain; use the array "
                               "reference with the euler or rk2 integrator")
    if params.rectangular and not getattr(cls, "rectangles", False):
        raise InvalidParameter(f"{what} needs a square/cubic grid (got {'×'.join(map(str, params.shape))}); "
                               "use the array reference or the spectral integrator for rectangles")
