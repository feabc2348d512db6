"""The run / cancel / export cycle shared by every sweep-style tab (Graphs reproduce tabs, the
Cahn–Hilliard Reproduce tab): rows stream from a :class:`explorer.jobs.GeneratorJob` into the tab,
CSV and figure exports go through :mod:`explorer.export` (atomic writes)."""
from __future__ import annotations

from PyQt6.QtWidgets import QFileDialog

from .export import Figure, guarded, save_figure, write_file
from .jobs import GeneratorJob


class SweepRunner:
    """The run / cancel / end cycle of a sweep tab (mixed into a QWidget).  The tab provides
    ``job`` (None when idle), ``message``, ``rows``, ``bt_run``, ``bt_cancel``, ``progress``, ``lbl``,
    ``_on_row(row)``, ``_summary()`` and a ``finished`` signal."""

    def _say(self, text, level="error"):
        if self.message is not None:
            self.message(text, level)
        self.lbl.setText(text)

    def _start(self, title: str, rows, total: int) -> None:
        """Run ``rows(cancelled)`` (an iterator of finished rows) on a worker thread, streaming each
        to ``_on_row``; the progress bar counts rows out of ``total``."""
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

    def cancel(self):
        if self.job is not None:
            self.job.cancel()

    def _end(self, what, failed=False):
        job, self.job = self.job, None
        if job is not None:
            job.wait(5000)
        self.bt_run.setEnabled(True)
        self.bt_cancel.setEnabled(False)
        if failed:
            self._say(what)
        else:
            self.lbl.setText(self._summary() + ("" if what == "done" else f" — {what}"))
        self.finished.emit()

    # -------------------------------------------------------------- exports (every sweep tab)
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
