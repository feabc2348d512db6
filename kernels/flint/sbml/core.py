"""Lower an SBML model to the "ODE core" run by the adaptive GPU runtimes (IS, TS) and their NumPy twin.

Algorithm.  The CPU reference's compilation (:class:`~kernels.flint.sbml.solver.CompiledSbml`) is
reused as is, so states, initial values (initial assignments, rules and declared values solved
together in dependency order; SBML L3V2 §4.8), rateOf expansion and the amount/concentration
bookkeeping agree with the reference at t0: states are species amounts and rate-ruled / event-changed
quantities; derived values (assignment rules, concentrations, reaction rates) become Flint assigned
variables.  Every SBML math operation is rewritten with the Flint operations of
:mod:`kernels.flint.expr` (``sec x → 1/cos x``, ``asinh x → log(x + sqrt(x²+1))``, n-ary
``and/or/min/max`` → binary chains, ``xor`` → ``≠`` of truth values, ``rem/quotient`` via
trunc = select(x ≥ 0, floor, ceil), ``root(n, x) → x^(1/n)``).

Two Flint models result: ``model`` (the ODEs, for the right-hand side) and ``aux`` (same states,
parameters and assigned variables, ODEs 0, plus named outputs: the watch vector ``w*`` — event
triggers then the relational conditions of the right-hand side, as 0/1 —, the gaps ``g*`` (a − b) of
the relational watch entries for root finding, event assignment values ``e*_*``, priorities ``pr*``,
compartment sizes ``cv*_*`` for concentration assignments, and the suite's observables ``o*``).

Supported events: delays (an aux output ``d*`` per delayed event, evaluated at the trigger time),
persistent or not, initialValue (t0 firing), useValuesFromTriggerTime, priorities (equal priorities
execute in seeded random order), several pending instances of one event.  Refused here
(``Unsupported``, naming the construct): the delay csymbol, algebraic rules, fast reactions,
non-finite initial states (factorial of a non-constant argument is Γ(x + 1)).  The integrator refuses at run
time: stiff problems (step budget exceeded) and more pending event instances than its queue holds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...errors import InvalidParameter, Unsupported
from ..expr import UNARY, Expr, const, sym
from ..model import Model
from .factorial import factorial_expr
from .pycode import closure, conditions, walk, zero_rates
from .solver import CompiledSbml
from .system import SbmlSystem, read_sbml_system

# tags of the SBML Test Suite outside the ODE core (delays, DAEs, fast reactions, random order)
NON_CORE_TAGS = frozenset({"CSymbolDelay", "DelayInTrigger", "DelayInEventAssignment",
                           "AlgebraicRule", "FastReaction", "MultipleFastReactions"})

_RECIP = {"sec": "cos", "csc": "sin", "cot": "tan", "sech": "cosh", "csch": "sinh", "coth": "tanh"}
_ARC_RECIP = {"asec": "acos", "acsc": "asin", "acot": "atan", "asech": "acosh", "acsch": "asinh", "acoth": "atanh"}
_CMP = ("lt", "le", "gt", "ge", "eq", "ne")




def is_core_case(tags) -> bool:
    """True when none of a suite case's tags is outside the ODE core."""
    return not (set(tags) & NON_CORE_TAGS)


def _c(v):
    return const(v)


def _trunc(x: Expr) -> Expr:
    return Expr("select", (Expr("ge", (x, _c(0.0))), Expr("floor", (x,)), Expr("ceil", (x,))))


def _truth(x: Expr) -> Expr:
    return Expr("ne", (x, _c(0.0)))


def lower(e: Expr, names: dict | None = None, where: str = "math", time_name: str = "t") -> Expr:
    """Rewrite an SBML Expr (sbml_system.convert_math) with the Flint compiler's operations only —
    the one lowering used by the Flint importer (sbml.read_sbml) and the GPU suite runtimes.
    ``names`` maps SBML symbols to Flint Exprs (None: symbols kept as they are).  A sub-expression
    shared by inlined function calls is lowered once and stays shared (time follows the distinct
    nodes, not the size of the expanded tree)."""
    memo: dict[int, tuple] = {}

    def rec(x):
        got = memo.get(id(x))
        if got is None:
            got = memo[id(x)] = (x, _lower(x, rec, names, where, time_name))   # x kept: its id stays unique
        return got[1]
    return rec(e)


