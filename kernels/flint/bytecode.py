"""The stack bytecode of the Flint compiler (paper 004 §5.3–5.5): opcode numbers (shared with
``flint_is.cu``: keep in sync; the interpreter's ``#define OP_*`` lines are generated from
:data:`OPCODES`), and the thread-per-expression layout (:class:`ExpressionLayout`, thesis §5.5.1)
with its options *redundant*, *sum* and the warp unification of *unify*.

``CONST k`` (constant table), ``CONST_IND k`` (parameter k of this lane), ``STATE s``,
``STATE_NB s off``, ``TIME``, ``VAR v``, ``ASSIGN v``, ``ADD n``/``MUL n``, binary/unary arithmetic,
comparisons, ``SELECT``, ``WARP_SUM``, ``END``; ``LANE off`` makes the next instruction take its
operands from ``lane_table[off + LANE_STRIDE·lane …]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .expr import OPERATORS, UNARY

# --- opcodes (shared with flint_is.cu: keep in sync; the .cu file is generated from this list) ---
OPS_WITH_ARG = ["CONST", "CONST_IND", "STATE", "VAR", "ASSIGN", "ADD", "MUL"]
OPS_PLAIN = ["END", "TIME", "SUB", "DIV", "NEG", "POW", "MIN", "MAX", "LT", "LE", "GT", "GE", "EQ", "NE",
             "AND", "OR", "NOT", "SELECT", "WARP_SUM"] + [u.upper() for u in UNARY]
OPCODES = {name: i for i, name in enumerate(OPS_WITH_ARG + ["STATE_NB"] + OPS_PLAIN + ["LANE"])}
OPNAMES = {v: k for k, v in OPCODES.items()}
N_ARGS = {**{k: 1 for k in OPS_WITH_ARG}, "STATE_NB": 2, "LANE": 1}
LANE_STRIDE = 2       # words a lane in the lane table per LANE-prefixed instruction (the most operands)
ARITH = {name: name.upper() for name in OPERATORS if name not in ("add", "mul")}   # DAG op → opcode
MAX_MERGE = 3         # functions per thread after phase merging (thesis: preliminary experiments)
WARP = 32             # threads per warp = threads per block in the expression mapping (thesis §5.5.1)
SUM_MIN = 32          # an n-ary sum with at least this many terms gets a whole warp (thesis: "32 or more")

def is_big_sum(opseq: tuple) -> bool:
    """Whether an opcode sequence holds an n-ary ADD of ≥ SUM_MIN terms (a warp-parallel sum)."""
    return any(o.startswith("ADD") and int(o[3:]) >= SUM_MIN for o in opseq)


@dataclass
class ExpressionLayout:
    """The thesis's mapping (§5.5.1, Fig. 5.7): each phase is one launch, each thread of a phase runs
    one bytecode (a function, or up to 3 merged ones), a block is one warp of 32 lanes; members /
    cells are a second grid dimension (member parameters: ``CONST_IND``, as with ``unify``).

    ``index`` holds, for every lane of every phase (phase p starts at ``phase_start[p]``, has
    ``phase_warps[p]`` warps), the start of its bytecode in ``code`` or −1 for an idle lane.
    Redundant threads (option ``redundant``) point at the same bytecode as the thread they copy;
    a warp-parallel sum (option ``sum``) fills a whole warp with 32 lane-specific bytecodes."""
    code: np.ndarray
    index: np.ndarray
    phase_start: list
    phase_warps: list
    lanes: list                 # per lane (all phases): (thread tuple, lane-of-sum or None) or None
    lane_seq: list              # per lane: its opcode sequence (tuple) or None (idle)
    sum_warps: list             # per phase: indices of warps that run a warp-parallel sum
    stack_depth: int
    lane_table: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int32))   # LANE operands
    unified_warps: int = 0      # warps running one unified bytecode (option unify)

    def phase_lanes(self, p: int) -> list:
        return self.lanes[self.phase_start[p]: self.phase_start[p] + WARP * self.phase_warps[p]]

    def stats(self) -> dict:
        active, essential, divergent, nsum = [], [], [], 0
        for p in range(len(self.phase_warps)):
            ln = self.phase_lanes(p)
            active.append(sum(1 for x in ln if x is not None))
            essential.append(len({x[0] for x in ln if x is not None}))
            dv = 0
            for w in range(self.phase_warps[p]):
                if w in self.sum_warps[p]:
                    continue
                sq = self.lane_seq[self.phase_start[p] + w * WARP: self.phase_start[p] + (w + 1) * WARP]
                if len({q for q in sq if q is not None}) > 1:
                    dv += 1
            divergent.append(dv)
            nsum += len(self.sum_warps[p])
        return {"expr_lanes_per_phase": active, "expr_warps_per_phase": list(self.phase_warps),
                "expr_threads_per_phase": essential, "expr_divergent_warps": divergent, "expr_sum_warps": nsum,
                "expr_bytecode_words": int(self.code.size), "expr_stack_depth": self.stack_depth,
                "expr_unified_warps": self.unified_warps, "expr_lane_table_words": int(self.lane_table.size)}


def expression_layout(phases, functions, opt, words_of) -> ExpressionLayout:
    """Lanes for the thread-per-expression mapping.

    redundant (thesis §5.4.2, Fig. 5.5): each run of consecutive threads with the same opcode
    sequence (after ``reorder``: each set of equal sequences) is padded to a multiple of 32 lanes
    with copies of its last thread, so no warp mixes opcode sequences; off: threads are packed and
    the phase's last warp has idle lanes.  sum: a thread holding an n-ary sum of ≥ 32 terms is
    given a whole warp at the end of its phase (32 lane bytecodes, see ``emit``); off: it is an
    ordinary thread summing every term itself."""
    code: list[int] = []
    at: dict = {}
    index, lanes, lane_seq, phase_start, phase_warps, sum_warps = [], [], [], [], [], []
    ltab: list[int] = []
    depth = 1
    n_unified = 0

    def unified(threads):
        """One bytecode for a warp whose 32 threads share an opcode sequence (thesis Fig. 5.6):
        an instruction whose operands differ between lanes gets the prefix ``LANE off`` and its
        lanes' operands go to the lane table (LANE_STRIDE words a lane)."""
        nonlocal depth
        key = ("warp",) + threads
        if key not in at:
            words = []
            for th in threads:
                w = []
                for fn in th:
                    ww, d = words_of(fn, None)
                    w.extend(ww)
                    depth = max(depth, d)
                words.append(w)
            at[key] = len(code)
            pc, w0 = 0, words[0]
            while pc < len(w0):
                na = N_ARGS.get(OPNAMES[w0[pc]], 0)
                ops = [tuple(w[pc + 1: pc + 1 + na]) for w in words]
                if na and len(set(ops)) > 1:
                    code.extend([OPCODES["LANE"], len(ltab)])
                    for o in ops:
                        ltab.extend(list(o) + [0] * (LANE_STRIDE - na))
                code.extend(w0[pc: pc + 1 + na])
                pc += 1 + na
            code.append(OPCODES["END"])
        return at[key]

    def start(thread, lane):
        nonlocal depth
        key = (thread, lane)
        if key not in at:
            at[key] = len(code)
            for fn in thread:
                w, d = words_of(fn, lane)
                code.extend(w)
                depth = max(depth, d)
            code.append(OPCODES["END"])
        return at[key]

    for p in phases:
        seqs = [tuple(op for fn in t for op in functions[fn].opseq) for t in p]
        big = [opt.sum and opt.nary and is_big_sum(q) for q in seqs]
        regular = [(tuple(t), q) for t, q, b in zip(p, seqs, big) if not b]
        ph: list = []
        if opt.redundant:
            i = 0
            while i < len(regular):
                j = i
                while j < len(regular) and regular[j][1] == regular[i][1]:
                    j += 1
                run = [(t, None, q) for t, q in regular[i:j]]
                ph.extend(run + [run[-1]] * (-len(run) % WARP))
                i = j
        else:
            ph.extend((t, None, q) for t, q in regular)
            ph.extend([None] * (-len(ph) % WARP))
        sw = []
        for t, q, b in zip(p, seqs, big):
            if b:
                sw.append(len(ph) // WARP)
                ph.extend((tuple(t), lane, q) for lane in range(WARP))
        phase_start.append(len(lanes))
        phase_warps.append(len(ph) // WARP)
        sum_warps.append(sw)
        lanes.extend(None if x is None else x[:2] for x in ph)
        lane_seq.extend(None if x is None else x[2] for x in ph)
        for w in range(len(ph) // WARP):
            wl = ph[w * WARP:(w + 1) * WARP]
            uniform = (opt.unify and w not in sw and all(x is not None for x in wl)
                       and len({x[2] for x in wl}) == 1 and len({x[0] for x in wl}) > 1)
            if uniform:
                pc = unified(tuple(x[0] for x in wl))
                index.extend([pc] * WARP)
                n_unified += 1
            else:
                index.extend(-1 if x is None else start(x[0], x[1]) for x in wl)
    return ExpressionLayout(code=np.array(code, dtype=np.int32), index=np.array(index, dtype=np.int32),
                            phase_start=phase_start, phase_warps=phase_warps, lanes=lanes, lane_seq=lane_seq,
                            sum_warps=sum_warps, stack_depth=depth,
                            lane_table=np.array(ltab or [0], dtype=np.int32), unified_warps=n_unified)
