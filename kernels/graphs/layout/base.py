"""The layout registry: :class:`Layout` subclasses by name (model: the APSP registry,
:mod:`kernels.graphs.apsp.core`).

A layout is a class with flags read by every caller (the CLI's ``--layout`` choices, the Graphs
workspace's layout list and its tooltips): ``name`` (registry key), ``help`` (one line: the method
and its source), ``iterative`` (runs for a number of iterations; :class:`ForceLayout` streams them)
and ``gpu`` (has a GPU implementation used on the GPU backend).  :meth:`Layout.available` says
whether it applies to a graph (``generator`` needs the generator's positions).  Each family is a
class in its own module (``simple.py``, ``spectral.py``, ``force.py``, ``auto.py``); the package's
``__init__`` registers them, explicitly and in list order.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...registry import Registry

#: name → :class:`Layout` subclass, in registration order
LAYOUTS: Registry[type["Layout"]] = Registry("layout")


class Layout:
    """One way to place the vertices of a graph in the plane.

    :meth:`run` returns an (n, 2) float32 host array; ``iterations`` is used by iterative layouts
    only (``None``: :attr:`default_iterations`); ``progress(fraction)`` is called and ``cancel()``
    checked between chunks of work (InterruptedError when it returns True).
    """

    name: ClassVar[str] = ""
    help: ClassVar[str] = ""
    iterative: ClassVar[bool] = False
    gpu: ClassVar[bool] = False
    default_iterations: ClassVar[int] = 0

    @classmethod
    def available(cls, g) -> bool:
        """Whether this layout applies to ``g``."""
        return True

    @classmethod
    def why_unavailable(cls, g) -> str:
        """The user-facing reason :meth:`available` is False (empty when it is True)."""
        return ""

    def run(self, g, backend, iterations=None, seed=0, progress=None, cancel=None) -> np.ndarray:
        raise NotImplementedError


def register(cls: type[Layout]) -> type[Layout]:
    """Add ``cls`` to :data:`LAYOUTS` under ``cls.name`` (the package ``__init__`` calls it; a decorator too)."""
    return LAYOUTS.register(cls)


def layout_class(name: str) -> type[Layout]:
    """The registered class for ``name``; InvalidParameter naming the choices otherwise."""
    return LAYOUTS.get(name)


def check_cancel(cancel) -> None:
    """InterruptedError when ``cancel()`` says so (the house convention for long kernels)."""
    if cancel is not None and cancel():
        raise InterruptedError("cancelled")


def host_positions(pos) -> np.ndarray:
    """An (n, 2) float32 C-contiguous host array (from NumPy or CuPy)."""
    if type(pos).__module__.startswith("cupy"):
        pos = pos.get()
    return np.ascontiguousarray(pos, dtype=np.float32).reshape(-1, 2)
