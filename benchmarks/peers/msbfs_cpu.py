"""Bit-parallel multi-source BFS on the CPU (Then et al., "The More the Merrier", VLDB 2015): the
APSP peer of the graph benchmarks.

:func:`msbfs_hops` runs ``msbfs.cpp`` (beside this file; the algorithm and its direction switch are
described there) compiled once by the project's host compiler helper (:func:`kernels.hostcc.compile_library`,
``-O3 -march=native`` with OpenMP): 64·W sources share one pass over the arcs per BFS level, and
batches run one per core.  The result is the hop-count matrix ``dist[s, v]`` (row ``s`` = the
``s``-th source), in the smallest unsigned dtype that holds every hop count, the dtype's all-ones
value for "unreachable": exactly scipy.sparse.csgraph.shortest_path(unweighted=True) with ``inf``
mapped to that value.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

from kernels.hostcc import compile_library

SOURCE = Path(__file__).with_name("msbfs.cpp")
FLAGS = ("-std=c++17", "-O3", "-march=native", "-w")
WIDTHS = (1, 2, 4, 8)                  #: 64-bit words per vertex and bitset (sources per batch / 64)
SCRATCH_BYTES = 1 << 30                #: the default width narrows until every thread's hop buffer fits in this
_LIB = None


def library() -> ctypes.CDLL:
    """The compiled peer (compiled on first use, cached by source hash in the user cache folder)."""
    global _LIB
    if _LIB is None:
        lib = compile_library(SOURCE.read_text(), what="the MS-BFS CPU peer", kind="peers", prefix="msbfs",
                              flags=FLAGS)
        p = ctypes.c_void_p
        for name in ("msbfs_u8", "msbfs_u16", "msbfs_u32"):
            f = getattr(lib, name)
            f.argtypes = [ctypes.c_int, ctypes.c_int, p, p, p, p, p, ctypes.c_int, p, ctypes.c_int]
            f.restype = ctypes.c_int
        lib.msbfs_max_threads.restype = ctypes.c_int
        _LIB = lib
    return _LIB


def pick_width(sources: int, threads: int) -> int:
    """The bitset width for ``sources`` on ``threads``: 8 words (512 sources per pass over the arcs), else
    2, else 1 — the widest that still gives every thread a batch.  Measured (BA graphs, 10 000 and 30 000
    vertices, CPU seconds on this project's 2-core machine): W = 8 fastest (4.4–5.1 s at 30 000), W = 2
    5.4–5.7 s, W = 1 close to W = 2; W = 4 is skipped: 2× slower than both (10.7 s), reproducibly."""
    for w in (8, 2):
        if sources >= threads * 64 * w:
            return w
    return 1


def msbfs_hops(indptr, indices, n: int | None = None, sources=None, directed: bool = False,
               dtype=None, width: int | None = None, threads: int = 0) -> np.ndarray:
    """Hop distances from each of ``sources`` (default: every vertex) over the CSR graph
    (``indptr``, ``indices``; arcs u→indices[indptr[u]:indptr[u+1]]).  ``directed=False`` means
    the arcs are symmetric (each edge stored both ways, as :meth:`kernels.graphs.graph.Graph.csr`
    does); for a directed graph the in-arcs are built for the bottom-up levels.  ``dtype``: uint8,
    uint16 or uint32 (default: the smallest that fits, widened when a hop count overflows).
    ``width``: 64-bit words per bitset (1, 2, 4, 8; default :func:`pick_width`). ``threads``: OpenMP
    threads (0 = all)."""
    ip = np.ascontiguousarray(indptr, dtype=np.int32)
    ix = np.ascontiguousarray(indices, dtype=np.int32)
    n = len(ip) - 1 if n is None else int(n)
    src = np.arange(n, dtype=np.int32) if sources is None else np.ascontiguousarray(sources, dtype=np.int32)
    if len(ip) != n + 1 or (len(src) and (src.min() < 0 or src.max() >= n)):
        raise ValueError("indptr must have n + 1 entries and sources must be vertices")
    if directed:
        import scipy.sparse as sp
        t = sp.csr_matrix((np.ones(len(ix), np.int8), ix, ip), shape=(n, n)).T.tocsr()
        rip, rix = t.indptr.astype(np.int32), t.indices.astype(np.int32)
    else:
        rip, rix = ip, ix
    lib = library()
    th = threads or lib.msbfs_max_threads() or os.cpu_count() or 1
    w = width or pick_width(len(src), th)
    while width is None and w > 1 and n * 64 * w * 4 * th > SCRATCH_BYTES:   # per-thread hop buffers
        w //= 2
    if w not in WIDTHS:
        raise ValueError(f"width must be one of {WIDTHS}")
    order = [np.dtype(t) for t in ((dtype,) if dtype is not None else (np.uint8, np.uint16, np.uint32))]
    if any(d not in (np.uint8, np.uint16, np.uint32) for d in order):
        raise ValueError("dtype must be uint8, uint16 or uint32")
    for dt in order:
        out = np.empty((len(src), n), dtype=dt)
        f = {1: lib.msbfs_u8, 2: lib.msbfs_u16, 4: lib.msbfs_u32}[dt.itemsize]
        rc = f(w, n, ip.ctypes.data, ix.ctypes.data, rip.ctypes.data, rix.ctypes.data, src.ctypes.data,
               len(src), out.ctypes.data, th)
        if rc == 0:
            return out
    raise OverflowError(f"a hop count does not fit in {order[-1]}")


def hops_like_scipy(hops: np.ndarray) -> np.ndarray:
    """``hops`` as scipy.sparse.csgraph.shortest_path gives them: float64, ``inf`` for unreachable."""
    d = hops.astype(np.float64)
    d[hops == np.iinfo(hops.dtype).max] = np.inf
    return d
