"""PFHub benchmark 1 (spinodal decomposition) on our Cahn–Hilliard equation: presets, the initial
condition, the free energy in the benchmark's units, the stopping rule, a driver and its outputs.

Source: Jokisaari, Voorhees, Guyer, Warren & Heinonen, "Benchmark problems for numerical
implementations of phase field models", Comput. Mater. Sci. 126 (2017) 139–151, and the PFHub page
"Benchmark Problem 1: Spinodal Decomposition" (usnistgov/pfhub, benchmarks/benchmark1.ipynb).

The benchmark (concentration c):

    F = ∫_V [ f_chem(c) + κ/2 |∇c|² ] dV,   f_chem = ρ_s (c − c_α)² (c_β − c)²,
    ∂c/∂t = ∇·{ M ∇( ∂f_chem/∂c − κ∇²c ) },
    ρ_s = 5, c_α = 0.3, c_β = 0.7, κ = 2, M = 5,
    c(x, y, 0) = c0 + ε[cos(0.105x)cos(0.11y) + (cos(0.13x)cos(0.087y))²
                        + cos(0.025x − 0.15y)cos(0.07x − 0.02y)],   c0 = 0.5, ε = 0.01.

Our equation is ∂φ/∂t = m ∇²(−bφ + uφ³ − K∇²φ) with E = ∫ [−b/2 φ² + u/4 φ⁴ + K/2 |∇φ|²].
With c = c̄ + Aφ, c̄ = (c_α + c_β)/2 = 0.5, A = (c_β − c_α)/2 = 0.2 (so φ = ±1 are the two phases):

    f_chem = ρ_s A⁴ (1 − φ²)² = ρ_s A⁴ − 2ρ_s A⁴ φ² + ρ_s A⁴ φ⁴   →  b = u = 4 ρ_s A⁴ = 0.032,
    κ/2 |∇c|² = κA²/2 |∇φ|²                                        →  K = κ A² = 0.08,
    δF/δc = (1/A) δF/δφ,  ∂φ/∂t = (1/A) ∂c/∂t                      →  m = M / A² = 125,
    F_pfhub = E + ρ_s A⁴ · V   (the constant term of f_chem; ρ_s A⁴ = 0.008, V the domain's volume).

Lengths and times are the benchmark's (dx in its length units; dx = 1 gives 200 cells on 1a/1b).
φ0 = (c − c̄)/A = (ε/A)[…] is sampled at the cell centres x = (i + ½)dx, y = (j + ½)dx.

Stopping rule: the run stops when the rate of change of the total free energy per unit volume,
|ΔF/Δt|/V over an accepted step, falls below :data:`EQUILIBRIUM_RATE` = 1e-14, or at t_end (the
benchmark's horizon t = 10⁶).  The benchmark page we could read asks for runs "to equilibrium"; the
1e-14 per unit volume threshold is the figure quoted in our issue from the PFHub site and could not be
confirmed in the sources available to us: it is a parameter (``stop_rate``).

Variants: 1a (200×200 periodic), 1b (200×200 no-flux = mirror), 1c (the T: 100 wide, 120 tall, bar
and stem 20 wide, no-flux; a masked domain: the semi-implicit masked cosine stepper, or the explicit
array reference), 1d (the surface of a sphere of
radius 100): not built — refused with :class:`~kernels.errors.Unsupported`.
"""
from __future__ import annotations

import csv
import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .. import filegate
from ..errors import InvalidParameter, Unsupported
from ..fileio import atomic_write
from .adaptive import AdaptiveController
from .domains import domain_mask
from .params import CHParams, stability_limit

