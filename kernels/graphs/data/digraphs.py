"""Directed graphs for paper 004 ch. 3's experiments (its graphs are directed: arcs, not edges).

The :class:`~.graph.Graph` of the rest of the project is undirected; the SSSP experiments need
arcs, so these builders return a directed :class:`~.graph.CSR` (``directed=True``) straight away.
Every method of the registry takes such a CSR (``apsp(csr, …)``): distances run along arcs, the
CPU reference uses scipy with ``directed=True``.  All are seeded; integer weights are uniform in
[1, w_max] (``w_max=None``: unweighted).

* :func:`random_digraph` — DIMACS style (the 9th challenge's SPRAND: a Hamiltonian cycle
  0 → 1 → … → n−1 → 0, then uniformly random arcs), |E| arcs in all, no self-loops or repeats;
* :func:`rmat_digraph` — R-MAT power law (GTgraph), |E| distinct arcs;
* :func:`ring_digraph` — v → v+1 (mod n): one outgoing arc per vertex, Table 3.1's "ring";
* :func:`complete_digraph` — every ordered pair.

:func:`thesis_graph` builds Table 3.1's four topologies at |V| = 4677 (random and power law:
|E| = 16K = 16 384 arcs, w_max = 4096; ring and complete: unit weights).
"""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter
from .generators import COMPLETE_MAX_N, random_pairs, rmat_arcs
from .graph import CSR

#: paper 004 Table 3.1's setting
TABLE31 = dict(n=4677, arcs=16384, w_max=4096)
TOPOLOGIES = ("random", "powerlaw", "ring", "complete")
#: R-MAT probabilities for the thesis's power-law graph.  Its generator's parameters are not given;
#: ours (a, b, c, d = 0.7, 0.15, 0.05, 0.1, from a grid search) give at |V| = 4677, |E| = 16 384 a
#: max outdegree ≈ 750 and 85 % of vertices below 3 (thesis: 834, 84 %; mean 3.5 either way), where
#: GTgraph's defaults 0.45, 0.15, 0.15 give max ≈ 41 and 47 % — see ``outdegree_stats``.
THESIS_RMAT = (0.7, 0.15, 0.05)


def _weights(rng, count: int, w_max) -> np.ndarray | None:
    if w_max is None:
        return None
    w_max = int(w_max)
    if w_max < 1:
        raise InvalidParameter(f"w_max must be ≥ 1 (got {w_max})")
    return rng.integers(1, w_max + 1, count).astype(np.float32)


def _check(n: int, arcs: int) -> tuple[int, int]:
    n, arcs = int(n), int(arcs)
    if n < 2:
        raise InvalidParameter(f"a digraph needs n ≥ 2 vertices (got {n})")
    if arcs < 0 or arcs > n * (n - 1):
        raise InvalidParameter(f"|E| must lie in 0 … n(n−1) = {n * (n - 1):,} (got {arcs:,})")
    return n, arcs


def _distinct_arcs(n: int, arcs: int, draw, rng, base=None) -> np.ndarray:
    """Keys u·n + v of ``arcs`` distinct arcs without self-loops: ``base`` first, then draws."""
    keys = np.empty(0, dtype=np.int64) if base is None else np.unique(base)
    extra = np.empty(0, dtype=np.int64)
    need = arcs - keys.size
    for _ in range(64):
        if need <= 0 or extra.size >= need:
            break
        u, v = draw(int((need - extra.size) * 1.2) + 16)
        k2 = (u * n + v)[u != v]
        extra = np.union1d(extra, k2[~np.isin(k2, keys)])
    return np.concatenate([keys, rng.permutation(extra)[:max(0, need)]])


def _csr(n: int, keys: np.ndarray, w) -> CSR:
    return CSR.from_arcs(n, keys // n, keys % n, w, directed=True)


def random_digraph(n: int, arcs: int, w_max: int | None = None, cycle: bool = True, seed=None) -> CSR:
    n, arcs = _check(n, arcs)
    rng = np.random.default_rng(seed)
    base = None
    if cycle:
        if arcs < n:
            raise InvalidParameter(f"with the Hamiltonian cycle |E| must be ≥ n = {n} (got {arcs})")
        i = np.arange(n, dtype=np.int64)
        base = i * n + (i + 1) % n
    keys = _distinct_arcs(n, arcs, lambda c: random_pairs(n, c, rng), rng, base)
    return _csr(n, keys, _weights(rng, keys.size, w_max))


def rmat_digraph(n: int, arcs: int, w_max: int | None = None, seed=None, abc=THESIS_RMAT) -> CSR:
    n, arcs = _check(n, arcs)
    rng = np.random.default_rng(seed)
    keys = _distinct_arcs(n, arcs, lambda c: rmat_arcs(n, c, rng, abc), rng)
    return _csr(n, keys, _weights(rng, keys.size, w_max))


def ring_digraph(n: int, w_max: int | None = None, seed=None) -> CSR:
    n, _ = _check(n, 0)
    i = np.arange(n, dtype=np.int64)
    return _csr(n, i * n + (i + 1) % n, _weights(np.random.default_rng(seed), n, w_max))


def complete_digraph(n: int, w_max: int | None = None, seed=None) -> CSR:
    n, _ = _check(n, 0)
    if n > COMPLETE_MAX_N:
        raise InvalidParameter(f"a complete digraph above {COMPLETE_MAX_N:,} vertices is too large (got {n:,})")
    u, v = np.nonzero(~np.eye(n, dtype=bool))
    return _csr(n, u.astype(np.int64) * n + v, _weights(np.random.default_rng(seed), u.size, w_max))


def thesis_graph(topology: str, n: int = TABLE31["n"], arcs: int = TABLE31["arcs"],
                 w_max: int = TABLE31["w_max"], seed=None) -> CSR:
    """Paper 004 Table 3.1's topologies: ``random`` / ``powerlaw`` (``arcs`` arcs, weights 1 … w_max),
    ``ring`` / ``complete`` (all weights 1, as in the thesis)."""
    if topology == "random":
        return random_digraph(n, arcs, w_max, True, seed)
    if topology == "powerlaw":
        return rmat_digraph(n, arcs, w_max, seed)
    if topology == "ring":
        return ring_digraph(n, 1, seed)
    if topology == "complete":
        return complete_digraph(n, 1, seed)
    raise InvalidParameter(f"unknown topology {topology!r}: use one of {', '.join(TOPOLOGIES)}")


def outdegree_stats(csr: CSR) -> dict:
    """Max and mean outdegree and the share of vertices with outdegree < 3 (paper 004 §3.5.2 gives
    834, 3.5 and 84 % for its power-law graph)."""
    d = csr.degrees()
    return dict(max=int(d.max(initial=0)), mean=float(d.mean()) if d.size else 0.0,
                below3=float((d < 3).mean()) if d.size else 0.0)
