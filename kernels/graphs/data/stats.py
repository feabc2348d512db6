"""Graph statistics: mean shortest path, diameter, degree and path-length distributions, paper 000's
normalised time (Eq. 3) and log–log growth exponents (Fig. 14)."""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import numpy as np

from ..apsp import sentinel


def path_length_histogram(dist: np.ndarray) -> np.ndarray:
    """counts[h] = number of ordered pairs (i ≠ j) at h hops (unreachable pairs excluded)."""
    if dist.dtype.kind == "u":
        top = sentinel(dist.dtype)
        counts = np.zeros(1, dtype=np.int64)
        for r0 in range(0, dist.shape[0], 4096):          # bounded memory for n = 30 000
            blk = dist[r0:r0 + 4096].ravel()
            c = np.bincount(blk[blk != top])
            if c.size > counts.size:
                c[:counts.size] += counts
                counts = c
            else:
                counts[:c.size] += c
        counts[0] -= dist.shape[0]                        # the diagonal
        return counts
    d = dist[np.isfinite(dist)]
    d = np.rint(d).astype(np.int64)
    c = np.bincount(d)
    c[0] -= dist.shape[0]
    return c


def summary(dist: np.ndarray, sources=None) -> dict:
    """mean_path_length (over reachable ordered pairs i ≠ j), diameter (largest finite), the
    fraction of reachable pairs and whether the graph is connected.  ``sources``: the vertices of
    the rows of a rows × n matrix (some sources only; default: row i is vertex i) — the pairs are
    then those from these sources, "connected" that they reach every vertex."""
    rows, n = dist.shape[0], dist.shape[-1]
    if dist.dtype.kind == "u":
        h = path_length_histogram(dist)
        pairs = int(h.sum())
        mean = float((np.arange(h.size) * h).sum() / pairs) if pairs else float("nan")
        diam = int(np.flatnonzero(h)[-1]) if pairs else 0
    else:
        src = np.arange(rows) if sources is None else np.asarray(sources, dtype=np.int64).ravel()
        fin = np.isfinite(dist)
        fin[np.arange(rows), src] = False                 # the pairs (s, s)
        pairs = int(fin.sum())
        mean = float(dist[fin].astype(np.float64).mean()) if pairs else float("nan")
        diam = float(dist[fin].max()) if pairs else 0.0
    total = rows * (n - 1)
    return dict(mean_path_length=mean, diameter=diam, reachable_fraction=(pairs / total if total else 1.0),
                connected=(pairs == total))


def degree_histogram(degrees: np.ndarray) -> np.ndarray:
    return np.bincount(np.asarray(degrees, dtype=np.int64))


def normalised_times(seconds, apsp_values) -> np.ndarray:
    """Paper 000 Eq. 3: t_i / APSP_i × mean(APSP) over the instances of one size."""
    t = np.asarray(seconds, dtype=float)
    a = np.asarray(apsp_values, dtype=float)
    return t / a * a.mean()


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (paper 000 Fig. 14's fitted exponents)."""
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(x, y, 1)[0])


def sampled_summary(g, sources: int = 64, seed: int = 0) -> dict:
    """Mean shortest path estimated by BFS from ``sources`` vertices drawn uniformly without
    replacement (scipy.sparse.csgraph, CPU): an unbiased estimate of the all-pairs mean over
    reachable pairs, O(sources·(n + m)) instead of O(n·(n + m)).  ``diameter`` is the largest
    eccentricity among the sources (a lower bound); ``connected`` is exact (one component)."""
    from scipy.sparse.csgraph import connected_components, shortest_path
    n = g.n
    A = g.csr().to_scipy(weighted=False)
    n_comp = connected_components(A, directed=False, return_labels=False)
    src = np.random.default_rng(seed).choice(n, size=min(int(sources), n), replace=False)
    d = shortest_path(A, unweighted=True, indices=src)
    d[np.arange(src.size), src] = np.nan                      # drop i = j
    fin = np.isfinite(d)
    pairs = int(fin.sum())
    return dict(mean_path_length=float(d[fin].mean()) if pairs else float("nan"),
                diameter=int(d[fin].max()) if pairs else 0,
                reachable_fraction=pairs / (src.size * (n - 1)) if n > 1 else 1.0,
                connected=(n_comp == 1), sources=int(src.size))
