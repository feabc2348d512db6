"""Loading Flint models: the shipped-model catalogue (``resources/models``, the flattened benchmark
models of :mod:`.catalog` built on demand) and :func:`load_model`, which picks the reader (native
text :func:`.model.parse_text`, SBML :mod:`.sbml`, CellML :mod:`.cellml`) by suffix and content.

The readers import :mod:`.model`; this module imports them (lazily), so ``model`` never imports a
reader: no import circle.  Where the shipped files are is decided in :func:`models_dir` only.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InvalidParameter
from .model import Model, parse_text

DEFAULT_MODEL = "luo_rudy_1991.flint"
MODEL_SUFFIXES = (".flint", ".xml", ".sbml", ".cellml")


def models_dir() -> Path:
    """The folder of the shipped model files (resources/models), through importlib.resources
    (checkout, editable install or wheel)."""
    from resources import location
    return location("models")


MODELS_DIR = models_dir()


def shipped_models() -> dict[str, Path]:
    """Model files shipped in resources/models (name → path): :data:`DEFAULT_MODEL` (the hand-written
    single cell) first, then by name."""
    out = {}
    root = models_dir()
    if root.is_dir():
        for p in sorted(root.iterdir(), key=lambda q: (q.name != DEFAULT_MODEL, q.name)):
            if p.suffix in MODEL_SUFFIXES:
                out[p.name] = p
    return out


def find_model_file(name: str | Path) -> Path | None:
    """The file behind a model argument: an existing path, or a shipped file's name (with or
    without ``.flint``); None otherwise."""
    p = Path(name)
    if p.exists():
        return p
    shipped = shipped_models()
    return shipped.get(str(name)) or shipped.get(f"{name}.flint")


def load_model(path_or_name: str | Path) -> Model:
    """Load a native (.flint), SBML (.xml/.sbml) or CellML (.cellml) model.  Shipped file names work too,
    and so do the names of :data:`kernels.flint.catalog.CATALOG` ("wang", "rybak", "lr-ring", "lr-100",
    "mix", "lr-1000" … "lr-5000"), which are built on demand."""
    p = find_model_file(path_or_name)
    if p is None:
        from .catalog import CATALOG, build      # flattened benchmark models, built on demand
        if str(path_or_name).lower().replace("_", "-") in CATALOG:
            return build(str(path_or_name))
        raise InvalidParameter(f"no such model file: {path_or_name} (catalog models: {', '.join(CATALOG)})")
    from .inputs import check_model_file
    check_model_file(p)                          # size, XML nesting: before any parser sees the file
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParameter(f"cannot read {p}: {exc}") from None
    head = text.lstrip()[:400]
    try:
        if p.suffix == ".cellml" or ("<model" in head and "cellml" in head):
            from .cellml import read_cellml
            return read_cellml(text, source=p.name, base_dir=str(p.resolve().parent))
        if p.suffix in (".xml", ".sbml") or head.startswith("<"):
            from .sbml import read_sbml
            return read_sbml(text, source=p.name, location=str(p.resolve()))
        return parse_text(text, source="")
    except (RecursionError, MemoryError):
        raise InvalidParameter(f"{p.name}: the model's expressions are nested too deeply (or are too large) "
                               "to read") from None
