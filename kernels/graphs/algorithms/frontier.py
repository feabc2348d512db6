"""One shortest-path row from one vertex, with predecessors: the overlay of a clicked vertex.

:func:`distance_from` answers "how far is every vertex from the one I clicked, and along which
path": one breadth-first search (hop counts) on an unweighted graph, one single-source
shortest-path run (sum of edge weights) on a weighted one.

* GPU (``backend.is_gpu``; CUDA in ``cuda/frontier.cu``): a level-synchronous frontier BFS over
  CSR (Harish & Narayanan, "Accelerating large graph algorithms on the GPU using CUDA", HiPC 2007,
  with a queue instead of a mask: Merrill, Garland & Grimshaw, "Scalable GPU graph traversal",
  PPoPP 2012) — one warp per frontier vertex, one launch and one 4-byte read (is the next
  frontier empty?) per level.  Weighted: the same frontier as a work list of Bellman–Ford
  relaxations (a vertex re-enters when its distance falls; distances are float64).  Predecessors
  come from the distances in one more launch: pred[v] = the smallest neighbour u with
  d(u) < d(v) and d(u) + w(u, v) = d(v), so they are deterministic and every chain descends.
  Weights ≤ 0 have no such strict order (a zero-weight edge ties two distances): such graphs take
  the CPU path.
* CPU: ``scipy.sparse.csgraph.breadth_first_order`` (hop counts: each vertex's depth in the BFS
  tree, by pointer jumping over the predecessors) or ``dijkstra`` with ``return_predecessors``.

Both give float64 distances (inf: unreachable) and int32 predecessors (−1: none; the source has
none).  The graph's arrays (CSR on the host, its scipy matrix, its device copy) are built once
per graph and kept while the graph lives (:func:`prepared`), so a second click pays only for the
search.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import threading
import time
import weakref
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidParameter
from ..data.graph import CSR, Graph
from ..apsp.paths import backtrack
from .. import cuda as _cuda
from ..cuda import blocks, to_host

#: threads per block of the frontier kernels (a multiple of 32: one warp per vertex)
BLOCK = 256
#: level counters zeroed at once on the device (one per level; refilled past this many levels)
COUNTERS = 1024
#: without a GPU, a clicked vertex's row (:func:`row_kernel`) runs the frontier kernels' CUDA source on
#: the host device up to this many arcs; a larger graph takes scipy's search, so a click stays interactive
HOST_ROW_ARCS = 100_000


@dataclass
class DistanceRow:
    """The distances and predecessors from ``source``.

    ``dist`` (n,) float64: hop counts (unweighted) or sums of edge weights, inf where unreachable;
    ``pred`` (n,) int32: the vertex before v on a shortest source → v path (−1: none, and at the
    source).  ``weighted``: which of the two ``dist`` holds; ``backend``: "gpu" or "cpu";
    ``seconds``: wall time of the search including the copy to the host; ``levels``: BFS levels
    or relaxation rounds (launches of the level kernel)."""

    source: int
    dist: np.ndarray
    pred: np.ndarray
    weighted: bool
    backend: str
    seconds: float
    levels: int = 0

    def path_to(self, target: int) -> list[int]:
        """The shortest path source → target from the predecessors (``paths.backtrack``); [] when
        target is unreachable."""
        return backtrack(self.pred, self.source, int(target))

    @property
    def reached(self) -> int:
        return int(np.isfinite(self.dist).sum())


class PreparedGraph:
    """A graph's CSR, scipy matrix and (on first GPU use) device arrays, built once; safe to share
    between threads (GPU searches on one graph take turns: they share the device work buffers)."""

    def __init__(self, g: Graph | CSR):
        self.csr = g.csr() if isinstance(g, Graph) else g
        self.weighted = self.csr.weights is not None
        self._scipy = None
        self._device: dict = {}
        self.lock = threading.Lock()              # one search at a time uses the device work buffers
        self.positive = (not self.weighted) or bool(self.csr.weights.size == 0 or self.csr.weights.min() > 0)

    @property
    def n(self) -> int:
        return self.csr.n

    def scipy(self):
        """The scipy CSR matrix, float64 data: scipy.sparse.csgraph takes it without a copy."""
        if self._scipy is None:
            A = self.csr.to_scipy(weighted=self.weighted)
            A.data = A.data.astype(np.float64)
            self._scipy = A
        return self._scipy

    def device(self, dev):
        """(indptr, indices, weights or None) as arrays of the :mod:`kernels.gpu` device ``dev``
        (or of an app backend's device), plus the work buffers (kept per device kind)."""
        if not hasattr(dev, "launch"):
            dev = _cuda.device(dev)
        arrays = self._device.get(dev.kind)
        if arrays is None:
            cp = dev.xp
            c = self.csr
            arrays = self._device[dev.kind] = dict(
                indptr=cp.asarray(c.indptr), indices=cp.asarray(c.indices),
                weights=None if c.weights is None else cp.asarray(c.weights),
                queue=(cp.empty(max(1, c.n), cp.int32), cp.empty(max(1, c.n), cp.int32)),
                counters=cp.zeros(COUNTERS, cp.int32))
        return arrays


_cache_lock = threading.Lock()
_cache: dict[int, tuple] = {}


def prepared(g) -> PreparedGraph:
    """The :class:`PreparedGraph` of ``g`` (a Graph, a CSR or a PreparedGraph), cached for as long
    as ``g`` lives (the last four graphs)."""
    if isinstance(g, PreparedGraph):
        return g
    if not isinstance(g, (Graph, CSR)):
        raise InvalidParameter(f"expected a Graph or CSR, got {type(g).__name__}")
    key = id(g)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0]() is g:
            return hit[1]
    p = PreparedGraph(g)
    with _cache_lock:
        _cache[key] = (weakref.ref(g), p)
        while len(_cache) > 4:
            _cache.pop(next(iter(_cache)))
    return p


