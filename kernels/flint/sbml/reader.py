"""SBML import/export (python-libsbml) for Flint models.

Import: parameters, species (amounts or concentrations), compartments, reactions with kinetic laws
(local parameters renamed ``reaction_param``), rate and assignment rules, function definitions
(inlined), initial assignments (evaluated at t = 0).  Refused, with the element named: events,
algebraic rules, delays, constraints, fast reactions, unknown math.  Export writes L3V2 with
parameters for constants, non-constant parameters with rate rules for states and assignment rules.
"""
from __future__ import annotations

import math
import re

from ...errors import InvalidParameter
from ..expr import Expr, const, evaluate, substitute, sym, to_text
from ..model import Model
# Imports inside functions: the lowering (.core), the SBML system and the file gate load only when an
# SBML file is read (kernels.flint imports this reader at start-up, so every `--help` would load them).


def _lib():
    try:
        import libsbml
    except ImportError as exc:               # pragma: no cover
        raise InvalidParameter("SBML needs python-libsbml (pip install python-libsbml)") from exc
    return libsbml


def _math(ast, where: str, fdefs: dict, time_name: str, lib) -> Expr:
    """SBML MathML → Expr with the Flint compiler's operations: read by the project's one MathML
    converter (:func:`kernels.flint.sbml.system.convert_math`, function definitions inlined), then
    lowered by :func:`kernels.flint.sbml.core.lower` (csymbol time → ``time_name``, n-ary logic and
    min/max → chains, xor/implies/root/sec/asinh/quotient… rewritten); what the compiler cannot run
    (delay, rateOf, factorial of a variable) is refused by name."""
    from .core import lower
    from .system import MathCtx, convert_math
    return lower(convert_math(ast, where, MathCtx(lib, fdefs)), None, where, time_name)


#: a unit declared on anything but time (time alone cannot make a units rule fail; libsbml's check
#: costs seconds on the shipped network models, which declare only their time unit)
_DECLARES_UNITS = re.compile(r'(?<![tT]ime)[uU]nits="')


def unit_inconsistencies(doc, lib=None) -> list[str]:
    """libsbml's unit-consistency rules that a model breaks (SBML L3V2 §3.4.11, validation rules
    105xx: e.g. a rule whose math has other units than its variable).  Undeclared units are not
    inconsistencies (units are optional in SBML) and are ignored.  One line each: 'line N: …'."""
    lib = lib or _lib()
    for cat in (lib.LIBSBML_CAT_GENERAL_CONSISTENCY, lib.LIBSBML_CAT_IDENTIFIER_CONSISTENCY,
                lib.LIBSBML_CAT_MATHML_CONSISTENCY, lib.LIBSBML_CAT_SBO_CONSISTENCY,
                lib.LIBSBML_CAT_OVERDETERMINED_MODEL, lib.LIBSBML_CAT_MODELING_PRACTICE):
        doc.setConsistencyChecks(cat, False)             # only the units rules are read below
    doc.setConsistencyChecks(lib.LIBSBML_CAT_UNITS_CONSISTENCY, True)
    doc.checkConsistency()
    out = []
    for i in range(doc.getNumErrors()):
        e = doc.getError(i)
        if 10500 <= e.getErrorId() < 10600:
            detail = [ln.strip() for ln in e.getMessage().strip().splitlines() if ln.strip()]
            out.append(f"line {e.getLine()}: {detail[-1] if detail else e.getShortMessage()}")
    return out