def _lower(e: Expr, rec, names, where: str, time_name: str) -> Expr:
    op, a = e.op, e.args
    if op == "const":
        return e
    if op == "sym":
        if names is None:
            return e
        if e.value not in names:
            raise InvalidParameter(f"{where}: unknown symbol {e.value!r}")
        return names[e.value]
    if op == "time":
        return sym(time_name)
    if op in ("true", "false"):
        return _c(1.0 if op == "true" else 0.0)
    if op == "undefined":
        return _c(math.nan)
    if op == "delay":
        dl = getattr(names, "delays", None)
        if dl is None:
            raise Unsupported(f"{where}: the delay csymbol is outside the ODE core")
        ex = getattr(names, "expand", None)    # rateOf inside x: the reference expands it when x is compiled
        key = (rec(ex(a[0]) if ex else a[0]), rec(a[1]))   # delay(x, d) → the delayed-value state q_k
        if any(n.startswith("q") for n in key[0].symbols()):
            raise Unsupported(f"{where}: nested delay csymbols are not supported")
        if key not in dl:
            dl.append(key)
            names.pre.append(rec(zero_rates(a[0])))   # before t0 the rates are 0 (the reference's convention)
        return sym(f"q{dl.index(key)}")
    if op == "rateOf":
        raise Unsupported(f"{where}: rateOf({e.value}) could not be resolved")
    if op == "factorial":
        x = rec(a[0])
        if x.op != "const":
            if isinstance(names, DelayNames):       # the ODE core: Γ(x + 1) (Lanczos), Flint operations only
                return factorial_expr(x)
            raise Unsupported(f"{where}: factorial of a non-constant argument is not supported by the Flint compiler")
        v = x.value
        return _c(math.factorial(int(v)) if v == math.floor(v) and 0 <= v < 171 else
                  (math.inf if v >= 171 else math.gamma(v + 1.0)))
    k = [rec(x) for x in a]
    if op in ("add", "mul"):
        return Expr(op, tuple(k)) if len(k) > 1 else k[0]
    if op in ("sub", "div", "neg", "pow", "select") or op in _CMP or op == "not":
        return Expr(op, tuple(k))
    if op in UNARY:
        return Expr(op, tuple(k))
    if op == "root":
        return Expr("pow", (k[1], Expr("div", (_c(1.0), k[0]))))
    if op in _RECIP:
        return Expr("div", (_c(1.0), Expr(_RECIP[op], (k[0],))))
    if op in _ARC_RECIP:
        return rec(Expr(_ARC_RECIP[op], (Expr("div", (_c(1.0), a[0])),)))
    if op == "asinh":
        x = k[0]
        return Expr("log", (Expr("add", (x, Expr("sqrt", (Expr("add", (Expr("mul", (x, x)), _c(1.0))),)))),))
    if op == "acosh":
        x = k[0]
        return Expr("log", (Expr("add", (x, Expr("sqrt", (Expr("sub", (Expr("mul", (x, x)), _c(1.0))),)))),))
    if op == "atanh":
        x = k[0]
        return Expr("mul", (_c(0.5), Expr("log", (Expr("div", (Expr("add", (_c(1.0), x)),
                                                                Expr("sub", (_c(1.0), x)))),))))
    if op in ("min", "max", "and", "or"):
        out = k[0]
        for x in k[1:]:
            out = Expr(op, (out, x))
        return out if len(k) > 1 or op in ("min", "max") else _truth(out)
    if op == "xor":
        if not k:
            return _c(0.0)
        out = _truth(k[0])
        for x in k[1:]:
            out = Expr("ne", (out, _truth(x)))
        return out
    if op == "implies":
        return Expr("or", (Expr("not", (k[0],)), k[1]))
    if op == "quotient":
        return _trunc(Expr("div", (k[0], k[1])))
    if op == "rem":
        return Expr("sub", (k[0], Expr("mul", (k[1], _trunc(Expr("div", (k[0], k[1])))))))
    raise Unsupported(f"{where}: MathML operation {op} is not supported by the Flint compiler")


class DelayNames(dict):
    """SBML symbol → Flint Expr of :func:`lower_system`, plus ``delays``: the (x, d) pairs of delay(x, d)
    met while lowering (``delays=True``).  With these names factorial of a non-constant argument lowers to
    Γ(x + 1) (:mod:`.factorial`); the Flint importer's plain dict still refuses it."""

    def __init__(self, delays: list | None = None, expand=None):
        super().__init__()
        self.delays = delays
        self.expand = expand
        self.pre: list = []          # per delay: x with rates 0, its value before the start


@dataclass
class CoreEvent:
    """An event of the ODE core: aux output names of its assignment values and priority."""
    id: str
    targets: list            # state index per assignment
    values: list             # aux names of the assignment values
    conc: list               # per assignment: aux name of the compartment size (concentration target) or None
    priority: str | None     # aux name or None
    persistent: bool
    initial_value: bool
    use_trigger_time_values: bool
    delay: str | None = None  # aux name of the delay (evaluated at the trigger time) or None (no delay)


