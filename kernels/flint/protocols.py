"""Initial-state protocols for lines and rings of coupled cells, and measurements of circulation.

Sustained re-entry on a ring (paper 004's LR-Ring model, 80 Luo–Rudy 1991 cells; the classic ring
experiment of Mines 1913 / Frame & Simson 1988) needs a *one-way block*: stimulating a few cells of
a uniform ring starts two wavefronts that run round both ways and annihilate.  :func:`one_way_wave`
prepares the block instead: it integrates a line stimulated at one end until a pulse has fully
developed (excited front, plateau, repolarised tail), cuts a window of the ring's length out of the
line's states and lays it on the ring.  The refractory tail sits behind the front, so the wave can
only travel forward; it re-enters the cells it left when they have recovered, if the ring is longer
than the wavelength (conduction velocity × refractory period).

Discrete coupling ``dV_i/dt += D (V_{i-1} − 2 V_i + V_{i+1})`` (D in 1/ms): for LR-1991 (Euler,
dt 0.01 ms) the velocity is ≈ 2.6 cells/ms at D = 2 (wavelength ≈ 900 cells), 0.42 at D = 0.2 and
0.14 at D = 0.1 (wavelength ≈ 50 cells: an 80-cell ring holds it, one revolution ≈ 0.55 s).

:func:`front_passages` and :func:`circulation` measure what happens: the times the front (V
upcrossing, −20 mV by default) passes each cell, whether the passages run round one way only, and
the period of revolution.  No Qt here.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidParameter
from .compiler import Network
from .model import Model
from .runtimes import Simulation, network_stimulus
from .runtimes.auto import choose_runtime

__all__ = ["one_way_wave", "no_stimulus", "front_passages", "circulation", "OneWayWave"]


class OneWayWave(np.ndarray):
    """The (n_states, n_cells) initial state, with what was measured while making it in ``info``."""
    info: dict

    def __new__(cls, y, info):
        obj = np.asarray(y, dtype=np.float64).view(cls)
        obj.info = info
        return obj

    def __array_finalize__(self, obj):
        self.info = getattr(obj, "info", {})


def no_stimulus(model: Model, n: int, param: str = "stim_amplitude") -> dict:
    """Member parameters that switch the model's stimulus off in all ``n`` cells."""
    return {param: np.zeros(n)} if param in model.params else {}


