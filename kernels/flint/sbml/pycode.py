"""SBML math (:class:`~kernels.flint.expr.Expr` trees of :mod:`.system`) as Python source for the reference
simulator (:mod:`.solver`): :class:`PyGen` prints an expression (constants become globals ``_K0 …``),
:func:`build_namespace` executes a generated function in the fast (``math`` on floats) or the safe
(NumPy float64 scalars: IEEE inf/NaN instead of exceptions) namespace, and the helpers order and
rewrite the definitions (dependency closure, topological order, delays at t0, Newton's method)."""
from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidParameter, SimulationBlowUp, Unsupported
from ..expr import Expr, const
# Imports inside functions: SciPy (gamma) loads only for a model that uses factorial.

# --- expression → Python source -------------------------------------------------------------------
_UNARY_PY = {"exp": "_exp", "log": "_log", "log10": "_log10", "sqrt": "_sqrt", "abs": "_abs",
             "floor": "_floor", "ceil": "_ceil", "sin": "_sin", "cos": "_cos", "tan": "_tan",
             "sinh": "_sinh", "cosh": "_cosh", "tanh": "_tanh", "asin": "_asin", "acos": "_acos",
             "atan": "_atan", "asinh": "_asinh", "acosh": "_acosh", "atanh": "_atanh", "factorial": "_fact"}
_RECIP = {"sec": ("cos", None), "csc": ("sin", None), "cot": ("tan", None), "sech": ("cosh", None),
          "csch": ("sinh", None), "coth": ("tanh", None)}
