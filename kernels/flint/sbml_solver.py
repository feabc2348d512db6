"""CPU reference runtime for SBML models (:class:`~kernels.flint.sbml_system.SbmlSystem`).

Algorithm.  States are species *amounts* (d amount/dt = conversionFactor · Σ stoichiometry · rate;
concentration = amount / compartment size, so rates in varying volumes are right), plus every
compartment, parameter and speciesReference with a rateRule or changed by an event.  Everything else
is either a literal (constant after the initial values) or derived (assignment rules, concentrations,
reaction rates) and computed in dependency order.  Each model is compiled once to Python source
(``compile()``): one function for the right-hand side, one for the observed values, one for the
Boolean "watch" vector (event triggers and the relational conditions of the right-hand side), one
per event for its assignments/delay/priority.  A fast version uses ``math`` on floats; if it raises
(division by zero, domain error, overflow) the same source runs on NumPy float64 scalars (IEEE
results: inf/NaN).

Initial values: initial assignments, assignment rules and the species'/compartments' declared values
are evaluated together in dependency order (SBML L3V2 §4.8, order independent), t0 events then fire.

Integration: scipy's LSODA (Hindmarsh/Petzold, adaptive stiff/non-stiff), stepped one step at a time.
After each step the watch vector is evaluated; if it changed, the switching time is located by
bisection on the dense output to ~1e-14 relative, the step is re-integrated up to that time, and
the events are processed: triggers (false→true) schedule an event at t + delay, with its assignment
values taken now (useValuesFromTriggerTime) or at execution; non-persistent events are cancelled when
their trigger falls; ready events execute one at a time by descending priority, the triggers being
re-evaluated after each execution (cascades).  ``initialValue`` is the trigger value before t0.
Output points are read from the dense output; a point at an event time gets the post-event values.
Switch times: Brent's method (scipy brentq) on the gap a - b of the relational atoms that changed,
then bisection on the Boolean vector; if the right-hand side itself switched, the step is redone.

Beyond libRoadRunner:
* algebraic rules (index-1 DAE): the non-constant variables that appear in algebraic rules and are
  fixed by nothing else are the unknowns (their count must equal the rules'); they are solved by
  Newton's method (finite-difference Jacobian, warm start) whenever the states are evaluated;
* fast reactions (rapid equilibrium, SBML L2/L3V1): the species they change become algebraic
  unknowns constrained by "fast kinetic law = 0" and by the moieties u = L·amount (L spans the left
  null space of the fast stoichiometry), which are states driven by the slow reactions.  At t0 the
  fast subsystem is first relaxed to its equilibrium; an equilibrium that is not asymptotically
  stable (eigenvalues of d(fast rates)/d(extents)) is refused, at t0 and at every output time;
* the delay csymbol: delay(x, d) is x evaluated on the stored dense-output history at t - d; before
  the start, every variable follows its initial-value definition at that (negative) time with rates
  0 (the SBML Test Suite's convention); the step size is bounded by half the smallest constant delay.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameter, SimulationBlowUp, Unsupported
from .expr import Expr, const, sym
from .sbml_system import SbmlSystem, read_sbml_system

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


class _Gen:
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


def _walk(e: Expr):
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(x.args)


def _deps(e: Expr) -> set[str]:
    return {x.value for x in _walk(e) if x.op == "sym"}


def _conditions(e: Expr) -> list[Expr]:
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


@dataclass
class _Pending:
    time: float
    seq: int
    event: int
    values: tuple | None


class CompiledSbml:
    """An SbmlSystem compiled to Python functions, with initial values solved."""

    def __init__(self, s: SbmlSystem):
        self.s = s
        self.ids = list(s.compartments) + list(s.species) + list(s.parameters) + list(s.species_refs) \
            + [r.id for r in s.reactions]
        if len(set(self.ids)) != len(self.ids):
            raise InvalidParameter(f"{s.source}: duplicate ids")
        self.py = {x: f"v{i}" for i, x in enumerate(self.ids)}
        self.rates = {r.id: r.rate for r in s.reactions}
        self.sources: dict[str, str] = {}          # generated Python source per function (inspection)
        self.event_targets = {v for ev in s.events for v, _ in ev.assignments}
        # species changed by reactions
        self.flux: dict[str, list] = {}
        for r in s.reactions:
            for sid, st, sign in r.terms:
                sp = s.species[sid]
                if sp.boundary or sp.constant:
                    continue
                self.flux.setdefault(sid, []).append((r.id, st, sign))
        for sid in self.flux:
            if sid in s.assignment_rules or sid in s.rate_rules:
                raise InvalidParameter(f"species {sid} is changed by reactions and by a rule "
                                       f"(it must be a boundary species)")
        # --- algebraic rules: the variables they determine (not fixed by anything else) --------------
        self.alg = []
        if s.algebraic_rules:
            used = set().union(*(_deps(e) for e in s.algebraic_rules))
            fixed = set(s.assignment_rules) | set(s.rate_rules) | set(self.flux) | self.event_targets \
                | set(s.initial_assignments)
            for x in self.ids:
                if x in used and x not in fixed and x not in self.rates and not self._is_constant(x):
                    self.alg.append(x)
            if len(self.alg) > len(s.algebraic_rules):     # boundary species without rules are held fixed
                free = [x for x in self.alg if not (x in s.species and s.species[x].boundary)]
                if len(free) == len(s.algebraic_rules):
                    self.alg = free
            if len(self.alg) != len(s.algebraic_rules):
                raise Unsupported(f"{s.source}: {len(s.algebraic_rules)} algebraicRule(s) but "
                                  f"{len(self.alg)} undetermined variable(s) {self.alg}: cannot identify "
                                  f"what the algebraic rules determine")
        self.residuals = list(s.algebraic_rules)
        self.aidx = {x: j for j, x in enumerate(self.alg)}
        self.fast_u: list = []           # (name, slow-rate Expr) of the fast-equilibrium moieties
        self.fast_u0: list = []
        self.fast_N = None
        self._declared: dict = {}
        fast = [r for r in s.reactions if r.fast]
        if fast:
            self._setup_fast(fast)
        # --- initial values -----------------------------------------------------------------------
        self.init = self._initial_values()
        # --- states -------------------------------------------------------------------------------
        self.states: list[str] = []
        for x in self.ids:
            if x in self.rates or x in s.assignment_rules or x in self.aidx:
                continue
            if x in s.rate_rules or x in self.event_targets or x in self.flux:
                self.states.append(x)
        self.states += [u for u, _ in self.fast_u]
        self.sidx = {x: i for i, x in enumerate(self.states)}
        self.y0 = np.array([self._amount0(x) for x in self.states[:len(self.states) - len(self.fast_u)]]
                           + list(self.fast_u0), dtype=float)
        if self.fast_u:                  # at run time the moieties are states, not the t0 constants
            to_state = {f"@u0:{i}": sym(u) for i, (u, _) in enumerate(self.fast_u)}
            self.residuals = [_subst_syms(e, to_state) for e in self.residuals]
        self._compile()

    def _setup_fast(self, fast: list):
        """Fast reactions (rapid equilibrium): kinetic law = 0 at all times.  The species they change
        become algebraic unknowns; the moieties u = L·amount with L spanning the left null space of
        the fast stoichiometry matrix are states driven by the slow reactions only."""
        from scipy.linalg import null_space
        s = self.s
        if self.alg or any(x.op == "delay" for r in s.reactions for x in _walk(r.rate)):
            raise Unsupported(f"{s.source}: fast reactions together with algebraic rules or delays are not supported")
        F = []
        for r in fast:
            for sid, st, _ in r.terms:
                if sid in self.flux and sid not in F:
                    F.append(sid)
        if not F:
            raise Unsupported(f"{s.source}: fast reaction {fast[0].id} changes no species")
        init0 = self._initial_values()
        cfv = {}
        for sid in F:
            if sid in self.event_targets:
                raise Unsupported(f"species {sid}: a fast-reaction species changed by events is not supported")
            cf = s.species[sid].conversion_factor
            if cf and not (cf in s.parameters and s.parameters[cf].constant):
                raise Unsupported(f"species {sid}: a fast-reaction species with a variable conversion factor "
                                  f"is not supported")
            cfv[sid] = init0[cf] if cf else 1.0
        N = np.zeros((len(F), len(fast)))
        for j, r in enumerate(fast):
            for sid, st, sign in r.terms:
                if sid not in F:
                    continue
                if st.op == "const":
                    v = st.value
                elif st.op == "sym" and st.value in s.species_refs and s.species_refs[st.value].constant \
                        and st.value not in self.event_targets and st.value not in s.rate_rules \
                        and st.value not in s.assignment_rules:
                    v = init0[st.value]
                else:
                    raise Unsupported(f"reaction {r.id}: fast reaction with variable stoichiometry is not supported")
                N[F.index(sid), j] += sign * v * cfv[sid]
        if np.linalg.matrix_rank(N) != len(fast):
            raise Unsupported(f"{s.source}: dependent fast reactions are not supported")
        L = null_space(N.T).T
        L[np.abs(L) < 1e-14] = 0.0
        amount0 = np.array([self._amount0_from(init0, x) for x in F])
        self.fast_u0 = L @ amount0
        self._declared = {x: init0[x] for x in F}

        def amount(x):
            sp = s.species[x]
            return sym(x) if sp.hosu else Expr("mul", (sym(x), sym(sp.compartment)))
        slow = {x: [(rid, st, sg) for rid, st, sg in self.flux[x] if not any(r.id == rid for r in fast)] for x in F}
        for i, row in enumerate(L):
            terms = [Expr("mul", (const(row[j]), amount(x))) for j, x in enumerate(F) if row[j] != 0]
            rterms = [Expr("mul", (const(row[j] * sg * cfv[x]), st, sym(rid))) for j, x in enumerate(F)
                      if row[j] != 0 for rid, st, sg in slow[x]]
            self.residuals.append(Expr("sub", (Expr("add", tuple(terms)) if terms else const(0.0),
                                               sym(f"@u0:{i}"))))
            self.fast_u.append((f"@u:{i}", Expr("add", tuple(rterms)) if rterms else const(0.0)))
        self.residuals += [r.rate for r in fast]
        for x in F:
            del self.flux[x]
        self.alg = list(F)
        self.aidx = {x: j for j, x in enumerate(self.alg)}
        self.fast_N = N

    def _fast_rates(self, f, t0, z):
        vals, res = f(t0, [np.float64(v) for v in z])
        nf = self.fast_N.shape[1]
        scale = np.array([1.0 if self.s.species[x].hosu else float(vals[self.s.species[x].compartment])
                          for x in self.alg])
        return np.array(res[len(res) - nf:], dtype=float), scale

    def _relax_fast(self, f, t0, z):
        """Let the fast reactions alone run to their (stable) equilibrium from the declared state."""
        from scipy.integrate import solve_ivp
        N = self.fast_N

        def rhs(_, zz):
            v, scale = self._fast_rates(f, t0, zz)
            return (N @ v) / scale
        T = 1.0
        for _ in range(12):
            sol = solve_ivp(rhs, (0.0, T), z, method="LSODA", rtol=1e-10, atol=1e-14)
            z = sol.y[:, -1]
            v, _s = self._fast_rates(f, t0, z)
            if np.all(np.abs(v) <= 1e-12 * (1.0 + np.abs(z).max())):
                break
            T *= 10.0
        return z

    def _check_fast_stable(self, f, t0, z):
        N = self.fast_N
        v0, scale = self._fast_rates(f, t0, z)
        J = np.empty((N.shape[1], len(z)))
        for j in range(len(z)):
            h = 1e-7 * max(1.0, abs(z[j]))
            zz = z.copy()
            zz[j] += h
            J[:, j] = (self._fast_rates(f, t0, zz)[0] - v0) / h
        A = J @ (N / scale[:, None])            # d(fast rates)/d(extents)
        ev = np.linalg.eigvals(A)
        if not np.all(ev.real < -1e-9 * max(1.0, np.abs(A).max())):
            raise Unsupported(f"{self.s.source}: fast reactions without a stable isolated equilibrium "
                              f"({int(np.sum(ev.real >= -1e-9 * max(1.0, np.abs(A).max())))} of {len(ev)} "
                              f"eigenvalues not negative) are not supported")

    def check_fast_runtime(self, t, y):
        """Refuse if the fast equilibrium followed by Newton continuation is not (or no longer) stable."""
        N = self.fast_N
        nf = N.shape[1]
        y = np.asarray(y, dtype=float)
        vals = dict(zip(self.out_names, self.fn_values(t, y)))
        scale = np.array([1.0 if self.s.species[x].hosu else float(vals[self.s.species[x].compartment])
                          for x in self.alg])
        z = self.z_last.copy()

        def rates(zz):
            return np.array(self.fn_res(t, np.concatenate([y, zz])), dtype=float)[-nf:]
        v0 = rates(z)
        J = np.empty((nf, len(z)))
        for j in range(len(z)):
            h = 1e-7 * max(1.0, abs(z[j]))
            zz = z.copy()
            zz[j] += h
            J[:, j] = (rates(zz) - v0) / h
        A = J @ (N / scale[:, None])
        if not np.all(np.linalg.eigvals(A).real < -1e-9 * max(1.0, np.abs(A).max())):
            raise Unsupported(f"{self.s.source}: the fast-reaction equilibrium is not stable at t={t:g} "
                              f"(branch switching of fast reactions is not supported)")

    def _amount0_from(self, init, x):
        sp = self.s.species[x]
        return init[x] if sp.hosu else init[x] * init[sp.compartment]

    # --- definitions ----------------------------------------------------------------------------------
    def _is_constant(self, x):
        s = self.s
        for d in (s.compartments, s.species, s.parameters, s.species_refs):
            if x in d:
                return d[x].constant
        return False

    def _amount0(self, x):
        sp = self.s.species.get(x)
        if sp is None or sp.hosu:
            return self.init[x]
        return self.init[x] * self.init[sp.compartment]

    def _deriv(self, x: str, depth: int = 0) -> Expr:
        """d(symbol value of x)/dt as an Expr (for rateOf)."""
        s = self.s
        if depth > 20:
            raise Unsupported(f"rateOf({x}): recursive rate definitions")
        if x in s.rate_rules:
            return self._expand(s.rate_rules[x], depth + 1)
        if x in s.assignment_rules or x in self.aidx:
            raise Unsupported(f"rateOf({x}) of a variable defined by an assignment/algebraic rule is not supported")
        if x in s.species:
            sp = s.species[x]
            da = self._amount_rate(x) if x in self.flux else const(0.0)
            if sp.hosu:
                return da
            dv = self._deriv(sp.compartment, depth + 1)
            V = sym(sp.compartment)
            return Expr("sub", (Expr("div", (da, V)), Expr("div", (Expr("mul", (sym(x), dv)), V))))
        if x in self.rates:
            raise Unsupported(f"rateOf({x}) of a reaction rate is not supported")
        return const(0.0)

    def _amount_rate(self, x: str) -> Expr:
        terms = [Expr("mul", (const(sign), st, sym(rid))) for rid, st, sign in self.flux[x]]
        tot = terms[0] if len(terms) == 1 else Expr("add", tuple(terms))
        cf = self.s.species[x].conversion_factor
        return Expr("mul", (sym(cf), tot)) if cf else tot

    def _expand(self, e: Expr, depth: int = 0) -> Expr:
        """Replace rateOf(x) nodes by the derivative expressions."""
        if e.op == "rateOf":
            return self._deriv(e.value, depth + 1)
        if e.op == "delay":              # the delayed argument is expanded when it is compiled
            return Expr("delay", (e.args[0], self._expand(e.args[1], depth)))
        if not e.args:
            return e
        return Expr(e.op, tuple(self._expand(a, depth) for a in e.args), e.value)

    def _initial_values(self) -> dict:
        s = self.s
        defs: dict[str, Expr] = {}
        for x in self.ids:
            if x in s.initial_assignments:
                defs[x] = s.initial_assignments[x]
            elif x in s.assignment_rules:
                defs[x] = s.assignment_rules[x]
            elif x in self.rates:
                defs[x] = self.rates[x]
            elif x in s.species:
                sp = s.species[x]
                V = sym(sp.compartment)
                if sp.initial_concentration is not None:
                    c = const(sp.initial_concentration)
                    defs[x] = Expr("mul", (c, V)) if sp.hosu else c
                elif sp.initial_amount is not None:
                    a = const(sp.initial_amount)
                    defs[x] = a if sp.hosu else Expr("div", (a, V))
                else:
                    defs[x] = Expr("undefined")
            elif x in s.compartments:
                defs[x] = const(s.compartments[x].size)
            elif x in s.parameters:
                defs[x] = const(s.parameters[x].value)
            else:
                defs[x] = const(s.species_refs[x].value)
        guess = {}
        for x in self.alg:
            g = defs[x]
            guess[x] = g.value if g.op == "const" and math.isfinite(g.value) else 1.0
            if x in self._declared and math.isfinite(self._declared[x]):
                guess[x] = self._declared[x]
            defs[x] = sym(f"@z:{self.aidx[x]}")
        defs = {x: _undelay(self._expand(e)) for x, e in defs.items()}
        order = _topo(defs, list(defs), "initial values")
        gen = _Gen(lambda n: self.py[n] if n in self.py else (f"z[{n[3:]}]" if n.startswith("@z:") else _unknown(n)))
        lines = ["def _init(t, z):"]
        for x in order:
            lines.append(f"    {self.py[x]} = {gen.num(defs[x])}")
        u0 = {f"@u0:{i}": const(v) for i, v in enumerate(getattr(self, "fast_u0", []))}
        res = [gen.num(_undelay(self._expand(_subst_syms(e, u0)))) for e in self.residuals]
        lines.append("    return {" + ", ".join(f"{x!r}: {self.py[x]}" for x in order) + "}, [" + ", ".join(res) + "]")
        f = self._init_fn = _build("\n".join(lines), gen, safe=True)["_init"]
        t0 = np.float64(0.0)
        with np.errstate(all="ignore"):
            if self.alg:
                z = np.array([guess[x] for x in self.alg])
                self._z_pre = [np.float64(v) for v in z]      # before the start: declared values
                if self.fast_N is not None:
                    z = self._relax_fast(f, t0, z)
                z = _newton(lambda z: np.array(f(t0, [np.float64(v) for v in z])[1], dtype=float),
                            z, f"{self.s.source}: algebraic rules at t0")
                if self.fast_N is not None:
                    self._check_fast_stable(f, t0, z)
            else:
                z = []
            self._z_init = [np.float64(v) for v in z]
            if self.fast_N is None:
                self._z_pre = self._z_init
            vals = f(t0, self._z_init)[0]
        return {x: float(v) for x, v in vals.items()}

    # --- compile ---------------------------------------------------------------------------------------
    def _compile(self):
        s = self.s
        self.literal = {}
        defs: dict[str, Expr] = {}
        for x in self.ids:
            if x in self.sidx or x in self.aidx:
                continue
            if x in self.rates:
                defs[x] = self._expand(self.rates[x])
            elif x in s.assignment_rules:
                defs[x] = self._expand(s.assignment_rules[x])
            elif x in s.species:
                sp = s.species[x]
                if sp.hosu:
                    self.literal[x] = self.init[x]
                else:
                    c = sp.compartment
                    if c in self.sidx or c in s.assignment_rules:
                        defs[x] = Expr("div", (const(self._amount0(x)), sym(c)))
                    else:
                        self.literal[x] = self.init[x]
            else:
                self.literal[x] = self.init[x]
        # state species in concentration: value = amount / size
        for x in self.states:
            sp = s.species.get(x)
            if sp is not None and not sp.hosu:
                defs[x] = Expr("div", (sym("@a:" + x), sym(sp.compartment)))
        self.defs = defs
        # derivatives
        ders = []
        for x in self.states:
            sp = s.species.get(x)
            if x in s.rate_rules:
                r = self._expand(s.rate_rules[x])
                if sp is not None and not sp.hosu:
                    c = sp.compartment
                    dv = self._deriv(c)
                    r = Expr("add", (Expr("mul", (r, sym(c))), Expr("mul", (sym(x), dv))))
                ders.append(r)
            elif x in self.flux:
                ders.append(self._expand(self._amount_rate(x)))
            elif x.startswith("@u:"):
                ders.append(self._expand(dict(self.fast_u)[x]))
            else:
                ders.append(const(0.0))
        self.ders = ders
        self.still = all(d.op == "const" and d.value == 0 for d in ders)   # nothing moves but time
        # watch: event triggers + discontinuities of the right-hand side
        self.triggers = [self._expand(ev.trigger) for ev in s.events]
        need = _closure([d for d in ders], defs)
        conds, seen = [], {repr(e) for e in self.triggers}
        for e in list(ders) + [defs[x] for x in need] + self.triggers + \
                [defs[x] for x in _closure(self.triggers, defs)]:
            for c in _conditions(e):
                key = repr(c)
                if key not in seen:
                    seen.add(key)
                    conds.append(c)
        self.watch_exprs = self.triggers + conds
        rhs_keys = {repr(x) for e in list(ders) + [defs[x] for x in need] for x in _conditions(e)}
        self.rhs_watch = [repr(e) in rhs_keys for e in self.watch_exprs]   # switches of the right-hand side
        self.n_events = len(s.events)
        self.delay_keys, self.delay_fns, self.delay_pre, self.hist, self.delay_min = {}, [], [], None, math.inf
        self.fn_rhs = self._function("rhs", ders, list_out=True)
        gaps, self.gap_index, slot = [], [], {}
        for e in self.watch_exprs:
            if e.op in ("lt", "le", "gt", "ge"):
                key = repr(e.args)
                if key not in slot:
                    slot[key] = len(gaps)
                    gaps.append(Expr("sub", e.args))
                self.gap_index.append(slot[key])
            else:
                self.gap_index.append(None)
        self.fn_gap = self._function("gap", gaps) if gaps else None
        self.fn_watch = self._function("watch", [Expr("not", (Expr("not", (c,)),)) for c in self.watch_exprs],
                                       boolean=True)
        amounts = []
        for x in s.species:
            sp = s.species[x]
            amounts.append(sym("@a:" + x) if x in self.sidx and not sp.hosu else sym(x) if x in self.sidx else
                           (sym(x) if sp.hosu else Expr("mul", (sym(x), sym(sp.compartment)))))
        self.out_names = list(self.ids) + ["@a:" + x for x in s.species]
        if self.alg:
            self.fn_res = self._function("res", [self._expand(e) for e in self.residuals], raw=True)
            self.z_last = np.array([self.init[x] for x in self.alg], dtype=float)
        self.fn_values = self._function("values", [sym(x) for x in self.ids] + amounts)
        self.fn_assign, self.fn_delay, self.fn_prio = [], [], []
        for ev in s.events:
            self.fn_assign.append(self._function("assign", [self._expand(e) for _, e in ev.assignments]))
            self.fn_delay.append(self._function("delay", [self._expand(ev.delay)]) if ev.delay is not None else None)
            self.fn_prio.append(self._function("prio", [self._expand(ev.priority)]) if ev.priority is not None
                                else None)

    def _name(self, n: str) -> str:
        if n.startswith("@a:"):
            return f"y{self.sidx[n[3:]]}"
        if n in self.sidx and n not in self.defs:
            return f"y{self.sidx[n]}"
        if n in self.aidx:
            return f"y{len(self.states) + self.aidx[n]}"
        if n in self.py:
            return self.py[n]
        return _unknown(n)

    def _on_delay(self, x: Expr, d: Expr) -> int:
        if d.op == "const" and d.value > 0:
            self.delay_min = min(self.delay_min, d.value)
        key = repr(x)
        if key not in self.delay_keys:
            i = self.delay_keys[key] = len(self.delay_fns)
            self.delay_fns.append(None)
            self.delay_pre.append(None)
            self.delay_fns[i] = self._function("dx", [self._expand(x)])
            gen = _Gen(lambda n: f"_E[{n!r}]" if n in self.py else _unknown(n))
            src = f"def _dxp(t, _E):\n    return {gen.num(_undelay(_zero_rates(x)))}"
            self.delay_pre[i] = _build(src, gen, safe=True)["_dxp"]
        return self.delay_keys[key]

    def _delay_value(self, i, tau, t, y):
        """Value of the i-th delayed expression at the past time tau (history of the states; before
        the start the initial state; beyond the stored history linear interpolation to (t, y))."""
        h = self.hist
        f = self.delay_fns[i]
        y = np.asarray(y, dtype=float)[:len(self.states)]      # drop the algebraic unknowns (re-solved)
        if h is None:
            return f(t, y)[0]
        if tau < h.t_first:
            # before the start every variable follows its initial-value definition at time tau, rates 0
            with np.errstate(all="ignore"):
                return float(self.delay_pre[i](np.float64(tau), self._init_fn(np.float64(tau), self._z_pre)[0]))
        if tau == h.t_first:
            return f(tau, h.y_first)[0]
        if tau >= t:
            return f(t, y)[0]
        if tau > h.t1[-1]:
            te, ye = h.t1[-1], h.y_last
            w = (tau - te) / (t - te)
            return f(tau, (1 - w) * ye + w * np.asarray(y, dtype=float))[0]
        import bisect
        k = bisect.bisect_left(h.t1, tau)
        return f(tau, h.f[k](tau))[0]

    def _augment(self, t, y):
        """Append the algebraic variables solved (Newton) from the algebraic rules at (t, y)."""
        y = np.asarray(y, dtype=float)
        z = _newton(lambda z: np.array(self.fn_res(t, np.concatenate([y, z])), dtype=float), self.z_last,
                    f"{self.s.source}: algebraic rules at t={t}")
        self.z_last = z
        return np.concatenate([y, z])

    def _function(self, name: str, exprs: list, list_out: bool = False, boolean: bool = False, raw: bool = False):
        gen = _Gen(lambda n: self._lit(n, gen) if n in self.literal else self._name(n), self._on_delay)
        need = _closure(exprs, self.defs)
        order = _topo(self.defs, need, "assignment rules")
        used = set().union(*(_deps(e) for e in exprs), *(_deps(self.defs[x]) for x in need)) if exprs else set()
        uses_alg = raw or any(x in self.aidx for x in used)   # else no need to solve the algebraic rules
        lines = [f"def _{name}(t, y):"]
        width = len(self.states) + (len(self.alg) if uses_alg else 0)
        if width:
            lines.append("    " + "".join(f"y{i}, " for i in range(width)) + "= y[:" + str(width) + "]")
        for x in order:
            lines.append(f"    {self.py[x]} = {gen.num(self.defs[x])}")
        items = [gen.cond(e) if boolean else gen.num(e) for e in exprs]
        lines.append("    return [" + ", ".join(items) + "]" if list_out else
                     "    return (" + "".join(i + ", " for i in items) + ")")
        src = "\n".join(lines)
        self.sources[name] = src
        extra = {"_DL": self._delay_value}
        fast = _build(src, gen, safe=False, extra=extra)[f"_{name}"]
        safe = _build(src, gen, safe=True, extra=extra)[f"_{name}"]

        aug = bool(self.alg) and not raw and uses_alg

        def call(t, y):
            if aug:
                y = self._augment(t, y)
            try:
                return fast(t, y.tolist() if isinstance(y, np.ndarray) else y)
            except (ArithmeticError, ValueError, TypeError):
                with np.errstate(all="ignore"):
                    return safe(np.float64(t), [np.float64(v) for v in y])
        return call

    def _lit(self, n, gen):
        return gen.k(self.literal[n])


def _undelay(e: Expr) -> Expr:
    """At t0, delay(x, d) is x (values before the start are the initial values)."""
    if e.op == "delay":
        return _subst_time(_undelay(_zero_rates(e.args[0])), Expr("sub", (Expr("time"), e.args[1])))
    if not e.args:
        return e
    return Expr(e.op, tuple(_undelay(a) for a in e.args), e.value)


def _subst_syms(e: Expr, mapping: dict) -> Expr:
    if e.op == "sym":
        return mapping.get(e.value, e)
    if not e.args:
        return e
    return Expr(e.op, tuple(_subst_syms(a, mapping) for a in e.args), e.value)


def _zero_rates(e: Expr) -> Expr:
    if e.op == "rateOf":
        return const(0.0)
    if not e.args:
        return e
    return Expr(e.op, tuple(_zero_rates(a) for a in e.args), e.value)


def _subst_time(e: Expr, by: Expr) -> Expr:
    if e.op == "time":
        return by
    if not e.args:
        return e
    return Expr(e.op, tuple(_subst_time(a, by) for a in e.args), e.value)


def _newton(res, z0, where: str):
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


def _unknown(n):
    raise InvalidParameter(f"unknown symbol {n!r} in math")


def _build(src: str, gen: _Gen, safe: bool, extra: dict | None = None) -> dict:
    ns = _safe_ns() if safe else _fast_ns()
    ns.update(extra or {})
    F = ns["_F"]
    for key, nm in gen.consts.items():
        ns[nm] = F(float(key))
    exec(compile(src, "<sbml>", "exec"), ns)
    return ns


def _closure(exprs: list, defs: dict) -> set:
    need, stack = set(), []
    for e in exprs:
        stack.extend(_deps(e))
    while stack:
        x = stack.pop()
        if x in need or x not in defs:
            continue
        need.add(x)
        stack.extend(_deps(defs[x]))
    return need


def _topo(defs: dict, names, what: str) -> list:
    order, state = [], {}
    for root in names:
        if state.get(root):
            continue
        stack = [(root, iter(sorted(_deps(defs[root]) & defs.keys())))]
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
                stack.append((nxt, iter(sorted(_deps(defs[nxt]) & defs.keys()))))
    return order


# --- simulation ------------------------------------------------------------------------------------------
class Stopped(Exception):
    """Raised out of :func:`simulate` when its ``stop()`` callback returned True."""


def simulate(system: SbmlSystem | CompiledSbml, times, rtol: float = 1e-10, atol: float | None = None,
             seed: int = 0, on_output=None, stop=None) -> dict:
    """Values of every id (species: symbol value; ``@a:S``: amount of S) at ``times`` (ascending).

    ``on_output(i, t, row)``: called when output point i is evaluated (row in ``CompiledSbml.out_names``
    order; a point is final once a later point has been reported).  ``stop()``: polled every
    integrator step and output point; returning True raises :class:`Stopped`."""
    from scipy.integrate import LSODA
    c = system if isinstance(system, CompiledSbml) else CompiledSbml(system)
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or len(times) == 0 or np.any(np.diff(times) < 0) or times[0] < 0:
        raise InvalidParameter("output times must be a non-empty ascending 1-D array of times >= 0")
    n = len(c.states)
    y = c.y0.copy()
    if n == 0:
        y = np.zeros(1)
    if atol is None:
        nz = np.abs(c.y0[np.isfinite(c.y0) & (c.y0 != 0)])
        scale = float(nz.max()) if nz.size else 1.0
        atol = 1e-12 * min(1.0, scale)
    rhs = (lambda t, y: c.fn_rhs(t, y)) if n else (lambda t, y: [0.0])
    unwrap = (lambda y: y) if n else (lambda y: y[:0])
    opts = {"rtol": rtol, "atol": atol}
    hist = None
    still_step = max(float(times[-1]) / max(len(times) - 1, 1), 1e-300) if len(times) > 1 else math.inf
    if c.delay_fns:
        hist = c.hist = _History(0.0, unwrap(y).copy())
        if math.isfinite(c.delay_min):
            opts["max_step"] = c.delay_min / 2
    out = np.full((len(times), len(c.out_names)), np.nan)
    ne = c.n_events
    t = 0.0                              # SBML model time starts at 0; outputs from times[0]
    prev = list(c.fn_watch(t, unwrap(y)))
    for k, ev in enumerate(c.s.events):
        prev[k] = ev.initial_value
    pending: list[_Pending] = []
    seq = [0]
    rng = np.random.default_rng(seed)

    def watch(t, y):
        if stop is not None and stop():
            raise Stopped
        return list(c.fn_watch(t, unwrap(y)))

    def schedule(k, t, y):
        ev = c.s.events[k]
        d = 0.0
        if c.fn_delay[k] is not None:
            d = float(c.fn_delay[k](t, unwrap(y))[0])
            if not d >= 0:
                raise InvalidParameter(f"event {ev.id}: delay {d} is negative or undefined at t={t}")
        vals = tuple(c.fn_assign[k](t, unwrap(y))) if ev.use_trigger_time_values else None
        seq[0] += 1
        pending.append(_Pending(t + d, seq[0], k, vals))

    def update(t, y, w):
        for k in range(ne):
            if w[k] and not prev[k]:
                schedule(k, t, y)
            elif prev[k] and not w[k] and not c.s.events[k].persistent:
                pending[:] = [p for p in pending if p.event != k]
        prev[:] = w

    def apply(k, vals, t, y):
        ev = c.s.events[k]
        y0, y = y, y.copy()
        conc = []
        for (var, _), v in zip(ev.assignments, vals):
            sp = c.s.species.get(var)
            if sp is not None and not sp.hosu:
                conc.append((var, sp.compartment, v))
            else:
                y[c.sidx[var]] = v
        if conc:                 # amount = assigned concentration × size before this event's assignments
            vals_now = dict(zip(c.out_names, c.fn_values(t, unwrap(y0))))
            for var, comp, v in conc:
                y[c.sidx[var]] = v * vals_now[comp]
        return y

    def process(t, y):
        update(t, y, watch(t, y))
        while True:
            ready = [p for p in pending if p.time <= t]
            if not ready:
                return y
            p = ready[0]
            if len(ready) > 1:
                def prio(p):
                    f = c.fn_prio[p.event]
                    pr = float(f(t, unwrap(y))[0]) if f is not None else -math.inf
                    return pr if pr == pr else -math.inf
                pr = {id(q): prio(q) for q in ready}
                ready.sort(key=lambda q: (-pr[id(q)], q.time, q.event, q.seq))
                top = [q for q in ready if pr[id(q)] == pr[id(ready[0])]]
                # equal explicit priorities: the order is random (SBML L3V2 §4.11.7)
                p = top[int(rng.integers(len(top)))] if math.isfinite(pr[id(ready[0])]) else ready[0]
            pending.remove(p)
            vals = p.values if p.values is not None else tuple(c.fn_assign[p.event](t, unwrap(y)))
            y = apply(p.event, vals, t, y)
            update(t, y, watch(t, y))

    def record(i, t, y):
        out[i] = c.fn_values(t, unwrap(y))
        if c.fast_N is not None:
            c.check_fast_runtime(t, unwrap(y))
        if on_output is not None:
            on_output(i, t, out[i])
        if stop is not None and stop():
            raise Stopped

    y = process(t, y)
    oi = 0
    while oi < len(times) and times[oi] <= t:
        record(oi, t, y)
        oi += 1
    t_end = float(times[-1])
    steps = 0
    while oi < len(times):
        t_stop = min([t_end] + [p.time for p in pending])
        if t_stop <= t:
            y = process(t, y)
            t_stop = min([t_end] + [p.time for p in pending])
            if t_stop <= t:
                raise SimulationBlowUp(f"{c.s.source}: events keep firing at t={t}")
        solver = LSODA(rhs, t, y, t_stop, **opts) if n and not c.still else _StillSolver(t, y, t_stop, still_step)
        while True:
            t_old, y_old = solver.t, solver.y.copy()
            msg = solver.step()
            steps += 1
            if solver.status == "failed":
                raise SimulationBlowUp(f"{c.s.source}: integration failed at t={solver.t}: {msg}")
            if steps > 2_000_000:
                raise SimulationBlowUp(f"{c.s.source}: too many steps")
            t_new, y_new = solver.t, solver.y
            if hist is not None:
                hist.push(t_old, t_new, solver.dense_output(), unwrap)
            w = watch(t_new, y_new)
            if w != prev:
                dense = solver.dense_output()
                lo, hi = _locate(c, watch, prev, w, dense, t_old, t_new, unwrap)
                while hi - lo > 1e-14 * max(1.0, abs(hi)):
                    mid = 0.5 * (lo + hi)
                    if mid <= lo or mid >= hi:
                        break
                    if watch(mid, dense(mid)) == prev:
                        lo = mid
                    else:
                        hi = mid
                w_hi = watch(hi, dense(hi))
                if n and not c.still and any(c.rhs_watch[i] and w_hi[i] != prev[i] for i in range(len(prev))):
                    # the right-hand side switched inside the step: re-integrate the smooth piece [t_old, hi]
                    if hist is not None:
                        hist.pop()
                    y_hi = _integrate_to(LSODA, rhs, t_old, y_old, hi, opts, times, oi, out, record, unwrap, hist)
                else:
                    y_hi = dense(hi)
                    while oi < len(times) and times[oi] < hi:
                        record(oi, times[oi], dense(times[oi]))
                        oi += 1
                while oi < len(times) and times[oi] < hi:
                    oi += 1
                t, y = hi, y_hi
                y = process(t, y)
                if hist is not None:
                    hist.y_last = unwrap(y).copy()
                while oi < len(times) and times[oi] <= t:
                    record(oi, t, y)
                    oi += 1
                break
            dense = None
            while oi < len(times) and times[oi] < t_new:
                if dense is None:
                    dense = solver.dense_output()
                record(oi, times[oi], dense(times[oi]))
                oi += 1
            if solver.status == "finished" or t_new >= t_stop:
                t, y = t_stop, y_new.copy()
                y = process(t, y)
                if hist is not None:
                    hist.y_last = unwrap(y).copy()
                while oi < len(times) and times[oi] <= t:
                    record(oi, t, y)
                    oi += 1
                break
    return {nm: out[:, j] for j, nm in enumerate(c.out_names)}


def _locate(c, watch, prev, w_new, dense, lo, hi, unwrap):
    """Narrow the bracket of the first watch change with Brent's method (scipy brentq) on the
    continuous gaps a - b of the relational atoms that changed; the bisection that follows only
    polishes.  Falls back to the whole step when the narrowed bracket does not hold."""
    from scipy.optimize import brentq
    best, done = None, set()
    for i in range(len(w_new)):
        if w_new[i] == prev[i] or c.gap_index[i] is None or c.gap_index[i] in done:
            continue
        done.add(c.gap_index[i])
        g = lambda tt, i=i: c.fn_gap(tt, unwrap(dense(tt)))[c.gap_index[i]]  # noqa: E731
        ga, gb = g(lo), g(hi)
        if not (np.isfinite(ga) and np.isfinite(gb)) or ga * gb > 0:
            continue
        if ga == 0 or gb == 0:
            a = b = lo if ga == 0 else hi
        else:
            try:
                a = b = brentq(g, lo, hi, xtol=1e-15 * max(1.0, abs(hi)), rtol=1e-15, maxiter=100)
            except (RuntimeError, ValueError):
                continue
        eps = 1e-13 * max(1.0, abs(b))
        a2, b2 = max(lo, a - eps), min(hi, b + eps)
        if best is None or b2 < best[1]:
            best = (a2, b2)
    if best is not None and best[0] < best[1]:
        a2, b2 = best
        if watch(a2, dense(a2)) == prev and watch(b2, dense(b2)) != prev:
            return a2, b2
    return lo, hi


class _StillSolver:
    """Stand-in for LSODA when the model has no state variables (only time moves): steps of at
    most one output interval, constant dense output."""

    def __init__(self, t, y, t_bound, max_step):
        self.t, self.y, self.t_bound, self.max_step = t, y, t_bound, max_step
        self.t_old, self.status = None, "running"

    def step(self):
        self.t_old = self.t
        self.t = min(self.t_bound, self.t + self.max_step)
        if self.t >= self.t_bound:
            self.status = "finished"

    def dense_output(self):
        y = self.y.copy()
        return lambda tau: y


class _History:
    """Dense-output segments of the states, for the delay csymbol."""

    def __init__(self, t0, y0):
        self.t_first, self.y_first, self.y_last = t0, y0, y0
        self.t1, self.f = [t0], [lambda tau, y0=y0: y0]

    def push(self, ta, tb, dense, unwrap):
        self.t1.append(tb)
        self.f.append(lambda tau, d=dense: unwrap(d(tau)))
        self.y_last = unwrap(dense(tb))

    def pop(self):
        if len(self.t1) > 1:
            self.t1.pop()
            self.f.pop()
            self.y_last = self.f[-1](self.t1[-1])


def _integrate_to(LSODA, rhs, t0, y0, t1, opts, times, oi, out, record, unwrap, hist=None):
    if t1 <= t0:
        return y0
    solver = LSODA(rhs, t0, y0, t1, **opts)
    while solver.status == "running":
        ta = solver.t
        solver.step()
        if hist is not None and solver.status != "failed":
            hist.push(ta, solver.t, solver.dense_output(), unwrap)
        if solver.status == "failed":
            raise SimulationBlowUp(f"integration failed at t={solver.t}")
        dense = None
        while oi < len(times) and times[oi] < min(solver.t, t1):
            if dense is None:
                dense = solver.dense_output()
            record(oi, times[oi], dense(times[oi]))
            oi += 1
    return solver.y.copy()


def simulate_file(path, times, variables: list[str], amount: set[str], concentration: set[str]) -> dict:
    """Simulate an SBML file and return each requested variable at ``times``.

    Species are reported as amounts when listed in ``amount``, as concentrations when listed in
    ``concentration``, otherwise as their SBML symbol value (amount if hasOnlySubstanceUnits, else
    concentration).  Compartments, parameters, species references and reaction ids (rate = kinetic
    law value) are reported as they are.  Raises Unsupported for refused constructs."""
    system = read_sbml_system(str(path))
    c = CompiledSbml(system)
    res = simulate(c, np.asarray(times, dtype=float))
    out = {}
    for v in variables:
        if v in system.species:
            sp = system.species[v]
            a = res["@a:" + v]
            if v in amount:
                out[v] = a
            elif v in concentration:
                out[v] = res[v] if not sp.hosu else a / res[sp.compartment]
            else:
                out[v] = res[v]
        elif v in res:
            out[v] = res[v]
        else:
            raise InvalidParameter(f"{system.source}: variable {v!r} is not in the model")
    return out
