"""CellML import (1.x / 2.0) and export (2.0) through libcellml.

Import: parse, flatten imports, validate, analyse, then read the equations from libcellml's own Python
code generator (which applies unit scaling and orders the equations).  Refused with the cause named:
parser/validator/analyser errors (malformed XML, algebraic loops, unsupported constructs such as
non-linear algebraic systems) and units mismatches between variables (a mismatch that involves a
number literal is accepted, see :func:`_refuse_units_mismatch`).  Imports are resolved against
``base_dir`` (:func:`kernels.flint.loaders.load_model` passes the model file's folder).

Export (:func:`write_cellml`): one component holding every variable; parameters and states carry
``initial_value``; each assignment x = f is ``<eq/> x f`` and each ODE ``<eq/> d x/d t f`` in content
MathML (CellML 2.0 specification, §2.12 and the permitted MathML subset).  Units strings such as
``mS/cm^2`` or ``mJ/(K*mol)`` become CellML units built from the SI base/derived units with prefixes;
a string that cannot be read becomes a new base unit of that (sanitised) name.  Comparisons used as
numbers are written as piecewise(1, c; 0) and a numeric condition c as c ≠ 0."""
from __future__ import annotations

# Imports inside functions: libcellml stays optional (needed only to read or write CellML), and the CellML
# checker (xml.etree) loads only when CellML is read, to keep `--help` fast.
import ast as pyast
import math
import re

from .. import filegate
from ..errors import InvalidParameter
from .expr import from_ast, evaluate
from .model import Model


def _raise_first_error(logger, prefix: str, lc) -> None:
    """The first ERROR-level issue of a libcellml Validator/Analyser, as InvalidParameter(prefix + text)."""
    for i in range(logger.issueCount()):
        it = logger.issue(i)
        if it.level() == lc.Issue.Level.ERROR:
            raise InvalidParameter(prefix + it.description())


_QUOTED = re.compile(r"'([^']*)'")
_LITERAL = re.compile(r"(?<![A-Za-z_0-9.])\d")


def _refuse_units_mismatch(an, label: str, lc) -> None:
    """Refuse the first units mismatch between the two sides of an equation or of a sum that
    involves no number literal (libcellml reports units issues as warnings).  Accepted: a mismatch
    that a literal could cause (a dimensionless constant added to a voltage, common in published
    models and in :func:`write_cellml`'s export: the literal is read as carrying the units its
    place needs) and a non-dimensionless argument of exp/ln (log of a concentration)."""
    for i in range(an.issueCount()):
        it = an.issue(i)
        d = it.description()
        if it.level() != lc.Issue.Level.WARNING or "not equivalent" not in d:
            continue
        q = _QUOTED.search(d)
        if q is not None and not _LITERAL.search(q.group(1)):
            raise InvalidParameter(f"{label}: units mismatch: {' '.join(d.split())}")


