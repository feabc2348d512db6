"""The Occupancy workspace's charts: occupancy vs threads per block, registers per thread and shared
memory, the current launch marked; lecture styling; the curve point under the mouse.

Each curve is a step function of its (integer) input — warps, registers and shared memory are
allocated in whole units — so it is drawn as steps, on screen and in SVG: the occupancy computed
at a sample ``x[i]`` holds for every input in ``(x[i-1], x[i]]`` (pyqtgraph's ``stepMode="left"``:
the step to the left of ``x[i]`` is drawn at ``y[i]``; a block of 33…64 threads takes two warps,
like 64)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QVBoxLayout, QWidget

from ..colorbar import hover
from ..theme import LECTURE_ACCENT, lecture_pen, set_title, style_plot

CURVE_PEN = pg.mkPen("#1f5fa0", width=2)
#: a sample's value holds back to the previous sample, (x[i-1], x[i]]: pyqtgraph's "left" steps
STEP_MODE = "left"
#: the x labels in lecture mode (the chart titles say what is varied; long labels were clipped)
LECTURE_X = {"threads": "threads", "regs": "registers", "smem": "shared"}
AXES = (("threads", "Threads per block", "threads/block"), ("regs", "Registers per thread", "registers/thread"),
        ("smem", "Shared memory per block", "bytes"))


def chart_title(unit: str) -> str:
    """A chart's title, "vs <what is varied>" (the y axis says occupancy).  Short on purpose: a
    title label is never narrower than its text, so "Occupancy vs threads/block" made the three
    charts ≈ 886 px at least, wider than their view in a 1280-px window (the third was cut off)."""
    return f"vs {unit}" if unit != "bytes" else "vs shared memory"


class OccupancyCharts(QWidget):
    """Occupancy vs threads/block, vs registers/thread, vs shared memory; current point marked."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.layout_widget = pg.GraphicsLayoutWidget(self)
        self.layout_widget.setBackground("w")
        lay.addWidget(self.layout_widget)
        self.plots, self.curves, self.points = {}, {}, {}
        for col, (key, title, unit) in enumerate(AXES):
            p = self.layout_widget.addPlot(row=0, col=col, title=chart_title(unit))
            p.setLabel("bottom", title, units=None if unit != "bytes" else "B")
            p.setLabel("left", "occupancy", units="%")
            p.showGrid(x=True, y=True, alpha=0.25)
            p.setYRange(0, 105, padding=0)
            p.setMouseEnabled(x=True, y=False)
            c = p.plot([], [], pen=CURVE_PEN, stepMode=STEP_MODE)
            pt = pg.ScatterPlotItem(size=11, brush=pg.mkBrush("#d1495b"), pen=pg.mkPen("k"))
            p.addItem(pt)
            self.plots[key], self.curves[key], self.points[key] = p, c, pt
        self.report = None               # report(text): the value under the mouse (status bar)
        for key, title, unit in AXES:
            hover(self.plots[key], lambda x, y, k=key, t=title, u=unit: self.describe(k, t, u, x),
                  lambda text: self.report(text) if self.report is not None else None)

    def describe(self, key: str, title: str, unit: str, x: float) -> str:
        """The step under ``x`` (the first sample at or right of it, :data:`STEP_MODE`):
        '<title> <sample x> <unit>: occupancy <y> %'."""
        xs, ys, _pt = self.data(key)
        if not xs:
            return ""
        i = min(int(np.searchsorted(np.asarray(xs, float), x, side="left")), len(xs) - 1)
        return f"{title} {xs[i]:g} {unit}: occupancy {ys[i]:.1f} %"

    def set_lecture(self, on: bool) -> None:
        self.layout_widget.setBackground("k" if on else "w")
        for key, p in self.plots.items():
            style_plot(p, on)
            self.curves[key].setPen(lecture_pen(on, CURVE_PEN))
            self.points[key].setSize(20 if on else 11)
            self.points[key].setBrush(pg.mkBrush(LECTURE_ACCENT if on else "#d1495b"))
            self.points[key].setPen(pg.mkPen("w" if on else "k", width=2 if on else 1))
            p.getAxis("left").setWidth(70 if on else None)
            unit = dict((k, u) for k, _t, u in AXES)[key]
            # lecture: "vs threads" … — at 16 pt "vs shared memory" made the charts wider than
            # a 1440-px screen's view ("vs shared memor" cut off)
            set_title(p, f"vs {LECTURE_X[key]}" if on else chart_title(unit), on)
            x_title = dict((k, t) for k, t, _u in AXES)[key]
            p.setLabel("bottom", LECTURE_X[key] if on else x_title, units=None if unit != "bytes" else "B")
            p.setYRange(0, 115 if on else 105, padding=0)     # room for the large current-point marker

    def set_data(self, key, xs, ys_frac, cur_x, cur_y_frac) -> None:
        self.curves[key].setData(xs, [100 * y for y in ys_frac])
        self.points[key].setData([cur_x], [100 * cur_y_frac])

    def data(self, key):
        """(x, y %) of a chart's curve and its current point (for tests and CSV export)."""
        c = self.curves[key]
        px, py = self.points[key].getData()
        return list(c.xData), list(c.yData), (float(px[0]), float(py[0]))
