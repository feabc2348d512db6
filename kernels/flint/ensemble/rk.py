"""Adaptive ensemble integrator of the ODE core: Dormand–Prince 5(4) with events by root finding.

NumPy "twin" of the CUDA kernels in ``ensemble_rk.cu``: the arrays hold one column per ensemble
member and every member follows its own control flow (its own t, step size, rejections, events) —
exactly what one CUDA thread does; member-dependent branches are masks here.

Algorithm (Hairer, Nørsett & Wanner, *Solving ODEs I*, 2nd ed., §II.4–II.6 and the DOPRI5 code):
  * DOPRI5 tableau, FSAL (k7 of an accepted step is k1 of the next);
  * error norm  err = sqrt(mean(((y5 − ŷ4) / (atol + rtol·max(|y|, |y_new|)))²)), accepted when ≤ 1;
  * PI step controller of DOPRI5 (β = 0.04, safety 0.9, factor in [0.2, 10]); initial step by
    Hairer's ``hinit``; the step never exceeds ``hmax`` (default: the output interval);
  * dense output: DOPRI5's 4th-order continuous extension (coefficients d1..d7) for the output grid;
  * events: after each accepted step the watch vector (event triggers and the relational conditions
    of the right-hand side, :mod:`kernels.flint.sbml.core`) is evaluated at the step's end and, on the
    dense output, at 1/4, 1/2 and 3/4 of it (a trigger true for less than a step is still seen; the
    first sample that differs ends the bracket); where it changed, the first
    switching time is bracketed by the Illinois method on the dense output of the continuous gaps
    a − b of the relational atoms, then bisected on the Boolean watch vector to 1e-14 relative; the
    step is redone from the old point to that time, and events fire; integration restarts (k1
    recomputed).  Outputs at an event time get the post-event values.
  * events (SBML L3V2 §4.11), per member: a rising trigger schedules an instance at t + delay (the
    delay, and the assignment values if useValuesFromTriggerTime, evaluated at the trigger time) in
    the member's queue of at most queue_capacity() pending instances; a falling trigger cancels the pending
    instances of a non-persistent event; steps end at the earliest pending time; the due instances
    execute one at a time — highest priority first, equal finite priorities in random order (the
    member's SplitMix64 stream of ``seed``), otherwise by (time, event, scheduling order) — with the
    triggers re-evaluated after each.  At t0 the triggers start at their initialValue, so a trigger
    true at t0 with initialValue false fires then.  The same rules as the CPU reference
    (:mod:`kernels.flint.sbml.simulate`).
  * float64 throughout.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidParameter, SimulationBlowUp, Unsupported
from ..compiler import Program, compile_model
from ..runtimes.codegen import expr_code
from ..sbml.core import lower_system

# Dormand–Prince 5(4) (Hairer's dopri5.f)
C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
A = ((),
     (1 / 5,),
     (3 / 40, 9 / 40),
     (44 / 45, -56 / 15, 32 / 9),
     (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
     (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
     (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)
D = (-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799, -10690763975 / 1880347072,
     701980252875 / 199316789632, -1453857185 / 822651844, 69997945 / 29380423)
SAFE, FACL, FACR, BETA = 0.9, 0.2, 10.0, 0.04
# DOPRI5's stiffness test (the kernel's DP_S*, DP_NSTIFF): y1 − y6 = h·Σ S_j·k_j
S = (35 / 384 - 9017 / 3168, 355 / 33, 500 / 1113 - 46732 / 5247, 125 / 192 - 49 / 176, -2187 / 6784 + 5103 / 18656,
     11 / 84)
NSTIFF = 1000
MAX_STEPS = 200_000        # per member; beyond it the member is refused as (probably) stiff
MAX_EVENTS_AT_ONCE = 1000  # event executions at one instant (cascade limit)
MAXP = 64                  # pending event instances per member, at least (the kernel's queue; see queue_capacity)
NSAMPLE = 4                # watch samples per accepted step (dense output at 1/4, 1/2, 3/4 and the end)


def numpy_function(prog: Program, outputs: list[str] | None = None, scalar: bool = False):
    """The Program's expressions as a function f(S, t, P, K) → list: the named outputs (slots), or
    the derivatives when ``outputs`` is None.  Same operations, same order as the IS bytecode and the
    TS C code (``runtimes.expr_code``).  scalar: Python floats and ``math`` (one member; raises on
    domain errors/division by zero, where the caller falls back to the NumPy version)."""
    used = sorted({v for (op, a, v) in prog.nodes if op == "state"})
    lines = ["def f(S, t, P, K):"] + [f"    s{s} = S[{s}]" for s in used]
    lines += [f"    {v} = {e}" for v, e in expr_code(prog, "py" if scalar else "np")]
    outs = [f"v{d}" for d in prog.deriv_slots] if outputs is None else [f"v{prog.slots[n]}" for n in outputs]
    lines.append("    return [" + ", ".join(outs) + "]")
    ns = {"np": np, **{k: getattr(math, k) for k in dir(math) if not k.startswith("_")}, "min": min, "max": max}
    src = "\n".join(lines)
    exec(src, ns)      # noqa: S102 — our own generated code
    return ns["f"]


class Problem:
    """A lowered SBML system (:class:`~kernels.flint.sbml.core.CoreSystem`) compiled for ``n`` members.

    member_params: SBML parameter id → n values (an ensemble)."""

    def __init__(self, core, n: int = 1, member_params: dict | None = None):
        self.core = core
        self.n = n
        mp = {}
        for k, v in (member_params or {}).items():
            if k not in core.param_ids:
                raise InvalidParameter(f"{k!r} is not a constant parameter of {core.source}")
            mp[core.param_ids[k]] = v
        self.prog = compile_model(core.model, n, mp)
        self.aux_prog = compile_model(core.aux, n, mp)
        self.ns = core.model.n_states
        ev = core.events
        self.aux_names = list(core.watch) + [g for g in core.gaps if g] + core.obs_names \
            + [v for e in ev for v in e.values] + [v for e in ev for v in e.conc if v] \
            + [e.priority for e in ev if e.priority] + [e.delay for e in ev if e.delay]
        self.aux_index = {nm: i for i, nm in enumerate(dict.fromkeys(self.aux_names))}
        self._rhs = numpy_function(self.prog)
        self._aux = numpy_function(self.aux_prog, list(self.aux_index))
        self._rhs1 = numpy_function(self.prog, scalar=True)
        self._aux1 = numpy_function(self.aux_prog, list(self.aux_index), scalar=True)
        self._K1 = [float(v) for v in self.prog.consts]
        self._AK1 = [float(v) for v in self.aux_prog.consts]
        self.P = self.prog.pvar_values
        self.K = self.prog.consts
        self.y0 = np.array(list(core.model.states.values()), dtype=float)[:, None].repeat(n, 1)

    def rhs(self, t, Y, cols=None):
        """dY/dt, (ns, m) for the member columns ``cols`` (default all)."""
        P = self.P if cols is None else self.P[:, cols]
        if Y.shape[1] == 1:                      # one member: Python floats (fast), NumPy on IEEE cases
            try:
                d = self._rhs1(Y[:, 0].tolist(), float(np.asarray(t).reshape(-1)[0]), P[:, 0].tolist(), self._K1)
                return np.array(d, dtype=float).reshape(Y.shape)
            except (ArithmeticError, ValueError):
                pass
        with np.errstate(all="ignore"):
            d = self._rhs(Y, t, P, self.K)
        return np.array([np.broadcast_to(np.asarray(v, dtype=float), Y.shape[1:]) for v in d]).reshape(Y.shape)

    def aux(self, t, Y, cols=None) -> dict:
        """Named aux outputs (watch 0/1, gaps, event values, priorities, observables) at (t, Y)."""
        P = self.aux_prog.pvar_values if cols is None else self.aux_prog.pvar_values[:, cols]
        if Y.shape[1] == 1:
            try:
                vals = self._aux1(Y[:, 0].tolist(), float(np.asarray(t).reshape(-1)[0]), P[:, 0].tolist(), self._AK1)
                return {nm: np.array([float(v)]) for nm, v in zip(self.aux_index, vals)}
            except (ArithmeticError, ValueError):
                pass
        with np.errstate(all="ignore"):
            vals = self._aux(Y, t, P, self.aux_prog.consts)
        return {nm: np.broadcast_to(np.asarray(v, dtype=float), Y.shape[1:]) for nm, v in zip(self.aux_index, vals)}


def _dense(yold, ynew, ks, h, theta):
    """DOPRI5 continuous extension at theta ∈ [0, 1] of the step (vectorised over members)."""
    r2 = ynew - yold
    r3 = h * ks[0] - r2
    r4 = r2 - h * ks[6] - r3
    r5 = h * sum(D[j] * ks[j] for j in range(7) if D[j])
    th1 = 1.0 - theta
    return yold + theta * (r2 + th1 * (r3 + theta * (r4 + th1 * r5)))


def _step(pb, t, y, k1, h, cols, rtol, atol):
    """One DOPRI5 step for member columns cols: (y_new, stages k1..k7, err)."""
    ks = [k1]
    for s in range(1, 7):
        yi = y + h * sum(A[s][j] * ks[j] for j in range(s) if A[s][j])
        ks.append(pb.rhs(t + C[s] * h, yi, cols))
    ynew = y + h * sum(A[6][j] * ks[j] for j in range(6) if A[6][j])
    ks[6] = pb.rhs(t + h, ynew, cols)
    errv = h * sum(E[j] * ks[j] for j in range(7) if E[j])
    sc = atol + rtol * np.maximum(np.abs(y), np.abs(ynew))
    with np.errstate(all="ignore"):
        err = np.sqrt(np.mean((errv / sc) ** 2, axis=0))
    err = np.where(np.isfinite(err), err, np.inf)
    return ynew, ks, err


def _hinit(pb, t, y, f0, rtol, atol, hmax, cols):
    """Hairer's initial step size (order 5)."""
    sc = atol + rtol * np.abs(y)
    d0 = np.sqrt(np.mean((y / sc) ** 2, axis=0))
    d1 = np.sqrt(np.mean((f0 / sc) ** 2, axis=0))
    with np.errstate(all="ignore"):
        h0 = np.where((d0 < 1e-10) | (d1 < 1e-10), 1e-6, 0.01 * d0 / d1)
    h0 = np.minimum(h0, hmax)
    f1 = pb.rhs(t + h0, y + h0 * f0, cols)
    with np.errstate(all="ignore"):
        d2 = np.sqrt(np.mean(((f1 - f0) / sc) ** 2, axis=0)) / h0
        dm = np.maximum(d1, d2)
        h1 = np.where(dm <= 1e-15, np.maximum(1e-6, h0 * 1e-3), (0.01 / dm) ** 0.2)
    h = np.minimum(np.minimum(100 * h0, h1), hmax)
    return np.where(np.isfinite(h) & (h > 0), h, 1e-6)


