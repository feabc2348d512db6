"""Flint runtimes: NumPy (CPU), IS (bytecode interpreter, CuPy RawKernel), TS (generated CUDA C), and
C / C-IS (the TS / IS source compiled for host cores, host_c.py).

All three evaluate the same scheduled program with the same operations in the same order, so in
float64 they agree to rounding of the math library (paper 004 §5.7, Table 5.9: IS vs CPU ≈ 1e-13).

Integrators (one thread per member; the same update in every runtime):
  Euler  y' = y + dt·f(t, y)
  RK4    k1..k4 at (t, y), (t+dt/2, y+dt/2·k1), (t+dt/2, y+dt/2·k2), (t+dt, y+dt·k3);
         acc = k1/6 + k2/3 + k3/3, y' = y + dt·(acc + k4/6) — one kernel launch a stage so that
         coupled cells read their neighbours' stage values.
"""
from __future__ import annotations

import math
import time as _time
from pathlib import Path

import numpy as np

from ..errors import BackendUnavailable, GridTooLarge, InvalidParameter, SimulationBlowUp
from .compiler import LANE_STRIDE, OPCODES, OPNAMES, N_ARGS, SUM_MIN, WARP, CompileOptions, Network, Program, compile_model
from .expr import UNARY, apply_op
from .model import Model

RUNTIMES = ("cpu", "is", "ts", "c", "c-is")
GPU_RUNTIMES = ("is", "ts")
HOST_RUNTIMES = ("c", "c-is")
RUNTIME_HELP = {"is": "the bytecode interpreter on the GPU (one compiled kernel for every model)",
                "ts": "the translator: the model as generated CUDA C on the GPU (compiled per model)",
                "cpu": "NumPy on the CPU, vectorised over members/cells (no compiler needed)",
                "c": "the translator's C compiled for the CPU by the host C++ compiler (g++/clang++), per model",
                "c-is": "the bytecode interpreter compiled for the CPU (one compile for every model of a size)"}
INTEGRATORS = ("euler", "rk4")
RK4_STAGES = ((0.0, 1.0 / 6.0), (0.5, 1.0 / 3.0), (0.5, 1.0 / 3.0), (1.0, 1.0 / 6.0))   # (c, weight)
NVRTC_OPTIONS = ("--fmad=false", "-std=c++14")     # no FMA contraction: same rounding as NumPy
#: seconds one call into the compiled host loop (runtimes c, c-is) aims at: Ctrl+C is handled between calls
HOST_CALL_S = 0.1
IS_SOURCE = Path(__file__).with_name("flint_is.cu")
COMMON_SOURCE = Path(__file__).with_name("flint_common.cuh")     # integrator update, shared by IS and TS


# ---------------------------------------------------------------------------------------------
# code generation from the scheduled DAG
def _const_index(prog: Program) -> dict:
    return {np.float64(v).tobytes(): i for i, v in enumerate(prog.consts)}


# C text of an operation on already printed operands (the generated TS code of both printers:
# the DAG printer below and the unified-bytecode printer ``_unified_c``)
_C_FORMS = {"lt": "(({0}) < ({1}) ? 1.0 : 0.0)", "le": "(({0}) <= ({1}) ? 1.0 : 0.0)",
            "gt": "(({0}) > ({1}) ? 1.0 : 0.0)", "ge": "(({0}) >= ({1}) ? 1.0 : 0.0)",
            "eq": "(({0}) == ({1}) ? 1.0 : 0.0)", "ne": "(({0}) != ({1}) ? 1.0 : 0.0)",
            "and": "(({0}) != 0.0 && ({1}) != 0.0 ? 1.0 : 0.0)", "or": "(({0}) != 0.0 || ({1}) != 0.0 ? 1.0 : 0.0)",
            "not": "(({0}) == 0.0 ? 1.0 : 0.0)", "select": "(({0}) != 0.0 ? ({1}) : ({2}))",
            "sub": "({0} - {1})", "div": "({0} / {1})", "neg": "(-{0})"}
_C_FUNCS = {"abs": "fabs", "min": "fmin", "max": "fmax"}


def _chain(op: str, a: list) -> str:
    """An n-ary add/mul as left-nested binary operations, ((a + b) + c): the interpreter's order."""
    r = a[0]
    for x in a[1:]:
        r = f"({r}{' + ' if op == 'add' else ' * '}{x})"
    return r


def _c_op(op: str, a: list) -> str:
    """``op`` (lower-case DAG/bytecode name) applied to the printed operands ``a``, as C."""
    if op in ("add", "mul"):
        return _chain(op, a)
    form = _C_FORMS.get(op)
    return form.format(*a) if form else f"{_C_FUNCS.get(op, op)}({', '.join(a)})"


def _arity(op: str) -> int:
    """Operands a plain (argument-less) bytecode operation pops: SELECT 3, unary 1, the rest 2."""
    return 3 if op == "select" else (1 if op in UNARY or op in ("neg", "not") else 2)


