"""The mouse on the Graphs workspace's view and plots: clicks, dragging a vertex of the live force
layout, and the status-bar readout of what lies under the mouse (vertex, its degree, clustering and
the shown overlay's value; the density bin; d(i → j) on the heatmap; a histogram's bar).

:class:`GraphPointer` is a part that owns the press in progress and the last readout.  It is given
the :class:`~explorer.graphs.canvas.GraphCanvas`, the
:class:`~explorer.graphs.layout_panel.LayoutPanel` (dragging pins vertices there), ``model()`` — a
callable returning what is shown (an object with ``graph``, ``local_cc``, ``shown_overlay`` and
``result``) — and two callbacks: ``click(vertex)`` and ``report(text)`` (the status bar).
"""
from __future__ import annotations

import numpy as np

from kernels.graphs.apsp import sentinel


def describe_distance(result, x: float, y: float) -> str:
    """d(i → j) of the APSP ``result`` under heatmap position (x = j, y = i); "" outside it."""
    if result is None:
        return ""
    i, j = int(np.floor(y)), int(np.floor(x))
    d = result.dist
    if not (0 <= i < d.shape[0] and 0 <= j < d.shape[1]):
        return ""
    v = d[i, j]
    if d.dtype.kind == "u":
        return f"d({i} → {j}) = " + ("unreachable" if v == sentinel(d.dtype) else f"{int(v)} hops")
    return f"d({i} → {j}) = {float(v):.4g}" if np.isfinite(v) else f"d({i} → {j}) = unreachable"


def describe_bar(plot, x: float, xname: str, yname: str) -> str:
    """The step-mode histogram bar of ``plot`` (a PlotWidget) under ``x``; "" outside."""
    items = plot.getPlotItem().listDataItems()
    if not items:
        return ""
    xs, ys = items[0].xData, items[0].yData      # step mode: len(xs) = len(ys) + 1
    if xs is None or ys is None or not len(ys):
        return ""
    k = int(np.searchsorted(xs, x, side="right")) - 1
    return f"{xname} {int(xs[k])}: {int(ys[k]):,} {yname}" if 0 <= k < len(ys) else ""


def describe_vertex(model, i: int, value: float | None = None) -> str:
    """Vertex id, degree, local clustering and the shown overlay's ``value`` (status bar)."""
    g = model.graph
    parts = [f"vertex {i}", f"degree {int(g.degrees()[i])}"]
    if model.local_cc is not None:
        parts.append(f"clustering {float(model.local_cc[i]):.3g}")
    ov = model.shown_overlay
    if ov is not None and value is not None:
        if not np.isfinite(value):
            parts.append(f"{ov.label}: none (unreachable)" if ov.source is not None else f"{ov.label}: none")
        else:
            parts.append(f"{ov.label}: {int(round(value)) if ov.integer else f'{value:.6g}'}")
    return ", ".join(parts)


class GraphPointer:
    """Mouse handling of one graph view (see the module docstring)."""

    def __init__(self, canvas, layout_panel, model, click, report):
        self.canvas, self.layout_panel, self.model = canvas, layout_panel, model
        self.click, self.report_text = click, report
        self.press: list | None = None        # [vertex, moved] of a left press on a vertex
        self.camera_touched = False           # the user moved the camera since the graph was shown
        self.text = None
        ev = canvas.canvas.events
        ev.mouse_move.connect(self.on_move)
        ev.mouse_press.connect(self.on_press)
        ev.mouse_release.connect(self.on_release)
        ev.mouse_wheel.connect(lambda _e: setattr(self, "camera_touched", True))

    def report(self, text: str) -> None:
        """Send ``text`` to the status bar when it changed."""
        if text != self.text:
            self.text = text
            self.report_text(text)

    def on_move(self, ev) -> None:
        """Drag a pressed vertex (live layout), else report what lies under the mouse."""
        if self._drag(ev):
            return
        text = ""
        m = self.model()
        if m.graph is not None:
            hit = self.canvas.value_at(ev.pos)
            if hit is not None:
                text = describe_vertex(m, hit[0], hit[1])
            else:
                hit = self.canvas.density_at(ev.pos)
                if hit is not None:
                    text = f"x = {hit[0]:.3g}, y = {hit[1]:.3g}: {hit[2]:,} vertices in this bin"
        self.report(text)

    def on_press(self, ev) -> None:
        """A left press on a vertex: a click (on release) or, while the force layout runs or is
        paused, the start of a drag (the camera does not pan meanwhile)."""
        self.camera_touched = True
        if ev.button != 1 or self.model().graph is None:
            return
        i = self.canvas.pick(ev.pos)
        self.press = None if i is None else [i, False]
        if i is not None and self.layout_panel.can_drag():
            self.canvas.view.camera.interactive = False

    def on_release(self, ev) -> None:
        press, self.press = self.press, None
        self.canvas.view.camera.interactive = True
        if press is None or ev.button != 1:
            return
        if press[1]:
            self.layout_panel.drag_end(press[0])
        else:
            self.click(press[0])

    def _drag(self, ev) -> bool:
        """Move the pressed vertex with the mouse (the layout follows); True when dragging."""
        if self.press is None or not self.layout_panel.can_drag() or 1 not in (ev.buttons or ()):
            return False
        self.press[1] = True
        self.layout_panel.drag_to(self.press[0], self.canvas.scene.data_of(ev.pos))
        return True