M64 = (1 << 64) - 1


def mix64(z: int) -> int:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014) on an unsigned 64-bit integer; the CUDA
    kernel's ``dp_mix64`` is the same function, so twin and kernel draw the same numbers."""
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def queue_capacity(core) -> int:
    """The pending event instances a member may hold: MAXP, or twice the events when more."""
    return max(MAXP, 2 * core.n_events)


def member_key(seed: int, m: int) -> int:
    """The random stream of member ``m`` under ``seed``: its k-th draw is mix64(key + k)."""
    return mix64((mix64(int(seed) & M64) + int(m)) & M64)


def draw(key: int, k: int, n: int) -> int:
    """The k-th draw of a member's stream as an index in [0, n) (top 53 bits modulo n)."""
    return (mix64((key + k) & M64) >> 11) % n


class EventState:
    """Per-member event bookkeeping (one CUDA thread's registers/local arrays): the pending event
    instances in the order they were scheduled, each [execution time, sequence number, event, values
    of useValuesFromTriggerTime or None], the previous watch vector and the member's random stream."""

    def __init__(self, pb, m, seed: int = 0, fired: list | None = None):
        self.pb, self.m, self.fired = pb, m, fired
        self.pend: list = []
        self.seq = 0
        self.key, self.draws = member_key(seed, m), 0
        self.prev = None

    def next_time(self) -> float:
        """The earliest execution time of a pending instance (inf when none)."""
        return min((p[0] for p in self.pend), default=math.inf)


