"""Data shipped with GPU Science Explorer: cell models (``models/``), workspace presets
(``presets/``) and a Dask worker configuration (``dask/``).

A package so that code finds its data through :mod:`importlib.resources` — in the checkout, an
editable install and an installed wheel alike — rather than through the repository layout.  The
folder stays at the top of the checkout (beside ``kernels`` and ``explorer``); pyproject.toml
ships its files as package data.
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def location(*parts: str) -> Path:
    """The shipped file or folder ``resources/<parts…>`` as a filesystem path.

    Wheels install unzipped, so the package's files are real files (compilers, parsers and file
    dialogs need paths); a zipped install is refused with a clear message."""
    root = files(__name__)
    if not isinstance(root, Path):
        raise RuntimeError(f"GPU Science Explorer's data must be installed as files, not in {root}")
    return root.joinpath(*parts)