# --- the benchmark's parameters (Jokisaari et al. 2017, §3.1; PFHub benchmark 1)
RHO_S, C_ALPHA, C_BETA, KAPPA, MOBILITY = 5.0, 0.3, 0.7, 2.0, 5.0
C0, EPSILON = 0.5, 0.01
#: the wave numbers of the initial condition: (kx1, ky1), (kx2, ky2), (a, b, c, d) of
#: cos(a x − b y) cos(c x − d y)
WAVES = ((0.105, 0.11), (0.13, 0.087), (0.025, 0.15, 0.07, 0.02))
#: |dF/dt| / V below which the run is at equilibrium (module docstring)
EQUILIBRIUM_RATE = 1e-14
#: the benchmark's horizon and the times of its field snapshots
T_END = 1.0e6
SNAPSHOT_TIMES = (1.0e3, 1.0e4, 1.0e5, 1.0e6)
#: the times at which the benchmark compares F(t)
REPORT_TIMES = (1.0, 10.0, 100.0, 1.0e3, 1.0e4)

#: the mapping onto our coefficients (module docstring); rounded to 12 decimals so that the binary
#: round-off of 0.7 − 0.3 does not show as 0.03199999999999999 in presets and sessions
C_MID = round(0.5 * (C_ALPHA + C_BETA), 12)
AMPLITUDE = round(0.5 * (C_BETA - C_ALPHA), 12)
B = U = round(4.0 * RHO_S * AMPLITUDE ** 4, 12)
K_GRAD = round(KAPPA * AMPLITUDE ** 2, 12)
M_OURS = round(MOBILITY / AMPLITUDE ** 2, 12)
F_OFFSET_DENSITY = round(RHO_S * AMPLITUDE ** 4, 12)
MAPPING = f"c = {C_MID:g} + {AMPLITUDE:g} phi"


class Variant:
    """A PFHub benchmark 1 variant: its CHParams fields (besides the shared mapping)."""
    name = ""
    title = ""
    built = True
    fields: dict = {}


class Variant1a(Variant):
    name, title = "pfhub-1a", "PFHub 1a: 200 × 200, periodic"
    fields = {"size": 200, "boundary": "periodic", "integrator": "spectral"}


class Variant1b(Variant):
    name, title = "pfhub-1b", "PFHub 1b: 200 × 200, no-flux"
    fields = {"size": 200, "boundary": "mirror", "integrator": "spectral"}


class Variant1c(Variant):
    name, title = "pfhub-1c", "PFHub 1c: T-shaped domain, no-flux (masked)"
    fields = {"size": 100, "size_y": 120, "domain": "t-shape", "boundary": "mirror", "integrator": "spectral"}


class Variant1d(Variant):
    name, title = "pfhub-1d", "PFHub 1d: surface of a sphere (not built)"
    built = False
    why = ("PFHub 1d (the surface of a sphere of radius 100) is not built: it needs a spectral method on "
           "the sphere (spherical harmonics) or a finite-volume method on an icosahedral mesh, and every "
           "stepper here works on a Cartesian grid")


#: preset name → variant class
VARIANTS = {v.name: v for v in (Variant1a, Variant1b, Variant1c, Variant1d)}


def preset_params(name: str, dx: float = 1.0, **changes) -> CHParams:
    """The CHParams of variant ``name`` (pfhub-1a … 1d) at grid spacing ``dx`` (the domain keeps
    the benchmark's size: cells = length / dx), with ``changes`` on top.  Raises InvalidParameter
    for an unknown name, :class:`~kernels.errors.Unsupported` for 1d."""
    var = VARIANTS.get(name)
    if var is None:
        raise InvalidParameter(f"unknown PFHub preset {name!r}; choose one of {', '.join(VARIANTS)}")
    if not var.built:
        raise Unsupported(var.why)
    f = dict(var.fields)
    for key in ("size", "size_y"):
        if key in f:
            cells = f[key] / dx
            if abs(cells - round(cells)) > 1e-9:
                raise InvalidParameter(f"dx = {dx:g} does not divide the benchmark's length {f[key]} evenly")
            f[key] = int(round(cells))
    p = CHParams(m=M_OURS, b=B, u=U, K=K_GRAD, dx=float(dx), dim=2, initial="pfhub", dtype="float64",
                 adaptive=True, dt=1e-3, tolerance=1e-4, dt_floor=1e-8, dt_ceiling=1e4, **f)
    if p.integrator != "spectral":
        p = p.with_changes(dt=float(f"{0.5 * stability_limit(p):.3g}"))
    return p.with_changes(**changes)


