"""CPU reference runtime for SBML models (:class:`~kernels.flint.sbml.system.SbmlSystem`).

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

import bisect
import math

import numpy as np

from ...errors import InvalidParameter, Unsupported
from ..expr import Expr, const, sym
from .pycode import (PyGen, build_namespace, closure, conditions, deps, newton, subst_syms, topo_order,
                     undelay, unknown_symbol, walk, zero_rates)
from .system import SbmlSystem
# Imports inside functions: SciPy (solve_ivp, null_space) loads on the first simulation.


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
            used = set().union(*(deps(e) for e in s.algebraic_rules))
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
            self.residuals = [subst_syms(e, to_state) for e in self.residuals]
        self._compile()

    def _setup_fast(self, fast: list):
        """Fast reactions (rapid equilibrium): kinetic law = 0 at all times.  The species they change
        become algebraic unknowns; the moieties u = L·amount with L spanning the left null space of
        the fast stoichiometry matrix are states driven by the slow reactions only."""
        from scipy.linalg import null_space
        s = self.s
        if self.alg or any(x.op == "delay" for r in s.reactions for x in walk(r.rate)):
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
        defs = {x: undelay(self._expand(e)) for x, e in defs.items()}
        order = topo_order(defs, list(defs), "initial values")
        gen = PyGen(lambda n: self.py[n] if n in self.py else (f"z[{n[3:]}]" if n.startswith("@z:") else unknown_symbol(n)))
        lines = ["def _init(t, z):"]
        for x in order:
            lines.append(f"    {self.py[x]} = {gen.num(defs[x])}")
        u0 = {f"@u0:{i}": const(v) for i, v in enumerate(getattr(self, "fast_u0", []))}
        res = [gen.num(undelay(self._expand(subst_syms(e, u0)))) for e in self.residuals]
        lines.append("    return {" + ", ".join(f"{x!r}: {self.py[x]}" for x in order) + "}, [" + ", ".join(res) + "]")
        f = self._init_fn = build_namespace("\n".join(lines), gen, safe=True)["_init"]
        t0 = np.float64(0.0)
        with np.errstate(all="ignore"):
            if self.alg:
                z = np.array([guess[x] for x in self.alg])
                self._z_pre = [np.float64(v) for v in z]      # before the start: declared values
                if self.fast_N is not None:
                    z = self._relax_fast(f, t0, z)
                z = newton(lambda z: np.array(f(t0, [np.float64(v) for v in z])[1], dtype=float),
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
        need = closure([d for d in ders], defs)
        conds, seen = [], {repr(e) for e in self.triggers}
        for e in list(ders) + [defs[x] for x in need] + self.triggers + \
                [defs[x] for x in closure(self.triggers, defs)]:
            for c in conditions(e):
                key = repr(c)
                if key not in seen:
                    seen.add(key)
                    conds.append(c)
        self.watch_exprs = self.triggers + conds
        rhs_keys = {repr(x) for e in list(ders) + [defs[x] for x in need] for x in conditions(e)}
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
        return unknown_symbol(n)

    def _on_delay(self, x: Expr, d: Expr) -> int:
        if d.op == "const" and d.value > 0:
            self.delay_min = min(self.delay_min, d.value)
        key = repr(x)
        if key not in self.delay_keys:
            i = self.delay_keys[key] = len(self.delay_fns)
            self.delay_fns.append(None)
            self.delay_pre.append(None)
            self.delay_fns[i] = self._function("dx", [self._expand(x)])
            gen = PyGen(lambda n: f"_E[{n!r}]" if n in self.py else unknown_symbol(n))
            src = f"def _dxp(t, _E):\n    return {gen.num(undelay(zero_rates(x)))}"
            self.delay_pre[i] = build_namespace(src, gen, safe=True)["_dxp"]
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
        k = bisect.bisect_left(h.t1, tau)
        return f(tau, h.f[k](tau))[0]

    def _augment(self, t, y):
        """Append the algebraic variables solved (Newton) from the algebraic rules at (t, y)."""
        y = np.asarray(y, dtype=float)
        z = newton(lambda z: np.array(self.fn_res(t, np.concatenate([y, z])), dtype=float), self.z_last,
                    f"{self.s.source}: algebraic rules at t={t}")
        self.z_last = z
        return np.concatenate([y, z])

    def _function(self, name: str, exprs: list, list_out: bool = False, boolean: bool = False, raw: bool = False):
        gen = PyGen(lambda n: self._lit(n, gen) if n in self.literal else self._name(n), self._on_delay)
        need = closure(exprs, self.defs)
        order = topo_order(self.defs, need, "assignment rules")
        used = set().union(*(deps(e) for e in exprs), *(deps(self.defs[x]) for x in need)) if exprs else set()
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
        fast = build_namespace(src, gen, safe=False, extra=extra)[f"_{name}"]
        safe = build_namespace(src, gen, safe=True, extra=extra)[f"_{name}"]

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