_ARC_RECIP = {"asec": "acos", "acsc": "asin", "acot": "atan", "asech": "acosh", "acsch": "asinh",
              "acoth": "atanh"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_BOOL_OPS = set(_CMP) | {"and", "or", "xor", "not", "implies", "true", "false"}


def _fact(x):
    if x == math.floor(x) and x >= 0:
        return float(math.factorial(int(x))) if x < 171 else math.inf
    return math.gamma(x + 1.0)


def _quot(a, b):
    return float(math.trunc(a / b))


def _np_fact(x):
    from scipy.special import gamma
    return np.float64(gamma(x + 1.0))


def _np_quot(a, b):
    return np.trunc(np.true_divide(a, b))


def _fast_ns() -> dict:
    m = math
    return {"_exp": m.exp, "_log": m.log, "_log10": m.log10, "_sqrt": m.sqrt, "_abs": abs,
            "_floor": lambda x: float(m.floor(x)), "_ceil": lambda x: float(m.ceil(x)), "_sin": m.sin,
            "_cos": m.cos, "_tan": m.tan, "_sinh": m.sinh, "_cosh": m.cosh, "_tanh": m.tanh, "_asin": m.asin,
            "_acos": m.acos, "_atan": m.atan, "_asinh": m.asinh, "_acosh": m.acosh, "_atanh": m.atanh,
            "_fact": _fact, "_pow": m.pow, "_min": min, "_max": max, "_rem": m.fmod, "_quot": _quot,
            "_ONE": 1.0, "_ZERO": 0.0, "_NAN": math.nan, "_F": float}


def _safe_ns() -> dict:
    return {"_exp": np.exp, "_log": np.log, "_log10": np.log10, "_sqrt": np.sqrt, "_abs": np.abs,
            "_floor": np.floor, "_ceil": np.ceil, "_sin": np.sin, "_cos": np.cos, "_tan": np.tan,
            "_sinh": np.sinh, "_cosh": np.cosh, "_tanh": np.tanh, "_asin": np.arcsin, "_acos": np.arccos,
            "_atan": np.arctan, "_asinh": np.arcsinh, "_acosh": np.arccosh, "_atanh": np.arctanh,
            "_fact": _np_fact, "_pow": np.power, "_min": lambda *a: np.float64(min(a)),
            "_max": lambda *a: np.float64(max(a)), "_rem": np.fmod, "_quot": _np_quot,
            "_ONE": np.float64(1.0), "_ZERO": np.float64(0.0), "_NAN": np.float64(np.nan), "_F": np.float64}


class PyGen:
    """Python source for Expr trees; names resolved by ``self.name``; constants become globals."""

    def __init__(self, name_of, on_delay=None):
        self.name_of = name_of
        self.on_delay = on_delay
        self.consts: dict[float, str] = {}

    def k(self, v: float) -> str:
        key = repr(float(v))
        if key not in self.consts:
            self.consts[key] = f"_K{len(self.consts)}"
        return self.consts[key]

    def num(self, e: Expr) -> str:
        c, b = self.gen(e)
        return f"(_ONE if {c} else _ZERO)" if b else c

    def cond(self, e: Expr) -> str:
        c, b = self.gen(e)
        return c if b else f"({c} != _ZERO)"

    def gen(self, e: Expr) -> tuple[str, bool]:
        op, a = e.op, e.args
        if op == "const":
            return self.k(e.value), False
        if op == "sym":
            return self.name_of(e.value), False
        if op == "time":
            return "t", False
        if op == "true":
            return "True", True
        if op == "false":
            return "False", True
        if op == "undefined":
            return "_NAN", False
        if op == "add":
            return "(" + " + ".join(self.num(x) for x in a) + ")", False
        if op == "mul":
            return "(" + " * ".join(self.num(x) for x in a) + ")", False
        if op == "sub":
            return f"({self.num(a[0])} - {self.num(a[1])})", False
        if op == "div":
            return f"({self.num(a[0])} / {self.num(a[1])})", False
        if op == "neg":
            return f"(-{self.num(a[0])})", False
        if op == "pow":
            return f"_pow({self.num(a[0])}, {self.num(a[1])})", False
        if op == "root":
            return f"_pow({self.num(a[1])}, _ONE / {self.num(a[0])})", False
        if op in _UNARY_PY:
            return f"{_UNARY_PY[op]}({self.num(a[0])})", False
        if op in _RECIP:
            return f"(_ONE / {_UNARY_PY[_RECIP[op][0]]}({self.num(a[0])}))", False
        if op in _ARC_RECIP:
            return f"{_UNARY_PY[_ARC_RECIP[op]]}(_ONE / {self.num(a[0])})", False
        if op in ("min", "max"):
            return f"_{op}({', '.join(self.num(x) for x in a)})", False
        if op == "rem":
            return f"_rem({self.num(a[0])}, {self.num(a[1])})", False
        if op == "quotient":
            return f"_quot({self.num(a[0])}, {self.num(a[1])})", False
        if op in _CMP:
            return f"({self.num(a[0])} {_CMP[op]} {self.num(a[1])})", True
        if op in ("and", "or"):
            return "(" + f" {op} ".join(f"bool({self.cond(x)})" for x in a) + ")", True
        if op == "xor":
            if not a:
                return "False", True
            return "(" + " ^ ".join(f"bool({self.cond(x)})" for x in a) + ")", True
        if op == "not":
            return f"(not {self.cond(a[0])})", True
        if op == "implies":
            return f"((not {self.cond(a[0])}) or bool({self.cond(a[1])}))", True
        if op == "select":
            (ca, ba), (cb, bb) = self.gen(a[1]), self.gen(a[2])
            if ba and bb:
                return f"({ca} if {self.cond(a[0])} else {cb})", True
            return f"({self.num(a[1])} if {self.cond(a[0])} else {self.num(a[2])})", False
        if op == "delay":
            if self.on_delay is None:
                raise Unsupported("the delay csymbol is not supported here (initial values, algebraic rules)")
            i = self.on_delay(a[0], a[1])
            return f"_DL({i}, t - {self.num(a[1])}, t, y)", False
        if op == "rateOf":
            raise Unsupported(f"rateOf({e.value}) could not be resolved")
        raise Unsupported(f"MathML operation {op} is not supported")


def walk(e: Expr):
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(x.args)


def deps(e: Expr) -> set[str]:
    return {x.value for x in walk(e) if x.op == "sym"}


def conditions(e: Expr) -> list[Expr]:
    """Relational/boolean sub-expressions whose switching makes ``e`` discontinuous (watched)."""
    out = []
    stack = [e]
    while stack:
        x = stack.pop()
        if x.op in _CMP:
            out.append(x)
            continue
        if x.op == "select":
            out.append(x.args[0]) if x.args[0].op not in _CMP else None
        stack.extend(x.args)
    return out


def undelay(e: Expr) -> Expr:
    """At t0, delay(x, d) is x (values before the start are the initial values)."""
    if e.op == "delay":
        return subst_time(undelay(zero_rates(e.args[0])), Expr("sub", (Expr("time"), e.args[1])))
    if not e.args:
        return e
    return Expr(e.op, tuple(undelay(a) for a in e.args), e.value)


def subst_syms(e: Expr, mapping: dict) -> Expr:
    if e.op == "sym":
        return mapping.get(e.value, e)
    if not e.args:
        return e
    return Expr(e.op, tuple(subst_syms(a, mapping) for a in e.args), e.value)


def zero_rates(e: Expr) -> Expr:
    if e.op == "rateOf":
        return const(0.0)
    if not e.args:
        return e
    return Expr(e.op, tuple(zero_rates(a) for a in e.args), e.value)


def subst_time(e: Expr, by: Expr) -> Expr:
    if e.op == "time":
        return by
    if not e.args:
        return e
    return Expr(e.op, tuple(subst_time(a, by) for a in e.args), e.value)


def newton(res, z0, where: str):
    """Solve res(z) = 0 by Newton's method with a forward-difference Jacobian (warm start z0)."""
    z = np.array(z0, dtype=float)
    for _ in range(60):
        r = res(z)
        if not np.all(np.isfinite(r)):
            raise SimulationBlowUp(f"{where}: residual is not finite")
        if np.all(np.abs(r) <= 1e-13 * (1.0 + np.abs(z))):
            return z
        J = np.empty((len(r), len(z)))
        for j in range(len(z)):
            h = 1e-7 * max(1.0, abs(z[j]))
            zz = z.copy()
            zz[j] += h
            J[:, j] = (res(zz) - r) / h
        try:
            dz = np.linalg.solve(J, -r)
        except np.linalg.LinAlgError:
            raise Unsupported(f"{where}: singular algebraic system (not index-1 or not solvable)") from None
        z = z + dz
        if np.all(np.abs(dz) <= 1e-15 * (1.0 + np.abs(z))):
            return z
    r = res(z)
    if np.all(np.abs(r) <= 1e-9 * (1.0 + np.abs(z))):
        return z
    raise Unsupported(f"{where}: Newton iteration for the algebraic rules did not converge")


def unknown_symbol(n):
    raise InvalidParameter(f"unknown symbol {n!r} in math")


def build_namespace(src: str, gen: PyGen, safe: bool, extra: dict | None = None) -> dict:
    ns = _safe_ns() if safe else _fast_ns()
    ns.update(extra or {})
    F = ns["_F"]
    for key, nm in gen.consts.items():
        ns[nm] = F(float(key))
    exec(compile(src, "<sbml>", "exec"), ns)
    return ns


def closure(exprs: list, defs: dict) -> set:
    need, stack = set(), []
    for e in exprs:
        stack.extend(deps(e))
    while stack:
        x = stack.pop()
        if x in need or x not in defs:
            continue
        need.add(x)
        stack.extend(deps(defs[x]))
    return need


def topo_order(defs: dict, names, what: str) -> list:
    order, state = [], {}
    for root in names:
        if state.get(root):
            continue
        stack = [(root, iter(sorted(deps(defs[root]) & defs.keys())))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[node] = 2
                order.append(node)
            elif state.get(nxt) == 1:
                raise Unsupported(f"circular dependency in {what} involving {nxt} (algebraic loop)")
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(deps(defs[nxt]) & defs.keys()))))
    return order
