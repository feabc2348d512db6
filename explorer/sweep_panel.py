"""A panel that runs a :class:`kernels.sweep.Sweep` off the GUI thread: where it runs (scheduler,
workers), the result file (with resume), Run / Cancel / Export CSV, a progress bar that counts
finished points across the cluster, the workers and the Dask dashboard link.  Workspaces put their
own controls and plot around it and give it a ``make_sweep()`` callable; rows arrive through the
``row`` signal as they complete.  Thin: the sweep itself is kernels.sweep.

The scheduler choice is one widget, :class:`SchedulerChoice`, used by every sweep tab of the app
(the Cahn–Hilliard Sweep tab here, the Graphs Reproduce and Clustering-timings tabs through
:mod:`explorer.sweep_runner`); its value is one app-wide preference (:func:`preference`), the same
in every tab and remembered by the main window (``main/sweep_scheduler``, ``main/sweep_workers``).
"""
from __future__ import annotations

import csv

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QProgressBar, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError
from kernels.fileio import atomic_write, check_output_path
from kernels.sweep.cluster import parse_scheduler
from kernels.sweep.results import format_value, read_rows

from .jobs import Job

SCHEDULER_TIP = ("Where the sweep's points run:\n"
                 "local — an embedded Dask cluster on this machine: one worker process per core "
                 "(or one per GPU with dask-cuda);\n"
                 "none — one after the other in this program (for debugging);\n"
                 "tcp://host:8786 — an existing cluster started with 'dask scheduler' and "
                 "'dask worker' (or 'dask cuda worker') on other machines.")


#: the scheduler tooltip of tabs whose ``none`` is their own in-process run (the Graphs sweep tabs)
INPROCESS_TIP = ("Where the sweep's tasks run:\n"
                 "none — here, in this program, one after the other with this window's backend (as before);\n"
                 "local — an embedded Dask cluster on this machine: one worker process per core "
                 "(or one per GPU with dask-cuda), the tasks spread over them, each timed on its worker;\n"
                 "tcp://host:8786 — an existing cluster started with 'dask scheduler' and "
                 "'dask worker' (or 'dask cuda worker') on other machines.\n"
                 "One choice for every sweep tab of the app.")
#: where the main window remembers the choice
SETTINGS_KEYS = ("main/sweep_scheduler", "main/sweep_workers")


class SweepPreference(QObject):
    """Where sweeps run, one choice for the whole app: ``scheduler`` (the text typed or picked;
    None until the user picks one — each tab then shows its own default) and ``workers`` of a
    local cluster (0: auto).  ``changed`` is emitted after :meth:`set` and :meth:`load`."""

    changed = pyqtSignal()

    def __init__(self):
        super().__init__()
        self.scheduler: str | None = None
        self.workers = 0

    def set(self, scheduler: str | None = None, workers: int | None = None) -> None:
        if scheduler is not None:
            self.scheduler = scheduler
        if workers is not None:
            self.workers = max(0, int(workers))
        self.changed.emit()

    def load(self, settings) -> None:
        """The preference from ``settings`` (the main window's QSettings); unset when absent or bad."""
        sched, workers = (settings.value(k) for k in SETTINGS_KEYS)
        self.scheduler = sched.strip() if isinstance(sched, str) and sched.strip() else None
        try:
            self.workers = max(0, min(1024, int(workers))) if workers is not None else 0
        except (TypeError, ValueError):
            self.workers = 0
        self.changed.emit()

    def save(self, settings) -> None:
        if self.scheduler:
            settings.setValue(SETTINGS_KEYS[0], self.scheduler)
        settings.setValue(SETTINGS_KEYS[1], int(self.workers))


_PREFERENCE: list = []


def preference() -> SweepPreference:
    """The app's one :class:`SweepPreference` (created on first use)."""
    if not _PREFERENCE:
        _PREFERENCE.append(SweepPreference())
    return _PREFERENCE[0]


