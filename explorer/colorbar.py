"""Colour bars for every colour-mapped view, and the value under the mouse.

* :class:`ColorBar` — a Qt widget beside a VisPy canvas (Cahn–Hilliard field, graph view): the
  colormap between the current limits, ticks at round values and a label; it follows the theme
  and the lecture fonts.  :meth:`ColorBar.image` draws the same bar for an exported figure.
* :func:`plot_colorbar` — a ``pyqtgraph.ColorBarItem`` inside a PlotItem (distance matrix, Flint
  heatmap, the occupancy case-study mesh), so it is part of the plot's PNG/SVG export too.
* :func:`hover` — calls ``report(text)`` with what lies under the mouse in a pyqtgraph plot (the
  main window shows it in the status bar).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from PyQt6.QtCore import QPointF, QRectF, QSize
from PyQt6.QtGui import QColor, QFontMetricsF, QImage, QLinearGradient, QPainter, QPen
from PyQt6.QtWidgets import QSizePolicy, QWidget
import pyqtgraph as pg
from vispy.color import get_colormap

BAR_PX = 16          # width of the gradient


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round values (1, 2, 2.5, 5 × 10^k steps) between lo and hi, both included if round."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, v = [], first
    while v <= hi + 1e-9 * step:
        out.append(0.0 if abs(v) < 1e-12 * step else v)
        v += step
    return out


def fmt(v: float) -> str:
    """A tick / readout number: short, no trailing zeros."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.2e}"
    return f"{v:.4g}"


def lut_of(cmap) -> np.ndarray:
    """(256, 4) float RGBA in [0, 1] of a VisPy Colormap, a pyqtgraph ColorMap or a name of either."""
    if isinstance(cmap, str):
        try:
            cmap = pg.colormap.get(cmap)
        except Exception:                                  # a VisPy-only name (e.g. "coolwarm")
            cmap = get_colormap(cmap)
    x = np.linspace(0.0, 1.0, 256)
    if hasattr(cmap, "getLookupTable"):                    # pyqtgraph
        lut = np.asarray(cmap.getLookupTable(0.0, 1.0, 256, alpha=True), float) / 255.0
    else:                                                  # VisPy
        lut = np.asarray(cmap.map(x), float)
    if lut.shape[1] == 3:
        lut = np.concatenate([lut, np.ones((len(lut), 1))], axis=1)
    return np.clip(lut, 0.0, 1.0)


def paint_bar(p: QPainter, rect: QRectF, lut: np.ndarray, lo: float, hi: float, label: str,
              text: QColor, font=None) -> None:
    """A vertical bar (``lut`` from bottom = lo to top = hi) with ticks and a rotated label in
    ``rect`` (bar at the left, tick labels, then the label)."""
    if font is not None:
        p.setFont(font)
    fm = QFontMetricsF(p.font())
    pad = fm.height() / 2
    bar = QRectF(rect.left() + 2, rect.top() + pad, BAR_PX, max(4.0, rect.height() - 2 * pad))
    g = QLinearGradient(bar.bottomLeft(), bar.topLeft())
    for i in range(0, len(lut), max(1, len(lut) // 64)):
        r, gg, b, a = lut[i]
        g.setColorAt(i / (len(lut) - 1), QColor.fromRgbF(r, gg, b, 1.0))
    r, gg, b, a = lut[-1]
    g.setColorAt(1.0, QColor.fromRgbF(r, gg, b, 1.0))
    p.fillRect(bar, g)
    p.setPen(QPen(text, 1))
    p.drawRect(bar)
    x_text = bar.right() + 6
    if hi > lo:
        for v in nice_ticks(lo, hi):
            y = bar.bottom() - (v - lo) / (hi - lo) * bar.height()
            p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y))
            p.drawText(QPointF(x_text, y + fm.ascent() / 2 - 1), fmt(v))
    else:
        p.drawText(QPointF(x_text, bar.center().y()), fmt(lo))
    if label:
        p.save()
        p.translate(rect.right() - fm.descent() - 2, bar.center().y())
        p.rotate(-90)
        w = fm.horizontalAdvance(label)
        p.drawText(QPointF(-w / 2, 0), label)
        p.restore()


