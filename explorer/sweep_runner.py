"""The run / cancel / export cycle shared by every sweep-style tab (Graphs reproduce tabs, the
Cahn–Hilliard Reproduce tab): rows stream from a :class:`explorer.jobs.GeneratorJob` into the tab,
CSV and figure exports go through :mod:`explorer.export` (atomic writes).

A tab may also run its rows on Dask (:meth:`SweepRunner._start_sweep`): the rows then come from a
:class:`kernels.sweep.Sweep` (started on the job's thread), the progress bar counts the tasks
finished across the cluster, the tab's :class:`explorer.sweep_panel.SchedulerChoice` shows the
workers and the dashboard link, and Cancel cancels the sweep's futures (an embedded cluster is
stopped, an existing one keeps running with none of the sweep's tasks)."""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton

from .export import Figure, guarded, save_figure, write_file
from .jobs import GeneratorJob


class ClusterJob(GeneratorJob):
    """A :class:`GeneratorJob` over a Dask sweep's rows: cancelling it also cancels the sweep at
    once (``Sweep.cancel`` is thread-safe), so a wait for the next row never holds Cancel up."""

    def __init__(self, name: str, fn, sweep, parent=None):
        super().__init__(name, fn, parent=parent)
        self.sweep = sweep

    def cancel(self) -> None:
        super().cancel()
        self.sweep.cancel()


def with_status(sweep, rows):
    """``(None, status)`` once the cluster is up, then ``(row, status)`` per row of ``rows`` (the
    row objects of ``sweep``); the sweep (futures, embedded cluster, file) is closed however the
    iteration ends — finished, failed, cancelled or closed early."""
    try:
        sweep.open()
        yield None, sweep.status()
        for r in rows:
            yield r, sweep.status()
    finally:
        rows.close()
        sweep.close()


