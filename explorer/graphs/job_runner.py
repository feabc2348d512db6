"""One background computation at a time for the Graphs workspace (generate, open, APSP, restore):
a :class:`explorer.jobs.FunctionJob` with its progress bar, its Cancel button, the buttons that wait
for it, and a one-line ``info`` label saying what runs or how it ended.

:class:`JobRunner` is a part that owns the running job: :meth:`start` refuses a second one (with a
warning in the message bar); when the job ends, ``on_done(result)`` runs (an exception there is one
message, never a crash), failures and cancellations are reported, then ``ended(name, ok)`` is emitted.
"""
from __future__ import annotations

import traceback

from PyQt6.QtCore import QObject, pyqtSignal

from ..jobs import FunctionJob


class JobRunner(QObject):
    """The running job of a workspace and the widgets that show it."""

    ended = pyqtSignal(str, bool)           # job name, finished with a result

    def __init__(self, progress, cancel_button, wait_buttons, message_bar, info, parent=None):
        super().__init__(parent)
        self.progress, self.cancel_button, self.wait_buttons = progress, cancel_button, tuple(wait_buttons)
        self.message_bar, self.info = message_bar, info
        self.job: FunctionJob | None = None

    def _idle(self, idle: bool) -> None:
        self.cancel_button.setEnabled(not idle)
        for b in self.wait_buttons:
            b.setEnabled(idle)

    def start(self, name: str, fn, on_done) -> bool:
        """Run ``fn(progress, cancelled)`` off the GUI thread; False (a warning) while a job runs."""
        if self.job is not None:
            self.message_bar.show_message("A computation is running: wait for it or press Cancel.", "warning")
            return False
        self.job = FunctionJob(name, fn)
        self.job.progress.connect(lambda f: self.progress.setValue(int(1000 * f)))
        self.job.done.connect(lambda r: self._finish(name, on_done, r))
        self.job.failed.connect(lambda msg: self._finish(name, None, msg, failed=True))
        self.job.cancelled.connect(lambda: self._finish(name, None, None, cancelled=True))
        self.progress.setValue(0)
        self._idle(False)
        self.info.setText(f"{name} …")
        self.job.start()
        return True

    def _finish(self, name, on_done, payload, failed=False, cancelled=False):
        job, self.job = self.job, None
        if job is not None:
            job.wait(5000)
        self._idle(True)
        ok = not (failed or cancelled)
        self.progress.setValue(1000 if ok else 0)
        if failed:
            self.message_bar.show_message(payload, "error")
            self.info.setText(f"{name} failed.")
        elif cancelled:
            self.message_bar.show_message(f"{name} cancelled.", "info")
            self.info.setText(f"{name} cancelled.")
        else:
            try:
                on_done(payload)
            except Exception as exc:  # keep the app alive and say what went wrong
                traceback.print_exc()
                self.message_bar.show_message(f"{name}: could not show the result ({exc})", "error")
        self.ended.emit(name, ok)
