"""Runs a CahnHilliard simulation off the GUI thread.

``SimulationWorker`` is a QObject moved to its own QThread.  While running, its
``_tick`` slot advances ``steps_per_frame`` steps (under ``lock``), then
re-queues itself with a zero-length timer so the worker's event loop stays
responsive to pause/step requests.  Frames are handed to the GUI by the
``frame`` signal at most ~30 times per second and only after the GUI has
consumed the previous one (``frame_done()``), so a slow display never builds a
queue.  Every GUI-thread access that mutates the simulation takes ``lock``.

Slow frames (a 4096² grid on the CPU: seconds per frame) are cut into chunks of about
``chunk_seconds`` of stepping, the lock released between them, with ``progress(done, total)``
after each, so that a pause, a parameter edit or a snapshot never waits a whole frame and the
GUI can show how far the frame has got.  The structure factor S(k) (an FFT of the whole field)
is computed here too, when the GUI asks for it (``want_structure``), never on the GUI thread.
"""
from __future__ import annotations

import threading
import time
from collections import deque

from PyQt6.QtCore import QObject, QThread, QTimer, pyqtSignal, pyqtSlot

from kernels.cahn_hilliard import diagnostics
from kernels.errors import ExplorerError


class SimulationWorker(QObject):
    #: (field copy on the backend, info dict: t, steps, steps_per_s, history snapshot …)
    frame = pyqtSignal(object, dict)
    #: user-facing message of an ExplorerError raised while stepping (the run stops)
    error = pyqtSignal(str)
    #: True while running
    running_changed = pyqtSignal(bool)
    #: (steps done, steps of this frame) after each chunk of a slow frame
    progress = pyqtSignal(int, int)

    _kick = pyqtSignal(int)
    _step_req = pyqtSignal(int)

    def __init__(self, sim, steps_per_frame: int = 10, max_fps: float = 30.0, chunk_seconds: float = 0.25):
        super().__init__()
        self.sim = sim
        self.lock = threading.RLock()
        self.steps_per_frame = int(steps_per_frame)
        self.min_interval = 1.0 / max_fps
        self.chunk_seconds = float(chunk_seconds)
        self.step_seconds = 0.0         # wall time of one step, measured
        self.want_structure = False     # the GUI asks for S(k) with the next frame
        self.structure_seconds = 0.0    # wall time of the last S(k)
        self._running = False
        self._gen = 0   # run generation: a pause/start pair never leaves two tick chains
        self._awaiting_gui = threading.Event()
        self._last_emit = 0.0
        self._rate = deque(maxlen=30)   # (wall time, steps) samples for steps/s
        self._kick.connect(self._tick)
        self._step_req.connect(self._do_step)
        self.thread = QThread()
        self.thread.setObjectName("CahnHilliardWorker")
        self.moveToThread(self.thread)
        self.thread.start()

    # ---------------------------------------------------------- GUI-side API
    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        if not self._running:
            self._running = True
            self._rate.clear()
            self._gen += 1
            self.running_changed.emit(True)
            self._kick.emit(self._gen)

    def pause(self) -> None:
        if self._running:
            self._running = False
            self.running_changed.emit(False)

    def step_once(self, n: int | None = None) -> None:
        """Advance exactly n (default steps_per_frame) steps in the worker thread, then emit a frame."""
        if not self._running:
            self._step_req.emit(int(n or self.steps_per_frame))

    def frame_done(self) -> None:
        """The GUI has drawn the last frame; the next one may be sent."""
        self._awaiting_gui.clear()

    def snapshot(self) -> tuple:
        """(field copy, info) of the current state, taken under the lock (GUI thread)."""
        with self.lock:
            return self._snapshot_locked()

    def stop(self) -> None:
        """Stop the thread (call once, when the workspace closes)."""
        self._running = False
        self.thread.quit()
        self.thread.wait(5000)

    # ------------------------------------------------------ worker-side slots
    def _snapshot_locked(self) -> tuple:
        sim = self.sim
        info = {
            "t": sim.t,
            "steps": sim.step_count,
            "steps_per_s": self._steps_per_s(),
            "history": sim.history.as_dict(),
            "shape": tuple(sim.phi.shape),
        }
        if self.want_structure:
            self.want_structure = False
            t0 = time.perf_counter()
            info["structure"] = diagnostics.structure_factor(sim.phi, sim.params.dx)
            self.structure_seconds = time.perf_counter() - t0
        return sim.phi.copy(), info

    def _steps_per_s(self) -> float:
        if len(self._rate) < 2:
            return 0.0
        (t0, s0), (t1, s1) = self._rate[0], self._rate[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0

    def _chunk(self, left: int) -> int:
        """Steps to take under the lock next: all that are left, unless that takes longer than
        ``chunk_seconds`` at the measured speed."""
        if self.step_seconds * left <= self.chunk_seconds:
            return left
        return max(1, min(left, int(self.chunk_seconds / self.step_seconds)))

    def _advance(self, n: int, whole: bool = False) -> bool:
        """Advance n steps in chunks (see the module doc); a pause ends a running frame after the
        current chunk (``whole``: a Step request, always n steps).  One history point per call."""
        done = 0
        try:
            while done < n:
                k = self._chunk(n - done)
                last = done + k == n or not (whole or self._running)
                with self.lock:
                    t0 = time.perf_counter()
                    self.sim.step(k, record=last)
                    self.step_seconds = (time.perf_counter() - t0) / k
                    self._rate.append((time.perf_counter(), self.sim.step_count))
                done += k
                if k < n:
                    self.progress.emit(done if not last else n, n)
                if last:
                    break
            return True
        except ExplorerError as exc:
            self._running = False
            self.running_changed.emit(False)
            self.error.emit(str(exc))
            self._emit(force=True)   # show the restored last good field
            return False
        except Exception as exc:  # never let the worker thread die silently
            self._running = False
            self.running_changed.emit(False)
            self.error.emit(f"unexpected error while stepping: {exc.__class__.__name__}: {exc}")
            return False

    def _emit(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and (self._awaiting_gui.is_set() or now - self._last_emit < self.min_interval):
            return
        with self.lock:
            field, info = self._snapshot_locked()
        self._last_emit = now
        self._awaiting_gui.set()
        self.frame.emit(field, info)

    @pyqtSlot(int)
    def _tick(self, gen: int) -> None:
        if gen != self._gen:
            return   # a stale chain from before the last pause/start
        if not self._running:
            self._emit(force=True)   # make sure the final state is on screen
            return
        if self._advance(self.steps_per_frame):
            self._emit()
        QTimer.singleShot(0, lambda: self._tick(gen))

    @pyqtSlot(int)
    def _do_step(self, n: int) -> None:
        if self._running:
            return
        if self._advance(n, whole=True):
            self._emit(force=True)
