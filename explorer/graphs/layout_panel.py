"""The Graphs workspace's layout controls and the live force layout.

:class:`LayoutPanel` owns the layout list (``kernels.graphs.layout.LAYOUTS``, each entry's help as
its tooltip; ``auto`` by default), the iteration count and the Pause / Continue and Stop buttons,
and the streaming of :class:`kernels.graphs.layout.ForceLayout` on a worker thread
(:class:`explorer.jobs.GeneratorJob`):

* the worker advances the layout in chunks of ``step(k)`` iterations, ``k`` adapted so that one
  chunk takes about :data:`CHUNK_S` seconds, and yields a copy of the positions (device array on
  the GPU, so the view uploads them by CUDA–GL interop; host array otherwise) at most
  :data:`PUSH_HZ` times a second; between chunks it yields nothing (``None``), so pause and cancel
  act within one chunk (the job checks them at every yield);
* the GUI thread keeps only the newest positions and emits :attr:`LayoutPanel.positions` once per
  event-loop turn (a slow frame never queues stale frames);
* dragging a vertex (:meth:`drag_to`) pins it with ``ForceLayout.pin`` under the lock the worker
  holds while it steps, so the layout follows; releasing (:meth:`drag_end`) lets it go.

The panel computes nothing itself: :meth:`initial_positions` (worker thread) runs a non-iterative
layout through ``compute_layout`` or makes the ForceLayout whose start positions are shown first.
"""
from __future__ import annotations

import threading
import time

from PyQt6.QtCore import QTimer, pyqtSignal
from PyQt6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QSpinBox, QWidget

from kernels.graphs.layout import LAYOUTS, ForceLayout, auto_layout_name, compute_layout
from kernels.graphs.layout.auto import AutoLayout

from ..jobs import GeneratorJob
from .overlay_panel import registry_combo

#: target seconds of one chunk of force iterations (pause / cancel act within one chunk)
CHUNK_S = 0.03
#: position pushes to the view per second at most
PUSH_HZ = 30.0
#: the iterations spin's default: the iterative layouts' own default
DEFAULT_ITERATIONS = max([c.default_iterations for c in LAYOUTS.values() if c.iterative] or [500])