def watch(pb, A):
    return tuple(bool(A[w][0] != 0.0) for w in pb.core.watch)


def update(pb, es, A, w, t):
    """A rising trigger schedules an instance at t + delay (delay and, if useValuesFromTriggerTime,
    the assignment values taken now); a falling trigger cancels the pending instances of a
    non-persistent event (SBML L3V2 §4.11.2–4.11.4)."""
    for k, ev in enumerate(pb.core.events):
        if w[k] and not es.prev[k]:
            d = float(A[ev.delay][0]) if ev.delay else 0.0
            if not d >= 0:
                raise InvalidParameter(f"{pb.core.source}: event {ev.id}: delay {d} is negative or undefined "
                                       f"at t={t}")
            if len(es.pend) >= queue_capacity(pb.core):
                raise Unsupported(f"{pb.core.source}: more than {queue_capacity(pb.core)} event instances pending "
                                  f"at once (the GPU kernel's queue holds that many)")
            es.seq += 1
            vals = [float(A[v][0]) for v in ev.values] if ev.use_trigger_time_values else None
            es.pend.append([t + d, es.seq, k, vals])
        elif es.prev[k] and not w[k] and not ev.persistent:
            es.pend = [p for p in es.pend if p[2] != k]
    es.prev = w


def _pick(pb, es, A, ready) -> int:
    """The index in es.pend of the instance to execute next: highest priority (none or NaN: −inf);
    among equal finite priorities a random one (SBML L3V2 §4.11.7; the member's seeded stream),
    otherwise the earliest (time, event, sequence)."""
    if len(ready) == 1:
        return ready[0]
    pv = {}
    for i in ready:
        pr = pb.core.events[es.pend[i][2]].priority
        v = float(A[pr][0]) if pr else -math.inf
        pv[i] = v if v == v else -math.inf
    bp = max(pv.values())
    top = [i for i in ready if pv[i] == bp]
    if len(top) > 1 and math.isfinite(bp):
        es.draws += 1
        return top[draw(es.key, es.draws, len(top))]
    return min(top, key=lambda i: (es.pend[i][0], es.pend[i][2], es.pend[i][1]))


