"""The APSP method registry, the result type and the compact hop-count storage.

An APSP method is a subclass of :class:`APSPMethod` registered under its name with
:func:`register` (like scipy's ``solve_ivp`` ``METHODS`` table of ``OdeSolver`` classes).  The
registry (:data:`REGISTRY`, a :class:`~kernels.registry.Registry`, name → class) is what the CLI's
``--apsp`` choices, the Graphs workspace's method list and its tooltips read;
:func:`kernels.graphs.apsp.apsp` dispatches through it and accepts an :class:`APSPMethod` subclass
wherever a name is.  Each family lives in its own module (``bfs.py``, ``fw.py``, ``sssp.py`` …);
:mod:`kernels.graphs.apsp` registers them all, in the order the CLI lists them.

Hop counts are stored compactly (:func:`hop_dtype`): uint8 / uint16 / uint32 with the all-ones
value (255, 65535, …) meaning *unreachable*; weighted distances are float32 with inf.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import InvalidParameter
from ...registry import Registry
from ..data.graph import CSR, Graph


class APSPMethod:
    """One all-pairs shortest-path implementation.

    Class attributes describe it for every caller (CLI help, GUI list and tooltip, memory check):
    ``name`` (registry key), ``help`` (one line naming the algorithm and its source paper and
    section), ``gpu`` (has a GPU implementation, run on the GPU backend), ``cpu`` (has a CPU
    implementation: runs without a GPU too), ``host`` (its CUDA kernels also run on the host
    device, :mod:`kernels.gpu.host`: without a GPU and without a CPU implementation the method
    runs its CUDA source on the CPU — :meth:`emulated`), ``family`` (e.g. ``"fw"`` for the Floyd–Warshall
    versions), ``hops_only`` (counts hops; refuses weighted graphs), ``dense`` (holds the n × n
    matrix on the device) and ``negative_weights`` (accepts weights < 0: Floyd–Warshall; BFS and
    Dijkstra-type methods do not, and :func:`~kernels.graphs.apsp.apsp` refuses such graphs before
    any work).  Keyword options of :func:`~kernels.graphs.apsp.apsp` beyond the common ones go to
    ``__init__``.
    """

    name: ClassVar[str] = ""
    help: ClassVar[str] = ""
    gpu: ClassVar[bool] = True
    cpu: ClassVar[bool] = False
    host: ClassVar[bool] = False
    family: ClassVar[str] = ""
    hops_only: ClassVar[bool] = False
    dense: ClassVar[bool] = False
    negative_weights: ClassVar[bool] = False

    @classmethod
    def available(cls, backend) -> bool:
        """Whether the method runs on ``backend``: a CPU implementation, a GPU backend, or CUDA
        kernels that also run on the host device (``host``)."""
        return cls.cpu or (cls.gpu and (cls.host or bool(backend is not None and backend.is_gpu)))

    @classmethod
    def emulated(cls, backend) -> bool:
        """True when a run on ``backend`` is the method's CUDA source on the host device ("CUDA
        source run on the CPU"): no GPU backend, no CPU implementation, host-runnable kernels."""
        return bool(cls.gpu and cls.host and not cls.cpu and not (backend is not None and backend.is_gpu))

    def __init__(self, **options):
        self.options = options

    @classmethod
    def device_bytes(cls, n: int) -> int:
        """GPU memory the method needs for ``n`` vertices beyond the graph itself (0: bounded
        by batching)."""
        return 0

    def memory_bytes(self, csr: CSR, weighted: bool) -> int:
        """GPU memory this method, with its options, needs for ``csr`` in all (graph included);
        :func:`~kernels.graphs.apsp.apsp` refuses the graph before any GPU work when it exceeds
        the free memory.  Methods with their own formula (e.g. paper 004's (3N+1)|V| + 2|E|)
        override it; the default is :meth:`device_bytes`."""
        return self.device_bytes(csr.n)

    def run(self, csr: CSR, backend, weighted: bool, dtype="auto", progress=None, cancel=None) -> "APSPResult":
        raise NotImplementedError


#: name → :class:`APSPMethod` subclass, in registration order (an unregistered subclass is accepted
#: by :meth:`~kernels.registry.Registry.get` too)
REGISTRY: Registry[type[APSPMethod]] = Registry("APSP method", base=APSPMethod)


def register(cls: type[APSPMethod]) -> type[APSPMethod]:
    """Add ``cls`` to :data:`REGISTRY` under ``cls.name`` (a class decorator too); the same class again
    is a no-op, another class under a taken name a ValueError (the registry's one policy)."""
    return REGISTRY.register(cls)


class DistanceOverflow(InvalidParameter):
    """A hop count does not fit in the chosen compact dtype."""


def sentinel(dtype) -> int:
    return int(np.iinfo(dtype).max)


