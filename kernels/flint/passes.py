"""The passes of :func:`kernels.flint.compiler.compile_model`, in its order (paper 004 §5.2–5.4):

1. :func:`member_table` — per-member parameters (``CONST_IND`` operands);
2. :func:`build_dag` — resolve names to leaves and build the expression DAG (hash-consed with ``cse``,
   constants folded with ``fold``, binary chains without ``nary``);
3. :func:`find_functions` — assignments, ODEs and shared inner nodes (CSE temps) as functions, and what
   each reads;
4. :func:`schedule` — level scheduling of the function subgraph (ODEs last), with ``merge``;
5. :class:`Emitter` + :func:`order_threads` — each function's bytecode with symbolic slots, and the
   threads of a phase sorted (``reorder``);
6. :func:`assign_slots` — variable slots by first use (``remap``) or model-file order;
7. :func:`assemble` — the thread-per-cell bytecode, one for all members (``unify``) or one each;
   then :func:`kernels.flint.bytecode.expression_layout` — the thesis's thread-per-expression mapping.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameter
from .bytecode import ARITH, MAX_MERGE, OPCODES, SUM_MIN, WARP
from .expr import Expr
from .model import Model

#: leaves that are always shared (hash-consed) even with ``cse`` off
_LEAVES = ("const", "pvar", "state", "nb", "time", "fvar")


@dataclass
class Function:
    name: str
    root: int                      # node id
    kind: str                      # "assign" | "cse" | "ode"
    deps: set = field(default_factory=set)   # function names read
    opseq: tuple = ()                        # opcode names of its bytecode (no operands)


def member_table(model: Model, n_members: int, member_params: dict | None) -> tuple[list, np.ndarray]:
    """(names, values (n_pvar, n_members)) of the parameters that differ between members."""
    pvar_names, pvar_rows = [], []
    for p, vals in dict(member_params or {}).items():
        if p not in model.params:
            raise InvalidParameter(f"{p!r} is not a parameter of {model.name}")
        arr = np.broadcast_to(np.asarray(vals, dtype=np.float64), (n_members,)).copy()
        if not np.all(np.isfinite(arr)):
            raise InvalidParameter(f"parameter {p!r}: values must be finite")
        pvar_names.append(p)
        pvar_rows.append(arr)
    return pvar_names, np.array(pvar_rows).reshape(len(pvar_rows), n_members)


def fold(op, vals):
    """A constant-folded + − × ÷ or negation, in the runtimes' order and rounding."""
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


def build_dag(model: Model, network, opt, pvar_names: list) -> tuple[list, dict]:
    """(nodes [(op, args (node ids), value)], roots {function name: (node id, kind)}): every assignment
    and ODE right-hand side (with the network's diffusive coupling) as DAG nodes.  Leaves: ``state``,
    ``nb`` (a neighbour's state), ``pvar`` (a per-member parameter), ``const``, ``time``, ``fvar``
    (an assigned variable, resolved by name later)."""
    nodes: list = []
    memo: dict = {}
    state_idx = {s: i for i, s in enumerate(model.states)}

    def node(op, args=(), value=None):
        key = (op, args, value)
        if opt.cse or op in _LEAVES:
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
                v = fold(op, vals)
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
    return nodes, roots


def find_functions(nodes: list, roots: dict) -> tuple[dict, dict]:
    """(functions {name: Function}, owner {node id: function name that materialises it}): the named
    assignments and ODEs, plus a ``_cseK`` temp for every inner node read more than once; each
    function's ``deps`` are the functions it reads."""
    uses = [0] * len(nodes)                            # uses over the DAG (each parent edge once)
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
    return functions, mat


def schedule(model: Model, functions: dict, merge: bool) -> tuple[list, list]:
    """(phases, level_counts): phase 1 = functions reading no other function, delete, repeat (edges
    into states dropped: explicit integrators read current-step states); all ODEs form the last
    phase.  A phase is a list of threads, a thread a list of function names; ``merge`` moves a
    function into the thread of its only dependency in the previous phase (:func:`merge_phases`)."""
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
    if merge:
        phases = merge_phases(phases, functions)
    phases.append([[f"d_{s}"] for s in model.states])
    return phases, level_counts


def merge_phases(phases, functions):
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


