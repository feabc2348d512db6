"""Stiff ensemble integrator of the ODE core: the Rosenbrock method Rodas4, one member a "thread".

NumPy twin of the CUDA kernel ``ensemble_rodas.cu`` (run on the GPU by :mod:`.rodas_gpu`, and on the
host CPU through :mod:`kernels.gpu.host`): arrays hold one column per member and every member follows
its own control flow (own t, step size, rejections, events), as one CUDA thread does.

Method (Hairer & Wanner, *Solving ODEs II*, 2nd ed., §IV.7, and their code RODAS): Rodas4, a
6-stage stiffly accurate Rosenbrock method of order 4 with an embedded order-3 solution, L-stable,
γ = 1/4.  Each step solves six linear systems with the one matrix E = I/(hγ) − J:

    E·k_i = f(t + c_i h, y + Σ_j a_ij k_j) + Σ_j (C_ij / h) k_j + h d_i ∂f/∂t      (i = 1 … 6)
    y_new = y + Σ_{j<6} a_6j k_j + k_6 ... (as RODAS: y5 = y + Σ a_5j k_j, y6 = y5 + k5, y_new = y6 + k6)

and the error estimate is k_6 (err = RMS(k_6 / (atol + rtol·max(|y|, |y_new|))), accepted when ≤ 1).
Step size: h_new = h / clip(err^(1/4) / 0.9, 1/6, 5), not above the output interval ``hmax``, not
above the rejected h after a rejection; a singular E halves h.  Dense output: RODAS's continuous
extension of order 3, y(θ) = (1−θ) y + θ (y_new + (1−θ)(K1 + θ K2)) with K1 = Σ h_2j k_j,
K2 = Σ h_3j k_j.  The Jacobian ∂f/∂y and ∂f/∂t come from symbolic differentiation of the model
(:mod:`.jacobian`), evaluated once per step; E is factored by a dense LU with partial pivoting per
member (no batched library call: the same elimination order as the kernel's).

The per-thread design (one member's whole integration in one thread, the model's right-hand side
and Jacobian inlined as generated code, a private small LU) follows Utkarsh, Churavy, Ma, Rackauckas
et al., "Automated translation and accelerated solving of differential equation on multiple GPU
platforms" (DiffEqGPU, CMAME 2024), whose GPURodas4 kernels are per-thread Rosenbrock solvers.

Events: as the Dormand–Prince integrator (:mod:`.rk`): after an accepted step the watch vector is
evaluated; where it changed, the switching time is found by bisection on the watch vector evaluated
on the dense output (to 1e-14 relative), the step is redone from the old point to that time, events
fire through :mod:`.rk`'s event processing, and integration restarts there.  float64 throughout.
"""
from __future__ import annotations

import numpy as np

from ...errors import SimulationBlowUp, Unsupported
from ..compiler import compile_model
from . import rk
from .history import History, fill, step_bound
from .jacobian import jacobian_model
from ..sbml.core import lower_system

# Rodas4 (Hairer & Wanner's RODAS, METH = 1)
GAMMA = 0.25
A = ((), (1.544,), (0.9466785280815826, 0.2557011698983284),
     (3.314825187068521, 2.896124015972201, 0.9986419139977817),
     (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950))
CC = ((), (-5.6688,), (-2.430093356833875, -0.2063599157091915),
      (-0.1073529058151375, -9.594562251023355, -20.47028614809616),
      (7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160),
      (8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136, -6.058818238834054))
C = (0.0, 0.386, 0.21, 0.63, 1.0, 1.0)
D = (0.25, -0.1043, 0.1035, -0.0362)
H2 = (10.12623508344586, -7.487995877610167, -34.80091861555747, -7.992771707568823, 1.025137723295662)
H3 = (-0.6762803392801253, 6.087714651680015, 16.43084320892478, 24.76722511418386, -6.594389125716872)
SAFE, FAC_MIN, FAC_MAX = 0.9, 1.0 / 6.0, 5.0        # h_new / h in [0.2, 6]
MAX_STEPS = 100_000
MAX_STATES = 64          # the kernel's per-thread dense matrix is NS×NS doubles


