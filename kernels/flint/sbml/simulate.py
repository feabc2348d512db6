"""The SBML reference simulator's integration loop (see :mod:`.solver` for the algorithm): scipy LSODA
stepped one step at a time, watch vector and root finding for events and discontinuities, delays on
the stored dense-output history, output points from the dense output."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidParameter, SimulationBlowUp
from ... import limits
from .solver import CompiledSbml
from .system import SbmlSystem, read_sbml_system
# Imports inside functions: SciPy (LSODA, brentq) loads on the first simulation.


@dataclass
class Pending:
    time: float
    seq: int
    event: int
    values: tuple | None


class Stopped(Exception):
    """Raised out of :func:`simulate` when its ``stop()`` callback returned True."""


def simulate(system: SbmlSystem | CompiledSbml, times, rtol: float = 1e-10, atol: float | None = None,
             seed: int = 0, on_output=None, stop=None, on_event=None) -> dict:
    """Values of every id (species: symbol value; ``@a:S``: amount of S) at ``times`` (ascending).

    ``on_output(i, t, row)``: called when output point i is evaluated (row in ``CompiledSbml.out_names``
    order; a point is final once a later point has been reported).  ``stop()``: polled every
    integrator step and output point; returning True raises :class:`Stopped`.  ``on_event(t, event_id)``:
    called at every event execution."""
    from scipy.integrate import LSODA
    c = system if isinstance(system, CompiledSbml) else CompiledSbml(system)
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or len(times) == 0 or np.any(np.diff(times) < 0) or times[0] < 0:
        raise InvalidParameter("output times must be a non-empty ascending 1-D array of times >= 0")
    n = len(c.states)
    y = c.y0.copy()
    if n == 0:
        y = np.zeros(1)
    elif not c.still and not np.all(np.isfinite(y)):
        bad = [f"{x} ({y[i]})" for i, x in enumerate(c.states) if not math.isfinite(y[i])]
        raise InvalidParameter(f"{c.s.source}: the initial value of {', '.join(bad[:5])} is not a finite number; "
                               "the integrator needs finite initial values of the variables that change")
    if atol is None:
        nz = np.abs(c.y0[np.isfinite(c.y0) & (c.y0 != 0)])
        scale = float(nz.max()) if nz.size else 1.0
        atol = 1e-12 * min(1.0, scale)
    rhs = (lambda t, y: c.fn_rhs(t, y)) if n else (lambda t, y: [0.0])
    unwrap = (lambda y: y) if n else (lambda y: y[:0])
    opts = {"rtol": rtol, "atol": atol}
    hist = None
    still_step = max(float(times[-1]) / max(len(times) - 1, 1), 1e-300) if len(times) > 1 else math.inf
    if c.delay_fns:
        hist = c.hist = _History(0.0, unwrap(y).copy())
        if math.isfinite(c.delay_min):
            opts["max_step"] = c.delay_min / 2
    out = np.full((len(times), len(c.out_names)), np.nan)
    ne = c.n_events
    t = 0.0                              # SBML model time starts at 0; outputs from times[0]
    prev = list(c.fn_watch(t, unwrap(y)))
    for k, ev in enumerate(c.s.events):
        prev[k] = ev.initial_value
    pending: list[Pending] = []
    seq = [0]
    rng = np.random.default_rng(seed)

    def watch(t, y):
        if stop is not None and stop():
            raise Stopped
        return list(c.fn_watch(t, unwrap(y)))

    def schedule(k, t, y):
        ev = c.s.events[k]
        d = 0.0
        if c.fn_delay[k] is not None:
            d = float(c.fn_delay[k](t, unwrap(y))[0])
            if not d >= 0:
                raise InvalidParameter(f"event {ev.id}: delay {d} is negative or undefined at t={t}")
        vals = tuple(c.fn_assign[k](t, unwrap(y))) if ev.use_trigger_time_values else None
        seq[0] += 1
        pending.append(Pending(t + d, seq[0], k, vals))

    def update(t, y, w):
        for k in range(ne):
            if w[k] and not prev[k]:
                schedule(k, t, y)
            elif prev[k] and not w[k] and not c.s.events[k].persistent:
                pending[:] = [p for p in pending if p.event != k]
        prev[:] = w

    def apply(k, vals, t, y):
        ev = c.s.events[k]
        y0, y = y, y.copy()
        conc = []
        for (var, _), v in zip(ev.assignments, vals):
            sp = c.s.species.get(var)
            if sp is not None and not sp.hosu:
                conc.append((var, sp.compartment, v))
            else:
                y[c.sidx[var]] = v
        if conc:                 # amount = assigned concentration × size before this event's assignments
            vals_now = dict(zip(c.out_names, c.fn_values(t, unwrap(y0))))
            for var, comp, v in conc:
                y[c.sidx[var]] = v * vals_now[comp]
        return y

    instant = {"t": None, "names": []}       # firings at one model time (kernels.limits: events per instant)
    most = limits.current().events_per_instant

    def count(ks, t):
        """ExpansionLimit naming the events when more than the limit fire (or their triggers cross)
        at one time: events that re-trigger each other, and Zeno events, whose times accumulate
        (they count as one time once they agree to 1e-12 relative)."""
        t0 = instant["t"]
        if t0 is None or abs(t - t0) > 1e-12 * max(1.0, abs(t)):
            instant["t"], instant["names"] = t, []
        instant["names"] += [c.s.events[k].id or f"#{k + 1}" if k < ne else "a piecewise condition" for k in ks]
        if len(instant["names"]) > most:
            raise limits.too_many_events(instant["names"][-2 * len(c.s.events) - 2:], t)

    def process(t, y):
        update(t, y, watch(t, y))
        while True:
            ready = [p for p in pending if p.time <= t]
            if not ready:
                return y
            p = ready[0]
            if len(ready) > 1:
                def prio(p):
                    f = c.fn_prio[p.event]
                    pr = float(f(t, unwrap(y))[0]) if f is not None else -math.inf
                    return pr if pr == pr else -math.inf
                pr = {id(q): prio(q) for q in ready}
                ready.sort(key=lambda q: (-pr[id(q)], q.time, q.event, q.seq))
                top = [q for q in ready if pr[id(q)] == pr[id(ready[0])]]
                # equal explicit priorities: the order is random (SBML L3V2 §4.11.7)
                p = top[int(rng.integers(len(top)))] if math.isfinite(pr[id(ready[0])]) else ready[0]
            pending.remove(p)
            count([p.event], t)
            if on_event is not None:
                on_event(t, c.s.events[p.event].id)
            vals = p.values if p.values is not None else tuple(c.fn_assign[p.event](t, unwrap(y)))
            y = apply(p.event, vals, t, y)
            update(t, y, watch(t, y))

    def record(i, t, y):
        out[i] = c.fn_values(t, unwrap(y))
        if c.fast_N is not None:
            c.check_fast_runtime(t, unwrap(y))
        if on_output is not None:
            on_output(i, t, out[i])
        if stop is not None and stop():
            raise Stopped

    def settle(t, y, oi):
        """At the end of an integration segment: the events due at ``t`` fired, the delay history's
        last state kept, every output time up to ``t`` recorded; (state, next output index)."""
        y = process(t, y)
        if hist is not None:
            hist.y_last = unwrap(y).copy()
        while oi < len(times) and times[oi] <= t:
            record(oi, t, y)
            oi += 1
        return y, oi

    y = process(t, y)
    oi = 0
    while oi < len(times) and times[oi] <= t:
        record(oi, t, y)
        oi += 1
    t_end = float(times[-1])
    budget = [limits.current().solver_steps]      # integrator steps left (shared with _integrate_to)
    while oi < len(times):
        t_stop = min([t_end] + [p.time for p in pending])
        if t_stop <= t:
            y = process(t, y)
            t_stop = min([t_end] + [p.time for p in pending])
            if t_stop <= t:
                raise SimulationBlowUp(f"{c.s.source}: events keep firing at t={t}")
        if n and not c.still and not np.all(np.isfinite(y)):
            bad = [x for i, x in enumerate(c.states) if not math.isfinite(y[i])]
            raise SimulationBlowUp(f"{c.s.source}: {', '.join(bad[:5])} became non-finite at t={t:g} (an event "
                                   "assigned it)")
        solver = LSODA(rhs, t, y, t_stop, **opts) if n and not c.still else _StillSolver(t, y, t_stop, still_step)
        while True:
            t_old, y_old = solver.t, solver.y.copy()
            msg = solver.step()
            budget[0] -= 1
            if solver.status == "failed":
                raise SimulationBlowUp(f"{c.s.source}: integration failed at t={solver.t}: {msg}")
            if budget[0] < 0:
                rates = np.asarray(rhs(solver.t, solver.y), dtype=float)
                bad = [x for i, x in enumerate(c.states) if i < rates.size and not math.isfinite(rates[i])]
                if bad:
                    raise SimulationBlowUp(f"{c.s.source}: the rate of change of {', '.join(bad[:5])} is not a "
                                           f"finite number at t={solver.t:g}; the integrator cannot go on")
                raise limits.too_many_steps(c.s.source, solver.t)
            t_new, y_new = solver.t, solver.y
            if hist is not None:
                hist.push(t_old, t_new, solver.dense_output(), unwrap)
            w = watch(t_new, y_new)
            if w != prev:
                dense = solver.dense_output()
                lo, hi = _locate(c, watch, prev, w, dense, t_old, t_new, unwrap)
                while hi - lo > 1e-14 * max(1.0, abs(hi)):
                    mid = 0.5 * (lo + hi)
                    if mid <= lo or mid >= hi:
                        break
                    if watch(mid, dense(mid)) == prev:
                        lo = mid
                    else:
                        hi = mid
                w_hi = watch(hi, dense(hi))
                if n and not c.still and any(c.rhs_watch[i] and w_hi[i] != prev[i] for i in range(len(prev))):
                    # the right-hand side switched inside the step: re-integrate the smooth piece [t_old, hi]
                    if hist is not None:
                        hist.pop()
                    y_hi = _integrate_to(LSODA, rhs, t_old, y_old, hi, opts, times, oi, out, record, unwrap, hist,
                                         budget, c.s.source)
                else:
                    y_hi = dense(hi)
                    while oi < len(times) and times[oi] < hi:
                        record(oi, times[oi], dense(times[oi]))
                        oi += 1
                while oi < len(times) and times[oi] < hi:
                    oi += 1
                t = hi
                count([k for k in range(len(prev)) if w_hi[k] != prev[k]], t)
                y, oi = settle(t, y_hi, oi)
                break
            dense = None
            while oi < len(times) and times[oi] < t_new:
                if dense is None:
                    dense = solver.dense_output()
                record(oi, times[oi], dense(times[oi]))
                oi += 1
            if solver.status == "finished" or t_new >= t_stop:
                t = t_stop
                y, oi = settle(t, y_new.copy(), oi)
                break
    return {nm: out[:, j] for j, nm in enumerate(c.out_names)}


def _locate(c, watch, prev, w_new, dense, lo, hi, unwrap):
    """Narrow the bracket of the first watch change with Brent's method (scipy brentq) on the
    continuous gaps a - b of the relational atoms that changed; the bisection that follows only
    polishes.  Falls back to the whole step when the narrowed bracket does not hold."""
    from scipy.optimize import brentq
    best, done = None, set()
    for i in range(len(w_new)):
        if w_new[i] == prev[i] or c.gap_index[i] is None or c.gap_index[i] in done:
            continue
        done.add(c.gap_index[i])
        g = lambda tt, i=i: c.fn_gap(tt, unwrap(dense(tt)))[c.gap_index[i]]  # noqa: E731
        ga, gb = g(lo), g(hi)
        if not (np.isfinite(ga) and np.isfinite(gb)) or ga * gb > 0:
            continue
        if ga == 0 or gb == 0:
            a = b = lo if ga == 0 else hi
        else:
            try:
                a = b = brentq(g, lo, hi, xtol=1e-15 * max(1.0, abs(hi)), rtol=1e-15, maxiter=100)
            except (RuntimeError, ValueError):
                continue
        eps = 1e-13 * max(1.0, abs(b))
        a2, b2 = max(lo, a - eps), min(hi, b + eps)
        if best is None or b2 < best[1]:
            best = (a2, b2)
    if best is not None and best[0] < best[1]:
        a2, b2 = best
        if watch(a2, dense(a2)) == prev and watch(b2, dense(b2)) != prev:
            return a2, b2
    return lo, hi


class _StillSolver:
    """Stand-in for LSODA when the model has no state variables (only time moves): steps of at
    most one output interval, constant dense output."""

    def __init__(self, t, y, t_bound, max_step):
        self.t, self.y, self.t_bound, self.max_step = t, y, t_bound, max_step
        self.t_old, self.status = None, "running"

    def step(self):
        self.t_old = self.t
        self.t = min(self.t_bound, self.t + self.max_step)
        if self.t >= self.t_bound:
            self.status = "finished"

    def dense_output(self):
        y = self.y.copy()
        return lambda tau: y


class _History:
    """Dense-output segments of the states, for the delay csymbol."""

    def __init__(self, t0, y0):
        self.t_first, self.y_first, self.y_last = t0, y0, y0
        self.t1, self.f = [t0], [lambda tau, y0=y0: y0]

    def push(self, ta, tb, dense, unwrap):
        self.t1.append(tb)
        self.f.append(lambda tau, d=dense: unwrap(d(tau)))
        self.y_last = unwrap(dense(tb))

    def pop(self):
        if len(self.t1) > 1:
            self.t1.pop()
            self.f.pop()
            self.y_last = self.f[-1](self.t1[-1])


def _integrate_to(LSODA, rhs, t0, y0, t1, opts, times, oi, out, record, unwrap, hist=None, budget=None,
                  source=""):
    """Integrate from t0 to t1, recording the output times passed; each step spends one of
    ``budget[0]`` (the run's integrator steps left, :func:`kernels.limits.too_many_steps` at 0)."""
    if t1 <= t0:
        return y0
    solver = LSODA(rhs, t0, y0, t1, **opts)
    while solver.status == "running":
        ta = solver.t
        solver.step()
        if budget is not None:
            budget[0] -= 1
            if budget[0] < 0:
                raise limits.too_many_steps(source, solver.t)
        if hist is not None and solver.status != "failed":
            hist.push(ta, solver.t, solver.dense_output(), unwrap)
        if solver.status == "failed":
            raise SimulationBlowUp(f"integration failed at t={solver.t}")
        dense = None
        while oi < len(times) and times[oi] < min(solver.t, t1):
            if dense is None:
                dense = solver.dense_output()
            record(oi, times[oi], dense(times[oi]))
            oi += 1
    return solver.y.copy()


def simulate_file(path, times, variables: list[str], amount: set[str], concentration: set[str]) -> dict:
    """Simulate an SBML file and return each requested variable at ``times``.

    Species are reported as amounts when listed in ``amount``, as concentrations when listed in
    ``concentration``, otherwise as their SBML symbol value (amount if hasOnlySubstanceUnits, else
    concentration).  Compartments, parameters, species references and reaction ids (rate = kinetic
    law value) are reported as they are.  Raises Unsupported for refused constructs."""
    system = read_sbml_system(str(path))
    c = CompiledSbml(system)
    res = simulate(c, np.asarray(times, dtype=float))
    out = {}
    for v in variables:
        if v in system.species:
            sp = system.species[v]
            a = res["@a:" + v]
            if v in amount:
                out[v] = a
            elif v in concentration:
                out[v] = res[v] if not sp.hosu else a / res[sp.compartment]
            else:
                out[v] = res[v]
        elif v in res:
            out[v] = res[v]
        else:
            raise InvalidParameter(f"{system.source}: variable {v!r} is not in the model")
    return out
