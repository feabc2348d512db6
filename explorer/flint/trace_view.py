"""The traces of a Flint run as one part, :class:`TraceView`: the recorded data (a
:class:`~explorer.flint.traces.TraceBuffer`), the trace curves (viridis, or one colour per recorded
state with a legend; thick and bright in lecture mode), the cell × time heatmap of a line/ring with
its colour bar, the value under the mouse, and the traces export.

It owns everything it draws: :meth:`TraceView.begin` prepares a run, :meth:`TraceView.append` takes
its chunks, a 50 ms timer redraws while :meth:`TraceView.set_live` is on (pyqtgraph peak
downsampling, clip to view).  Views only: the numbers are the runtimes' (``kernels.flint``).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QTimer, pyqtSignal
from PyQt6.QtWidgets import QTabWidget

from kernels.flint.io import write_csv, write_npz

from ..colorbar import bar_axes, hover, plot_colorbar, set_bar_label
from ..export import Figure, write_file
from ..theme import LECTURE_LINE, LECTURE_WIDTH, style_axis, style_plot
from .traces import TraceBuffer

MAX_TRACES = 64          # traces drawn (members/cells evenly spaced); all cells go to the heatmap
MAX_EVENT_MARKERS = 500  # event firings marked on the time axis (the first ones; the count is said)
EVENT_PEN = pg.mkPen((214, 96, 0, 170), width=1, style=pg.QtCore.Qt.PenStyle.DashLine)

MODEL_TIME = "model time units"    #: the time axis label of a model without a declared time unit


class TraceView(QTabWidget):
    """Tabs "Traces" and "Heatmap (cells)" (the workspace may add more).  ``cursor(text)``: the value
    under the mouse, "" when it leaves."""
    cursor = pyqtSignal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.traces = TraceBuffer()
        self.record_names: list[str] = []
        self.units: dict = {}
        self.time_unit = "ms"
        self.curves: list = []
        self.show_idx = np.zeros(0, dtype=int)
        self._pens: list = []            # the curves' normal pens (lecture mode swaps them)
        self._lecture = False
        self._dirty = False
        self._bar_state = None
        self._cursor_text = None
        self.event_times = np.zeros(0)     # times events fired in the shown run (member 0), marked
        self.event_markers: list = []
        self.plot = pg.PlotWidget(background="w")
        self.plot.getPlotItem().setDownsampling(auto=True, mode="peak")
        self.plot.getPlotItem().setClipToView(True)
        self.addTab(self.plot, "Traces")
        self.heat_view = pg.PlotWidget(background="w")
        self.heat = pg.ImageItem()
        self.heat.setColorMap(pg.colormap.get("viridis"))
        self.heat_view.addItem(self.heat)
        self.heat_view.setLabel("left", "cell")
        self.heat_bar = plot_colorbar(self.heat_view.getPlotItem(), "viridis")
        self.addTab(self.heat_view, "Heatmap (cells)")
        self.set_time_unit("ms")
        hover(self.plot, self.describe_trace, self._report)
        hover(self.heat_view, self.describe_heat, self._report)
        self.timer = QTimer(self)
        self.timer.setInterval(50)
        self.timer.timeout.connect(self.refresh)
        self.currentChanged.connect(lambda _i: self.refresh(force=True))    # the tab now in front: up to date

    # ------------------------------------------------------------------ data
    @property
    def times(self) -> np.ndarray:
        """Output times of the last run (a view of the trace buffer)."""
        return self.traces.times

    @property
    def samples(self) -> np.ndarray:
        """Recorded values (points, variables, members/cells) of the last run."""
        return self.traces.samples

    def set_time_unit(self, unit: str) -> None:
        """The time axis' unit: the model's ("ms", "s", "min", …), or :data:`MODEL_TIME` for a model
        that declares none (SBML without ``timeUnits``, SBML reference mode)."""
        self.time_unit = unit
        for pw in (self.plot, self.heat_view):
            pw.setLabel("bottom", f"t ({unit})")

    def begin(self, record_names: list[str], n: int, units: dict | None = None) -> None:
        """Empty traces for a run recording ``record_names`` of ``n`` members/cells: one curve per shown
        member/cell (at most :data:`MAX_TRACES`, viridis), or, with several states (one member), one
        per state with a legend; no event markers."""
        self.record_names = list(record_names)
        self.units = dict(units or {})
        self.traces.reset(len(self.record_names), n)
        self._make_curves(n)
        self.event_markers, self.event_times = [], np.zeros(0)     # plot.clear() took the markers

    def append(self, t, y, at: int | None = None) -> None:
        """Output points of the running run (``at``: overwrite from that index on)."""
        if len(t):
            self.traces.append(t, y, at=at)
            self._dirty = True

    def restore(self, t, y, record_names: list[str], units: dict | None = None) -> None:
        """Show saved traces (a session): ``y`` (points, variables, members/cells)."""
        self.record_names = list(record_names)
        self.units = dict(units or {})
        self.traces.set(t, y)
        if self.samples.ndim == 3 and self.samples.shape[0]:
            self._make_curves(self.samples.shape[2])
            self.event_markers = []
            self.refresh(force=True)

    def set_events(self, times, label: str = "events") -> None:
        """Mark the times events fired (ascending; the first :data:`MAX_EVENT_MARKERS`) on the time axis
        of the trace plot, as dashed vertical lines; an empty list removes the markers."""
        for m in self.event_markers:
            self.plot.removeItem(m)
        self.event_times = np.asarray(times, dtype=float).reshape(-1)
        shown = self.event_times[:MAX_EVENT_MARKERS]
        self.event_markers = []
        for i, t in enumerate(shown):
            line = pg.InfiniteLine(pos=float(t), angle=90, movable=False, pen=EVENT_PEN,
                                   label=label if i == 0 else None,
                                   labelOpts={"position": 0.95, "color": (214, 96, 0), "anchors": [(0, 0), (0, 0)]})
            line.setZValue(-5)                 # under the traces
            self.plot.addItem(line, ignoreBounds=True)
            self.event_markers.append(line)

    def set_live(self, on: bool) -> None:
        """Redraw every 50 ms while a run streams (and once more at its end)."""
        if on:
            self.timer.start()
        else:
            self.timer.stop()
            self.refresh(force=True)

    # ------------------------------------------------------------------ drawing
    def _make_curves(self, n: int) -> None:
        self.plot.clear()
        legend = self.plot.getPlotItem().legend
        if legend is not None:
            legend.clear()
        names = self.record_names or [""]
        if len(names) > 1:
            if legend is None:
                self.plot.addLegend(offset=(10, 10))
            self.show_idx = np.array([0])
            self._pens = [pg.mkPen(pg.intColor(j, len(names)), width=1.5) for j in range(len(names))]
            self.curves = [self.plot.plot(pen=pen, name=nm) for pen, nm in zip(self._pens, names)]
            self.plot.setLabel("left", "recorded states", units=self.units.get(names[0], ""))
        else:
            self.show_idx = np.unique(np.linspace(0, n - 1, min(n, MAX_TRACES)).astype(int))
            cmap = pg.colormap.get("viridis")
            m = max(1, len(self.show_idx) - 1)
            self._pens = [pg.mkPen(cmap.map(i / m, "qcolor"), width=1.5) for i in range(len(self.show_idx))]
            self.curves = [self.plot.plot(pen=pen) for pen in self._pens]
            self.plot.setLabel("left", names[0], units=self.units.get(names[0], ""))
        self._style_curves()

    def _style_curves(self) -> None:
        """Lecture mode: thick bright traces (one: the lecture yellow; several: the bright end of
        viridis, distinct colours for several states) and a white legend; else the normal pens."""
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

    def set_lecture(self, on: bool) -> None:
        """Black plots with white axes and large fonts, thick traces."""
        self._lecture = bool(on)
        for pw in (self.plot, self.heat_view):
            pw.setBackground("k" if on else "w")
            style_plot(pw.getPlotItem(), on)
        for ax in bar_axes(self.heat_bar):
            style_axis(ax, on)
        self._style_curves()

    def refresh(self, force: bool = False) -> None:
        """Redraw the traces and the heatmap with the data so far.  While a run streams (the 50 ms timer,
        ``force`` False) only the tab in front is redrawn: redrawing dozens of long curves behind the
        heatmap held the GUI thread, and with it the run's thread, for most of a run.  A forced refresh
        (a run's end, a restored session, a change of tab) redraws both."""
        if not (self._dirty or force) or self.samples.shape[0] == 0:
            return
        self._dirty = False
        traces = force or self.currentWidget() is self.plot
        if self.samples.shape[1] > 1:                       # several states of one member
            if traces:
                for j, c in enumerate(self.curves):
                    c.setData(self.times, self.samples[:, j, 0])
            return
        y = self.samples[:, 0, :]
        if traces:
            for c, i in zip(self.curves, self.show_idx):
                c.setData(self.times, y[:, i])
        if self.samples.shape[2] > 1 and (force or self.currentWidget() is not self.plot):
            self._draw_heat(y)

    def _draw_heat(self, y) -> None:
        self.heat.setImage(y, autoLevels=True)
        lo, hi = (float(v) for v in self.heat.getLevels())
        name = self.record_names[0] if self.record_names else ""
        unit = self.units.get(name, "")
        bar = ((lo, hi if hi > lo else lo + 1.0), f"{name} ({unit})" if unit else name)
        if bar != self._bar_state:                          # re-laid out only on a change
            self._bar_state = bar
            self.heat_bar.setLevels(bar[0])
            set_bar_label(self.heat_bar, bar[1])
        t = np.asarray(self.times, dtype=float)
        if t.size > 1:                    # image x in model time: sample k covers [t_k − Δ, t_k]
            dt_s = (t[-1] - t[0]) / (t.size - 1)
            self.heat.setRect(pg.QtCore.QRectF(t[0] - dt_s, 0.0, t[-1] - t[0] + dt_s, y.shape[1]))

    # ------------------------------------------------------------------ readout
    def _report(self, text: str) -> None:
        if text != self._cursor_text:
            self._cursor_text = text
            self.cursor.emit(text)

    def _value_text(self, name: str, v: float) -> str:
        unit = self.units.get(name, "")
        return f"{name} = {v:.5g}{' ' + unit if unit else ''}"

    def _t_text(self, t: float) -> str:
        return f"t = {t:.5g}{' ms' if self.time_unit == 'ms' else ''}"

    def describe_trace(self, x: float, y: float) -> str:
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
        if not vals:
            return ""
        _d, name, v, where = min(vals, key=lambda r: r[0])
        return f"{self._t_text(t[i])}: {self._value_text(name, v)}{where}"

    def describe_heat(self, x: float, y: float) -> str:
        t, s = self.times, self.samples
        if not len(t) or s.shape[2] < 2:
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
        k = int(np.floor(y))
        if not 0 <= k < s.shape[2]:
            return ""
        name = self.record_names[0] if self.record_names else ""
        return f"{self._t_text(t[i])}, cell {k}: {self._value_text(name, s[i, 0, k])}"

    # ------------------------------------------------------------------ exports
    def write_traces(self, path: str):
        """The recorded traces as CSV (one column per variable and cell) or NPZ, by the suffix; the
        path written (``explorer.export.write_file``: refused suffixes and failures raise)."""
        t, y, names = self.times.copy(), self.samples.copy(), list(self.record_names)

        def write(tmp):
            (write_npz if tmp.suffix.lower() == ".npz" else write_csv)(tmp, t, y, names)
        return write_file(path, (".csv", ".npz"), write, "traces file")

    def figures(self) -> list[Figure]:
        return [Figure("Traces", widget=self.plot), Figure("Heatmap (cells)", widget=self.heat_view)]