class StiffProblem(rk.Problem):
    """A :class:`~kernels.flint.ensemble.rk.Problem` with the Jacobian program: ``jac_prog`` (compiled
    from :func:`~.jacobian.jacobian_model` with the same member parameters), ``jac`` [(r, c, name)] and
    ``dfdt`` [(r, name)] of the structurally non-zero entries."""

    def __init__(self, core, n: int = 1, member_params: dict | None = None):
        super().__init__(core, n, member_params)
        extra = [nm for dl in getattr(core, "delayed", ()) for nm in dl[1:] if nm not in self.aux_index]
        if extra:        # the delayed expressions and delays among the aux outputs (kernel tables too)
            self.aux_names = self.aux_names + extra
            self.aux_index = {nm: i for i, nm in enumerate(dict.fromkeys(self.aux_names))}
            self._aux = rk.numpy_function(self.aux_prog, list(self.aux_index))
            self._aux1 = rk.numpy_function(self.aux_prog, list(self.aux_index), scalar=True)
        if getattr(core, "delayed", None) and getattr(core, "algebraic", None):
            raise Unsupported(f"{core.source}: delay csymbols together with algebraic rules or fast reactions (the "
                              f"values before the start would be the declared ones, not the consistent ones)")
        if self.ns > MAX_STATES:
            raise Unsupported(f"{core.source}: {self.ns} states (the Rosenbrock kernel holds at most {MAX_STATES})")
        jm, self.jac, self.dfdt = jacobian_model(core.model)
        mp = {nm: self.prog.pvar_values[k] for k, nm in enumerate(self.prog.pvar_names)}
        self.jac_prog = compile_model(jm, n, mp)
        self.jac_names = [nm for _, _, nm in self.jac] + [nm for _, nm in self.dfdt]
        self._jacf = rk.numpy_function(self.jac_prog, self.jac_names)
        self.algebraic = list(getattr(core, "algebraic", []))
        self.mass = np.ones(self.ns)                  # M = diag(mass): 0 on the algebraic rows (0 = g)
        self.mass[self.algebraic] = 0.0
        self.history = None                           # set by integrate() when the core has delays

    def _filled(self, t, Y, cols):
        if self.history is None or not self.core.delayed:
            return Y
        return fill(self, self.history, t, Y, cols, super().aux)

    def rhs(self, t, Y, cols=None):
        return super().rhs(t, self._filled(t, Y, cols), cols)

    def aux(self, t, Y, cols=None) -> dict:
        return super().aux(t, self._filled(t, Y, cols), cols)

    def jacobian(self, t, Y, cols=None):
        """(J (ns, ns, m), ∂f/∂t (ns, m)) at (t, Y) for the member columns ``cols``.  With delays, ∂f/∂t
        also carries Σ_k ∂f/∂q_k · dq_k/dt, dq_k/dt by a forward difference of the history (δ =
        2^−26·max(1, |t|)), as the kernel's ro_jac."""
        Yf = self._filled(t, Y, cols)
        J, T = self._jacobian(t, Yf, cols)
        if Yf is not Y:
            tt = np.broadcast_to(np.asarray(t, dtype=float).reshape(-1), (Y.shape[1],))
            dlt = 1.4901161193847656e-08 * np.maximum(1.0, np.abs(tt))
            Y2 = self._filled(tt + dlt, Y, cols)
            for qi, *_ in self.core.delayed:
                T = T + J[:, qi, :] * ((Y2[qi] - Yf[qi]) / dlt)
        return J, T

    def _jacobian(self, t, Y, cols=None):
        P = self.jac_prog.pvar_values if cols is None else self.jac_prog.pvar_values[:, cols]
        m = Y.shape[1]
        with np.errstate(all="ignore"):
            vals = self._jacf(Y, t, P, self.jac_prog.consts)
        J = np.zeros((self.ns, self.ns, m))
        T = np.zeros((self.ns, m))
        for (r, c, _), v in zip(self.jac, vals):
            J[r, c] = np.broadcast_to(np.asarray(v, dtype=float), (m,))
        for (r, _), v in zip(self.dfdt, vals[len(self.jac):]):
            T[r] = np.broadcast_to(np.asarray(v, dtype=float), (m,))
        return J, T