def _make_printer(prog: Program, lang: str, var, state=None):
    """c(nid, top, cur, subst) → expression text of node nid inside function ``cur``; ``subst`` maps
    node ids to replacement text (a warp-parallel sum's total)."""
    nodes, functions = prog.nodes, prog.functions
    mat = {}
    for name in prog.order:
        mat.setdefault(functions[name].root, name)
    cidx = _const_index(prog)
    state = state or (lambda s: f"s{s}")

    def c(nid, top=False, cur=None, subst=None):
        if subst and nid in subst:
            return subst[nid]
        if not top and nid in mat:
            return var(mat[nid])
        op, args, value = nodes[nid]
        if op == "fvar":
            return var(mat.get(functions[value].root, value))
        if top and nid in mat and mat[nid] != cur:
            return var(mat[nid])
        if op == "const":
            return f"K[{cidx[np.float64(value).tobytes()]}]"
        if op == "pvar":
            return f"P[{value}]" if lang != "c" else f"P[(size_t){value}*n+i]"
        if op == "state":
            return state(value)
        if op == "nb":
            s, off = value
            return f"NB({s}, {off})" if lang == "c" else f"nb(S, {s}, {off})"
        if op == "time":
            return "t"
        a = [c(x, False, cur, subst) for x in args]
        if op in ("add", "mul"):
            return _chain(op, a)
        if op == "sub":
            return f"({a[0]} - {a[1]})"
        if op == "div":
            return f"({a[0]} / {a[1]})"
        if op == "neg":
            return f"(-{a[0]})"
        if lang == "c":
            return _c_op(op, a)
        cmp = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
        if lang == "py":
            if op in cmp:
                return f"(1.0 if {a[0]} {cmp[op]} {a[1]} else 0.0)"
            if op == "and":
                return f"(1.0 if ({a[0]} != 0.0 and {a[1]} != 0.0) else 0.0)"
            if op == "or":
                return f"(1.0 if ({a[0]} != 0.0 or {a[1]} != 0.0) else 0.0)"
            if op == "not":
                return f"(1.0 if {a[0]} == 0.0 else 0.0)"
            if op == "select":
                return f"({a[1]} if {a[0]} != 0.0 else {a[2]})"
            f = {"abs": "fabs", "ceil": "ceil", "min": "min", "max": "max", "pow": "pow"}.get(op, op)
            return f"{f}({', '.join(a)})"
        return f"_op({op!r}, {', '.join(a)})" if op in ("select",) else _np_call(op, a)

    return c


def expr_code(prog: Program, lang: str) -> list[tuple[str, str]]:
    """[(slot variable, expression text)] in execution order; lang "np", "py" (scalars) or "c"."""
    def var(name):
        return f"v{prog.slots[name]}"
    c = _make_printer(prog, lang, var)
    return [(var(name), c(prog.functions[name].root, True, name)) for name in prog.order]


def _np_call(op, a):
    cmp = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal", "ne": "not_equal"}
    if op in cmp:
        return f"np.where(np.{cmp[op]}({a[0]}, {a[1]}), 1.0, 0.0)"
    if op == "and":
        return f"np.where(np.logical_and({a[0]} != 0, {a[1]} != 0), 1.0, 0.0)"
    if op == "or":
        return f"np.where(np.logical_or({a[0]} != 0, {a[1]} != 0), 1.0, 0.0)"
    if op == "not":
        return f"np.where({a[0]} == 0, 1.0, 0.0)"
    f = {"abs": "abs", "ceil": "ceil", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "min": "minimum",
         "max": "maximum", "pow": "power", "div": "true_divide"}.get(op, op)
    return f"np.{f}({', '.join(a)})"


def numpy_source(prog: Program, scalar: bool = False) -> str:
    lang = "py" if scalar else "np"
    used = sorted({v for (op, a, v) in prog.nodes if op == "state"})
    lines = ["def rhs(S, kin, cdt, t, P, K, nb):"]
    for s in used:
        if scalar:
            lines.append(f"    s{s} = S[{s}] if kin is None else S[{s}] + cdt * kin[{s}]")
        else:
            lines.append(f"    s{s} = S[{s}] if kin is None else S[{s}] + cdt * kin[{s}]")
    for v, e in expr_code(prog, lang):
        if lang == "np":
            e = e.replace("_op('select', ", "np.where(_nz(") if False else e
        lines.append(f"    {v} = {e}")
    lines.append("    return [" + ", ".join(f"v{d}" for d in prog.deriv_slots) + "]")
    src = "\n".join(lines)
    if not scalar:
        # select(c, a, b) → np.where(c != 0, a, b)
        src = _fix_select(src)
    return src


def _fix_select(src: str) -> str:
    out, i, key = [], 0, "_op('select', "
    while True:
        j = src.find(key, i)
        if j < 0:
            out.append(src[i:])
            return "".join(out)
        out.append(src[i:j])
        k = j + len(key)
        depth, p = 0, k
        while True:          # first argument ends at the top-level comma
            ch = src[p]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "," and depth == 0:
                break
            p += 1
        out.append(f"np.where(({src[k:p]}) != 0, ")
        i = p + 2