def process(pb, es, t, y):
    """Execute the instances due at time t on member es.m's state y (ns,) (SBML L3V2 §4.11.5–4.11.7)."""
    col = [es.m]
    Y = y[:, None].copy()
    A = pb.aux(t, Y, col)
    update(pb, es, A, watch(pb, A), t)
    for _ in range(MAX_EVENTS_AT_ONCE):
        ready = [i for i, p in enumerate(es.pend) if p[0] <= t]
        if not ready:
            return Y[:, 0]
        _, _, k, inst = es.pend.pop(_pick(pb, es, A, ready))
        ev = pb.core.events[k]
        if es.fired is not None:
            es.fired.append((es.m, t, k))
        vals = inst if inst is not None else [float(A[v][0]) for v in ev.values]
        Ynew = Y.copy()
        for si, v, cv in zip(ev.targets, vals, ev.conc):
            Ynew[si, 0] = v * float(A[cv][0]) if cv else v
        Y = Ynew
        A = pb.aux(t, Y, col)
        update(pb, es, A, watch(pb, A), t)
    raise SimulationBlowUp(f"{pb.core.source}: events keep firing at t={t}")


def locate(pb, es, t0, h, at, wnew):
    """First switching time in (t0, t0+h]: Illinois on the changed gaps, then bisection on the watch.
    ``at(tt)``: the member's state (ns,) at tt from the step's dense output; ``wnew``: the watch at t0+h."""
    col = [es.m]

    def same(tt):
        return watch(pb, pb.aux(tt, at(tt)[:, None], col)) == es.prev
    lo, hi = t0, t0 + h
    best = None
    A_lo, A_hi = pb.aux(lo, at(lo)[:, None], col), pb.aux(hi, at(hi)[:, None], col)
    seen = set()
    for i, g in enumerate(pb.core.gaps):
        if g is None or wnew[i] == es.prev[i] or g in seen:
            continue
        seen.add(g)

        def gap(tt, g=g):
            return float(pb.aux(tt, at(tt)[:, None], col)[g][0])
        a, b = lo, hi
        ga, gb = float(A_lo[g][0]), float(A_hi[g][0])
        if not (math.isfinite(ga) and math.isfinite(gb)) or ga * gb > 0:
            continue
        side, tol = 0, 4e-15 * max(1.0, abs(hi))
        for _ in range(60):
            if b - a <= tol or ga == gb:
                break
            mid = b - gb * (b - a) / (gb - ga)
            if mid != mid:
                mid = 0.5 * (a + b)
            mid = min(max(mid, a + 0.5 * tol), b - 0.5 * tol)    # off the ends: the bracket shrinks
            gm = gap(mid)
            if gm == 0:
                a = b = mid
                break
            if gm * gb > 0:
                b, gb = mid, gm
                if side == -1:
                    ga *= 0.5
                side = -1
            else:
                a, ga = mid, gm
                if side == 1:
                    gb *= 0.5
                side = 1
        eps = 1e-13 * max(1.0, abs(b))
        a2, b2 = max(lo, a - eps), min(hi, b + eps)
        if best is None or b2 < best[1]:
            best = (a2, b2)
    if best is not None and best[0] < best[1] and same(best[0]) and not same(best[1]):
        lo, hi = best
    for _ in range(200):
        if hi - lo <= 1e-14 * max(1.0, abs(hi)):
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if same(mid):
            lo = mid
        else:
            hi = mid
    return hi