def read_sbml(text: str, source: str = "", check_units: bool = True, location: str | None = None,
              allow_outside: bool | None = None, files_read: list | None = None) -> Model:
    """SBML text → Flint Model.  ``check_units``: refuse a model whose units are inconsistent
    (the message names the element); undeclared units are accepted.  Hierarchical (comp) models
    are flattened first; ``location`` (the file's path) is where their external model files are
    looked up: inside its folder unless ``allow_outside`` (:func:`.system.flatten_comp`).  The
    external files read are appended to ``files_read`` when given.  ``text`` passes the file
    gate's XML check (:func:`kernels.filegate.check_xml`) before libsbml sees it."""
    from ... import filegate
    from .system import flatten_comp, time_unit_label
    lib = _lib()
    doc = lib.readSBMLFromString(filegate.check_xml(text.lstrip("\ufeff"), source or "SBML"))
    errs = [doc.getError(i) for i in range(doc.getNumErrors())
            if doc.getError(i).getSeverity() >= lib.LIBSBML_SEV_ERROR]
    if errs:
        raise InvalidParameter(f"{source or 'SBML'}: malformed SBML, line {errs[0].getLine()}: "
                               f"{' '.join(errs[0].getMessage().split())}")
    sm = doc.getModel()
    if sm is None:
        raise InvalidParameter(f"{source or 'SBML'}: no <model> element")
    externals = flatten_comp(doc, lib, source or "SBML", location, allow_outside)
    if files_read is not None:
        files_read.extend(externals)
    sm = doc.getModel()
    # L3 has no default units: with none declared (no *units="…" attribute) no units rule can fail,
    # and libsbml's units check (seconds on thousand-rule models) is skipped
    if check_units and (doc.getLevel() < 3 or _DECLARES_UNITS.search(text)):
        bad = unit_inconsistencies(doc, lib)
        if bad:
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            raise InvalidParameter(f"{source or 'SBML'}: inconsistent units, {bad[0]}{more}")
    for what, cnt in (("event", sm.getNumEvents()), ("constraint", sm.getNumConstraints())):
        if cnt:
            raise InvalidParameter(f"{source or 'SBML'}: <{what}> elements are not supported "
                                   f"({cnt} found; stimuli must be piecewise functions of time)")
    name = sm.getId() or "sbml_model"
    m = Model(name=_safe(name), source=f"SBML import of {source}" if source else "SBML import")
    m.time_units = time_unit_label(doc, lib)
    time_name = "t"
    fdefs = {}
    for i in range(sm.getNumFunctionDefinitions()):
        fd = sm.getFunctionDefinition(i)
        lam = fd.getMath()
        nargs = lam.getNumChildren() - 1
        params = [lam.getChild(k).getName() for k in range(nargs)]
        fdefs[fd.getId()] = (params, _math(lam.getChild(nargs), f"functionDefinition {fd.getId()}", fdefs,
                                           time_name, lib))
    rate_rules, assign_rules = {}, {}
    for i in range(sm.getNumRules()):
        r = sm.getRule(i)
        var = r.getVariable()
        if r.isAlgebraic():
            raise InvalidParameter(f"{source or 'SBML'}: <algebraicRule> is not supported")
        e = _math(r.getMath(), f"rule for {var}", fdefs, time_name, lib)
        (rate_rules if r.isRate() else assign_rules)[var] = e
    values: dict[str, float] = {}
    units: dict[str, str] = {}
    for i in range(sm.getNumCompartments()):
        c = sm.getCompartment(i)
        values[c.getId()] = c.getSize() if c.isSetSize() else (1.0 if c.getSpatialDimensions() == 0 else math.nan)
        units[c.getId()] = c.getUnits()
    for i in range(sm.getNumParameters()):
        p = sm.getParameter(i)
        values[p.getId()] = p.getValue() if p.isSetValue() else math.nan
        units[p.getId()] = p.getUnits()
    species = {}
    for i in range(sm.getNumSpecies()):
        s = sm.getSpecies(i)
        comp = s.getCompartment()
        if s.isSetInitialConcentration():
            v = s.getInitialConcentration()
        elif s.isSetInitialAmount():
            v = s.getInitialAmount()
            if not s.getHasOnlySubstanceUnits():
                v = v / values.get(comp, 1.0)
        else:
            v = math.nan
        values[s.getId()] = v
        species[s.getId()] = s
    # initial assignments (evaluated once, in document order, repeated until settled)
    ias = [(sm.getInitialAssignment(i).getSymbol(),
            _math(sm.getInitialAssignment(i).getMath(), f"initialAssignment {sm.getInitialAssignment(i).getSymbol()}",
                  fdefs, time_name, lib)) for i in range(sm.getNumInitialAssignments())]
    env = dict(values)
    env[time_name] = 0.0
    for _ in range(len(ias) + 1):
        for var, e in ias:
            try:
                env[var] = float(evaluate(e, env))
            except InvalidParameter:
                pass
    values.update({k: env[k] for k, _ in ias if k in env})
    # reactions → species ODE terms
    flux: dict[str, list] = {}
    for i in range(sm.getNumReactions()):
        r = sm.getReaction(i)
        rid = r.getId()
        if r.isSetFast() and r.getFast():
            raise InvalidParameter(f"reaction {rid}: fast reactions are not supported")
        kl = r.getKineticLaw()
        if kl is None:
            raise InvalidParameter(f"reaction {rid}: no <kineticLaw>")
        local = {}
        for k in range(kl.getNumParameters()):
            lp = kl.getParameter(k)
            nm = _safe(f"{rid}_{lp.getId()}")
            values[nm] = lp.getValue()
            local[lp.getId()] = sym(nm)
        for k in range(getattr(kl, "getNumLocalParameters", lambda: 0)()):
            lp = kl.getLocalParameter(k)
            nm = _safe(f"{rid}_{lp.getId()}")
            values[nm] = lp.getValue()
            local[lp.getId()] = sym(nm)
        rate = substitute(_math(kl.getMath(), f"kineticLaw of reaction {rid}", fdefs, time_name, lib), local)
        for lst, sign in ((r.getListOfReactants(), -1.0), (r.getListOfProducts(), 1.0)):
            for k in range(lst.size()):
                sr = lst.get(k)
                if sr.isSetStoichiometryMath() if hasattr(sr, "isSetStoichiometryMath") else False:
                    raise InvalidParameter(f"reaction {rid}: <stoichiometryMath> is not supported")
                st = sr.getStoichiometry() if sr.isSetStoichiometry() else 1.0
                flux.setdefault(sr.getSpecies(), []).append(Expr("mul", (const(sign * st), rate)))
    # classify
    for sid, terms in flux.items():
        s = species[sid]
        if s.getBoundaryCondition() or s.getConstant():
            continue
        tot = terms[0] if len(terms) == 1 else Expr("add", tuple(terms))
        if not s.getHasOnlySubstanceUnits():
            tot = Expr("div", (tot, sym(s.getCompartment())))
        rate_rules.setdefault(sid, tot)
    for name_, v in values.items():
        nm = _safe(name_)
        if name_ in rate_rules:
            m.states[nm] = v
        elif name_ in assign_rules:
            continue
        else:
            m.params[nm] = v
        if units.get(name_):
            m.units[nm] = units[name_]
    for var, e in assign_rules.items():
        m.assigns[_safe(var)] = e
    for var, e in rate_rules.items():
        if var not in values:
            raise InvalidParameter(f"rateRule for undeclared {var}")
        m.odes[_safe(var)] = e
    for p, v in m.params.items():
        if not math.isfinite(v):
            raise InvalidParameter(f"{source or 'SBML'}: {p} has no value (missing initial value)")
    for s, v in m.states.items():
        if not math.isfinite(v):
            raise InvalidParameter(f"{source or 'SBML'}: state {s} has no initial value")
    return m.validate()