def check_source(n: int, source) -> int:
    """``source`` as an int in 0 … n−1, else InvalidParameter naming the range."""
    try:
        s = int(source)
        if s != source:
            raise ValueError
    except (TypeError, ValueError):
        raise InvalidParameter(f"the source vertex must be a whole number (got {source!r})") from None
    if not 0 <= s < n:
        raise InvalidParameter(f"source vertex {s} is outside the graph (vertices 0 … {n - 1})")
    return s


def distance_from(g, source: int, backend=None, kernel: bool | None = None) -> DistanceRow:
    """Distances and predecessors from ``source`` (module docstring): one BFS row (unweighted)
    or one SSSP row (weighted), by the frontier kernels when ``kernel`` (default: on a GPU
    backend; True without a GPU runs the CUDA source on the host device) and the weights are
    > 0, else with scipy.  Negative or non-finite weights are refused (InvalidParameter)."""
    p = prepared(g)
    s = check_source(p.n, source)
    if p.weighted and p.csr.weights.size:
        w = p.csr.weights
        if not np.isfinite(w).all() or w.min() < 0:
            raise InvalidParameter("distances from a vertex need finite edge weights ≥ 0")
    t0 = time.perf_counter()
    on_gpu = bool(backend is not None and backend.is_gpu)
    if (on_gpu if kernel is None else kernel) and p.positive:
        dev = _cuda.device(backend)
        with p.lock:                              # clicks from several worker threads take turns
            dist, pred, levels = kernel_row(p, s, dev)
        where = "host" if dev.emulated else "gpu"
    else:
        dist, pred, levels = _cpu_row(p, s)
        where = "cpu"
    return DistanceRow(s, dist, pred, p.weighted, where, time.perf_counter() - t0, levels)


def row_kernel(g, backend) -> bool:
    """Whether a clicked vertex's row runs the library's frontier kernels: on a GPU backend always,
    without one (the CUDA source on the host device) for graphs of at most :data:`HOST_ROW_ARCS` arcs
    with weights > 0 (the kernels' order needs them; scipy takes the rest)."""
    p = prepared(g)
    return bool(p.positive and (bool(backend is not None and backend.is_gpu) or p.csr.arcs <= HOST_ROW_ARCS))


