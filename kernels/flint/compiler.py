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

:func:`compile_model` runs these as named passes, in this order (:mod:`.passes`): ``member_table``,
``build_dag`` (1–2), ``find_functions`` (2), ``schedule`` (3, with ``merge``), ``order_threads`` (4:
``reorder``), ``assign_slots`` (4: ``remap``), ``assemble`` (5, ``unify``) and
:func:`.bytecode.expression_layout` (4: ``redundant``, ``sum``, per-warp ``unify``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from ..errors import InvalidParameter
from .bytecode import (LANE_STRIDE, MAX_MERGE, N_ARGS, OPCODES, OPNAMES, OPS_PLAIN, OPS_WITH_ARG, SUM_MIN,
                       WARP, ExpressionLayout, expression_layout)
from .model import Model
from .passes import (Emitter, Function, assemble, assign_slots, build_dag, find_functions, member_table,
                     order_threads, schedule)

# the bytecode's tables are re-exported: the compiler is where readers look for them
__all__ = ["CompileOptions", "Network", "Program", "Function", "ExpressionLayout", "compile_model", "OPTIMIZATIONS",
           "optimization_report", "report_table", "OPCODES", "OPNAMES", "N_ARGS", "OPS_WITH_ARG", "OPS_PLAIN",
           "LANE_STRIDE", "MAX_MERGE", "SUM_MIN", "WARP"]


def _opseq_key(prog: "Program", thread: list) -> tuple:
    return tuple(op for f in thread for op in prog.functions[f].opseq)


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
    #: what the runtimes derive from this program, kept by :meth:`derive` (expression texts per
    #: language, phase statements, invariant functions, packed forms)
    derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def derive(self, key, make):
        """``make()`` the first time ``key`` is asked for, then the value kept (a compiled program is
        not modified afterwards, so what is derived from it stays true).  Callers must not modify it."""
        if key not in self.derived:
            self.derived[key] = make()
        return self.derived[key]

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
    base = options or CompileOptions()
    cache: dict = {}

    def row(o: CompileOptions) -> dict:
        if o not in cache:
            cache[o] = _report_row(compile_model(model, n_members, member_params, network, o))
        return cache[o]
    return [{"option": name, "off": row(replace(base, **{name: False})),
             "on": row(replace(base, **{name: True}))} for name in OPTIMIZATIONS]


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
    """Compile ``model`` for ``n_members`` members (ensemble or cells of ``network``): the passes of
    the module docstring, in order.

    member_params: parameter name → array of ``n_members`` values (an ensemble); others are uniform
    and become constants."""
    opt = options or CompileOptions()
    model = model.copy().validate()
    if network is not None:
        network = network.validate(model)
        n_members = network.n_cells
    if n_members < 1:
        raise InvalidParameter(f"ensemble size must be ≥ 1, got {n_members}")
    pvar_names, pvar_values = member_table(model, n_members, member_params)
    nodes, roots = build_dag(model, network, opt, pvar_names)
    functions, mat = find_functions(nodes, roots)
    phases, level_counts = schedule(model, functions, opt.merge)
    em = Emitter(nodes, functions, mat, pvar_values)
    phases, order = order_threads(phases, functions, em, opt.reorder)
    slots = assign_slots(model, functions, order, em, opt.remap)
    words, index, depth = assemble(order, functions, slots, em, opt.unify or not pvar_names, n_members)
    layout = expression_layout(phases, functions, opt,
                               lambda fn, lane: em.words(functions[fn], slots, None, lane))
    consts = em.consts
    if not consts:
        consts.append(0.0)
    return Program(model=model, options=opt, n_members=n_members, network=network, nodes=nodes,
                   functions=functions, phases=phases, order=order, slots=slots,
                   deriv_slots=[slots[f"d_{s}"] for s in model.states],
                   code=np.array(words, dtype=np.int32), index=index, consts=np.array(consts, dtype=np.float64),
                   pvar_names=pvar_names, pvar_values=pvar_values, stack_depth=max(depth, 1),
                   n_slots=len(slots), level_counts=level_counts, layout=layout)
