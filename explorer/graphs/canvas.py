"""The graph view in the Qt app: a VisPy ``SceneCanvas`` with a Qt parent around a
:class:`explorer.graphs.scene.GraphScene`, which draws every vertex and every edge at any size
(see that module for the buffers, the edge alpha rule, the level of detail and picking).

``GraphCanvas`` keeps the API the Graphs workspace and its tests use (``set_graph``, ``set_colors``,
``set_path``, ``pick``, ``screen_of``, ``render``, ``mode``, ``color_range``, ``on_pick``,
``density_at``) and adds ``set_values`` / ``clear_values`` / ``value_at`` / ``shown_text`` /
``set_density_overlay`` / ``set_positions`` / ``set_selected`` and ``on_camera_change`` (called when
the camera moves or the edges shown change: the status bar shows :meth:`shown_text`).
"""
from __future__ import annotations

import numpy as np
from vispy import scene

from .scene import GraphScene


def _from_scene(name: str, doc: str) -> property:
    """A read-only attribute of the canvas that is the scene's attribute ``name``."""
    return property(lambda self: getattr(self.scene, name), doc=doc)


class GraphCanvas:
    """The Qt-embedded graph view (``native`` goes into the layout)."""

    def __init__(self, parent=None, interop: bool = True):
        self.canvas = scene.SceneCanvas(keys=None, show=False, bgcolor="white", parent=parent)
        self.native = self.canvas.native
        self.scene = GraphScene(self.canvas, interop=interop)
        self.view = self.scene.view
        self.on_pick = None             # callable(vertex) on a left click near a vertex
        self.canvas.events.mouse_press.connect(self._on_press)

    # -- state, read from the scene ----------------------------------------
    mode = _from_scene("mode", '"graph" while a graph is shown, else "empty" (no density-only mode any more)')
    color_range = _from_scene("color_range", "(lo, hi) of the values the vertices are coloured by, or None")
    label = _from_scene("label", "the values' label (the colour bar's), or None")
    lecture = _from_scene("lecture", "lecture look on")
    upload_path = _from_scene("upload_path", '"CUDA–GL interop" or "host …": how buffers reach OpenGL')
    nodes = _from_scene("nodes", "the vertices' visual")
    edges = _from_scene("edges", "the edges' visual")
    density = _from_scene("density", "the density overlay's Image visual")
    density_counts = _from_scene("density_counts", "vertices per density bin [y, x] while the overlay is on")

    @property
    def pos(self) -> np.ndarray:
        """Host copy of the positions."""
        return self.scene.positions_host()

    @property
    def on_camera_change(self):
        return self.scene.on_camera_change

    @on_camera_change.setter
    def on_camera_change(self, fn):
        self.scene.on_camera_change = fn

    # -- data -----------------------------------------------------------------
    def set_graph(self, pos, edges, colors=None) -> None:
        """Show a graph (positions (n, 2), edges (m, 2); numpy or CuPy); ``colors``: values to
        colour the vertices by (as :meth:`set_colors`)."""
        self.scene.set_graph(pos, edges if edges is not None else np.zeros((0, 2), np.int32))
        if colors is not None:
            self.set_colors(colors)

    def set_positions(self, pos) -> None:
        self.scene.set_positions(pos)

    def set_values(self, values, *, label, cmap: str = "viridis", clim=None) -> None:
        self.scene.set_values(values, label=label, cmap=cmap, clim=clim)

    def clear_values(self) -> None:
        self.scene.clear_values()

    def set_colors(self, values, cmap: str = "viridis", selected=(), label: str | None = None) -> None:
        """Older form of :meth:`set_values` + :meth:`set_selected` (``values`` None: plain colour)."""
        if self.mode != "graph":
            return
        if values is None:
            self.scene.clear_values()
        else:
            self.scene.set_values(values, label=label if label is not None else "value", cmap=cmap)
        self.scene.set_selected(selected)

    def set_selected(self, vertices) -> None:
        self.scene.set_selected(vertices)

    def set_path(self, nodes) -> None:
        self.scene.set_path(nodes)

    def set_lecture(self, on: bool) -> None:
        self.scene.set_lecture(on)

    def set_density_overlay(self, on: bool) -> None:
        self.scene.set_density_overlay(on)

    # -- reading the view -------------------------------------------------
    def shown_text(self) -> str:
        return self.scene.shown_text()

    def screen_of(self, i: int) -> tuple[float, float]:
        """Canvas pixel position of vertex i (for tests and tooltips)."""
        return self.scene.screen_of(i)

    def pick(self, xy, radius_px: float = 12.0) -> int | None:
        return self.scene.pick(xy, radius_px)

    def value_at(self, xy) -> tuple[int, float] | None:
        return self.scene.value_at(xy)

    def density_at(self, xy) -> tuple[float, float, int] | None:
        """(x, y, vertices in the bin) under ``xy`` while the density overlay is on, else None."""
        return self.scene.density_at(xy)

    def _on_press(self, ev) -> None:
        if ev.button != 1 or self.on_pick is None:
            return
        i = self.pick(ev.pos)
        if i is not None:
            self.on_pick(i)

    def render(self) -> np.ndarray:
        return self.canvas.render()
