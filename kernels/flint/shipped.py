"""Where the shipped Flint model files are (``resources/models``) and which of them a name means.

A base piece of :mod:`.loaders` (which reads the files) and :mod:`.catalog` (whose Luo–Rudy networks
start from the shipped single cell): it imports neither, so both import it at module level."""
from __future__ import annotations

from pathlib import Path

from resources import location

DEFAULT_MODEL = "luo_rudy_1991.flint"
MODEL_SUFFIXES = (".flint", ".xml", ".sbml", ".cellml")


def models_dir() -> Path:
    """The folder of the shipped model files (resources/models), through importlib.resources
    (checkout, editable install or wheel)."""
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