class Emitter:
    """Bytecode of one function, operands symbolic (``("slot", name)``) until slots are known; the
    constant table grows as constants are met (so the order of :meth:`emit` calls fixes it).

    The unified code (``member`` None) of a function is asked for by several passes and by every
    lane of the expression layout that repeats it: :meth:`emit` and :meth:`words` keep it (a second
    call adds no constant, so the table is the same).  A member's own code is made once each and
    not kept (a large network has one a cell)."""

    def __init__(self, nodes: list, functions: dict, mat: dict, pvar_values: np.ndarray):
        self.nodes, self.functions, self.mat, self.pvar_values = nodes, functions, mat, pvar_values
        self.consts: list[float] = []
        self._const_idx: dict = {}
        self._emitted: dict = {}           # (function name, lane) → emit(f, None, lane)
        self._words: dict = {}             # the same → words(f, slots, None, lane), for ``_slots``
        self._slots: dict | None = None

    def kconst(self, v: float) -> int:
        key = np.float64(v).tobytes()
        if key not in self._const_idx:
            self._const_idx[key] = len(self.consts)
            self.consts.append(float(v))
        return self._const_idx[key]

    def emit(self, f: Function, member: int | None, lane: int | None = None) -> tuple[list, int]:
        """:meth:`emit_new`, kept for ``member`` None (the class docstring); the list is shared: read it only.

        A member's code is the unified code with each ``CONST_IND p`` replaced by ``CONST`` of the
        member's value (the same walk): once the unified code was made, its constants are all in the
        table, so mapping it adds the members' values in the order :meth:`emit_new` would."""
        if member is not None:
            unified = self._emitted.get((f.name, lane))
            if unified is None:
                return self.emit_new(f, member, lane)
            pv, kconst = self.pvar_values, self.kconst
            return [("CONST", kconst(pv[ins[1], member])) if ins[0] == "CONST_IND" else ins
                    for ins in unified[0]], unified[1]
        key = (f.name, lane)
        hit = self._emitted.get(key)
        if hit is None:
            hit = self._emitted[key] = self.emit_new(f, None, lane)
        return hit

    def emit_new(self, f: Function, member: int | None, lane: int | None = None) -> tuple[list, int]:
        """(list of (opname, operand...)), max stack depth).

        member: None for the unified bytecode (per-member parameters as ``CONST_IND``), else that
        member's values as constants.  lane (0..31): the code of that lane of a warp-parallel sum
        (thesis §5.4.2 *Sum*): every outermost n-ary ADD with ≥ SUM_MIN terms becomes the lane's
        contiguous share of the terms, ``ADD k`` of them, then ``WARP_SUM`` (butterfly reduction over
        the 32 lanes); the code around it is the same in every lane."""
        nodes, functions, mat, kconst = self.nodes, self.functions, self.mat, self.kconst
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
                    out.append(("CONST", kconst(self.pvar_values[value, member])))
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
                out.append((ARITH[op],))
                depth[0] -= len(args) - 1
        walk(f.root, True)
        out.append(("ASSIGN", ("slot", f.name)))
        return out, depth[1]

    def words(self, f: Function, slots: dict, member: int | None = None, lane: int | None = None):
        """(words, stack depth) of :meth:`emit` with the slots filled in; kept for ``member`` None
        while ``slots`` is the same dict (the list is shared: read it only)."""
        if member is None:
            if slots is not self._slots:
                self._words, self._slots = {}, slots
            key = (f.name, lane)
            hit = self._words.get(key)
            if hit is None:
                hit = self._words[key] = self._fill(self.emit(f, None, lane), slots)
            return hit
        return self._fill(self.emit(f, member, lane), slots)

    @staticmethod
    def _fill(emitted: tuple[list, int], slots: dict) -> tuple[list, int]:
        ins_list, d = emitted
        w = []
        for ins in ins_list:
            w.append(OPCODES[ins[0]])
            w.extend(slots[o[1]] if isinstance(o, tuple) else int(o) for o in ins[1:])
        return w, d


def order_threads(phases: list, functions: dict, em: Emitter, reorder: bool) -> tuple[list, list]:
    """Every function's opcode sequence (``Function.opseq``); with ``reorder`` the threads of each
    phase sorted by sequence length (longest first), then lexicographically.  Returns (phases,
    execution order of the functions)."""
    for f in functions.values():
        f.opseq = tuple(ins[0] + (str(ins[1]) if ins[0] in ("ADD", "MUL") else "")
                        for ins in em.emit(f, None)[0])
    if reorder:
        def seqkey(thread):
            seq = [op for fn in thread for op in functions[fn].opseq]
            return (-len(seq), " ".join(seq))
        phases = [sorted(p, key=seqkey) for p in phases]
    return phases, [fn for p in phases for t in p for fn in t]


def assign_slots(model: Model, functions: dict, order: list, em: Emitter, remap: bool) -> dict:
    """Function name → variable slot: by first use in the bytecode (``remap``) or in model-file order."""
    slots: dict[str, int] = {}
    if remap:
        for fn in order:
            for ins in em.emit(functions[fn], None)[0]:
                for o in ins[1:]:
                    if isinstance(o, tuple) and o[1] not in slots:
                        slots[o[1]] = len(slots)
    else:
        for fn in list(model.assigns) + [n for n in functions if n.startswith("_cse")] + [f"d_{s}" for s in model.states]:
            slots[fn] = len(slots)
    return slots


def assemble(order: list, functions: dict, slots: dict, em: Emitter, unified: bool,
             n_members: int) -> tuple[list, np.ndarray | None, int]:
    """(words, index, stack depth) of the thread-per-cell bytecode: one program for every member
    (``unified``: ``index`` None) or one a member, ``index[m]`` its start."""
    def one(member):
        words, depth = [], 0
        for fn in order:
            w, d = em.words(functions[fn], slots, member)
            depth = max(depth, d)
            words.extend(w)
        words.append(OPCODES["END"])
        return words, depth

    if unified:
        words, depth = one(None)
        return words, None, depth
    words, index_l, depth = [], [], 0
    for m in range(n_members):
        w, d = one(m)
        index_l.append(len(words))
        words.extend(w)
        depth = max(depth, d)
    return words, np.array(index_l, dtype=np.int32), depth
