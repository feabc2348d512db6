"""Diagnostic plots of a Cahn–Hilliard run (pyqtgraph): E(t), ⟨φ⟩(t), L(t) log-log with
the fitted coarsening exponent, and the circularly averaged structure factor S(k)."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QVBoxLayout, QWidget

from kernels.cahn_hilliard import diagnostics

from ..log_axis import log_axes
from ..theme import LECTURE_ACCENT, lecture_pen, set_title, style_plot

PEN = pg.mkPen("#1f5fa0", width=2)
FIT_PEN = pg.mkPen("#d1495b", width=2, style=pg.QtCore.Qt.PenStyle.DashLine)


class DiagnosticsPlots(QWidget):
    """Four linked-in-time plots; ``update_history(hist)`` / ``update_structure(k, S)``."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.layout_widget = pg.GraphicsLayoutWidget(self)
        self.layout_widget.setBackground("w")
        lay.addWidget(self.layout_widget)
        L = self.layout_widget
        self.p_energy = L.addPlot(row=0, col=0, title="Free energy E(t)")
        self.p_mean = L.addPlot(row=0, col=1, title="Mean ⟨φ⟩(t)")
        self.p_mean.setToolTip("Conserved for periodic and mirror boundaries; fixed walls exchange material")
        self.p_length = L.addPlot(row=0, col=2, title="Domain size L(t)", axisItems=log_axes())
        self.p_sk = L.addPlot(row=0, col=3, title="Structure factor S(k)")
        for p, xl, yl in ((self.p_energy, "t", "E"), (self.p_mean, "t", "⟨φ⟩"),
                          (self.p_length, "t", "L"), (self.p_sk, "k", "S(k)")):
            p.setLabel("bottom", xl)
            p.setLabel("left", yl)
            p.showGrid(x=True, y=True, alpha=0.25)
            p.setClipToView(True)
            p.setDownsampling(auto=True, mode="peak")
            p.getAxis("left").setWidth(52)
        self.p_mean.getAxis("left").enableAutoSIPrefix(False)
        self.p_length.setLogMode(x=True, y=True)
        self.p_sk.setLogMode(x=False, y=True)
        self.c_energy = self.p_energy.plot(pen=PEN)
        self.c_mean = self.p_mean.plot(pen=PEN)
        self.c_length = self.p_length.plot(pen=PEN)
        self.c_fit = self.p_length.plot(pen=FIT_PEN)
        self.c_sk = self.p_sk.plot(pen=PEN, symbol="o", symbolSize=3, symbolBrush="#1f5fa0")
        self.alpha = float("nan")
        self.lecture = False
        self.fit_label = "fit"
        self.legend = None
        self._build_legend()
        self._fit_time_axes(np.zeros(0))

    def _build_legend(self) -> None:
        """The L(t) legend in the text size of the mode, laid out again (labels resized in place
        would keep the row heights of the largest size).  Top left: L(t) grows to the right on
        log–log axes, so its curve and fit never run through that corner."""
        if self.legend is None:
            self.legend = self.p_length.addLegend(offset=(8, 8), labelTextSize="8pt")
            self.legend.addItem(self.c_length, "L(t) = 2π/k₁")
            self.legend.addItem(self.c_fit, self.fit_label)
        size = "14pt" if self.lecture else "8pt"
        self.legend.opts["labelTextSize"] = size
        # None: pyqtgraph's foreground, as built
        self.legend.opts["labelTextColor"] = pg.mkColor("w") if self.lecture else None
        for _sample, lab in self.legend.items:
            lab.setText(lab.text, size=size, color="w" if self.lecture else None)
        self._relayout_legend()

    def _relayout_legend(self) -> None:
        lay = self.legend.layout
        for i in range(lay.rowCount()):
            lay.setRowMaximumHeight(i, 0)          # forget the old rows' heights …
            lay.setRowMaximumHeight(i, 1e6)
        lay.invalidate()
        lay.activate()
        for _sample, lab in self.legend.items:
            lab.resize(lab.preferredSize())
        self.legend.updateSize()

    def _fit_time_axes(self, t: np.ndarray) -> None:
        """E(t) and ⟨φ⟩(t): t from 0 while there is at most one time (before the first step
        autorange would centre a ±0.5 range on t = 0), else autorange."""
        for p in (self.p_energy, self.p_mean):
            if t.size < 2 or not np.ptp(t) > 0:
                t0 = float(t[0]) if t.size else 0.0
                p.setXRange(t0, t0 + 1.0, padding=0)
            else:
                p.enableAutoRange(axis="x")

    def set_lecture(self, on: bool) -> None:
        """Lecture mode: black background, thick bright curves, large fonts (and back)."""
        self.lecture = bool(on)
        self.layout_widget.setBackground("k" if on else "w")
        for c in (self.c_energy, self.c_mean, self.c_length, self.c_sk):
            c.setPen(lecture_pen(on, PEN))
        self.c_fit.setPen(lecture_pen(on, FIT_PEN, LECTURE_ACCENT, style=pg.QtCore.Qt.PenStyle.DashLine))
        self.c_sk.setSymbolBrush("#ffd60a" if on else "#1f5fa0")
        self.c_sk.setSymbolSize(6 if on else 3)
        for p in (self.p_energy, self.p_mean, self.p_length, self.p_sk):
            style_plot(p, on)
            p.getAxis("left").setWidth(90 if on else 52)
        self._build_legend()

    def _title(self, plot, text):
        set_title(plot, text, self.lecture)

    def clear(self):
        for c in (self.c_energy, self.c_mean, self.c_length, self.c_fit, self.c_sk):
            c.setData([], [])
        self.alpha = float("nan")
        self._title(self.p_length, "Domain size L(t)")
        self._set_fit_label("fit")
        self._fit_time_axes(np.zeros(0))

    def update_history(self, h: dict) -> None:
        t = np.asarray(h["t"], float)
        self._fit_time_axes(t)
        self.c_energy.setData(t, np.asarray(h["energy"], float))
        m = np.asarray(h["mean"], float)
        self.c_mean.setData(t, m)
        if m.size and np.ptp(m) < 1e-4:   # conserved: show it flat instead of magnifying round-off
            c = float(m[-1])
            self.p_mean.setYRange(c - 0.05, c + 0.05, padding=0)
        else:
            self.p_mean.enableAutoRange(axis="y")
        L = np.asarray(h["length"], float)
        ok = (t > 0) & np.isfinite(L) & (L > 0)
        self.c_length.setData(t[ok], L[ok])
        alpha, pref = diagnostics.fit_power_law(t, L)
        self.alpha = alpha
        if math.isfinite(alpha) and ok.sum() >= 3:
            tt = t[ok]
            sel = tt >= 0.2 * tt[-1]
            tf = tt[sel] if sel.sum() >= 2 else tt
            self.c_fit.setData(tf, pref * tf ** alpha)
            label = f"fit L ∝ t^{alpha:.3f}"
            self._title(self.p_length, f"Domain size L(t): α = {alpha:.3f} (LSW: 1/3)")
        else:
            self.c_fit.setData([], [])
            label = "fit (needs more data)"
            self._title(self.p_length, "Domain size L(t)")
        self._set_fit_label(label)

    def _set_fit_label(self, label: str) -> None:
        self.fit_label = label
        for sample, lab in self.legend.items:
            if sample.item is self.c_fit and lab.text != label:
                lab.setText(label)
                self._relayout_legend()

    def update_structure(self, k: np.ndarray, S: np.ndarray) -> None:
        # drop the k → 0 bin (mean removed: round-off only) so it does not squash the log axis
        ok = (k > 0) & (S > (S.max() if S.size else 0) * 1e-10)
        self.c_sk.setData(k[ok], S[ok])

    def has_data(self) -> bool:
        x = self.c_energy.xData
        return x is not None and len(x) > 1
