"""Checks of a CellML document made with the standard library before libcellml sees it.

* **Units** (:func:`check_units`): libcellml recurses through unit definitions and crashes the
  process on a cycle (``<units name="a"><unit units="b"/></units>``, ``b`` built from ``a``, or a
  units built from itself), and its code generator emits unreadable code for a multiplier of 0.
  The ``units`` elements are read here (every component's and the model's, names merged: a
  conservative over-approximation of CellML's scoping), the graph "units → the units it is built
  from" is searched for a cycle (iteratively), and a cycle or a multiplier that is not a finite
  non-zero number is refused naming the units.
* **Imports** (:func:`check_imports`): every ``<import xlink:href="…">`` — of the model and,
  recursively, of the files it imports — must name a file inside the model's folder unless outside
  references are allowed (:func:`kernels.filegate.confined`), and each imported file passes the
  file gate (regular file, size, XML depth and entities) and the units check, before libcellml's
  Importer resolves them.  At most :data:`MAX_IMPORTED_FILES` files; a missing one is left to
  libcellml to report.

* **Markup libcellml mishandles** (:func:`strip_markup`): XML comments and processing
  instructions are removed from the text handed to libcellml (a comment inside ``<ci>`` makes its
  Analyser crash the process; inside ``<cn>`` it makes its code generator emit unreadable code).
  Each is replaced by as many newlines as it spans, so libcellml's line numbers stay right.
* **Unit references** (:func:`check_unit_references`): libcellml crashes the process analysing a
  units built from a name that is neither a units of the model (or imported) nor one of its
  standard units (:data:`STANDARD_UNITS`, the CellML 2.0 specification's table 2.1; ``liter`` and
  ``meter`` are not among them for libcellml).  Every ``<unit units=…>`` and every variable's
  ``units`` is checked, naming the reference.
* **MathML applications** (:func:`check_math`): libcellml's Analyser crashes the process on an
  ``<apply>`` whose first element is not an operator (``<apply><ci>y</ci>…``): each ``<apply>``
  must start with one of :data:`MATHML_OPERATORS` (the CellML 2.0 MathML subset, §2.12.3).

Each refusal is one :class:`~kernels.errors.InvalidParameter` naming the file and the element.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from .. import filegate
from ..errors import InvalidParameter

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
#: most files one CellML model may import (directly and through each other)
MAX_IMPORTED_FILES = 64
#: libcellml's standard units (CellML 2.0 specification, table 2.1)
STANDARD_UNITS = frozenset(
    "ampere becquerel candela celsius coulomb dimensionless farad gram gray henry hertz joule katal kelvin "
    "kilogram litre lumen lux metre mole newton ohm pascal radian second siemens sievert steradian tesla "
    "volt watt weber".split())
#: the operators an ``<apply>`` may start with (CellML 2.0 MathML subset, §2.12.3)
MATHML_OPERATORS = frozenset(
    "eq neq gt lt geq leq and or xor not plus minus times divide power root abs exp ln log floor ceiling "
    "min max rem diff sin cos tan sec csc cot sinh cosh tanh sech csch coth arcsin arccos arctan arcsec "
    "arccsc arccot arcsinh arccosh arctanh arcsech arccsch arccoth".split())
_MARKUP_IN_TOKEN = re.compile(r"<(?:[\w.-]+:)?c[in]\b[^>]*>[^<]*<(?:!--|\?)")
_MARKUP = re.compile(r"<!\[CDATA\[.*?\]\]>|<!--.*?-->|<\?.*?\?>", re.S)


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def parse(text: str, label: str) -> ET.Element:
    """The document's root element (the text was checked by the gate: no entities, bounded depth)."""
    try:
        return ET.fromstring(text)
    except (ET.ParseError, ValueError) as exc:
        raise InvalidParameter(f"{label}: malformed CellML ({' '.join(str(exc).split())[:160]})") from None


def strip_markup(text: str) -> str:
    """``text`` without XML comments and processing instructions (the XML declaration and CDATA
    sections kept), each replaced by the newlines it spanned."""
    def repl(m):
        t = m.group(0)
        if t.startswith("<![CDATA[") or (m.start() == 0 and t[:5] == "<?xml" and t[5:6].isspace()):
            return t
        return "\n" * t.count("\n")
    return _MARKUP.sub(repl, text)


