"""Per-vertex overlay values for the graph view, computed by the kernels at any size.

An overlay is a subclass of :class:`Overlay` registered under its name with :func:`register`
(the shape of the APSP registry, :mod:`..apsp.core`); :data:`OVERLAYS` (name → class) is what the
CLI's ``--color-by`` and the Graphs workspace's colour-by list read, and :func:`overlay_values`
dispatches through it.  Each class says what it needs (``needs_source``: a clicked vertex;
``needs_apsp``: an all-pairs result) and carries its colour-bar label with units.

==============  ========================================================================  =========
name            value of vertex v                                                         GPU
==============  ========================================================================  =========
degree          d_v, the number of edges at v                                             CSR on device
clustering      c_v = 2 T_v / (d_v (d_v − 1)), 0 for d_v < 2 (paper 001; :mod:`.clustering`)  per-arc kernel
component       connected component, numbered 0, 1, … in the order of each one's          cupyx + pylibcugraph
                smallest vertex (so every implementation gives the same numbers)          where installed
distance        hop count (unweighted) or sum of weights (weighted) from the source,      frontier BFS /
                inf → nan where unreachable; predecessors in ``pred`` (:mod:`.frontier`)  Bellman–Ford
eccentricity    max over u reachable from v of d(v, u), from an APSP result's rows         host (the rows
                (within v's component; 0 for an isolated vertex)                          are on the host)
==============  ========================================================================  =========

Values are float64 on the host; ``nan`` marks "undefined" (an unreachable vertex), which the view
draws grey.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional (GPU path only); SciPy, where used (slow; `--help` loads this).
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import InvalidParameter
from ...registry import Registry
from .frontier import DistanceRow, check_source, distance_from, prepared  # noqa: F401  (public API here too)
from .clustering import local_clustering
from ..apsp.core import sentinel

#: name → :class:`Overlay` subclass, in registration order
OVERLAYS: Registry[type["Overlay"]] = Registry("overlay")


@dataclass
class OverlayValues:
    """One overlay's values: ``values`` (n,) float64 (nan: undefined / unreachable), the colour-bar
    ``label`` with units, the overlay ``name``, ``integer`` (whole-number values: ticks and the
    value under the mouse without decimals), ``seconds`` (wall time, device work included),
    ``pred`` (the distance overlay's predecessors, int32, −1 none; else None), ``source`` (the
    distance overlay's vertex) and ``backend`` ("gpu", "host" — the CUDA source on the CPU — or "cpu":
    where it was computed)."""

    values: np.ndarray
    label: str
    name: str
    integer: bool
    seconds: float
    pred: np.ndarray | None = None
    source: int | None = None
    backend: str = "cpu"

    def path_to(self, target: int) -> list[int]:
        """The shortest path source → target of a distance overlay (from ``pred``)."""
        if self.pred is None or self.source is None:
            raise InvalidParameter(f"the {self.name} overlay has no predecessors (colour by distance first)")
        return DistanceRow(self.source, self.values, self.pred, False, self.backend, 0.0).path_to(target)


class Overlay:
    """One per-vertex quantity.  Class attributes: ``name`` (registry key), ``label`` (colour-bar
    label with units; :meth:`label_for` gives the one for a given source), ``help`` (one line for
    tooltips and ``--help``), ``needs_source`` (a vertex must be given), ``needs_apsp`` (an
    all-pairs result must be given), ``integer`` (the values are whole numbers) and ``cmap`` (the
    VisPy colormap the view and the CLI's ``--export-view`` draw it with)."""

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    help: ClassVar[str] = ""
    cmap: ClassVar[str] = "viridis"
    needs_source: ClassVar[bool] = False
    needs_apsp: ClassVar[bool] = False
    integer: ClassVar[bool] = True

    #: distance overlays: the labels of hop counts and of weight sums (``{source}``: the vertex)
    label_hops: ClassVar[str] = ""
    label_weights: ClassVar[str] = ""

    @classmethod
    def weighted_values(cls, g, source=None, apsp=None) -> bool | None:
        """Distance overlays: whether the values are sums of weights (False: hop counts; None: not
        known yet, e.g. no source given).  Other overlays: None."""
        return None

    @classmethod
    def label_for(cls, g, source=None, apsp=None) -> str:
        """The colour-bar label for this graph, source and APSP result."""
        w = cls.weighted_values(g, source, apsp)
        return cls.label if w is None else (cls.label_weights if w else cls.label_hops).format(source=source)

    @classmethod
    def is_integer(cls, g, source=None, apsp=None) -> bool:
        w = cls.weighted_values(g, source, apsp)
        return cls.integer if w is None else not w

    def compute(self, g, backend, source=None, apsp=None, local_cc=None, kernel=None):
        """(values (n,) float64 host array, predecessors or None, "gpu"/"cpu")."""
        raise NotImplementedError


def register(cls: type[Overlay]) -> type[Overlay]:
    """Class decorator: add ``cls`` to :data:`OVERLAYS` under ``cls.name``."""
    return OVERLAYS.register(cls)


def _on_gpu(backend) -> bool:
    return backend is not None and backend.is_gpu


@register
class DegreeOverlay(Overlay):
    name = "degree"
    label = "degree (edges)"
    help = "number of edges at each vertex"

    def compute(self, g, backend, source=None, apsp=None, local_cc=None, kernel=None):
        p = prepared(g)
        if _on_gpu(backend):
            ptr = p.device(backend)["indptr"]
            return backend.to_numpy(backend.xp.diff(ptr).astype(backend.xp.float64)), None, "gpu"
        return p.csr.degrees().astype(np.float64), None, "cpu"


@register
class ClusteringOverlay(Overlay):
    name = "clustering"
    label = "local clustering coefficient"
    help = ("local clustering coefficient c = 2T / (d(d − 1)): the fraction of a vertex's neighbour pairs "
            "that are linked (0 below degree 2; paper 001)")
    integer = False

    def compute(self, g, backend, source=None, apsp=None, local_cc=None, kernel=None):
        if local_cc is not None:
            cc = np.asarray(local_cc, dtype=np.float64)
            if cc.shape != (prepared(g).n,):
                raise InvalidParameter(f"local_cc has shape {cc.shape}; expected ({prepared(g).n},)")
            return cc, None, "cpu"
        return (np.asarray(local_clustering(prepared(g).csr, backend if _on_gpu(backend) else None),
                           dtype=np.float64), None, "gpu" if _on_gpu(backend) else "cpu")


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Component labels renumbered 0, 1, … in the order of each component's smallest vertex."""
    labels = np.asarray(labels).astype(np.int64)
    if labels.size == 0:
        return labels
    _u, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.ravel()]


