"""Shortest paths from all-pairs results, on the CPU (paper 004 §3.3.1 Fig. 3.1 and §3.4.3).

* :func:`backtrack` — the host side of path recording: from the destination d follow the recorded
  parents Pa[d, s] → … until the source s (O(path length) per path).
* :func:`reconstruct` — Fig. 3.1: from the costs alone, step from s to a successor n with
  w(s, n) + D[n, t] = D[s, t] until t (needs the full cost matrix D).
* :func:`arc_weight`, :func:`path_cost`, :func:`is_shortest_path` — check that a path is a walk
  along arcs whose weights sum to the cost (what the tests require of every recorded path).
"""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter
from ..data.graph import CSR


def backtrack(pred_row: np.ndarray, source: int, target: int) -> list[int]:
    """The vertices of the recorded shortest path source → target from the source's row of
    predecessors (−1: none); [] when target is unreachable.  InvalidParameter when the chain does
    not reach the source within n steps (predecessors of another source, or corrupted)."""
    source, target = int(source), int(target)
    n = pred_row.shape[0]
    if not (0 <= source < n and 0 <= target < n):
        raise InvalidParameter(f"vertices must lie in 0 … {n - 1} (got {source} → {target})")
    if target == source:
        return [source]
    if pred_row[target] < 0:
        return []
    path = [target]
    v = target
    for _ in range(n):
        v = int(pred_row[v])
        if v < 0:
            raise InvalidParameter(f"the predecessor chain from {target} stops before reaching {source}")
        path.append(v)
        if v == source:
            return path[::-1]
    raise InvalidParameter(f"the predecessor chain from {target} does not reach {source} (a cycle)")


def arc_weight(csr: CSR, u: int, v: int) -> float | None:
    """Weight of the arc u → v (1 for an unweighted graph; the lightest of parallel arcs), None if
    there is no such arc."""
    lo, hi = int(csr.indptr[u]), int(csr.indptr[u + 1])
    nb = csr.indices[lo:hi]
    i = int(np.searchsorted(nb, v))
    if i >= nb.size or nb[i] != v:
        return None
    if csr.weights is None:
        return 1.0
    j = int(np.searchsorted(nb, v, side="right"))
    return float(csr.weights[lo + i:lo + j].min())


def path_cost(csr: CSR, path, weighted: bool = True) -> float | None:
    """Sum of the arc weights along ``path`` (hops when ``weighted`` is False); None when a step
    is not an arc of the graph."""
    total = 0.0
    for a, b in zip(path[:-1], path[1:]):
        w = arc_weight(csr, int(a), int(b))
        if w is None:
            return None
        total += w if weighted else 1.0
    return total


def is_shortest_path(csr: CSR, path, source: int, target: int, cost: float, weighted: bool = True,
                     rtol: float = 0.0) -> bool:
    """True when ``path`` starts at source, ends at target, every step is an arc and the weights
    sum to ``cost`` (within ``rtol``; 0: exactly, right for integer weights)."""
    if not path or int(path[0]) != int(source) or int(path[-1]) != int(target):
        return False
    c = path_cost(csr, path, weighted)
    return c is not None and bool(np.isclose(c, float(cost), rtol=rtol, atol=0.0))


def reconstruct(csr: CSR, D: np.ndarray, source: int, target: int, rtol: float = 1e-6) -> list[int]:
    """Paper 004 Fig. 3.1: one shortest path source → target from the full cost matrix ``D``
    (float, inf = unreachable; hop matrices as float): [] when unreachable."""
    s, t = int(source), int(target)
    if not np.isfinite(D[s, t]):
        return []
    path = [s]
    for _ in range(csr.n):
        if s == t:
            return path
        lo, hi = int(csr.indptr[s]), int(csr.indptr[s + 1])
        nb = csr.indices[lo:hi]
        w = np.ones(nb.size) if csr.weights is None else csr.weights[lo:hi].astype(np.float64)
        ok = np.isclose(w + D[nb, t].astype(np.float64), float(D[s, t]), rtol=rtol, atol=0.0)
        if not ok.any():
            raise InvalidParameter(f"no successor of {s} continues a shortest path to {t}: D is not this "
                                   "graph's cost matrix")
        s = int(nb[np.flatnonzero(ok)[0]])
        path.append(s)
    raise InvalidParameter(f"the reconstruction from {source} does not reach {target}")
