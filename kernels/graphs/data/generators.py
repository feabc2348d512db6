"""Seeded, vectorised graph generators (paper 000 §4.1, paper 001 §5.7).

All generators take a ``seed`` (``numpy.random.default_rng``) and return a :class:`Graph`;
none loops over vertices in Python, so N ≥ 1e5 builds in about a second.

* ``ring_lattice(n, k)`` — each vertex joined to its k/2 nearest neighbours on each side
  (clustering 3(k−2)/(4(k−1))).
* ``watts_strogatz(n, k, p)`` — ring lattice, each edge's far end rewired with probability p
  (paper 001: k = 50, p = 0.1, C ≈ 0.53).
* ``erdos_renyi(n, p)`` — G(n, p): m ~ Binomial(n(n−1)/2, p) distinct pairs.
* ``barabasi_albert(n, m)`` — growth + preferential attachment, mean degree ≈ 2m
  (paper 000 type 3 uses k = 100, i.e. m = 50).  Vectorised Batagelj–Brandes: a new vertex's
  m targets are drawn from the arc-end list of the graph *before* it (pointer jumping resolves
  the list in O(log n) passes); repeated picks are dropped, so a few vertices get < m edges.
* ``spatial(n, k | radius)`` — points uniform in the unit square, joined when closer than
  ``radius`` (paper 000 Fig. 8); ``k`` picks radius = sqrt(k / (π n)).
* ``watts_alpha(n, k, alpha, p, ring)`` — Watts' α-model (Watts 1999, paper 000 ref. 48):
  vertex i links to j with weight R_ij = 1 if m_ij ≥ k, (m_ij/k)^α (1−p) + p if 0 < m_ij < k,
  p if m_ij = 0 (m_ij = common neighbours), until n·k/2 edges.  ``ring=True`` starts from the
  ring substrate (paper 000 type 1: connected, path length ∝ n).  Vectorised in rounds: each
  round a random batch of vertices each picks one partner against the graph as it stood at the
  start of the round (the sequential model is the batch size 1 limit).
* ``with_weights(g, …)`` — integer (paper 004: uniform 1…w_max) or float weights.

* ``dimacs_random(n, k, cycle)`` — paper 004's random graphs, DIMACS style (the 9th challenge's
  SPRAND generator: a Hamiltonian cycle 0 → 1 → … → n−1 → 0 for connectivity, then uniformly random
  pairs up to n·k/2 edges); weights by ``with_weights(kind="int", w_max=…)``.
* ``rmat(n, k, a, b, c)`` — R-MAT power-law graphs (Chakrabarti, Zhan & Faloutsos 2004; GTgraph's
  defaults a, b, c, d = 0.45, 0.15, 0.15, 0.25), paper 004's power-law graphs; n·k/2 edges.
* ``complete(n)`` — every pair (paper 004 Table 3.1's worst case).

Cancellation: every random generator (and ``generate``) takes ``cancel``, a callable polled
between its phases and chunks (the GUI passes its job's ``cancelled``); when it returns True the
generator raises ``InterruptedError``.  The chunks are bounded by ``CHUNK`` elements, so the time
from ``cancel()`` becoming true to the raise is one chunk's work (tens of milliseconds), not the whole
graph's.  Chunking changes no result: the same seed gives the same graph with or without ``cancel``.

Paper 000's parameter sets (1) and (2) are not given in the paper; ``ALPHA_SETS`` holds ours.
The directed versions paper 004 uses (arcs, not edges) are in :mod:`.digraphs`.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import numpy as np

from ...errors import InvalidParameter
from .graph import Graph, canonical_edges

#: our choices for paper 000's α-model sets (the paper gives only k = 10); type 3 = BA k = 100
ALPHA_SETS = {
    1: dict(k=10, alpha=0.0, p=1e-9, ring=True),    # ring substrate, no shortcuts: path ∝ n
    2: dict(k=10, alpha=4.0, p=1e-4, ring=False),   # no substrate, a few random links
}

GENERATORS = ("ring", "ws", "er", "ba", "spatial", "alpha", "random", "rmat", "complete")

#: display names (the Graphs workspace's generator list)
LABELS = {"ba": "Barabási–Albert", "ws": "Watts–Strogatz", "ring": "Ring lattice", "er": "Erdős–Rényi",
          "spatial": "Spatial (2-space, distance)", "alpha": "Watts α-model",
          "random": "Random, DIMACS style (paper 004)", "rmat": "R-MAT power law (paper 004)",
          "complete": "Complete graph"}

#: the ``generate`` arguments each generator reads besides n (the GUI greys out the others)
USES = {"ring": ("k",), "ws": ("k", "p", "seed"), "er": ("p", "seed"), "ba": ("k", "seed"),
        "spatial": ("k", "seed"), "alpha": ("k", "p", "alpha", "ring", "seed"),
        "random": ("k", "ring", "seed"), "rmat": ("k", "seed"), "complete": ()}

#: what ``k`` means for each generator that reads it
K_MEANING = {"ring": "mean degree k", "ws": "mean degree k", "ba": "edges per new vertex m",
             "spatial": "expected mean degree k (sets the radius)", "alpha": "mean degree k",
             "random": "mean degree k (n·k/2 edges; with 'ring': a Hamiltonian cycle first)",
             "rmat": "mean degree k (n·k/2 edges)"}

#: GTgraph's R-MAT quadrant probabilities a, b, c (d = 1 − a − b − c)
RMAT_ABC = (0.45, 0.15, 0.15)
#: the largest complete graph built (n(n−1)/2 edges)
COMPLETE_MAX_N = 20_000


#: elements per chunk between two cancellation checks (``checked_unique``, the chunked steps)
CHUNK = 1 << 19


def _rng(seed):
    return np.random.default_rng(seed)


def check_cancel(cancel) -> None:
    """Raise ``InterruptedError`` when ``cancel`` (a callable or None) says the work should stop."""
    if cancel is not None and cancel():
        raise InterruptedError("generation cancelled")


def checked_unique(keys: np.ndarray, cancel=None) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_index=True)`` (sorted keys, index of each one's first occurrence)
    with ``cancel`` polled between chunks: the keys are split into ranges of key values of about
    ``CHUNK`` keys each (a stable radix sort of the 16-bit range number keeps each range's keys in
    their original order), and each range is made unique on its own.  Same result as ``np.unique``."""
    keys = np.asarray(keys, dtype=np.int64).ravel()
    if cancel is None or keys.size <= CHUNK:
        return np.unique(keys, return_index=True)
    lo, hi = int(keys.min()), int(keys.max())
    nb = min(1 << 16, -(-keys.size // CHUNK))
    width = -(-(hi - lo + 1) // nb)
    b = ((keys - lo) // width).astype(np.uint16)
    check_cancel(cancel)
    order = np.argsort(b, kind="stable")
    ends = np.cumsum(np.bincount(b, minlength=nb))
    ks, out_k, out_i, start = keys[order], [], [], 0
    for end in ends:
        check_cancel(cancel)
        k, i = np.unique(ks[start:end], return_index=True)
        out_k.append(k)
        out_i.append(order[start + i])
        start = end
    return np.concatenate(out_k), np.concatenate(out_i)


def _canonical(u, v, n: int, cancel=None) -> np.ndarray:
    """``graph.canonical_edges`` (no weights) with ``cancel`` polled between chunks."""
    if cancel is None:
        return canonical_edges(u, v, n)[0]
    u = np.asarray(u, dtype=np.int64).ravel()
    v = np.asarray(v, dtype=np.int64).ravel()
    keep = u != v
    key, _ = checked_unique(np.minimum(u, v)[keep] * n + np.maximum(u, v)[keep], cancel)
    check_cancel(cancel)
    e = np.empty((key.size, 2), dtype=np.int32)
    e[:, 0] = key // n
    e[:, 1] = key % n
    return e


def checked_isin(a: np.ndarray, b: np.ndarray, cancel=None) -> np.ndarray:
    """``np.isin(a, b)`` with ``cancel`` polled between chunks of ``a`` (b is sorted once)."""
    if cancel is None or a.size + b.size <= CHUNK:
        return np.isin(a, b)
    bs = np.sort(b)
    check_cancel(cancel)
    out = np.empty(a.size, bool)
    for s in range(0, a.size, CHUNK):
        check_cancel(cancel)
        c = a[s:s + CHUNK]
        j = np.minimum(np.searchsorted(bs, c), max(bs.size - 1, 0))
        out[s:s + CHUNK] = (bs[j] == c) if bs.size else False
    return out


def _check_n(n: int, minimum: int = 2) -> int:
    n = int(n)
    if n < minimum:
        raise InvalidParameter(f"n must be ≥ {minimum} (got {n})")
    return n


def check_k(n: int, k: int) -> int:
    """The ring degree ``k`` of an n-vertex Watts–Strogatz / ring lattice: even, 2 ≤ k < n
    (InvalidParameter otherwise); returned as an int."""
    k = int(k)
    if k < 2 or k % 2:
        raise InvalidParameter(f"k must be an even number ≥ 2 (got {k})")
    if k >= n:
        raise InvalidParameter(f"k must be smaller than n (k = {k}, n = {n})")
    return k


def check_p(p: float, name: str = "p") -> float:
    """A probability ``p`` in [0, 1] (InvalidParameter naming ``name`` otherwise); returned as a float."""
    p = float(p)
    if not (0.0 <= p <= 1.0):
        raise InvalidParameter(f"{name} must be a probability in [0, 1] (got {p})")
    return p


def _ring_positions(n: int) -> np.ndarray:
    t = 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(t), np.sin(t)], axis=1).astype(np.float32)


def ring_lattice(n: int, k: int = 4) -> Graph:
    n = _check_n(n, 3)
    k = check_k(n, k)
    i = np.repeat(np.arange(n, dtype=np.int64), k // 2)
    d = np.tile(np.arange(1, k // 2 + 1, dtype=np.int64), n)
    e, _ = canonical_edges(i, (i + d) % n, n)
    return Graph(n, e, positions=_ring_positions(n), name="ring lattice", params=dict(n=n, k=k))


def watts_strogatz(n: int, k: int = 10, p: float = 0.1, seed=None, cancel=None) -> Graph:
    n = _check_n(n, 3)
    k = check_k(n, k)
    p = check_p(p)
    rng = _rng(seed)
    u = np.repeat(np.arange(n, dtype=np.int64), k // 2)
    v = (u + np.tile(np.arange(1, k // 2 + 1), n)) % n
    rew = rng.random(u.size) < p
    # rewire the far end to a uniform vertex; a pick that would be a self-loop or a duplicate
    # is redrawn (a few rounds), and left unrewired if it still collides (as networkx does)
    for _ in range(8):
        check_cancel(cancel)
        idx = np.flatnonzero(rew)
        if idx.size == 0:
            break
        cand = rng.integers(0, n, idx.size)
        a, b = np.minimum(u[idx], cand), np.maximum(u[idx], cand)
        fixed = np.minimum(u[~rew], v[~rew]) * n + np.maximum(u[~rew], v[~rew])
        ck = a * n + b
        ok = (cand != u[idx]) & ~checked_isin(ck, fixed, cancel)
        # within the batch, the first occurrence of a key wins
        _, first = checked_unique(np.where(ok, ck, -1 - np.arange(ck.size)), cancel)
        firstmask = np.zeros(ck.size, bool)
        firstmask[first] = True
        ok &= firstmask
        v[idx[ok]] = cand[ok]
        rew[idx[ok]] = False
    e = _canonical(u, v, n, cancel)
    return Graph(n, e, positions=_ring_positions(n), name="Watts–Strogatz",
                 params=dict(n=n, k=k, p=p, seed=seed))


def erdos_renyi(n: int, p: float = 0.01, seed=None, cancel=None) -> Graph:
    n = _check_n(n, 2)
    p = check_p(p)
    rng = _rng(seed)
    pairs = n * (n - 1) // 2
    m = int(rng.binomial(pairs, p))
    if p > 0.25 and pairs <= 50_000_000:
        # dense: choose the pairs directly from the linear index of the upper triangle
        lin = rng.choice(pairs, size=m, replace=False)
    else:
        lin = np.empty(0, dtype=np.int64)
        while lin.size < m:
            check_cancel(cancel)
            lin = checked_unique(np.concatenate([lin, rng.integers(0, pairs, int((m - lin.size) * 1.05) + 16)]),
                                 cancel)[0]
        check_cancel(cancel)
        lin = rng.permutation(lin)[:m]
    lin = np.asarray(lin, dtype=np.int64)
    # invert the linear index of the strict upper triangle (row-major)
    i = (n - 2 - np.floor(np.sqrt(-8.0 * lin + 4.0 * n * (n - 1) - 7) / 2.0 - 0.5)).astype(np.int64)
    j = lin + i + 1 - n * (n - 1) // 2 + (n - i) * ((n - i) - 1) // 2
    check_cancel(cancel)
    e = _canonical(i, j, n, cancel)
    return Graph(n, e, name="Erdős–Rényi", params=dict(n=n, p=p, seed=seed))


def barabasi_albert(n: int, m: int = 5, seed=None, cancel=None) -> Graph:
    n = _check_n(n, 2)
    m = int(m)
    if m < 1 or m >= n:
        raise InvalidParameter(f"BA needs 1 ≤ m < n (m = {m}, n = {n})")
    rng = _rng(seed)
    m0 = m + 1                               # seed graph: a clique of m + 1 vertices
    cu, cv = np.triu_indices(m0, 1)
    e0 = cu.size
    newv = np.arange(m0, n, dtype=np.int64)
    # arc-end list M: the seed clique's 2·e0 ends, then (new vertex, target) pairs
    L = 2 * e0 + 2 * m * newv.size
    M = np.empty(L, dtype=np.int64)
    M[0:2 * e0:2], M[1:2 * e0:2] = cu, cv
    src = np.repeat(newv, m)
    check_cancel(cancel)
    pos_new = 2 * e0 + 2 * np.arange(src.size, dtype=np.int64)
    M[pos_new] = src
    # vertex v may pick any arc end that existed before it arrived: [0, 2·(e0 + m·(v − m0)))
    limit = 2 * (e0 + m * (src - m0))
    check_cancel(cancel)
    r = (rng.random(src.size) * limit).astype(np.int64)
    check_cancel(cancel)
    # resolve r → vertex: even/seed positions are known; odd new positions point further back
    ptr = np.arange(L, dtype=np.int64)
    known = np.ones(L, bool)
    ptr[pos_new + 1] = r
    known[pos_new + 1] = False
    check_cancel(cancel)
    # pointer jumping in chunks (a chunk may read pointers already advanced in this pass: every
    # chain still ends at its first known position, so the result is the same)
    resolved = False
    while not resolved:
        resolved = True
        for s in range(0, L, CHUNK):
            check_cancel(cancel)
            p = ptr[s:s + CHUNK]
            un = ~known[p]
            if un.any():
                resolved = False
                p[un] = ptr[p[un]]
    check_cancel(cancel)
    M = M[ptr]
    tgt = M[pos_new + 1]
    e = _canonical(np.concatenate([cu, src]), np.concatenate([cv, tgt]), n, cancel)
    return Graph(n, e, name="Barabási–Albert", params=dict(n=n, m=m, seed=seed))


def spatial(n: int, k: float | None = 8.0, radius: float | None = None, seed=None, cancel=None) -> Graph:
    """Random geometric graph in the unit square (paper 000 Fig. 8)."""
    from scipy.spatial import cKDTree
    n = _check_n(n, 2)
    if radius is None:
        if k is None or k <= 0:
            raise InvalidParameter("spatial graphs need a mean degree k > 0 or a radius > 0")
        radius = float(np.sqrt(k / (np.pi * n)))
    if not (0 < radius <= 1.5):
        raise InvalidParameter(f"radius must be in (0, 1.5] (got {radius})")
    rng = _rng(seed)
    pts = rng.random((n, 2))
    check_cancel(cancel)
    pairs = cKDTree(pts).query_pairs(radius, output_type="ndarray")
    check_cancel(cancel)
    e = _canonical(pairs[:, 0], pairs[:, 1], n, cancel)
    return Graph(n, e, positions=(pts * 2 - 1).astype(np.float32), name="spatial",
                 params=dict(n=n, radius=radius, seed=seed))


def watts_alpha(n: int, k: int = 10, alpha: float = 1.0, p: float = 1e-4, ring: bool = True,
                seed=None, batch: int | None = None, cancel=None) -> Graph:
    """Watts' α-model, vectorised in rounds (see module docstring)."""
    import scipy.sparse as sp
    n = _check_n(n, 4)
    k = check_k(n, k)
    p = check_p(p)
    if alpha < 0:
        raise InvalidParameter(f"alpha must be ≥ 0 (got {alpha})")
    rng = _rng(seed)
    target = n * k // 2
    if ring:
        i = np.arange(n, dtype=np.int64)
        keys = np.minimum(i, (i + 1) % n) * n + np.maximum(i, (i + 1) % n)
    else:
        keys = np.empty(0, dtype=np.int64)
    keys = np.unique(keys)
    batch = int(batch or max(1, n // 8))
    stall = 0
    while keys.size < target:
        check_cancel(cancel)
        a, b = keys // n, keys % n
        A = sp.csr_matrix((np.ones(2 * a.size, np.float32), (np.concatenate([a, b]), np.concatenate([b, a]))),
                          shape=(n, n))
        A.sum_duplicates()
        need = target - keys.size
        rows = rng.choice(n, size=min(batch, need, n), replace=False)
        # common-neighbour counts m_ij for the batch rows (two-hop neighbourhood only)
        Mi = (A[rows] @ A).tocsr()
        Mi.sum_duplicates()
        ri = np.repeat(np.arange(rows.size), np.diff(Mi.indptr))
        cj = Mi.indices.astype(np.int64)
        mij = Mi.data.astype(np.float64)
        # drop self and existing neighbours
        ek = np.minimum(rows[ri], cj) * n + np.maximum(rows[ri], cj)
        ok = (cj != rows[ri]) & ~np.isin(ek, keys)
        ri, cj, mij = ri[ok], cj[ok], mij[ok]
        R = np.where(mij >= k, 1.0, (mij / k) ** alpha * (1 - p) + p)
        deg = np.asarray(A.sum(axis=1)).ravel()
        n2 = np.bincount(ri, minlength=rows.size)
        n0 = np.maximum(0, n - 1 - deg[rows] - n2)           # vertices with m_ij = 0
        W2 = np.bincount(ri, weights=R, minlength=rows.size)
        W0 = p * n0
        tot = W0 + W2
        pick_two = rng.random(rows.size) * np.where(tot > 0, tot, 1.0) < W2
        partner = np.full(rows.size, -1, dtype=np.int64)
        # weighted pick inside the two-hop set (global cumulative sum + per-row search)
        if ri.size:
            cs = np.cumsum(R)
            starts = np.searchsorted(ri, np.arange(rows.size), "left")
            base = np.where(starts > 0, cs[np.maximum(starts - 1, 0)], 0.0)
            u = base + rng.random(rows.size) * W2
            idx = np.minimum(np.searchsorted(cs, u, "right"), cs.size - 1)
            sel = pick_two & (W2 > 0)
            partner[sel] = cj[idx[sel]]
        # uniform pick among the m_ij = 0 vertices (rejection: a hit on a neighbour is dropped)
        rnd = rng.integers(0, n, rows.size)
        sel = ~pick_two & (W0 > 0)
        partner[sel] = rnd[sel]
        good = partner >= 0
        u, v = rows[good], partner[good]
        newk = np.minimum(u, v) * n + np.maximum(u, v)
        newk = np.unique(newk[(u != v)])
        newk = newk[~np.isin(newk, keys)][:need]
        stall = stall + 1 if newk.size == 0 else 0
        if stall > 20:
            break                                             # saturated (tiny n with p = 0)
        keys = np.union1d(keys, newk)
    e, _ = canonical_edges(keys // n, keys % n, n)
    return Graph(n, e, positions=_ring_positions(n), name="Watts α-model" + (" (ring)" if ring else ""),
                 params=dict(n=n, k=k, alpha=alpha, p=p, ring=ring, seed=seed))


def with_weights(g: Graph, kind: str = "int", w_max: int | None = None, low: float = 1.0,
                 high: float = 10.0, seed=None) -> Graph:
    """Weighted copy: ``int`` = uniform integers 1…w_max (paper 004; default w_max = n), ``float``
    = uniform in [low, high)."""
    rng = _rng(seed)
    if kind == "int":
        w_max = int(w_max or g.n)
        if w_max < 1:
            raise InvalidParameter("w_max must be ≥ 1")
        w = rng.integers(1, w_max + 1, g.m).astype(np.float32)
    elif kind == "float":
        if not (0 <= low < high):
            raise InvalidParameter("weights need 0 ≤ low < high")
        w = rng.uniform(low, high, g.m).astype(np.float32)
    else:
        raise InvalidParameter(f"unknown weight kind {kind!r}: use int or float")
    return Graph(g.n, g.edges, w, g.positions, name=g.name + " (weighted)", params=dict(g.params, weights=kind))


def random_pairs(n: int, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``count`` uniformly random ordered pairs (u, v) of 0 … n−1 (self-loops and repeats possible)."""
    return rng.integers(0, n, count, dtype=np.int64), rng.integers(0, n, count, dtype=np.int64)


def rmat_arcs(n: int, count: int, rng, abc=RMAT_ABC) -> tuple[np.ndarray, np.ndarray]:
    """``count`` R-MAT arcs on 0 … n−1: each arc picks one quadrant of the adjacency matrix per
    level (probabilities a, b, c, d) over ⌈log2 n⌉ levels; arcs with an end ≥ n are drawn again.
    Self-loops and repeats are kept (the callers drop them)."""
    a, b, c = (float(x) for x in abc)
    if min(a, b, c) < 0 or a + b + c > 1:
        raise InvalidParameter(f"R-MAT needs a, b, c ≥ 0 with a + b + c ≤ 1 (got {a}, {b}, {c})")
    scale = max(1, int(np.ceil(np.log2(max(n, 2)))))
    us, vs, have = [], [], 0
    while have < count:
        m = int((count - have) * 1.1) + 16
        u = np.zeros(m, dtype=np.int64)
        v = np.zeros(m, dtype=np.int64)
        for _ in range(scale):
            r = rng.random(m)
            u = 2 * u + (r >= a + b)
            v = 2 * v + (((r >= a) & (r < a + b)) | (r >= a + b + c))
        ok = (u < n) & (v < n)
        us.append(u[ok])
        vs.append(v[ok])
        have += int(ok.sum())
    return np.concatenate(us)[:count], np.concatenate(vs)[:count]


def _edges_upto(n: int, m: int, draw, rng, base=None, cancel=None) -> np.ndarray:
    """Canonical edges: ``base`` (kept) plus distinct pairs from ``draw(count)`` until m in all (the
    extra pairs chosen at random among the distinct ones drawn)."""
    keys = np.empty(0, dtype=np.int64) if base is None else base[:, 0].astype(np.int64) * n + base[:, 1]
    need = m - keys.size
    extra = np.empty(0, dtype=np.int64)
    for _ in range(64):
        if need <= 0 or extra.size >= need:
            break
        check_cancel(cancel)
        u, v = draw(int((need - extra.size) * 1.2) + 16)
        e = _canonical(u, v, n, cancel)
        k2 = e[:, 0].astype(np.int64) * n + e[:, 1]
        extra = np.union1d(extra, k2[~checked_isin(k2, keys, cancel)])
    check_cancel(cancel)
    extra = rng.permutation(extra)[:max(0, need)]
    keys = np.concatenate([keys, extra])
    e = _canonical(keys // n, keys % n, n, cancel)
    return e


def _check_edges(n: int, k) -> int:
    m = int(round(n * float(k) / 2))
    if k <= 0 or m > n * (n - 1) // 2:
        raise InvalidParameter(f"mean degree k must lie in (0, n − 1] (k = {k}, n = {n})")
    return m


def dimacs_random(n: int, k: float = 8, cycle: bool = True, seed=None, cancel=None) -> Graph:
    """Random graph with n·k/2 edges, DIMACS style (module docstring); ``cycle``: Hamiltonian cycle first."""
    n = _check_n(n, 3)
    m = _check_edges(n, k)
    rng = _rng(seed)
    base = None
    if cycle:
        i = np.arange(n, dtype=np.int64)
        base, _ = canonical_edges(i, (i + 1) % n, n)
        if m < base.shape[0]:
            raise InvalidParameter(f"with the cycle the graph has at least n edges: k must be ≥ 2 (got {k})")
    e = _edges_upto(n, m, lambda c: random_pairs(n, c, rng), rng, base, cancel)
    return Graph(n, e, positions=_ring_positions(n) if cycle else None,
                 name="random (DIMACS style" + (", Hamiltonian cycle)" if cycle else ")"),
                 params=dict(n=n, k=k, cycle=cycle, seed=seed))


def rmat(n: int, k: float = 8, seed=None, abc=RMAT_ABC, cancel=None) -> Graph:
    """R-MAT power-law graph with n·k/2 distinct edges (module docstring)."""
    n = _check_n(n, 2)
    m = _check_edges(n, k)
    rng = _rng(seed)
    e = _edges_upto(n, m, lambda c: rmat_arcs(n, c, rng, abc), rng, cancel=cancel)
    return Graph(n, e, name="R-MAT", params=dict(n=n, k=k, seed=seed, abc=tuple(abc)))


def complete(n: int) -> Graph:
    """The complete graph K_n (n ≤ COMPLETE_MAX_N)."""
    n = _check_n(n, 2)
    if n > COMPLETE_MAX_N:
        raise InvalidParameter(f"a complete graph above {COMPLETE_MAX_N:,} vertices has over "
                               f"{COMPLETE_MAX_N * (COMPLETE_MAX_N - 1) // 2:,} edges (got n = {n:,})")
    u, v = np.triu_indices(n, 1)
    e = np.stack([u, v], axis=1).astype(np.int32)
    return Graph(n, e, positions=_ring_positions(n), name="complete", params=dict(n=n))


def generate(kind: str, n: int, k: int = 10, p: float = 0.1, alpha: float = 1.0, ring: bool = True,
             seed=None, radius: float | None = None, cancel=None) -> Graph:
    """One entry point for the CLI and the GUI.  ``k``: mean degree (BA: m = k/2 per new vertex
    when k is even, the CLI's ``--k`` follows networkx and means m for BA).  ``cancel``: a callable
    polled between chunks (``InterruptedError`` when it returns True; module docstring)."""
    check_cancel(cancel)
    if kind == "ring":
        return ring_lattice(n, k)
    if kind == "ws":
        return watts_strogatz(n, k, p, seed, cancel=cancel)
    if kind == "er":
        return erdos_renyi(n, p, seed, cancel=cancel)
    if kind == "ba":
        return barabasi_albert(n, k, seed, cancel=cancel)
    if kind == "spatial":
        return spatial(n, k, radius, seed, cancel=cancel)
    if kind == "alpha":
        return watts_alpha(n, k, alpha, p, ring, seed, cancel=cancel)
    if kind == "random":
        return dimacs_random(n, k, ring, seed, cancel=cancel)
    if kind == "rmat":
        return rmat(n, k, seed, cancel=cancel)
    if kind == "complete":
        return complete(n)
    raise InvalidParameter(f"unknown generator {kind!r}: use one of {', '.join(GENERATORS)}")
