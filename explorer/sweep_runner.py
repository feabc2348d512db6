"""The run / cancel / export cycle shared by every sweep-style tab (Graphs reproduce tabs, the
Cahn–Hilliard Reproduce tab): rows stream from a :class:`explorer.jobs.GeneratorJob` into the tab,
CSV and figure exports go through :mod:`explorer.export` (atomic writes).

A tab composes one :class:`SweepRunner` (``self.runner``): the runner owns the run state (the job,
the rows) and the Run / Cancel / Export buttons, the progress bar and the summary label, which the
tab lays out; the tab supplies what only it knows through explicit callables (run, redraw,
summary, export of its plots, the experiment of its rows).  :func:`forwards_to_runner` gives a tab
thin read-through attributes (``tab.rows`` is ``tab.runner.rows`` …) for its own code, the
workspaces and the tests.

A tab may also run its rows on Dask (:meth:`SweepRunner.start_sweep`): the rows then come from a
:class:`kernels.sweep.Sweep` (started on the job's thread), the progress bar counts the tasks
finished across the cluster, the tab's :class:`explorer.sweep_panel.SchedulerChoice` shows the
workers and the dashboard link, and Cancel cancels the sweep's futures (an embedded cluster is
stopped, an existing one keeps running with none of the sweep's tasks)."""
from __future__ import annotations

from PyQt6.QtCore import QObject, Qt, pyqtSignal
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


