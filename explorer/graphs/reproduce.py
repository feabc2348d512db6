"""The "Reproduce" tab: paper 000's mean-path-vs-N experiment and paper 001's clustering
levels, run off the GUI thread and plotted live (compute in kernels.graphs.reproduce)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QProgressBar, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.graphs import reproduce as rp

from .worker import Job

COLORS = {"alpha-ring": (31, 119, 180), "alpha": (214, 39, 40), "ba": (44, 160, 44)}


class SweepJob(Job):
    """A Job that also streams each finished instance."""

    row = pyqtSignal(object)


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(s) for s in text.replace(";", ",").split(",") if s.strip()})
    except ValueError:
        raise InvalidParameter(f"sizes must be whole numbers separated by commas (got {text!r})") from None
    if len(sizes) < 2:
        raise InvalidParameter("give at least two sizes N to fit an exponent")
    if sizes[0] < 20 or sizes[-1] > 60000:
        raise InvalidParameter("sizes must lie between 20 and 60 000 vertices")
    return sizes


class ReproducePanel(QWidget):
    """Controls + two live log–log plots (mean path vs N, APSP time vs N) + export."""

    finished = pyqtSignal()

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.message = message            # callable(text, level) for the workspace's message bar
        self.rows: list[rp.SweepRow] = []
        self.job = None
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.ed_sizes = QLineEdit("500, 1000, 2000, 4000" if not backend.is_gpu else "1000, 2000, 5000, 10000, 20000")
        self.ed_sizes.setToolTip("Vertex counts N of the sweep (paper 000: 1 000 … 30 000)")
        self.sp_inst = QSpinBox(); self.sp_inst.setRange(1, 20); self.sp_inst.setValue(3 if not backend.is_gpu else 10)
        self.sp_inst.setToolTip("Instances per N (paper 000: 10); times are normalised per instance by Eq. 3")
        self.cb_method = QComboBox()
        self.cb_method.addItems(["gpu-bfs", "sssp", "cpu", "cpu-sampled"] if backend.is_gpu else ["cpu", "cpu-sampled"])
        self.cb_method.setToolTip("APSP method timed for each instance (GPU BFS = paper 000 kernel 7); "
                                  f"cpu-sampled estimates the mean path from {rp.SAMPLED_SOURCES} random BFS "
                                  "sources — paper 000's full range 1 000 … 30 000 in seconds")
        types_row = QHBoxLayout()
        self.ck_types = {}
        for t, label in rp.TYPE_LABELS.items():
            ck = QCheckBox(label.split(",")[0] if t != "ba" else "(3) BA")
            ck.setChecked(True)
            ck.setToolTip(f"{label}; paper 000 Fig. 14 exponent {rp.PAPER_EXPONENTS[t]}")
            self.ck_types[t] = ck
            types_row.addWidget(ck)
        form.addRow("sizes N", self.ed_sizes)
        form.addRow("instances", self.sp_inst)
        form.addRow("APSP", self.cb_method)
        form.addRow("graph types", types_row)
        lay.addLayout(form)
        row = QHBoxLayout()
        self.bt_run = QPushButton("Run sweep"); self.bt_run.clicked.connect(self.run)
        self.bt_cancel = QPushButton("Cancel"); self.bt_cancel.setEnabled(False); self.bt_cancel.clicked.connect(self.cancel)
        self.bt_csv = QPushButton("Export CSV…"); self.bt_csv.clicked.connect(lambda: self.export_csv())
        self.bt_png = QPushButton("Export plots…"); self.bt_png.clicked.connect(lambda: self.export_plots())
        for b in (self.bt_run, self.bt_cancel, self.bt_csv, self.bt_png):
            row.addWidget(b)
        lay.addLayout(row)
        self.progress = QProgressBar(); self.progress.setRange(0, 1000)
        lay.addWidget(self.progress)
        self.lbl = QLabel("Paper 000 Fig. 14: mean path ∝ N^0.995 (1), N^0.223 (2), N^0.106 (3).")
        self.lbl.setWordWrap(True)
        lay.addWidget(self.lbl)
        self.plots = pg.GraphicsLayoutWidget()
        self.p_len = self.plots.addPlot(row=0, col=0, title="mean shortest path vs N")
        self.p_time = self.plots.addPlot(row=1, col=0, title="APSP time vs N (Eq. 3 normalised)")
        for p, ylab in ((self.p_len, "mean path (hops)"), (self.p_time, "seconds")):
            p.setLogMode(x=True, y=True)
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "N (vertices)")
            p.setLabel("left", ylab)
        self.legend = self.p_len.addLegend(offset=(10, 10))
        lay.addWidget(self.plots, 1)

    # ---------------------------------------------------------------- running
    def _say(self, text, level="error"):
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    def run(self) -> bool:
        if self.job is not None:
            return False
        try:
            sizes = parse_sizes(self.ed_sizes.text())
        except InvalidParameter as exc:
            self._say(str(exc))
            return False
        types = [t for t, ck in self.ck_types.items() if ck.isChecked()]
        if not types:
            self._say("choose at least one graph type")
            return False
        inst, method = self.sp_inst.value(), self.cb_method.currentText()
        total = len(types) * len(sizes) * inst
        self.rows = []
        self._redraw()
        job = SweepJob("Reproduce sweep", None)

        def work(progress, cancelled):
            done = 0
            for r in rp.run_sweep(types, sizes, inst, method, backend=self.backend, cancel=cancelled):
                done += 1
                job.row.emit(r)
                progress(done / total)

        job.fn = work
        job.row.connect(self._on_row)
        job.progress.connect(lambda f: self.progress.setValue(int(1000 * f)))
        job.done.connect(lambda _r: self._end("done"))
        job.failed.connect(lambda msg: self._end(msg, failed=True))
        job.cancelled.connect(lambda: self._end("cancelled"))
        self.job = job
        self.bt_run.setEnabled(False)
        self.bt_cancel.setEnabled(True)
        self.progress.setValue(0)
        job.start()
        return True

    def cancel(self):
        if self.job is not None:
            self.job.cancel()

    def _end(self, what, failed=False):
        job, self.job = self.job, None
        if job is not None:
            job.thread.wait(5000)
        self.bt_run.setEnabled(True)
        self.bt_cancel.setEnabled(False)
        if failed:
            self._say(what)
        else:
            self.lbl.setText(self._summary() + ("" if what == "done" else f" — {what}"))
        self.finished.emit()

    def _on_row(self, r):
        self.rows.append(r)
        self._redraw()

    # --------------------------------------------------------------- plotting
    def _summary(self) -> str:
        fits = rp.fit_exponents(self.rows)
        parts = [f"{rp.TYPE_LABELS[t].split(',')[0]}: {a:.3f} (paper {rp.PAPER_EXPONENTS[t]})" for t, a in fits.items()]
        return "Fitted exponents — " + "; ".join(parts) if parts else "Need ≥ 2 sizes per type for a fit."

    def _redraw(self):
        self.p_len.clear(); self.p_time.clear()
        self.legend.clear()
        if not self.rows:
            return
        fits = rp.fit_exponents(self.rows)
        norm = rp.normalised(self.rows)
        for t in sorted({r.type for r in self.rows}):
            idx = [i for i, r in enumerate(self.rows) if r.type == t]
            n = np.array([self.rows[i].n for i in idx], float)
            L = np.array([self.rows[i].mean_path_length for i in idx], float)
            tt = np.array([max(norm[i], 1e-9) for i in idx], float)
            col = COLORS[t]
            self.p_len.plot(n, L, pen=None, symbol="o", symbolSize=6, symbolBrush=(*col, 120), symbolPen=None)
            ns = np.unique(n)
            means = np.array([L[n == v].mean() for v in ns])
            name = rp.TYPE_LABELS[t] + (f": α = {fits[t]:.3f} (paper {rp.PAPER_EXPONENTS[t]})" if t in fits else "")
            self.p_len.plot(ns, means, pen=pg.mkPen(col, width=2), name=name)
            self.p_time.plot(n, tt, pen=None, symbol="t", symbolSize=7, symbolBrush=(*col, 160), symbolPen=None)
            self.p_time.plot(ns, [tt[n == v].mean() for v in ns], pen=pg.mkPen(col, width=2))

    # ----------------------------------------------------------------- export
    def export_csv(self, path=None):
        if not self.rows:
            return self._say("Run a sweep first.", "warning")
        path = path or QFileDialog.getSaveFileName(self, "Export sweep", "reproduce.csv", "CSV (*.csv)")[0]
        if path:
            rp.rows_to_csv(self.rows, path)
            return path

    def export_plots(self, path=None):
        path = path or QFileDialog.getSaveFileName(self, "Export plots", "reproduce.png", "PNG (*.png)")[0]
        if path:
            self.plots.grab().save(path)
            return path
