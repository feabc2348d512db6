"""Flint compiler: equations → expression DAG (CSE) → level-scheduled phases → stack bytecode.

Paper 004 (Okuyama 2013) §5.2–5.4.  Pipeline:

1. *Resolve* names to leaves: ``state`` (current-step value, or the RK stage value), ``nb`` (a
   neighbour cell's state for lines/rings), ``pvar`` (a parameter that differs between ensemble
   members), ``const`` (everything uniform) and ``time``.  Optional constant folding of + − × ÷.
2. *DAG with common subexpressions shared* (hash-consing).  A shared inner node becomes its own
   function ``_cseK``; named assignments are functions; each ODE right-hand side is a function.
3. *Dependency analysis and level scheduling* on the function subgraph only: edges into states are
   dropped (explicit integrators read current-step states), phase 1 = sources, delete, repeat; all
   ODEs form the final phase.
4. The thesis's optimisations, each switchable (:class:`CompileOptions`) and each giving identical
   numbers: ``merge`` (a function whose only dependency in the previous phase is e runs after e in
   e's thread, ≤ 3 functions a thread), ``reorder`` (threads sorted by opcode-sequence length, then
   lexicographically), ``remap`` (variable slots numbered by first use), ``unify`` (one bytecode for
   all members; per-member parameters become ``CONST_IND`` reads of a per-member table instead of one
   bytecode per member with ``index[]``; in the thread-per-expression mapping also the thesis's
   per-warp unification, §5.4.3 Fig. 5.6: the 32 bytecodes of a warp share one opcode sequence, so
   they become one bytecode whose lane-dependent operands are read through the lane table — our
   ``LANE off`` prefix plays the thesis's ``CONSTANT_IND``/``VARIABLE_IND``/``ASSIGN_IND``), ``cse``, ``fold``, ``nary`` (n-ary ADD/MUL),
   ``redundant`` and ``sum``.  The last two act on the thesis's thread-per-expression mapping
   (:class:`ExpressionLayout`; runtimes ``mapping="expression"``): redundant threads pad every set
   of equal opcode sequences to whole warps; an n-ary sum of ≥ 32 terms is split over the 32 lanes of
   a warp and reduced with ``WARP_SUM`` (butterfly shuffle).  In the default thread-per-cell mapping
   one thread runs a whole cell, a warp never mixes opcode sequences and sums are not split, so the
   two options leave that bytecode unchanged.
5. *Bytecode* (stack machine): ``CONST k`` (constant table), ``CONST_IND k`` (parameter k of this
   lane), ``STATE s``, ``STATE_NB s off``, ``TIME``, ``VAR v``, ``ASSIGN v``, ``ADD n``/``MUL n``,
   binary/unary arithmetic, comparisons, ``SELECT``, ``WARP_SUM``, ``END``; ``LANE off`` makes the
   next instruction take its operands from ``lane_table[off + LANE_STRIDE·lane …]`` (its own operand
   words stay in the code, as lane 0's, so every lane steps over the same words).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from ..errors import InvalidParameter
from .expr import UNARY, Expr
from .model import Model

# --- opcodes (shared with flint_is.cu: keep in sync; the .cu file is generated from this list) ---
OPS_WITH_ARG = ["CONST", "CONST_IND", "STATE", "VAR", "ASSIGN", "ADD", "MUL"]
OPS_PLAIN = ["END", "TIME", "SUB", "DIV", "NEG", "POW", "MIN", "MAX", "LT", "LE", "GT", "GE", "EQ", "NE",
             "AND", "OR", "NOT", "SELECT", "WARP_SUM"] + [u.upper() for u in UNARY]
OPCODES = {name: i for i, name in enumerate(OPS_WITH_ARG + ["STATE_NB"] + OPS_PLAIN + ["LANE"])}
OPNAMES = {v: k for k, v in OPCODES.items()}
N_ARGS = {**{k: 1 for k in OPS_WITH_ARG}, "STATE_NB": 2, "LANE": 1}
LANE_STRIDE = 2       # words a lane in the lane table per LANE-prefixed instruction (the most operands)
_ARITH = {"sub": "SUB", "div": "DIV", "neg": "NEG", "pow": "POW", "min": "MIN", "max": "MAX", "lt": "LT",
          "le": "LE", "gt": "GT", "ge": "GE", "eq": "EQ", "ne": "NE", "and": "AND", "or": "OR", "not": "NOT",
          "select": "SELECT", **{u: u.upper() for u in UNARY}}
MAX_MERGE = 3         # functions per thread after phase merging (thesis: preliminary experiments)
WARP = 32             # threads per warp = threads per block in the expression mapping (thesis §5.5.1)
SUM_MIN = 32          # an n-ary sum with at least this many terms gets a whole warp (thesis: "32 or more")


@dataclass(frozen=True)
class CompileOptions:
    cse: bool = True
    fold: bool = True
    nary: bool = True
    merge: bool = True
    reorder: bool = True
    remap: bool = True
    unify: bool = True
    redundant: bool = True
    sum: bool = True

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


@dataclass(frozen=True)
class Network:
    """Cells coupled diffusively on one state: dX_i/dt += D (X_{i-1} − 2 X_i + X_{i+1}).

    kind "line" (zero-flux ends: a missing neighbour is the cell itself) or "ring" (periodic)."""
    kind: str = "line"
    n_cells: int = 100
    state: str = "V"
    D: float = 1.0           # 1/ms (gap-junction conductance / membrane capacitance)

    def validate(self, model: Model) -> "Network":
        if self.kind not in ("line", "ring"):
            raise InvalidParameter(f"network kind must be line or ring, got {self.kind!r}")
        if self.n_cells < 2:
            raise InvalidParameter("a line/ring needs at least 2 cells")
        if self.state not in model.states:
            raise InvalidParameter(f"coupled variable {self.state!r} is not a state of {model.name}")
        return self


@dataclass
class Function:
    name: str
    root: int                      # node id
    kind: str                      # "assign" | "cse" | "ode"
    deps: set = field(default_factory=set)   # function names read
    opseq: tuple = ()                        # opcode names of its bytecode (no operands)


@dataclass
class Program:
    """Everything a runtime needs.  ``code``/``consts``/``index`` are the bytecode (IS); ``nodes`` and
    ``order`` the scheduled DAG (NumPy and TS runtimes print it as code)."""
    model: Model
    options: CompileOptions
    n_members: int
    network: Network | None
    nodes: list                      # (op, args(node ids), value)
    functions: dict                  # name → Function
    phases: list                     # list of phases; a phase = list of threads; a thread = [names]
    order: list                      # function names in execution order
    slots: dict                      # function name → variable slot
    deriv_slots: list                # per state: slot of its derivative
    code: np.ndarray
    index: np.ndarray | None         # per-member bytecode start (unify off) or None
    consts: np.ndarray
    pvar_names: list                 # parameters that vary between members (CONST_IND k)
    pvar_values: np.ndarray          # (n_pvar, n_members)
    stack_depth: int
    n_slots: int
    level_counts: list = field(default_factory=list)
    layout: "ExpressionLayout | None" = None

    @property
    def n_states(self) -> int:
        return self.model.n_states

    def stats(self) -> dict:
        """Compiler statistics.  ``threads_per_phase``/``opcode_sequences_per_phase``: bytecodes before
        unifying and their distinct opcode sequences (thesis Tables 5.6, 5.7).  ``bytecode_words``,
        ``stack_depth``: the thread-per-cell bytecode.  ``expr_*``: the thread-per-expression layout
        (one warp a block): lanes launched per phase (redundant threads included), warps per phase,
        warps whose lanes run more than one opcode sequence (divergent), warp-parallel sums."""
        lay = self.layout
        return {"functions": sum(1 for f in self.functions.values() if f.kind != "ode"),
                "odes": len(self.model.odes), "cse_temps": sum(1 for f in self.functions.values() if f.kind == "cse"),
                "phases": len(self.phases), "threads_per_phase": [len(p) for p in self.phases],
                "opcode_sequences_per_phase": [len({_opseq_key(self, t) for t in p}) for p in self.phases],
                "bytecode_words": int(self.code.size), "constants": int(self.consts.size),
                "slots": self.n_slots, "stack_depth": self.stack_depth,
                **(lay.stats() if lay is not None else {})}

    def listing(self, limit: int | None = None) -> str:
        """Human-readable bytecode (member 0 when not unified)."""
        inv = {v: k for k, v in self.slots.items()}
        out, pc = [], (int(self.index[0]) if self.index is not None else 0)
        states = list(self.model.states)
        while pc < self.code.size:
            op = OPNAMES[int(self.code[pc])]
            n = N_ARGS.get(op, 0)
            args = [int(a) for a in self.code[pc + 1: pc + 1 + n]]
            note = ""
            if op == "CONST":
                note = repr(float(self.consts[args[0]]))
            elif op == "CONST_IND":
                note = self.pvar_names[args[0]]
            elif op in ("STATE", "STATE_NB"):
                note = states[args[0]]
            elif op in ("VAR", "ASSIGN"):
                note = inv.get(args[0], "")
            out.append(f"{pc:5d}  {op:<10s}{' '.join(map(str, args)):<10s}{('; ' + note) if note else ''}")
            pc += 1 + n
            if op == "END" or (limit and len(out) >= limit):
                break
        return "\n".join(out)


def _opseq_key(prog: Program, thread: list) -> tuple:
    return tuple(op for f in thread for op in prog.functions[f].opseq)


def _is_big_sum(opseq: tuple) -> bool:
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


def _expression_layout(phases, functions, opt: CompileOptions, words_of) -> ExpressionLayout:
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
        big = [opt.sum and opt.nary and _is_big_sum(q) for q in seqs]
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


# ----------------------------------------------------------------------------------------------
OPTIMIZATIONS = ("cse", "fold", "nary", "merge", "reorder", "remap", "unify", "redundant", "sum")


def _report_row(prog: Program) -> dict:
    st = prog.stats()
    return {"phases": st["phases"], "threads_per_phase": st["threads_per_phase"],
            "opcode_sequences_per_phase": st["opcode_sequences_per_phase"],
            "lanes_per_phase": st["expr_lanes_per_phase"], "divergent_warps": sum(st["expr_divergent_warps"]),
            "sum_warps": st["expr_sum_warps"], "bytecode_words": st["bytecode_words"],
            "expr_bytecode_words": st["expr_bytecode_words"], "unified_warps": st["expr_unified_warps"],
            "constants": st["constants"],
            "slots": st["slots"], "stack_depth": st["stack_depth"], "functions": st["functions"]}


def optimization_report(model: Model, n_members: int = 1, member_params: dict | None = None,
                        network: Network | None = None, options: CompileOptions | None = None) -> list[dict]:
    """Effect of each optimisation: for every option, the program compiled with it off and on (the
    other options as in ``options``, default all on).  One row an option: ``{"option", "off", "on"}``
    with phases, threads per phase (bytecodes before unifying, thesis Table 5.6), distinct opcode
    sequences per phase (Table 5.7), lanes per phase in the thread-per-expression mapping (redundant
    threads and sum warps included), divergent warps, sum warps, bytecode words (thread-per-cell and
    thread-per-expression), constants, slots, stack depth."""
    import dataclasses
    base = options or CompileOptions()
    cache: dict = {}

    def row(o: CompileOptions) -> dict:
        if o not in cache:
            cache[o] = _report_row(compile_model(model, n_members, member_params, network, o))
        return cache[o]
    return [{"option": name, "off": row(dataclasses.replace(base, **{name: False})),
             "on": row(dataclasses.replace(base, **{name: True}))} for name in OPTIMIZATIONS]


def report_table(report: list[dict]) -> tuple[list[str], list[list[str]]]:
    """The report as (header, rows of text): one row an option, ``off → on`` per metric."""
    keys = ["phases", "threads_per_phase", "opcode_sequences_per_phase", "lanes_per_phase", "divergent_warps",
            "sum_warps", "unified_warps", "bytecode_words", "expr_bytecode_words", "constants", "slots", "stack_depth"]

    def fmt(v):
        return "→".join(map(str, v)) if isinstance(v, list) else str(v)
    rows = []
    for r in report:
        rows.append([r["option"]] + [fmt(r["off"][k]) if r["off"][k] == r["on"][k]
                                     else f"{fmt(r['off'][k])} ⇒ {fmt(r['on'][k])}" for k in keys])
    return ["option"] + keys, rows


# ----------------------------------------------------------------------------------------------
def compile_model(model: Model, n_members: int = 1, member_params: dict | None = None,
                  network: Network | None = None, options: CompileOptions | None = None) -> Program:
    """Compile ``model`` for ``n_members`` members (ensemble or cells of ``network``).

    member_params: parameter name → array of ``n_members`` values (an ensemble); others are uniform
    and become constants."""
    opt = options or CompileOptions()
    model = model.copy().validate()
    if network is not None:
        network = network.validate(model)
        n_members = network.n_cells
    if n_members < 1:
        raise InvalidParameter(f"ensemble size must be ≥ 1, got {n_members}")
    member_params = dict(member_params or {})
    pvar_names, pvar_rows = [], []
    for p, vals in member_params.items():
        if p not in model.params:
            raise InvalidParameter(f"{p!r} is not a parameter of {model.name}")
        arr = np.broadcast_to(np.asarray(vals, dtype=np.float64), (n_members,)).copy()
        if not np.all(np.isfinite(arr)):
            raise InvalidParameter(f"parameter {p!r}: values must be finite")
        pvar_names.append(p)
        pvar_rows.append(arr)
    pvar_values = np.array(pvar_rows).reshape(len(pvar_rows), n_members)
    state_idx = {s: i for i, s in enumerate(model.states)}

    # 1. resolve + DAG (hash-consed when cse is on)
    nodes: list = []
    memo: dict = {}

    def node(op, args=(), value=None):
        key = (op, args, value)
        if opt.cse or op in ("const", "pvar", "state", "nb", "time", "fvar"):
            if key in memo:
                return memo[key]
        nodes.append(key)
        memo[key] = len(nodes) - 1
        return len(nodes) - 1

    def build(e: Expr) -> int:
        op = e.op
        if op == "const":
            return node("const", (), float(e.value))
        if op == "sym":
            n = e.value
            if n == model.time:
                return node("time")
            if n in state_idx:
                return node("state", (), state_idx[n])
            if n in model.params:
                if n in pvar_names:
                    return node("pvar", (), pvar_names.index(n))
                return node("const", (), float(model.params[n]))
            return node("fvar", (), n)
        if op == "nb":
            s, off = e.value
            if s not in state_idx:
                raise InvalidParameter(f"nb({s}, {off}): {s} is not a state")
            if network is None:
                return node("state", (), state_idx[s])
            return node("nb", (), (state_idx[s], int(off)))
        args = [build(a) for a in e.args]
        if opt.fold and op in ("add", "mul", "sub", "div", "neg") and all(nodes[a][0] == "const" for a in args):
            vals = [nodes[a][2] for a in args]
            with np.errstate(all="ignore"):
                v = _fold(op, vals)
            return node("const", (), v)
        if op in ("add", "mul") and not opt.nary and len(args) > 2:
            acc = node(op, (args[0], args[1]))
            for a in args[2:]:
                acc = node(op, (acc, a))
            return acc
        return node(op, tuple(args))

    roots: dict[str, tuple[int, str]] = {}
    for name in model.assigns:
        roots[name] = (build(model.assigns[name]), "assign")
    for s in model.states:
        e = model.odes[s]
        if network is not None and s == network.state:
            D = Expr("const", (), float(network.D))
            lap = Expr("sub", (Expr("add", (Expr("nb", (), (s, -1)), Expr("nb", (), (s, 1)))),
                               Expr("mul", (Expr("const", (), 2.0), Expr("sym", (), s)))))
            e = Expr("add", (e, Expr("mul", (D, lap))))
        roots[f"d_{s}"] = (build(e), "ode")

    # 2. functions: assignments, ODEs, shared inner nodes (CSE temps)
    uses = [0] * len(nodes)
    seen_roots = set()
    for name, (r, _k) in roots.items():
        stack = [r]
        visited = set()
        while stack:
            nid = stack.pop()
            for a in nodes[nid][1]:
                uses[a] += 1
                if a not in visited:
                    visited.add(a)
                    stack.append(a)
        seen_roots.add(r)
    # count uses globally over the DAG (each parent edge once)
    uses = [0] * len(nodes)
    for nid, (op, args, value) in enumerate(nodes):
        for a in args:
            uses[a] += 1
    functions: dict[str, Function] = {}
    root_owner: dict[int, str] = {}
    for name, (r, kind) in roots.items():              # two names with the very same expression:
        functions[name] = Function(name, r, kind)      # the first non-ODE one owns the value
        if kind != "ode":
            root_owner.setdefault(r, name)
    # an ODE never owns a value that something else reads: the ODE phase runs last, in no particular
    # order, so a value another function (or another ODE) reads becomes a temp in an earlier phase
    ode_roots = [r for (r, kind) in roots.values() if kind == "ode"]
    shared_ode = {r for r in ode_roots if uses[r] >= 1 or ode_roots.count(r) > 1}
    k = 0
    for nid, (op, args, value) in enumerate(nodes):
        if nid not in root_owner and ((args and uses[nid] > 1) or nid in shared_ode):
            name = f"_cse{k}"
            k += 1
            functions[name] = Function(name, nid, "cse")
            root_owner[nid] = name
    for name, f in functions.items():                  # unshared ODE roots own themselves
        root_owner.setdefault(f.root, name)
    # a named variable whose root is owned by another name reads that one
    mat = dict(root_owner)

    def deps_of(f: Function) -> set:
        out, stack, vis = set(), [f.root], set()
        top = True
        while stack:
            nid = stack.pop()
            if not top and nid in mat:
                out.add(mat[nid])
                continue
            top = False
            op, args, value = nodes[nid]
            if op == "fvar":
                out.add(value)
                continue
            for a in args:
                if a not in vis:
                    vis.add(a)
                    stack.append(a)
        return out
    for f in functions.values():
        f.deps = deps_of(f)
        if mat[f.root] != f.name:          # alias: copies the owner's value
            f.deps = {mat[f.root]}

    # 3. level scheduling of the function subgraph; ODEs last
    funcs = [n for n, f in functions.items() if f.kind != "ode"]
    level: dict[str, int] = {}
    remaining = set(funcs)
    phases_f: list[list[str]] = []
    while remaining:
        ready = [n for n in funcs if n in remaining and not (functions[n].deps & remaining)]
        if not ready:
            raise InvalidParameter(f"model {model.name}: algebraic loop among {', '.join(sorted(remaining))}")
        for n in ready:
            level[n] = len(phases_f)
        phases_f.append(ready)
        remaining -= set(ready)
    level_counts = [len(p) for p in phases_f] + [len(model.states)]
    phases = [[[n] for n in p] for p in phases_f]
    if opt.merge:
        phases = _merge(phases, functions, level)
    phases.append([[f"d_{s}"] for s in model.states])

    # 4. bytecode pieces per function (operands symbolic until slots are known)
    consts: list[float] = []
    const_idx: dict = {}

    def kconst(v: float) -> int:
        key = np.float64(v).tobytes()
        if key not in const_idx:
            const_idx[key] = len(consts)
            consts.append(float(v))
        return const_idx[key]

    def emit(f: Function, member: int | None, lane: int | None = None) -> tuple[list, int]:
        """(list of (opname, operand...)), max stack depth).

        lane (0..31): the code of that lane of a warp-parallel sum (thesis §5.4.2 *Sum*): every
        outermost n-ary ADD with ≥ SUM_MIN terms becomes the lane's contiguous share of the terms,
        ``ADD k`` of them, then ``WARP_SUM`` (butterfly reduction over the 32 lanes); the code
        around it is the same in every lane."""
        out = []
        depth = [0, 0]

        def push(n=1):
            depth[0] += n
            depth[1] = max(depth[1], depth[0])

        def walk(nid, top, in_sum=False):
            if not top and nid in mat:
                out.append(("VAR", ("slot", mat[nid])))
                push()
                return
            op, args, value = nodes[nid]
            if op == "fvar":
                out.append(("VAR", ("slot", mat.get(functions[value].root, value))))
                push()
                return
            if top and mat[nid] != f.name:
                out.append(("VAR", ("slot", mat[nid])))
                push()
                return
            big = op == "add" and len(args) >= SUM_MIN
            if big and lane is not None and not in_sum:
                lo, hi = lane * len(args) // WARP, (lane + 1) * len(args) // WARP
                for a in args[lo:hi]:
                    walk(a, False, True)
                if hi - lo > 1:
                    out.append(("ADD", hi - lo))
                    depth[0] -= hi - lo - 1
                out.append(("WARP_SUM",))
                return
            for a in args:
                walk(a, False, in_sum or big)
            if op == "const":
                out.append(("CONST", kconst(value)))
                push()
            elif op == "pvar":
                if member is None:
                    out.append(("CONST_IND", value))
                else:
                    out.append(("CONST", kconst(pvar_values[value, member])))
                push()
            elif op == "state":
                out.append(("STATE", value))
                push()
            elif op == "nb":
                out.append(("STATE_NB", value[0], value[1]))
                push()
            elif op == "time":
                out.append(("TIME",))
                push()
            elif op in ("add", "mul"):
                out.append((op.upper(), len(args)))
                depth[0] -= len(args) - 1
            else:
                out.append((_ARITH[op],))
                depth[0] -= len(args) - 1
        walk(f.root, True)
        out.append(("ASSIGN", ("slot", f.name)))
        return out, depth[1]

    for f in functions.values():
        f.opseq = tuple(ins[0] + (str(ins[1]) if ins[0] in ("ADD", "MUL") else "")
                        for ins in emit(f, None)[0])
    if opt.reorder:
        def seqkey(thread):
            seq = [op for fn in thread for op in functions[fn].opseq]
            return (-len(seq), " ".join(seq))
        phases = [sorted(p, key=seqkey) for p in phases]
    order = [fn for p in phases for t in p for fn in t]

    # 5. slots: by first use in the bytecode (remap) or in model-file order
    slots: dict[str, int] = {}
    if opt.remap:
        for fn in order:
            for ins in emit(functions[fn], None)[0]:
                for o in ins[1:]:
                    if isinstance(o, tuple) and o[1] not in slots:
                        slots[o[1]] = len(slots)
    else:
        for fn in list(model.assigns) + [n for n in functions if n.startswith("_cse")] + [f"d_{s}" for s in model.states]:
            slots[fn] = len(slots)

    def assemble(member):
        words, depth = [], 0
        for fn in order:
            ins_list, d = emit(functions[fn], member)
            depth = max(depth, d)
            for ins in ins_list:
                words.append(OPCODES[ins[0]])
                words.extend(slots[o[1]] if isinstance(o, tuple) else int(o) for o in ins[1:])
        words.append(OPCODES["END"])
        return words, depth

    if opt.unify or not pvar_names:
        words, depth = assemble(None)
        index = None
    else:
        words, index_l, depth = [], [], 0
        for m in range(n_members):
            w, d = assemble(m)
            index_l.append(len(words))
            words.extend(w)
            depth = max(depth, d)
        index = np.array(index_l, dtype=np.int32)
    # 6. the thesis's thread-per-expression mapping: redundant threads, warp-parallel sums
    def words_of(fn, lane):
        ins_list, d = emit(functions[fn], None, lane)
        w = []
        for ins in ins_list:
            w.append(OPCODES[ins[0]])
            w.extend(slots[o[1]] if isinstance(o, tuple) else int(o) for o in ins[1:])
        return w, d
    layout = _expression_layout(phases, functions, opt, words_of)
    if not consts:
        consts.append(0.0)
    return Program(model=model, options=opt, n_members=n_members, network=network, nodes=nodes,
                   functions=functions, phases=phases, order=order, slots=slots,
                   deriv_slots=[slots[f"d_{s}"] for s in model.states],
                   code=np.array(words, dtype=np.int32), index=index, consts=np.array(consts, dtype=np.float64),
                   pvar_names=pvar_names, pvar_values=pvar_values, stack_depth=max(depth, 1),
                   n_slots=len(slots), level_counts=level_counts, layout=layout)


def _fold(op, vals):
    if op == "add":
        r = vals[0]
        for v in vals[1:]:
            r = r + v
        return float(r)
    if op == "mul":
        r = vals[0]
        for v in vals[1:]:
            r = r * v
        return float(r)
    if op == "sub":
        return float(vals[0] - vals[1])
    if op == "div":
        return float(np.float64(vals[0]) / np.float64(vals[1]))
    return float(-vals[0])


def _merge(phases, functions, level):
    """Thesis §5.4.1: move f (phase k ≥ 2) into the thread of e (phase k−1) when e is f's only
    dependency in phase k−1; at most MAX_MERGE functions a thread; empty phases removed."""
    where: dict[str, tuple[int, int]] = {}
    for pi, p in enumerate(phases):
        for ti, t in enumerate(p):
            for fn in t:
                where[fn] = (pi, ti)
    moved = True
    while moved:
        moved = False
        for pi in range(1, len(phases)):
            gone = set()                       # threads of phase pi merged away (ids), removed below
            for t in phases[pi]:
                if len(t) != 1:
                    continue
                f = t[0]
                dep_phases = {where[d][0] for d in functions[f].deps}
                prev = [d for d in functions[f].deps if where[d][0] == pi - 1]
                if max(dep_phases, default=-1) != pi - 1 or len(prev) != 1:
                    continue
                e = prev[0]
                host = phases[pi - 1][where[e][1]]
                if len(host) >= MAX_MERGE or host[-1] != e:
                    continue
                # every other dependency must be earlier than the host's phase
                host.append(f)
                gone.add(id(t))
                where[f] = where[e]
                moved = True
            if gone:                           # one O(n) rebuild a phase instead of one a move
                phases[pi] = [t for t in phases[pi] if id(t) not in gone]
                for ti, tt in enumerate(phases[pi]):
                    for fn in tt:
                        where[fn] = (pi, ti)
        # drop empty phases and renumber
        phases = [p for p in phases if p]
        where = {fn: (pi, ti) for pi, p in enumerate(phases) for ti, t in enumerate(p) for fn in t}
    return phases