def ts_source(prog: Program, real: str = "double") -> str:
    """CUDA C for the whole model: one kernel a step/stage (paper 004 §5.6, translator TS).

    Constants are read from the table ``K`` (the thesis's 'export' of constant tables), which keeps
    nvcc from folding them with a different libm than the runtime's."""
    used = sorted({v for (op, a, v) in prog.nodes if op == "state"})
    body = [f"    const REAL s{s} = kin ? y[(size_t){s}*n+i] + (REAL)cdt*kin[(size_t){s}*n+i] : y[(size_t){s}*n+i];"
            for s in used]
    for v, e in expr_code(prog, "c"):
        body.append(f"    const REAL {v} = {e};")
    upd = []
    for s, d in enumerate(prog.deriv_slots):
        upd.append(f"    flint_integrate(v{d}, (size_t){s}*n+i, y, dt, mode, w, kout, acc, yout);")
    return f"""// Generated by kernels/flint/runtimes.py (translator TS) for model {prog.model.name}
typedef {real} REAL;
{COMMON_SOURCE.read_text()}
#define NB(s, off) flint_nb(y, kin, cdt, s, i + (off), n, net)
extern "C" __global__ void flint_ts_step(
    const REAL* __restrict__ K, const REAL* __restrict__ P, const REAL* __restrict__ y,
    const REAL* __restrict__ kin, double cdt, double t, double dt, int mode, double w,
    REAL* __restrict__ kout, REAL* __restrict__ acc, REAL* __restrict__ yout, int n, int net)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
{chr(10).join(body)}
{chr(10).join(upd)}
}}
"""


def _outer_big_sums(prog: Program, fn: str) -> list[int]:
    """Node ids of the outermost n-ary sums with ≥ SUM_MIN terms inside function ``fn`` (the ones
    the compiler splits over a warp), in bytecode order."""
    nodes, functions = prog.nodes, prog.functions
    mat = {}
    for name in prog.order:
        mat.setdefault(functions[name].root, name)
    out: list[int] = []

    def walk(nid, top):
        if (not top and nid in mat) or (top and mat.get(nid, fn) != fn):
            return
        op, args, _v = nodes[nid]
        if op == "fvar":
            return
        if op == "add" and len(args) >= SUM_MIN:
            if nid not in out:
                out.append(nid)
            return
        for a in args:
            walk(a, False)
    walk(functions[fn].root, True)
    return out


def _decode(code, pc: int, ltab, lane: int) -> tuple[str, list, int]:
    """The instruction at ``pc``: (opname, operands, next pc).  After ``LANE off`` the operands are
    lane ``lane``'s row of the lane table ``ltab`` (``LANE_STRIDE`` words at ``off + LANE_STRIDE·lane``)."""
    op = OPNAMES[int(code[pc])]
    if op == "LANE":
        row = int(code[pc + 1]) + LANE_STRIDE * lane
        pc += 2
        op = OPNAMES[int(code[pc])]
        args = [int(x) for x in ltab[row: row + N_ARGS[op]]]
    else:
        args = [int(x) for x in code[pc + 1: pc + 1 + N_ARGS.get(op, 0)]]
    return op, args, pc + 1 + N_ARGS.get(op, 0)


def _lane_instructions(lay, k: int) -> list:
    """Lane ``k``'s bytecode in the expression layout as [(opname, args…)], LANE prefixes resolved."""
    pc, out = int(lay.index[k]), []
    while True:
        op, args, pc = _decode(lay.code, pc, lay.lane_table, k % WARP)
        if op == "END":
            return out
        out.append((op, *args))


def _unified_c(instrs: list, table: list, rank: str) -> str:
    """C statements for a group of lanes running one opcode sequence (thesis §5.5.2: one C
    expression per unified bytecode): ``instrs`` is every lane's instruction list; an operand that
    differs between the lanes becomes a read of the lane table, ``LT[off + LANE_STRIDE*rank + j]``
    (appended to ``table``), one that does not is printed as a literal.  Evaluation order and
    operations are the interpreter's, so the result is bit-identical to IS."""
    st: list[str] = []
    out = []
    for pos, ins in enumerate(instrs[0]):
        op = ins[0]
        rows = [lane[pos][1:] for lane in instrs]
        if len(set(rows)) > 1:
            off = len(table)
            for r in rows:
                table.extend(list(r) + [0] * (LANE_STRIDE - len(r)))
            a = [f"LT[{off} + {LANE_STRIDE} * {rank} + {j}]" for j in range(len(rows[0]))]
        else:
            a = [str(x) for x in rows[0]]
        if op == "CONST":
            st.append(f"K[{a[0]}]")
        elif op == "CONST_IND":
            st.append(f"P[(size_t)({a[0]})*n+i]")
        elif op == "STATE":
            st.append(f"ST({a[0]})")
        elif op == "STATE_NB":
            st.append(f"NB({a[0]}, {a[1]})")
        elif op == "TIME":
            st.append("(REAL)t")
        elif op == "VAR":
            st.append(f"VS({a[0]})")
        elif op == "ASSIGN":
            out.append(f"VS({a[0]}) = {st.pop()};")
        else:                                   # n-ary ADD/MUL, arithmetic, comparisons, SELECT, functions
            lop = op.lower()
            k = int(rows[0][0]) if op in ("ADD", "MUL") else _arity(lop)
            args, st = st[-k:], st[:-k]
            st.append(_c_op(lop, args))
    return " ".join(out)


def ts_phase_source(prog: Program, real: str = "double") -> str:
    """The source of :func:`ts_phase_build` (its lane table aside)."""
    return ts_phase_build(prog, real)[0]


