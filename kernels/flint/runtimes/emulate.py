"""The bytecode interpreter emulated with NumPy, vectorised over members: the reference of the IS
kernels (``flint_is.cu``) in both thread mappings, and the ``cpu`` runtime's bytecode mode
(``Simulation(..., bytecode_on_cpu=True)``).  Paper 004 §5.5."""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidParameter
from ..bytecode import WARP
from ..compiler import Program
from ..expr import apply_op
from .base import MAPPINGS
from .codegen import arity, lane_decoder


def interpret(prog: Program, S, kin, cdt: float, t: float, P, member: slice | None = None,
              mapping: str = "cell"):
    """Run the bytecode with NumPy, vectorised over members (reference for the IS kernels).

    mapping "cell": one thread runs the whole program for one member (``prog.code``);
    "expression": the thesis's thread-per-expression layout (``prog.layout``), phase by phase, every
    lane of every warp interpreted, ``WARP_SUM`` emulated exactly as the GPU's butterfly of
    ``__shfl_xor_sync`` (offsets 16, 8, 4, 2, 1: lane l adds lane l^o's value), lanes running in
    lockstep at each ``WARP_SUM`` like a converged warp.  In float64 the lanes of a phase that run
    one opcode sequence are interpreted together, like the lanes of a converged warp: one NumPy
    operation an instruction for all of them (rows of (lanes, members) arrays); every lane's
    arithmetic is the one it would do alone, so the result is the same, bit for bit.

    The bytecode is decoded once and kept (keyed by its content) for the next call: a run
    interprets the same bytecode every step and stage.

    S, kin: (n_states, n); P: (n_pvar, n).  Returns the derivatives, shape (n_states, n)."""
    n = S.shape[1]
    net = prog.network.kind if prog.network else None
    if mapping not in ("cell", "expression"):
        raise InvalidParameter(f"mapping must be one of {', '.join(MAPPINGS)}, got {mapping!r}")
    with np.errstate(all="ignore"):
        if mapping == "expression":
            if all(np.asarray(x).dtype == np.float64 for x in (S, P, kin) if x is not None):
                return _interp_expression(prog, S, kin, cdt, t, P, net)
            return _interp_expression_lanes(prog, S, kin, cdt, t, P, net)
        if prog.index is not None:                  # not unified: one bytecode per member
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


def _interp_expression_lanes(prog, S, kin, cdt, t, P, net):
    """Every lane on its own (any dtype: each slot keeps the dtype its expression gave it)."""
    lay = prog.layout
    V: dict[int, object] = {}                       # the global variable array, one row a slot
    for p in range(len(lay.phase_warps)):
        lanes = lay.index[lay.phase_start[p]: lay.phase_start[p] + WARP * lay.phase_warps[p]]
        for w in range(lay.phase_warps[p]):
            gens = [_lane(prog, lay.code, int(pc), S, kin, cdt, t, P, net, slice(None), V, lay.lane_table, ln)
                    for ln, pc in enumerate(lanes[w * WARP:(w + 1) * WARP]) if pc >= 0]
            run_warp(gens)
    return _derivs(prog, V, S.shape[1])


def _interp_expression(prog, S, kin, cdt, t, P, net):
    """float64: phase by phase, the lanes outside warp-parallel sums in groups of one opcode
    sequence, then each warp of a warp-parallel sum (its groups meet at every WARP_SUM)."""
    mem = _Lanes(prog.consts, S, kin, cdt, t, P, net, max(prog.n_slots, 1))
    for regular, warps in _plan(prog.layout):
        for g in regular:
            for _v in _execute(g.ops, g.args, mem.view(len(g.lanes))):
                raise InvalidParameter("WARP_SUM reached by only part of a warp")
        for warp in warps:
            _run_groups([_execute(g.ops, g.args, mem.view(len(g.lanes))) for g in warp], [g.lanes for g in warp])
    missing = [d for d in prog.deriv_slots if not mem.assigned[d]]
    if missing:
        raise InvalidParameter(f"no lane assigns the derivative slots {missing}")
    return mem.V[list(prog.deriv_slots)].copy()


def run_warp(gens: list) -> None:
    """Lockstep to each WARP_SUM: every lane must reach it (a converged, full warp).  ``gens``: one
    generator a lane, yielding its partial sum and receiving the warp's total."""
    def as_group(g):
        try:
            v = g.send(None)
            while True:
                v = g.send((yield [v])[0])
        except StopIteration:
            return
    _run_groups([as_group(g) for g in gens], [(lane,) for lane in range(len(gens))])