def preset_name(p: CHParams) -> str | None:
    """The PFHub variant whose set-up ``p`` runs (same shape, boundary, domain and coefficients), or None."""
    if not is_pfhub(p):
        return None
    for v in VARIANTS.values():
        if v.built and all(getattr(p, k) == (val / p.dx if k in ("size", "size_y") else val)
                           for k, val in v.fields.items() if k not in ("integrator", "variant")):
            return v.name
    return None


def is_pfhub(p: CHParams) -> bool:
    """Whether ``p`` has the benchmark's mapped coefficients and initial condition."""
    return (p.initial == "pfhub" and p.dim == 2 and all(math.isclose(a, b, rel_tol=1e-12) for a, b in
                                                        ((p.m, M_OURS), (p.b, B), (p.u, U), (p.K, K_GRAD))))


# ------------------------------------------------------------------ the initial condition
def initial_c(x, y, xp=np):
    """The benchmark's c(x, y) for (a)–(c) at coordinates x, y (arrays that broadcast)."""
    (a1, b1), (a2, b2), (a3, b3, a4, b4) = WAVES
    return C0 + EPSILON * (xp.cos(a1 * x) * xp.cos(b1 * y) + (xp.cos(a2 * x) * xp.cos(b2 * y)) ** 2
                           + xp.cos(a3 * x - b3 * y) * xp.cos(a4 * x - b4 * y))


def initial_phi(shape, dx: float, xp=np, dtype=np.float64):
    """φ0 = (c(x, y) − c̄)/A at the cell centres of a (ny, nx) grid (row j ↔ y, column i ↔ x)."""
    if len(shape) != 2:
        raise InvalidParameter("the PFHub initial condition is 2D")
    ny, nx = shape
    x = (xp.arange(nx, dtype=xp.float64) + 0.5) * dx
    y = (xp.arange(ny, dtype=xp.float64) + 0.5) * dx
    c = initial_c(x[None, :], y[:, None], xp)
    return ((c - C_MID) / AMPLITUDE).astype(dtype)


def initial_gradient(x, y):
    """(∂c/∂x, ∂c/∂y) of the initial condition, exact."""
    (a1, b1), (a2, b2), (a3, b3, a4, b4) = WAVES
    g2 = np.cos(a2 * x) * np.cos(b2 * y)
    p3, p4 = a3 * x - b3 * y, a4 * x - b4 * y
    cx = (-a1 * np.sin(a1 * x) * np.cos(b1 * y) - 2 * g2 * a2 * np.sin(a2 * x) * np.cos(b2 * y)
          - a3 * np.sin(p3) * np.cos(p4) - a4 * np.cos(p3) * np.sin(p4))
    cy = (-b1 * np.cos(a1 * x) * np.sin(b1 * y) - 2 * g2 * b2 * np.cos(a2 * x) * np.sin(b2 * y)
          + b3 * np.sin(p3) * np.cos(p4) + b4 * np.cos(p3) * np.sin(p4))
    return EPSILON * cx, EPSILON * cy


def analytic_initial_energy(lx: float = 200.0, ly: float = 200.0, nodes: int = 64) -> float:
    """F at t = 0 on the rectangle [0, lx] × [0, ly], the integral of the analytic integrand (exact
    gradient) by Gauss–Legendre quadrature with ``nodes`` points per axis in each of 8 panels
    (the integrand is smooth: converged to rounding)."""
    t, w = np.polynomial.legendre.leggauss(nodes)

    def rule(length):
        edges = np.linspace(0.0, length, 9)
        xs = np.concatenate([0.5 * (b - a) * t + 0.5 * (a + b) for a, b in zip(edges[:-1], edges[1:])])
        ws = np.concatenate([0.5 * (b - a) * w for a, b in zip(edges[:-1], edges[1:])])
        return xs, ws

    x, wx = rule(lx)
    y, wy = rule(ly)
    X, Y = x[None, :], y[:, None]
    c = initial_c(X, Y)
    cx, cy = initial_gradient(X, Y)
    dens = RHO_S * (c - C_ALPHA) ** 2 * (C_BETA - c) ** 2 + 0.5 * KAPPA * (cx ** 2 + cy ** 2)
    return float(wy @ dens @ wx)


