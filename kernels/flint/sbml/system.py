"""Full SBML semantics description (L1–L3 core, comp flattened) for the CPU reference simulator.

:func:`read_sbml_system` reads a document with python-libsbml and returns an :class:`SbmlSystem`: the
compartments, species, parameters, species references, reactions, initial assignments, rules and
events, all math as :class:`~kernels.flint.expr.Expr` trees (function definitions inlined, local
parameters substituted).  It describes, it does not simulate (see :mod:`kernels.flint.sbml.solver`).

Semantics follow the SBML L3V2 core specification (Hucka et al. 2019, J. Integr. Bioinform. 16:
20190021), sections 3.4 (math, csymbols), 4.6–4.11 (species, rules, events).  Beyond the subset of
:func:`kernels.flint.sbml._math`, the MathML converter here knows the whole of SBML's MathML: all
trigonometric/hyperbolic functions and their inverses, ``factorial ceiling root log(base) xor implies
min max quotient rem``, n-ary relations, the constants, csymbols ``time avogadro rateOf delay``.
Hierarchical models (``comp``) are flattened with libsbml's CompFlatteningConverter.

Algebraic rules, fast reactions and the delay csymbol are described here and handled (or refused) by
the runtime.  Refused with :class:`~kernels.errors.Unsupported` (message names the element): fbc
objectives, the packages qual, distrib, multi, spatial, arrays and any other required package.
Malformed input raises :class:`~kernels.errors.InvalidParameter` naming the element (libsbml's first
error, an unknown id, a missing external model file of a comp model).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from ...errors import InvalidParameter, Unsupported
from ..expr import Expr, const, inline, substitute, sym
from ... import filegate, limits
from ..inputs import read_model_text
from .refs import check_external_files
# Imports inside functions: libsbml loads only when an SBML file is read.

AVOGADRO = 6.02214179e23          # the value SBML L3V1/V2 fix for the avogadro csymbol

TIME = Expr("time")


def rate_of(name: str) -> Expr:
    return Expr("rateOf", (), name)


@dataclass
class Compartment:
    id: str
    size: float
    constant: bool
    dims: float


@dataclass
class Species:
    id: str
    compartment: str
    hosu: bool                     # hasOnlySubstanceUnits: symbol value is the amount
    boundary: bool
    constant: bool
    initial_amount: float | None
    initial_concentration: float | None
    conversion_factor: str | None  # parameter id (species attribute, else the model's)


@dataclass
class Parameter:
    id: str
    value: float
    constant: bool


@dataclass
class SpeciesRef:                   # a speciesReference with an id (its value is the stoichiometry)
    id: str
    value: float
    constant: bool


@dataclass
class Reaction:
    id: str
    rate: Expr                     # kinetic law (extent per time)
    terms: list                    # [(species id, stoichiometry Expr, sign ±1)]
    fast: bool = False             # fast="true": in instantaneous equilibrium (kinetic law = 0)


@dataclass
class Event:
    id: str
    trigger: Expr
    initial_value: bool
    persistent: bool
    delay: Expr | None
    priority: Expr | None
    use_trigger_time_values: bool
    assignments: list              # [(variable id, Expr)]


@dataclass
class SbmlSystem:
    source: str
    level: int
    compartments: dict = field(default_factory=dict)
    species: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    species_refs: dict = field(default_factory=dict)
    reactions: list = field(default_factory=list)
    initial_assignments: dict = field(default_factory=dict)
    assignment_rules: dict = field(default_factory=dict)
    rate_rules: dict = field(default_factory=dict)
    algebraic_rules: list = field(default_factory=list)   # expressions constrained to 0
    events: list = field(default_factory=list)
    files_read: list = field(default_factory=list)        # the files read: the document, then comp externals
    time_units: str = ""                                  # :func:`time_unit_label` ("" when undeclared)

    def kind(self, name: str) -> str:
        for k, d in (("compartment", self.compartments), ("species", self.species),
                     ("parameter", self.parameters), ("speciesReference", self.species_refs)):
            if name in d:
                return k
        if any(r.id == name for r in self.reactions):
            return "reaction"
        return ""


#: time unit labels and their length in seconds
TIME_UNITS_IN_SECONDS = (("ms", 1e-3), ("s", 1.0), ("min", 60.0), ("h", 3600.0), ("d", 86400.0))


def time_unit_label(doc, lib) -> str:
    """The model's time unit as a label: "ms", "s", "min", "h" or "d" when it is a multiple of the
    second, a unit definition's id otherwise, and "" when the model declares none (SBML Level 3
    without ``timeUnits``: time is in the model's own, unnamed units).  Levels 1–2: "time", second
    unless the model redefines it."""
    sm = doc.getModel()
    tu = sm.getTimeUnits() if doc.getLevel() >= 3 and sm.isSetTimeUnits() else ("time" if doc.getLevel() < 3 else "")
    if not tu:
        return ""
    ud = sm.getUnitDefinition(tu)
    if ud is None:
        return "s" if tu in ("second", "time") else tu
    if ud.getNumUnits() == 1:
        u = ud.getUnit(0)
        if u.getKind() == lib.UNIT_KIND_SECOND and u.getExponentAsDouble() == 1.0:
            factor = u.getMultiplier() * 10.0 ** u.getScale()
            for label, f in TIME_UNITS_IN_SECONDS:
                if math.isclose(factor, f, rel_tol=1e-9):
                    return label
    return tu


def _lib():
    try:
        import libsbml
    except ImportError as exc:               # pragma: no cover
        raise InvalidParameter("SBML needs python-libsbml (pip install python-libsbml)") from exc
    return libsbml


# --- MathML → Expr ---------------------------------------------------------------------------------
def _unary_table(lib) -> dict:
    names = {"EXP": "exp", "LN": "log", "ABS": "abs", "FLOOR": "floor", "CEILING": "ceil",
             "SIN": "sin", "COS": "cos", "TAN": "tan", "SEC": "sec", "CSC": "csc", "COT": "cot",
             "SINH": "sinh", "COSH": "cosh", "TANH": "tanh", "SECH": "sech", "CSCH": "csch", "COTH": "coth",
             "ARCSIN": "asin", "ARCCOS": "acos", "ARCTAN": "atan", "ARCSEC": "asec", "ARCCSC": "acsc",
             "ARCCOT": "acot", "ARCSINH": "asinh", "ARCCOSH": "acosh", "ARCTANH": "atanh",
             "ARCSECH": "asech", "ARCCSCH": "acsch", "ARCCOTH": "acoth", "FACTORIAL": "factorial"}
    return {getattr(lib, "AST_FUNCTION_" + k): v for k, v in names.items() if hasattr(lib, "AST_FUNCTION_" + k)}


class MathCtx:
    def __init__(self, lib, fdefs: dict):
        self.lib = lib
        self.fdefs = fdefs
        self.unary = _unary_table(lib)
        self.rel = {lib.AST_RELATIONAL_LT: "lt", lib.AST_RELATIONAL_LEQ: "le", lib.AST_RELATIONAL_GT: "gt",
                    lib.AST_RELATIONAL_GEQ: "ge", lib.AST_RELATIONAL_EQ: "eq", lib.AST_RELATIONAL_NEQ: "ne"}
        self.nary = {lib.AST_LOGICAL_AND: "and", lib.AST_LOGICAL_OR: "or", lib.AST_LOGICAL_XOR: "xor"}
        for nm, op in (("AST_FUNCTION_MAX", "max"), ("AST_FUNCTION_MIN", "min")):
            if hasattr(lib, nm):
                self.nary[getattr(lib, nm)] = op
        self.binary = {}
        for nm, op in (("AST_LOGICAL_IMPLIES", "implies"), ("AST_FUNCTION_QUOTIENT", "quotient"),
                       ("AST_FUNCTION_REM", "rem")):
            if hasattr(lib, nm):
                self.binary[getattr(lib, nm)] = op


def convert_math(ast, where: str, ctx: MathCtx) -> Expr:
    """libsbml ASTNode → Expr (function definitions inlined by substitution of their arguments).
    The MathML's depth is checked first and every inlined call's size (kernels.limits: an
    ExpansionLimit naming the element, never RecursionError or an exponential blow-up)."""
    check_ast_depth(ast, where)
    return _convert_math(ast, where, ctx)


def check_ast_depth(ast, where: str) -> None:
    """ExpansionLimit when the libsbml AST below ``ast`` is deeper than the expression-depth limit
    (walked iteratively, so the check itself cannot hit the recursion limit)."""
    top = limits.current().expression_depth
    stack = [(ast, 1)] if ast is not None else []
    while stack:
        node, d = stack.pop()
        if d > top:
            raise limits.too_deep(where)
        stack.extend((node.getChild(i), d + 1) for i in range(node.getNumChildren()))


def _convert_math(ast, where: str, ctx: MathCtx) -> Expr:
    lib = ctx.lib
    if ast is None:
        raise InvalidParameter(f"{where}: missing math")
    T = ast.getType()
    n = ast.getNumChildren()

    def kids():
        return [_convert_math(ast.getChild(i), where, ctx) for i in range(n)]
    if T == lib.AST_INTEGER:
        return const(ast.getInteger())
    if T in (lib.AST_REAL, lib.AST_REAL_E, lib.AST_RATIONAL):
        return const(ast.getReal())
    if T == lib.AST_NAME_TIME:
        return TIME
    if T == lib.AST_NAME_AVOGADRO:
        return const(AVOGADRO)
    if T == lib.AST_NAME:
        return sym(ast.getName())
    if T == lib.AST_CONSTANT_PI:
        return const(math.pi)
    if T == lib.AST_CONSTANT_E:
        return const(math.e)
    if T == lib.AST_CONSTANT_TRUE:
        return Expr("true")
    if T == lib.AST_CONSTANT_FALSE:
        return Expr("false")
    if T == lib.AST_PLUS:
        a = kids()
        return Expr("add", tuple(a)) if len(a) > 1 else (a[0] if a else const(0))
    if T == lib.AST_TIMES:
        a = kids()
        return Expr("mul", tuple(a)) if len(a) > 1 else (a[0] if a else const(1))
    if T == lib.AST_MINUS:
        a = kids()
        if len(a) == 1:
            return Expr("neg", (a[0],))
        if len(a) != 2:
            raise InvalidParameter(f"{where}: <minus> with {len(a)} arguments")
        return Expr("sub", tuple(a))
    if T == lib.AST_DIVIDE:
        a = kids()
        if len(a) != 2:
            raise InvalidParameter(f"{where}: <divide> with {len(a)} arguments")
        return Expr("div", tuple(a))
    if T in (lib.AST_POWER, lib.AST_FUNCTION_POWER):
        a = kids()
        if len(a) != 2:
            raise InvalidParameter(f"{where}: <power> with {len(a)} arguments")
        return Expr("pow", tuple(a))
    if T in ctx.unary:
        a = kids()
        if len(a) != 1:
            raise InvalidParameter(f"{where}: <{ast.getName()}> takes one argument, got {len(a)}")
        return Expr(ctx.unary[T], tuple(a))
    if T == lib.AST_LOGICAL_NOT:
        a = kids()
        if len(a) != 1:
            raise InvalidParameter(f"{where}: <not> takes one argument, got {len(a)}")
        return Expr("not", tuple(a))
    if T == lib.AST_FUNCTION_LOG:
        a = kids()
        if len(a) == 1:
            return Expr("log10", (a[0],))
        return Expr("div", (Expr("log", (a[1],)), Expr("log", (a[0],))))
    if T == lib.AST_FUNCTION_ROOT:
        a = kids()
        if len(a) == 1:
            return Expr("sqrt", (a[0],))
        return Expr("root", (a[0], a[1]))
    if T in ctx.rel:
        a = kids()
        op = ctx.rel[T]
        if op == "ne" and len(a) != 2:
            raise InvalidParameter(f"{where}: <neq> needs two arguments, got {len(a)}")
        if len(a) < 2:
            return Expr("true")              # a relation of fewer than two arguments is vacuously true
        if len(a) == 2:
            return Expr(op, tuple(a))
        out = Expr(op, (a[0], a[1]))
        for i in range(1, len(a) - 1):
            out = Expr("and", (out, Expr(op, (a[i], a[i + 1]))))
        return out
    if T in ctx.nary:
        a = kids()
        op = ctx.nary[T]
        if not a:
            if op in ("min", "max"):
                raise InvalidParameter(f"{where}: <{op}> without arguments")
            return Expr("true" if op == "and" else "false")
        return Expr(op, tuple(a)) if len(a) > 1 or op == "xor" else a[0]
    if T in ctx.binary:
        a = kids()
        if len(a) != 2:
            raise InvalidParameter(f"{where}: <{ctx.binary[T]}> needs two arguments, got {len(a)}")
        return Expr(ctx.binary[T], tuple(a))
    if T == lib.AST_FUNCTION_PIECEWISE:
        a = kids()
        out = a[-1] if len(a) % 2 == 1 else Expr("undefined")
        for i in range(len(a) // 2 - 1, -1, -1):
            out = Expr("select", (a[2 * i + 1], a[2 * i], out))
        return out
    if T == lib.AST_FUNCTION:
        name = ast.getName()
        if name not in ctx.fdefs:
            raise InvalidParameter(f"{where}: call of undefined function {name}()")
        params, body = ctx.fdefs[name]
        a = kids()
        if len(a) != len(params):
            raise InvalidParameter(f"{where}: {name}() takes {len(params)} arguments, got {len(a)}")
        return inline(body, dict(zip(params, a)), f"{where}: the call of function definition {name}()")
    if T == lib.AST_FUNCTION_DELAY:
        a = kids()
        if len(a) != 2:
            raise InvalidParameter(f"{where}: <delay> csymbol needs two arguments, got {len(a)}")
        return Expr("delay", tuple(a))
    if hasattr(lib, "AST_FUNCTION_RATE_OF") and T == lib.AST_FUNCTION_RATE_OF:
        if n != 1 or ast.getChild(0).getType() != lib.AST_NAME:
            raise Unsupported(f"{where}: rateOf() of an expression (not a variable) is not supported")
        return rate_of(ast.getChild(0).getName())
    raise Unsupported(f"{where}: MathML element {ast.getName() or T} (AST type {T}) is not supported")


# --- reading ---------------------------------------------------------------------------------------
def _read_document(path_or_text: str, source: str, allow_outside: bool | None = None):
    """(libsbml, document, label, files read) of an SBML file (path) or document (XML text).  A file
    passes the file gate first (:func:`kernels.flint.inputs.read_model_text`: regular file, size,
    XML depth and entities whatever its suffix); text is XML-checked too."""
    lib = _lib()
    text = str(path_or_text)
    is_path = not text.lstrip().lstrip("\ufeff").startswith("<") and len(text) < 4096
    files: list[str] = []
    if is_path:
        if not os.path.exists(text):
            raise InvalidParameter(f"SBML file {text} not found")
        source = source or os.path.basename(text)
        files.append(os.path.abspath(text))
        doc = lib.readSBMLFromString(read_model_text(text, source))
    else:
        doc = lib.readSBMLFromString(filegate.check_xml(text.lstrip("\ufeff"), source or "SBML"))
    src = source or "SBML"
    errs = [doc.getError(i) for i in range(doc.getNumErrors())
            if doc.getError(i).getSeverity() >= lib.LIBSBML_SEV_ERROR]
    if errs:
        e = errs[0]
        raise InvalidParameter(f"{src}: malformed SBML, line {e.getLine()}: {' '.join(e.getMessage().split())}")
    if doc.getModel() is None:
        raise InvalidParameter(f"{src}: no <model> element")
    # packages
    for i in range(doc.getNumPlugins()):
        pkg = doc.getPlugin(i).getPackageName()
        if pkg == "comp":
            continue
        if pkg == "fbc":
            fbc = doc.getModel().getPlugin("fbc")
            if fbc is not None and fbc.getNumObjectives():
                raise Unsupported(f"{src}: fbc objectives (flux balance analysis) are not simulated")
            continue
        if pkg in ("layout", "render", "l3v2extendedmath"):
            continue
        if doc.getPkgRequired(pkg) or pkg in ("qual", "distrib", "multi", "spatial", "arrays"):
            raise Unsupported(f"{src}: SBML package '{pkg}' is not supported")
    files += flatten_comp(doc, lib, src, os.path.abspath(text) if is_path else None, allow_outside)
    return lib, doc, src, files


def flatten_comp(doc, lib, src: str, location: str | None = None, allow_outside: bool | None = None) -> list[str]:
    """Flatten a hierarchical (comp) document in place with libsbml's CompFlatteningConverter;
    ``location`` (the file's path) is where relative external model files are looked up.  A missing
    external file or any other failure is an InvalidParameter naming it.  External model files are
    checked first (:func:`.refs.check_external_files`: inside the model's folder unless
    ``allow_outside``, through the file gate); returns their resolved paths."""
    if doc.getModel().getPlugin("comp") is None and doc.getPlugin("comp") is None:
        return []
    cplug = doc.getPlugin("comp")
    mplug = doc.getModel().getPlugin("comp")
    hier = (cplug is not None and (cplug.getNumModelDefinitions() or cplug.getNumExternalModelDefinitions())) \
        or (mplug is not None and mplug.getNumSubmodels())
    if not hier:
        return []
    files = check_external_files(doc, lib, src, location, allow_outside)
    if location:
        doc.setLocationURI("file:" + location)
    props = lib.ConversionProperties()
    props.addOption("flatten comp", True)
    props.addOption("leavePorts", False)
    rc = doc.convert(props)
    if rc != lib.LIBSBML_OPERATION_SUCCESS:
        msgs = [" ".join(doc.getError(i).getMessage().split()) for i in range(doc.getNumErrors())
                if doc.getError(i).getSeverity() >= lib.LIBSBML_SEV_ERROR]
        raise InvalidParameter(f"{src}: cannot flatten hierarchical model (comp): "
                               f"{msgs[0] if msgs else 'libsbml error ' + str(rc)}")
    return files


def read_sbml_system(path_or_text, source: str = "", allow_outside: bool | None = None) -> SbmlSystem:
    """Read an SBML file (path) or document (XML text) into an :class:`SbmlSystem`; files named in
    it must lie in its folder unless ``allow_outside`` (see :func:`flatten_comp`)."""
    lib, doc, src, files = _read_document(path_or_text, source, allow_outside)
    sm = doc.getModel()
    level = doc.getLevel()
    sysm = SbmlSystem(source=src, level=level, files_read=files, time_units=time_unit_label(doc, lib))
    fdefs: dict = {}
    ctx = MathCtx(lib, fdefs)
    for i in range(sm.getNumFunctionDefinitions()):
        fd = sm.getFunctionDefinition(i)
        lam = fd.getMath()
        if lam is None or not lam.isLambda():
            if lam is None:
                continue
            raise InvalidParameter(f"functionDefinition {fd.getId()}: math is not a <lambda>")
        nargs = lam.getNumBvars()
        params = [lam.getChild(k).getName() for k in range(nargs)]
        body = lam.getChild(lam.getNumChildren() - 1) if lam.getNumChildren() > nargs else None
        if body is None:
            raise InvalidParameter(f"functionDefinition {fd.getId()}: <lambda> without a body")
        fdefs[fd.getId()] = (params, convert_math(body, f"functionDefinition {fd.getId()}", ctx))

    def m(ast, where):
        return convert_math(ast, where, ctx)

    if sm.getNumConstraints():
        pass                           # constraints only report violations; they do not change the dynamics
    l3 = level >= 3
    for i in range(sm.getNumCompartments()):
        c = sm.getCompartment(i)
        size = c.getSize() if c.isSetSize() else (math.nan if l3 else 1.0)
        dims = c.getSpatialDimensionsAsDouble() if c.isSetSpatialDimensions() else (math.nan if l3 else 3.0)
        sysm.compartments[c.getId()] = Compartment(c.getId(), size, c.getConstant(), dims)
    model_cf = sm.getConversionFactor() if l3 and sm.isSetConversionFactor() else None
    for i in range(sm.getNumSpecies()):
        s = sm.getSpecies(i)
        cf = s.getConversionFactor() if l3 and s.isSetConversionFactor() else model_cf
        comp = sysm.compartments.get(s.getCompartment())
        zero_d = comp is not None and comp.dims == 0      # in a 0-D compartment the value is the amount
        sysm.species[s.getId()] = Species(
            s.getId(), s.getCompartment(), bool(s.getHasOnlySubstanceUnits()) or zero_d, bool(s.getBoundaryCondition()),
            bool(s.getConstant()),
            s.getInitialAmount() if s.isSetInitialAmount() else None,
            s.getInitialConcentration() if s.isSetInitialConcentration() else None, cf)
        if s.getCompartment() not in sysm.compartments:
            raise InvalidParameter(f"species {s.getId()}: unknown compartment {s.getCompartment()!r}")
    for i in range(sm.getNumParameters()):
        p = sm.getParameter(i)
        sysm.parameters[p.getId()] = Parameter(p.getId(), p.getValue() if p.isSetValue() else math.nan,
                                               bool(p.getConstant()))
    for i in range(sm.getNumInitialAssignments()):
        ia = sm.getInitialAssignment(i)
        if ia.getMath() is None:
            continue                   # no math: the element has no effect (L3V2 3.4.1)
        sysm.initial_assignments[ia.getSymbol()] = m(ia.getMath(), f"initialAssignment {ia.getSymbol()}")
    for i in range(sm.getNumRules()):
        r = sm.getRule(i)
        if r.isAlgebraic():
            if r.getMath() is not None:
                sysm.algebraic_rules.append(m(r.getMath(), f"algebraicRule #{len(sysm.algebraic_rules) + 1}"))
            continue
        var = r.getVariable()
        if r.getMath() is None:
            continue
        kind = "rateRule" if r.isRate() else "assignmentRule"
        e = m(r.getMath(), f"{kind} for {var}")
        (sysm.rate_rules if r.isRate() else sysm.assignment_rules)[var] = e
    for i in range(sm.getNumReactions()):
        r = sm.getReaction(i)
        rid = r.getId()
        kl = r.getKineticLaw()
        if kl is None or kl.getMath() is None:
            rate = None
        else:
            local = {}
            for k in range(kl.getNumParameters()):
                lp = kl.getParameter(k)
                local[lp.getId()] = const(lp.getValue() if lp.isSetValue() else math.nan)
            for k in range(getattr(kl, "getNumLocalParameters", lambda: 0)()):
                lp = kl.getLocalParameter(k)
                local[lp.getId()] = const(lp.getValue() if lp.isSetValue() else math.nan)
            rate = _subst_local(m(kl.getMath(), f"kineticLaw of reaction {rid}"), local)
        terms = []
        for lst, sign in ((r.getListOfReactants(), -1.0), (r.getListOfProducts(), 1.0)):
            for k in range(lst.size()):
                sr = lst.get(k)
                if sr.getSpecies() not in sysm.species:
                    raise InvalidParameter(f"reaction {rid}: unknown species {sr.getSpecies()!r}")
                if hasattr(sr, "isSetStoichiometryMath") and sr.isSetStoichiometryMath():
                    sm_ = sr.getStoichiometryMath()
                    if sm_.getMath() is None:
                        raise InvalidParameter(f"reaction {rid}: <stoichiometryMath> without math")
                    st = m(sm_.getMath(), f"stoichiometryMath of {sr.getSpecies()} in reaction {rid}")
                elif l3 and sr.isSetId():
                    val = sr.getStoichiometry() if sr.isSetStoichiometry() else math.nan
                    sysm.species_refs[sr.getId()] = SpeciesRef(sr.getId(), val, bool(sr.getConstant()))
                    st = sym(sr.getId())
                else:
                    if sr.isSetStoichiometry() and not math.isfinite(sr.getStoichiometry()):
                        raise InvalidParameter(f"reaction {rid}: the stoichiometry of {sr.getSpecies()} is not a "
                                               f"finite number ({sr.getStoichiometry()})")
                    if sr.isSetStoichiometry():
                        st = const(sr.getStoichiometry())
                    elif l3:
                        st = const(math.nan)
                    else:
                        st = const(1.0)
                    if not l3 and sr.isSetId() and sr.getId():
                        sysm.species_refs[sr.getId()] = SpeciesRef(sr.getId(), st.value, True)
                        st = sym(sr.getId())
                terms.append((sr.getSpecies(), st, sign))
        if rate is None:
            if terms:
                raise InvalidParameter(f"reaction {rid}: no kinetic law math")
            rate = const(0.0)
        sysm.reactions.append(Reaction(rid, rate, terms, bool(r.isSetFast() and r.getFast())))
    for i in range(sm.getNumEvents()):
        ev = sm.getEvent(i)
        eid = ev.getId() or f"event#{i}"
        tr = ev.getTrigger()
        if tr is None or tr.getMath() is None:
            continue                    # an event without trigger math never fires
        trig = m(tr.getMath(), f"trigger of event {eid}")
        init_val = bool(tr.getInitialValue()) if (l3 and tr.isSetInitialValue()) else True
        persistent = bool(tr.getPersistent()) if (l3 and tr.isSetPersistent()) else True
        delay = None
        if ev.isSetDelay() and ev.getDelay().getMath() is not None:
            delay = m(ev.getDelay().getMath(), f"delay of event {eid}")
        prio = None
        if l3 and ev.isSetPriority() and ev.getPriority().getMath() is not None:
            prio = m(ev.getPriority().getMath(), f"priority of event {eid}")
        uvftt = bool(ev.getUseValuesFromTriggerTime()) if ev.isSetUseValuesFromTriggerTime() else True
        assigns = []
        for k in range(ev.getNumEventAssignments()):
            ea = ev.getEventAssignment(k)
            if ea.getMath() is None:
                continue
            assigns.append((ea.getVariable(), m(ea.getMath(), f"eventAssignment {ea.getVariable()} of {eid}")))
        sysm.events.append(Event(eid, trig, init_val, persistent, delay, prio, uvftt, assigns))
    _check_targets(sysm)
    return sysm


def _subst_local(e: Expr, local: dict) -> Expr:
    """Replace local (kinetic-law) parameters, which shadow global ids, by their values."""
    if not local:
        return e
    if e.op == "rateOf" and e.value in local:
        return const(0.0)
    return substitute(e, local)


def _check_targets(s: SbmlSystem) -> None:
    known = set(s.compartments) | set(s.species) | set(s.parameters) | set(s.species_refs)
    for what, d in (("initialAssignment", s.initial_assignments), ("assignmentRule", s.assignment_rules),
                    ("rateRule", s.rate_rules)):
        for v in d:
            if v not in known:
                raise InvalidParameter(f"{what} for unknown variable {v!r}")
    for ev in s.events:
        for v, _ in ev.assignments:
            if v not in known:
                raise InvalidParameter(f"eventAssignment of event {ev.id}: unknown variable {v!r}")
            if v in s.assignment_rules:
                raise InvalidParameter(f"eventAssignment of event {ev.id}: {v} has an assignmentRule")
