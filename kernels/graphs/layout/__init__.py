"""Graph layouts (issue 32), Qt-free: a registry of layout classes and the force layout's streaming API.

:data:`LAYOUTS` maps a name to a :class:`Layout` subclass (``generator``, ``circle``, ``spectral``,
``force``, ``auto``), each with ``help`` text and flags; :func:`compute_layout` runs one and returns
host positions; :class:`ForceLayout` is the ForceAtlas2-style layout advanced step by step (the
Graphs workspace streams it); :func:`layout_quality` measures a drawing.
"""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter
from .auto import AutoLayout, auto_layout_name
from .base import LAYOUTS, Layout, layout_class, register
from .force import ForceLayout, ForceMethod
from .quality import layout_quality
from .simple import CircleLayout, GeneratorLayout
from .spectral import SpectralLayout
from ...backend import current

# registration, in the order LAYOUTS lists them (the CLI's --layout choices, the dock's list)
for _cls in (GeneratorLayout, CircleLayout, SpectralLayout, ForceMethod, AutoLayout):
    register(_cls)

__all__ = ["LAYOUTS", "Layout", "ForceLayout", "compute_layout", "auto_layout_name", "layout_quality"]


def compute_layout(g, method: str = "auto", *, backend=None, iterations=None, seed=0,
                   progress=None, cancel=None) -> np.ndarray:
    """Positions (n, 2) float32 on the host for graph ``g`` by the layout ``method`` (a key of
    :data:`LAYOUTS`; InvalidParameter naming the choices otherwise, or the reason a layout does not
    apply, e.g. ``generator`` without generator positions).  ``backend``: None for the selected one;
    ``iterations``: for iterative layouts (None: the layout's default); ``seed``: initial positions
    and solver start vectors (same seed → same layout on the same backend); ``progress(fraction)``
    is called and ``cancel()`` checked between chunks of work (InterruptedError when cancelled)."""
    cls = layout_class(method)
    if not cls.available(g):
        raise InvalidParameter(cls.why_unavailable(g) or f"the {method} layout does not apply to this graph")
    if iterations is not None and int(iterations) < 0:
        raise InvalidParameter(f"layout iterations must be ≥ 0 (got {iterations})")
    return cls().run(g, backend if backend is not None else current(), iterations, seed, progress, cancel)