def _safe(name: str) -> str:
    return name if name not in ("nb", "where", "piecewise", "e", "pi") else name + "_"


def write_sbml(model: Model) -> str:
    """Export as SBML L3V2: parameters, rate rules (states), assignment rules, and the time unit
    (``timeUnits``, when it is one :func:`time_unit_label` reads back)."""
    from .system import TIME_UNITS_IN_SECONDS
    lib = _lib()
    doc = lib.SBMLDocument(3, 2)
    sm = doc.createModel()
    sm.setId(model.name)
    factor = dict(TIME_UNITS_IN_SECONDS).get(model.time_units)
    if factor == 1.0:
        sm.setTimeUnits("second")
    elif factor is not None:
        ud = sm.createUnitDefinition()
        ud.setId(f"time_{model.time_units}")
        u = ud.createUnit()
        u.setKind(lib.UNIT_KIND_SECOND)
        u.setExponent(1.0)
        u.setScale(0)
        u.setMultiplier(factor)
        sm.setTimeUnits(ud.getId())
    if model.source:
        sm.setNotes(f'<body xmlns="http://www.w3.org/1999/xhtml"><p>{_xml(model.source)}</p></body>')
    for name, v in model.params.items():
        p = sm.createParameter()
        p.setId(name)
        p.setValue(v)
        p.setConstant(True)
    for name, v in model.states.items():
        p = sm.createParameter()
        p.setId(name)
        p.setValue(v)
        p.setConstant(False)
    for name in model.assigns:
        p = sm.createParameter()
        p.setId(name)
        p.setConstant(False)
    for name, e in model.assigns.items():
        r = sm.createAssignmentRule()
        r.setVariable(name)
        r.setMath(_ast(e, model, lib))
    for name, e in model.odes.items():
        r = sm.createRateRule()
        r.setVariable(name)
        r.setMath(_ast(e, model, lib))
    return _full_precision(lib.writeSBMLToString(doc), model)


