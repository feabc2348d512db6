"""A Flint model: states with ODEs, parameters, assigned variables; the native text format.

Native format (one declaration a line, ``#`` comments, units in brackets are optional)::

    model luo_rudy_1991
    time t [ms]
    param g_Na = 23.0 [mS/cm^2]
    state m = 0.0017 [1]
    let alpha_m = 0.32*(V + 47.13)/(1 - exp(-0.1*(V + 47.13))) [1/ms]
    ode m = alpha_m*(1 - m) - beta_m*m

Paper 004 (Okuyama 2013) §5.1: a module holds ODEs (dx/dt for a state x) and explicit functions
(assignments) read by ODEs and other functions; only scalar data.
"""
from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field

from ..errors import InvalidParameter
from .expr import Expr, evaluate, parse, to_text

_NAME = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")
RESERVED = {"nb", "where", "piecewise", "exp", "log", "ln", "pow", "min", "max", "pi", "e", "inf"}


@dataclass
class Model:
    name: str = "model"
    time: str = "t"
    time_units: str = "ms"
    states: dict[str, float] = field(default_factory=dict)        # name → initial value (ordered)
    params: dict[str, float] = field(default_factory=dict)        # name → value (ordered)
    assigns: dict[str, Expr] = field(default_factory=dict)        # name → expression (model order)
    odes: dict[str, Expr] = field(default_factory=dict)           # state → d/dt expression
    units: dict[str, str] = field(default_factory=dict)           # any name → units text
    source: str = ""                                              # where it came from

    @property
    def n_states(self) -> int:
        return len(self.states)

    def at(self, t: float) -> str:
        """"t = 0.8 ms" for messages ("t = 0.8" when the model declares no time unit)."""
        return f"{self.time} = {t:g}" + (f" {self.time_units}" if self.time_units else "")

    def copy(self) -> "Model":
        return Model(self.name, self.time, self.time_units, dict(self.states), dict(self.params),
                     dict(self.assigns), dict(self.odes), dict(self.units), self.source)

    # ------------------------------------------------------------------------------------------
    def validate(self) -> "Model":
        """Names unique and known, every state has an ODE, no algebraic loops, finite initial values."""
        seen: dict[str, str] = {}
        for kind, names in (("state", self.states), ("parameter", self.params), ("variable", self.assigns)):
            for n in names:
                if not _NAME.match(n) or n in RESERVED or n == self.time:
                    raise InvalidParameter(f"model {self.name}: {kind} name {n!r} is not allowed")
                if n in seen:
                    raise InvalidParameter(f"model {self.name}: {n!r} is declared twice ({seen[n]} and {kind})")
                seen[n] = kind
        if not self.states:
            raise InvalidParameter(f"model {self.name}: no state variables (nothing to integrate)")
        for s, v in self.states.items():
            if s not in self.odes:
                raise InvalidParameter(f"model {self.name}: state {s!r} has no ODE")
            if v is None or not math.isfinite(float(v)):
                raise InvalidParameter(f"model {self.name}: state {s!r} has no finite initial value ({v})")
        for p, v in self.params.items():
            if v is None or not math.isfinite(float(v)):
                raise InvalidParameter(f"model {self.name}: parameter {p!r} has no finite value ({v})")
        for s in self.odes:
            if s not in self.states:
                raise InvalidParameter(f"model {self.name}: ODE for {s!r}, which is not a state")
        known = set(seen) | {self.time}
        for n, e in list(self.assigns.items()) + [(f"d{s}/dt", e) for s, e in self.odes.items()]:
            bad = e.symbols() - known
            if bad:
                raise InvalidParameter(f"model {self.name}: {n} uses undefined name(s) {', '.join(sorted(bad))}")
        self.assign_order()
        return self

    def assign_order(self) -> list[str]:
        """Assigned variables in dependency order; an algebraic loop is an error naming the cycle."""
        names = set(self.assigns)
        deps = {n: e.symbols() & names for n, e in self.assigns.items()}
        order, state = [], {}

        def visit(n, path):
            st = state.get(n)
            if st == 2:
                return
            if st == 1:
                cyc = path[path.index(n):] + [n]
                raise InvalidParameter(f"model {self.name}: algebraic loop {' → '.join(cyc)}")
            state[n] = 1
            for d in sorted(deps[n]):
                visit(d, path + [n])
            state[n] = 2
            order.append(n)
        for n in self.assigns:
            visit(n, [])
        return order

    def initial_values(self) -> dict[str, float]:
        """All values at t = 0 (states, parameters and assigned variables)."""
        env = dict(self.params)
        env.update(self.states)
        env[self.time] = 0.0
        for n in self.assign_order():
            env[n] = float(evaluate(self.assigns[n], env))
        return env

    def rhs_reference(self, t: float, y, params: dict | None = None):
        """dy/dt as floats, straight from the expressions (the SciPy reference uses this)."""
        env = dict(self.params)
        if params:
            env.update(params)
        env.update(zip(self.states, y))
        env[self.time] = t
        for n in self.assign_order():
            env[n] = evaluate(self.assigns[n], env)
        return [float(evaluate(self.odes[s], env)) for s in self.states]

    # ------------------------------------------------------------------------------------------
    def to_text(self) -> str:
        def u(n):
            return f" [{self.units[n]}]" if self.units.get(n) else ""
        lines = [f"# {ln}" for ln in self.source.splitlines()] if self.source else []
        lines += [f"model {self.name}", f"time {self.time}" + (f" [{self.time_units}]" if self.time_units else "")]
        lines += [f"param {p} = {v!r}{u(p)}" for p, v in self.params.items()]
        lines += [f"state {s} = {v!r}{u(s)}" for s, v in self.states.items()]
        lines += [f"let {n} = {to_text(e)}{u(n)}" for n, e in self.assigns.items()]
        lines += [f"ode {s} = {to_text(e)}" for s, e in self.odes.items()]
        return "\n".join(lines) + "\n"


