"""The Occupancy workspace's charts: occupancy vs threads per block, registers per thread and shared
memory, the current launch marked; lecture styling; the curve point under the mouse."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QVBoxLayout, QWidget

from ..colorbar import hover

CURVE_PEN = pg.mkPen("#1f5fa0", width=2)
AXES = (("threads", "Threads per block", "threads/block"), ("regs", "Registers per thread", "registers/thread"),
        ("smem", "Shared memory per block", "bytes"))


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
            p = self.layout_widget.addPlot(row=0, col=col, title=f"Occupancy vs {unit if unit != 'bytes' else 'shared memory'}")
            p.setLabel("bottom", title, units=None if unit != "bytes" else "B")
            p.setLabel("left", "occupancy", units="%")
            p.showGrid(x=True, y=True, alpha=0.25)
            p.setYRange(0, 105, padding=0)
            p.setMouseEnabled(x=True, y=False)
            c = p.plot([], [], pen=CURVE_PEN, stepMode=None)
            pt = pg.ScatterPlotItem(size=11, brush=pg.mkBrush("#d1495b"), pen=pg.mkPen("k"))
            p.addItem(pt)
            self.plots[key], self.curves[key], self.points[key] = p, c, pt
        self.report = None               # report(text): the value under the mouse (status bar)
        for key, title, unit in AXES:
            hover(self.plots[key], lambda x, y, k=key, t=title, u=unit: self.describe(k, t, u, x),
                  lambda text: self.report(text) if self.report is not None else None)

    def describe(self, key: str, title: str, unit: str, x: float) -> str:
        """The curve point nearest ``x``: '<title> <x> <unit>: occupancy <y> %'."""
        xs, ys, _pt = self.data(key)
        if not xs:
            return ""
        i = int(np.argmin(np.abs(np.asarray(xs, float) - x)))
        return f"{title} {xs[i]:g} {unit}: occupancy {ys[i]:.1f} %"

    def set_lecture(self, on: bool) -> None:
        from ..theme import LECTURE_ACCENT, lecture_pen, style_plot
        self.layout_widget.setBackground("k" if on else "w")
        for key, p in self.plots.items():
            style_plot(p, on)
            self.curves[key].setPen(lecture_pen(on, CURVE_PEN))
            self.points[key].setSize(20 if on else 11)
            self.points[key].setBrush(pg.mkBrush(LECTURE_ACCENT if on else "#d1495b"))
            self.points[key].setPen(pg.mkPen("w" if on else "k", width=2 if on else 1))
            p.getAxis("left").setWidth(70 if on else None)
            unit = dict((k, u) for k, _t, u in AXES)[key]
            title = (f"vs {unit}" if unit != "bytes" else "vs shared memory") if on else \
                f"Occupancy vs {unit if unit != 'bytes' else 'shared memory'}"
            from ..theme import set_title
            set_title(p, title, on)

    def set_data(self, key, xs, ys_frac, cur_x, cur_y_frac) -> None:
        self.curves[key].setData(xs, [100 * y for y in ys_frac])
        self.points[key].setData([cur_x], [100 * cur_y_frac])

    def data(self, key):
        """(x, y %) of a chart's curve and its current point (for tests and CSV export)."""
        c = self.curves[key]
        px, py = self.points[key].getData()
        return list(c.xData), list(c.yData), (float(px[0]), float(py[0]))
