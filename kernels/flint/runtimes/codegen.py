"""Code generation from a compiled Flint program: the NumPy/Python right-hand side (runtime ``cpu``),
the translator's CUDA C (TS, thread per cell and thread per expression), the bytecode interpreter's
CUDA source (IS), and the CUDA prelude they share (``flint_common.cuh``) with the NVRTC options.

Every printer evaluates the same scheduled DAG with the same operations in the same order as the
interpreter, so in float64 the runtimes agree to rounding of the math library (paper 004 §5.7,
Table 5.9: IS vs CPU ≈ 1e-13).  The generated texts must stay byte-identical across refactors
(``tests/test_flint_source_hashes.py``); their header comments therefore still name
``kernels/flint/runtimes.py``, where they were first generated.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..compiler import LANE_STRIDE, OPCODES, OPNAMES, N_ARGS, SUM_MIN, WARP, Program
from ..expr import UNARY

NVRTC_OPTIONS = ("--fmad=false", "-std=c++14")     # no FMA contraction: same rounding as NumPy
CUDA_DIR = Path(__file__).resolve().parents[1]     # the .cu/.cuh sources beside the compiler
IS_SOURCE = CUDA_DIR / "flint_is.cu"
COMMON_SOURCE = CUDA_DIR / "flint_common.cuh"     # integrator update, shared by IS and TS


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


def arity(op: str) -> int:
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
        src = fix_select(src)
    return src


def fix_select(src: str) -> str:
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


def decode(code, pc: int, ltab, lane: int) -> tuple[str, list, int]:
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
        op, args, pc = decode(lay.code, pc, lay.lane_table, k % WARP)
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
            k = int(rows[0][0]) if op in ("ADD", "MUL") else arity(lop)
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