def _run_groups(gens: list, lanes: list) -> None:
    """One warp as groups of lanes (``gens[i]`` runs lanes ``lanes[i]``, yields a list of their
    partial sums at WARP_SUM and receives the list of their totals): lockstep to each WARP_SUM, which
    all 32 lanes must reach; then the ``__shfl_xor_sync`` butterfly (offsets 16, 8, 4, 2, 1: lane l
    adds lane l^o's value)."""
    _done = object()

    def step(g, v=None):
        try:
            return g.send(v)
        except StopIteration:
            return _done
    vals = [step(g) for g in gens]
    while any(v is not _done for v in vals):
        if sum(len(ls) for ls in lanes) != WARP or any(v is _done for v in vals):
            raise InvalidParameter("WARP_SUM reached by only part of a warp")
        p: list = [None] * WARP
        for v, ls in zip(vals, lanes):
            for j, lane in enumerate(ls):
                p[lane] = v[j]
        for off in (16, 8, 4, 2, 1):               # __shfl_xor_sync butterfly
            p = [p[lane] + p[lane ^ off] for lane in range(WARP)]
        vals = [step(g, [p[lane] for lane in ls]) for g, ls in zip(gens, lanes)]


# ------------------------------------------------------------------ the instructions and their memory
def _execute(ops, args, mem):
    """Run instructions ``ops`` (opnames) with operands ``args`` on the stack machine, reading and
    writing through ``mem`` (:class:`_Lane`: one thread; :class:`_Lanes`: lanes in lockstep).  A
    generator: yields the partial sum at WARP_SUM and receives the warp's total."""
    st: list = []
    for op, a in zip(ops, args):
        if op == "ASSIGN":
            mem.assign(a, st.pop())
        elif op == "WARP_SUM":
            st.append(mem.total((yield mem.partial(st.pop()))))
        elif op in ("ADD", "MUL"):
            k = mem.count(a)
            vals = st[-k:]
            del st[-k:]
            st.append(apply_op(op.lower(), vals, np))
        elif op in _LOADS:
            st.append(mem.load(op, a))
        else:
            lop = op.lower()
            k = arity(lop)
            vals = st[-k:]
            del st[-k:]
            st.append(apply_op(lop, vals, np))


_LOADS = frozenset(("CONST", "CONST_IND", "STATE", "STATE_NB", "TIME", "VAR"))


def _lane(prog, code, pc, S, kin, cdt, t, P, net, cols, slots, ltab=None, lane=0):
    """One thread's interpreter as a generator: yields its partial sum at WARP_SUM, receives the
    warp's total.  ``ltab``/``lane``: the lane table and this thread's lane (see :func:`codegen.decode`)."""
    ins = lane_decoder(code, ltab)(pc, lane)
    mem = _Lane(prog.consts, S, kin, cdt, t, P, net, cols, slots)
    return _execute([op for op, _a in ins], [a for _op, a in ins], mem)


@dataclass
class _Inputs:
    """What the bytecode reads: constants K, states S (stage values S + cdt·kin), time t, member
    parameters P, the network kind."""
    K: np.ndarray
    S: np.ndarray
    kin: np.ndarray | None
    cdt: float
    t: float
    P: np.ndarray
    net: str | None


@dataclass
class _Lane(_Inputs):
    """One thread's memory: operands are tuples, values arrays over the members ``cols`` (or
    scalars), ``slots`` the variable array (slot → value)."""
    cols: slice
    slots: dict

    def load(self, op, a):
        if op == "CONST":
            return self.K[a[0]]
        if op == "CONST_IND":
            return self.P[a[0], self.cols]
        if op == "TIME":
            return self.t
        if op == "VAR":
            return self.slots[a[0]]
        S, kin, cols = self.S, self.kin, self.cols
        off = a[1] if op == "STATE_NB" else 0
        if off == 0 or self.net is None:
            v = S[a[0], cols]
            return v if kin is None else v + self.cdt * kin[a[0], cols]
        n = S.shape[1]
        idx = np.arange(n) + off
        idx = np.mod(idx, n) if self.net == "ring" else np.clip(idx, 0, n - 1)
        idx = idx[cols]
        v = S[a[0], idx]
        return v if kin is None else v + self.cdt * kin[a[0], idx]

    def assign(self, a, v):
        self.slots[a[0]] = v

    @staticmethod
    def count(a):
        return a[0]

    @staticmethod
    def partial(v):
        return v

    @staticmethod
    def total(v):
        return v