def ts_phase_build(prog: Program, real: str = "double") -> tuple[str, np.ndarray]:
    """(CUDA C, lane table) for the thesis's thread-per-expression mapping (§5.5.2, Fig. 5.8): one
    kernel a phase (``flint_ts_p<k>``), block = one warp, grid (members, warps).  Option unify (the
    thesis's per-phase unification): every run of threads of a phase with one opcode sequence is one
    C statement block, ``if (tid in [a, b))``, whose differing operands are read from the lane
    table ``LT`` (a kernel argument, not compiled in: the thesis's "export", Table 5.8), rank tid − a;
    unify off: a ``switch`` on the thread number picks the thread's expressions (redundant threads
    are extra ``case`` labels of the thread they copy).  A sum warp computes its lane's share of
    the terms, reduces it with ``flint_warp_sum`` (the same butterfly as IS's WARP_SUM) and every
    lane finishes the expression.  ``flint_update`` (flint_common.cuh) applies the integrator."""
    lay = prog.layout
    unify = prog.options.unify
    table: list[int] = []

    def var(name):
        return f"VS({prog.slots[name]})"
    c = _make_printer(prog, "c", var, state=lambda v: f"ST({v})")
    kern = []
    for p in range(len(lay.phase_warps)):
        lanes = lay.phase_lanes(p)
        groups: dict = {}
        for k, x in enumerate(lanes):
            if x is not None and x[1] is None:
                groups.setdefault(x[0], []).append(k)
        body = []
        for w in lay.sum_warps[p]:
            thread = lanes[w * WARP][0]
            blk = [f"    if (blockIdx.y == {w}) {{"]
            for fn in thread:
                subst = {}
                for b in _outer_big_sums(prog, fn):
                    q = len(subst)
                    terms = prog.nodes[b][1]
                    blk.append(f"        REAL part{q};\n        switch (lane) {{")
                    for lane in range(WARP):
                        lo, hi = lane * len(terms) // WARP, (lane + 1) * len(terms) // WARP
                        txt = c(terms[lo])
                        for tnode in terms[lo + 1:hi]:
                            txt = f"({txt} + {c(tnode)})"
                        blk.append(f"        case {lane}: part{q} = {txt}; break;")
                    blk.append(f"        }}\n        const REAL ws{q} = flint_warp_sum(part{q});")
                    subst[b] = f"ws{q}"
                blk.append(f"        {var(fn)} = {c(prog.functions[fn].root, True, fn, subst)};")
            blk.append("        return;\n    }")
            body.extend(blk)
        if unify:
            k0 = lay.phase_start[p]
            k = 0
            while k < len(lanes):
                if lanes[k] is None or lanes[k][1] is not None:
                    k += 1
                    continue
                seq = lay.lane_seq[k0 + k]
                e = k
                while e < len(lanes) and lanes[e] is not None and lanes[e][1] is None and lay.lane_seq[k0 + e] == seq:
                    e += 1
                stmts = _unified_c([_lane_instructions(lay, k0 + j) for j in range(k, e)], table, f"(tid - {k})")
                body.append(f"    if (tid >= {k} && tid < {e}) {{ {stmts} return; }}")
                k = e
        else:
            body.append("    switch (tid) {")
            for thread, tids in groups.items():
                stmts = " ".join(f"{var(fn)} = {c(prog.functions[fn].root, True, fn)};" for fn in thread)
                body.append(f"    {' '.join(f'case {k}:' for k in tids)}\n        {{ {stmts} }} break;")
            body.append("    default: break;\n    }")
        kern.append(f"""extern "C" __global__ void flint_ts_p{p}(
    const REAL* __restrict__ K, const REAL* __restrict__ P, const REAL* __restrict__ y,
    const REAL* __restrict__ kin, double cdt, double t, REAL* V, int n, int net, const int* __restrict__ LT)
{{
    const int i = blockIdx.x, lane = threadIdx.x, tid = blockIdx.y * 32 + lane;
    (void)lane; (void)tid; (void)LT;
{chr(10).join(body)}
}}
""")
    return (f"""// Generated by kernels/flint/runtimes.py (translator TS, thread per expression) for model {prog.model.name}
typedef {real} REAL;
{COMMON_SOURCE.read_text()}
#define NB(s, off) flint_nb(y, kin, cdt, s, i + (off), n, net)
#define ST(s) flint_nb(y, kin, cdt, s, i, n, 0)
#define VS(k) V[(size_t)(k)*n+i]
{chr(10).join(kern)}
""", np.array(table or [0], dtype=np.int32))


def interpreter_source(real: str, defines: list[str]) -> str:
    """The bytecode interpreter's CUDA source: opcode numbers, LANE_STRIDE, ``typedef real REAL``,
    the caller's ``defines`` (NSLOT and STACK at least), flint_common.cuh and flint_is.cu."""
    defs = [f"#define OP_{k} {v}" for k, v in OPCODES.items()] + [f"#define LANE_STRIDE {LANE_STRIDE}"]
    return "\n".join(defs + [f"typedef {real} REAL;"] + defines) + "\n" + COMMON_SOURCE.read_text() + "\n" \
        + IS_SOURCE.read_text()


def is_source(prog: Program, real: str = "double") -> str:
    nslot = 1 << max(0, (prog.n_slots - 1)).bit_length()
    depth = max(prog.stack_depth, prog.layout.stack_depth if prog.layout is not None else 1)
    stack = 1 << max(0, (depth - 1)).bit_length()
    return interpreter_source(real, [f"#define NSLOT {max(nslot, 1)}", f"#define STACK {max(stack, 2)}"])


# ---------------------------------------------------------------------------------------------
MAPPINGS = ("cell", "expression")


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
            _run_warp(gens)
    return _derivs(prog, V, S.shape[1])