def read_cellml(text: str, source: str = "", base_dir: str | None = None, allow_outside: bool | None = None,
                files_read: list | None = None) -> Model:
    """CellML text → Flint Model (see the module doc).  Before libcellml sees anything the text
    passes the file gate's XML check and :mod:`.cellml_check` (comments and processing instructions
    dropped; cyclic or undefined units; ``<apply>`` without an operator; imports inside
    ``base_dir`` unless ``allow_outside``, each imported file through the gate); the imported
    files are appended to ``files_read`` when given."""
    from .cellml_check import check_all, check_imports, parse, strip_markup
    try:
        import libcellml as lc
    except ImportError as exc:               # pragma: no cover
        raise InvalidParameter("CellML needs libcellml (pip install libcellml)") from exc
    label = source or "CellML"
    text = strip_markup(filegate.check_xml(text.lstrip("\ufeff"), label))
    root = parse(text, label)
    check_all(root, label)
    imported = check_imports(root, base_dir or ".", label, allow_outside)
    if files_read is not None:
        files_read.extend(imported)
    strict = "cellml/2.0" in text[:2000]
    parser = lc.Parser(strict)
    model = parser.parseModel(text)
    errs = [parser.issue(i) for i in range(parser.issueCount())
            if parser.issue(i).level() == lc.Issue.Level.ERROR]
    if errs or model is None:
        msg = errs[0].description() if errs else "no model"
        raise InvalidParameter(f"{label}: malformed CellML: {msg}")
    if model.hasUnresolvedImports():
        imp = lc.Importer(strict)
        imp.resolveImports(model, base_dir or ".")
        if model.hasUnresolvedImports():
            raise InvalidParameter(f"{label}: imports cannot be resolved from {base_dir or '.'}")
        model = imp.flattenModel(model)
    v = lc.Validator()
    v.validateModel(model)
    _raise_first_error(v, f"{label}: invalid CellML: ", lc)
    an = lc.Analyser()
    an.analyseModel(model)
    _raise_first_error(an, f"{label}: ", lc)
    _refuse_units_mismatch(an, label, lc)
    am = an.analyserModel()
    if am.type() not in (lc.AnalyserModel.Type.ODE,):
        raise InvalidParameter(f"{label}: model type {am.typeAsString(am.type()) if hasattr(am, 'typeAsString') else am.type()} "
                               "is not supported (only ODE models)")
    gen = lc.Generator()
    prof = lc.GeneratorProfile(lc.GeneratorProfile.Profile.PYTHON)
    code = gen.implementationCode(am, prof)
    try:
        return _from_generated(code, model.name() or "cellml_model", label)
    except (SyntaxError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError) as exc:
        if isinstance(exc, InvalidParameter):
            raise
        raise InvalidParameter(f"{label}: libcellml's generated code for this model cannot be read "
                               f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})") from None


def _info(code: str, name: str) -> list[dict]:
    m = re.search(rf"^{name} = (\[.*?^\]|\{{.*?\}})", code, re.S | re.M)
    if not m:
        return []
    v = pyast.literal_eval(m.group(1))
    return v if isinstance(v, list) else [v]


