"""The Cahn–Hilliard *PFHub* tab: benchmark 1 (spinodal decomposition, Jokisaari et al. 2017) run
off the GUI thread with adaptive steps, its free energy F(t) drawn live on log–log axes, the curves
that other codes posted to PFHub loaded from their CSV files as overlays, progress, cancel, and
exports (CSV in the benchmark's ``time,free_energy`` format; the plot as PNG or SVG).  The model,
the stopping rule and the writers are kernels.cahn_hilliard.pfhub; the finished field is shown in
the workspace's view (``CahnHilliardWorkspace.load_run``).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                             QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget)

from kernels.cahn_hilliard import pfhub
from kernels.cahn_hilliard.simulation import CahnHilliard
from kernels.errors import ExplorerError, InvalidParameter

from ..log_axis import log_axes
from ..sweep_runner import SweepRunner, forwards_to_runner
from ..lazy_panel import LazyPanel, lazy_dock

PALETTE = [(214, 39, 40), (31, 119, 180), (255, 127, 14), (44, 160, 44), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127)]
#: seconds between two redraws while a run streams
REDRAW_EVERY = 0.3


@forwards_to_runner
class PFHubTab(QWidget):
    """Controls, a live log–log F(t) plot with posted curves, the summary and the exports; the run /
    cancel / export cycle is a composed :class:`explorer.sweep_runner.SweepRunner` (``runner``; its
    ``rows`` are the (t, F) of the last run).
    ``state()`` / ``restore(dict)`` for the settings.  ``message(text, level)``: notices;
    ``pause_live()``: pause a live run before this one takes the cores / the GPU;
    ``show_run(state_dict, preset)``: show the finished field (the workspace's ``load_run``)."""

    def __init__(self, backend=None, message=None, pause_live=None, show_run=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.message = message
        self.pause_live, self.show_run = pause_live, show_run
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message, settle=self._settle,
                                  run_text="Run benchmark")
        self.runner.ended.connect(self._show_field)
        self.result: pfhub.PFHubResult | None = None
        self.sim: CahnHilliard | None = None
        self.posted: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.cb_variant = QComboBox()
        for name, var in pfhub.VARIANTS.items():
            self.cb_variant.addItem(var.title, name)
            if not var.built:
                item = self.cb_variant.model().item(self.cb_variant.count() - 1)
                item.setEnabled(False)
                item.setToolTip(var.why)
        self.cb_variant.setToolTip("Benchmark 1 variant: 1a periodic square, 1b no-flux square (both 200 × 200 "
                                   "length units, adaptive semi-implicit spectral), 1c the T-shaped domain (masked, "
                                   "adaptive semi-implicit with conjugate gradients). 1d (a sphere) is not built.")
        form.addRow("variant", self.cb_variant)
        opts = QHBoxLayout()
        self.sp_dx = self._spin(0.25, 4.0, 1.0, 3, 0.25, "Grid spacing dx in the benchmark's length units: the "
                                "domain keeps its size, so 1a/1b have 200/dx cells per side (length units)")
        self.sp_tend = self._spin(1.0, 1e7, 1e6 if self._gpu() else 1e4, 0, 1000.0,
                                  "Run until this time t (the benchmark's time units; its horizon is 10⁶), or "
                                  "until the stopping rule holds")
        self.sp_tol = self._spin(1e-6, 0.1, 1e-4, 6, 1e-4, "Adaptive step: largest local error per step, the RMS "
                                 "difference between one step and two half steps (φ units; c = 0.5 + 0.2φ)")
        for text, w in (("dx", self.sp_dx), ("t end", self.sp_tend), ("tolerance", self.sp_tol)):
            opts.addWidget(QLabel(text, toolTip=w.toolTip()))
            opts.addWidget(w)
        opts.addStretch(1)
        form.addRow("run", opts)
        rule = QHBoxLayout()
        self.ck_rule = QCheckBox("stop at equilibrium: |dF/dt| / V <")
        self.ck_rule.setChecked(True)
        self.ck_rule.setToolTip("The benchmark's stopping rule: end the run when the free energy changes by less "
                                "than this per unit time and unit volume (energy per time per area)")
        self.ed_rate = QLineEdit(f"{pfhub.EQUILIBRIUM_RATE:g}", toolTip="Threshold of the stopping rule (energy per "
                                 "unit time per unit area; a positive number such as 1e-14)")
        self.ed_rate.setMaximumWidth(90)
        rule.addWidget(self.ck_rule)
        rule.addWidget(self.ed_rate)
        rule.addStretch(1)
        self.bt_posted = QPushButton("Load posted curve…")
        self.bt_posted.setToolTip("Overlay a free-energy curve another code posted to PFHub: a CSV file with a "
                                  "'time' column and a 'free_energy' (or 'total_energy') column")
        self.bt_posted.clicked.connect(lambda: self.load_posted())
        self.bt_clear = QPushButton("Clear posted")
        self.bt_clear.setToolTip("Remove every posted-curve overlay")
        self.bt_clear.clicked.connect(self.clear_posted)
        rule.addWidget(self.bt_posted)
        rule.addWidget(self.bt_clear)
        form.addRow("rule", rule)
        lay.addLayout(form)
        self.runner.lay_out(lay, "Run the chosen variant off the GUI thread (the live simulation pauses); the "
                            "finished field is shown in the view", csv_tip="Save F(t) of the run as time,free_energy "
                            "(PFHub's format)", png_tip="Save the F(t) plot as PNG (or SVG)", png_text="Export plot…",
                            progress_tip="Simulated time reached, on a log scale")
        self.progress.setRange(0, 1000)
        self.progress.setFormat("t = 0")
        self.plots = pg.GraphicsLayoutWidget()
        self.plot = self.plots.addPlot(row=0, col=0, axisItems=log_axes())
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setLabel("bottom", "time t")
        self.plot.setLabel("left", "free energy F (benchmark units)")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.setTitle("PFHub benchmark 1: F(t)")
        self.plot.addLegend(offset=(5, 5), labelTextSize="8pt")
        self.plot.setToolTip("Total free energy F = ∫ f_chem(c) + κ/2 |∇c|² dA against time, log–log; the thick "
                             "curve is this run, thin ones are loaded posted results")
        self.cursor = pg.TextItem(anchor=(0, 1), color=(60, 60, 60))
        self.plot.addItem(self.cursor, ignoreBounds=True)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse)
        self.plots.setMinimumHeight(280)
        lay.addWidget(self.plots, 1)
        self.lbl.setText("PFHub benchmark 1 (Jokisaari et al., Comput. Mater. Sci. 126 (2017) 139): "
                         "c = 0.5 + 0.2φ, so m = 125, b = u = 0.032, K = 0.08; F in the benchmark's units.")

    # ------------------------------------------------------------ widgets
    @staticmethod
    def _spin(lo, hi, value, decimals, step, tip):
        """A QDoubleSpinBox (decimals first: the range and value are rounded to them)."""
        sp = QDoubleSpinBox(decimals=decimals, minimum=lo, maximum=hi, singleStep=step, toolTip=tip)
        sp.setValue(value)
        return sp

    def _gpu(self) -> bool:
        return bool(self.backend is not None and self.backend.is_gpu)

    def _on_mouse(self, pos):
        vb = self.plot.vb
        if not self.plot.sceneBoundingRect().contains(pos):
            self.cursor.setText("")
            return
        p = vb.mapSceneToView(pos)
        self.cursor.setText(f"t = {10 ** p.x():.4g}, F = {10 ** p.y():.4g}")
        self.cursor.setPos(p.x(), p.y())

    # ------------------------------------------------------------ settings
    def state(self) -> dict:
        return {"variant": self.cb_variant.currentData(), "dx": self.sp_dx.value(), "t_end": self.sp_tend.value(),
                "tolerance": self.sp_tol.value(), "rule": self.ck_rule.isChecked(), "rate": self.ed_rate.text()}

    def restore(self, state) -> None:
        """Set the controls from ``state()``'s dict; unknown or malformed entries are skipped."""
        if not isinstance(state, dict):
            return
        i = self.cb_variant.findData(state.get("variant"))
        if i >= 0 and pfhub.VARIANTS[state["variant"]].built:
            self.cb_variant.setCurrentIndex(i)
        if isinstance(state.get("rate"), str):
            self.ed_rate.setText(state["rate"])
        for key, sp in (("dx", self.sp_dx), ("t_end", self.sp_tend), ("tolerance", self.sp_tol)):
            v = state.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and sp.minimum() <= v <= sp.maximum():
                sp.setValue(float(v))
        if isinstance(state.get("rule"), bool):
            self.ck_rule.setChecked(state["rule"])

    # ------------------------------------------------------------ running
    def params(self):
        """The CHParams of the chosen variant and controls (InvalidParameter / Unsupported on bad input)."""
        return pfhub.preset_params(self.cb_variant.currentData(), dx=self.sp_dx.value(),
                                   tolerance=self.sp_tol.value())

    def stop_rate(self):
        """The rule's threshold, or None when the rule is off (InvalidParameter for a bad number)."""
        if not self.ck_rule.isChecked():
            return None
        try:
            rate = float(self.ed_rate.text())
        except ValueError:
            rate = math.nan
        if not (math.isfinite(rate) and rate > 0):
            raise InvalidParameter(f"the stopping rule's threshold must be a positive number such as 1e-14 "
                                   f"(got {self.ed_rate.text()!r})")
        return rate

    def run(self) -> bool:
        """Check the controls and start the run; False (with a message) on bad input or a running job."""
        if self.job is not None:
            return False
        try:
            p = self.params()
            rate = self.stop_rate()
            sim = CahnHilliard(p, self.backend)
        except ExplorerError as exc:
            self.runner.say(str(exc))
            return False
        if self.pause_live is not None:
            self.pause_live()                 # the live run would share the cores / the GPU
        t_end = self.sp_tend.value()
        self.sim, self.result, self.rows, self._t_end = sim, None, [], t_end
        self.lbl.setText(f"Running {pfhub.VARIANTS[self.cb_variant.currentData()].title} to t = {t_end:g} …")
        self.runner.start("PFHub benchmark 1", lambda cancelled: throttled(
            pfhub.steps(sim, t_end, rate, pfhub.SNAPSHOT_TIMES), cancelled), self.progress.maximum(),
            on_item=self._on_step, counted=False)
        return True

    def _on_step(self, res):
        self.result = res
        t = res.t[-1]
        frac = math.log10(1 + t) / math.log10(1 + self._t_end)
        self.progress.setValue(int(1000 * min(1.0, frac)))
        self.progress.setFormat(f"t = {t:.4g} of {self._t_end:g}")
        self._redraw()

    def _summary(self) -> str:
        res = self.result
        if res is None or len(res.t) < 2:
            return "No run yet."
        self.rows = list(zip(res.t, res.free_energy))
        vals = ", ".join(f"F({t:g}) = {res.energy_at(t):.5g}" for t in pfhub.REPORT_TIMES if t <= res.t[-1])
        return (f"{res.steps:,} accepted steps ({res.rejected:,} rejected) to t = {res.t[-1]:.6g} in "
                f"{res.seconds:.1f} s; F = {res.free_energy[0]:.6g} → {res.free_energy[-1]:.6g}. {vals}. "
                f"Stopped: {res.reason or 'cancelled'}.")

    def _settle(self):
        """The run ended: the last state plotted before the summary."""
        if self.result is not None:
            self._on_step(self.result)

    def _show_field(self, _what, failed):
        """After the run's end: its field in the workspace's view (unless it failed)."""
        if not failed and self.sim is not None and self.show_run is not None and self.result is not None:
            try:
                self.show_run(self.sim.state_dict(), {"name": self.cb_variant.currentText(),
                                                      "paper": "Jokisaari et al. 2017 (PFHub benchmark 1)"})
            except ExplorerError as exc:
                self.runner.say(f"The run finished but its field could not be shown: {exc}")

    # ------------------------------------------------------------ plotting
    def _redraw(self):
        self.plot.clear()
        self.plot.addItem(self.cursor, ignoreBounds=True)
        if self.plot.legend is not None:
            self.plot.legend.clear()
        for i, (name, (t, f)) in enumerate(self.posted.items()):
            ok = (t > 0) & (f > 0)
            self.plot.plot(t[ok], f[ok], pen=pg.mkPen(PALETTE[1 + i % (len(PALETTE) - 1)], width=1.5), name=name)
        res = self.result
        n = 0 if res is None else min(len(res.t), len(res.free_energy))     # the worker may be appending
        if n > 1:
            t, f = np.asarray(res.t[1:n]), np.asarray(res.free_energy[1:n])
            ok = f > 0
            self.plot.plot(t[ok], f[ok], pen=pg.mkPen(PALETTE[0], width=3), name="this run")

    def load_posted(self, path=None):
        """Overlay a posted curve from a CSV file (kernels.cahn_hilliard.pfhub.read_posted_curve); the
        name shown is the file's stem.  Returns the name, or None."""
        path = path or QFileDialog.getOpenFileName(self, "Load posted PFHub curve", "", "CSV (*.csv *.txt)")[0]
        if not path:
            return None
        try:
            t, f = pfhub.read_posted_curve(path)
        except (ExplorerError, OSError) as exc:
            self.runner.say(f"Could not load {path}: {exc}")
            return None
        name = Path(path).stem
        self.posted[name] = (t, f)
        self._redraw()
        self.runner.say(f"Loaded {name}: {len(t):,} points, t = {t.min():g} … {t.max():g}", "info")
        return name

    def clear_posted(self):
        self.posted.clear()
        self._redraw()

    # ------------------------------------------------------------ exports
    def export_csv(self, path=None):
        """F(t) of the last run as ``time,free_energy``; the path written, or None."""
        if self.result is None:
            return self.runner.say("Run the benchmark first.", "warning")
        res = self.result
        return self.runner.export_rows(path, "free_energy_1a.csv", lambda _rows, p: pfhub.write_energy_csv(p, res),
                                "Run the benchmark first.")

    def export_plots(self, path=None):
        """The F(t) plot as PNG (twice the screen size) or SVG; the path written, or None."""
        return self.runner.export_widget(path, "pfhub_free_energy.png", self.plots, "PFHub benchmark 1: F(t)")

    def shutdown(self):
        if self.job is not None:
            self.job.cancel()
            self.job.thread.wait(30000)


def throttled(gen, cancelled, every: float = REDRAW_EVERY):
    """Pass on the items of ``gen`` at most every ``every`` seconds, and always the last one (a run's
    result ends with its ``reason`` set); stop early once ``cancelled()``."""
    last, item = time.perf_counter(), None
    for item in gen:
        if cancelled():
            return
        now = time.perf_counter()
        if item.reason or now - last >= every:
            last = now
            yield item
            if item.reason:
                return


def add_pfhub_dock(ws) -> LazyPanel:
    """The PFHub tab as a dock of the Cahn–Hilliard workspace, tabbed behind Diagnostics; the
    :class:`PFHubTab` is built the first time the dock shows or it is asked for (:func:`lazy_dock`)."""
    return lazy_dock(ws, "PFHub", "ch_pfhub", lambda: PFHubTab(ws.backend, ws.message_bar.show_message,
                                                               pause_live=ws.pause, show_run=ws.load_run))