def _run_warp(gens: list) -> None:
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
    warp's total.  ``ltab``/``lane``: the lane table and this thread's lane (see :func:`_decode`)."""
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
            op, a, pc = _decode(code, pc, ltab, lane)
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
                k = _arity(lop)
                args = st[-k:]
                del st[-k:]
                st.append(apply_op(lop, args, np))


# ---------------------------------------------------------------------------------------------
def memory_estimate(model: Model, n: int, n_pvar: int, runtime: str, mapping: str = "cell",
                    itemsize: int = 8, recorded: int = 0) -> tuple[int, int]:
    """(host bytes, GPU bytes) a Simulation of ``n`` members needs, roughly: states (initial, current,
    next, two RK4 stages, accumulator), per-member parameters, per function one value a member
    (the NumPy runtime's temporaries; the expression mapping's global slots), and ``recorded``
    sampled values (samples × recorded states × cells; held twice while :meth:`Simulation.advance`
    stacks them)."""
    ns, nf = model.n_states, len(model.assigns) + model.n_states
    host = 8 * n * (2 * ns + n_pvar) + (8 * n * (nf + 4 * ns) if runtime == "cpu" else 0) \
        + (itemsize * n * 5 * ns if runtime in HOST_RUNTIMES else 0) + record_bytes(recorded, itemsize)
    gpu = 0 if runtime not in GPU_RUNTIMES else itemsize * n * (5 * ns + n_pvar + (nf if mapping == "expression" else 0))
    return host, gpu


def record_bytes(recorded: int, itemsize: int = 8) -> int:
    """Host bytes of ``recorded`` sampled values: the per-sample copies and their stacked array."""
    return 2 * int(recorded) * int(itemsize)


def samples_in(steps_done: int, n_steps: int, every: int) -> int:
    """Samples :meth:`Simulation.advance` records over ``n_steps`` steps after ``steps_done``."""
    every = max(1, int(every))
    return (int(steps_done) + int(n_steps)) // every - int(steps_done) // every


def check_memory(model: Model, n: int, n_pvar: int, runtime: str, mapping: str = "cell", itemsize: int = 8,
                 recorded: int = 0) -> None:
    """Raise GridTooLarge before anything is allocated when ``n`` members (and ``recorded`` sampled
    values, see :func:`memory_estimate`) cannot fit in host or GPU memory."""
    from .. import backend as bk
    if n < 1:
        raise InvalidParameter(f"the number of members/cells must be ≥ 1, got {n}")
    host, gpu = memory_estimate(model, n, n_pvar, runtime, mapping, itemsize, recorded)
    what = f"{n:,} members/cells of {model.name} ({model.n_states} states)"
    if recorded:
        what += f" with {recorded:,} recorded values"
    free_host = bk.host_available_memory()
    if host > 0.8 * free_host:
        raise GridTooLarge(f"{what} need about {host / 2**30:.1f} GiB of host memory; "
                           f"{free_host / 2**30:.1f} GiB are available: use fewer members or cells")
    if gpu:
        try:                                     # the GPU's free memory without selecting it as the app's backend
            import cupy as cp
            free = bk.Backend("gpu", cp).free_memory()
        except Exception:                        # no CuPy / no device: the runtime reports that itself
            return
        if gpu > 0.9 * free:
            raise GridTooLarge(f"{what} need about {gpu / 2**30:.1f} GiB of GPU memory; {free / 2**30:.1f} GiB "
                               "are free: use fewer members or cells")


class Simulation:
    """Integrate a compiled model for an ensemble or a line/ring of cells on one runtime.

    Parameters
    ----------
    model : Model
    runtime : "cpu" (NumPy), "is" (bytecode interpreter on the GPU), "ts" (generated CUDA C), "c" / "c-is"
        (the TS / IS source compiled by the host C++ compiler: the thesis's CPU-1 TS / IS)
    n : ensemble size (ignored for a network: n = network.n_cells)
    member_params : name → array of n values (per-member parameters)
    network : Network or None
    integrator : "euler" | "rk4";  dtype : "float64" | "float32"
    y0 : initial states, (n_states,) or (n_states, n); default: the model's
    threads : host threads of runtimes c and c-is (OpenMP over cells; 1 = the thesis's CPU-1)
    mapping : "cell" (one thread integrates one member/cell: the whole bytecode or generated
        function) or "expression" (the thesis's mapping: one launch a phase, one thread a bytecode,
        blocks of one warp; redundant threads and warp-parallel sums apply).  On "cpu" it selects
        the bytecode emulation (with ``bytecode_on_cpu``); the generated NumPy code has no threads.
    """

    def __init__(self, model: Model, runtime: str = "cpu", n: int = 1, member_params: dict | None = None,
                 network: Network | None = None, integrator: str = "euler", dtype: str = "float64",
                 options: CompileOptions | None = None, y0=None, bytecode_on_cpu: bool = False,
                 mapping: str = "cell", threads: int = 1):
        if runtime not in RUNTIMES:
            raise InvalidParameter(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        if integrator not in INTEGRATORS:
            raise InvalidParameter(f"integrator must be euler or rk4, got {integrator!r}")
        if dtype not in ("float64", "float32"):
            raise InvalidParameter(f"dtype must be float64 or float32, got {dtype!r}")
        if mapping not in MAPPINGS:
            raise InvalidParameter(f"mapping must be one of {', '.join(MAPPINGS)}, got {mapping!r}")
        self.model, self.runtime, self.integrator, self.dtype = model, runtime, integrator, np.dtype(dtype)
        self.mapping = mapping
        check_memory(model, network.n_cells if network is not None else int(n), len(member_params or {}),
                     runtime, mapping, self.dtype.itemsize)
        t0 = _time.perf_counter()
        self.prog = compile_model(model, n, member_params, network, options)
        self.n = self.prog.n_members
        self.net_code = {None: 0, "line": 1, "ring": 2}[network.kind if network else None]
        self.bytecode_on_cpu = bytecode_on_cpu
        y = np.array([model.states[s] for s in model.states], dtype=np.float64)[:, None].repeat(self.n, 1)
        if y0 is not None:
            y0 = np.asarray(y0, dtype=np.float64)
            y = np.broadcast_to(y0.reshape(y0.shape[0], -1), y.shape).copy() if y0.ndim else y
        self.steps = 0
        self.t = 0.0
        self.block_size = 128
        self.block_history: list = []
        if runtime == "cpu":
            self.xp = np
            self.scalar = self.n == 1 and not bytecode_on_cpu
            ns = {"np": np, "nb": None, **{k: getattr(math, k) for k in dir(math) if not k.startswith("_")}}
            exec(numpy_source(self.prog, scalar=self.scalar), ns)      # noqa: S102 (our own generated code)
            self._rhs = ns["rhs"]
            self._nb = self._nb_cpu
            self.y = y.astype(self.dtype)
            self.P = self.prog.pvar_values.astype(self.dtype)
            self.K = self.prog.consts.astype(self.dtype)
        elif runtime in HOST_RUNTIMES:
            if mapping != "cell":
                raise InvalidParameter(f"runtime {runtime} runs the cell mapping (cells spread over host threads); "
                                       "the expression mapping is a GPU thread layout: use is or ts")
            if int(threads) < 1:
                raise InvalidParameter(f"threads must be ≥ 1, got {threads}")
            from .host_c import load_advance
            self.xp = np
            self.threads = int(threads)
            real = "double" if self.dtype == np.float64 else "float"
            flavour = "ts" if runtime == "c" else "is"
            self.source = ts_source(self.prog, real) if flavour == "ts" else is_source(self.prog, real)
            self._c_advance, self._c_ptr = load_advance(self.source, flavour, real)
            self.y = np.ascontiguousarray(y.astype(self.dtype))
            self.P = np.ascontiguousarray(self.prog.pvar_values.astype(self.dtype)) if self.prog.pvar_values.size \
                else np.zeros((1, self.n), dtype=self.dtype)
            self.K = np.ascontiguousarray(self.prog.consts.astype(self.dtype)) if self.prog.consts.size \
                else np.zeros(1, dtype=self.dtype)
            # the arrays that stay put, and their pointers, made once (y is passed per call: set_state replaces it)
            import ctypes
            ip = ctypes.POINTER(ctypes.c_int32)
            self._c_keep = [np.ascontiguousarray(a, dtype=np.int32) if a is not None else None
                            for a in (self.prog.code, self.prog.index, self.prog.deriv_slots)]
            self._c_keep += [np.zeros_like(self.y) for _ in range(4)]      # y2, k1, k2, acc
            ptr = [a.ctypes.data_as(ip) if a is not None else None for a in self._c_keep[:3]]
            self._c_before_y = ptr + [a.ctypes.data_as(self._c_ptr) for a in (self.K, self.P)]
            self._c_after_y = [a.ctypes.data_as(self._c_ptr) for a in self._c_keep[3:]]
        else:
            from .. import backend as bk
            ok, why = bk.gpu_available()
            if not ok:
                raise BackendUnavailable(f"runtime {runtime} needs a GPU: {why}")
            import cupy as cp
            self.xp = cp
            real = "double" if self.dtype == np.float64 else "float"
            self.d_dslot = cp.asarray(np.array(self.prog.deriv_slots, dtype=np.int32))
            if mapping == "expression":
                lay = self.prog.layout
                if runtime == "is":
                    self.source = is_source(self.prog, real)
                    mod = cp.RawModule(code=self.source, options=NVRTC_OPTIONS)
                    self._phase_kernels = [mod.get_function("flint_is_phase")] * len(lay.phase_warps)
                    self._update_kernel = mod.get_function("flint_update")
                    self.d_code = cp.asarray(lay.code if lay.code.size else np.zeros(1, np.int32))
                    self.d_index = cp.asarray(lay.index)
                    self.d_ltab = cp.asarray(lay.lane_table)
                else:
                    self.source, lt = ts_phase_build(self.prog, real)
                    self.d_ltab = cp.asarray(lt)
                    mod = cp.RawModule(code=self.source, options=NVRTC_OPTIONS)
                    self._phase_kernels = [mod.get_function(f"flint_ts_p{p}") for p in range(len(lay.phase_warps))]
                    self._update_kernel = mod.get_function("flint_update")
                self.V = cp.zeros((max(self.prog.n_slots, 1), self.n), dtype=self.dtype)
                self._kernel = None
            elif runtime == "is":
                self.source = is_source(self.prog, real)
                self._kernel = cp.RawKernel(self.source, "flint_is_step", options=NVRTC_OPTIONS)
                self.d_code = cp.asarray(self.prog.code)
                self.d_index = cp.asarray(self.prog.index) if self.prog.index is not None else None
            else:
                self.source = ts_source(self.prog, real)
                self._kernel = cp.RawKernel(self.source, "flint_ts_step", options=NVRTC_OPTIONS)
            if self._kernel is not None:
                self._kernel.compile()
            self.y = cp.asarray(y.astype(self.dtype))
            self.y2 = cp.empty_like(self.y)
            self.P = cp.asarray(self.prog.pvar_values.astype(self.dtype)) if self.prog.pvar_values.size \
                else cp.zeros((1, self.n), dtype=self.dtype)
            self.K = cp.asarray(self.prog.consts.astype(self.dtype))
            self.k1 = cp.zeros_like(self.y)
            self.k2 = cp.zeros_like(self.y)
            self.acc = cp.zeros_like(self.y)
            self._tuning = runtime == "ts" and mapping == "cell"   # block size auto-tuning (thesis §5.6);
            # the expression mapping keeps blocks of one warp (warp-parallel sums, redundant threads)
            self._tune_window: list = []
        self.compile_seconds = _time.perf_counter() - t0

    # --- CPU ------------------------------------------------------------------------------
    def _nb_cpu(self, S, s, off):
        n = self.n
        idx = np.arange(n) + off
        idx = np.mod(idx, n) if self.net_code == 2 else np.clip(idx, 0, n - 1)
        return S[s, idx]

    def _deriv_cpu(self, S, kin, cdt, t):
        if self.bytecode_on_cpu:
            return interpret(self.prog, S, kin, cdt, t, self.P, mapping=self.mapping)
        if self.scalar:
            d = self._rhs([float(v) for v in S[:, 0]], None if kin is None else [float(v) for v in kin[:, 0]],
                          cdt, t, None, [float(k) for k in self.K], None)
            return np.array(d, dtype=self.dtype)[:, None]
        if self.net_code:
            Sk = S if kin is None else S + cdt * kin          # neighbours' stage values
            nbf = lambda _S, s, off: self._nb_cpu(Sk, s, off)   # noqa: E731
        else:
            nbf = None
        d = self._rhs(S, kin, cdt, t, self.P, self.K, nbf)
        return np.stack([np.broadcast_to(np.asarray(v, dtype=self.dtype), (self.n,)) for v in d])

    def _step_cpu(self, dt):
        t = self.steps * dt
        if self.integrator == "euler":
            return self.y + dt * self._deriv_cpu(self.y, None, 0.0, t)
        acc = kin = None
        for j, (c, w) in enumerate(RK4_STAGES):
            d = self._deriv_cpu(self.y, kin, c * dt, t + c * dt) if j else self._deriv_cpu(self.y, None, 0.0, t)
            if j == 0:
                acc = w * d
            elif j < 3:
                acc = acc + w * d
            else:
                return self.y + dt * (acc + w * d)
            kin = d

    def _steps_c(self, k: int, dt: float) -> None:
        """``k`` steps in the compiled host library (runtimes c, c-is); y is updated in place."""
        self._c_advance(*self._c_before_y, self.y.ctypes.data_as(self._c_ptr), *self._c_after_y,
                        self.prog.n_states, self.n, self.net_code, self.steps, int(k), float(dt),
                        int(self.integrator == "rk4"), self.threads)
        self.steps += int(k)

    # --- GPU ------------------------------------------------------------------------------
    def _launch(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        if self.mapping == "expression":
            return self._launch_phases(y, kin, cdt, t, dt, mode, w, kout, yout)
        cp = self.xp
        bs = self.block_size
        grid = ((self.n + bs - 1) // bs,)
        f64 = np.float64
        if self.runtime == "is":
            args = (self.d_code, self.d_index, self.K, self.P, y, kin, f64(cdt), f64(t), f64(dt), np.int32(mode),
                    f64(w), kout, self.acc, yout, self.d_dslot, np.int32(self.prog.n_states), np.int32(self.n),
                    np.int32(self.net_code))
        else:
            args = (self.K, self.P, y, kin, f64(cdt), f64(t), f64(dt), np.int32(mode), f64(w), kout, self.acc, yout,
                    np.int32(self.n), np.int32(self.net_code))
        self._kernel(grid, (bs,), args)

    def _launch_phases(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        """Thesis mapping: one launch a phase, grid (members, warps), 32 threads a block."""
        lay, f64, i32 = self.prog.layout, np.float64, np.int32
        for p, kern in enumerate(self._phase_kernels):
            if lay.phase_warps[p] == 0:
                continue
            grid = (self.n, lay.phase_warps[p])
            if self.runtime == "is":
                args = (self.d_code, self.d_index, i32(lay.phase_start[p]), self.K, self.P, y, kin, f64(cdt), f64(t),
                        self.V, i32(self.n), i32(self.net_code), self.d_ltab)
            else:
                args = (self.K, self.P, y, kin, f64(cdt), f64(t), self.V, i32(self.n), i32(self.net_code), self.d_ltab)
            kern(grid, (32,), args)
        bs = 128
        self._update_kernel(((self.n + bs - 1) // bs,), (bs,),
                            (self.V, self.d_dslot, y, f64(dt), i32(mode), f64(w), kout, self.acc, yout,
                             i32(self.prog.n_states), i32(self.n)))

    def _step_gpu(self, dt):
        t = self.steps * dt
        if self.integrator == "euler":
            self._launch(self.y, None, 0.0, t, dt, 0, 0.0, None, self.y2)
        else:
            kin, kout = None, self.k1
            for j, (c, w) in enumerate(RK4_STAGES):
                mode = 1 if j == 0 else (3 if j == 3 else 2)
                self._launch(self.y, kin, c * dt, t + c * dt, dt, mode, w, kout, self.y2)
                kin, kout = kout, (self.k2 if kout is self.k1 else self.k1)
        self.y, self.y2 = self.y2, self.y

    # --- driver ---------------------------------------------------------------------------
    def advance(self, n_steps: int, dt: float, record: list[int] | None = None, every: int = 100,
                cells=None):
        """Integrate ``n_steps`` of ``dt``; sample states ``record`` (indices) every ``every`` steps.

        Returns (times (k,), samples (k, len(record), n_cells_recorded)) as NumPy arrays.
        Raises SimulationBlowUp (naming the state and time) on NaN/Inf."""
        if not (dt > 0 and math.isfinite(dt)):
            raise InvalidParameter(f"dt must be > 0, got {dt}")
        record = list(range(self.prog.n_states)) if record is None else list(record)
        every = max(1, int(every))
        cells = slice(None) if cells is None else cells
        n_rec_cells = len(range(self.n)[cells]) if isinstance(cells, slice) else len(np.atleast_1d(cells))
        recorded = samples_in(self.steps, n_steps, every) * len(record) * n_rec_cells
        need = record_bytes(recorded, self.dtype.itemsize)
        from .. import backend as bk
        if need > 0.8 * bk.host_available_memory():
            raise GridTooLarge(f"recording {recorded:,} values ({len(record)} states × {n_rec_cells} cells every "
                               f"{every} steps) needs about {need / 2**30:.1f} GiB of host memory; "
                               f"{bk.host_available_memory() / 2**30:.1f} GiB are available: record less often")
        xp = self.xp
        times, samples = [], []
        gpu = self.runtime in GPU_RUNTIMES
        tune_ev = None
        left = int(n_steps)
        chunk = 64                                # compiled steps a call: adapted to ~HOST_CALL_S each
        while self.runtime in HOST_RUNTIMES and left > 0:      # compiled loop up to the next sample
            k = min(left, every - self.steps % every, chunk)
            t_call = _time.perf_counter()
            self._steps_c(k, dt)                  # Ctrl+C is seen between calls: keep them short
            el = _time.perf_counter() - t_call
            chunk = max(1, min(4 * chunk, int(k * HOST_CALL_S / el))) if el > 0 else 4 * chunk
            left -= k
            if self.steps % every == 0:
                times.append(self.steps * dt)
                samples.append(self.y[record][:, cells].copy())
        for _ in range(left):                         # (0 left for the host runtimes)
            if gpu:
                if self._tuning and self.steps % 100 == 0:
                    tune_ev = self._tune_step(tune_ev)
                self._step_gpu(dt)
            else:
                with np.errstate(all="ignore"):
                    try:
                        self.y = self._step_cpu(dt)
                    except (ValueError, OverflowError, ZeroDivisionError) as exc:
                        raise SimulationBlowUp(f"math error at t = {self.steps * dt:g} {self.model.time_units}: "
                                               f"{exc}") from None
            self.steps += 1
            if self.steps % every == 0:
                times.append(self.steps * dt)
                samples.append(self.y[record][:, cells].copy())
        self.t = self.steps * dt
        if gpu:
            out = xp.asnumpy(xp.stack(samples)) if samples else np.zeros((0, len(record), 0))
        else:
            out = np.stack(samples) if samples else np.zeros((0, len(record), 0))
        if not bool(xp.all(xp.isfinite(self.y))):
            bad = np.where(~np.isfinite(self.state()).all(axis=1))[0]
            names = [list(self.model.states)[b] for b in bad]
            raise SimulationBlowUp(f"NaN/Inf in {', '.join(names)} by t = {self.t:g} {self.model.time_units} "
                                   "(try a smaller dt)")
        return np.array(times), out

    def _tune_step(self, ev):
        """Every 100 steps try the next block size (+32); stop when a window gets slower (thesis §5.6)."""
        cp = self.xp
        now = cp.cuda.Event()
        now.record()
        if ev is not None:
            now.synchronize()
            ms = cp.cuda.get_elapsed_time(ev, now)
            self.block_history.append((self.block_size, ms))
            if len(self.block_history) >= 2 and ms > self.block_history[-2][1]:
                self.block_size = self.block_history[-2][0]
                self._tuning = False
                return None
            if self.block_size + 32 > 1024:
                self._tuning = False
                return None
            self.block_size += 32
        else:
            self.block_size = 32
        return now

    def state(self) -> np.ndarray:
        """Current states, (n_states, n) NumPy."""
        return self.xp.asnumpy(self.y) if self.runtime in GPU_RUNTIMES else np.asarray(self.y)

    def set_state(self, y) -> None:
        y = np.asarray(y, dtype=self.dtype).reshape(self.prog.n_states, self.n)
        self.y = self.xp.asarray(y) if self.runtime in GPU_RUNTIMES else y.copy()


def network_stimulus(model: Model, n: int, first: int = 5, param: str = "stim_amplitude") -> dict:
    """Per-cell stimulus for a line/ring: the model's stimulus in the first ``first`` cells only."""
    if param not in model.params:
        return {}
    amp = np.zeros(n)
    amp[:min(first, n)] = model.params[param]
    return {param: amp}
