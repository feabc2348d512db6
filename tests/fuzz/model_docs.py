"""Hypothesis strategies of the model formats the Flint workspace reads: the native ``.flint``
text, CellML 2.0 and SBML Level 3 (no tests here).

The CellML and SBML documents are written here (small, so each example parses in milliseconds)
with the constructs that have crashed or hung model readers before: cyclic and zero-multiplier
units, imports that point outside the model's folder, chains of function definitions whose
inlined size doubles per level, events that re-trigger each other at one instant; then maybe
XML damage (strategies.mutated_xml).
"""
from __future__ import annotations

from hypothesis import strategies as st

from strategies import deep, mutated_text, mutated_xml, nasty_number, nasty_text


# ----------------------------------------------------------------------------------- .flint
_FLINT_NAMES = ["V", "m", "h", "x", "g_Na", "t", "exp", "where", "inf", "1a", "é", "a" * 200, "C"]


@st.composite
def flint_line(draw) -> str:
    kind = draw(st.sampled_from(["param", "state", "let", "ode", "time", "model", "junk"]))
    name = draw(st.one_of(st.sampled_from(_FLINT_NAMES), nasty_text(5)))
    value = draw(st.one_of(nasty_number(), st.sampled_from([
        "(" * 2000 + "1" + ")" * 2000, "+".join(["V"] * 3000), "V" + "*V" * 500, "1/0", "log(0)", "exp(1e308)",
        "sqrt(-1)", "where(V, 1)", "m**1e308", "9" * 400, "V(", "pow(V)", "nb(1,2,3)", "x = 1"])))
    unit = draw(st.sampled_from(["", " [mV]", " [", " []", " [1/0]", " [" + "a" * 300 + "]"]))
    if kind == "junk":
        return draw(nasty_text(40))
    if kind in ("time", "model"):
        return f"{kind} {name}{unit}"
    return f"{kind} {name} = {value}{unit}"


def flint_text(seed: str):
    """A mutation of the native model text ``seed`` (numbers, lines, inserted declarations)."""
    return mutated_text(seed, extra_lines=flint_line(), max_ops=3)


# ----------------------------------------------------------------------------------- CellML
_UNITS = ["millivolt", "millisecond", "dimensionless", "per_ms", "bogus_unit", "second", "ampere"]


@st.composite
def cellml_model(draw) -> bytes:
    """A small CellML 2.0 model written here (one component, a few ODEs), with drawn units
    (including cyclic and zero-multiplier definitions), initial values, maths and imports;
    then maybe XML damage."""
    n = draw(st.integers(1, 3))
    units = []
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["ok", "cycle", "zero", "self", "nasty"]))
        if kind == "ok":
            units.append('<units name="per_ms"><unit units="second" prefix="milli" exponent="-1"/></units>')
        elif kind == "cycle":
            units.append('<units name="ua"><unit units="ub"/></units><units name="ub"><unit units="ua"/></units>')
        elif kind == "self":
            units.append('<units name="per_ms"><unit units="per_ms"/></units>')
        elif kind == "zero":
            units.append('<units name="per_ms"><unit units="second" multiplier="0"/></units>')
        else:
            units.append(f'<units name="per_ms"><unit units="second" multiplier="{draw(nasty_number())}" '
                         f'exponent="{draw(nasty_number())}"/></units>')
    imports = ""
    if draw(st.integers(0, 4)) == 0:
        href = draw(st.sampled_from(["../outside.cellml", "/etc/passwd", "missing.cellml",
                                     "http://127.0.0.1:9/x.cellml"]))
        imports = (f'<import xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="{href}">'
                   '<component name="imp" component_ref="c"/></import>')
    units.insert(0, '<units name="millisecond"><unit prefix="milli" units="second"/></units>'
                    '<units name="millivolt"><unit prefix="milli" units="volt"/></units>')
    tu = draw(st.sampled_from(["dimensionless"] * 4 + ["millisecond", "second"]))
    var = [f'<variable name="t" units="{tu}" interface="public_and_private"/>']
    maths = []
    for i in range(n):
        init = draw(st.one_of(st.floats(-2, 2).map(repr), nasty_number()))
        u = draw(st.sampled_from(["dimensionless"] * 8 + _UNITS + ["ua"]))
        var.append(f'<variable name="x{i}" units="{u}" initial_value="{init}" interface="public_and_private"/>')
        rhs = draw(st.sampled_from([f"<apply><minus/><ci>x{i}</ci></apply>"] * 4 + [
                                    f'<cn cellml:units="dimensionless">{draw(nasty_number())}</cn>',
                                    f'<cn cellml:units="per_ms">{draw(nasty_number())}</cn>',
                                    f"<ci>x{(i + 1) % n}</ci>", "<ci>undefined_var</ci>",
                                    "<apply><divide/><cn cellml:units=\"dimensionless\">1</cn>"
                                    "<cn cellml:units=\"dimensionless\">0</cn></apply>",
                                    deep(draw(st.sampled_from([10, 600])), "<apply><minus/>", "</apply>").replace(
                                        "</apply>", f"<ci>x{i}</ci></apply>", 1)]))
        maths.append(f"<apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>x{i}</ci></apply>{rhs}</apply>")
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<model xmlns="http://www.cellml.org/cellml/2.0#" xmlns:cellml="http://www.cellml.org/cellml/2.0#" '
            f'name="fuzz">{imports}{"".join(units)}<component name="c">{"".join(var)}'
            f'<math xmlns="http://www.w3.org/1998/Math/MathML">{"".join(maths)}</math></component></model>')
    if draw(st.integers(0, 2)) == 0:
        return draw(mutated_xml(text, 2))
    return text.encode("utf-8")