class ColorBar(QWidget):
    """A vertical colour scale beside a canvas: ``set_colormap``, ``set_range``, ``set_label``."""

    def __init__(self, label: str = "", parent=None):
        super().__init__(parent)
        self.lut = lut_of("viridis")
        self.lo, self.hi = 0.0, 1.0
        self.label = label
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.setToolTip("Colour scale of the view")

    def set_colormap(self, cmap) -> None:
        self.lut = lut_of(cmap)
        self.update()

    def set_range(self, lo: float, hi: float) -> None:
        lo, hi = float(lo), float(hi)
        if (lo, hi) != (self.lo, self.hi):
            self.lo, self.hi = lo, hi
            self.updateGeometry()
            self.update()

    def set_label(self, text: str) -> None:
        if text != self.label:
            self.label = text
            self.updateGeometry()
            self.update()

    def range(self) -> tuple[float, float]:
        return self.lo, self.hi

    def _width(self, fm: QFontMetricsF) -> int:
        labels = [fmt(v) for v in nice_ticks(self.lo, self.hi)] or [fmt(self.lo)]
        w = max(fm.horizontalAdvance(t) for t in labels)
        return int(2 + BAR_PX + 6 + w + 6 + (fm.height() + 4 if self.label else 0))

    def sizeHint(self) -> QSize:
        return QSize(self._width(QFontMetricsF(self.font())), 200)

    def minimumSizeHint(self) -> QSize:
        return QSize(self._width(QFontMetricsF(self.font())), 80)

    def paintEvent(self, _ev) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        paint_bar(p, QRectF(self.rect()), self.lut, self.lo, self.hi, self.label,
                  self.palette().windowText().color())
        p.end()

    def image(self, height: int, scale: float = 1.0, background: str = "white", text: str = "#222222") -> QImage:
        """The bar as an image ``height`` pixels tall for a figure export, drawn at ``scale`` × its
        on-screen size (fonts and bar width scale together), on ``background``."""
        lw = self._width(QFontMetricsF(self.font())) + 8
        img = QImage(max(1, int(math.ceil(lw * scale))), max(20, int(height)), QImage.Format.Format_ARGB32)
        img.fill(QColor(background))
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.scale(scale, scale)
        paint_bar(p, QRectF(4, 0, lw - 8, img.height() / scale), self.lut, self.lo, self.hi, self.label,
                  QColor(text), self.font())
        p.end()
        return img


def with_colorbar(img: QImage, bar: ColorBar | None, scale: float = 1.0) -> QImage:
    """``img`` with ``bar`` drawn to its right (a figure export of a colour-mapped canvas)."""
    if bar is None or not bar.isVisibleTo(bar.parentWidget() or bar):
        return img
    side = bar.image(img.height(), scale)
    out = QImage(img.width() + side.width(), img.height(), QImage.Format.Format_ARGB32)
    out.fill(QColor("white"))
    p = QPainter(out)
    p.drawImage(0, 0, img)
    p.drawImage(img.width(), 0, side)
    p.end()
    return out


def plot_colorbar(plot_item, cmap: str = "viridis", label: str = ""):
    """A non-interactive ``pyqtgraph.ColorBarItem`` at the right of ``plot_item`` (levels set with
    ``bar.setLevels((lo, hi))``); exported with the plot."""
    bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(cmap), interactive=False, width=14,
                          label=label or None, rounding=1e-12, pen="#444444")
    plot_item.layout.addItem(bar, 2, 5)
    return bar


def set_bar_label(bar, text: str) -> None:
    """The label of a :func:`plot_colorbar` (pyqtgraph draws it on the axis opposite the ticks)."""
    bar.getAxis("bottom" if bar.horizontal else "left").setLabel(text)


def bar_axes(bar) -> list:
    """The tick axis and the label axis of a colour bar (to style for lecture mode)."""
    return [bar.axis, bar.getAxis("bottom" if bar.horizontal else "left")]


def hover(plot, describe: Callable[[float, float], str], report: Callable[[str], object]):
    """Report ``describe(x, y)`` (data coordinates) while the mouse moves over the axes of ``plot``
    (a PlotWidget or a PlotItem), and "" when it leaves them (or ``describe`` has nothing to say)."""
    pi = plot.getPlotItem() if hasattr(plot, "getPlotItem") else plot
    inside = [False]

    def moved(pos):
        vb = pi.vb
        if not vb.sceneBoundingRect().contains(pos):
            if inside[0]:                  # several plots share a scene: only the one left clears
                inside[0] = False
                report("")
            return
        inside[0] = True
        p = vb.mapSceneToView(pos)
        try:
            report(describe(float(p.x()), float(p.y())) or "")
        except (IndexError, ValueError, TypeError):
            report("")

    pi.scene().sigMouseMoved.connect(moved)
    return moved