def gpu_components(p, backend):
    """Component labels by ``cupyx.scipy.sparse.csgraph.connected_components`` (needs pylibcugraph),
    or None when that is not installed."""
    try:
        import cupyx.scipy.sparse as csp
        from cupyx.scipy.sparse.csgraph import connected_components
        d = p.device(backend)
        cp = backend.xp
        A = csp.csr_matrix((cp.ones(p.csr.arcs, dtype=cp.float32), d["indices"], d["indptr"]), shape=(p.n, p.n))
        _k, lab = connected_components(A, directed=True, connection="weak")
    except (ImportError, RuntimeError):
        return None
    return backend.to_numpy(lab)


@register
class ComponentOverlay(Overlay):
    name = "component"
    label = "component"
    help = "connected component, numbered 0, 1, … in the order of each component's smallest vertex"
    cmap = "husl"                                  # hues around the circle: neighbouring numbers differ

    def compute(self, g, backend, source=None, apsp=None, local_cc=None, kernel=None):
        from scipy.sparse.csgraph import connected_components
        p = prepared(g)
        lab = gpu_components(p, backend) if _on_gpu(backend) else None
        where = "gpu"
        if lab is None:
            _k, lab = connected_components(p.scipy(), directed=True, connection="weak")
            where = "cpu"
        return canonical_labels(lab).astype(np.float64), None, where