class SweepRunner:
    """The run / cancel / end cycle of a sweep tab (mixed into a QWidget).  The tab provides
    ``job`` (None when idle), ``message``, ``rows``, ``bt_run``, ``bt_cancel``, ``progress``, ``lbl``,
    ``_redraw()``, ``_summary()`` and a ``finished`` signal; for :meth:`_start_sweep` also
    ``where`` (an :class:`explorer.sweep_panel.SchedulerChoice`).

    The rows are those of a paper experiment (:class:`kernels.experiments.Experiment`: the tab's
    :attr:`EXPERIMENT`, or :meth:`row_experiment` when it shows several): :meth:`_on_row` keeps them
    in the experiment's serial order and warns of a row whose own check failed, and
    :meth:`export_csv` writes them through the experiment's ``to_csv``."""

    #: the experiment whose rows the tab shows (a :class:`kernels.experiments.Experiment`)
    EXPERIMENT = None
    #: the export dialog's file name, and the message when there is nothing to export
    CSV_NAME = "rows.csv"
    CSV_EMPTY = "Run the timings first."
    #: whether the summary label follows each row (else it is set when the run ends)
    LIVE_SUMMARY = True

    def row_experiment(self):
        """The experiment of the rows shown (default :attr:`EXPERIMENT`)."""
        return self.EXPERIMENT

    def _on_row(self, r):
        """A finished row (from the tab's thread or a cluster, in any order): kept in the experiment's
        serial order, plotted, summarised; a row whose own check failed (``Experiment.problem``) is
        said as a warning."""
        self.rows.append(r)
        exp = self.row_experiment()
        if exp is not None and exp.order_key(r) is not None:
            self.rows.sort(key=exp.order_key)
        self._redraw()
        if self.LIVE_SUMMARY:
            self.lbl.setText(self._summary())
        why = exp.problem(r) if exp is not None else None
        if why and self.message is not None:
            self.message(why, "warning")

    def run_row(self, lay, run_text: str, run_tip: str, csv_tip: str = "Save every timed point as CSV",
                png_tip: str = "Save the plots as one PNG image", png_text: str = "Export plots…",
                progress_tip: str = "") -> None:
        """Add the tab's Run / Cancel / Export CSV / Export plots row, its progress bar (points done of
        the total) and its summary label to ``lay``; wired to ``run``, :meth:`cancel`, ``export_csv``
        and ``export_plots``."""
        row = QHBoxLayout()
        self.bt_run = QPushButton(run_text)
        self.bt_run.setToolTip(run_tip)
        self.bt_run.clicked.connect(self.run)
        self.bt_cancel = QPushButton("Cancel")
        self.bt_cancel.setEnabled(False)
        self.bt_cancel.setToolTip("Stop after the point being timed")
        self.bt_cancel.clicked.connect(self.cancel)
        self.bt_csv = QPushButton("Export CSV…")
        self.bt_csv.setToolTip(csv_tip)
        self.bt_csv.clicked.connect(lambda: self.export_csv())
        self.bt_png = QPushButton(png_text)
        self.bt_png.setToolTip(png_tip)
        self.bt_png.clicked.connect(lambda: self.export_plots())
        for b in (self.bt_run, self.bt_cancel, self.bt_csv, self.bt_png):
            row.addWidget(b)
        lay.addLayout(row)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m points")
        if progress_tip:
            self.progress.setToolTip(progress_tip)
        lay.addWidget(self.progress)
        self.lbl = QLabel("")
        self.lbl.setWordWrap(True)
        self.lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.lbl)

    def _say(self, text, level="error"):
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    def _start(self, title: str, rows, total: int) -> None:
        """Run ``rows(cancelled)`` (an iterator of finished rows) on a worker thread, streaming each
        to ``_on_row``; the progress bar counts rows out of ``total``."""
        if hasattr(self, "_row_format"):
            self.progress.setFormat(self._row_format)
        job = GeneratorJob(title, rows)
        job.yielded.connect(self._on_row)
        job.yielded.connect(lambda _r: self.progress.setValue(len(self.rows)))
        job.done.connect(lambda _r: self._end("done"))
        job.failed.connect(lambda msg: self._end(msg, failed=True))
        job.cancelled.connect(lambda: self._end("cancelled"))
        self.job = job
        self.bt_run.setEnabled(False)
        self.bt_cancel.setEnabled(True)
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(0)
        job.start()

    def _start_sweep(self, title: str, rows, sweep) -> None:
        """Run ``rows`` (an iterator of row objects from the Dask ``sweep``, e.g.
        ``kernels.sweep.graph_tasks.reproduce_sweep``) on a worker thread: each row goes to
        ``_on_row``; the progress bar counts finished tasks out of ``sweep.total``; ``self.where``
        (a SchedulerChoice) shows the workers and dashboard link."""
        job = ClusterJob(title, lambda _cancelled: with_status(sweep, rows), sweep)
        job.yielded.connect(self._on_sweep_item)
        job.done.connect(lambda _r: self._end("done"))
        job.failed.connect(lambda msg: self._end(msg, failed=True))
        job.cancelled.connect(lambda: self._end("cancelled"))
        self.job = job
        self._status = None
        self.bt_run.setEnabled(False)
        self.bt_cancel.setEnabled(True)
        if not hasattr(self, "_row_format"):
            self._row_format = self.progress.format()
        self.progress.setFormat("%v / %m tasks")
        self.progress.setRange(0, max(1, sweep.total))
        self.progress.setValue(0)
        self.where.show_status({"finished": 0, "total": sweep.total, "scheduler": sweep.scheduler, "kind": "",
                                "workers": 0, "notes": [f"starting the {sweep.scheduler} scheduler …"]})
        job.start()

    def _on_sweep_item(self, item) -> None:
        row, st = item
        if row is not None:
            self._on_row(row)
        self.progress.setValue(st["finished"])
        self._status = st
        self.where.show_status(st)

    def cancel(self):
        if self.job is not None:
            self.job.cancel()

    def _end(self, what, failed=False):
        job, self.job = self.job, None
        if job is not None:
            job.wait(5000)
        if isinstance(job, ClusterJob):
            st = getattr(self, "_status", None)
            if st is not None:           # the cluster is closed: its dashboard link is gone
                self.where.show_status({**st, "dashboard": "", "notes": [what]})
            else:
                self.where.show_status(None)
        self.bt_run.setEnabled(True)
        self.bt_cancel.setEnabled(False)
        if failed:
            self._say(what)
        else:
            self.lbl.setText(self._summary() + ("" if what == "done" else f" — {what}"))
        self.finished.emit()

    # -------------------------------------------------------------- exports (every sweep tab)
    def export_csv(self, path=None):
        """Every finished row as CSV (the experiment's ``to_csv``: its columns, written atomically); the
        path written, or None."""
        exp = self.row_experiment()
        return self.export_rows(path, self.CSV_NAME, None if exp is None else exp.to_csv, self.CSV_EMPTY)

    def export_rows(self, path, default: str, write_csv, empty: str = "Run it first."):
        """The finished rows as CSV through ``write_csv(rows, path)``, written atomically; the path
        written, or None (nothing to write, dialog cancelled, or a message on failure)."""
        if not self.rows:
            return self._say(empty, "warning")
        return self._save_as(path, "Export CSV", default, "CSV (*.csv)", "export the rows", lambda p: write_file(
            p, (".csv",), lambda tmp: write_csv(self.rows, tmp), "CSV file"))

    def export_widget(self, path, default: str, widget, name: str):
        """``widget`` (plots or a table) as PNG at twice the screen size or SVG; the path written,
        or None."""
        fig = Figure(name, widget=widget)
        return self._save_as(path, "Export plots", default, "PNG (*.png);;SVG (*.svg)", "export the plots",
                             lambda p: save_figure(fig, p, scale=2.0))

    def _save_as(self, path, title, default, filt, what, write):
        path = path or QFileDialog.getSaveFileName(self, title, default, filt)[0]
        if not path:
            return None
        out = guarded(self._say, f"{what} to {path}", lambda: write(path))
        if out is not None:
            self._say(f"Wrote {out}", "info")
        return out