class SweepRunner(QObject):
    """The run / cancel / end cycle of a sweep tab, composed into it (``self.runner = SweepRunner(self,
    …)``).  It owns ``job`` (None when idle), ``rows`` (the finished rows, in the experiment's serial
    order), the buttons ``bt_run``, ``bt_cancel``, ``bt_csv``, ``bt_png``, the ``progress`` bar and
    the summary label ``lbl`` (:meth:`lay_out` adds them to a layout in the standard order; a tab
    with its own arrangement places them itself), and emits ``finished`` when a run ends (done,
    failed or cancelled) and then ``ended(what, failed)``.

    The tab supplies: ``run()`` (the Run button: check the controls, clear ``rows`` and call
    :meth:`start` or :meth:`start_sweep`), ``redraw()`` (plot ``rows``), ``summary()`` (the label's
    text), ``export_plots(path)`` (the plots button), ``message(text, level)`` (the workspace's
    message bar, or None), the rows' experiment (a :class:`kernels.experiments.Experiment`: fixed
    ``experiment``, or ``row_experiment()`` when the tab shows several), and for Dask runs
    ``where`` (an :class:`explorer.sweep_panel.SchedulerChoice`).  ``settle()``, when given, runs
    first when a run ends (e.g. the PFHub tab plots the last state).

    :meth:`on_row` keeps the rows in the experiment's serial order and warns of a row whose own
    check failed; :meth:`export_csv` writes them through the experiment's ``to_csv``."""

    finished = pyqtSignal()
    ended = pyqtSignal(str, bool)

    def __init__(self, host, *, run, redraw, summary, export_plots, message=None, experiment=None,
                 row_experiment=None, where=None, settle=None, csv_name: str = "rows.csv",
                 csv_empty: str = "Run the timings first.", live_summary: bool = True, run_text: str = "Run"):
        super().__init__(host)
        self.host, self.message, self.where = host, message, where
        self.redraw, self.summary, self.settle = redraw, summary, settle
        self.experiment, self._row_experiment = experiment, row_experiment
        self.csv_name, self.csv_empty, self.live_summary = csv_name, csv_empty, live_summary
        self.job = None
        self.rows: list = []
        self._status = None          # the last cluster status of a Dask run
        self._row_format = None      # the progress format of row runs, kept while a Dask run counts tasks
        self.bt_run = QPushButton(run_text)
        self.bt_run.clicked.connect(run)
        self.bt_cancel = QPushButton("Cancel")
        self.bt_cancel.setEnabled(False)
        self.bt_cancel.clicked.connect(self.cancel)
        self.bt_csv = QPushButton("Export CSV…")
        self.bt_csv.clicked.connect(lambda: self.export_csv())
        self.bt_png = QPushButton("Export plots…")
        self.bt_png.clicked.connect(lambda: export_plots())
        self.progress = QProgressBar()
        self.lbl = QLabel("")
        self.lbl.setWordWrap(True)

    def buttons(self) -> tuple:
        """Run, Cancel, Export CSV, Export plots."""
        return self.bt_run, self.bt_cancel, self.bt_csv, self.bt_png

    def lay_out(self, lay, run_tip: str, csv_tip: str = "Save every timed point as CSV",
                png_tip: str = "Save the plots as one PNG image", png_text: str = "Export plots…",
                progress_tip: str = "") -> None:
        """Add the Run / Cancel / Export CSV / Export plots row, the progress bar (points done of the
        total) and the selectable summary label to ``lay``, with their tool tips."""
        self.bt_run.setToolTip(run_tip)
        self.bt_cancel.setToolTip("Stop after the point being timed")
        self.bt_csv.setToolTip(csv_tip)
        self.bt_png.setText(png_text)
        self.bt_png.setToolTip(png_tip)
        row = QHBoxLayout()
        for b in self.buttons():
            row.addWidget(b)
        lay.addLayout(row)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m points")
        if progress_tip:
            self.progress.setToolTip(progress_tip)
        lay.addWidget(self.progress)
        self.lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.lbl)

    def row_experiment(self):
        """The experiment of the rows shown (the tab's ``row_experiment()``, else ``experiment``)."""
        return self._row_experiment() if self._row_experiment is not None else self.experiment

    def busy(self) -> bool:
        return self.job is not None

    def on_row(self, r):
        """A finished row (from the tab's thread or a cluster, in any order): kept in the experiment's
        serial order, plotted, summarised; a row whose own check failed (``Experiment.problem``) is
        said as a warning."""
        self.rows.append(r)
        exp = self.row_experiment()
        if exp is not None and exp.order_key(r) is not None:
            self.rows.sort(key=exp.order_key)
        self.redraw()
        if self.live_summary:
            self.lbl.setText(self.summary())
        why = exp.problem(r) if exp is not None else None
        if why and self.message is not None:
            self.message(why, "warning")

    def say(self, text, level="error"):
        """``text`` on the message bar (when there is one) and in the summary label; None."""
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    def start(self, title: str, rows, total: int, on_item=None, counted: bool = True) -> None:
        """Run ``rows(cancelled)`` (an iterator of finished rows) on a worker thread, streaming each
        to ``on_item`` (default :meth:`on_row`); the progress bar counts ``rows`` out of ``total``
        (``counted=False``: ``on_item`` sets it)."""
        if self._row_format is not None:
            self.progress.setFormat(self._row_format)
        job = GeneratorJob(title, rows)
        job.yielded.connect(on_item or self.on_row)
        if counted:
            job.yielded.connect(lambda _r: self.progress.setValue(len(self.rows)))
        self._launch(job, total)

    def start_sweep(self, title: str, rows, sweep) -> None:
        """Run ``rows`` (an iterator of row objects from the Dask ``sweep``, e.g.
        ``kernels.sweep.graph_tasks.reproduce_sweep``) on a worker thread: each row goes to
        :meth:`on_row`; the progress bar counts finished tasks out of ``sweep.total``; ``where``
        (a SchedulerChoice) shows the workers and dashboard link."""
        job = ClusterJob(title, lambda _cancelled: with_status(sweep, rows), sweep)
        job.yielded.connect(self._on_sweep_item)
        self._status = None
        if self._row_format is None:
            self._row_format = self.progress.format()
        self.progress.setFormat("%v / %m tasks")
        self.where.show_status({"finished": 0, "total": sweep.total, "scheduler": sweep.scheduler, "kind": "",
                                "workers": 0, "notes": [f"starting the {sweep.scheduler} scheduler …"]})
        self._launch(job, sweep.total)

    def _launch(self, job, total: int) -> None:
        job.done.connect(lambda _r: self.end("done"))
        job.failed.connect(lambda msg: self.end(msg, failed=True))
        job.cancelled.connect(lambda: self.end("cancelled"))
        self.job = job
        self.bt_run.setEnabled(False)
        self.bt_cancel.setEnabled(True)
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(0)
        job.start()

    def _on_sweep_item(self, item) -> None:
        row, st = item
        if row is not None:
            self.on_row(row)
        self.progress.setValue(st["finished"])
        self._status = st
        self.where.show_status(st)

    def cancel(self):
        if self.job is not None:
            self.job.cancel()

    def end(self, what, failed=False):
        """The run ended (``what``: "done", "cancelled" or the failure): buttons back, the summary
        (or the failure) in the label, ``finished`` then ``ended(what, failed)``."""
        job, self.job = self.job, None
        if job is not None:
            job.wait(5000)
        if self.settle is not None:
            self.settle()
        if isinstance(job, ClusterJob):
            st = self._status
            if st is not None:           # the cluster is closed: its dashboard link is gone
                self.where.show_status({**st, "dashboard": "", "notes": [what]})
            else:
                self.where.show_status(None)
        self.bt_run.setEnabled(True)
        self.bt_cancel.setEnabled(False)
        if failed:
            self.say(what)
        else:
            self.lbl.setText(self.summary() + ("" if what == "done" else f" — {what}"))
        self.finished.emit()
        self.ended.emit(what, failed)

    # -------------------------------------------------------------- exports (every sweep tab)
    def export_csv(self, path=None):
        """Every finished row as CSV (the experiment's ``to_csv``: its columns, written atomically); the
        path written, or None."""
        exp = self.row_experiment()
        return self.export_rows(path, self.csv_name, None if exp is None else exp.to_csv, self.csv_empty)

    def export_rows(self, path, default: str, write_csv, empty: str = "Run it first."):
        """The finished rows as CSV through ``write_csv(rows, path)``, written atomically; the path
        written, or None (nothing to write, dialog cancelled, or a message on failure)."""
        if not self.rows:
            return self.say(empty, "warning")
        return self._save_as(path, "Export CSV", default, "CSV (*.csv)", "export the rows", lambda p: write_file(
            p, (".csv",), lambda tmp: write_csv(self.rows, tmp), "CSV file"))

    def export_widget(self, path, default: str, widget, name: str):
        """``widget`` (plots or a table) as PNG at twice the screen size or SVG; the path written,
        or None."""
        fig = Figure(name, widget=widget)
        return self._save_as(path, "Export plots", default, "PNG (*.png);;SVG (*.svg)", "export the plots",
                             lambda p: save_figure(fig, p, scale=2.0))

    def _save_as(self, path, title, default, filt, what, write):
        path = path or QFileDialog.getSaveFileName(self.host, title, default, filt)[0]
        if not path:
            return None
        out = guarded(self.say, f"{what} to {path}", lambda: write(path))
        if out is not None:
            self.say(f"Wrote {out}", "info")
        return out


#: what a tab reads through to its runner (:func:`forwards_to_runner`)
FORWARDED = ("job", "rows", "bt_run", "bt_cancel", "bt_csv", "bt_png", "progress", "lbl", "finished", "cancel",
             "export_csv")


class RunnerAttribute:
    """A tab attribute that is its runner's: ``tab.<name>`` reads (and for ``rows`` sets)
    ``tab.runner.<name>``."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj.runner, self.name)

    def __set__(self, obj, value):
        setattr(obj.runner, self.name, value)


def forwards_to_runner(cls):
    """Class decorator: every name of :data:`FORWARDED` that ``cls`` does not define itself reads
    through to ``self.runner`` (a :class:`SweepRunner`), so a tab's code, its workspace and the tests
    keep saying ``tab.rows``, ``tab.job``, ``tab.finished``, ``tab.export_csv(path)`` …"""
    for name in FORWARDED:
        if name not in cls.__dict__:
            setattr(cls, name, RunnerAttribute(name))
    return cls