@register
class DistanceOverlay(Overlay):
    name = "distance"
    label = "distance from the clicked vertex (hops, or sum of weights)"
    help = ("hop count (unweighted graph) or sum of edge weights (weighted) from a chosen vertex: one BFS or SSSP "
            "row, on the GPU where there is one; grey: unreachable")
    needs_source = True

    label_hops = "hops from vertex {source}"
    label_weights = "distance (weights) from vertex {source}"

    @classmethod
    def weighted_values(cls, g, source=None, apsp=None) -> bool | None:
        return None if source is None else prepared(g).weighted

    def compute(self, g, backend, source=None, apsp=None, local_cc=None, kernel=None):
        row = distance_from(g, source, backend, kernel)
        vals = row.dist.copy()
        vals[~np.isfinite(vals)] = np.nan
        return vals, row.pred, row.backend


#: rows of an APSP matrix reduced at once by :func:`eccentricity` (bounds the temporary copy)
ECC_ROWS_BYTES = 64 << 20


def eccentricity(apsp) -> np.ndarray:
    """ecc(v) = max over reachable u of d(v, u) (float64), from an all-pairs result's n × n rows
    (hop counts with their all-ones 'unreachable' value, or float distances with inf)."""
    d = apsp.dist
    n = d.shape[0]
    out = np.empty(n, dtype=np.float64)
    step = max(1, ECC_ROWS_BYTES // max(1, 8 * d.shape[1]))
    for r0 in range(0, n, step):
        blk = d[r0:r0 + step]
        if blk.dtype.kind == "f":
            out[r0:r0 + step] = np.where(np.isfinite(blk), blk, -np.inf).max(axis=1, initial=0.0)
        else:
            out[r0:r0 + step] = np.where(blk == sentinel(blk.dtype), 0, blk).max(axis=1, initial=0)
    return out


@register
class EccentricityOverlay(Overlay):
    name = "eccentricity"
    label = "eccentricity (hops, or sum of weights)"
    help = ("eccentricity: the largest distance from a vertex to any vertex it reaches (within its component), "
            "from the all-pairs shortest paths — run APSP first")
    needs_apsp = True

    label_hops = "eccentricity (hops)"
    label_weights = "eccentricity (weights)"

    @classmethod
    def weighted_values(cls, g, source=None, apsp=None) -> bool | None:
        return None if apsp is None else bool(apsp.weighted and apsp.dist.dtype.kind == "f")

    def compute(self, g, backend, source=None, apsp=None, local_cc=None, kernel=None):
        return eccentricity(apsp), None, "cpu"


def overlay_class(name: str) -> type[Overlay]:
    """The registered overlay ``name``; InvalidParameter naming the choices otherwise."""
    return OVERLAYS.get(name)


def overlay_values(g, name: str, *, source=None, apsp=None, backend=None, local_cc=None,
                   kernel: bool | None = None) -> OverlayValues:
    """The values of overlay ``name`` (a key of :data:`OVERLAYS`) for graph ``g``: computed on the
    GPU where the overlay has a GPU path and ``backend.is_gpu``.  ``source``: the vertex of
    ``distance``; ``apsp``: the all-pairs result (:class:`~kernels.graphs.apsp.core.APSPResult`, all n
    rows) of ``eccentricity``; ``local_cc``: clustering coefficients already computed (reused);
    ``kernel``: run ``distance`` by the frontier kernels (:func:`~.frontier.distance_from`'s choice).
    InvalidParameter for an unknown name, a missing or out-of-range source, a missing APSP result."""
    cls = overlay_class(name)
    p = prepared(g)
    if cls.needs_source:
        if source is None:
            raise InvalidParameter(f"the {name} overlay needs a source vertex (click one)")
        source = check_source(p.n, source)
    if cls.needs_apsp:
        if apsp is None:
            raise InvalidParameter(f"the {name} overlay needs all-pairs shortest paths: run APSP first")
        if apsp.dist.shape != (p.n, p.n):
            raise InvalidParameter(f"the {name} overlay needs all {p.n} rows of the APSP result "
                                   f"(it has {apsp.dist.shape[0]} × {apsp.dist.shape[1]})")
    t0 = time.perf_counter()
    vals, pred, where = cls().compute(g, backend, source=source, apsp=apsp, local_cc=local_cc, kernel=kernel)
    sec = time.perf_counter() - t0
    return OverlayValues(vals, cls.label_for(g, source, apsp), name, cls.is_integer(g, source, apsp), sec, pred,
                         source if cls.needs_source else None, where)