def _from_generated(code: str, name: str, label: str) -> Model:
    voi = _info(code, "VOI_INFO")
    tname = voi[0]["name"] if voi else "t"
    groups = {"states": _info(code, "STATE_INFO"), "constants": _info(code, "CONSTANT_INFO"),
              "computed_constants": _info(code, "COMPUTED_CONSTANT_INFO"),
              "algebraic_variables": _info(code, "ALGEBRAIC_INFO") or _info(code, "ALGEBRAIC_VARIABLE_INFO")}
    used: dict[str, int] = {}
    names: dict[tuple[str, int], str] = {}
    for g, infos in groups.items():
        for i, inf in enumerate(infos):
            used[inf["name"]] = used.get(inf["name"], 0) + 1
    for g, infos in groups.items():
        for i, inf in enumerate(infos):
            nm = inf["name"]
            if used[nm] > 1 or nm in ("nb", "where", "e", "pi", tname):
                nm = f"{inf['component']}_{nm}"
            names[(g, i)] = nm
    m = Model(name=re.sub(r"\W", "_", name), time=tname, time_units=voi[0]["units"] if voi else "",
              source=f"CellML import of {label}")
    tree = pyast.parse(code)
    funcs = {f.name: f for f in tree.body if isinstance(f, pyast.FunctionDef)}

    class Rename(pyast.NodeTransformer):
        def visit_Subscript(self, node):
            if isinstance(node.value, pyast.Name) and node.value.id in groups | {"rates": 0}:
                idx = node.slice.value if isinstance(node.slice, pyast.Constant) else None
                if node.value.id == "rates":
                    return pyast.Name(id=f"__rate_{idx}", ctx=pyast.Load())
                return pyast.Name(id=names[(node.value.id, idx)], ctx=pyast.Load())
            return self.generic_visit(node)

        def visit_Name(self, node):
            if node.id == "voi":
                return pyast.Name(id=tname, ctx=node.ctx)
            return node

    def statements(fname):
        out = []
        if fname not in funcs:
            return out
        for st in funcs[fname].body:
            if not isinstance(st, pyast.Assign):
                continue
            tgt = Rename().visit(st.targets[0])
            val = Rename().visit(st.value)
            out.append((tgt.id, val))
        return out
    env: dict[str, float] = {}
    derived = {names[(g, i)] for g in ("computed_constants", "algebraic_variables")
               for i in range(len(groups[g]))}
    for tgt, val in statements("initialise_variables") + statements("initialise_arrays"):
        e = from_ast(val, f"{label}: initial value of {tgt}", "")
        if tgt in derived:                   # x = constant: newer libcellml initialises it here
            m.assigns.setdefault(tgt, e)
        try:
            env[tgt] = float(evaluate(e, env))
        except InvalidParameter:
            raise InvalidParameter(f"{label}: initial value of {tgt} is not computable") from None
    for i, inf in enumerate(groups["states"]):
        nm = names[("states", i)]
        m.states[nm] = env.get(nm, math.nan)
        m.units[nm] = inf["units"]
    for i, inf in enumerate(groups["constants"]):
        nm = names[("constants", i)]
        m.params[nm] = env.get(nm, math.nan)
        m.units[nm] = inf["units"]
    for tgt, val in statements("compute_computed_constants") + statements("compute_rates"):
        e = from_ast(val, f"{label}: equation for {tgt}", "")
        if tgt.startswith("__rate_"):
            m.odes[names[("states", int(tgt[7:]))]] = e
        elif tgt not in m.assigns:
            m.assigns[tgt] = e
    for tgt, val in statements("compute_variables"):
        if tgt not in m.assigns:
            m.assigns[tgt] = from_ast(val, f"{label}: equation for {tgt}", "")
    for g in ("computed_constants", "algebraic_variables"):
        for i, inf in enumerate(groups[g]):
            m.units[names[(g, i)]] = inf["units"]
    for s, v in m.states.items():
        if not math.isfinite(v):
            raise InvalidParameter(f"{label}: state {s} has no initial value")
    return m.validate()


# ==============================================================================================
# export
_SI = {"s": "second", "m": "metre", "g": "gram", "mol": "mole", "K": "kelvin", "A": "ampere", "V": "volt",
       "S": "siemens", "F": "farad", "C": "coulomb", "J": "joule", "L": "litre", "l": "litre", "Hz": "hertz",
       "ohm": "ohm", "N": "newton", "W": "watt", "Pa": "pascal", "second": "second", "metre": "metre",
       "meter": "metre", "gram": "gram", "mole": "mole", "kelvin": "kelvin", "ampere": "ampere",
       "volt": "volt", "siemens": "siemens", "farad": "farad", "coulomb": "coulomb", "joule": "joule",
       "litre": "litre", "liter": "litre", "hertz": "hertz", "dimensionless": "dimensionless"}
_PREFIX = {"m": "milli", "u": "micro", "µ": "micro", "n": "nano", "p": "pico", "k": "kilo", "c": "centi",
           "d": "deci", "f": "femto"}
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?)|([A-Za-zµ]+)|(\*\*|[*/^()·.\-]))")


def _atom(word: str):
    """'mS' → [('siemens', 'milli', 1)];  'M' (molar) → mole/litre."""
    if word in ("M", "molar"):
        return [("mole", None, 1.0), ("litre", None, -1.0)]
    if word in _SI:
        return [(_SI[word], None, 1.0)]
    if len(word) > 1 and word[0] in _PREFIX:
        rest = word[1:]
        if rest == "M":
            return [("mole", _PREFIX[word[0]], 1.0), ("litre", None, -1.0)]
        if rest in _SI:
            return [(_SI[rest], _PREFIX[word[0]], 1.0)]
    return None


