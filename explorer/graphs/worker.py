"""Run one long graph computation off the GUI thread, with progress and cancel."""
from __future__ import annotations

import traceback

from PyQt6.QtCore import QObject, QThread, pyqtSignal

from kernels.errors import ExplorerError


class Job(QObject):
    """``fn(progress, cancelled) -> result`` on a QThread; emits progress(float 0…1), done(result),
    failed(message), cancelled()."""

    progress = pyqtSignal(float)
    done = pyqtSignal(object)
    failed = pyqtSignal(str)
    cancelled = pyqtSignal()

    def __init__(self, name: str, fn):
        super().__init__()
        self.name, self.fn = name, fn
        self._cancel = False
        self.thread = QThread()
        self.moveToThread(self.thread)
        self.thread.started.connect(self._run)

    def start(self):
        self.thread.start()

    def cancel(self):
        self._cancel = True

    def is_cancelled(self) -> bool:
        return self._cancel

    def _run(self):
        try:
            res = self.fn(self.progress.emit, self.is_cancelled)
            if self._cancel:
                self.cancelled.emit()
            else:
                self.done.emit(res)
        except InterruptedError:
            self.cancelled.emit()
        except (ExplorerError, OSError, MemoryError) as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # a bug: still report it, keep the app alive
            traceback.print_exc()
            self.failed.emit(f"{self.name} failed: {exc.__class__.__name__}: {exc}")
        finally:
            self.thread.quit()
