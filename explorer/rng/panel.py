"""The "Random numbers (paper 001)" panel: re-run paper 001's Table 1 (scaled down) and show the
generators' quality live — histogram, χ² uniformity, lag correlations, and what happens when
per-thread streams share one seed.  Compute in :mod:`kernels.rng.quality` / ``streams``; the work
runs as an :mod:`explorer.jobs` job so the window stays responsive.  ``state()`` / ``restore()`` give the controls as
a JSON-able dict (settings)."""
from __future__ import annotations

import csv

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QGridLayout, QGroupBox,
                             QHBoxLayout, QLabel, QProgressBar, QPushButton, QSpinBox, QTableWidget, QTableWidgetItem,
                             QVBoxLayout, QWidget)

from kernels.devices import offered_gpus
from kernels.errors import ExplorerError
from kernels.fileio import atomic_write, check_output_path
from kernels.rng import quality as q
from kernels.rng import streams as st

from ..jobs import FunctionJob
from ..lazy_panel import LazyPanel, lazy_dock

COLUMNS = ("approach", "GPUs", "where", "streams", "numbers", "time (s)", "numbers/s", "→ 24·10⁹ (s)",
           "paper (s)", "paper row", "test vector")
APPROACH_TIPS = {n: c.help for n, c in st.APPROACHES.items()}