class LayoutPanel(QWidget):
    """Layout list, iterations, Pause / Continue, Stop; the streamed force layout (module docstring).

    Signals: ``positions(object)`` new positions for the view ((n, 2) float32, NumPy or CuPy);
    ``state_changed(str)``: "running", "paused", "done", "stopped" or "idle"."""

    positions = pyqtSignal(object)
    state_changed = pyqtSignal(str)

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.message = message
        self.layout_obj: ForceLayout | None = None
        self.job: GeneratorJob | None = None
        self.lock = threading.Lock()
        self._pins: list[tuple[int, tuple[float, float] | None]] = []   # (vertex, xy | None = unpin)
        self._latest = None
        self._flush_queued = False
        self._flush_timer = QTimer(self)      # a child: no call after the panel is gone
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self._flush)
        self.state = "idle"
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.cb_layout = registry_combo(LAYOUTS, "Where the vertices are drawn (hover an entry for the "
                                        "method); applied to the next graph generated or opened")
        self.cb_layout.setCurrentIndex(self.cb_layout.findData(AutoLayout.name))
        self.sp_iter = QSpinBox()
        self.sp_iter.setRange(1, 1_000_000)
        self.sp_iter.setValue(DEFAULT_ITERATIONS)
        self.sp_iter.setToolTip("Force layout: iterations streamed to the view (Continue runs as many again)")
        self.bt_pause = QPushButton("Pause")
        self.bt_pause.setToolTip("Pause the live force layout, or continue it (drag a vertex to pin it "
                                 "while it runs or is paused)")
        self.bt_stop = QPushButton("Stop")
        self.bt_stop.setToolTip("Stop the live force layout where it is")
        self.bt_pause.clicked.connect(self.toggle_pause)
        self.bt_stop.clicked.connect(self.cancel)
        row = QHBoxLayout()
        row.addWidget(self.bt_pause)
        row.addWidget(self.bt_stop)
        form.addRow("layout", self.cb_layout)
        form.addRow("iterations", self.sp_iter)
        form.addRow("live", row)
        self._update_buttons()

    # ------------------------------------------------------------ the choice
    def name(self) -> str:
        return self.cb_layout.currentData()

    def set_name(self, name: str) -> bool:
        i = self.cb_layout.findData(name)
        if i >= 0:
            self.cb_layout.setCurrentIndex(i)
        return i >= 0

    def resolved(self, g):
        """The layout class the choice means for ``g`` (``auto`` → its pick)."""
        cls = LAYOUTS[self.name()]
        return LAYOUTS[auto_layout_name(g)] if issubclass(cls, AutoLayout) else cls

    def initial_positions(self, g, cancel=None):
        """(positions (n, 2) float32 host, ForceLayout or None) for ``g`` (worker thread): an
        iterative layout starts from its seeded initial positions and is streamed afterwards
        (:meth:`stream`); the others are computed here."""
        cls = self.resolved(g)
        if cls.iterative:
            lay = ForceLayout(g, backend=self.backend, seed=0)
            return lay.positions_host(), lay
        return compute_layout(g, cls.name, backend=self.backend, cancel=cancel), None

    # ------------------------------------------------------------ streaming
    def stream(self, lay: ForceLayout | None = None) -> None:
        """Run ``lay`` (or the current layout, again) for the chosen number of iterations, live."""
        self.cancel()
        if lay is not None:
            self.layout_obj = lay
        lay = self.layout_obj
        if lay is None:
            return
        target = lay.iteration + self.sp_iter.value()
        gpu = bool(getattr(self.backend, "is_gpu", False))
        be = self.backend

        def run(cancelled):
            k, last = 1, 0.0
            while lay.iteration < target and not cancelled():
                with self.lock:
                    self._apply_pins()
                    t0 = time.perf_counter()
                    lay.step(min(k, target - lay.iteration))
                    if gpu:
                        be.synchronize()
                    dt = time.perf_counter() - t0
                k = min(4 * k, k * 2 if dt < CHUNK_S / 2 else k) if dt < CHUNK_S else max(1, k // 2)
                now = time.perf_counter()
                if now - last >= 1.0 / PUSH_HZ:
                    last = now
                    with self.lock:
                        pos = lay.positions().copy()
                    yield pos
                else:
                    yield None
            with self.lock:
                self._apply_pins()
                yield lay.positions().copy()
            return lay.iteration

        job = self.job = GeneratorJob("Force layout", run)
        job.yielded.connect(self._on_yield)
        job.done.connect(lambda _r: self._ended(job, "done"))
        job.cancelled.connect(lambda: self._ended(job, "stopped"))
        job.failed.connect(lambda msg: (self._ended(job, "stopped"), self.message and self.message(msg, "error")))
        self._set_state("running")
        job.start()

    def _apply_pins(self) -> None:
        """Apply the queued drags (under the lock)."""
        pins, self._pins = self._pins, []
        for i, xy in pins:
            if xy is None:
                self.layout_obj.unpin(i)
            else:
                self.layout_obj.pin(i, xy)

    def _on_yield(self, pos) -> None:
        if pos is None or self.sender() is not self.job:
            return
        self._latest = pos
        if not self._flush_queued:
            self._flush_queued = True
            self._flush_timer.start(0)

    def _flush(self) -> None:
        self._flush_queued = False
        pos, self._latest = self._latest, None
        if pos is not None:
            self.positions.emit(pos)

    def _ended(self, job, state: str) -> None:
        if job is not self.job:
            return
        self.job = None
        self._flush()
        self._set_state(state)

    # ------------------------------------------------------------ control
    def is_running(self) -> bool:
        return self.job is not None and not self.job.is_paused

    def is_paused(self) -> bool:
        return self.job is not None and self.job.is_paused

    def pause(self) -> None:
        if self.job is not None and not self.job.is_paused:
            self.job.pause()
            self._set_state("paused")

    def resume(self) -> None:
        """Continue a paused layout, or run it for another round of iterations after it ended."""
        if self.job is not None:
            if self.job.is_paused:
                self.job.resume()
                self._set_state("running")
        elif self.layout_obj is not None:
            self.stream()

    def toggle_pause(self) -> None:
        (self.pause if self.is_running() else self.resume)()

    def cancel(self) -> None:
        """Stop the streamed layout (it keeps the positions reached)."""
        job, self.job = self.job, None
        if job is not None:
            job.cancel()
            self._set_state("stopped")

    def forget(self) -> None:
        """A new graph: stop and drop the layout."""
        self.cancel()
        self.layout_obj = None
        self._set_state("idle")

    def shutdown(self, msecs: int = 5000) -> None:
        job = self.job
        self.cancel()
        if job is not None:
            job.wait(msecs)

    def can_drag(self) -> bool:
        """Dragging a vertex moves it in the layout (the layout runs or is paused)."""
        return self.layout_obj is not None and self.job is not None

    def drag_to(self, i: int, xy) -> None:
        """Pin vertex ``i`` at ``xy`` (data units); the view follows at once while paused."""
        if self.layout_obj is None:
            return
        self._pins.append((int(i), (float(xy[0]), float(xy[1]))))
        if self.is_paused():
            with self.lock:
                self._apply_pins()
                pos = self.layout_obj.positions().copy()
            self.positions.emit(pos)

    def drag_end(self, i: int) -> None:
        if self.layout_obj is not None:
            self._pins.append((int(i), None))
            if self.job is None or self.is_paused():
                with self.lock:
                    self._apply_pins()

    def _set_state(self, state: str) -> None:
        self.state = state
        self._update_buttons()
        self.state_changed.emit(state)

    def _update_buttons(self) -> None:
        has = self.layout_obj is not None
        self.bt_pause.setEnabled(has)
        self.bt_pause.setText("Pause" if self.state == "running" else "Continue")
        self.bt_stop.setEnabled(self.job is not None)
