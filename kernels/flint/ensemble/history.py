"""The delay csymbol on the ensemble integrators: per-member history of the dense output.

Contract.  A core lowered with ``lower_system(delays=True)`` has, per delay(x, d), a state q_k (ODE 0)
and aux outputs x_k, d_k (``CoreSystem.delayed``).  Before every evaluation of the model at (t, y)
the integrator sets q_k = x_k(τ, y(τ)) with τ = t − d_k(t, y), y(τ) read from the member's history:

* τ < 0: the initial state, and x_k with its rates 0 (the values before the start are the initial
  values, the SBML Test Suite's convention, as the CPU reference);
* a stored step [t0, t0 + h] containing τ: its dense output (the latest such step: after an event the
  new branch);
* beyond the last stored step: linear interpolation to the current (t, y) (τ inside the step being
  taken; the step size is bounded by half the smallest constant delay, as in the reference).

Each member keeps its last ``HCAP`` steps (the kernel's ring buffer); a τ older than those is refused
(Unsupported).  The NumPy twin here; the CUDA kernel's twin is ``ro_fill_delays`` in
``ensemble_rodas.cu``.
"""
from __future__ import annotations

import bisect

import numpy as np

from ...errors import Unsupported

HCAP = 1024       # steps kept per member (the kernel's ring: HCAP·(2 + 4·NS) doubles a member)


class History:
    """Per member: the stored steps (t0, h, y0, y1, K) and the dense-output function ``dense``."""

    def __init__(self, n: int, y0: np.ndarray, dense):
        self.steps = [[] for _ in range(n)]
        self.starts = [[] for _ in range(n)]
        self.y0 = y0
        self.dense = dense
        self.dropped = [False] * n

    def add(self, m: int, t0: float, h: float, ya, yb, K):
        st, s = self.steps[m], self.starts[m]
        st.append((t0, h, np.array(ya), np.array(yb), tuple(np.array(k) for k in K)))
        s.append(t0)
        if len(st) > HCAP:
            del st[0], s[0]
            self.dropped[m] = True

    def state(self, m: int, tau: float, t: float, y):
        """y(τ) of member m, (ns,), given its current (t, y)."""
        st = self.steps[m]
        if tau < 0.0 or (not st and tau <= 0.0):
            return self.y0[:, m]
        if st and tau < st[0][0] and self.dropped[m]:
            raise Unsupported(f"a delay reaches further back than the last {HCAP} steps of the history")
        if not st:
            return y
        t0, h, ya, yb, K = st[-1]
        if tau >= t0 + h:                                   # beyond the history: linear to (t, y)
            te = t0 + h
            if t <= te:
                return yb
            w = (tau - te) / (t - te)
            return (1.0 - w) * yb + w * np.asarray(y)
        k = max(bisect.bisect_right(self.starts[m], tau) - 1, 0)
        t0, h, ya, yb, K = st[k]
        return self.dense(ya, yb, K, (tau - t0) / h if h > 0 else 1.0)


def fill(pb, hist: History, t, Y, cols, aux):
    """Y (ns, m) with the delayed-value states q_k set at (t, Y) (a copy); ``aux`` the un-filled
    aux function (t, Y, cols) → dict."""
    Y = np.array(Y, dtype=float)
    m = Y.shape[1]
    tt = np.broadcast_to(np.asarray(t, dtype=float).reshape(-1), (m,))
    members = range(m) if cols is None else cols
    for j, mem in enumerate(members):
        col = [mem]
        for _ in range(len(pb.core.delayed)):        # a delay may read another delayed value: one pass each
            A = aux(tt[j], Y[:, j:j + 1], col)
            for qi, xn, dn, xpn in pb.core.delayed:
                tau = tt[j] - float(A[dn][0])
                yh = np.array(hist.state(mem, tau, tt[j], Y[:, j]), dtype=float)
                Y[qi, j] = float(aux(tau, yh[:, None], col)[xpn if tau < 0.0 else xn][0])
    return Y


def step_bound(core) -> float:
    """Half the smallest delay that is a constant or a constant parameter (the reference bounds its
    steps by half the smallest constant delay); inf when none."""
    ds = [core.delay_hmax * 2.0]
    for _, _, dn, _ in core.delayed:
        e = core.aux.assigns.get(dn)
        if e is not None and e.op == "const":
            ds.append(float(e.value))
        elif e is not None and e.op == "sym" and e.value in core.model.params:
            ds.append(float(core.model.params[e.value]))
    d = min([v for v in ds if v > 0] or [np.inf])
    return 0.5 * d
