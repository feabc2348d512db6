"""Expression trees of the Flint model language: parse, print (native / C / SBML-L3 / NumPy), evaluate.

An expression is an immutable :class:`Expr` ``(op, args, value)``.  Leaves: ``const`` (value),
``sym`` (a name, resolved later to a state, parameter, assigned variable or the time ``t``) and
``nb`` (a state of a neighbouring cell in a line/ring, ``nb(V, -1)``).  Inner nodes: n-ary
``add``/``mul`` (left to right), ``sub div neg pow``, the functions in :data:`UNARY`, ``min max``,
comparisons and logic (value 1.0 / 0.0) and ``select(c, a, b)`` (= ``a if c != 0 else b``).

The text syntax is Python's, with ``^`` accepted for powers, ``piecewise(a, c, b)``/``where(c, a, b)``
and ``a if c else b`` for conditionals.  Paper 004 (Okuyama 2013) §5.2: expressions → bytecode.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import numpy as np

from .. import limits
from ..errors import InvalidParameter

UNARY = ("exp", "log", "log10", "sqrt", "abs", "floor", "ceil", "sin", "cos", "tan", "tanh", "sinh",
         "cosh", "asin", "acos", "atan")
BINARY_FUNCS = ("min", "max")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
LOGIC = ("and", "or", "not")
_ALIASES = {"ln": "log", "fabs": "abs", "ceiling": "ceil", "arcsin": "asin", "arccos": "acos",
            "arctan": "atan"}
_CMP_FUNCS = {"lt_func": "lt", "leq_func": "le", "gt_func": "gt", "geq_func": "ge", "eq_func": "eq",
              "neq_func": "ne", "and_func": "and", "or_func": "or", "not_func": "not"}


# --- the operator table ----------------------------------------------------------------------
@dataclass(frozen=True)
class Op:
    """One operation of the expression language and how every target writes it (one table for the
    C, NumPy and Python printers of :mod:`kernels.flint.runtimes.codegen`, :func:`to_text` and
    :func:`apply_op`).

    arity: operands (−1: n-ary, printed as the left-nested chain ``((a ∘ b) ∘ c)``, the
    interpreter's order).  c / numpy / python: format strings of the printed operands ``{0} {1} {2}``
    (for an n-ary operation: the infix symbol).  sbml: the SBML L3 infix name (function name,
    comparison or power symbol).  ufunc: the NumPy function :func:`apply_op` evaluates it with."""
    name: str
    arity: int
    c: str
    numpy: str
    python: str
    sbml: str
    ufunc: str | None = None


def _unary(name: str, c: str | None = None, np_name: str | None = None, py: str | None = None,
           sbml: str | None = None) -> Op:
    npn = np_name or name
    return Op(name, 1, f"{c or name}({{0}})", f"np.{npn}({{0}})", f"{py or name}({{0}})", sbml or name, npn)


def _compare(name: str, sym: str, ufunc: str) -> Op:
    return Op(name, 2, f"(({{0}}) {sym} ({{1}}) ? 1.0 : 0.0)", f"np.where(np.{ufunc}({{0}}, {{1}}), 1.0, 0.0)",
              f"(1.0 if {{0}} {sym} {{1}} else 0.0)", sym, ufunc)


_UNARY_FORMS = {"abs": dict(c="fabs", np_name="abs", py="fabs"), "log": dict(sbml="ln"),
                "ceil": dict(sbml="ceiling"), "asin": dict(np_name="arcsin", sbml="arcsin"),
                "acos": dict(np_name="arccos", sbml="arccos"), "atan": dict(np_name="arctan", sbml="arctan")}

OPERATORS: dict[str, Op] = {o.name: o for o in [
    Op("add", -1, "+", "+", "+", "+"),
    Op("mul", -1, "*", "*", "*", "*"),
    Op("sub", 2, "({0} - {1})", "({0} - {1})", "({0} - {1})", "-"),
    Op("div", 2, "({0} / {1})", "({0} / {1})", "({0} / {1})", "/", "true_divide"),
    Op("neg", 1, "(-{0})", "(-{0})", "(-{0})", "-"),
    Op("pow", 2, "pow({0}, {1})", "np.power({0}, {1})", "pow({0}, {1})", "^", "power"),
    *[_unary(u, **_UNARY_FORMS.get(u, {})) for u in UNARY],
    Op("min", 2, "fmin({0}, {1})", "np.minimum({0}, {1})", "min({0}, {1})", "min", "minimum"),
    Op("max", 2, "fmax({0}, {1})", "np.maximum({0}, {1})", "max({0}, {1})", "max", "maximum"),
    _compare("lt", "<", "less"), _compare("le", "<=", "less_equal"), _compare("gt", ">", "greater"),
    _compare("ge", ">=", "greater_equal"), _compare("eq", "==", "equal"), _compare("ne", "!=", "not_equal"),
    Op("and", 2, "(({0}) != 0.0 && ({1}) != 0.0 ? 1.0 : 0.0)",
       "np.where(np.logical_and({0} != 0, {1} != 0), 1.0, 0.0)", "(1.0 if ({0} != 0.0 and {1} != 0.0) else 0.0)",
       "&&", "logical_and"),
    Op("or", 2, "(({0}) != 0.0 || ({1}) != 0.0 ? 1.0 : 0.0)",
       "np.where(np.logical_or({0} != 0, {1} != 0), 1.0, 0.0)", "(1.0 if ({0} != 0.0 or {1} != 0.0) else 0.0)",
       "||", "logical_or"),
    Op("not", 1, "(({0}) == 0.0 ? 1.0 : 0.0)", "np.where({0} == 0, 1.0, 0.0)", "(1.0 if {0} == 0.0 else 0.0)", "!"),
    Op("select", 3, "(({0}) != 0.0 ? ({1}) : ({2}))", "np.where(({0}) != 0, {1}, {2})", "({1} if {0} != 0.0 else {2})",
       "piecewise", "where"),
]}


def print_op(op: str, args: list, target: str) -> str:
    """``op`` applied to the already printed operands ``args`` in ``target`` ("c", "numpy", "python")."""
    o = OPERATORS[op]
    form = getattr(o, target)
    if o.arity < 0:                          # n-ary: left-nested, the interpreter's order
        r = args[0]
        for x in args[1:]:
            r = f"({r} {form} {x})"
        return r
    return form.format(*args)


@dataclass(frozen=True)
class Expr:
    op: str
    args: tuple = ()
    value: object = None          # float for const, str for sym, (str, int) for nb

    # --- convenience ------------------------------------------------------------------------
    def symbols(self) -> set[str]:
        out: set[str] = set()
        stack = [self]
        while stack:
            e = stack.pop()
            if e.op == "sym":
                out.add(e.value)
            elif e.op == "nb":
                out.add(e.value[0])
            stack.extend(e.args)
        return out

    def __str__(self) -> str:
        return to_text(self)


def const(v: float) -> Expr:
    return Expr("const", (), float(v))


def sym(name: str) -> Expr:
    return Expr("sym", (), name)


def substitute(e: Expr, mapping: dict[str, Expr]) -> Expr:
    if e.op == "sym":
        return mapping.get(e.value, e)
    if not e.args:
        return e
    return Expr(e.op, tuple(substitute(a, mapping) for a in e.args), e.value)


#: per (function body, parameter names): the body and its size summary (:func:`_summary`); per
#: (body, leaf arguments): the inlined result, shared by every call with the same leaf arguments
_SUMMARIES: dict = {}
_LEAF_CALLS: dict = {}
_CACHE_MAX = 256


def _summary(body: Expr, params) -> tuple:
    """(nodes, depth, {parameter: (occurrences, deepest level)}) of ``body`` as a tree, memoised."""
    key = (id(body), params)
    hit = _SUMMARIES.get(key)
    if hit is not None and hit[0] is body:
        return hit[1]
    info = _walk(body, params)
    if len(_SUMMARIES) > _CACHE_MAX:
        _SUMMARIES.clear()
    _SUMMARIES[key] = (body, info)
    return info


def _walk(body: Expr, params) -> tuple:
    """(nodes, depth, {name in params: (occurrences, deepest level)}) of ``body`` as a tree,
    computed over its distinct nodes (iteratively)."""
    info: dict[int, tuple] = {}
    stack = [(body, False)]
    while stack:
        x, ready = stack.pop()
        if id(x) in info:
            continue
        if not x.args:
            info[id(x)] = (1, 1, {x.value: (1, 1)} if x.op == "sym" and x.value in params else {})
        elif ready:
            kids = [info[id(a)] for a in x.args]
            occ: dict = {}
            for k in kids:
                for p, (c, d) in k[2].items():
                    c0, d0 = occ.get(p, (0, 0))
                    occ[p] = (c0 + c, max(d0, d + 1))
            info[id(x)] = (1 + sum(k[0] for k in kids), 1 + max(k[1] for k in kids), occ)
        else:
            stack.append((x, True))
            stack.extend((a, False) for a in x.args if id(a) not in info)
    return info[id(body)]


def inline(body: Expr, mapping: dict[str, Expr], element: str) -> Expr:
    """``body`` with its parameters replaced by ``mapping`` (a function call inlined), sharing kept:
    a sub-expression used twice is one object, so time and memory follow the distinct nodes, and
    calls of one body with the same leaf arguments (``f(a) + f(a)``) return one shared result.
    The inlined expression's size as a tree (what the compilers walk) and its depth are predicted
    *before* anything is built, from the body's memoised size summary (nodes N, depth D, and per
    parameter p its occurrences c_p and deepest level d_p) and the arguments' sizes (n_p, D_p):
    nodes = N + Σ c_p (n_p − 1), depth = max(D, d_p + D_p − 1).  Past either limit of
    :func:`kernels.limits.current`, :class:`kernels.limits.ExpansionLimit` names ``element``
    (function definitions that call each other twice per level expand to 2^k nodes: refused at the
    first level past the limit, after linear work)."""
    lim = limits.current()
    params = frozenset(mapping)
    leaf_key = None
    if all(not a.args for a in mapping.values()):
        leaf_key = (id(body), tuple(sorted((p, a.op, repr(a.value)) for p, a in mapping.items())))
        hit = _LEAF_CALLS.get(leaf_key)
        if hit is not None and hit[0] is body:
            return hit[1]
    nodes, depth, occ = _summary(body, params)
    for p, (count, level) in occ.items():
        n_arg, d_arg = tree_size(mapping[p])
        nodes += count * (n_arg - 1)
        depth = max(depth, level + d_arg - 1)
    if nodes > lim.expression_nodes:
        raise limits.too_many_nodes(element, nodes)
    if depth > lim.expression_depth:
        raise limits.too_deep(element)
    memo: dict[int, Expr] = {}
    stack = [(body, False)]
    while stack:
        e, ready = stack.pop()
        if id(e) in memo:
            continue
        if e.op == "sym":
            memo[id(e)] = mapping.get(e.value, e)
        elif not e.args:
            memo[id(e)] = e
        elif ready:
            memo[id(e)] = Expr(e.op, tuple(memo[id(a)] for a in e.args), e.value)
        else:
            stack.append((e, True))
            stack.extend((a, False) for a in e.args if id(a) not in memo)
    out = memo[id(body)]
    if leaf_key is not None:
        if len(_LEAF_CALLS) > _CACHE_MAX:
            _LEAF_CALLS.clear()
        _LEAF_CALLS[leaf_key] = (body, out)
    return out


def tree_size(e: Expr) -> tuple[int, int]:
    """(nodes, depth) of ``e`` as a tree, computed over its distinct nodes (iteratively)."""
    return _walk(e, frozenset())[:2]


def check_size(e: Expr, element: str, lim=None) -> None:
    """ExpansionLimit naming ``element`` when ``e`` has more tree nodes or levels than the limits."""
    lim = lim or limits.current()
    nodes, depth = tree_size(e)
    if nodes > lim.expression_nodes:
        raise limits.too_many_nodes(element, nodes)
    if depth > lim.expression_depth:
        raise limits.too_deep(element)


# --- parsing ---------------------------------------------------------------------------------
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


def parse(text: str, where: str = "expression") -> Expr:
    """Parse one expression of the native syntax (see module docstring)."""
    src = text.strip().replace("^", "**")
    shown = src if len(src) <= 60 else src[:57] + "…"
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        raise InvalidParameter(f"{where}: cannot parse {shown!r} ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise InvalidParameter(f"{where}: the expression is nested too deeply (or is too long) to read") from None
    except ValueError as exc:                     # e.g. an integer literal beyond Python's digit limit
        raise InvalidParameter(f"{where}: cannot parse {shown!r} ({exc})") from None
    try:
        return from_ast(tree.body, where, text)
    except RecursionError:
        raise InvalidParameter(f"{where}: the expression is nested too deeply to read") from None


def from_ast(n, where: str, text: str) -> Expr:
    def rec(x):
        return from_ast(x, where, text)
    if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
        try:
            return const(n.value)
        except OverflowError:
            raise InvalidParameter(f"{where}: the number {str(n.value)[:12]}… ({len(str(n.value))} digits) is "
                                   "too large for a float") from None
    if isinstance(n, ast.Name):
        if n.id in ("pi",):
            return const(math.pi)
        if n.id in ("e",):
            return const(math.e)
        if n.id in ("inf", "INFINITY"):
            return const(math.inf)
        return sym(n.id)
    if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
        op = _BINOPS[type(n.op)]
        a, b = rec(n.left), rec(n.right)
        if op in ("add", "mul") and a.op == op:          # left-nested chain → n-ary, same order
            return Expr(op, a.args + (b,))
        if op in ("add", "mul"):
            return Expr(op, (a, b))
        return Expr(op, (a, b))
    if isinstance(n, ast.UnaryOp):
        if isinstance(n.op, ast.USub):
            a = rec(n.operand)
            if a.op == "const":
                return const(-a.value)
            return Expr("neg", (a,))
        if isinstance(n.op, ast.UAdd):
            return rec(n.operand)
        if isinstance(n.op, ast.Not):
            return Expr("not", (rec(n.operand),))
    if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _CMPOPS:
        return Expr(_CMPOPS[type(n.ops[0])], (rec(n.left), rec(n.comparators[0])))
    if isinstance(n, ast.BoolOp):
        op = "and" if isinstance(n.op, ast.And) else "or"
        out = rec(n.values[0])
        for v in n.values[1:]:
            out = Expr(op, (out, rec(v)))
        return out
    if isinstance(n, ast.IfExp):
        return Expr("select", (rec(n.test), rec(n.body), rec(n.orelse)))
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
        f = _ALIASES.get(n.func.id, n.func.id)
        f = _CMP_FUNCS.get(f, f)
        args = [rec(a) for a in n.args] if f != "nb" else None
        if f in UNARY and len(args) == 1:
            return Expr(f, (args[0],))
        if f in BINARY_FUNCS + ("lt", "le", "gt", "ge", "eq", "ne", "and", "or") and len(args) == 2:
            return Expr(f, tuple(args))
        if f == "not" and len(args) == 1:
            return Expr("not", (args[0],))
        if f == "pow" and len(args) == 2:
            return Expr("pow", tuple(args))
        if f == "where" and len(args) == 3:
            return Expr("select", tuple(args))
        if f == "piecewise" and len(args) >= 3 and len(args) % 2 == 1:
            out = args[-1]
            for i in range(len(args) - 3, -1, -2):
                out = Expr("select", (args[i + 1], args[i], out))
            return out
        if f == "nb" and len(n.args) == 2 and isinstance(n.args[0], ast.Name):
            off = n.args[1]
            if isinstance(off, ast.UnaryOp) and isinstance(off.op, ast.USub) and isinstance(off.operand, ast.Constant):
                k = -int(off.operand.value)
            elif isinstance(off, ast.Constant):
                k = int(off.value)
            else:
                raise InvalidParameter(f"{where}: nb(state, offset) needs an integer offset")
            return Expr("nb", (), (n.args[0].id, k))
        raise InvalidParameter(f"{where}: unsupported function {n.func.id}() with {len(n.args)} "
                               f"argument(s) in {text.strip()!r}")
    raise InvalidParameter(f"{where}: unsupported construct {type(n).__name__} in {text.strip()!r}")


# --- printing --------------------------------------------------------------------------------
_PREC = {"select": 0, "or": 1, "and": 2, "not": 3, "cmp": 4, "add": 5, "sub": 5, "mul": 6, "div": 6,
         "neg": 7, "pow": 8}
_CMP_TXT = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _num(v: float) -> str:
    if math.isinf(v):
        return "inf" if v > 0 else "(-inf)"
    r = repr(float(v))
    return r


class TextPrinter:
    """Expr → infix text in our native syntax (``parse(to_text(e)) == e``), with the fewest parentheses
    operator precedence allows.  Subclasses (:class:`SbmlTextPrinter`) change how a target writes
    powers, logic, conditionals and function names; the names come from :data:`OPERATORS`."""
    pow_symbol = "**"

    def func_name(self, op: str) -> str:
        return op

    def logic(self, op: str, a: str, b: str) -> str:
        return f"{a} {op} {b}"

    def negation(self, x: Expr) -> str:
        return f"not {self.paren(x, 4)}"

    def select(self, c: str, a: str, b: str) -> str:
        return f"where({c}, {a}, {b})"

    def __call__(self, e: Expr) -> str:
        return self.text(e)[0]

    def paren(self, x: Expr, prec: int) -> str:
        s, q = self.text(x)
        return f"({s})" if q < prec else s

    def text(self, x: Expr) -> tuple[str, int]:
        """(text, precedence of its outermost operation)."""
        op, p = x.op, self.paren
        if op == "const":
            s = _num(x.value)
            return (s, 9) if x.value >= 0 else (f"({s})", 9)
        if op == "sym":
            return x.value, 9
        if op == "nb":
            return f"nb({x.value[0]}, {x.value[1]})", 9
        if op in ("add", "mul"):
            sep = " + " if op == "add" else "*"
            return sep.join([p(x.args[0], _PREC[op])] + [p(a, _PREC[op] + 1) for a in x.args[1:]]), _PREC[op]
        if op in ("sub", "div"):
            sep = " - " if op == "sub" else "/"
            return f"{p(x.args[0], _PREC[op])}{sep}{p(x.args[1], _PREC[op] + 1)}", _PREC[op]
        if op == "neg":
            return f"-{p(x.args[0], 8)}", 7
        if op == "pow":
            return f"{p(x.args[0], 9)}{self.pow_symbol}{p(x.args[1], 9)}", 8
        if op in _CMP_TXT:
            return f"{p(x.args[0], 5)} {_CMP_TXT[op]} {p(x.args[1], 5)}", 4
        if op in ("and", "or"):
            return self.logic(op, p(x.args[0], _PREC[op]), p(x.args[1], _PREC[op] + 1)), _PREC[op]
        if op == "not":
            return self.negation(x.args[0]), 3
        if op == "select":
            c, a, b = (self.text(y)[0] for y in x.args)
            return self.select(c, a, b), 9
        if op in UNARY or op in BINARY_FUNCS:
            return f"{self.func_name(op)}({', '.join(self.text(a)[0] for a in x.args)})", 9
        raise InvalidParameter(f"cannot print operation {op}")


class SbmlTextPrinter(TextPrinter):
    """SBML Level 3 infix (libsbml's ``parseL3Formula``): ``^``, ``&&``/``||``/``!``, ``piecewise``, and
    the SBML function names (``ln``, ``ceiling``, ``arcsin`` …)."""
    pow_symbol = "^"

    def func_name(self, op: str) -> str:
        return OPERATORS[op].sbml

    def logic(self, op: str, a: str, b: str) -> str:
        return f"{a} {OPERATORS[op].sbml} {b}"

    def negation(self, x: Expr) -> str:
        return f"!{self.paren(x, 9)}"

    def select(self, c: str, a: str, b: str) -> str:
        return f"piecewise({a}, {c}, {b})"


TEXT_PRINTERS = {"native": TextPrinter(), "sbml": SbmlTextPrinter()}


def to_text(e: Expr, style: str = "native") -> str:
    """Print ``e``.  style: "native" (our syntax, parse(to_text(e)) == e), "sbml" (L3 infix)."""
    try:
        printer = TEXT_PRINTERS[style]
    except KeyError:
        raise InvalidParameter(f"text style must be one of {', '.join(TEXT_PRINTERS)}, got {style!r}") from None
    return printer(e)


# --- evaluation (NumPy / scalars) ------------------------------------------------------------
def evaluate(e: Expr, env: dict, xp=None):
    """Evaluate with ``env`` name → value (floats or arrays). For initial values and tests."""
    xp = xp or np
    memo: dict[int, object] = {}

    def ev(x):
        k = id(x)
        if k in memo:
            return memo[k]
        op = x.op
        if op == "const":
            r = x.value
        elif op == "sym":
            if x.value not in env:
                raise InvalidParameter(f"unknown name {x.value!r}")
            r = env[x.value]
        elif op == "nb":
            r = env[x.value[0]]
        else:
            a = [ev(y) for y in x.args]
            r = apply_op(op, a, xp)
        memo[k] = r
        return r
    with np.errstate(all="ignore"):
        return ev(e)


def apply_op(op: str, a: list, xp):
    """One operation on NumPy/CuPy arrays or floats; the same left-to-right order everywhere."""
    if op == "add":
        r = a[0]
        for v in a[1:]:
            r = r + v
        return r
    if op == "mul":
        r = a[0]
        for v in a[1:]:
            r = r * v
        return r
    if op == "sub":
        return a[0] - a[1]
    if op == "div":
        return xp.true_divide(a[0], a[1])
    if op == "neg":
        return -a[0]
    if op == "pow":
        return xp.power(xp.float64(a[0]) if not hasattr(a[0], "dtype") else a[0], a[1])
    if op in UNARY or op in ("min", "max"):
        return getattr(xp, OPERATORS[op].ufunc)(*a)
    if op in _CMP_TXT:
        return xp.where(getattr(xp, OPERATORS[op].ufunc)(a[0], a[1]), 1.0, 0.0)
    if op == "and":
        return xp.where(xp.logical_and(a[0] != 0, a[1] != 0), 1.0, 0.0)
    if op == "or":
        return xp.where(xp.logical_or(a[0] != 0, a[1] != 0), 1.0, 0.0)
    if op == "not":
        return xp.where(a[0] == 0, 1.0, 0.0)
    if op == "select":
        return xp.where(a[0] != 0, a[1], a[2])
    raise InvalidParameter(f"unknown operation {op}")