def run_settings(times, y0, atol=None, hmax=None) -> tuple:
    """(times, atol, hmax) of a run of every integrator of this package (twins and kernels alike): the
    output grid checked (a non-empty ascending 1-D array of times ≥ 0), atol default
    1e-12·min(1, max |y0|) over the finite non-zero initial values, hmax default the smallest output
    interval (max(t_end, 1) for a grid of one time)."""
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or not len(times) or np.any(np.diff(times) < 0) or times[0] < 0:
        raise InvalidParameter("output times must be a non-empty ascending 1-D array of times >= 0")
    if atol is None:
        nz = np.abs(y0[np.isfinite(y0) & (y0 != 0)])
        atol = 1e-12 * min(1.0, float(nz.max()) if nz.size else 1.0)
    if hmax is None:
        dt = np.diff(times)
        hmax = float(dt[dt > 0].min()) if np.any(dt > 0) else max(float(times[-1]), 1.0)
    return times, atol, hmax


def stiffness_test(ks, hh) -> np.ndarray:
    """DOPRI5's h·λ estimate per member, h·‖k7 − k6‖ / ‖y1 − y6‖ (NaN where y1 = y6), summed in the
    kernel's order."""
    stnum = np.zeros(ks[0].shape[1])
    stden = np.zeros_like(stnum)
    for j in range(ks[0].shape[0]):
        dk = ks[6][j] - ks[5][j]
        dy = hh * (S[0] * ks[0][j] + S[1] * ks[1][j] + S[2] * ks[2][j] + S[3] * ks[3][j] + S[4] * ks[4][j]
                   + S[5] * ks[5][j])
        stnum = stnum + dk * dk
        stden = stden + dy * dy
    with np.errstate(all="ignore"):
        return np.where(stden > 0.0, hh * np.sqrt(stnum / stden), np.nan)