_LINE = re.compile(r"^(model|time|param|state|let|ode)\s+([A-Za-z_][A-Za-z_0-9]*)\s*(?:=\s*(.*?))?\s*(?:\[([^\]]*)\])?\s*$")


def select_states(model: Model, spec) -> list[str]:
    """States named by ``spec``: a comma-separated string or a list of (comma lists of) names and shell-style
    patterns (``S_RG_*``, ``V_?``), in the order given, duplicates dropped.  An entry that matches
    no state raises InvalidParameter naming it."""
    items = [x.strip() for part in ([spec] if isinstance(spec, str) else spec) for x in str(part).split(",")
             if x.strip()]
    if not items:
        raise InvalidParameter("no state to record")
    out: list[str] = []
    for it in items:
        hit = [s for s in model.states if fnmatch.fnmatchcase(s, it)] if any(c in it for c in "*?[") \
            else ([it] if it in model.states else [])
        if not hit:
            shown = ", ".join(list(model.states)[:8]) + (" …" if len(model.states) > 8 else "")
            raise InvalidParameter(f"record: {it!r} is not a state of {model.name}, nor a pattern matching one "
                                   f"(states: {shown})")
        out.extend(h for h in hit if h not in out)
    return out


def parse_text(text: str, source: str = "") -> Model:
    m = Model(source=source)
    notes = []
    declared: dict[tuple[str, str], int] = {}     # (declaration kind, name) → its line: each name once
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if raw.strip().startswith("#") and not m.states and not m.params:
            notes.append(raw.strip()[1:].strip())
        if not line:
            continue
        mt = _LINE.match(line)
        if not mt:
            raise InvalidParameter(f"line {no}: cannot read {line!r} (expected model/time/param/state/let/ode)")
        kw, name, rhs, units = mt.groups()
        where = f"line {no} ({kw} {name})"
        if kw == "model":
            m.name = name
        elif kw == "time":
            m.time, m.time_units = name, (units or "").strip()
        else:
            if rhs is None or rhs == "":
                raise InvalidParameter(f"{where}: missing '= value'")
            key = ("ode" if kw == "ode" else "name", name)
            if key in declared:          # a dict would keep the second silently
                what = "an ODE for" if kw == "ode" else "a declaration of"
                raise InvalidParameter(f"{where}: {what} {name!r} already stands on line {declared[key]}")
            declared[key] = no
            if kw in ("param", "state"):
                try:
                    v = float(evaluate(parse(rhs, where), {}))
                except InvalidParameter:
                    raise InvalidParameter(f"{where}: initial value must be a number, got {rhs!r}") from None
                (m.params if kw == "param" else m.states)[name] = v
            elif kw == "let":
                m.assigns[name] = parse(rhs, where)
            else:
                m.odes[name] = parse(rhs, where)
            if units:
                m.units[name] = units.strip()
    if not source:
        m.source = "\n".join(n for n in notes if n)
    return m.validate()
