"""Loading Flint models: the shipped-model catalogue (``resources/models``, the flattened benchmark
models of :mod:`.catalog` built on demand) and :func:`load_model`, which picks the reader (native
text :func:`.model.parse_text`, SBML :mod:`.sbml`, CellML :mod:`.cellml`) by suffix and content.

The readers import :mod:`.model`; this module imports them, so ``model`` never imports a reader.
Where the shipped files are is decided in :mod:`.shipped` (re-exported here), which :mod:`.catalog`
reads too: neither imports this module, so every import here is at module level (no circle).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidParameter
from .catalog import CATALOG, build
from .cellml import read_cellml
from .inputs import read_model_text
from .model import Model, parse_text
from .sbml import read_sbml
from .shipped import DEFAULT_MODEL, MODEL_SUFFIXES, MODELS_DIR, find_model_file, models_dir, shipped_models

__all__ = ["DEFAULT_MODEL", "MODEL_SUFFIXES", "MODELS_DIR", "LoadedModel", "find_model_file", "load_model",
           "models_dir", "read_model", "shipped_models"]


@dataclass
class LoadedModel:
    """A model and the files its reading opened: the model file first, then every file it named
    (SBML ``comp`` external model definitions, CellML imports), resolved."""
    model: Model
    files_read: list[str] = field(default_factory=list)


def load_model(path_or_name: str | Path, allow_outside: bool | None = None) -> Model:
    """Load a native (.flint), SBML (.xml/.sbml) or CellML (.cellml) model.  Shipped file names work too,
    and so do the names of :data:`kernels.flint.catalog.CATALOG` ("wang", "rybak", "lr-ring", "lr-100",
    "mix", "lr-1000" … "lr-5000"), which are built on demand.  See :func:`read_model`."""
    return read_model(path_or_name, allow_outside).model


def read_model(path_or_name: str | Path, allow_outside: bool | None = None) -> LoadedModel:
    """:func:`load_model` with the list of files read.  Every file passes the file gate
    (:mod:`kernels.filegate`: regular file, size, XML depth and entities whatever the suffix);
    files named inside the model must lie in the model file's folder unless ``allow_outside``
    (None: the ``GSE_ALLOW_OUTSIDE_REFERENCES`` environment variable; the CLI's
    ``--allow-outside-references``)."""
    p = find_model_file(path_or_name)
    if p is None:
        if str(path_or_name).lower().replace("_", "-") in CATALOG:
            return LoadedModel(build(str(path_or_name)), [])
        raise InvalidParameter(f"no such model file: {path_or_name} (catalog models: {', '.join(CATALOG)})")
    text = read_model_text(p)                    # the gate: before any parser sees the file
    files = [str(p.resolve())]
    head = text.lstrip()[:400]
    try:
        if p.suffix == ".cellml" or ("<model" in head and "cellml" in head):
            model = read_cellml(text, source=p.name, base_dir=str(p.resolve().parent), allow_outside=allow_outside,
                                files_read=files)
        elif p.suffix in (".xml", ".sbml") or head.startswith("<"):
            model = read_sbml(text, source=p.name, location=str(p.resolve()), allow_outside=allow_outside,
                              files_read=files)
        else:
            model = parse_text(text, source="")
    except (RecursionError, MemoryError):
        raise InvalidParameter(f"{p.name}: the model's expressions are nested too deeply (or are too large) "
                               "to read") from None
    return LoadedModel(model, files)