# ------------------------------------------------------------------ the free energy in the benchmark's units
def volume(p: CHParams) -> float:
    """The domain's volume (area in 2D) in the benchmark's units: the masked region or the box."""
    mask = domain_mask(p)
    cells = p.cells if mask is None else int(mask.sum())
    return cells * p.dx ** p.dim


def benchmark_energy(energy_ours: float, p: CHParams) -> float:
    """F_pfhub = E + ρ_s A⁴ V (module docstring)."""
    return energy_ours + F_OFFSET_DENSITY * volume(p)


def c_of_phi(phi):
    return C_MID + AMPLITUDE * phi


# ------------------------------------------------------------------ the driver
@dataclass
class PFHubResult:
    """What a run returns: the accepted steps (t, F in the benchmark's units, dt), why it stopped,
    wall time, rejected attempts and the field snapshots {t: φ host array}."""
    t: list = field(default_factory=list)
    free_energy: list = field(default_factory=list)
    dt: list = field(default_factory=list)
    reason: str = ""
    seconds: float = 0.0
    rejected: int = 0
    snapshots: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.t) - 1

    def energy_at(self, t: float) -> float:
        """F at time ``t`` (linear interpolation between recorded steps; NaN outside)."""
        return float(np.interp(t, self.t, self.free_energy, left=np.nan, right=np.nan))


def steps(sim, t_end: float = T_END, stop_rate: float | None = EQUILIBRIUM_RATE, snapshot_times=(),
          result: PFHubResult | None = None):
    """Advance ``sim`` (a CahnHilliard; ``params.adaptive``: accepted adaptive steps, else fixed steps
    of params.dt) step by step until ``t_end`` or until |ΔF/Δt|/V < ``stop_rate`` (None: no rule),
    yielding the growing :class:`PFHubResult` after every step (``reason`` set on the last one).
    Steps land on ``t_end`` and the ``snapshot_times`` (φ kept there).  F is in the benchmark's units
    when ``sim.params`` is a PFHub set-up (:func:`is_pfhub`), else our E."""
    p = sim.params
    vol = volume(p)
    offset = F_OFFSET_DENSITY * vol if is_pfhub(p) else 0.0
    ctl = AdaptiveController(sim)
    res = result if result is not None else PFHubResult()
    res.t[:], res.free_energy[:], res.dt[:] = [sim.t], [ctl.e_now + offset], [0.0]
    stops = sorted({float(s) for s in snapshot_times if sim.t < s <= t_end} | {float(t_end)})
    t0 = time.perf_counter()
    while sim.t < t_end:
        target = next(s for s in stops if s > sim.t)
        e_old = ctl.e_now
        if p.adaptive:
            h = ctl.advance(target)
        else:
            h = min(p.dt, target - sim.t)
            sim.stepper.set_params(p.with_changes(dt=h))
            try:
                sim.step(1, record=False)
            finally:
                sim.stepper.set_params(p)
            if h != p.dt:                  # the last, shortened step lands on the stop time
                sim.t = target
            ctl.e_now = ctl.energy(sim.phi)
        res.t.append(sim.t); res.free_energy.append(ctl.e_now + offset); res.dt.append(h)
        if sim.t in snapshot_times:
            res.snapshots[sim.t] = sim.field_numpy().copy()
        rate = abs(e_old - ctl.e_now) / h / vol
        res.seconds, res.rejected = time.perf_counter() - t0, ctl.log.rejected
        if stop_rate is not None and rate < stop_rate:
            res.reason = f"equilibrium: |dF/dt|/V = {rate:.3g} < {stop_rate:g}"
        elif sim.t >= t_end:
            res.reason = f"t_end = {t_end:g}"
        yield res
        if res.reason:
            return


