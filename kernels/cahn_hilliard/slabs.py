"""Slab decomposition for the multi-GPU Cahn–Hilliard stepper (paper 001 §4.6, Alg. 7).

A field is cut along its slowest axis into contiguous slabs, one per device, each stored with
halo rows of the stencil's width towards its neighbours (:class:`Slab`, :func:`layout_slabs`).
The device operations the stepper schedules (streams, events, async copies, allocation) come in
two kinds with one interface: :class:`CudaOps` (CuPy devices) and :class:`HostOps` ("virtual
GPUs": NumPy arrays and synchronous copies, to run and test the decomposition without a GPU).
See :mod:`kernels.cahn_hilliard.multigpu` for the stepper that drives them.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional.
import contextlib
from dataclasses import dataclass, field

import numpy as np

from ..devices import split_rows

_MEMCPY_DEFAULT = 4   # cudaMemcpyDefault: direction from the pointers (UVA)


# ------------------------------------------------------------------ array ops
class DeviceOps:
    """What both kinds of device share: free memory through the backend's own query."""

    def __init__(self, backend):
        self.backend = backend
        self.xp = backend.xp

    def free_bytes(self, dev) -> int:
        with self.device(dev):
            return self.backend.free_memory()


class HostOps(DeviceOps):
    """Virtual GPUs: NumPy arrays, synchronous copies, no streams or events."""

    gpu = False

    def device(self, dev):
        return contextlib.nullcontext()

    def stream(self, s):
        return contextlib.nullcontext()

    def new_stream(self, dev):
        return None

    def new_event(self, dev):
        return None

    def record(self, ev, stream):
        pass

    def wait(self, stream, ev):
        pass

    def copy(self, dst, src, stream, peer=None):
        dst[...] = src

    def zeros(self, dev, shape, dtype):
        return np.zeros(shape, dtype)

    def pinned(self, shape, dtype):
        return np.zeros(shape, dtype)


class CudaOps(DeviceOps):
    """CuPy devices, streams, events and async copies."""

    gpu = True

    def __init__(self, backend):
        super().__init__(backend)
        self.cp = backend.xp

    def device(self, dev):
        return self.cp.cuda.Device(dev)

    def stream(self, s):
        return s

    def new_stream(self, dev):
        with self.cp.cuda.Device(dev):
            return self.cp.cuda.Stream(non_blocking=True)

    def new_event(self, dev):
        with self.cp.cuda.Device(dev):
            return self.cp.cuda.Event(disable_timing=True)

    def record(self, ev, stream):
        ev.record(stream)

    def wait(self, stream, ev):
        stream.wait_event(ev)

    @staticmethod
    def _ptr(a):
        return a.data.ptr if hasattr(a.data, "ptr") else a.ctypes.data

    def copy(self, dst, src, stream, peer=None):
        rt = self.cp.cuda.runtime
        n = dst.nbytes
        if peer is not None and not stream.is_capturing():
            rt.memcpyPeerAsync(self._ptr(dst), peer[0], self._ptr(src), peer[1], n, stream.ptr)
        else:   # cudaMemcpyDefault: same device, peer (UVA), host↔device; capturable
            rt.memcpyAsync(self._ptr(dst), self._ptr(src), n, _MEMCPY_DEFAULT, stream.ptr)

    def zeros(self, dev, shape, dtype):
        with self.cp.cuda.Device(dev):
            return self.cp.zeros(shape, dtype)

    def pinned(self, shape, dtype):
        """Page-locked host array, *portable* (pinned for every GPU, not only the current
        one: a slab's device writes it and its neighbour's device reads it)."""
        from cupy.cuda import pinned_memory as pm
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        mem = pm.PinnedMemoryPointer(pm.PinnedMemory(nbytes, 1), 0)   # cudaHostAllocPortable
        a = np.ndarray(shape, dtype, buffer=mem)
        a[...] = 0
        return a


# ---------------------------------------------------------------------- slabs
@dataclass
class Slab:
    """One device's share: global rows [y0, y1) with pt / pb halo rows above / below."""

    rank: int
    device: int
    y0: int
    y1: int
    pt: int
    pb: int
    up: int | None = None      # rank of the slab holding rows y0−1, y0−2, … (None: edge)
    down: int | None = None    # rank of the slab holding rows y1, y1+1, …
    bufs: list = field(default_factory=list)
    main: object = None
    side: object = None
    ev_border: object = None
    ev_main: object = None
    ev_sent: object = None
    scr_top: object = None
    scr_bot: object = None
    host_buf: list = field(default_factory=list)   # host mode: [parity] -> (top, bot)
    op: object = None          # the per-device stepper (CudaStepper / reference)
    views: dict = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return self.y1 - self.y0

    @property
    def padded(self) -> int:
        return self.pt + self.rows + self.pb

    def halo_above(self, b: int):
        """The pt halo rows of buffer b that the slab above fills."""
        return self.bufs[b][:self.pt]

    def halo_below(self, b: int):
        """The pb halo rows of buffer b that the slab below fills."""
        return self.bufs[b][self.pt + self.rows:]

    def top_rows(self):
        """The slab's first H interior rows, as computed by the top border launch."""
        return self.scr_top[self.pt:2 * self.pt]

    def bottom_rows(self):
        """The slab's last H interior rows, as computed by the bottom border launch."""
        return self.scr_bot[self.pb:2 * self.pb]

    def view(self, b: int, lo: int, hi: int):
        """Rows [lo, hi) of buffer b, the same object every call (texture caches key on it)."""
        key = (b, lo, hi)
        v = self.views.get(key)
        if v is None:
            v = self.views[key] = self.bufs[b][lo:hi]
        return v


def layout_slabs(n: int, devices, radius: int, periodic: bool) -> list[Slab]:
    """Split ``n`` rows over ``devices`` into contiguous slabs (:func:`split_rows`), each with
    halos of width ``radius`` towards its neighbours; periodic fields wrap (the first and last
    slab are neighbours), other fields have no halo at their edges."""
    H = radius
    P = len(devices)
    slabs = []
    for r, ((y0, y1), dev) in enumerate(zip(split_rows(n, P), devices)):
        up = r - 1 if r > 0 else (P - 1 if periodic and P > 1 else None)
        down = r + 1 if r < P - 1 else (0 if periodic and P > 1 else None)
        slabs.append(Slab(r, dev, y0, y1, H if up is not None else 0,
                          H if down is not None else 0, up, down))
    return slabs
