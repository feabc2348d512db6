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

Each refusal is one :class:`~kernels.errors.InvalidParameter` naming the file and the element.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from .. import filegate
from ..errors import InvalidParameter

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
#: most files one CellML model may import (directly and through each other)
MAX_IMPORTED_FILES = 64


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def parse(text: str, label: str) -> ET.Element:
    """The document's root element (the text was checked by the gate: no entities, bounded depth)."""
    try:
        return ET.fromstring(text)
    except (ET.ParseError, ValueError) as exc:
        raise InvalidParameter(f"{label}: malformed CellML ({' '.join(str(exc).split())[:160]})") from None


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
        sub = parse(text, name)
        check_units(sub, name)
        return sub
    return filegate.follow_references(root, base_dir, label, "CellML import", imports, load, allow_outside,
                                      MAX_IMPORTED_FILES)
