"""Small SBML documents written inline for tests: a model around a body, MathML helpers, parameters,
a comp model that references another file, and an event model."""
from pathlib import Path


def doc(body: str, fdefs: str = "") -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">
  <model id="m">{fdefs}{body}</model>
</sbml>"""


def math_(inner: str) -> str:
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML">{inner}</math>'


def ci(x):
    return f"<ci>{x}</ci>"


def cn(v):
    return f"<cn>{v}</cn>"


def apply(op, *args):
    return f"<apply><{op}/>{''.join(args)}</apply>"


TIME = '<csymbol encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/time">time</csymbol>'


def param(pid, value=None, constant=True):
    v = f' value="{value}"' if value is not None else ""
    return f'<parameter id="{pid}"{v} constant="{str(constant).lower()}"/>'


SUB_SBML = """<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core" level="3" version="1">
  <model id="sub">
    <listOfParameters>
      <parameter id="x" value="{x0}" constant="false"/>
      <parameter id="k" value="0.5" constant="true"/>
    </listOfParameters>
    <listOfRules>
      <rateRule variable="x"><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/>
        <apply><minus/><ci>k</ci></apply><ci>x</ci></apply></math></rateRule>
    </listOfRules>
  </model>
</sbml>
"""


TOP_SBML = """<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core"
      xmlns:comp="http://www.sbml.org/sbml/level3/version1/comp/version1" level="3" version="1" comp:required="true">
  <comp:listOfExternalModelDefinitions>
    <comp:externalModelDefinition comp:id="ext" comp:source="{source}" comp:modelRef="sub"/>
  </comp:listOfExternalModelDefinitions>
  <model id="top">
    <comp:listOfSubmodels><comp:submodel comp:id="s1" comp:modelRef="ext"/></comp:listOfSubmodels>
  </model>
</sbml>
"""


def sbml_top(folder: Path, source: str, name="top.xml") -> Path:
    p = folder / name
    p.write_text(TOP_SBML.format(source=source))
    return p


def event_sbml(tmp_path, k: float, thr: float):
    """dx/dt = k, x reset to 0 when x > thr (an event: the Flint compiler refuses it)."""
    body = f"""<listOfParameters>{param("x", 0, False)}{param("k", k)}{param("thr", thr)}</listOfParameters>
    <listOfRules><rateRule variable="x">{math_(ci("k"))}</rateRule></listOfRules>
    <listOfEvents><event id="E" useValuesFromTriggerTime="true">
      <trigger initialValue="true" persistent="true">{math_(apply("gt", ci("x"), ci("thr")))}</trigger>
      <listOfEventAssignments><eventAssignment variable="x">{math_(cn(0))}</eventAssignment>
      </listOfEventAssignments></event></listOfEvents>"""
    p = tmp_path / "reset.xml"
    p.write_text(doc(body))
    return p