def integrate(pb: Problem, times, rtol: float = 1e-8, atol=None, hmax: float | None = None,
              max_steps: int = MAX_STEPS, seed: int = 0, fired: list | None = None, stiff_test: bool = False):
    """Integrate every member from t = 0 and return the observables at ``times``: (nt, nobs, n).

    atol default 1e-12·min(1, max |y0|); hmax default the smallest output interval.  A member's steps
    end at its next pending event time, where the due instances execute.  ``seed``: the random order
    of events of equal priority (member m draws from ``member_key(seed, m)``, as the kernel does).
    ``fired``: a list to which every event execution is appended as (member, t, event index).
    Raises Unsupported when a member needs more than ``max_steps`` steps (stiff) or more than queue_capacity
    pending instances, and SimulationBlowUp when the step size underflows.  ``stiff_test``: also
    Unsupported when DOPRI5's stiffness test (Hairer & Wanner II §IV.2: h·λ > 3.25 in 15 tests in a row,
    tested every NSTIFF accepted steps and after each positive one) says a member is stiff — what method
    auto asks, so that it turns to Rodas4 early instead of after ``max_steps`` steps."""
    times, atol, hmax = run_settings(times, pb.y0, atol, hmax)
    n, core = pb.n, pb.core
    y = pb.y0.copy()
    t_end = float(times[-1])
    nt = len(times)
    out = np.full((nt, len(core.obs_names), n), np.nan)
    t = np.zeros(n)
    oi = np.zeros(n, dtype=int)
    evs = [EventState(pb, m, seed, fired) for m in range(n)]

    def record(m, i, tt, ym):
        A = pb.aux(tt, ym[:, None], [m])
        out[i, :, m] = [A[o][0] for o in core.obs_names]

    tq = np.full(n, math.inf)          # per member: the earliest pending execution time
    for m in range(n):                  # t0: initialValue of the triggers, then t0 events
        es = evs[m]
        A = pb.aux(0.0, y[:, m:m + 1], [m])
        w = list(watch(pb, A))
        for k, ev in enumerate(core.events):
            w[k] = ev.initial_value
        es.prev = tuple(w)
        y[:, m] = process(pb, es, 0.0, y[:, m])
        tq[m] = es.next_time()
        while oi[m] < nt and times[oi[m]] <= 0.0:
            record(m, oi[m], 0.0, y[:, m])
            oi[m] += 1
    done = (oi >= nt) | (t >= t_end)
    for m in np.nonzero(done & (oi < nt))[0]:
        while oi[m] < nt:
            record(m, oi[m], t[m], y[:, m])
            oi[m] += 1
    k1 = pb.rhs(t, y)
    h = _hinit(pb, t, y, k1, rtol, atol, hmax, None)
    facold = np.full(n, 1e-4)
    steps = np.zeros(n, dtype=int)
    naccpt, iasti, nonsti = (np.zeros(n, dtype=int) for _ in range(3))
    while not np.all(done):
        act = ~done
        tstop = np.minimum(t_end, tq)
        hh = np.minimum(h, tstop - t)
        last = hh >= tstop - t
        ynew, ks, err = _step(pb, t, y, k1, hh, None, rtol, atol)
        steps += act
        if np.any(act & (steps > max_steps)):
            raise Unsupported(f"{core.source}: more than {max_steps} steps (stiff problem: the explicit "
                              f"Dormand–Prince integrator refuses it)")
        acc = act & (err <= 1.0)
        rej = act & ~acc
        with np.errstate(all="ignore"):
            fac11 = np.where(err > 0, err ** (0.2 - BETA * 0.75), 0.0)
            fac = np.clip(fac11 / facold ** BETA / SAFE, 1 / FACR, 1 / FACL)
            hnew_acc = np.minimum(hh / fac, hmax)
            hnew_rej = hh / np.minimum(1 / FACL, fac11 / SAFE)
        if np.any(rej):
            h = np.where(rej, hnew_rej, h)
            if np.any(rej & (h <= 1e-14 * np.maximum(1.0, np.abs(t)))):
                m = int(np.nonzero(rej & (h <= 1e-14 * np.maximum(1.0, np.abs(t))))[0][0])
                raise SimulationBlowUp(f"{core.source}: step size underflow at t={t[m]:g} (member {m})")
        if not np.any(acc):
            continue
        if stiff_test:
            naccpt += acc
            test = acc & ((naccpt % NSTIFF == 0) | (iasti > 0))
            if np.any(test):
                stiff = test & (stiffness_test(ks, hh) > 3.25)
                calm = test & ~stiff
                iasti = np.where(stiff, iasti + 1, iasti)
                nonsti = np.where(stiff, 0, np.where(calm, nonsti + 1, nonsti))
                iasti = np.where(calm & (nonsti == 6), 0, iasti)
                if np.any(iasti >= 15):
                    m = int(np.nonzero(iasti >= 15)[0][0])
                    raise Unsupported(f"{core.source}: stiff (DOPRI5's stiffness test, member {m} at t={t[m]:g}): "
                                      f"the explicit Dormand–Prince integrator refuses it")
        tnew = np.where(last, tstop, t + hh)
        A = pb.aux(tnew, ynew)
        changed = np.zeros(n, dtype=bool)
        wnew = {}
        for m in np.nonzero(acc)[0]:
            w = tuple(bool(A[nm][m] != 0.0) for nm in core.watch)
            if w != evs[m].prev:
                changed[m] = True
                wnew[m] = w
        hx = hh.copy()                     # per member: the end of the bracket of the first change
        for q in range(1, NSAMPLE if core.watch != ["w_none"] else 1):   # a trigger that rises and falls
            cand = acc & ~changed                                         # inside the step: sampled
            if not np.any(cand):
                break
            th = q / NSAMPLE
            As = pb.aux(t + th * hh, _dense(y, ynew, ks, hh, th))
            for m in np.nonzero(cand)[0]:
                w = tuple(bool(As[nm][m] != 0.0) for nm in core.watch)
                if w != evs[m].prev:
                    changed[m], wnew[m], hx[m] = True, w, th * hh[m]
        smooth = acc & ~changed
        # outputs inside the accepted smooth steps, from the dense output
        while True:
            want = smooth & (oi < nt)
            want[want] &= times[oi[want]] < tnew[want]
            if not np.any(want):
                break
            idx = np.nonzero(want)[0]
            for m in idx:
                th = (times[oi[m]] - t[m]) / hh[m]
                ym = _dense(y[:, m], ynew[:, m], [k[:, m] for k in ks], hh[m], th)
                record(m, oi[m], times[oi[m]], ym)
                oi[m] += 1
        t = np.where(smooth, tnew, t)
        y = np.where(smooth, ynew, y)
        k1 = np.where(smooth, ks[6], k1)
        for m in np.nonzero(smooth)[0]:
            evs[m].prev = tuple(bool(A[nm][m] != 0.0) for nm in core.watch)
        # members whose step ended at a pending event time: the due instances execute
        due = smooth & last & (tq <= tnew)
        for m in np.nonzero(due)[0]:
            y[:, m] = process(pb, evs[m], t[m], y[:, m])
            tq[m] = evs[m].next_time()
            while oi[m] < nt and times[oi[m]] <= t[m]:
                record(m, oi[m], t[m], y[:, m])
                oi[m] += 1
            k1[:, m] = pb.rhs(t[m:m + 1], y[:, m:m + 1], [m])[:, 0]
        # members whose watch vector changed: locate, redo the step to the switch, fire events
        for m in np.nonzero(changed)[0]:
            es = evs[m]
            ksm = [k[:, m] for k in ks]
            ya, yb, ta, hm = y[:, m].copy(), ynew[:, m], float(t[m]), float(hh[m])
            ts = locate(pb, es, ta, float(hx[m]), lambda tt: _dense(ya, yb, ksm, hm, (tt - ta) / hm),  # noqa: B023
                        wnew[m])
            hs = ts - t[m]
            if hs > 0:
                ys, kss, _ = _step(pb, np.array([t[m]]), y[:, m:m + 1], k1[:, m:m + 1], hs, [m], rtol, atol)
                while oi[m] < nt and times[oi[m]] < ts:
                    th = (times[oi[m]] - t[m]) / hs
                    record(m, oi[m], times[oi[m]], _dense(y[:, m], ys[:, 0], [k[:, 0] for k in kss], hs, th))
                    oi[m] += 1
                ym = ys[:, 0]
            else:
                ym = y[:, m]
            t[m] = ts
            y[:, m] = process(pb, es, ts, ym)
            tq[m] = es.next_time()
            while oi[m] < nt and times[oi[m]] <= ts:
                record(m, oi[m], ts, y[:, m])
                oi[m] += 1
            k1[:, m] = pb.rhs(t[m:m + 1], y[:, m:m + 1], [m])[:, 0]
        # step size for the next attempt (after an event: restart with the step that ended there)
        h = np.where(acc, hnew_acc, h)
        fired = changed | due
        h = np.where(fired, np.maximum(np.minimum(h, hmax), 1e-12 * np.maximum(1.0, np.abs(t))), h)
        facold = np.where(acc, np.maximum(err, 1e-4), facold)
        fin = act & (t >= t_end)
        for m in np.nonzero(fin)[0]:
            while oi[m] < nt:
                record(m, oi[m], t[m], y[:, m])
                oi[m] += 1
        done = done | fin
    return out


def simulate_file(path, times, variables, amount, concentration) -> dict:
    """The suite's runtime signature on the NumPy twin (one member)."""
    core = lower_system(str(path), list(variables), set(amount), set(concentration))
    res = integrate(Problem(core, 1), np.asarray(times, dtype=float))
    return {v: res[:, j, 0] for j, v in enumerate(core.observables)}