def lu_factor(E):
    """In-place LU with partial pivoting of every member's matrix E (ns, ns, m): (LU, pivots (ns, m),
    ok (m,) False where a pivot is 0 or not finite).  Doolittle, row k swapped with the row of the
    largest |pivot| (the first such), as ``ro_lu`` in the kernel."""
    A = np.array(E, dtype=float)
    ns, _, m = A.shape
    cols = np.arange(m)
    piv = np.zeros((ns, m), dtype=int)
    ok = np.ones(m, dtype=bool)
    for k in range(ns):
        p = k + np.argmax(np.abs(A[k:, k, :]), axis=0)
        piv[k] = p
        rk_, rp = A[k, :, cols].copy(), A[p, :, cols].copy()      # (m, ns)
        A[k, :, cols], A[p, :, cols] = rp, rk_
        d = A[k, k, :]
        ok &= (d != 0.0) & np.isfinite(d)
        with np.errstate(all="ignore"):
            for i in range(k + 1, ns):
                li = A[i, k, :] / d
                A[i, k, :] = li
                for j in range(k + 1, ns):
                    A[i, j, :] = A[i, j, :] - li * A[k, j, :]
    return A, piv, ok


def lu_solve(LU, piv, b):
    """x with E x = b for every member (b: (ns, m)), from :func:`lu_factor`."""
    x = np.array(b, dtype=float)
    ns, m = x.shape
    cols = np.arange(m)
    with np.errstate(all="ignore"):
        for k in range(ns):
            p = piv[k]
            xk, xp = x[k].copy(), x[p, cols].copy()
            x[k], x[p, cols] = xp, xk
        for i in range(ns):
            s = x[i]
            for j in range(i):
                s = s - LU[i, j] * x[j]
            x[i] = s
        for i in range(ns - 1, -1, -1):
            s = x[i]
            for j in range(i + 1, ns):
                s = s - LU[i, j] * x[j]
            x[i] = s / LU[i, i]
    return x


def rodas_step(pb: StiffProblem, t, y, f0, J, T, h, cols, rtol, atol):
    """One Rodas4 step of size h (per member) from (t, y) with f0 = f(t, y) and the Jacobian (J, T):
    (y_new, err, (K1, K2) of the dense output, ok)."""
    ns, m = y.shape
    E = -J.copy()
    idx = np.arange(ns)
    M = pb.mass[:, None]
    E[idx, idx, :] += M / (h * GAMMA)
    LU, piv, ok = lu_factor(E)
    ks = [lu_solve(LU, piv, f0 + (h * D[0]) * T)]
    for s in range(1, 6):
        if s < 5:
            ys = y + sum(A[s][j] * ks[j] for j in range(s))
        else:
            ys = ys + ks[4]
        f = pb.rhs(t + C[s] * h, ys, cols)
        rhs = f + M * sum((CC[s][j] / h) * ks[j] for j in range(s))
        if s < 4:
            rhs = rhs + (h * D[s]) * T
        ks.append(lu_solve(LU, piv, rhs))
    ynew = ys + ks[5]
    sc = atol + rtol * np.maximum(np.abs(y), np.abs(ynew))
    with np.errstate(all="ignore"):
        err = np.sqrt(np.mean((ks[5] / sc) ** 2, axis=0))
    err = np.where(np.isfinite(err) & ok, err, np.inf)
    K1 = sum(H2[j] * ks[j] for j in range(5))
    K2 = sum(H3[j] * ks[j] for j in range(5))
    return ynew, err, (K1, K2), ok


def consistent(pb: StiffProblem, t: float, y, m: int):
    """Member m's algebraic components re-solved (Newton on 0 = g with ∂g/∂z from the Jacobian,
    at most 30 iterations) after an event changed its state; y (ns,) returned updated."""
    alg = pb.algebraic
    if not alg:
        return y
    y = y.copy()
    for _ in range(30):
        g = pb.rhs(np.array([t]), y[:, None], [m])[alg, 0]
        J, _ = pb.jacobian(np.array([t]), y[:, None], [m])
        LU, piv, ok = lu_factor(J[np.ix_(alg, alg)])
        if not ok[0]:
            raise SimulationBlowUp(f"{pb.core.source}: singular algebraic Jacobian at t={t:g}")
        dz = lu_solve(LU, piv, g[:, None])[:, 0]
        y[alg] = y[alg] - dz
        if np.all(np.abs(dz) <= 1e-13 * np.maximum(1.0, np.abs(y[alg]))):
            break
    return y


def dense(y0, y1, K, theta):
    """RODAS's continuous extension at theta ∈ [0, 1]."""
    return (1.0 - theta) * y0 + theta * (y1 + (1.0 - theta) * (K[0] + theta * K[1]))