class RNGPanel(QWidget):
    """Table 1 controls + results table, quality controls + histogram and lag plots."""

    finished = pyqtSignal()

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend, self.message = backend, message
        self.rows: list[q.Table1Row] = []
        self.last_quality: q.Quality | None = None
        self.job: FunctionJob | None = None
        outer = QVBoxLayout(self)

        # --- Table 1
        box = QGroupBox("Table 1 re-run: time to draw N numbers (discarded), extrapolated to 24·10⁹")
        lay = QVBoxLayout(box)
        row = QHBoxLayout()
        self.ck_app = {}
        host = not backend.is_gpu           # gpu1 / gpu2 run their CUDA source on the CPU
        for name, cls in st.APPROACHES.items():
            emulated = host and cls.on_devices
            ck = QCheckBox(f"{name} ({st.EMULATED_LABEL})" if emulated else name)
            ck.setChecked(True)
            ck.setToolTip(APPROACH_TIPS[name] + (f". No GPU here: the same CUDA kernels run on the CPU "
                                                 f"(host C++ compiler), bit-identical to the GPU; a call "
                                                 f"that would take over {st.EMULATED_SECONDS:.0f} s is "
                                                 "refused, naming the limit" if emulated else ""))
            self.ck_app[name] = ck
            row.addWidget(ck)
        self.sp_count = QSpinBox()
        self.sp_count.setRange(1, 100_000)
        self.sp_count.setValue(2)
        self.sp_count.setSuffix(" ·10⁶")
        self.sp_count.setToolTip("Numbers drawn per approach [millions]; paper 001 draws 24 000 ·10⁶ — the "
                                 "time is extrapolated linearly")
        self.sp_gpus = QSpinBox()
        self.sp_gpus.setRange(1, max(2, offered_gpus(backend)))
        self.sp_gpus.setValue(min(2, self.sp_gpus.maximum()))
        self.sp_gpus.setToolTip("gpu1 / gpu2 also run on this many GPUs (paper 001 §6.5: multi-GPU 1 and 2); "
                                "on the CPU backend they are virtual GPUs running the kernels' CUDA source on the CPU")
        self.sp_seed = QSpinBox()
        self.sp_seed.setRange(0, 2 ** 31 - 1)
        self.sp_seed.setValue(1)
        self.sp_seed.setToolTip("User seed: seq seeds its table with it; the multi-stream approaches draw "
                                "per-thread / per-GPU seeds from a host RANMAR generator seeded with it")
        row.addWidget(QLabel("N"))
        row.addWidget(self.sp_count)
        row.addWidget(QLabel("GPUs"))
        row.addWidget(self.sp_gpus)
        row.addWidget(QLabel("seed"))
        row.addWidget(self.sp_seed)
        row.addStretch(1)
        lay.addLayout(row)
        row = QHBoxLayout()
        self.bt_run = QPushButton("Run Table 1")
        self.bt_run.setToolTip("Time every checked approach on N numbers (Ctrl+Return)")
        self.bt_run.setShortcut("Ctrl+Return")
        self.bt_run.clicked.connect(self.run_table1)
        self.bt_cancel = QPushButton("Cancel")
        self.bt_cancel.setToolTip("Stop after the approach running now")
        self.bt_cancel.setEnabled(False)
        self.bt_cancel.clicked.connect(self.cancel)
        self.bt_csv = QPushButton("Export CSV…")
        self.bt_csv.setToolTip("Write the table's rows as CSV")
        self.bt_csv.clicked.connect(lambda: self.export_csv())
        self.progress = QProgressBar()
        self.progress.setToolTip("Approaches timed")
        for w in (self.bt_run, self.bt_cancel, self.bt_csv, self.progress):
            row.addWidget(w)
        lay.addLayout(row)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setToolTip("Measured here next to paper 001 Table 1 (GTX 295, Core 2 Quad; 24·10⁹ numbers)")
        self.table.setMinimumHeight(150)
        lay.addWidget(self.table)
        outer.addWidget(box)

        # --- quality
        box = QGroupBox("Quality: histogram, χ² uniformity, lag correlations")
        grid = QGridLayout(box)
        form = QFormLayout()
        self.cb_source = QComboBox()
        self.cb_source.addItem("distinct seeds per stream (paper 001 Alg. 29)", "distinct")
        self.cb_source.addItem("one seed shared by every stream (the mistake)", "shared")
        self.cb_source.addItem("gpu2: one big-table stream", "gpu2")
        self.cb_source.setToolTip("Which streams to check. Streams that share a seed are identical: pooled, "
                                  "every bin count is multiplied by the number of streams and χ² rejects "
                                  "uniformity; neighbouring streams correlate at 1")
        self.sp_streams = QSpinBox()
        self.sp_streams.setRange(2, 4096)
        self.sp_streams.setValue(16)
        self.sp_streams.setToolTip("Streams (per-thread tables) drawn")
        self.sp_per = QSpinBox()
        self.sp_per.setRange(100, 1_000_000)
        self.sp_per.setValue(10_000)
        self.sp_per.setSingleStep(1000)
        self.sp_per.setToolTip("Numbers per stream")
        self.sp_bins = QSpinBox()
        self.sp_bins.setRange(4, 1024)
        self.sp_bins.setValue(64)
        self.sp_bins.setToolTip("Histogram / χ² bins of [0, 1)")
        form.addRow("Streams", self.cb_source)
        form.addRow("Streams drawn", self.sp_streams)
        form.addRow("Numbers per stream", self.sp_per)
        form.addRow("Bins", self.sp_bins)
        self.bt_check = QPushButton("Check quality")
        self.bt_check.setToolTip("Draw the streams and run the checks (Ctrl+Shift+Q)")
        self.bt_check.setShortcut("Ctrl+Shift+Q")
        self.bt_check.clicked.connect(self.run_quality)
        form.addRow(self.bt_check)
        grid.addLayout(form, 0, 0)
        self.hist = pg.PlotWidget(title="Histogram (all streams pooled)")
        self.hist.setLabel("bottom", "value")
        self.hist.setLabel("left", "count")
        self.hist.setToolTip("Bin counts of every number drawn; the line is the uniform expectation")
        self.lags = pg.PlotWidget(title="Correlation vs lag (stream 0)")
        self.lags.setLabel("bottom", "lag")
        self.lags.setLabel("left", "r")
        self.lags.setToolTip("Pearson correlation of x[i] and x[i+lag] in stream 0; dashed: ±3/√n")
        for pw in (self.hist, self.lags):
            pw.setMinimumHeight(170)
        grid.addWidget(self.hist, 0, 1)
        grid.addWidget(self.lags, 0, 2)
        self.lbl_quality = QLabel("Check the quality to see χ², p-value and correlations.")
        self.lbl_quality.setWordWrap(True)
        self.lbl_quality.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.lbl_quality, 1, 0, 1, 3)
        outer.addWidget(box)
        self.lbl = QLabel("")
        self.lbl.setWordWrap(True)
        outer.addWidget(self.lbl)

    # ------------------------------------------------------------------ state
    def state(self) -> dict:
        return dict(approaches=self.approaches(), count=self.sp_count.value(), gpus=self.sp_gpus.value(),
                    seed=self.sp_seed.value(), source=self.cb_source.currentData(),
                    streams=self.sp_streams.value(), per=self.sp_per.value(), bins=self.sp_bins.value())

    def restore(self, s: dict) -> None:
        s = s if isinstance(s, dict) else {}
        if isinstance(s.get("approaches"), list):
            for n, ck in self.ck_app.items():
                ck.setChecked(n in s["approaches"])
        for key, sp in (("count", self.sp_count), ("gpus", self.sp_gpus), ("seed", self.sp_seed),
                        ("streams", self.sp_streams), ("per", self.sp_per), ("bins", self.sp_bins)):
            if isinstance(s.get(key), int):
                sp.setValue(s[key])
        i = self.cb_source.findData(s.get("source"))
        if i >= 0:
            self.cb_source.setCurrentIndex(i)

    def approaches(self) -> list[str]:
        return [n for n, ck in self.ck_app.items() if ck.isChecked()]

    # ------------------------------------------------------------------ runs
    def _say(self, text, level="error"):
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    def _busy(self, busy: bool):
        self.bt_run.setEnabled(not busy)
        self.bt_check.setEnabled(not busy)
        self.bt_cancel.setEnabled(busy)

    def _start(self, fn, on_row, on_done):
        """Run ``fn(emit_row, cancelled)`` as a job: rows arrive through ``yielded``."""
        if self.job is not None:
            return False
        job = FunctionJob("the random-number run", lambda progress, cancelled: fn(job.yielded.emit, cancelled))
        job.yielded.connect(on_row)
        job.done.connect(on_done)
        job.failed.connect(lambda msg: self._say(msg))
        job.finished.connect(self._ended)
        self.job = job
        self._busy(True)
        job.start()
        return True

    def _ended(self):
        self.job = None
        self._busy(False)
        self.finished.emit()

    def cancel(self):
        if self.job is not None:
            self.job.cancel()

    def run_table1(self) -> bool:
        names = self.approaches()
        if not names:
            self._say("Check at least one approach.", "warning")
            return False
        count, gpus, seed = self.sp_count.value() * 1_000_000, self.sp_gpus.value(), self.sp_seed.value()
        gl = (1, gpus) if gpus > 1 else (1,)
        total = sum(len(gl) if st.APPROACHES[n].on_devices else 1 for n in names)
        self.rows = []
        self.table.setRowCount(0)
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self.lbl.setText(f"Timing {total} run(s) of {count:,} numbers…")

        def work(emit, cancelled):
            for r in q.table1(count, names, self.backend, gl, seed, cancel=cancelled):
                emit(r)

        return self._start(work, self._on_row, lambda _r: self.lbl.setText(self._summary()))

    def _on_row(self, r: q.Table1Row):
        self.rows.append(r)
        self.progress.setValue(len(self.rows))
        i = self.table.rowCount()
        self.table.insertRow(i)
        vals = (r.approach, r.gpus, r.devices, r.streams, f"{r.numbers:.3g}", f"{r.seconds:.4g}", f"{r.rate:.3g}",
                f"{r.extrapolated:.4g}", "" if r.paper_seconds is None else f"{r.paper_seconds:.2f}", r.paper_row,
                "pass" if r.test_vector else "FAIL")
        for j, v in enumerate(vals):
            self.table.setItem(i, j, QTableWidgetItem(str(v)))
        self.table.resizeColumnsToContents()

    def _summary(self) -> str:
        if not self.rows:
            return "No rows."
        best = min(self.rows, key=lambda r: r.extrapolated)
        return (f"{len(self.rows)} run(s); fastest {best.approach} on {best.gpus} {best.devices}: "
                f"{best.rate:.3g} numbers/s → {best.extrapolated:.3g} s for 24·10⁹ (paper's best: multi-GPU 1, "
                "4.33 s on a GTX 295)")

    def run_quality(self) -> bool:
        src, S, n, bins, seed = (self.cb_source.currentData(), self.sp_streams.value(), self.sp_per.value(),
                                 self.sp_bins.value(), self.sp_seed.value())

        def work(emit, cancelled):
            if src == "shared":
                x = q.shared_seed(seed, S, n)
            elif src == "gpu2":
                x = st.make("gpu2", seed, None).generate(S * n)
            else:
                x = q.distinct_seeds(seed, S, n)
            return q.check(x, bins)

        self.lbl_quality.setText("Drawing and checking…")
        return self._start(work, lambda _r: None, self._show_quality)

    def _show_quality(self, res: q.Quality):
        self.last_quality = res
        bins = len(res.hist)
        edges = np.linspace(0, 1, bins + 1)
        self.hist.clear()
        self.hist.addItem(pg.BarGraphItem(x0=edges[:-1], x1=edges[1:], height=res.hist, brush=(31, 119, 180)))
        expect = res.streams * res.n / bins
        self.hist.addItem(pg.InfiniteLine(pos=expect, angle=0, pen=pg.mkPen((214, 39, 40), width=2)))
        self.lags.clear()
        ks = np.array(list(res.lags), float)
        rs = np.array(list(res.lags.values()), float)
        self.lags.addItem(pg.BarGraphItem(x=np.arange(len(ks)), height=rs, width=0.6, brush=(44, 160, 44)))
        self.lags.getAxis("bottom").setTicks([[(i, str(int(k))) for i, k in enumerate(ks)]])
        band = 3 / np.sqrt(max(1, res.n))
        for y in (band, -band):
            self.lags.addItem(pg.InfiniteLine(pos=y, angle=0, pen=pg.mkPen((120, 120, 120), style=Qt.PenStyle.DashLine)))
        verdict = ("looks uniform and independent" if res.passes else
                   "FAILS: " + ("streams are identical copies — they need distinct seeds" if res.identical_streams
                                else "χ² rejects uniformity or the streams correlate"))
        self.lbl_quality.setText(
            f"{res.streams} stream(s) × {res.n:,}: χ² = {res.chi2:.1f} on {res.dof} d.o.f., p = {res.p_value:.3g}; "
            f"mean {res.mean:.4f} (0.5), variance {res.var:.4f} (1/12 = 0.0833); neighbouring streams "
            f"correlate at r = {res.cross:.3f}; identical streams: {res.identical_streams} — {verdict}")

    # ------------------------------------------------------------------ export
    def export_csv(self, path=None):
        if not self.rows:
            return self._say("Run Table 1 first.", "warning")
        path = path or QFileDialog.getSaveFileName(self, "Export CSV", "rng_table1.csv", "CSV (*.csv)")[0]
        if not path:
            return None

        try:
            check_output_path(path, (".csv",), "CSV file")
            with atomic_write(path, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(q.CSV_COLUMNS)
                for r in self.rows:
                    w.writerow([getattr(r, c) for c in q.CSV_COLUMNS])
        except (ExplorerError, OSError) as exc:
            return self._say(f"Could not export the rows to {path}: {exc}")
        self._say(f"Wrote {path}", "info")
        return path


def add_rng_dock(ws) -> LazyPanel:
    """The panel as a dock of a workspace (tabbed with its Diagnostics dock, in a scroll area); the
    :class:`RNGPanel` is built the first time the dock shows or it is asked for (:func:`lazy_dock`)."""
    def make() -> RNGPanel:
        bar = getattr(ws, "message_bar", None)
        return RNGPanel(ws.backend, bar.show_message if bar is not None else None)
    return lazy_dock(ws, "Random numbers (paper 001)", "rng_panel", make)
