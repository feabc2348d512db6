"""Layout quality measures: edge-length ratio and neighbourhood preservation."""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import numpy as np

from ...errors import InvalidParameter
from .base import host_positions

#: neighbourhood preservation looks at most this many nearest vertices (hubs: precision at this k)
NP_MAX_K = 64
#: and at most this many sampled vertices
NP_SAMPLE = 2000


def layout_quality(g, pos, *, pairs: int = 20000, seed=0) -> dict:
    """Two measures of how well the positions ``pos`` (n, 2; NumPy or CuPy) show the graph ``g``.

    * ``edge_ratio`` = mean Euclidean length of the edges / mean distance between ``pairs`` random
      vertex pairs (i ≠ j, drawn with ``seed``).  Scale-free; lower is better (edges short compared
      with the drawing): a random placement gives ≈ 1.
    * ``neighbourhood_preservation``: for each of up to :data:`NP_SAMPLE` vertices of degree ≥ 1
      (drawn with ``seed``), with k = min(deg, :data:`NP_MAX_K`), the fraction of its k nearest other
      vertices in the layout that are its graph neighbours, averaged (Kruiger et al. 2017's measure
      at k = deg; with k = deg it is both precision and recall).  Higher is better, in [0, 1].

    Also returned: ``mean_edge_length``, ``mean_pair_distance`` and ``sampled`` (vertices used for the
    neighbourhood measure).
    """
    from scipy.spatial import cKDTree
    x = host_positions(pos).astype(np.float64)
    n = g.n
    if x.shape[0] != n:
        raise InvalidParameter(f"positions hold {x.shape[0]} vertices, the graph {n}")
    if not np.isfinite(x).all():
        raise InvalidParameter("positions must be finite")
    rng = np.random.default_rng(seed)
    e = g.edges
    el = np.sqrt(((x[e[:, 0]] - x[e[:, 1]]) ** 2).sum(axis=1))
    mean_edge = float(el.mean()) if el.size else float("nan")
    if n >= 2:
        i = rng.integers(0, n, pairs)
        j = (i + rng.integers(1, n, pairs)) % n           # j ≠ i
        mean_pair = float(np.sqrt(((x[i] - x[j]) ** 2).sum(axis=1)).mean())
    else:
        mean_pair = float("nan")
    ratio = mean_edge / mean_pair if mean_pair > 0 else float("nan")
    deg = g.degrees()
    cand = np.flatnonzero(deg > 0)
    if cand.size == 0 or n < 2:
        return dict(edge_ratio=ratio, neighbourhood_preservation=float("nan"), mean_edge_length=mean_edge,
                    mean_pair_distance=mean_pair, sampled=0)
    sample = np.sort(rng.choice(cand, min(NP_SAMPLE, cand.size), replace=False))
    k = np.minimum(deg[sample], min(NP_MAX_K, n - 1))
    kq = int(k.max()) + 1
    _d, nbr = cKDTree(x).query(x[sample], k=kq)
    nbr = nbr.reshape(sample.size, kq)
    # drop the vertex itself (or, with coincident points, any one column so that kq − 1 remain)
    is_self = nbr == sample[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), kq - 1)
    keep = np.ones_like(nbr, dtype=bool)
    keep[np.arange(sample.size), drop] = False
    nbr = nbr[keep].reshape(sample.size, kq - 1)
    within = np.arange(kq - 1)[None, :] < k[:, None]
    # is (v, u) an edge?  search the sorted keys of both arc directions
    keys = np.sort(np.concatenate([e[:, 0].astype(np.int64) * n + e[:, 1], e[:, 1].astype(np.int64) * n + e[:, 0]]))
    q = sample[:, None].astype(np.int64) * n + nbr
    at = np.minimum(np.searchsorted(keys, q), keys.size - 1)
    hit = (keys[at] == q) & within
    npres = float((hit.sum(axis=1) / k).mean())
    return dict(edge_ratio=ratio, neighbourhood_preservation=npres, mean_edge_length=mean_edge,
                mean_pair_distance=mean_pair, sampled=int(sample.size))
