"""The bytecode interpreter emulated with NumPy, vectorised over members: the reference of the IS
kernels (``flint_is.cu``) in both thread mappings, and the ``cpu`` runtime's bytecode mode
(``Simulation(..., bytecode_on_cpu=True)``).  Paper 004 §5.5."""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter
from ..bytecode import WARP
from ..compiler import Program
from ..expr import apply_op
from .base import MAPPINGS
from .codegen import arity, decode


def interpret(prog: Program, S, kin, cdt: float, t: float, P, member: slice | None = None,
              mapping: str = "cell"):
    """Run the bytecode with NumPy, vectorised over members (reference for the IS kernels).

    mapping "cell": one thread runs the whole program for one member (``prog.code``);
    "expression": the thesis's thread-per-expression layout (``prog.layout``), phase by phase, every
    lane of every warp interpreted, ``WARP_SUM`` emulated exactly as the GPU's butterfly of
    ``__shfl_xor_sync`` (offsets 16, 8, 4, 2, 1: lane l adds lane l^o's value), lanes running in
    lockstep at each ``WARP_SUM`` like a converged warp.

    S, kin: (n_states, n); P: (n_pvar, n).  Returns the derivatives, shape (n_states, n)."""
    n = S.shape[1]
    net = prog.network.kind if prog.network else None
    if mapping == "expression":
        return _interp_expression(prog, S, kin, cdt, t, P, net)
    if mapping != "cell":
        raise InvalidParameter(f"mapping must be one of {', '.join(MAPPINGS)}, got {mapping!r}")
    if prog.index is not None:                      # not unified: one bytecode per member
        return np.concatenate([_interp_one(prog, int(prog.index[m]), S, kin, cdt, t, P, net, m)
                               for m in range(n)], axis=1)
    return _interp_one(prog, 0, S, kin, cdt, t, P, net, None)


def _derivs(prog, slots, ncols):
    return np.stack([np.broadcast_to(np.asarray(slots[d], dtype=np.float64), (ncols,)) for d in prog.deriv_slots])


def _interp_one(prog, pc, S, kin, cdt, t, P, net, member):
    cols = slice(None) if member is None else slice(member, member + 1)
    slots: dict[int, object] = {}
    g = _lane(prog, prog.code, pc, S, kin, cdt, t, P, net, cols, slots)
    for _v in g:
        raise InvalidParameter("WARP_SUM in a thread-per-cell bytecode")
    return _derivs(prog, slots, S[:, cols].shape[1])


def _interp_expression(prog, S, kin, cdt, t, P, net):
    lay = prog.layout
    V: dict[int, object] = {}                       # the global variable array, one row a slot
    for p in range(len(lay.phase_warps)):
        lanes = lay.index[lay.phase_start[p]: lay.phase_start[p] + WARP * lay.phase_warps[p]]
        for w in range(lay.phase_warps[p]):
            gens = [_lane(prog, lay.code, int(pc), S, kin, cdt, t, P, net, slice(None), V, lay.lane_table, ln)
                    for ln, pc in enumerate(lanes[w * WARP:(w + 1) * WARP]) if pc >= 0]
            run_warp(gens)
    return _derivs(prog, V, S.shape[1])


def run_warp(gens: list) -> None:
    """Lockstep to each WARP_SUM: every lane must reach it (a converged, full warp)."""
    _done = object()

    def step(g, v=None):
        try:
            return g.send(v)
        except StopIteration:
            return _done
    vals = [step(g) for g in gens]
    while any(v is not _done for v in vals):
        if len(gens) != WARP or any(v is _done for v in vals):
            raise InvalidParameter("WARP_SUM reached by only part of a warp")
        p = vals
        for off in (16, 8, 4, 2, 1):               # __shfl_xor_sync butterfly
            p = [p[lane] + p[lane ^ off] for lane in range(WARP)]
        vals = [step(g, p[lane]) for lane, g in enumerate(gens)]


def _lane(prog, code, pc, S, kin, cdt, t, P, net, cols, slots, ltab=None, lane=0):
    """One thread's interpreter as a generator: yields its partial sum at WARP_SUM, receives the
    warp's total.  ``ltab``/``lane``: the lane table and this thread's lane (see :func:`codegen.decode`)."""
    K = prog.consts
    n = S.shape[1]
    st: list = []

    def state(s, off=0):
        if off == 0 or net is None:
            v = S[s, cols]
            return v if kin is None else v + cdt * kin[s, cols]
        idx = np.arange(n) + off
        idx = np.mod(idx, n) if net == "ring" else np.clip(idx, 0, n - 1)
        idx = idx[cols]
        v = S[s, idx]
        return v if kin is None else v + cdt * kin[s, idx]
    with np.errstate(all="ignore"):
        while True:
            op, a, pc = decode(code, pc, ltab, lane)
            if op == "END":
                return
            if op == "CONST":
                st.append(K[a[0]])
            elif op == "CONST_IND":
                st.append(P[a[0], cols])
            elif op == "STATE":
                st.append(state(a[0]))
            elif op == "STATE_NB":
                st.append(state(a[0], a[1]))
            elif op == "TIME":
                st.append(t)
            elif op == "VAR":
                st.append(slots[a[0]])
            elif op == "ASSIGN":
                slots[a[0]] = st.pop()
            elif op == "WARP_SUM":
                st.append((yield st.pop()))
            elif op in ("ADD", "MUL"):
                args = st[-a[0]:]
                del st[-a[0]:]
                st.append(apply_op(op.lower(), args, np))
            else:
                lop = op.lower()
                k = arity(lop)
                args = st[-k:]
                del st[-k:]
                st.append(apply_op(lop, args, np))