def run(sim, t_end: float = T_END, stop_rate: float | None = EQUILIBRIUM_RATE, snapshot_times=(),
        cancelled=None) -> PFHubResult:
    """:func:`steps` to the end; ``cancelled()`` returning True stops it early (reason "cancelled")."""
    res = PFHubResult()
    for res in steps(sim, t_end, stop_rate, snapshot_times, res):
        if cancelled is not None and cancelled() and not res.reason:
            res.reason = "cancelled"
            break
    sim.backend.synchronize()
    sim.record()
    return res


# ------------------------------------------------------------------ outputs
def write_energy_csv(path, res: PFHubResult, every: float = 0.0) -> None:
    """``time,free_energy`` (the benchmark's format) for every accepted step, or thinned to one row
    per ``every`` time units (the first and last rows always), atomically."""
    rows, next_t = [], -math.inf
    n = len(res.t)
    for i, (t, f) in enumerate(zip(res.t, res.free_energy)):
        if every <= 0 or t >= next_t or i == n - 1:
            rows.append(f"{t:.10g},{f:.12g}")
            next_t = t + every
    with atomic_write(path, "w", newline="") as fh:
        fh.write("time,free_energy\n" + "\n".join(rows) + "\n")


def write_fields(path, final_phi, p: CHParams, res: PFHubResult, t: float, steps: int) -> None:
    """One .npz: ``phi`` (the final field, our variable), ``phi_t<time>`` per snapshot, ``snapshot_times``,
    ``mapping`` ("c = 0.5 + 0.2 phi"), ``params_json``, ``t``, ``steps`` (kernels.cahn_hilliard.io's
    layout, so ``ch --load`` reads it), atomically."""
    members = {"phi": np.asarray(final_phi), "params_json": np.array(json.dumps(p.to_dict())),
               "t": np.array(float(t)), "steps": np.array(int(steps)), "format_version": np.array(1),
               "mapping": np.array(MAPPING), "snapshot_times": np.array(sorted(res.snapshots), dtype=float)}
    for ts, phi in res.snapshots.items():
        members[f"phi_t{int(round(ts)):07d}"] = np.asarray(phi)
    with atomic_write(path, "wb") as fh:
        np.savez_compressed(fh, **members)


def read_posted_curve(path) -> tuple[np.ndarray, np.ndarray]:
    """(time, free_energy) from a posted PFHub CSV: a header row naming a time column ("time") and an
    energy column ("free_energy", "total_energy" or "energy"; else the second column), then numbers.
    Raises InvalidParameter on anything else."""
    try:
        with filegate.open_text(path, filegate.CSV, encoding="utf-8-sig", newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(s.strip() for s in r)]
    except UnicodeDecodeError:
        raise InvalidParameter(f"{path}: not a text CSV file") from None
    if len(rows) < 2:
        raise InvalidParameter(f"{path}: needs a header row and at least one data row")
    head = [h.strip().lower() for h in rows[0]]
    if "time" not in head:
        raise InvalidParameter(f"{path}: no 'time' column in the header {rows[0]}")
    ti = head.index("time")
    ei = next((head.index(k) for k in ("free_energy", "total_energy", "energy") if k in head),
              1 if ti != 1 else 0)
    try:
        data = np.array([[float(r[ti]), float(r[ei])] for r in rows[1:]], dtype=float)
    except (ValueError, IndexError):
        raise InvalidParameter(f"{path}: every row needs numbers in the time and energy columns") from None
    if not np.isfinite(data).all():
        raise InvalidParameter(f"{path}: NaN or infinite values")
    return data[:, 0], data[:, 1]