def one_way_wave(model: Model, n_cells: int, D: float, *, state: str = "V", dt: float = 0.01,
                 integrator: str = "euler", runtime: str | None = None, line_cells: int | None = None,
                 threshold: float = -20.0, repolarised: float = -70.0, ahead: int = 5,
                 t_max: float = 2000.0, chunk_ms: float = 5.0) -> OneWayWave:
    """Per-cell initial state (n_states, n_cells) holding one wave that travels up the cell index.

    A line of ``line_cells`` (default 2 × n_cells) cells coupled on ``state`` with coefficient ``D``
    is stimulated in its first cells (the model's own stimulus, :func:`network_stimulus`) and
    integrated until the stimulated end has repolarised (``state`` < ``repolarised`` after it was
    excited).  Then the pulse is complete: resting cells ahead of the front, the excited/plateau
    cells, the repolarising tail.  The ring gets ``n_cells`` consecutive cells of the line: the
    whole pulse, its repolarised tail first, at least ``ahead`` resting cells after the front;
    spare cells are shared between the two sides.  Cell 0 of the ring (repolarised) then neighbours
    the last cell (at rest): no backward wave can start.

    Raises InvalidParameter when the pulse (front to repolarised tail, plus ``ahead``) does not
    fit in ``n_cells`` (the ring is shorter than the wavelength: lower D or more cells), when the
    pulse does not propagate, or when the model has no ``state``.

    ``runtime`` None: the host's pick for a coupled line (``c`` when a C++ compiler is here, else NumPy).
    Run the ring with the stimulus off (:func:`no_stimulus`).  ``info`` on the result: the line's
    time at the cut, front and tail positions, the pulse length (cells), the conduction velocity
    measured on the line (cells/ms) and the window's first line cell.
    """
    if state not in model.states:
        raise InvalidParameter(f"{state!r} is not a state of {model.name}")
    n_cells = int(n_cells)
    if n_cells < 8:
        raise InvalidParameter("a one-way wave needs a ring of at least 8 cells")
    if not D > 0:
        raise InvalidParameter(f"coupling D must be > 0 for a travelling wave, got {D}")
    L = int(line_cells) if line_cells else 2 * n_cells
    m = model.copy()
    member = network_stimulus(m, L)
    if not member:
        raise InvalidParameter(f"{model.name} has no stim_amplitude parameter to start the pulse with")
    if runtime is None:                 # the host's fastest for a coupled line: c when a compiler is here
        runtime = choose_runtime(L, network=True, backend="cpu").runtime
    sim = Simulation(m, runtime=runtime, network=Network("line", L, state, float(D)), member_params=member,
                     integrator=integrator)
    s = list(m.states).index(state)
    steps = max(1, int(round(chunk_ms / dt)))
    excited = np.zeros(L, dtype=bool)
    first_up = np.full(L, np.nan)
    t = 0.0
    while True:
        _, y = sim.advance(steps, dt, record=[s], every=1)
        v_hist = y[:, 0, :]                           # (steps, L)
        times = t + dt * np.arange(1, steps + 1)
        up = (v_hist > threshold) & ~excited[None, :]
        hit = up.any(axis=0)
        first_up[hit] = times[np.argmax(up[:, hit], axis=0)]
        excited |= hit
        t = sim.t
        v = v_hist[-1]
        if not excited.any():
            if t > 100.0 + m.params.get("stim_start", 0.0):
                raise InvalidParameter("the stimulus did not excite the line")
        else:
            done = excited & (v < repolarised)
            r = int(np.argmin(done)) - 1 if not done.all() else L - 1   # cells 0..r excited and repolarised
            front = int(np.max(np.nonzero(excited)[0]))
            if front >= L - 1:
                raise InvalidParameter(f"the pulse reached the end of the {L}-cell line before its tail "
                                       f"repolarised: the wavelength exceeds {L} cells at D = {D:g}; "
                                       "use a smaller D or more cells")
            if r >= 0:
                break
            if front <= 5 and t > 200.0 + m.params.get("stim_start", 0.0):
                raise InvalidParameter(f"the pulse does not propagate at D = {D:g} (coupling too weak)")
        if t > t_max:
            raise InvalidParameter(f"no complete pulse within {t_max:g} ms at D = {D:g}")
    length = front - r + 1 + ahead                     # repolarised cell r … front … ahead cells
    if length > n_cells:
        raise InvalidParameter(f"a ring of {n_cells} cells is shorter than the pulse at D = {D:g}: front to "
                               f"repolarised tail {front - r + 1} cells (+ {ahead} ahead); use a smaller D "
                               f"or at least {length} cells")
    spare = n_cells - length
    start = max(0, r - spare // 2)
    start = min(start, L - n_cells)
    if start + n_cells - 1 < front + ahead:
        raise InvalidParameter(f"line of {L} cells too short for the window; pass line_cells > {front + ahead + 1}")
    # conduction velocity over the middle of the excited stretch (away from the stimulated end)
    a, b = max(5, front // 4), max(6, (3 * front) // 4)
    cv = (b - a) / (first_up[b] - first_up[a]) if b < front and first_up[b] > first_up[a] else float("nan")
    full = sim.state()
    info = {"t_cut": t, "front": front - start, "tail": r - start, "pulse_cells": front - r + 1,
            "cv_cells_per_ms": float(cv), "line_start": start, "line_cells": L, "D": float(D), "dt": dt}
    return OneWayWave(full[:, start:start + n_cells].copy(), info)


def front_passages(t, v, threshold: float = -20.0) -> np.ndarray:
    """Times at which the trace ``v`` crosses ``threshold`` upwards (linear interpolation)."""
    t, v = np.asarray(t, dtype=float), np.asarray(v, dtype=float)
    k = np.nonzero((v[:-1] <= threshold) & (v[1:] > threshold))[0]
    w = (threshold - v[k]) / (v[k + 1] - v[k])
    return t[k] + w * (t[k + 1] - t[k])


def circulation(t, V, threshold: float = -20.0, cell: int = 0) -> dict:
    """What a recorded ring does: ``V`` is (n_times, n_cells) sampled at ``t``.

    Returns a dict: ``events`` (time, cell) of every front passage sorted by time; ``direction``
    +1/−1 when every passage is followed by one at the next/previous cell modulo the ring (a single
    wave going one way), else 0; ``passages`` the times the front passed ``cell``;
    ``revolutions`` their number; ``periods`` the intervals between them, ``period`` their mean and
    ``period_spread`` (max − min) / mean."""
    V = np.asarray(V, dtype=float)
    n = V.shape[1]
    ev = [(tt, i) for i in range(n) for tt in front_passages(t, V[:, i], threshold)]
    ev.sort()
    cells = np.array([c for _, c in ev], dtype=int)
    steps = np.diff(cells) % n if len(cells) > 1 else np.zeros(0, dtype=int)
    direction = 0
    if len(steps) and np.all(steps == 1):
        direction = 1
    elif len(steps) and np.all(steps == n - 1):
        direction = -1
    passes = front_passages(t, V[:, cell], threshold)
    periods = np.diff(passes)
    mean = float(periods.mean()) if len(periods) else float("nan")
    spread = float((periods.max() - periods.min()) / mean) if len(periods) else float("nan")
    return {"events": np.array(ev).reshape(-1, 2), "direction": direction, "passages": passes,
            "revolutions": len(passes), "periods": periods, "period": mean, "period_spread": spread}
