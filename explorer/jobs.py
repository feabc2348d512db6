"""Background jobs of the workspaces: one family, off the GUI thread, with progress, pause and cancel.

The shape is napari's ``_qt/qthreading.py`` (and superqt's ``utils._qthreading``): the work runs as
a ``QRunnable`` on a thread pool, and a ``QObject`` that lives in the GUI thread carries the signals,
so every slot runs in the GUI thread.

* :class:`FunctionJob` — ``fn(progress, cancelled) -> result``: ``progress(fraction)`` reports 0…1,
  ``cancelled()`` is polled by the function (a cancelled function may also raise InterruptedError).
* :class:`GeneratorJob` — ``fn(cancelled)`` returns a generator: each value it yields is emitted as
  ``yielded(value)`` (and progress as a fraction of ``total`` when given); between yields the job
  waits while paused and stops (closing the generator) when cancelled; the generator's ``return``
  value is the result.
* Subclasses may override :meth:`Job.work` and call :meth:`Job.checkpoint` between steps.

Signals, in order: ``started()``; ``progress(float)`` / ``yielded(object)`` while running; then
exactly one of ``done(result)``, ``failed(message)`` or ``cancelled()``; ``finished()`` last, always.
Exceptions become messages in one place (:func:`error_message`): a user-facing ``ExplorerError``,
``OSError`` or ``MemoryError`` by its text; any other exception (a bug) with its class name and a
traceback on stderr — the app stays alive either way.
"""
from __future__ import annotations

import threading
import traceback
from typing import Callable

from PyQt6.QtCore import QObject, QRunnable, QThreadPool, pyqtSignal

from kernels.errors import ExplorerError

_POOL: QThreadPool | None = None
_LIVE: set = set()             # running jobs, kept alive until they finish (like napari's worker set)


def pool() -> QThreadPool:
    """The app's job pool: its own, so that jobs never queue behind Qt's (2 threads on 2 cores)."""
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(32)
    return _POOL


def error_message(exc: BaseException, name: str = "the job") -> str | None:
    """The one message shown for ``exc`` raised by job ``name``; None for a cancellation."""
    if isinstance(exc, InterruptedError):
        return None
    if isinstance(exc, (ExplorerError, OSError, MemoryError)):
        return str(exc) or exc.__class__.__name__
    traceback.print_exception(exc)
    return f"{name} failed: {exc.__class__.__name__}: {exc}"


class _Runnable(QRunnable):
    def __init__(self, job: "Job"):
        super().__init__()
        self.job = job

    def run(self):
        self.job._run()


class Job(QObject):
    """Base of the family: lifecycle, signals, pause / cancel flags.  Subclasses define :meth:`work`."""

    started = pyqtSignal()
    progress = pyqtSignal(float)
    yielded = pyqtSignal(object)
    done = pyqtSignal(object)
    failed = pyqtSignal(str)
    cancelled = pyqtSignal()
    finished = pyqtSignal()

    def __init__(self, name: str = "job", parent=None):
        super().__init__(parent)
        self.name = name
        self._cancel = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self._ended = threading.Event()
        self._started = False
        self.finished.connect(lambda: _LIVE.discard(self))   # queued: after every other signal

    # ---------------------------------------------------------------- control (GUI thread)
    def start(self) -> None:
        """Queue the job on the pool (once)."""
        if self._started:
            raise RuntimeError(f"{self.name}: a job starts only once")
        self._started = True
        _LIVE.add(self)
        pool().start(_Runnable(self))

    def cancel(self) -> None:
        """Ask the job to stop at its next checkpoint (a paused job wakes up to stop)."""
        self._cancel.set()
        self._resume.set()

    def pause(self) -> None:
        self._resume.clear()

    def resume(self) -> None:
        self._resume.set()

    def toggle_pause(self) -> bool:
        """Pause a running job or resume a paused one; True when it is now paused."""
        (self.resume if self.is_paused else self.pause)()
        return self.is_paused

    @property
    def is_paused(self) -> bool:
        return not self._resume.is_set() and not self._cancel.is_set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def is_running(self) -> bool:
        return self._started and not self._ended.is_set()

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the work has ended (True) or ``msecs`` passed (False); True if never started."""
        return not self._started or self._ended.wait(msecs / 1000)

    # ---------------------------------------------------------------- in the worker thread
    def checkpoint(self) -> bool:
        """Wait while paused; True when the job is cancelled (the work should return then)."""
        self._resume.wait()
        return self._cancel.is_set()

    def work(self):
        """The job itself, in the worker thread; its return value is the result."""
        raise NotImplementedError

    def _run(self) -> None:
        try:
            self.started.emit()
            result = self.work()
            if self._cancel.is_set():
                self.cancelled.emit()
            else:
                self.done.emit(result)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes one message
            msg = error_message(exc, self.name)
            if msg is None:
                self.cancelled.emit()
            else:
                self.failed.emit(msg)
        finally:
            self._ended.set()
            self.finished.emit()


class FunctionJob(Job):
    """``fn(progress, cancelled) -> result`` on the pool (see the module docstring)."""

    def __init__(self, name: str, fn: Callable, parent=None):
        super().__init__(name, parent)
        self.fn = fn

    def work(self):
        return self.fn(self.progress.emit, self.is_cancelled)


class GeneratorJob(Job):
    """``fn(cancelled)`` returns a generator; each yielded value is emitted as ``yielded``; pause /
    cancel act between yields (``cancelled()`` lets a long step inside the generator stop early);
    ``total`` (optional) turns the count of yields into ``progress``."""

    def __init__(self, name: str, fn: Callable, total: int | None = None, parent=None):
        super().__init__(name, parent)
        self.fn, self.total = fn, total

    def work(self):
        gen = self.fn(self.is_cancelled)
        n = 0
        while True:
            if self.checkpoint():
                gen.close()
                return None
            try:
                value = next(gen)
            except StopIteration as stop:
                return stop.value
            n += 1
            self.yielded.emit(value)
            if self.total:
                self.progress.emit(min(1.0, n / self.total))


def wait_all(msecs: int = 30000) -> bool:
    """Cancel every running job and wait for them (at quit); True when all ended in time."""
    jobs = list(_LIVE)
    for j in jobs:
        j.cancel()
    return all(j.wait(msecs) for j in jobs)
