"""Paper 004 ch. 3's CPU comparator (``cpu-dijkstra``): Dijkstra with a binary heap per source,
the sources split over threads (the thesis: 4 OpenMP threads on a quad-core Xeon).

Compiled C++ (``host/dijkstra.cpp``, through :func:`kernels.hostcc.compile_library`, cached per
machine), std::thread workers taking sources from a shared counter.  Python hands it the CSR and
a chunk of sources at a time, so progress and cancel work between chunks.  Costs are computed in
double and returned as float32 (hop counts as the compact dtype); weights must be non-negative.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time
from importlib.resources import files

import numpy as np

from ...hostcc import CXX_FLAGS, compile_library
from ...limits import check_host_threads
from .core import APSPMethod, APSPResult, float_to_hops
from ..data.graph import CSR

_lock = threading.Lock()
_lib = None


def library():
    """The compiled comparator (compiled on first use; BackendUnavailable without a C++ compiler)."""
    global _lib
    with _lock:
        if _lib is None:
            src = (files(__package__) / "host" / "dijkstra.cpp").read_text(encoding="utf-8")  # package data
            lib = compile_library(src, what="the CPU Dijkstra comparator", kind="graphs-c", prefix="dijkstra",
                                  flags=CXX_FLAGS + ("-pthread",))
            f = lib.dijkstra_rows
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                          ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
            _lib = lib
    return _lib


def default_threads() -> int:
    return max(1, os.cpu_count() or 1)


def dijkstra_rows(csr: CSR, sources=None, weighted: bool = True, threads: int | None = None,
                  progress=None, cancel=None, chunk: int = 512) -> np.ndarray:
    """float32 costs from each of ``sources`` (default all) to every vertex, inf = unreachable."""
    threads = check_host_threads(threads or default_threads())
    lib = library()
    src = csr.source_array(sources)
    n = csr.n
    indptr = np.ascontiguousarray(csr.indptr, dtype=np.int32)
    indices = np.ascontiguousarray(csr.indices, dtype=np.int32)
    w = np.ascontiguousarray(csr.weights, dtype=np.float32) if (weighted and csr.weights is not None) else None
    out = np.empty((src.size, n), dtype=np.float32)
    ptr = lambda a: None if a is None else a.ctypes.data_as(ctypes.c_void_p)    # noqa: E731
    for r0 in range(0, src.size, chunk):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        part = np.ascontiguousarray(src[r0:r0 + chunk], dtype=np.int64)
        lib.dijkstra_rows(n, ptr(indptr), ptr(indices), ptr(w), int(part.size), ptr(part),
                          out[r0:r0 + part.size].ctypes.data_as(ctypes.c_void_p), threads)
        if progress is not None:
            progress(min(src.size, r0 + chunk) / src.size)
    return out


class CPUDijkstra(APSPMethod):
    name = "cpu-dijkstra"
    help = ("Paper 004 §3.5: CPU Dijkstra with a binary heap, one per source, sources split over threads "
            "(compiled C++) — weighted or hop counts")
    gpu, cpu = False, True
    negative_weights = False

    def __init__(self, threads: int | None = None, sources=None):
        if threads is not None:
            check_host_threads(threads)                 # 1 … cores × 4: more makes std::thread abort
        super().__init__(threads=threads, sources=sources)

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        t0 = time.perf_counter()
        d = dijkstra_rows(csr, self.options["sources"], weighted, self.options["threads"], progress, cancel)
        sec = time.perf_counter() - t0
        res = d if weighted else float_to_hops(d, csr, dtype)
        return APSPResult(res, self.name, sec, sec, 0, weighted)
