"""Files named inside an SBML document: the ``comp`` package's external model definitions.

libsbml's comp flattening reads each ``<comp:externalModelDefinition comp:source="…">`` itself,
relative to the document's location, and recursively through the files it reads.  Before it does,
:func:`check_external_files` walks the same references with the file gate: each must name a file
(not a URL), lie inside the top model's folder unless outside references are allowed
(:func:`kernels.filegate.confined`), and pass the gate's checks (regular file, size, XML depth and
entities); at most :data:`MAX_EXTERNAL_FILES` files (a missing one is left to libsbml to report).  It returns the resolved paths, which the
readers report as the files read.
"""
from __future__ import annotations

from pathlib import Path

from ... import filegate

#: most external model files one document may pull in (directly and through each other)
MAX_EXTERNAL_FILES = 64


def external_sources(doc) -> list[str]:
    """The ``source`` attributes of the document's external model definitions, in order."""
    plug = doc.getPlugin("comp")
    if plug is None:
        return []
    return [plug.getExternalModelDefinition(i).getSource() for i in range(plug.getNumExternalModelDefinitions())]


def check_external_files(doc, lib, src: str, location: str | None, allow_outside: bool | None = None) -> list[str]:
    """The external model files ``doc`` (read from ``location``; None: the working folder) pulls in,
    checked as the module doc says, before libsbml reads them."""
    root = Path(location).resolve().parent if location else Path.cwd()
    return filegate.follow_references(doc, root, src, "comp external model definition", external_sources,
                                      lambda text, _name: lib.readSBMLFromString(text), allow_outside,
                                      MAX_EXTERNAL_FILES)
