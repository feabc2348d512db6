"""The ``auto`` layout: the generator's positions when the graph has them, else the force layout."""
from __future__ import annotations

from .base import LAYOUTS, Layout


def auto_layout_name(g) -> str:
    """What ``auto`` picks: ``generator`` when the generator gave positions (rings, lattices and the
    spatial graph are drawn as built), else ``force`` (ForceAtlas2-style, any size)."""
    return "generator" if LAYOUTS["generator"].available(g) else "force"


class AutoLayout(Layout):
    name = "auto"
    help = "the generator's own positions when the graph has them, else the force layout"
    iterative = True          # may run the force layout
    gpu = True

    def run(self, g, backend, iterations=None, seed=0, progress=None, cancel=None):
        return LAYOUTS[auto_layout_name(g)]().run(g, backend, iterations, seed, progress, cancel)
