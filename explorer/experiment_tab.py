"""A generic tab for any paper experiment (:class:`kernels.experiments.Experiment`, issue 37 §2): a
new figure or table registered in an experiments registry appears in the GUI with no GUI code.

:class:`ExperimentTab` is a composed part (it owns its state and widgets): the experiment's title; Run
/ Cancel and a progress bar — ``experiment.rows(**settings)`` with the experiment's
:meth:`~kernels.experiments.Experiment.defaults` (and the tab's own ``settings`` over them) runs as an
:class:`explorer.jobs.GeneratorJob` off the GUI thread, Cancel stops it between rows; a table of the
rows as they arrive (columns and cells from ``columns_for`` / ``table``, in the experiment's serial
order, units from the experiment's ``units`` in the tooltips); the paper's claims checked
against the rows (``claims``: ✓ held, ✗ not held, – not measured, the measured numbers as tooltip);
and Export CSV through ``experiment.to_csv`` and :func:`explorer.export.write_file` (atomic).

``rows`` is called with ``backend`` and ``cancel`` (the job's ``cancelled()``) when its signature names
them and the settings lack them; settings it cannot take are refused before the run, by name.
"""
from __future__ import annotations

import inspect
import math
from numbers import Integral, Real

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QAbstractItemView, QFileDialog, QHBoxLayout, QLabel, QListWidget,
                             QListWidgetItem, QProgressBar, QPushButton, QTableWidget, QTableWidgetItem,
                             QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.experiments import Claim, Experiment

from .export import guarded, write_file
from .jobs import GeneratorJob

#: claim verdict → the mark shown before its text
MARKS = {True: "✓", False: "✗", None: "–"}


