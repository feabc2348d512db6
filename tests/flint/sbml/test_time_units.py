"""A model's time unit from its SBML file (``timeUnits``; Levels 1–2: ``time``, second unless redefined):
the label messages and the GUI use ("ms", "s", "min", "h", "d", a unit definition's id, or "" when the
model declares none), and write_sbml writes it back (round trip)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.flint.loaders import load_model
from kernels.flint.sbml import read_sbml, write_sbml
from kernels.flint.sbml.reference import load_reference
from support.paths import ROOT, SHARED

libsbml = pytest.importorskip("libsbml")
LR = ROOT / "resources" / "models" / "luo_rudy_1991.flint"


@pytest.mark.parametrize("unit", ["ms", "s", "min", "h", "d", ""])
def test_write_then_read_keeps_the_time_unit(unit):
    m = load_model(LR)
    m.time_units = unit
    assert read_sbml(write_sbml(m), source="lr.xml").time_units == unit


def _doc(level: int, time: tuple | None, declare: bool = True) -> str:
    """A one-parameter SBML document whose time unit is (multiplier, scale) seconds (``time``)."""
    doc = libsbml.SBMLDocument(level, 2 if level == 3 else 4)
    sm = doc.createModel()
    sm.setId("m")
    if time is not None:
        ud = sm.createUnitDefinition()
        ud.setId("tu" if level == 3 else "time")
        u = ud.createUnit()
        u.setKind(libsbml.UNIT_KIND_SECOND)
        u.setExponent(1)
        u.setMultiplier(time[0])
        u.setScale(time[1])
        if level == 3 and declare:
            sm.setTimeUnits("tu")
    p = sm.createParameter()
    p.setId("x")
    p.setValue(1.0)
    p.setConstant(False)
    r = sm.createRateRule()
    r.setVariable("x")
    r.setMath(libsbml.parseL3Formula("-x"))
    return libsbml.writeSBMLToString(doc)


def test_unit_definitions_of_a_multiple_of_the_second():
    rng = np.random.default_rng()
    for label, seconds in (("ms", 1e-3), ("s", 1.0), ("min", 60.0), ("h", 3600.0), ("d", 86400.0)):
        scale = int(rng.integers(-3, 3))                       # the same length, written another way
        for level in (2, 3):
            text = _doc(level, (seconds / 10.0 ** scale, scale))
            assert read_sbml(text).time_units == label, (label, level, scale)
    assert read_sbml(_doc(3, (7.0, 0))).time_units == "tu"    # not a named multiple: the definition's id
    assert read_sbml(_doc(3, None)).time_units == ""            # Level 3 without timeUnits: none declared
    assert read_sbml(_doc(3, (60.0, 0), declare=False)).time_units == ""
    assert read_sbml(_doc(2, None)).time_units == "s"           # Level 2's built-in "time"


def test_shipped_and_real_models():
    assert load_model(ROOT / "resources" / "models" / "luo_rudy_1991.xml").time_units == "ms"
    assert load_model(ROOT / "resources" / "models" / "robertson.xml").time_units == ""
    izh = SHARED / "models" / "BIOMD0000000127.xml"
    if izh.is_file():                                            # events: the reference simulator reads it
        assert load_reference(izh).system.time_units == "ms"


def test_messages_name_the_unit_only_when_declared():
    m = load_model(LR)
    assert m.at(0.25) == "t = 0.25 ms"
    m.time_units = ""
    assert m.at(0.25) == "t = 0.25"
