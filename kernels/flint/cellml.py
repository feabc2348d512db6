"""CellML 1.x / 2.0 import through libcellml: parse, flatten imports, validate, analyse, then read the
equations from libcellml's own Python code generator (which applies unit scaling and orders the
equations).  Refused with the cause named: parser/validator/analyser errors (malformed XML, units
mismatches, algebraic loops, unsupported constructs such as non-linear algebraic systems)."""
from __future__ import annotations

import ast as pyast
import math
import re

from ..errors import InvalidParameter
from .expr import _from_ast, evaluate
from .model import Model


def read_cellml(text: str, source: str = "", base_dir: str | None = None) -> Model:
    try:
        import libcellml as lc
    except ImportError as exc:               # pragma: no cover
        raise InvalidParameter("CellML needs libcellml (pip install libcellml)") from exc
    label = source or "CellML"
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
    for i in range(v.issueCount()):
        it = v.issue(i)
        if it.level() == lc.Issue.Level.ERROR:
            raise InvalidParameter(f"{label}: invalid CellML: {it.description()}")
    an = lc.Analyser()
    an.analyseModel(model)
    for i in range(an.issueCount()):
        it = an.issue(i)
        if it.level() == lc.Issue.Level.ERROR:
            raise InvalidParameter(f"{label}: {it.description()}")
    am = an.analyserModel()
    if am.type() not in (lc.AnalyserModel.Type.ODE,):
        raise InvalidParameter(f"{label}: model type {am.typeAsString(am.type()) if hasattr(am, 'typeAsString') else am.type()} "
                               "is not supported (only ODE models)")
    gen = lc.Generator()
    prof = lc.GeneratorProfile(lc.GeneratorProfile.Profile.PYTHON)
    code = gen.implementationCode(am, prof)
    return _from_generated(code, model.name() or "cellml_model", label)


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
    for tgt, val in statements("initialise_variables") + statements("initialise_arrays"):
        e = _from_ast(val, f"{label}: initial value of {tgt}", "")
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
        e = _from_ast(val, f"{label}: equation for {tgt}", "")
        if tgt.startswith("__rate_"):
            m.odes[names[("states", int(tgt[7:]))]] = e
        elif tgt not in m.assigns:
            m.assigns[tgt] = e
    for tgt, val in statements("compute_variables"):
        if tgt not in m.assigns:
            m.assigns[tgt] = _from_ast(val, f"{label}: equation for {tgt}", "")
    for g in ("computed_constants", "algebraic_variables"):
        for i, inf in enumerate(groups[g]):
            m.units[names[(g, i)]] = inf["units"]
    for s, v in m.states.items():
        if not math.isfinite(v):
            raise InvalidParameter(f"{label}: state {s} has no initial value")
    return m.validate()
