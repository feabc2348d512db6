"""The Jacobian ∂f/∂y and the time derivative ∂f/∂t of a Flint model, by symbolic differentiation.

Contract.  :func:`jacobian_model` takes the ODE model of the ODE core (states ``x*``, parameters,
assigned variables, ODEs f) and returns a Flint :class:`~kernels.flint.model.Model` with the same
states, parameters and assigned variables plus one assigned variable per structurally non-zero
entry: ``J_r_c`` = ∂f_r/∂x_c and ``T_r`` = ∂f_r/∂t (its ODEs are 0: it is evaluated, never
integrated — like the aux model of :mod:`kernels.flint.sbml.core`).  The derivative of an assigned
variable ``a`` with respect to ``v`` is itself an assigned variable ``D_a__v``, created once and
shared, so the expression DAG stays a DAG (forward mode over the DAG, chain rule through the
assignments).  Zeros are pruned structurally; products by 1 are dropped.

The result is compiled by the same compiler and printed by the same expression printer
(``runtimes.expr_code``: NumPy, C, bytecode) as the right-hand side, so the NumPy twin, the host
build and the CUDA kernels evaluate the same operations.

Rules: d(a^b) = b·a^(b−1)·da + a^b·ln a·db (each term only when its derivative is non-zero);
|a|' = select(a ≥ 0, da, −da); min/max pick the derivative of the selected branch; floor, ceil,
comparisons and logic are piecewise constant (derivative 0, as for a Rosenbrock W-method the
Jacobian only needs to be exact where f is smooth).
"""
from __future__ import annotations

import math

from ...errors import Unsupported
from ..expr import Expr, const, sym
from ..model import Model

_ZERO_OPS = frozenset({"floor", "ceil", "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "const"})


def _add(terms):
    terms = [x for x in terms if x is not None]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else Expr("add", tuple(terms))


def _mul(*fs):
    if any(f is None for f in fs):
        return None
    fs = [f for f in fs if not (f.op == "const" and f.value == 1.0)]
    if not fs:
        return const(1.0)
    return fs[0] if len(fs) == 1 else Expr("mul", tuple(fs))


def _neg(a):
    return None if a is None else Expr("neg", (a,))


def _div(a, b):
    return None if a is None else Expr("div", (a, b))


def _select(c, a, b):
    if a is None and b is None:
        return None
    return Expr("select", (c, a if a is not None else const(0.0), b if b is not None else const(0.0)))


class _Diff:
    """Forward-mode differentiation of one model's expressions with respect to one variable ``v``."""

    def __init__(self, model: Model, v: str, deps: dict, out: dict):
        self.m, self.v, self.deps, self.out = model, v, deps, out
        self.memo: dict[int, tuple] = {}

    def of_symbol(self, name: str):
        if name == self.v:
            return const(1.0)
        if name in self.m.assigns and self.v in self.deps[name]:
            key = f"D_{name}__{self.v}"
            if key not in self.out:
                self.out[key] = None                 # no cycles among assignments (validated)
                d = self.d(self.m.assigns[name])
                if d is None:
                    del self.out[key]
                    return None
                self.out[key] = d
            return sym(key) if key in self.out else None
        return None

    def d(self, e: Expr):
        got = self.memo.get(id(e))
        if got is None:
            got = self.memo[id(e)] = (e, self._d(e))
        return got[1]

    def _d(self, e: Expr):   # noqa: C901 — one case per operation
        op, a = e.op, e.args
        if op in _ZERO_OPS:
            return None
        if op == "sym":
            return self.of_symbol(e.value)
        if op == "nb":
            raise Unsupported("the Jacobian of a model with neighbour coupling is not built")
        da = [self.d(x) for x in a]
        if op == "add":
            return _add(da)
        if op == "sub":
            return _add([da[0], _neg(da[1])])
        if op == "neg":
            return _neg(da[0])
        if op == "mul":
            return _add([_mul(*[x for j, x in enumerate(a) if j != i], da[i]) for i in range(len(a))])
        if op == "div":
            x, y = a
            t2 = None if da[1] is None else Expr("div", (_mul(x, da[1]), Expr("mul", (y, y))))
            return _add([_div(da[0], y), _neg(t2)])
        if op == "pow":
            x, y = a
            t1 = None
            if da[0] is not None:
                t1 = _mul(y, Expr("pow", (x, Expr("sub", (y, const(1.0))))), da[0])
            t2 = None if da[1] is None else _mul(e, Expr("log", (x,)), da[1])
            return _add([t1, t2])
        if op == "select":
            return _select(a[0], da[1], da[2])
        if op in ("min", "max"):
            return _select(Expr("le" if op == "min" else "ge", (a[0], a[1])), da[0], da[1])
        x, dx = a[0], da[0]
        if dx is None:
            return None
        if op == "exp":
            return _mul(e, dx)
        if op == "log":
            return _div(dx, x)
        if op == "log10":
            return _div(dx, Expr("mul", (x, const(math.log(10.0)))))
        if op == "sqrt":
            return _div(dx, Expr("mul", (const(2.0), e)))
        if op == "abs":
            return _select(Expr("ge", (x, const(0.0))), dx, _neg(dx))
        if op == "sin":
            return _mul(Expr("cos", (x,)), dx)
        if op == "cos":
            return _neg(_mul(Expr("sin", (x,)), dx))
        if op == "tan":
            return _div(dx, Expr("mul", (Expr("cos", (x,)), Expr("cos", (x,)))))
        if op == "tanh":
            return _mul(Expr("sub", (const(1.0), Expr("mul", (e, e)))), dx)
        if op == "sinh":
            return _mul(Expr("cosh", (x,)), dx)
        if op == "cosh":
            return _mul(Expr("sinh", (x,)), dx)
        if op in ("asin", "acos"):
            r = _div(dx, Expr("sqrt", (Expr("sub", (const(1.0), Expr("mul", (x, x)))),)))
            return r if op == "asin" else _neg(r)
        if op == "atan":
            return _div(dx, Expr("add", (const(1.0), Expr("mul", (x, x)))))
        raise Unsupported(f"no derivative rule for operation {op!r}")


def _dependencies(model: Model) -> dict:
    """assigned variable → the states and time it depends on (through other assignments)."""
    out: dict[str, frozenset] = {}
    watched = set(model.states) | {model.time}
    for name in model.assign_order():
        s = set()
        for x in model.assigns[name].symbols():
            if x in watched:
                s.add(x)
            elif x in out:
                s |= out[x]
        out[name] = frozenset(s)
    return out


def jacobian_model(model: Model) -> tuple[Model, list, list]:
    """(model with the J/T outputs, [(r, c, name)] of the non-zero ∂f_r/∂x_c, [(r, name)] of ∂f_r/∂t)."""
    deps = _dependencies(model)
    extra: dict = {}
    states = list(model.states)
    jac, dt = [], []
    for v in states + [model.time]:
        diff = _Diff(model, v, deps, extra)
        for r, s in enumerate(states):
            d = diff.d(model.odes[s])
            if d is None:
                continue
            if v == model.time:
                name = f"T_{r}"
                dt.append((r, name))
            else:
                name = f"J_{r}_{states.index(v)}"
                jac.append((r, states.index(v), name))
            extra[name] = d
    assigns = dict(model.assigns)
    assigns.update({k: v for k, v in extra.items() if v is not None})
    out = Model(name=model.name + "_jac", time=model.time, time_units=model.time_units, states=dict(model.states),
                params=dict(model.params), assigns=assigns, odes={s: const(0.0) for s in states},
                source=model.source)
    return out.validate(), jac, dt