_CN = re.compile(r'<cn(?: type="(e-notation|real|integer)")?>\s*([^<\s]+)\s*(?:<sep/>\s*([^<\s]+)\s*)?</cn>')
_VALUE = re.compile(r'(<parameter\b[^>]*?\bvalue=")([^"]+)(")')


def _full_precision(xml: str, model: Model) -> str:
    """libsbml prints doubles with 15 significant digits; put back the shortest repr that round-trips
    (17 digits at most) for every value of the model, so import → export → import is exact."""
    vals = list(model.params.values()) + list(model.states.values())
    stack = list(model.assigns.values()) + list(model.odes.values())
    while stack:
        e = stack.pop()
        if e.op == "const":
            vals.append(e.value)
        stack.extend(e.args)
    exact: dict[float, str] = {}
    clash = set()
    for v in vals + [-float(x) for x in vals]:          # a negative constant prints as <minus/> x
        v = float(v)
        if not math.isfinite(v):
            continue
        k = float(f"{v:.15g}")
        if k in exact and float(exact[k]) != v:
            clash.add(k)
        exact[k] = repr(v)
    for k in clash:
        exact.pop(k, None)

    def cn(m):
        kind, a, b = m.group(1), m.group(2), m.group(3)
        try:
            k = float(f"{a}e{b}") if kind == "e-notation" and b is not None else float(a)
        except ValueError:
            return m.group(0)
        r = exact.get(k)
        return f"<cn> {r} </cn>" if r is not None and kind != "integer" else m.group(0)

    def value(m):
        try:
            r = exact.get(float(m.group(2)))
        except ValueError:
            r = None
        return m.group(1) + (r or m.group(2)) + m.group(3)
    return _VALUE.sub(value, _CN.sub(cn, xml))


def _ast(e: Expr, model: Model, lib):
    txt = to_text(e, style="sbml")
    ps = lib.L3ParserSettings()
    ps.setParseLog(lib.L3P_PARSE_LOG_AS_LN)
    ast = lib.parseL3FormulaWithSettings(txt, ps)
    if ast is None:
        raise InvalidParameter(f"cannot export {txt!r}: {lib.getLastParseL3Error()}")
    if model.time in e.symbols():          # else no name of the formula is the time (a walk saved)
        _fix_time(ast, model.time, lib)
    return ast


def _fix_time(ast, time_name, lib):
    if ast.getType() == lib.AST_NAME and ast.getName() == time_name:
        ast.setType(lib.AST_NAME_TIME)
    for i in range(ast.getNumChildren()):
        _fix_time(ast.getChild(i), time_name, lib)


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
