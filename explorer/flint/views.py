"""The views of the Flint workspace: trace curves (viridis, or one colour per recorded state; thick
and bright in lecture mode), the heatmap of a line/ring with its colour bar, the value under the
mouse, and the figure / trace exports.  A mixin of :class:`explorer.flint.workspace.FlintWorkspace`
(it uses the workspace's plots and recorded data)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QFileDialog

from kernels.flint.io import write_csv, write_npz

from ..colorbar import set_bar_label
from ..export import Figure, guarded, save_figure, write_file

MAX_TRACES = 64          # traces drawn (members/cells evenly spaced); all cells go to the heatmap


class TraceViewsMixin:
    """Curves, heatmap, readout and exports of the recorded traces."""

    def _make_curves(self, n: int, units: dict | None = None) -> None:
        """Curves for the next run: one per shown member/cell (viridis), or, with several recorded
        states (one member), one per state with a legend."""
        self.plot.clear()
        legend = self.plot.getPlotItem().legend
        if legend is not None:
            legend.clear()
        units = units or {}
        names = self.record_names or [""]
        if len(names) > 1:
            if legend is None:
                self.plot.addLegend(offset=(10, 10))
            self.show_idx = np.array([0])
            self._pens = [pg.mkPen(pg.intColor(j, len(names)), width=1.5) for j in range(len(names))]
            self.curves = [self.plot.plot(pen=pen, name=nm) for pen, nm in zip(self._pens, names)]
            self.plot.setLabel("left", "recorded states", units=units.get(names[0], ""))
        else:
            self.show_idx = np.unique(np.linspace(0, n - 1, min(n, MAX_TRACES)).astype(int))
            cmap = pg.colormap.get("viridis")
            m = max(1, len(self.show_idx) - 1)
            self._pens = [pg.mkPen(cmap.map(i / m, "qcolor"), width=1.5) for i in range(len(self.show_idx))]
            self.curves = [self.plot.plot(pen=pen) for pen in self._pens]
            self.plot.setLabel("left", names[0], units=units.get(names[0], ""))
        self._style_curves()

    def _style_curves(self) -> None:
        """Lecture mode: thick bright traces (one: the lecture yellow; several: the bright end of
        viridis, distinct colours for several states) and a white legend; else the normal pens."""
        from ..theme import LECTURE_LINE, LECTURE_WIDTH
        on, k = self._lecture, len(self.curves)
        several_states = len(self.record_names) > 1
        for i, (c, pen) in enumerate(zip(self.curves, self._pens)):
            if not on:
                c.setPen(pen)
            elif k == 1:
                c.setPen(pg.mkPen(LECTURE_LINE, width=LECTURE_WIDTH))
            elif several_states:
                c.setPen(pg.mkPen(pen.color(), width=LECTURE_WIDTH - 1))
            else:
                col = pg.colormap.get("viridis").map(0.35 + 0.65 * i / (k - 1), "qcolor")
                c.setPen(pg.mkPen(col, width=LECTURE_WIDTH - 1))
        legend = self.plot.getPlotItem().legend
        if legend is not None:
            for _sample, lab in legend.items:
                lab.setText(lab.text, color="w" if on else None, size="14pt" if on else "9pt")

    def _refresh(self, force: bool = False) -> None:
        if not (self._dirty or force) or self.samples.shape[0] == 0:
            return
        self._dirty = False
        if self.samples.shape[1] > 1:                       # several states of one member
            for j, c in enumerate(self.curves):
                c.setData(self.times, self.samples[:, j, 0])
            return
        y = self.samples[:, 0, :]
        for c, i in zip(self.curves, self.show_idx):
            c.setData(self.times, y[:, i])
        if self.samples.shape[2] > 1:
            self.heat.setImage(y, autoLevels=True)
            lo, hi = (float(v) for v in self.heat.getLevels())
            name = self.record_names[0] if self.record_names else ""
            unit = self._unit(name)
            bar = ((lo, hi if hi > lo else lo + 1.0), f"{name} ({unit})" if unit else name)
            if bar != getattr(self, "_heat_bar_state", None):      # re-laid out only on a change
                self._heat_bar_state = bar
                self.heat_bar.setLevels(bar[0])
                set_bar_label(self.heat_bar, bar[1])
            t = np.asarray(self.times, dtype=float)
            if t.size > 1:                    # image x in model time: sample k covers [t_k − Δ, t_k]
                dt_s = (t[-1] - t[0]) / (t.size - 1)
                self.heat.setRect(pg.QtCore.QRectF(t[0] - dt_s, 0.0, t[-1] - t[0] + dt_s, y.shape[1]))

    def _unit(self, name: str) -> str:
        model = self.cfg.get("model") if isinstance(getattr(self, "cfg", None), dict) else None
        units = getattr(model or self.model, "units", None) or {}
        return units.get(name, "")

    def _report_cursor(self, text: str) -> None:
        if text != getattr(self, "_cursor_text", None):
            self._cursor_text = text
            self.status_changed.emit({"cursor": text})

    def _time_unit(self) -> str:
        return "" if self.sbml is not None else " ms"

    def _describe_trace(self, x: float, y: float) -> str:
        """The recorded value nearest the mouse: the sample at that time of the closest trace."""
        t, s = self.times, self.samples
        if not len(t):
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
        if i > 0 and abs(t[i - 1] - x) < abs(t[i] - x):
            i -= 1
        if s.shape[1] > 1:                                   # several states of one member
            vals = [(abs(s[i, j, 0] - y), self.record_names[j], s[i, j, 0], "") for j in range(s.shape[1])]
        else:
            vals = [(abs(s[i, 0, k] - y), self.record_names[0] if self.record_names else "", s[i, 0, k],
                     f" (member/cell {k})" if s.shape[2] > 1 else "") for k in self.show_idx if k < s.shape[2]]
        _d, name, v, where = min(vals, key=lambda r: r[0])
        unit = self._unit(name)
        return f"t = {t[i]:.5g}{self._time_unit()}: {name} = {v:.5g}{' ' + unit if unit else ''}{where}"

    def _describe_heat(self, x: float, y: float) -> str:
        t, s = self.times, self.samples
        if not len(t) or s.shape[2] < 2:
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
        k = int(np.floor(y))
        if not 0 <= k < s.shape[2]:
            return ""
        name = self.record_names[0] if self.record_names else ""
        unit = self._unit(name)
        return f"t = {t[i]:.5g}{self._time_unit()}, cell {k}: {name} = {s[i, 0, k]:.5g}{' ' + unit if unit else ''}"

    def _written(self, what: str, fn, ok_text: str):
        out = guarded(self.message.show_message, what, fn)
        if out is not None:
            self.message.show_message(ok_text.format(out), "info")
        return out

    def export_plots(self, path: str | None = None):
        """The recorded traces as CSV (one column per variable and cell) or NPZ; the path written."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export traces", "traces.csv", "CSV (*.csv);;NumPy (*.npz)")
            if not path:
                return None
        t, y, names = self.times.copy(), self.samples.copy(), list(self.record_names)

        def write(tmp):
            (write_npz if tmp.suffix.lower() == ".npz" else write_csv)(tmp, t, y, names)
        return self._written(f"write {path}", lambda: write_file(path, (".csv", ".npz"), write, "traces file"),
                             "wrote {}")

    def export_image(self, path: str | None = None):
        """The plot of the current tab (traces, heatmap or DAG levels) as PNG (twice the screen size)
        or SVG; the path written."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export figure", "flint.png", "PNG (*.png);;SVG (*.svg)")
            if not path:
                return None
        figs = self.figure_targets()
        cur = self.tabs.currentWidget()
        fig = next((f for f in figs if f.widget is cur or f.widget is getattr(cur, "levels", None)), figs[0])
        return self._written(f"write {path}", lambda: save_figure(fig, path, scale=2.0, footer=""), "wrote {}")

    def figure_targets(self) -> list[Figure]:
        """Views for Export figure / Copy figure / Record movie (main window)."""
        return [Figure("Traces", widget=self.plot), Figure("Heatmap (cells)", widget=self.heat_view),
                Figure("DAG levels (compiler)", widget=self.compiler.levels)]
