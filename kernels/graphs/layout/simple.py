"""Layouts that need no computation: the generator's own positions and the circle."""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter
from .base import Layout, check_cancel, host_positions


class GeneratorLayout(Layout):
    name = "generator"
    help = ("the generator's own positions (ring and lattice generators place their vertices on a "
            "circle, the spatial generator in the unit square); unavailable for graphs without them")

    @classmethod
    def available(cls, g) -> bool:
        return g.positions is not None

    @classmethod
    def why_unavailable(cls, g) -> str:
        return "" if cls.available(g) else (f"the graph '{g.name}' has no generator positions: choose "
                                            "another layout (force, spectral, circle)")

    def run(self, g, backend, iterations=None, seed=0, progress=None, cancel=None):
        if not self.available(g):
            raise InvalidParameter(self.why_unavailable(g))
        check_cancel(cancel)
        pos = host_positions(g.positions)
        if pos.shape[0] != g.n:
            raise InvalidParameter(f"the graph's positions hold {pos.shape[0]} vertices, not {g.n}")
        return pos.copy()


def circle_positions(n: int) -> np.ndarray:
    """Vertex i at angle 2πi/n on the unit circle, (n, 2) float32."""
    t = 2.0 * np.pi * np.arange(n, dtype=np.float64) / max(n, 1)
    return np.stack([np.cos(t), np.sin(t)], axis=1).astype(np.float32)


class CircleLayout(Layout):
    name = "circle"
    help = "the vertices on the unit circle in index order (vertex i at angle 2πi/n)"

    def run(self, g, backend, iterations=None, seed=0, progress=None, cancel=None):
        check_cancel(cancel)
        return circle_positions(g.n)
