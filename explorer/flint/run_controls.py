"""Run / Pause / Stop, the progress bar and the speed line of the Flint workspace as one part,
:class:`RunControls`.  It owns the running worker (``explorer.flint.worker``): :meth:`RunControls.start`
takes one, pause and stop act on it, and ``finished(worker)`` says when it has ended, whatever the
outcome (the traces so far are kept by the caller)."""
from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from .worker import PROGRESS_SCALE

TOOLTIPS = {
    "bt_run": "Compile the model for the runtime and integrate it, streaming the traces (Space)",
    "bt_pause": "Pause or resume the run",
    "bt_stop": "Stop the run, keeping the traces so far",
    "progress": "Progress of the run (steps or output points done)",
    "lb_rate": "Integration speed (steps or output points per second) and the time left",
}


class RunControls(QWidget):
    """``run_clicked()`` from the Run button; ``rate(per_second)`` after each chunk;
    ``paused_changed(paused)``; ``finished(worker)`` when the worker has ended."""
    run_clicked = pyqtSignal()
    rate = pyqtSignal(float)
    paused_changed = pyqtSignal(bool)
    finished = pyqtSignal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.worker = None
        self._total = 1
        self._unit = "steps"
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.bt_run, self.bt_pause, self.bt_stop = QPushButton("Run"), QPushButton("Pause"), QPushButton("Stop")
        for b in (self.bt_run, self.bt_pause, self.bt_stop):
            row.addWidget(b)
        lay.addLayout(row)
        self.progress = QProgressBar()
        self.lb_rate = QLabel("")
        self.lb_rate.setWordWrap(True)
        lay.addWidget(self.progress)
        lay.addWidget(self.lb_rate)
        for name, tip in TOOLTIPS.items():
            getattr(self, name).setToolTip(tip)
        self.bt_run.clicked.connect(self.run_clicked)
        self.bt_pause.clicked.connect(self.pause)
        self.bt_stop.clicked.connect(self.stop)

    def start(self, worker, total: int, unit: str = "steps") -> None:
        """Start ``worker`` (a :class:`explorer.jobs.Job` with ``steps(done, per_second)``); ``total``
        steps (or output points, ``unit``) make the whole bar."""
        self.worker, self._total, self._unit = worker, max(int(total), 1), unit
        self.progress.setRange(0, PROGRESS_SCALE)
        self.progress.setValue(0)
        worker.steps.connect(self._on_progress)
        worker.finished.connect(lambda w=worker: self._on_done(w))
        worker.start()
        self.bt_run.setText("Running…")

    def is_running(self) -> bool:
        return self.worker is not None

    def pause(self) -> None:
        """Pause, or resume a paused run."""
        if self.worker is not None:
            paused = self.worker.toggle_pause()
            self.bt_pause.setText("Resume" if paused else "Pause")
            self.paused_changed.emit(paused)

    def paused(self) -> bool:
        return self.worker is not None and self.worker.is_paused

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def wait(self, ms: int = 10000) -> None:
        """Stop the run and wait for its thread (``finished`` is emitted here)."""
        w = self.worker
        if w is not None:
            w.cancel()
            w.wait(ms)
            self._on_done(w)

    def _on_progress(self, done: int, rate: float) -> None:
        self.progress.setValue(int(PROGRESS_SCALE * min(1.0, done / self._total)))
        left = (self._total - done) / rate if rate > 0 else 0
        self.lb_rate.setText(f"{rate:,.0f} {self._unit}/s, ETA {left:.1f} s")
        self.rate.emit(rate)

    def _on_done(self, w) -> None:
        if w is None or w is not self.worker:        # a finished worker already handled by wait()
            return
        self.worker = None
        self.bt_run.setText("Run")
        self.bt_pause.setText("Pause")
        w.wait(5000)
        self.finished.emit(w)

    def note(self, text: str, append: bool = False) -> None:
        """Replace (or extend) the speed line, e.g. "stopped at t = …"."""
        self.lb_rate.setText(self.lb_rate.text() + text if append else text)