def parse_units(text: str):
    """Units text → list of (standard unit, prefix, exponent), or None if it cannot be read."""
    toks = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        mt = _TOKEN.match(text, pos)
        if not mt or mt.end() == pos:
            return None
        pos = mt.end()
        num, word, op = mt.groups()
        toks.append(("n", float(num)) if num else (("w", word) if word else ("o", op)))
    i = [0]

    def peek():
        return toks[i[0]] if i[0] < len(toks) else (None, None)

    def factor():
        k, v = peek()
        if k == "n":
            i[0] += 1
            if v != 1.0:
                raise ValueError
            out = []
        elif k == "w":
            i[0] += 1
            out = _atom(v)
            if out is None:
                raise ValueError
        elif (k, v) == ("o", "("):
            i[0] += 1
            out = product()
            if peek() != ("o", ")"):
                raise ValueError
            i[0] += 1
        else:
            raise ValueError
        if peek() in (("o", "^"), ("o", "**")):
            i[0] += 1
            sign = 1.0
            if peek() == ("o", "-"):
                i[0] += 1
                sign = -1.0
            k2, e = peek()
            if k2 != "n":
                raise ValueError
            i[0] += 1
            out = [(u, p, x * e * sign) for u, p, x in out]
        elif out and len(out) == 1 and peek()[0] == "n":       # cm2 style
            _, e = peek()
            i[0] += 1
            out = [(u, p, x * e) for u, p, x in out]
        return out

    def product():
        out = factor()
        while peek() in (("o", "*"), ("o", "/"), ("o", "·"), ("o", ".")):
            op = peek()[1]
            i[0] += 1
            f = factor()
            out += [(u, p, -x if op == "/" else x) for u, p, x in f]
        return out
    try:
        res = product()
        if i[0] != len(toks):
            return None
        return res
    except (ValueError, IndexError):
        return None


def _units_name(text: str) -> str:
    t = (text or "").strip()
    if t in ("", "1", "dimensionless"):
        return "dimensionless"
    n = t.replace("/", "_per_").replace("^", "").replace("*", "_").replace("(", "").replace(")", "")
    n = re.sub(r"[^A-Za-z0-9_]", "_", n).replace("µ", "u")
    if not n or n[0].isdigit():
        n = "u_" + n
    return n


_MATH_FUNCS = {"exp": "exp", "log": "ln", "abs": "abs", "floor": "floor", "ceil": "ceiling", "sin": "sin",
               "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "asin": "arcsin",
               "acos": "arccos", "atan": "arctan", "min": "min", "max": "max"}
_REL = {"lt": "lt", "le": "leq", "gt": "gt", "ge": "geq", "eq": "eq", "ne": "neq"}


def _cn(v: float) -> str:
    if math.isinf(v):
        return "<infinity/>" if v > 0 else "<apply><minus/><infinity/></apply>"
    if math.isnan(v):
        return "<notanumber/>"
    r = repr(float(v))
    if "e" in r or "E" in r:
        mant, ex = r.lower().split("e")
        return f'<cn cellml:units="dimensionless" type="e-notation">{mant}<sep/>{int(ex)}</cn>'
    return f'<cn cellml:units="dimensionless">{r}</cn>'


