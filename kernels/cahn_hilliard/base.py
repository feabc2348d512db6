"""The base class of every Cahn–Hilliard stepper (kept apart from :mod:`.steppers`, which imports the
implementations: CUDA kernels, compiled CPU threads, multi-GPU slabs; none of them imports
:mod:`.steppers` back).

Every stepper exposes ``update(src, base, coef, out)`` (out = base + coef·F(src)) so that kernel
variants only implement that one stage; the integrator logic (Euler, RK2 explicit midpoint, paper 000
§3.1.3) lives here once.  Class flags say what a stepper supports (read by
:func:`.steppers.make_stepper`, never by name).
"""
from __future__ import annotations

from .params import CHParams


class Stepper:
    """Base explicit stepper: subclasses provide ``update``."""

    name = "base"
    #: arrays of the field's size it needs, for the memory estimate
    buffers = 3
    #: runs non-square / non-cubic grids
    rectangles = False
    #: runs a masked domain (cells outside take no part)
    masks = False
    #: step() neither writes into its input nor returns an array it keeps (callers need no copies)
    fresh_output = False

    def __init__(self, params: CHParams, backend):
        self.params = params
        self.backend = backend
        self.xp = backend.xp
        self._tmp = None
        self._out = None
        #: what could not be honoured as asked (e.g. more GPUs than present), for the UI
        self.notes: list[str] = []

    def set_params(self, params: CHParams) -> None:
        self.params = params

    def field_changed(self) -> None:
        """φ was modified in place between steps (only steppers that cache it care)."""

    def update(self, src, base, coef, out):
        raise NotImplementedError

    @property
    def order(self) -> int:
        """Order of accuracy in time (Euler 1, RK2 2): the local error of one step is O(dt^(order+1))."""
        return 1 if self.params.integrator == "euler" else 2

    def _buffers(self, phi):
        if self._tmp is None or self._tmp.shape != phi.shape or self._tmp.dtype != phi.dtype:
            self._tmp = self.xp.empty_like(phi)
            self._out = self.xp.empty_like(phi)
        return self._tmp, self._out

    def step(self, phi, n: int = 1):
        """Advance ``n`` steps; returns the array now holding φ (buffers rotate)."""
        p = self.params
        tmp, out = self._buffers(phi)
        for _ in range(n):
            if p.integrator == "euler":
                self.update(phi, phi, p.dt, out)
            else:  # rk2 (explicit midpoint)
                self.update(phi, phi, 0.5 * p.dt, tmp)
                self.update(tmp, phi, p.dt, out)
            phi, out = out, phi
        self._out = out
        return phi