# ----------------------------------------------------------------------------------- SBML
_MATH = '<math xmlns="http://www.w3.org/1998/Math/MathML">{}</math>'
_TRIGGERS = ["<apply><gt/><ci>x</ci><cn>0.5</cn></apply>", "<apply><lt/><ci>z</ci><cn>0.5</cn></apply>",
             "<apply><gt/><ci>z</ci><cn>0.5</cn></apply>", "<true/>", "<apply><geq/><csymbol encoding=\"text\" "
             "definitionURL=\"http://www.sbml.org/sbml/symbols/time\">t</csymbol><cn>0</cn></apply>",
             "<apply><lt/><ci>x</ci><cn>1e308</cn></apply>"]


def fdef_chain(depth: int) -> str:
    """``<listOfFunctionDefinitions>``: f0(a) = a + 1 and f_k(a) = f_{k−1}(a) + f_{k−1}(a) for
    k < ``depth`` (the inlined size of f_k is about 2^k nodes); empty for depth 0."""
    fdefs = []
    for k in range(depth):
        call = f"<apply><ci>f{k - 1}</ci><ci>a</ci></apply>"
        body = "<apply><plus/><ci>a</ci><cn>1</cn></apply>" if k == 0 else f"<apply><plus/>{call}{call}</apply>"
        fdefs.append(f'<functionDefinition id="f{k}">' +
                     _MATH.format(f"<lambda><bvar><ci>a</ci></bvar>{body}</lambda>") + "</functionDefinition>")
    return f"<listOfFunctionDefinitions>{''.join(fdefs)}</listOfFunctionDefinitions>" if fdefs else ""


@st.composite
def sbml_model(draw) -> bytes:
    """A small SBML Level 3 model written here: parameters x, z with rate rules, a chain of
    function definitions (each calling the one before twice: the inlined size doubles per level),
    events (including ones that re-trigger each other at one instant, or a Zeno trigger), nasty
    values; then maybe XML damage."""
    depth = draw(st.sampled_from([0, 0, 1, 3, 8, 40]))
    fdefs = fdef_chain(depth)
    rate = f"<apply><ci>f{depth - 1}</ci><ci>x</ci></apply>" if depth else \
        draw(st.sampled_from(["<apply><minus/><ci>x</ci></apply>"] * 4 + ["<cn>1</cn>", "<ci>nosuch</ci>",
                              "<apply><divide/><cn>1</cn><cn>0</cn></apply>", "<apply><ci>x</ci></apply>"]))
    events = []
    for i in range(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):
        trig = draw(st.sampled_from(_TRIGGERS))
        target = draw(st.sampled_from(["x", "z"] * 4 + ["nosuch"]))
        val = draw(st.sampled_from(["<cn>0</cn>", "<cn>1</cn>", "<apply><minus/><cn>1</cn><ci>z</ci></apply>",
                                    f"<cn>{draw(nasty_number()).replace('<', '')}</cn>"]))
        delay = draw(st.sampled_from(["", "", '<delay><math xmlns="http://www.w3.org/1998/Math/MathML"><cn>0</cn>'
                                      "</math></delay>", '<delay><math xmlns="http://www.w3.org/1998/Math/MathML">'
                                      "<cn>-1</cn></math></delay>"]))
        persistent = draw(st.sampled_from(["true", "false"]))
        events.append(f'<event id="e{i}" useValuesFromTriggerTime="true"><trigger initialValue="false" '
                      f'persistent="{persistent}">' + _MATH.format(trig) + f"</trigger>{delay}"
                      f'<listOfEventAssignments><eventAssignment variable="{target}">' + _MATH.format(val) +
                      "</eventAssignment></listOfEventAssignments></event>")
    xval = draw(st.one_of(st.just("1"), nasty_number().map(lambda s: s.replace('"', ""))))
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">'
            '<model id="fuzz">' + fdefs +
            f'<listOfParameters><parameter id="x" value="{xval}" constant="false"/>'
            '<parameter id="z" value="0" constant="false"/></listOfParameters>'
            '<listOfRules><rateRule variable="x">' + _MATH.format(rate) + "</rateRule></listOfRules>" +
            (f"<listOfEvents>{''.join(events)}</listOfEvents>" if events else "") + "</model></sbml>")
    if draw(st.integers(0, 3)) == 0:
        return draw(mutated_xml(text, 2))
    return text.encode("utf-8")
