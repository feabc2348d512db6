"""All-pairs shortest paths: one call over every method of papers 000, 002 and 004.

:func:`apsp` runs the method registered under a name (:data:`METHODS`, name → class, a
:class:`~kernels.registry.Registry`; see :mod:`kernels.graphs.apsp.core`), or an
:class:`~kernels.graphs.apsp.core.APSPMethod` subclass given instead of a name (as scipy's
``solve_ivp(method=…)`` takes ``"RK45"`` or ``RK45``).  The families live in their own modules and
are registered, in the order the CLI and the GUI list them, by the package
(:mod:`kernels.graphs.apsp`, :data:`~kernels.graphs.apsp.FAMILIES`).

Hop counts are stored compactly (uint8 / uint16 / uint32, the all-ones value meaning
*unreachable*); weighted distances are float32 with inf.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import numpy as np

from ... import backend as kb
from ...errors import GridTooLarge, InvalidParameter
from ..data.graph import Graph
from .core import REGISTRY, APSPMethod, APSPResult, sentinel
from .fw_core import path as fw_path

#: every registered method: name → :class:`~kernels.graphs.apsp.core.APSPMethod` subclass (a
#: :class:`~kernels.registry.Registry`: ``METHODS.get(name_or_class)``, ``METHODS.names(cpu=True)``);
#: filled by :mod:`kernels.graphs.apsp`'s ``__init__``
METHODS = REGISTRY


def method_names(gpu: bool | None = None) -> tuple[str, ...]:
    """Registered method names (``gpu=True``: those without a CPU implementation — their CUDA
    kernels run on the GPU, or as CUDA source on the CPU where ``host``; ``False``: those with one)."""
    return tuple(METHODS.names() if gpu is None else METHODS.names(cpu=not gpu))


def estimate_bytes(n: int, method: str | type[APSPMethod], itemsize: int = 1) -> int:
    """Device bytes ``method`` (a name or class) needs for ``n`` vertices (the result matrix for batched
    methods)."""
    cls = METHODS.get(method, None)
    extra = cls.device_bytes(n) if cls is not None else 0
    return extra or n * n * itemsize


def check_memory(n: int, method: str | type[APSPMethod], backend, itemsize: int = 1, rows: int | None = None) -> None:
    """Raise :class:`GridTooLarge` before work starts when the matrix (``rows`` × n: the chosen
    sources' rows; default n) cannot fit."""
    cls = METHODS.get(method, None)
    dense = cls is not None and cls.dense
    rows = n if rows is None else int(rows)
    need_host = rows * n * (12 if dense else itemsize)      # dense: matrix, predecessors, result
    if need_host > 0.8 * kb.host_available_memory():
        raise GridTooLarge(f"the {rows} × {n} distance matrix needs {need_host / 2**30:.1f} GiB of host "
                           f"memory; only {kb.host_available_memory() / 2**30:.1f} GiB are available")
    if backend is not None and backend.is_gpu and dense and cls.gpu:
        need = estimate_bytes(n, method)
        if need > 0.9 * backend.free_memory():
            raise GridTooLarge(f"dense Floyd–Warshall at n = {n} needs {need / 2**30:.1f} GiB of GPU memory; "
                               f"{backend.free_memory() / 2**30:.1f} GiB free — use gpu-bfs or sssp")


def check_weights(csr, cls) -> None:
    """Refuse, naming the first offending edge, NaN/inf weights (they would act as a missing edge) and,
    for methods without ``negative_weights`` (BFS, Dijkstra, SSSP), weights < 0: scipy's Dijkstra
    does not terminate on them (it grows memory until the process aborts)."""
    w = csr.weights
    bad = ~np.isfinite(w)
    what = "is not a finite number"
    if not bad.any() and not cls.negative_weights:
        bad, what = w < 0, "is negative"
    if bad.any():
        i = int(np.argmax(bad))
        u, v = int(csr.sources()[i]), int(csr.indices[i])
        neg = ", ".join(k for k, c in METHODS.items() if c.negative_weights)
        fix = "" if what.startswith("is not") else (
            f": {cls.name} (breadth-first / Dijkstra type) needs weights ≥ 0" + (f"; {neg} accept them" if neg else ""))
        raise InvalidParameter(f"edge {min(u, v)}–{max(u, v)}: weight {float(w[i])!r} {what}{fix}")


def apsp(g, method: str | type[APSPMethod] = "cpu", backend=None, weighted: bool | None = None, dtype="auto",
         progress=None, cancel=None, **kw) -> APSPResult:
    """All-pairs shortest paths of ``g`` (Graph or CSR) by ``method``: a key of :data:`METHODS` or an
    :class:`~kernels.graphs.apsp.core.APSPMethod` subclass, registered or not; ``kw`` are the method's
    own options (e.g. ``tile`` of ``fw-blocked``, ``batch`` of ``gpu-bfs``)."""
    csr = g.csr() if isinstance(g, Graph) else g
    cls = METHODS.get(method)                  # InvalidParameter naming the choices for an unknown one
    method = cls.name or cls.__name__
    weighted = (csr.weights is not None) if weighted is None else weighted
    if not cls.available(backend):
        cpu_ok = ", ".join(k for k, c in METHODS.items() if c.available(backend))
        raise InvalidParameter(f"APSP method {method!r} needs the GPU backend (here use one of {cpu_ok})")
    if weighted and cls.hops_only:
        hop_free = ", ".join(k for k, c in METHODS.items() if not c.hops_only)
        raise InvalidParameter(f"{method} counts hops: use {hop_free} for weighted graphs")
    if weighted and csr.weights is not None:
        check_weights(csr, cls)
    sources = kw.get("sources")
    rows = None if sources is None else int(np.size(sources))
    if kw.get("out") is None:                  # rows streamed to a file (multi-*) need no host matrix
        check_memory(csr.n, cls, backend, 4 if weighted else 2, rows)
    runner = cls(**kw)
    if cls.gpu and not cls.dense and backend is not None and backend.is_gpu:
        need, free = runner.memory_bytes(csr, weighted), backend.free_memory()
        if need > 0.9 * free:
            raise GridTooLarge(f"{method} on |V| = {csr.n:,}, {csr.arcs:,} arcs needs {need / 2**30:.2f} GiB of GPU "
                               f"memory; {free / 2**30:.2f} GiB free — use a smaller graph or batch")
    return runner.run(csr, backend, weighted, dtype, progress, cancel)


def shortest_path(g, dist_row: np.ndarray, source: int, target: int, result: APSPResult | None = None) -> list[int]:
    """One shortest path source → target.  With a ``result`` that has predecessors (the
    Floyd–Warshall versions, weighted or not) they are walked back; else, for hop counts, from
    the source's distance row (paper 004 Fig. 3.1: from the target, step to a neighbour one hop
    closer)."""
    if result is not None and result.pred is not None:
        return fw_path(result.pred, source, target)
    csr = g.csr() if isinstance(g, Graph) else g
    unreach = sentinel(dist_row.dtype) if dist_row.dtype.kind == "u" else np.inf
    if dist_row[target] == unreach:
        return []
    path = [int(target)]
    v = int(target)
    while v != source:
        nb = csr.indices[csr.indptr[v]:csr.indptr[v + 1]]
        v = int(nb[np.argmin(dist_row[nb].astype(np.int64))])
        path.append(v)
    return path[::-1]


def path_between(g, source: int, target: int, result: APSPResult | None = None) -> list[int]:
    """One shortest path source → target of graph ``g``, whatever the APSP result holds: its
    predecessors when it has them (the Floyd–Warshall versions); else, on a weighted graph,
    Dijkstra's predecessors from ``source`` (scipy); else hop counts walked back (paper 004
    Fig. 3.1).  [] when ``target`` is unreachable; InvalidParameter for a vertex out of range."""
    csr = g.csr() if isinstance(g, Graph) else g
    for v, what in ((source, "source"), (target, "target")):
        if not 0 <= int(v) < csr.n:
            raise InvalidParameter(f"{what} vertex {v} is not in 0 … {csr.n - 1}")
    source, target = int(source), int(target)
    if result is not None and result.pred is not None and result.pred.shape[0] == csr.n:
        return fw_path(result.pred, source, target)
    from scipy.sparse.csgraph import shortest_path as sp
    weighted = csr.weights is not None
    d, pred = sp(csr.to_scipy(weighted=weighted), method="D", directed=False, unweighted=not weighted,
                 indices=[source], return_predecessors=True)
    if not np.isfinite(d[0, target]):
        return []
    path, v = [target], target
    while v != source:
        v = int(pred[0, v])
        path.append(v)
    return path[::-1]