def cell_text(value) -> str:
    """A table cell as shown: floats to 4 significant digits, booleans as yes / no, None empty, the rest
    as ``str`` (the CSV keeps the values themselves)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        v = float(value)
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    return str(value)


def claim_text(claim: Claim) -> str:
    """One claim as a line of the claims list: its mark and text."""
    return f"{MARKS[claim.held]} {claim.text}"


def run_settings(experiment: Experiment, settings: dict | None = None, backend=None) -> dict:
    """The keyword arguments of a default run: ``experiment.defaults()`` with ``settings`` over them, plus
    ``backend`` when ``rows`` names it (and it is given); :class:`~kernels.errors.InvalidParameter` naming
    the missing or unknown settings when ``rows`` cannot take them."""
    kw = {**experiment.defaults(), **(settings or {})}
    params = inspect.signature(experiment.rows).parameters
    if backend is not None and "backend" in params and "backend" not in kw:
        kw["backend"] = backend
    probe = dict(kw)
    if "cancel" in params and "cancel" not in probe:
        probe["cancel"] = None
    try:
        inspect.signature(experiment.rows).bind(**probe)
    except TypeError as exc:
        raise InvalidParameter(f"cannot run {experiment.name} with its default settings: {exc}") from None
    return kw


class ExperimentTab(QWidget):
    """Run, watch, check and export one :class:`~kernels.experiments.Experiment` (module docstring).

    ``rows`` holds the finished rows in the experiment's serial order; ``job`` the running job (None
    when idle); ``finished`` is emitted when a run ends (done, failed or cancelled)."""

    finished = pyqtSignal()

    def __init__(self, experiment: Experiment, backend=None, message=None, settings: dict | None = None,
                 parent=None):
        super().__init__(parent)
        self.experiment, self.backend, self.message = experiment, backend, message
        #: settings over the experiment's defaults for the next run
        self.settings = dict(settings or {})
        self.rows: list = []
        self.job = None
        self._claims: list[Claim] = []
        self._failure: str | None = None
        lay = QVBoxLayout(self)
        self.title = QLabel(f"<b>{experiment.title or experiment.name}</b>")
        self.title.setWordWrap(True)
        self.title.setToolTip(f"Experiment {experiment.name!r}: {experiment.help}")
        lay.addWidget(self.title)
        lay.addLayout(self._buttons())
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("%v rows")
        self.progress.setToolTip("Rows finished (the number of rows of a run is known when it ends)")
        lay.addWidget(self.progress)
        self.lbl = QLabel("Nothing run.")
        self.lbl.setWordWrap(True)
        self.lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.lbl)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setToolTip("The rows measured so far, one per point, in the experiment's order")
        self._set_columns(tuple(experiment.columns))
        lay.addWidget(self.table, 3)
        lay.addWidget(QLabel("What the paper says, checked against these rows:"))
        self.claims_list = QListWidget()
        self.claims_list.setToolTip("✓ holds, ✗ does not hold, – these rows do not measure it "
                                    "(hover a claim for the measured numbers)")
        lay.addWidget(self.claims_list, 1)
        self._show_claims()

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.bt_run = QPushButton("Run")
        self.bt_run.setToolTip(f"Re-run {self.experiment.title or self.experiment.name} with its default settings")
        self.bt_run.clicked.connect(lambda: self.run())
        self.bt_cancel = QPushButton("Cancel")
        self.bt_cancel.setEnabled(False)
        self.bt_cancel.setToolTip("Stop after the row being measured")
        self.bt_cancel.clicked.connect(self.cancel)
        self.bt_csv = QPushButton("Export CSV…")
        self.bt_csv.setToolTip("Save every finished row as CSV (the experiment's columns)")
        self.bt_csv.clicked.connect(lambda: self.export_csv())
        for b in (self.bt_run, self.bt_cancel, self.bt_csv):
            row.addWidget(b)
        return row

    # ------------------------------------------------------------------ run
    def run(self) -> bool:
        """Start a run with the experiment's defaults and :attr:`settings`; False (with a message) when
        one is running or the settings do not fit ``rows``."""
        if self.job is not None:
            return False
        try:
            kw = run_settings(self.experiment, self.settings, self.backend)
        except InvalidParameter as exc:
            self._say(str(exc))
            return False
        takes_cancel = "cancel" in inspect.signature(self.experiment.rows).parameters and "cancel" not in kw
        exp = self.experiment

        def rows(cancelled):
            return exp.rows(**kw, cancel=cancelled) if takes_cancel else exp.rows(**kw)

        self.rows, self._claims = [], []
        self._redraw()
        self._show_claims()
        self.lbl.setText("Running …")
        self.job, self._failure = GeneratorJob(exp.title or exp.name, rows), None
        self.job.yielded.connect(self._on_row)
        self.job.failed.connect(lambda msg: setattr(self, "_failure", msg))
        self.job.finished.connect(self._end)         # last of the job's signals, whichever way it ended
        for b, on in ((self.bt_run, False), (self.bt_cancel, True)):
            b.setEnabled(on)
        self.progress.setRange(0, 0)                 # busy: a run's number of rows is not known ahead
        self.job.start()
        return True

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def _on_row(self, row) -> None:
        """A finished row: kept in the experiment's serial order and shown; a row whose own check failed
        (``Experiment.problem``) is said as a warning."""
        self.rows.append(row)
        self.rows = self.experiment.ordered(self.rows)
        self._redraw()
        self.lbl.setText(f"Running … {len(self.rows)} row{'s' * (len(self.rows) != 1)}")
        why = self.experiment.problem(row)
        if why and self.message is not None:
            self.message(why, "warning")

    def _end(self) -> None:
        """The run ended (done, failed or cancelled): buttons back, the claims checked on its rows."""
        job, self.job = self.job, None
        if job is None:
            return
        job.wait(5000)
        failed, what = self._failure is not None, self._failure or ("cancelled" if job.is_cancelled() else "done")
        self.bt_run.setEnabled(True)
        self.bt_cancel.setEnabled(False)
        n = len(self.rows)
        self.progress.setRange(0, max(1, n))
        self.progress.setValue(n)
        self._claims = self.check_claims()
        self._show_claims()
        if failed:
            self._say(what)
        else:
            held = sum(c.held is True for c in self._claims)
            text = f"{n} row{'s' * (n != 1)}; {held} of {len(self._claims)} claims hold"
            self.lbl.setText(text + ("" if what == "done" else f" — {what}"))
        self.finished.emit()

    def check_claims(self) -> list[Claim]:
        """The experiment's claims on the rows shown; a claim check that cannot read partial rows (a
        cancelled run) becomes one unmeasured claim saying why."""
        if not self.rows:
            return []
        try:
            return list(self.experiment.claims(self.rows))
        except (ArithmeticError, LookupError, TypeError, ValueError) as exc:
            return [Claim("the paper's claims", None, f"could not be checked on these rows: {exc}")]

    # ------------------------------------------------------------------ display
    def _units(self) -> dict:
        return dict(self.experiment.units)

    def _set_columns(self, cols: tuple) -> None:
        self._cols = cols
        self.table.setColumnCount(len(cols))
        units = self._units()
        for j, c in enumerate(cols):
            item = QTableWidgetItem(c)
            item.setToolTip(f"{c} ({units[c]})" if c in units else c)
            self.table.setHorizontalHeaderItem(j, item)

    def _redraw(self) -> None:
        cols = tuple(self.experiment.columns_for(self.rows)) if self.rows else tuple(self.experiment.columns)
        if cols != self._cols:
            self._set_columns(cols)
        cells = list(self.experiment.table(self.rows)) if self.rows else []
        units = self._units()
        self.table.setRowCount(len(cells))
        for i, line in enumerate(cells):
            for j, (c, v) in enumerate(zip(cols, line)):
                item = QTableWidgetItem(cell_text(v))
                item.setToolTip(f"{c} = {v!r}" + (f" {units[c]}" if c in units else ""))
                self.table.setItem(i, j, item)
        if cells:
            self.table.scrollToBottom()

    def _show_claims(self) -> None:
        self.claims_list.clear()
        if not self._claims:
            self.claims_list.addItem("– Run the experiment to check the paper's claims.")
            return
        for c in self._claims:
            item = QListWidgetItem(claim_text(c))
            item.setToolTip(f"{c.verdict}: {c.detail}" if c.detail else c.verdict)
            self.claims_list.addItem(item)

    def claims_shown(self) -> list[str]:
        """The claims list's lines, as shown."""
        return [self.claims_list.item(i).text() for i in range(self.claims_list.count())]

    def cells_shown(self) -> list[list[str]]:
        """The table's cells, as shown, row by row."""
        return [[self.table.item(i, j).text() for j in range(self.table.columnCount())]
                for i in range(self.table.rowCount())]

    def _say(self, text: str, level: str = "error") -> None:
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    # ------------------------------------------------------------------ exports, state
    def export_csv(self, path=None):
        """The finished rows as CSV (``experiment.to_csv``: its columns, written atomically through
        :func:`explorer.export.write_file`); the path written, or None (nothing to write, the dialog
        cancelled, or a message on failure)."""
        exp, rows = self.experiment, list(self.rows)
        if not rows:
            return self._say("Run the experiment first.", "warning")
        path = path or QFileDialog.getSaveFileName(self, "Export CSV", f"{exp.name}.csv", "CSV (*.csv)")[0]
        if path:
            out = guarded(self._say, f"export the rows to {path}",
                          lambda: write_file(path, (".csv",), lambda tmp: exp.to_csv(rows, tmp), "CSV file"))
            if out is not None:
                self._say(f"Wrote {out}", "info")
            return out
        return None

    def shown(self) -> QWidget:
        """The widget the workspace's figure export shows for this tab (the rows' table)."""
        return self.table

    def state(self) -> dict:
        """Nothing of a generic tab is kept in sessions (it runs its experiment's defaults)."""
        return {}

    def restore(self, state) -> None:
        """Sessions keep nothing of a generic tab (see :meth:`state`)."""
