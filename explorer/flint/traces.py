"""Recorded traces of a run, appended chunk by chunk without re-copying (capacity doubles), and the
up-front check that a run's recording fits in memory."""
from __future__ import annotations

import numpy as np

from kernels.backend import host_available_memory
from kernels.errors import InvalidParameter

#: a run may record at most this fraction of the host memory that is available when it starts
MEMORY_FRACTION = 0.5


class TraceBuffer:
    """Output times (k,) and samples (k, n_vars, n_cells), grown in place: appending a chunk
    costs its own size, not the whole trace's (a long run streams millions of points)."""

    def __init__(self, n_vars: int = 1, n_cells: int = 0):
        self.reset(n_vars, n_cells)

    def reset(self, n_vars: int, n_cells: int, capacity: int = 1024) -> None:
        self._t = np.zeros(capacity)
        self._y = np.zeros((capacity, n_vars, n_cells))
        self.n = 0

    def set(self, times, samples) -> None:
        """Replace the contents (sessions)."""
        t, y = np.asarray(times, float), np.asarray(samples)
        self._t, self._y, self.n = t.copy(), y.copy(), len(t)

    def append(self, t, y, at: int | None = None) -> None:
        """Add output points (``at``: overwrite from that index on, e.g. a finished run replacing
        its preview)."""
        t, y = np.asarray(t, float), np.asarray(y)
        i0 = self.n if at is None else min(int(at), self.n)
        need = i0 + len(t)
        if need > len(self._t) or y.shape[1:] != self._y.shape[1:]:
            cap = max(need, 2 * len(self._t), 1024)
            nt = np.zeros(cap)
            ny = np.zeros((cap,) + y.shape[1:], dtype=np.result_type(self._y.dtype, y.dtype))
            nt[:i0] = self._t[:i0]
            if y.shape[1:] == self._y.shape[1:]:
                ny[:i0] = self._y[:i0]
            self._t, self._y = nt, ny
        self._t[i0:need] = t
        self._y[i0:need] = y
        self.n = need

    @property
    def times(self) -> np.ndarray:
        return self._t[: self.n]

    @property
    def samples(self) -> np.ndarray:
        return self._y[: self.n]


def check_recording(points: int, n_vars: int, n_cells: int, itemsize: int = 8) -> int:
    """Bytes a recording of ``points`` output points needs (times and samples, float64, the
    result copied once), or :class:`InvalidParameter` when that is more than
    :data:`MEMORY_FRACTION` of the available host memory."""
    need = int(points) * (1 + int(n_vars) * int(n_cells)) * itemsize * 2
    have = host_available_memory()
    if need > MEMORY_FRACTION * have:
        raise InvalidParameter(
            f"recording {points:,} output points of {n_vars * n_cells:,} values would need "
            f"{need / 2**30:.1f} GiB, more than half of the {have / 2**30:.1f} GiB of memory available: "
            "shorten t end, raise dt, or record fewer members/cells")
    return need