def status_text(st: dict, unit: str = "points") -> str:
    """One line for a :meth:`kernels.sweep.Sweep.status`: finished of total, the workers, the
    dashboard link (HTML, when bokeh is installed) and the cluster's notes."""
    parts = [f"{st['finished']} of {st['total']} {unit}"]
    if st.get("skipped"):
        parts.append(f"{st['skipped']} already in the file")
    if st["scheduler"] == "none":
        parts.append("serial, in this program")
    else:
        parts.append(f"{st['workers']} worker{'s' if st['workers'] != 1 else ''} ({st['kind'] or st['scheduler']})")
    if st.get("dashboard"):
        parts.append(f'<a href="{st["dashboard"]}">dashboard</a>')
    text = " · ".join(parts)
    if st.get("notes"):
        text += " — " + "; ".join(st["notes"])
    return text


class SchedulerChoice(QWidget):
    """The scheduler combo (local / none / an address typed in) and the local cluster's worker
    count, bound to the app's :func:`preference`: a change in one tab shows in every tab.
    ``default`` is shown until the user picks a scheduler.  With ``info``, a label under them
    (hidden while empty) shows the tasks finished, the workers and the dashboard link of a run."""

    def __init__(self, default: str = "local", tip: str = SCHEDULER_TIP, info: bool = False, parent=None):
        super().__init__(parent)
        self.default = default
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        where = QHBoxLayout()
        self.cb_sched = QComboBox()
        self.cb_sched.setEditable(True)
        self.cb_sched.addItems(["local", "none"])
        self.cb_sched.setToolTip(tip)
        self.sp_workers = QSpinBox()
        self.sp_workers.setRange(0, 1024)
        self.sp_workers.setSpecialValueText("auto")
        self.sp_workers.setToolTip("Worker processes of the local cluster (auto: one per core, or one per GPU)")
        lab_w = QLabel("workers")
        lab_w.setToolTip(self.sp_workers.toolTip())
        where.addWidget(self.cb_sched, 1)
        where.addWidget(lab_w)
        where.addWidget(self.sp_workers)
        lay.addLayout(where)
        self.info = QLabel("")
        self.info.setWordWrap(True)
        self.info.setOpenExternalLinks(True)
        self.info.setToolTip("Tasks finished across the cluster, its workers and the Dask dashboard "
                             "(a link when bokeh is installed)")
        self.info.setVisible(False)
        if info:
            lay.addWidget(self.info)
        pref = preference()
        self._sync()
        pref.changed.connect(self._sync)
        self.cb_sched.editTextChanged.connect(self._picked)
        self.sp_workers.valueChanged.connect(lambda v: preference().set(workers=v))

    def _picked(self, text: str) -> None:
        if text.strip():
            preference().set(scheduler=text.strip())

    def _sync(self) -> None:
        """Show the preference (without echoing it back)."""
        pref = preference()
        for w in (self.cb_sched, self.sp_workers):
            w.blockSignals(True)
        try:
            text = pref.scheduler or self.default
            if self.cb_sched.currentText() != text:
                self.cb_sched.setCurrentText(text)
            self.sp_workers.setValue(pref.workers)
        finally:
            for w in (self.cb_sched, self.sp_workers):
                w.blockSignals(False)

    def text(self) -> str:
        return self.cb_sched.currentText().strip()

    def choice(self) -> tuple[str, int | None]:
        """(scheduler, workers) checked: ``local``, ``none`` or an address, and the worker count of
        a local cluster (None: auto, and for any other scheduler); InvalidParameter on a bad address."""
        sched = parse_scheduler(self.text())
        workers = self.sp_workers.value() or None
        return sched, (workers if sched == "local" else None)

    def show_status(self, st: dict | None, unit: str = "tasks") -> None:
        """A sweep's :func:`status_text` (None: hide the label)."""
        self.info.setText(status_text(st, unit) if st else "")
        self.info.setVisible(bool(st) and self.info.parent() is self)   # (a label not laid out stays hidden)


class SweepJob(Job):
    """Runs ``sweep.rows()`` off the GUI thread (:class:`explorer.jobs.Job`): opened(status) once
    the cluster is up, row(dict) per finished row, status(dict) after it, then done / failed /
    cancelled; the sweep (and an embedded cluster) is closed whatever happens."""

    opened = pyqtSignal(dict)
    row = pyqtSignal(dict)
    status = pyqtSignal(dict)

    def __init__(self, sweep):
        super().__init__("the sweep")
        self.sweep = sweep

    def cancel(self):
        super().cancel()
        self.sweep.cancel()

    def work(self):
        try:
            self.sweep.open()
            self.opened.emit(self.sweep.status())
            for r in self.sweep.rows():
                self.row.emit(r)
                self.status.emit(self.sweep.status())
        finally:
            self.sweep.close()


