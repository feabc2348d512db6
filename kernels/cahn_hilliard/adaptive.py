"""Adaptive time stepping for a Cahn–Hilliard run: step doubling with energy-decrease control.

One attempt from φⁿ at step h takes one step of h (φ_full) and two steps of h/2 (φ_half) with the
run's own stepper (semi-implicit spectral, or explicit Euler / RK2).  The local error estimate is

    err = RMS(φ_half − φ_full) = (Σ_region (φ_half − φ_full)² / N_region)^½

and the candidate is the locally extrapolated φ* = φ_half + (φ_half − φ_full)/(2^q − 1) (q: the
integrator's order; one order higher, and still mass-conserving: both terms conserve Σφ).  The step
is **accepted** when err ≤ tolerance **and** the free energy did not rise: E(φ*) ≤ E(φⁿ) +
64·eps·|E(φⁿ)| (eps of the field's dtype: only the rounding of the sum is allowed).  φ* becomes
φⁿ⁺¹, t advances by h.  The next step is

    h ← h · clip(0.9 (tolerance/err)^(1/(q+1)), 0.2, 2)          (q: the integrator's order)

halved instead after an energy rise, and kept within [dt_floor, dt_ceiling] (explicit integrators:
also below the stability limit of :func:`~kernels.cahn_hilliard.params.stability_limit`).  A step
rejected at dt_floor ends the run with :class:`~kernels.errors.SimulationBlowUp`.  Steps are clipped
so that the run lands exactly on the requested stop times (t_end, snapshot times).
(Standard step-doubling control, e.g. Hairer, Nørsett & Wanner, Solving ODEs I, §II.4.)

Every accepted step is kept in :attr:`AdaptiveController.log` (t, dt, E, err, rejections).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import SimulationBlowUp
from . import diagnostics, fused
from .domains import DOMAINS, domain_mask
from .params import stability_limit

GROW, SHRINK, SAFETY = 2.0, 0.2, 0.9


@dataclass
class StepLog:
    """The accepted steps of an adaptive run (host lists, one entry per step)."""
    t: list = field(default_factory=list)
    dt: list = field(default_factory=list)
    energy: list = field(default_factory=list)
    error: list = field(default_factory=list)
    rejected: int = 0

    def __len__(self) -> int:
        return len(self.t)

    def as_dict(self) -> dict:
        return {"t": list(self.t), "dt": list(self.dt), "energy": list(self.energy), "error": list(self.error),
                "rejected": self.rejected}


class AdaptiveController:
    """Advance a :class:`~kernels.cahn_hilliard.simulation.CahnHilliard` by accepted adaptive steps
    (module docstring).  ``energy`` (φ → float) defaults to the run's discrete free energy."""

    def __init__(self, sim, energy=None):
        self.sim = sim
        self._default_energy = energy is None
        self.energy = energy or (lambda phi: diagnostics.free_energy(phi, sim.params))
        self._work = None               # GPU: (d², energy density) per cell, see _finish_fused
        self.h = float(sim.params.dt)
        self.log = StepLog()
        self.e_now = self.energy(sim.phi)
        mask = domain_mask(sim.params)
        self.cells = sim.params.cells if mask is None else int(mask.sum())

    @property
    def ceiling(self) -> float:
        p = self.sim.params
        top = p.dt_ceiling
        if p.integrator != "spectral":             # explicit: within the stability limit
            top = min(top, stability_limit(p))
        return max(top, p.dt_floor)

    def _step(self, phi0, params):
        """φ after one stepper step with ``params`` from ``phi0`` (phi0 untouched; a copy unless the
        stepper's ``fresh_output`` flag says its result is already a new array)."""
        st, xp = self.sim.stepper, self.sim.xp
        st.set_params(params)
        if getattr(st, "fresh_output", False):
            return st.step(phi0, 1)
        out = st.step(xp.array(phi0, copy=True), 1)
        return xp.array(out, copy=True)

    def _fused(self) -> bool:
        """The GPU kernels of :mod:`.fused` evaluate err and E (default energy, unmasked 2-D/3-D
        periodic or mirror run); checked per attempt, since live parameter changes may alter it."""
        p = self.sim.params
        return (self.sim.xp is not np and self._default_energy and not DOMAINS[p.domain].masked
                and p.boundary in fused.ENERGY_BOUNDARIES and self.sim.phi.ndim in (2, 3))

    def attempt(self, h: float):
        """(φ*, err, E(φ*)) of one step-doubling attempt at ``h`` (module docstring)."""
        xp = self.sim.xp
        phi0 = self.sim.phi
        q = getattr(self.sim.stepper, "order", 1)
        whole, halved = replace(self.sim.params, dt=h), replace(self.sim.params, dt=0.5 * h)
        with np.errstate(all="ignore"):
            full = self._step(phi0, whole)
            half = self._step(self._step(phi0, halved), halved)
            w = half.dtype.type(1.0 / (2 ** q - 1))
            if self._fused():
                return self._finish_fused(half, full, w)
            diff = half - full
            err = math.sqrt(float(xp.vdot(diff, diff).real) / self.cells)
            half += diff * w
        e = self.energy(half) if math.isfinite(err) else math.inf
        return half, err, e

    def _finish_fused(self, half, full, w):
        """The end of :meth:`attempt` on the GPU: Σ(half − full)² and the extrapolation in one launch,
        the energy density in another, both sums in one reduction and one device → host copy."""
        xp = self.sim.xp
        shape = (2,) + tuple(half.shape)
        if self._work is None or self._work.shape != shape:
            self._work = xp.empty(shape, np.float64)
        if not half.flags.c_contiguous:
            half = xp.ascontiguousarray(half)
        fused.extrapolate(half, full, w, self._work[0])
        fused.energy_density(half, self.sim.params, self._work[1])
        d2, e = (float(v) for v in self._work.reshape(2, -1).sum(axis=1).get())
        err = math.sqrt(d2 / self.cells)
        return half, err, (e if math.isfinite(err) else math.inf)

    def advance(self, t_stop: float = math.inf) -> float:
        """One accepted step, not beyond ``t_stop``; returns the step taken.  The run's φ, t,
        step count and :attr:`log` advance; the stepper is left at the run's own dt."""
        sim, p = self.sim, self.sim.params
        order = getattr(sim.stepper, "order", 1)
        eps = 64 * float(np.finfo(sim.phi.dtype).eps)
        self.h = min(max(self.h, p.dt_floor), self.ceiling)
        try:
            while True:
                h = min(self.h, t_stop - sim.t) if t_stop < math.inf else self.h
                clipped = h < self.h
                half, err, e = self.attempt(h)
                rises = not (e <= self.e_now + eps * abs(self.e_now))
                if err <= p.tolerance and not rises:
                    break
                self.log.rejected += 1
                if h <= p.dt_floor * (1 + 1e-12):
                    why = "the free energy rose" if rises else f"the error {err:.3g} exceeds {p.tolerance:g}"
                    raise SimulationBlowUp(f"the adaptive step fell to dt_floor = {p.dt_floor:g} at t = {sim.t:g} "
                                           f"and still failed ({why}); lower dt_floor or raise the tolerance")
                factor = 0.5 if rises or not math.isfinite(err) else \
                    max(SHRINK, SAFETY * (p.tolerance / err) ** (1.0 / (order + 1)))
                self.h = max(p.dt_floor, min(h, self.h) * min(factor, 0.9))
        finally:
            sim.stepper.set_params(p)
        sim.phi[...] = half
        sim.stepper.field_changed()
        sim.t = t_stop if clipped and h == t_stop - sim.t else sim.t + h
        sim.step_count += 1
        grow = GROW if err == 0 else min(GROW, max(SHRINK, SAFETY * (p.tolerance / err) ** (1.0 / (order + 1))))
        if not clipped:
            self.h = min(max(h * grow, p.dt_floor), self.ceiling)
        self.e_now = e
        log = self.log
        log.t.append(sim.t); log.dt.append(h); log.energy.append(e); log.error.append(err)
        return h