def _mathml(e, time: str, boolean: bool = False) -> str:
    """Content MathML of an expression; ``boolean``: the context needs a truth value."""
    op = e.op
    if op in _REL or op in ("and", "or", "not"):
        if op in _REL:
            inner = f"<apply><{_REL[op]}/>{_mathml(e.args[0], time)}{_mathml(e.args[1], time)}</apply>"
        else:
            inner = f"<apply><{op}/>{''.join(_mathml(a, time, True) for a in e.args)}</apply>"
        if boolean:
            return inner
        return (f"<piecewise><piece>{_cn(1.0)}{inner}</piece><otherwise>{_cn(0.0)}</otherwise></piecewise>")
    if boolean:
        return f"<apply><neq/>{_mathml(e, time)}{_cn(0.0)}</apply>"
    if op == "const":
        return _cn(e.value)
    if op == "sym":
        return f"<ci>{e.value}</ci>"
    if op == "nb":
        raise InvalidParameter("CellML export: nb() (a neighbouring cell's state) has no CellML form; "
                               "flatten the network first (kernels.flint.catalog)")
    a = e.args
    if op == "add":
        return f"<apply><plus/>{''.join(_mathml(x, time) for x in a)}</apply>"
    if op == "mul":
        return f"<apply><times/>{''.join(_mathml(x, time) for x in a)}</apply>"
    if op == "sub":
        return f"<apply><minus/>{_mathml(a[0], time)}{_mathml(a[1], time)}</apply>"
    if op == "neg":
        return f"<apply><minus/>{_mathml(a[0], time)}</apply>"
    if op == "div":
        return f"<apply><divide/>{_mathml(a[0], time)}{_mathml(a[1], time)}</apply>"
    if op == "pow":
        return f"<apply><power/>{_mathml(a[0], time)}{_mathml(a[1], time)}</apply>"
    if op == "sqrt":
        return f"<apply><root/>{_mathml(a[0], time)}</apply>"
    if op == "log10":
        return f"<apply><log/>{_mathml(a[0], time)}</apply>"
    if op in _MATH_FUNCS:
        return f"<apply><{_MATH_FUNCS[op]}/>{''.join(_mathml(x, time) for x in a)}</apply>"
    if op == "select":
        return (f"<piecewise><piece>{_mathml(a[1], time)}{_mathml(a[0], time, True)}</piece>"
                f"<otherwise>{_mathml(a[2], time)}</otherwise></piecewise>")
    raise InvalidParameter(f"CellML export: operation {op} has no MathML form")


def write_cellml(model: Model, validate: bool = True) -> str:
    """The model as CellML 2.0 text (libcellml Model/Component/Variable/Units + content MathML),
    checked by libcellml's Validator (an error is raised as InvalidParameter)."""
    try:
        import libcellml as lc
    except ImportError as exc:               # pragma: no cover
        raise InvalidParameter("CellML needs libcellml (pip install libcellml)") from exc
    model = model.copy().validate()
    name = re.sub(r"\W", "_", model.name) or "model"
    cm = lc.Model(name if not name[0].isdigit() else "m_" + name)
    comp = lc.Component("main")
    cm.addComponent(comp)
    units: dict[str, str] = {}            # units text → CellML units name

    def units_of(text: str) -> str:
        t = (text or "").strip()
        if t in units:
            return units[t]
        uname = _units_name(t)
        if uname != "dimensionless" and not cm.hasUnits(uname):
            u = lc.Units(uname)
            parts = parse_units(t)
            if parts:
                for ref, prefix, ex in parts:
                    if prefix:
                        u.addUnit(ref, prefix, ex)
                    else:
                        u.addUnit(ref, ex)
            elif parts is None:
                pass                            # unreadable: a new base unit of that name
            cm.addUnits(u)
        units[t] = uname
        return uname

    def var(n: str, init: float | None = None):
        v = lc.Variable(n)
        v.setUnits(units_of(model.units.get(n, "") if n != model.time else model.time_units))
        if init is not None:
            v.setInitialValue(repr(float(init)))
        comp.addVariable(v)
    var(model.time)
    for p, val in model.params.items():
        var(p, val)
    for s, val in model.states.items():
        var(s, val)
    for a in model.assigns:
        var(a)
    eqs = []
    for a, e in model.assigns.items():
        eqs.append(f"<apply><eq/><ci>{a}</ci>{_mathml(e, model.time)}</apply>")
    for s, e in model.odes.items():
        eqs.append(f"<apply><eq/><apply><diff/><bvar><ci>{model.time}</ci></bvar><ci>{s}</ci></apply>"
                   f"{_mathml(e, model.time)}</apply>")
    comp.setMath('<math xmlns="http://www.w3.org/1998/Math/MathML" '
                 'xmlns:cellml="http://www.cellml.org/cellml/2.0#">' + "".join(eqs) + "</math>")
    if validate:
        v = lc.Validator()
        v.validateModel(cm)
        _raise_first_error(v, f"CellML export of {model.name}: ", lc)
    return lc.Printer().printModel(cm)
