"""The one timing helper of the GPU layer: CUDA events on the GPU, ``perf_counter`` on the host.

* :func:`time_calls` — call ``fn`` ``warmup`` times, then time ``repeat`` calls one by one:
  :class:`Timings` (seconds per call; ``.median``, ``.best``, ``.mean``).
* :class:`Stopwatch` — one interval: ``with Stopwatch(dev) as sw: …`` then ``sw.seconds``; or
  ``sw.start()`` … ``sw.stop()`` and ask ``sw.done()`` (no wait) / ``sw.seconds`` (waits) later;
  ``sw.lap()`` ends it and starts the next interval at the same instant (rolling windows);
  ``sw.end_event``: the CUDA event that ended it (a stream may wait on it).

On a CUDA device an interval is the time between two events recorded on the current stream
(``cudaEventElapsedTime``; resolution about 0.5 µs); it measures the GPU work issued between
them, not the host's.  On the host device (or ``device=None``) it is the wall-clock time of the
calls (``time.perf_counter``); any work the calls leave running is waited for first when the
device has a ``synchronize``.

``device``: a :class:`kernels.gpu.Device`, a device kind (``"cuda"``/``"host"``), an app backend
(:class:`kernels.backend.Backend`: GPU → CUDA events) or ``None`` (host clock).
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional (CUDA events only when a GPU is timed).
import statistics
import time
from dataclasses import dataclass
from typing import Callable


def _is_cuda(device) -> bool:
    if device is None:
        return False
    if isinstance(device, str):
        return device == "cuda"
    if hasattr(device, "is_gpu"):                          # kernels.backend.Backend
        return bool(device.is_gpu)
    return getattr(device, "kind", "") == "cuda"


def _cupy():
    import cupy
    return cupy


class Stopwatch:
    """One timed interval on ``device`` (see the module docstring)."""

    def __init__(self, device=None):
        self.cuda = _is_cuda(device)
        self._sync = getattr(device, "synchronize", None) if not self.cuda else None
        self._t0 = self._t1 = None

    def start(self) -> "Stopwatch":
        if self.cuda:
            cp = _cupy()
            self._t0, self._t1 = cp.cuda.Event(), None
            self._t0.record()
        else:
            if callable(self._sync):
                self._sync()
            self._t0, self._t1 = time.perf_counter(), None
        return self

    def stop(self) -> "Stopwatch":
        """End the interval (on the GPU: record the end event; no wait)."""
        if self._t0 is None:
            raise RuntimeError("the stopwatch was not started")
        if self.cuda:
            self._t1 = _cupy().cuda.Event()
            self._t1.record()
        else:
            if callable(self._sync):
                self._sync()
            self._t1 = time.perf_counter()
        return self

    def done(self) -> bool:
        """Whether the interval has ended (on the GPU: the end event has completed), without waiting."""
        if self._t1 is None:
            return False
        return bool(self._t1.done) if self.cuda else True

    @property
    def end_event(self):
        """The CUDA event that ended the interval (for a stream to wait on); ``None`` on the host."""
        return self._t1 if self.cuda else None

    def lap(self) -> "Stopwatch":
        """End this interval and begin the next at the same instant (on the GPU: the same event);
        returns the next interval's stopwatch, started."""
        self.stop()
        nxt = Stopwatch.__new__(Stopwatch)
        nxt.cuda, nxt._sync, nxt._t0, nxt._t1 = self.cuda, self._sync, self._t1, None
        return nxt

    @property
    def seconds(self) -> float:
        """The interval in seconds (on the GPU this waits for the end event)."""
        if self._t1 is None:
            raise RuntimeError("the stopwatch was not stopped")
        if self.cuda:
            self._t1.synchronize()
            return _cupy().cuda.get_elapsed_time(self._t0, self._t1) * 1e-3
        return self._t1 - self._t0

    @property
    def ms(self) -> float:
        return self.seconds * 1e3

    def __enter__(self) -> "Stopwatch":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass(frozen=True)
class Timings:
    """Seconds per timed call, in call order."""
    samples: tuple

    @property
    def median(self) -> float:
        return float(statistics.median(self.samples))

    @property
    def best(self) -> float:
        return float(min(self.samples))

    @property
    def mean(self) -> float:
        return float(statistics.fmean(self.samples))

    def __len__(self) -> int:
        return len(self.samples)


def time_calls(fn: Callable[[], object], repeat: int = 20, warmup: int = 1, device=None) -> Timings:
    """Call ``fn()`` ``warmup`` times untimed, then ``repeat`` times, each call its own interval
    (:class:`Stopwatch` on ``device``).  Returns :class:`Timings` (seconds per call)."""
    if int(repeat) < 1:
        raise ValueError("repeat must be at least 1")
    for _ in range(int(warmup)):
        fn()
    out = []
    for _ in range(int(repeat)):
        sw = Stopwatch(device).start()
        fn()
        out.append(sw.stop().seconds)
    return Timings(tuple(out))