@dataclass
class CoreSystem:
    """An SBML model in the ODE core: Flint models plus events and observables."""
    source: str
    model: Model             # ODEs
    aux: Model               # watch, gaps, event values, priorities, observables
    state_ids: list          # SBML meaning of each state ('@a:S' = amount of species S)
    watch: list              # aux names, triggers first (n_events of them), then RHS conditions
    gaps: list               # per watch entry: aux name of its gap (a − b) or None
    events: list = field(default_factory=list)
    observables: list = field(default_factory=list)   # requested variable names
    obs_names: list = field(default_factory=list)     # their aux names
    param_ids: dict = field(default_factory=dict)     # SBML id → Flint parameter name
    algebraic: list = field(default_factory=list)     # state indices that are algebraic (0 = g), dae=True
    delayed: list = field(default_factory=list)       # (state of q_k, aux names of x_k, d_k, x_k before t0)
    delay_hmax: float = math.inf                      # half the smallest constant delay (step bound)

    @property
    def n_events(self) -> int:
        return len(self.events)


def lower_system(path_or_system, variables=(), amount=(), concentration=(), dae: bool = False,
                 delays: bool = False) -> CoreSystem:
    """Read (or take) an SBML model and lower it to the ODE core; refuse what is outside it.

    ``dae``: also lower algebraic rules and fast reactions as the CPU reference reduces them
    (:class:`~kernels.flint.sbml.solver.CompiledSbml`: the unknowns they determine, fast species
    included, and one residual each) — the unknowns become extra states whose "ODE" is the residual
    (0 = g), listed in ``CoreSystem.algebraic``: a semi-explicit index-1 DAE for a method with a
    mass matrix (Rodas4, :mod:`kernels.flint.ensemble.rosenbrock`); their initial values are the
    reference's consistent ones.

    ``delays``: delay(x, d) becomes a state q_k (ODE 0) that the integrator sets, before every
    evaluation at (t, y), to x at t − d on its history (aux outputs ``dx{k}`` = x and ``dd{k}`` = d;
    ``CoreSystem.delayed``), as the reference's history of dense output."""
    s = path_or_system if isinstance(path_or_system, SbmlSystem) else read_sbml_system(str(path_or_system))
    src = s.source
    if s.algebraic_rules and not dae:
        raise Unsupported(f"{src}: algebraic rules are outside the ODE core")
    if any(r.fast for r in s.reactions) and not dae:
        raise Unsupported(f"{src}: fast reactions are outside the ODE core")
    c = CompiledSbml(s)
    if c.delay_keys and not delays:
        raise Unsupported(f"{src}: the delay csymbol is outside the ODE core")
    if c.delay_keys and any(x.op == "time" for e in s.initial_assignments.values() for x in walk(e)):
        raise Unsupported(f"{src}: a delay reading values before the start that initial assignments define "
                          f"as functions of time (the history before t0 holds the initial state)")
    n_ode = len(c.states)
    states = list(c.states) + list(c.alg)
    names = DelayNames([] if delays else None, c._expand if delays else None)
    st_names = {}
    for i, x in enumerate(states):
        st_names[x] = f"x{i}"
        names["@a:" + x] = sym(f"x{i}")
        if x not in c.defs:
            names[x] = sym(f"x{i}")
    y0 = [float(v) for v in c.y0] + [float(c.init[x]) for x in c.alg]
    for x, v in zip(states, y0):
        if not math.isfinite(v):
            raise Unsupported(f"{src}: initial value of {x} is {v} (non-finite initial states are not supported)")
    params, param_ids = {}, {}
    for k, (x, v) in enumerate(c.literal.items()):
        if math.isfinite(v):
            params[f"p{k}"] = float(v)
            param_ids[x] = f"p{k}"
            names[x] = sym(f"p{k}")
        else:
            names[x] = _c(v)
    def_names = {x: f"a{k}" for k, x in enumerate(c.defs)}
    for x, nm in def_names.items():
        names[x] = sym(nm)
    assigns = {def_names[x]: lower(e, names, f"{src}: definition of {x}") for x, e in c.defs.items()}
    ders = list(c.ders) + [c._expand(r) for r in c.residuals]
    odes = {st_names[x]: lower(d, names, f"{src}: d{x}/dt") for x, d in zip(states, ders)}
    if not states:                      # Flint models need a state: a constant dummy
        y0, odes = [0.0], {"x0": _c(0.0)}
        states_map = {"x0": 0.0}
    else:
        states_map = {st_names[x]: v for x, v in zip(states, y0)}
    model = Model(name="sbml", time="t", time_units="1", states=states_map, params=params,
                  assigns=assigns, odes=odes, source=src)
    extra: dict[str, Expr] = {}
    # watch vector (triggers, then discontinuities of the right-hand side and of the triggers)
    watch_exprs = list(c.watch_exprs)
    if dae:                             # switches of the residuals (and the definitions they read) too
        res = [c._expand(r) for r in c.residuals]
        seen = {repr(w) for w in watch_exprs}
        for e in res + [c.defs[x] for x in closure(res, c.defs)]:
            for cond in conditions(e):
                if repr(cond) not in seen:
                    seen.add(repr(cond))
                    watch_exprs.append(cond)
    watch, gaps, gap_of = [], [], {}
    for i, w in enumerate(watch_exprs):
        nm = f"w{i}"
        extra[nm] = _truth(lower(w, names, f"{src}: trigger/condition"))
        watch.append(nm)
        if w.op in ("lt", "le", "gt", "ge"):
            key = repr(w.args)                  # one gap per distinct a − b (root-found once)
            if key not in gap_of:
                gap_of[key] = f"g{i}"
                extra[f"g{i}"] = lower(Expr("sub", w.args), names, f"{src}: condition")
            gaps.append(gap_of[key])
        else:
            gaps.append(None)
    events = []
    for k, ev in enumerate(s.events):
        targets, values, conc = [], [], []
        for j, (var, e) in enumerate(ev.assignments):
            if var not in c.sidx:
                raise Unsupported(f"{src}: event {ev.id} assigns {var}, which is not a state")
            targets.append(c.sidx[var])
            extra[f"e{k}_{j}"] = lower(c._expand(e), names, f"{src}: event {ev.id}")
            values.append(f"e{k}_{j}")
            sp = s.species.get(var)
            if sp is not None and not sp.hosu:
                extra[f"cv{k}_{j}"] = names[sp.compartment]
                conc.append(f"cv{k}_{j}")
            else:
                conc.append(None)
        pr = None
        if ev.priority is not None:
            extra[f"pr{k}"] = lower(c._expand(ev.priority), names, f"{src}: priority of {ev.id}")
            pr = f"pr{k}"
        dl = None
        if ev.delay is not None and not (ev.delay.op == "const" and ev.delay.value == 0.0):
            extra[f"d{k}"] = lower(c._expand(ev.delay), names, f"{src}: delay of {ev.id}")
            dl = f"d{k}"
        events.append(CoreEvent(ev.id, targets, values, conc, pr, ev.persistent, ev.initial_value,
                                ev.use_trigger_time_values, dl))
    obs, obs_names = [], []
    for j, v in enumerate(variables):
        if v in s.species:
            sp = s.species[v]
            amt = sym("@a:" + v) if v in c.sidx else (sym(v) if sp.hosu else Expr("mul", (sym(v), sym(sp.compartment))))
            if v in amount:
                e = amt
            elif v in concentration:
                e = Expr("div", (amt, sym(sp.compartment)))
            else:
                e = sym(v) if v in names else amt
        elif v in names:
            e = sym(v)
        else:
            raise InvalidParameter(f"{src}: variable {v!r} is not in the model")
        extra[f"o{j}"] = lower(e, names, f"{src}: output {v}")
        obs.append(v)
        obs_names.append(f"o{j}")
    delayed = []
    for k, (x, d) in enumerate(names.delays or []):
        q = f"q{k}"
        model.states[q], model.odes[q] = 0.0, _c(0.0)
        states_map[q] = 0.0
        extra[f"dx{k}"], extra[f"dd{k}"], extra[f"dxp{k}"] = x, d, names.pre[k]
        delayed.append((len(states_map) - 1, f"dx{k}", f"dd{k}", f"dxp{k}"))
        states.append(f"@delay:{k}")
    aux_assigns = dict(assigns)
    aux_assigns.update(extra)
    aux = Model(name="sbml_aux", time="t", time_units="1", states=dict(states_map), params=dict(params),
                assigns=aux_assigns, odes={x: _c(0.0) for x in states_map}, source=src)   # never integrated
    model.validate()
    aux.validate()
    return CoreSystem(src, model, aux, ["@a:" + x if x in s.species else x for x in states], watch, gaps,
                      events, obs, obs_names, param_ids, algebraic=list(range(n_ode, n_ode + len(c.alg))),
                      delayed=delayed, delay_hmax=0.5 * c.delay_min)