# ------------------------------------------------------------------ CPU (scipy)
def tree_depth(pred: np.ndarray, root: int) -> np.ndarray:
    """Depth of every vertex in the tree given by ``pred`` (−1 or negative: no parent), by
    pointer jumping (Wyllie's list ranking: log2(depth) passes); inf for vertices whose chain
    does not end at ``root``."""
    n = pred.size
    parent = np.where(pred >= 0, pred, np.arange(n)).astype(np.int64)
    depth = (pred >= 0).astype(np.int64)
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            break
        depth += depth[parent]                    # a self-parented vertex has depth 0
        parent = grand
    out = depth.astype(np.float64)
    out[parent != root] = np.inf
    return out


def _cpu_row(p: PreparedGraph, s: int):
    # directed=True: the CSR holds both arcs of every undirected edge, so scipy need not symmetrise
    from scipy.sparse.csgraph import breadth_first_order, dijkstra
    A = p.scipy()
    if p.weighted:
        dist, pred = dijkstra(A, directed=True, indices=s, return_predecessors=True)
        dist = np.asarray(dist, dtype=np.float64)
    else:
        _order, pred = breadth_first_order(A, s, directed=True, return_predecessors=True)
        dist = tree_depth(pred, s)
    pred = np.where(pred >= 0, pred, -1).astype(np.int32)
    return dist, pred, 0


# ------------------------------------------------------------------ the kernels (cuda/frontier.cu)
def kernel_row(p: PreparedGraph, s: int, dev):
    """(dist, pred, levels) from ``s`` by the frontier kernels on the :mod:`kernels.gpu` device
    ``dev`` (the GPU, or the host device: the same CUDA source run on the CPU)."""
    cp = dev.xp
    d = p.device(dev)
    n = p.n
    cur, nxt = d["queue"]
    counters = d["counters"]
    counters.fill(0)
    cur[:1] = s
    count, level = 1, 0
    ptr, idx = d["indptr"], d["indices"]
    if p.weighted:
        bits = cp.full(n, np.float64(np.inf).view(np.uint64), dtype=cp.uint64)
        bits[s] = 0
        stamp = cp.full(n, -1, dtype=cp.int32)
        fn = _cuda.function(dev, "frontier.cu", "frontier_sssp_round")
    else:
        lev = cp.full(n, -1, dtype=cp.int32)
        lev[s] = 0
        fn = _cuda.function(dev, "frontier.cu", "frontier_bfs_level")
    while count:
        slot = (level + 1) % COUNTERS
        if slot == 0:
            counters.fill(0)
        out = counters[slot:slot + 1]
        grid = (blocks(32 * count, BLOCK),)
        if p.weighted:
            dev.launch(fn, grid, (BLOCK,), (ptr, idx, d["weights"], cur, np.int32(count), bits, stamp, np.int32(level),
                                         nxt, out))
        else:
            dev.launch(fn, grid, (BLOCK,), (ptr, idx, cur, np.int32(count), lev, np.int32(level), nxt, out))
        count = int(to_host(out)[0])              # the one host sync of a level: is the frontier empty?
        cur, nxt = nxt, cur
        level += 1
    if p.weighted:
        dist = bits.view(cp.float64)
        wts = d["weights"]
    else:
        dist = cp.where(lev >= 0, lev.astype(cp.float64), cp.inf)
        wts = cp.zeros(1, cp.float32)             # unused (weighted = 0)
    pred = cp.empty(n, dtype=cp.int32)
    dev.launch(_cuda.function(dev, "frontier.cu", "frontier_pred"), (blocks(32 * n, BLOCK),), (BLOCK,),
               (ptr, idx, wts, np.int32(p.weighted), dist, np.int32(n), np.int32(s), pred))
    return to_host(dist), to_host(pred), level