class SweepPanel(QWidget):
    """Scheduler, workers, result file, Run / Cancel / Export, progress and cluster facts.

    ``make_sweep(path, mode, scheduler, workers)`` builds the Sweep (raising ExplorerError on bad
    input, shown in the message bar); ``rows`` holds this run's rows plus, on resume, those
    already in the file.  ``state()`` / ``restore()`` for settings."""

    row = pyqtSignal(dict)
    started = pyqtSignal()
    finished = pyqtSignal(str)            # "done", "cancelled" or the error message

    def __init__(self, make_sweep, message=None, parent=None, unit: str = "points"):
        super().__init__(parent)
        self.make_sweep = make_sweep
        self.message = message
        self.job: SweepJob | None = None
        self.sweep = None
        self.rows: list[dict] = []
        self.columns: list[str] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        self.where = SchedulerChoice("local")
        self.cb_sched, self.sp_workers = self.where.cb_sched, self.where.sp_workers
        form.addRow("scheduler", self.where)
        frow = QHBoxLayout()
        self.ed_file = QLineEdit()
        self.ed_file.setPlaceholderText("optional: rows are appended as they arrive")
        self.ed_file.setToolTip("Result CSV: each finished point is appended (and synced to disk) at once, so "
                                "nothing finished is lost; with Resume a second run skips the points already in it")
        self.bt_file = QPushButton("…")
        self.bt_file.setMaximumWidth(30)
        self.bt_file.setToolTip("Choose the result CSV file the rows are appended to")
        self.bt_file.clicked.connect(self._choose_file)
        self.ck_resume = QCheckBox("Resume")
        self.ck_resume.setToolTip("Continue the result file: only the points not yet in it run (the file must "
                                  "come from this very sweep)")
        frow.addWidget(self.ed_file, 1)
        frow.addWidget(self.bt_file)
        frow.addWidget(self.ck_resume)
        form.addRow("result file", frow)
        lay.addLayout(form)
        row = QHBoxLayout()
        self.bt_run = QPushButton("Run sweep")
        self.bt_run.clicked.connect(self.run)
        self.bt_run.setToolTip("Run every point of the sweep on the chosen scheduler (progress below; Cancel stops)")
        self.bt_cancel = QPushButton("Cancel")
        self.bt_cancel.setEnabled(False)
        self.bt_cancel.setToolTip("Cancel the points not finished yet; finished rows stay (and in the result file)")
        self.bt_cancel.clicked.connect(self.cancel)
        self.bt_csv = QPushButton("Export CSV…")
        self.bt_csv.clicked.connect(lambda: self.export_csv())
        self.bt_csv.setToolTip("Save the finished rows as CSV")
        for b in (self.bt_run, self.bt_cancel, self.bt_csv):
            row.addWidget(b)
        lay.addLayout(row)
        self.progress = QProgressBar()
        self.progress.setFormat(f"%v / %m {unit}")
        self.progress.setToolTip("Points finished across the whole cluster")
        lay.addWidget(self.progress)
        self.lbl = QLabel("")
        self.lbl.setWordWrap(True)
        self.lbl.setOpenExternalLinks(True)
        lay.addWidget(self.lbl)
        self._overwrite = False

    # ------------------------------------------------------------ settings
    def state(self) -> dict:
        return {"scheduler": self.cb_sched.currentText().strip(), "workers": self.sp_workers.value(),
                "file": self.ed_file.text(), "resume": self.ck_resume.isChecked()}

    def restore(self, state) -> None:
        """The result file and Resume; the scheduler and workers only while the app-wide preference
        is unset (settings written before there was one)."""
        if not isinstance(state, dict):
            return
        if preference().scheduler is None:
            if isinstance(state.get("scheduler"), str) and state["scheduler"]:
                self.cb_sched.setCurrentText(state["scheduler"])
            if isinstance(state.get("workers"), int):
                self.sp_workers.setValue(state["workers"])
        if isinstance(state.get("file"), str):
            self.ed_file.setText(state["file"])
        if isinstance(state.get("resume"), bool):
            self.ck_resume.setChecked(state["resume"])

    # ------------------------------------------------------------- running
    def _say(self, text, level="error"):
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    def _choose_file(self):
        path, _ = QFileDialog.getSaveFileName(self, "Sweep result file", self.ed_file.text() or "sweep.csv",
                                              "CSV (*.csv)", options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.ed_file.setText(path)

    @property
    def running(self) -> bool:
        return self.job is not None

    def run(self) -> bool:
        """Build the sweep (bad input: a message, nothing runs) and start it on a worker thread."""
        if self.job is not None:
            return False
        try:
            sched = parse_scheduler(self.cb_sched.currentText())
            path = self.ed_file.text().strip() or None
            mode = "resume" if self.ck_resume.isChecked() else "new"
            sweep = self.make_sweep(path, mode, sched, self.sp_workers.value() or None)
        except ExplorerError as exc:
            self._say(str(exc))
            return False
        self.sweep = sweep
        self.columns = list(sweep.columns)
        self.rows = []
        if sweep.file is not None and mode == "resume":
            try:
                sweep.file.check()
                if sweep.file.path.exists():
                    self.rows = [r for r in read_rows(sweep.file.path)[2]]
            except ExplorerError as exc:
                self._say(str(exc))
                return False
        job = SweepJob(sweep)
        job.opened.connect(self._on_started)
        job.row.connect(self._on_row)
        job.status.connect(self._on_status)
        job.done.connect(lambda _r: self._end("done"))
        job.cancelled.connect(lambda: self._end("cancelled"))
        job.failed.connect(lambda msg: self._end(msg, failed=True))
        self.job = job
        self.bt_run.setEnabled(False)
        self.bt_cancel.setEnabled(True)
        self.progress.setRange(0, sweep.total)
        self.progress.setValue(len({r.get("point") for r in self.rows}))
        self.lbl.setText(f"starting the {sched} scheduler …")
        self.started.emit()
        job.start()
        return True

    def cancel(self):
        if self.job is not None:
            self.job.cancel()
            self.lbl.setText("cancelling …")

    def _on_started(self, st: dict):
        self._on_status(st)

    def _on_row(self, r: dict):
        self.rows.append(r)
        self.row.emit(r)

    def _on_status(self, st: dict):
        self.progress.setValue(st["finished"])
        self.lbl.setText(status_text(st))

    def _end(self, what: str, failed: bool = False):
        job, self.job = self.job, None
        if job is not None:
            job.wait(15000)
        self.bt_run.setEnabled(True)
        self.bt_cancel.setEnabled(False)
        errors = sum(1 for r in self.rows if r.get("error"))
        if failed:
            self._say(what)
        else:
            text = f"{len(self.rows)} rows, {what}" + (f"; {errors} point(s) failed (see the error column)"
                                                      if errors else "")
            if self.sweep is not None and self.sweep.file is not None:
                text += f"; rows in {self.sweep.file.path}"
            self.lbl.setText(text)
        self.finished.emit(what)

    def shutdown(self):
        """Cancel a running sweep and wait for its thread (the embedded cluster is stopped)."""
        if self.job is not None:
            job = self.job
            job.cancel()
            job.wait(30000)
            self.job = None

    # -------------------------------------------------------------- export
    def export_csv(self, path=None):
        """Write the rows so far (this run's, and the file's on resume) as one CSV."""
        if not self.rows:
            self._say("Run a sweep first.", "warning")
            return None
        path = path or QFileDialog.getSaveFileName(self, "Export sweep rows", "sweep.csv", "CSV (*.csv)")[0]
        if not path:
            return None
        try:
            p = check_output_path(path, (".csv",), "CSV")
            cols = self.columns or list(self.rows[0])
            with atomic_write(p, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(cols)
                for r in sorted(self.rows, key=lambda r: r.get("point", 0)):
                    w.writerow([format_value(r.get(c)) for c in cols])
        except (ExplorerError, OSError) as exc:
            self._say(str(exc))
            return None
        return str(p)
