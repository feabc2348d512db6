"""The GPUs of one host, real or virtual: which to use, how to split work over them, one host
thread per device (paper 001 §4.6, §5.5, §6.5: "one pThread per GPU").

Shared by every multi-GPU workload (Cahn–Hilliard slabs, clustering-coefficient arcs, RNG
streams, APSP sources).  On the NumPy backend a request for N GPUs gives N *virtual GPUs*: the
same decomposition, reduction and gather run on the CPU, so they are tested without a GPU; the
app offers ``GSE_VIRTUAL_GPUS`` of them (default 1).

Contract of :func:`run_on_devices`: ``fn(rank, device)`` runs once per device, each call in its
own host thread with that CUDA device current (CuPy ``Device`` context; nothing on virtual
GPUs); the results come back in rank order, and the first exception is re-raised after every
thread has ended.
"""
from __future__ import annotations

import collections
import contextlib
import os
import threading
from typing import Callable, Sequence

import numpy as np

from .errors import InvalidParameter

#: environment variable: virtual GPUs offered on the NumPy backend (GUI demo / tests)
VIRTUAL_ENV = "GSE_VIRTUAL_GPUS"
#: the most GPUs any workload accepts
MAX_GPUS = 64


def gpu_count(backend) -> int:
    """CUDA devices visible to this process (0 on the NumPy backend)."""
    if not backend.is_gpu:
        return 0
    try:
        return int(backend.xp.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def offered_gpus(backend) -> int:
    """How many GPUs the app offers: the visible CUDA devices, or on the NumPy backend
    ``GSE_VIRTUAL_GPUS`` virtual ones (a CPU demonstration of the decomposition; default 1)."""
    if backend.is_gpu:
        return max(1, gpu_count(backend))
    try:
        return max(1, min(MAX_GPUS, int(os.environ.get(VIRTUAL_ENV, "1"))))
    except ValueError:
        return 1


def gpus_text(devs) -> str:
    return ("GPU " if len(devs) == 1 else "GPUs ") + ", ".join(map(str, devs))


def resolve_devices(requested, backend, what: str = "parts",
                    how: str = "same decomposition, NumPy arrays") -> tuple[list[int], list[str]]:
    """Devices to use for ``requested`` (a count, or a list of device ids) and notes.

    Missing devices are dropped with a note (never an error): the run falls back to the GPUs
    that exist.  On the NumPy backend a count gives that many virtual devices (0, 1, …), with a
    note that the ``what`` (e.g. "slabs") run as virtual GPUs (``how``: what is the same).
    """
    notes: list[str] = []
    if isinstance(requested, (int, np.integer)) and not isinstance(requested, bool):
        if not 1 <= requested <= MAX_GPUS:
            raise InvalidParameter(f"the number of GPUs must be 1 … {MAX_GPUS} (got {requested})")
        want = list(range(int(requested)))
    else:
        want = [int(d) for d in requested]
        if not want:
            raise InvalidParameter("no GPU selected")
    if not backend.is_gpu:
        if len(want) > 1:
            notes.append(f"no GPU: the {len(want)} {what} run as virtual GPUs on the CPU ({how})")
        return list(range(len(want))), notes
    n = gpu_count(backend)
    have = [d for d in want if 0 <= d < n]
    missing = [d for d in want if not 0 <= d < n]
    if missing:
        notes.append(f"GPU {', '.join(map(str, missing))} not present (this host has {n}); "
                     f"running on {gpus_text(have or [0])}")
    return (have or [0]), notes


def split_rows(n: int, parts: int) -> list[tuple[int, int]]:
    """Balanced contiguous split of n items into ``parts`` ranges [y0, y1)."""
    q, r = divmod(int(n), int(parts))
    out, y = [], 0
    for i in range(parts):
        h = q + (1 if i < r else 0)
        out.append((y, y + h))
        y += h
    return out


def device_context(backend, dev: int):
    """``with device_context(backend, d):`` makes CUDA device d current (nothing when virtual)."""
    if backend is not None and backend.is_gpu:
        return backend.xp.cuda.Device(int(dev))
    return contextlib.nullcontext()


def run_on_devices(backend, devices: Sequence[int], fn: Callable[[int, int], object]) -> list:
    """``[fn(rank, device) for each device]``, one host thread per device (see the module doc).
    A single device runs in the calling thread."""
    devices = list(devices)
    if len(devices) == 1:
        with device_context(backend, devices[0]):
            return [fn(0, devices[0])]
    results: list = [None] * len(devices)
    errors: list = [None] * len(devices)

    def body(rank, dev):
        try:
            with device_context(backend, dev):
                results[rank] = fn(rank, dev)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors[rank] = exc

    threads = [threading.Thread(target=body, args=(r, d), name=f"gpu-{d}", daemon=True)
               for r, d in enumerate(devices)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    return results


class WorkCursor:
    """Paper 001 Alg. 13–14's shared cursor: hands out blocks [a, b) of ``total`` items under a
    lock, ``block`` at a time, to whichever worker (thread, GPU) asks next (dynamic load balance)."""

    def __init__(self, total: int, block: int):
        if block < 1:
            raise InvalidParameter(f"work block must be ≥ 1 (got {block})")
        self.total, self.block = int(total), int(block)
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> tuple[int, int] | None:
        with self._lock:
            a = self._next
            if a >= self.total:
                return None
            self._next = b = min(self.total, a + self.block)
            return a, b


def drain(cursor: WorkCursor, launch: Callable[[int, int], object], in_flight: int = 2) -> int:
    """Take blocks [a, b) from ``cursor`` and ``launch(a, b)`` each until none is left; the number taken.

    ``launch`` may return at once (an asynchronous GPU launch) with a handle whose ``synchronize()``
    waits for that block (a CUDA event), or None (the work is done).  At most ``in_flight`` launched
    blocks are unfinished when the next block is taken, so a device takes new blocks as it finishes
    old ones and the cursor balances the devices by speed; without the wait the first thread could
    queue every block before the others start (the launches return in microseconds).  The caller
    waits for the last blocks itself (e.g. by reading its counters back)."""
    pending: collections.deque = collections.deque()
    taken = 0
    while (blk := cursor.take()) is not None:
        handle = launch(*blk)
        taken += 1
        if handle is not None:
            pending.append(handle)
        while len(pending) >= in_flight:
            pending.popleft().synchronize()
    return taken