def hop_dtype(csr: CSR, requested: str | None = "auto"):
    """Smallest unsigned dtype that holds every hop count (+ the sentinel).

    ``auto`` bounds the diameter by 2 × the eccentricity of vertex 0 (per connected component
    that is an upper bound; an unreachable pair is the sentinel anyway), from one CPU BFS.
    """
    if requested not in (None, "auto"):
        dt = np.dtype(requested)
        if dt not in (np.uint8, np.uint16, np.uint32):
            raise InvalidParameter(f"hop dtype must be uint8, uint16 or uint32 (got {requested})")
        return dt
    if csr.n <= 255:
        return np.dtype(np.uint8)
    from scipy.sparse.csgraph import connected_components
    from scipy.sparse.csgraph import shortest_path as _sp
    A = csr.to_scipy(weighted=False)
    ncomp, labels = connected_components(A, directed=False)
    if ncomp > 64 or csr.directed:              # many components (or arcs): the size bound suffices
        bound = int(np.bincount(labels).max()) - 1
    else:
        firsts = np.unique(labels, return_index=True)[1]
        d = _sp(A, method="D", directed=False, unweighted=True, indices=firsts)
        bound = 2 * int(d[np.isfinite(d)].max(initial=0))
    for dt in (np.uint8, np.uint16, np.uint32):
        if bound < sentinel(dt):
            return np.dtype(dt)
    return np.dtype(np.uint32)


@dataclass
class APSPResult:
    """Distances (n × n, host), the method, timings and launch counts."""

    dist: np.ndarray
    method: str
    seconds: float           # wall time including the copy to the host
    kernel_seconds: float    # device time without the final copy (= seconds on the CPU)
    launches: int = 0
    weighted: bool = False
    tile: int | None = None
    pred: np.ndarray | None = None   # predecessors: pred[i, j] = vertex before j on a shortest i → j path, −1 none
    timings: dict | None = None      # a method's own breakdown (e.g. sssp-path: cost / record seconds)
    params: dict | None = None       # the method's parameters as run (tile, l, cfg, an auto-tuner's choice, …)

    @property
    def unreachable(self):
        return np.inf if self.dist.dtype.kind == "f" else sentinel(self.dist.dtype)

    def as_float(self) -> np.ndarray:
        """Distances as float64 with inf for unreachable pairs."""
        if self.dist.dtype.kind == "f":
            return self.dist.astype(np.float64)
        out = self.dist.astype(np.float64)
        out[self.dist == self.unreachable] = np.inf
        return out


def float_to_hops(d: np.ndarray, csr: CSR, dtype="auto") -> np.ndarray:
    dt = hop_dtype(csr, dtype)
    fin = np.isfinite(d)
    if fin.any() and d[fin].max() >= sentinel(dt):
        dt = np.dtype(np.uint32)
    out = np.where(fin, d, sentinel(dt)).astype(dt)
    return out


# ------------------------------------------------------------------ CPU reference
def apsp_cpu(g, weighted: bool | None = None, dtype="auto", batch: int | None = None,
             progress=None, cancel=None) -> APSPResult:
    """scipy.sparse.csgraph shortest paths, in row batches (compact output for hop counts)."""
    from scipy.sparse.csgraph import shortest_path
    csr = g.csr() if isinstance(g, Graph) else g
    weighted = (csr.weights is not None) if weighted is None else weighted
    n = csr.n
    A = csr.to_scipy(weighted=weighted)
    t0 = time.perf_counter()
    if weighted:
        out = np.empty((n, n), dtype=np.float32)
    else:
        dt = hop_dtype(csr, dtype)
        out = np.empty((n, n), dtype=dt)
    batch = batch or max(1, min(n, (64 << 20) // max(1, 8 * n)))
    for s0 in range(0, n, batch):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        rows = np.arange(s0, min(n, s0 + batch))
        d = shortest_path(A, method="D", directed=csr.directed, unweighted=not weighted, indices=rows)
        if weighted:
            out[rows] = d
        else:
            big = ~np.isfinite(d)
            if np.any(d[~big] >= sentinel(out.dtype)):
                raise DistanceOverflow(f"a hop count exceeds {out.dtype}")
            d[big] = sentinel(out.dtype)
            out[rows] = d
        if progress is not None:
            progress(min(n, s0 + batch) / n)
    sec = time.perf_counter() - t0
    return APSPResult(out, "cpu", sec, sec, 0, weighted)


class ScipyAPSP(APSPMethod):
    name = "cpu"
    help = ("CPU reference: scipy.sparse.csgraph shortest paths (BFS for hop counts, Dijkstra for "
            "weights) in row batches")
    gpu, cpu = False, True

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        return apsp_cpu(csr, weighted, dtype, progress=progress, cancel=cancel, **self.options)