def _locate(pb, es, t0, h, at):
    """First switching time of the watch vector in (t0, t0 + h]: bisection on the dense output."""
    lo, hi = t0, t0 + h
    for _ in range(200):
        if hi - lo <= 1e-14 * max(1.0, abs(hi)):
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if rk.watch(pb, pb.aux(mid, at(mid)[:, None], [es.m])) == es.prev:
            lo = mid
        else:
            hi = mid
    return hi


def switch_in(pb: StiffProblem, es, t0: float, h: float, y, yn):
    """A DAE's rejected step (t0, t0 + h]: where the watch vector switches, when the trial end (t0 + h, yn)
    has it switched — :func:`_locate` on the straight line from y to yn (the dense output with K = 0): the
    first time past the switch — else None.  Across such a switch (a piecewise branch of an algebraic
    equation) the algebraic solution jumps and every step over it is rejected; a step to just past the
    switch passes, and the event machinery re-solves the algebraic variables there."""
    if rk.watch(pb, pb.aux(t0 + h, yn[:, None], [es.m])) == es.prev:
        return None
    return _locate(pb, es, t0, h, lambda tt: dense(y, yn, (0.0, 0.0), (tt - t0) / h))


def integrate(pb: StiffProblem, times, rtol: float = 1e-8, atol=None, hmax: float | None = None,
              max_steps: int = MAX_STEPS, seed: int = 0, fired: list | None = None):
    """Integrate every member from t = 0; the observables at ``times`` as (nt, nobs, n).

    Defaults as :func:`kernels.flint.ensemble.rk.integrate` (atol 1e-12·min(1, max |y0|), hmax the
    smallest output interval, ``seed`` the random order of equal-priority events, ``fired`` a list that
    gets (member, t, event index) of every event execution).  A member's steps end
    at its next pending (delayed) event time.  Raises Unsupported past ``max_steps`` steps of a member,
    SimulationBlowUp when its step size underflows."""
    times, atol, hmax = rk.run_settings(times, pb.y0, atol, hmax)
    n, core = pb.n, pb.core
    y = pb.y0.copy()
    t_end = float(times[-1])
    hmax = min(hmax, step_bound(core)) if getattr(core, "delayed", None) else hmax
    hist = pb.history = History(n, pb.y0.copy(), dense) if getattr(core, "delayed", None) else None
    nt = len(times)
    out = np.full((nt, len(core.obs_names), n), np.nan)
    t = np.zeros(n)
    oi = np.zeros(n, dtype=int)
    evs = [rk.EventState(pb, m, seed, fired) for m in range(n)]
    tq = np.full(n, np.inf)          # per member: the earliest pending execution time

    def record(m, i, tt, ym):
        A_ = pb.aux(tt, ym[:, None], [m])
        out[i, :, m] = [A_[o][0] for o in core.obs_names]

    for m in range(n):                  # t0: initialValue of the triggers, then t0 events
        es = evs[m]
        w = list(rk.watch(pb, pb.aux(0.0, y[:, m:m + 1], [m])))
        for k, ev in enumerate(core.events):
            w[k] = ev.initial_value
        es.prev = tuple(w)
        y[:, m] = consistent(pb, 0.0, rk.process(pb, es, 0.0, y[:, m]), m)
        tq[m] = es.next_time()
        while oi[m] < nt and (times[oi[m]] <= 0.0 or t_end <= 0.0):
            record(m, oi[m], 0.0, y[:, m])
            oi[m] += 1
    done = (oi >= nt) | (t >= t_end)
    h = np.full(n, min(hmax, 1e-6))
    f0 = pb.rhs(t, y)
    J, T = pb.jacobian(t, y)
    steps = np.zeros(n, dtype=int)
    rejected = np.zeros(n, dtype=bool)
    while not np.all(done):
        act = ~done
        tstop = np.minimum(t_end, tq)
        hh = np.where(act, np.minimum(h, tstop - t), 1.0)
        last = hh >= tstop - t
        ynew, err, K, ok = rodas_step(pb, t, y, f0, J, T, hh, None, rtol, atol)
        steps += act
        if np.any(act & (steps > max_steps)):
            raise Unsupported(f"{core.source}: more than {max_steps} Rosenbrock steps")
        acc = act & (err <= 1.0)
        rej = act & ~acc
        with np.errstate(all="ignore"):
            fac = np.clip(err ** 0.25 / SAFE, FAC_MIN, FAC_MAX)
            hnew = np.where(ok, hh / fac, 0.5 * hh)
        hnew = np.where(rejected, np.minimum(hnew, hh), hnew)
        if np.any(rej):
            h = np.where(rej, hnew, h)
            if pb.algebraic:
                for m in np.nonzero(rej)[0]:
                    ts = switch_in(pb, evs[m], float(t[m]), float(hh[m]), y[:, m], ynew[:, m])
                    if ts is not None:
                        h[m] = ts - t[m]
            bad = rej & (h <= 1e-14 * np.maximum(1.0, np.abs(t)))
            if np.any(bad):
                m = int(np.nonzero(bad)[0][0])
                raise SimulationBlowUp(f"{core.source}: step size underflow at t={t[m]:g} (member {m})")
        rejected = np.where(act, rej, rejected)
        if not np.any(acc):
            continue
        tnew = np.where(last, tstop, t + hh)
        Aux = pb.aux(tnew, ynew)
        for m in np.nonzero(acc)[0]:
            es = evs[m]
            wnew = tuple(bool(Aux[nm][m] != 0.0) for nm in core.watch)
            y0m, y1m, Km = y[:, m].copy(), ynew[:, m].copy(), (K[0][:, m].copy(), K[1][:, m].copy())
            t0m, h0m = t[m], hh[m]
            if wnew == es.prev:
                if hist is not None:
                    hist.add(m, t0m, h0m, y0m, y1m, Km)
                while oi[m] < nt and times[oi[m]] < tnew[m]:
                    record(m, oi[m], times[oi[m]], dense(y0m, y1m, Km, (times[oi[m]] - t0m) / h0m))
                    oi[m] += 1
                t[m], y[:, m] = tnew[m], y1m
                es.prev = wnew
                if last[m] and tq[m] <= tnew[m]:          # the step ended at a pending event time
                    y[:, m] = consistent(pb, t[m], rk.process(pb, es, t[m], y[:, m]), m)
                    while oi[m] < nt and times[oi[m]] <= t[m]:
                        record(m, oi[m], t[m], y[:, m])
                        oi[m] += 1
            else:
                ts = _locate(pb, es, t0m, h0m, lambda tt: dense(y0m, y1m, Km, (tt - t0m) / h0m))
                hs = ts - t0m
                ym = y0m
                if hs > 0:
                    cs = [m]
                    ys, _, Ks, _ = rodas_step(pb, np.array([t0m]), y0m[:, None], f0[:, cs], J[:, :, cs], T[:, cs],
                                              np.array([hs]), cs, rtol, atol)
                    if hist is not None:
                        hist.add(m, t0m, hs, y0m, ys[:, 0], (Ks[0][:, 0], Ks[1][:, 0]))
                    while oi[m] < nt and times[oi[m]] < ts:
                        th = (times[oi[m]] - t0m) / hs
                        record(m, oi[m], times[oi[m]], dense(y0m, ys[:, 0], (Ks[0][:, 0], Ks[1][:, 0]), th))
                        oi[m] += 1
                    ym = ys[:, 0]
                t[m] = ts
                y[:, m] = consistent(pb, ts, rk.process(pb, es, ts, ym), m)
                while oi[m] < nt and times[oi[m]] <= ts:
                    record(m, oi[m], ts, y[:, m])
                    oi[m] += 1
            tq[m] = es.next_time()
        cols = np.nonzero(acc)[0]
        f0[:, cols] = pb.rhs(t[cols], y[:, cols], cols)
        Jc, Tc = pb.jacobian(t[cols], y[:, cols], cols)
        J[:, :, cols], T[:, cols] = Jc, Tc
        h = np.where(acc, np.minimum(hnew, hmax), h)
        fin = act & (t >= t_end)
        for m in np.nonzero(fin)[0]:
            while oi[m] < nt:
                record(m, oi[m], t[m], y[:, m])
                oi[m] += 1
        done = done | fin
    return out


def simulate_file(path, times, variables, amount, concentration) -> dict:
    """The suite's runtime signature on the NumPy twin (one member); algebraic rules and fast
    reactions as a DAE (``lower_system(dae=True)``)."""
    core = lower_system(str(path), list(variables), set(amount), set(concentration), dae=True, delays=True)
    res = integrate(StiffProblem(core, 1), np.asarray(times, dtype=float))
    return {v: res[:, j, 0] for j, v in enumerate(core.observables)}