def check_unit_references(root: ET.Element, label: str) -> None:
    """Refuse a ``<unit units=…>`` or a variable's ``units`` naming neither a units element of the
    document (defined or imported; names of every scope merged) nor a standard unit."""
    known = {el.attrib["name"] for el in root.iter() if _local(el.tag) == "units" and "name" in el.attrib}
    for el in root.iter():
        tag = _local(el.tag)
        if tag == "units":
            for u in el:
                ref = u.attrib.get("units") if _local(u.tag) == "unit" else None
                if ref is not None and ref not in known and ref not in STANDARD_UNITS:
                    raise InvalidParameter(f"{label}: units '{el.attrib.get('name', '?')}' is built from units "
                                           f"{ref!r}, which is neither defined in the model nor a standard CellML unit")
        elif tag == "variable" and "units" in el.attrib:
            ref = el.attrib["units"]
            if ref not in known and ref not in STANDARD_UNITS:
                raise InvalidParameter(f"{label}: variable '{el.attrib.get('name', '?')}' has units {ref!r}, which "
                                       "are neither defined in the model nor a standard CellML unit")


def check_math(root: ET.Element, label: str) -> None:
    """Refuse an ``<apply>`` whose first element is not a MathML operator of the CellML subset."""
    for el in root.iter():
        if _local(el.tag) != "apply":
            continue
        first = next(iter(el), None)
        op = _local(first.tag) if first is not None else ""
        if op not in MATHML_OPERATORS:
            shown = f"<{op}>" if op else "nothing"
            raise InvalidParameter(f"{label}: an <apply> starts with {shown}, not an operator of CellML's MathML "
                                   "subset (eq, plus, diff, …)")


def check_all(root: ET.Element, label: str) -> None:
    """Every check of one parsed document: units (cycles, multipliers, references) and MathML."""
    check_units(root, label)
    check_unit_references(root, label)
    check_math(root, label)


def check_units(root: ET.Element, label: str) -> None:
    """Refuse cyclic unit definitions and multipliers that are not finite non-zero numbers."""
    built: dict[str, list[str]] = {}
    for el in root.iter():
        if _local(el.tag) != "units" or "name" not in el.attrib:
            continue
        name = el.attrib["name"]
        refs = built.setdefault(name, [])
        for u in el:
            if _local(u.tag) != "unit":
                continue
            ref = u.attrib.get("units")
            if ref is not None:
                refs.append(ref)
            mult = u.attrib.get("multiplier")
            if mult is not None:
                try:
                    ok = math.isfinite(float(mult)) and float(mult) != 0.0
                except ValueError:
                    ok = False
                if not ok:
                    raise InvalidParameter(f"{label}: units '{name}' has a unit multiplier of {mult!r}; a finite, "
                                           "non-zero number is required")
    cycle = find_cycle(built)
    if cycle:
        raise InvalidParameter(f"{label}: the units {' → '.join(cycle)} are defined in a cycle (each built from the "
                               "next); refused before libcellml reads them")


def find_cycle(graph: dict[str, list[str]]) -> list[str]:
    """One cycle of ``graph`` (node → successors) as [a, b, …, a], or [] — iterative depth-first search."""
    state: dict[str, int] = {}                   # 1: on the current path, 2: done
    for start in graph:
        if state.get(start):
            continue
        path, stack = [start], [iter(graph.get(start, ()))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt in graph and not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(graph[nxt]))
    return []


def imports(root: ET.Element) -> list[str]:
    """The ``xlink:href`` of every ``import`` element, in order."""
    return [el.attrib[XLINK_HREF] for el in root.iter() if _local(el.tag) == "import" and XLINK_HREF in el.attrib]


def check_imports(root: ET.Element, base_dir, label: str, allow_outside: bool | None = None) -> list[str]:
    """The files the model imports (resolved), each checked as the module doc says."""
    def load(text: str, name: str) -> ET.Element:
        if _MARKUP_IN_TOKEN.search(text):          # libcellml's Importer reads this file itself
            raise InvalidParameter(f"{name}: a comment or processing instruction inside <ci> or <cn> (libcellml "
                                   "cannot read it in an imported file)")
        sub = parse(text, name)
        check_all(sub, name)
        return sub
    return filegate.follow_references(root, base_dir, label, "CellML import", imports, load, allow_outside,
                                      MAX_IMPORTED_FILES)