@dataclass
class _Lanes(_Inputs):
    """The memory of lanes in lockstep (float64): operands are (L, k) integer arrays, a lane a row;
    values (L, n) arrays (constants (L, 1)); ``V`` the variable array, a slot a row (NaN until a lane
    assigns it: reading a slot nobody wrote is an error, as the dict of :class:`_Lane` makes it)."""
    n_slots: int
    L: int = 0

    def __post_init__(self):
        self.V = np.full((self.n_slots, self.S.shape[1]), np.nan)
        self.assigned = np.zeros(self.n_slots, bool)

    def view(self, L: int) -> "_Lanes":
        """This memory for a group of L lanes."""
        v = copy.copy(self)                         # shares V and assigned
        v.L = L
        return v

    def load(self, op, a):
        if op == "TIME":
            return self.t
        s = a[:, 0]
        if op == "CONST":
            return self.K[s][:, None]
        if op == "CONST_IND":
            return self.P[s]
        if op == "VAR":
            if not self.assigned[s].all():
                raise InvalidParameter(f"a lane reads a slot no lane has assigned ({s.tolist()})")
            return self.V[s]
        S, kin = self.S, self.kin
        if op == "STATE" or self.net is None or not a[:, 1].any():
            return S[s] if kin is None else S[s] + self.cdt * kin[s]
        n = S.shape[1]
        idx = np.arange(n)[None, :] + a[:, 1:2]
        idx = np.mod(idx, n) if self.net == "ring" else np.clip(idx, 0, n - 1)
        v = S[s[:, None], idx]
        return v if kin is None else v + self.cdt * kin[s[:, None], idx]

    def assign(self, a, v):
        self.V[a[:, 0]] = np.broadcast_to(v, (self.L, self.S.shape[1]))
        self.assigned[a[:, 0]] = True

    @staticmethod
    def count(a):
        return int(a[0, 0])

    def partial(self, v):
        return list(np.broadcast_to(v, (self.L, self.S.shape[1])))

    @staticmethod
    def total(v):
        return np.stack(v)


# ------------------------------------------------------------------ the lanes grouped, once a layout
_PLANS: OrderedDict = OrderedDict()
_KEEP = 4                        # layouts whose plan is kept (a run interprets one)


@dataclass(frozen=True)
class _Group:
    """Lanes running one opcode sequence: ``ops[i]`` is the i-th opcode and ``args[i]`` its
    operands, one row a lane (an (L, k) integer array); ``lanes`` their numbers in the warp."""
    ops: tuple
    args: tuple
    lanes: tuple


def _plan(lay) -> list:
    """Per phase: (groups of the lanes of warps without WARP_SUM, [groups of each warp with one]),
    made once per layout (keyed by its content)."""
    key = (lay.code.tobytes(), lay.index.tobytes(), lay.lane_table.tobytes(), tuple(lay.phase_start),
           tuple(lay.phase_warps))
    if key in _PLANS:
        _PLANS.move_to_end(key)
        return _PLANS[key]
    lane_code = lane_decoder(lay.code, lay.lane_table)

    def groups(members):
        """[(lane, instructions)] → lanes grouped by opcode sequence (ADD/MUL counts included: they
        fix how much of the stack an instruction pops), in order of first appearance."""
        by: dict = {}
        for lane, ins in members:
            sig = tuple(op + str(a[0]) if op in ("ADD", "MUL") else op for op, a in ins)
            by.setdefault(sig, []).append((lane, ins))
        out = []
        for ms in by.values():
            ins0 = ms[0][1]
            args = tuple(np.array([m[1][i][1] for m in ms], dtype=np.int64).reshape(len(ms), -1)
                         for i in range(len(ins0)))
            out.append(_Group(tuple(op for op, _a in ins0), args, tuple(m[0] for m in ms)))
        return out
    plan = []
    for p in range(len(lay.phase_warps)):
        regular, warps = [], []
        for w in range(lay.phase_warps[p]):
            lo = lay.phase_start[p] + w * WARP
            members = [(lane, lane_code(int(pc), lane)) for lane, pc in enumerate(lay.index[lo: lo + WARP]) if pc >= 0]
            if any(op == "WARP_SUM" for _lane, ins in members for op, _a in ins):
                warps.append(groups(members))
            else:
                regular.extend(members)
        plan.append((groups(regular), warps))
    _PLANS[key] = plan
    if len(_PLANS) > _KEEP:
        _PLANS.popitem(last=False)
    return plan
