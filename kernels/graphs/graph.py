"""Graph container and adjacency layouts of paper 000 §4.2 (Fig. 9e CSR, Fig. 9f / Listing 2 int4 packing).

A :class:`Graph` is undirected and simple: ``edges`` holds each edge once as ``(u, v)`` with
``u < v`` (int32, sorted); an undirected edge is two arcs in the adjacency layouts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameter


@dataclass
class Graph:
    """An undirected simple graph on vertices ``0 … n-1``.

    Parameters
    ----------
    n : int
        number of vertices
    edges : (m, 2) int32
        each edge once, ``u < v``, lexicographically sorted, no duplicates or self-loops
    weights : (m,) float32 or None
        edge weights (``None``: unit weights, i.e. hop counts)
    positions : (n, 2) float32 or None
        drawing positions from the generator (ring, plane), if it has them
    name, params : provenance (generator name and its parameters)
    """

    n: int
    edges: np.ndarray
    weights: np.ndarray | None = None
    positions: np.ndarray | None = None
    name: str = "graph"
    params: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        return int(self.edges.shape[0])

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def degrees(self) -> np.ndarray:
        return np.bincount(self.edges.ravel(), minlength=self.n).astype(np.int64)

    def csr(self) -> "CSR":
        return CSR.from_graph(self)

    def describe(self) -> str:
        k = 2.0 * self.m / self.n if self.n else 0.0
        return f"{self.name}: n = {self.n}, m = {self.m}, mean degree {k:.2f}"


def components(g: Graph) -> tuple[int, np.ndarray]:
    """Number of connected components and each vertex's component label (scipy.sparse.csgraph)."""
    from scipy.sparse.csgraph import connected_components
    return connected_components(g.csr().to_scipy(weighted=False), directed=False)


def largest_component(g: Graph) -> tuple[Graph, float]:
    """The largest connected component as a graph on its own vertices ``0 … n'-1`` (old labels
    kept in order; positions, weights and params carried over) and the fraction of vertices in it."""
    if g.n == 0:
        return g, 1.0
    n_comp, lab = components(g)
    if n_comp == 1:
        return g, 1.0
    keep = lab == np.argmax(np.bincount(lab))
    new = np.cumsum(keep) - 1
    sel = keep[g.edges[:, 0]]                           # both ends share a component
    edges = new[g.edges[sel]].astype(np.int32)          # order and u < v are preserved
    sub = Graph(int(keep.sum()), edges, None if g.weights is None else g.weights[sel],
                None if g.positions is None else g.positions[keep], g.name + " (largest component)",
                dict(g.params))
    return sub, sub.n / g.n


def canonical_edges(u, v, n: int, weights=None):
    """Sorted unique ``(min, max)`` pairs without self-loops (and their weights: first kept)."""
    u = np.asarray(u, dtype=np.int64).ravel()
    v = np.asarray(v, dtype=np.int64).ravel()
    keep = u != v
    a, b = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
    key = a * n + b
    key, first = np.unique(key, return_index=True)
    e = np.empty((key.size, 2), dtype=np.int32)
    e[:, 0] = key // n
    e[:, 1] = key % n
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float32).ravel()[keep][first]
    return e, w


@dataclass
class CSR:
    """Compressed sparse rows (paper 000 Fig. 9e): ``indptr[n+1]`` offsets, ``indices`` arc ends.

    Arcs of each vertex are sorted by end vertex.  ``weights`` follows ``indices`` (or is None).
    ``directed=False`` (from a :class:`Graph`): every edge is two arcs, ``indices`` has 2m entries.
    ``directed=True``: the arcs are the graph (paper 004 ch. 3's graphs are directed; see
    :mod:`.digraphs`), and distances are taken along arcs only.
    """

    n: int
    indptr: np.ndarray      # int32 (n+1)
    indices: np.ndarray     # int32 (arcs)
    weights: np.ndarray | None = None
    directed: bool = False

    @property
    def arcs(self) -> int:
        return int(self.indices.size)

    def degrees(self) -> np.ndarray:
        return np.diff(self.indptr).astype(np.int64)

    def sources(self) -> np.ndarray:
        """Arc source of each arc (the ``S`` array of paper 001 §5.4)."""
        return np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.indptr))

    @classmethod
    def from_arcs(cls, n: int, src, dst, weights=None, directed: bool = False) -> "CSR":
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if src.size >= 2 ** 31:
            raise InvalidParameter(f"{src.size} arcs exceed the int32 CSR layout")
        order = np.lexsort((dst, src))
        counts = np.bincount(src, minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(counts, out=indptr[1:])
        w = None if weights is None else np.asarray(weights, dtype=np.float32)[order]
        return cls(n, indptr, dst[order].astype(np.int32), w, bool(directed))

    def reversed(self) -> "CSR":
        """The inverted graph G' (every arc u → v as v → u, weights kept; paper 004 §3.4.3's
        path recording reads predecessors from it).  An undirected CSR is its own inverse."""
        if not self.directed:
            return self
        return CSR.from_arcs(self.n, self.indices, self.sources(), self.weights, directed=True)

    def source_array(self, sources=None) -> np.ndarray:
        """``sources`` (None: every vertex) as int64 vertex ids; InvalidParameter for an empty list,
        a non-integer or a vertex outside ``0 … n−1`` (checked before any GPU work)."""
        if sources is None:
            return np.arange(self.n, dtype=np.int64)
        try:
            arr = np.asarray(sources)
            if arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0):
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iu":
                raise TypeError
        except (TypeError, ValueError):
            raise InvalidParameter(f"sources must be whole vertex numbers (got {sources!r})") from None
        arr = arr.astype(np.int64).ravel()
        if arr.size == 0:
            raise InvalidParameter("give at least one source vertex")
        bad = arr[(arr < 0) | (arr >= self.n)]
        if bad.size:
            raise InvalidParameter(f"source {int(bad[0])} is outside the graph (vertices 0 … {self.n - 1})")
        return arr

    def min_weight(self) -> float:
        """Smallest arc weight (1.0 for an unweighted graph, inf without arcs)."""
        if self.weights is None:
            return 1.0 if self.arcs else float("inf")
        return float(self.weights.min()) if self.weights.size else float("inf")

    @classmethod
    def from_graph(cls, g: Graph) -> "CSR":
        e = g.edges.astype(np.int64)
        src = np.concatenate([e[:, 0], e[:, 1]])
        dst = np.concatenate([e[:, 1], e[:, 0]])
        w = None if g.weights is None else np.concatenate([g.weights, g.weights])
        return cls.from_arcs(g.n, src, dst, w)

    def to_scipy(self, weighted: bool = True):
        import scipy.sparse as sp
        data = (self.weights if (weighted and self.weights is not None)
                else np.ones(self.arcs, dtype=np.float32))
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))


@dataclass
class PackedInt4:
    """Paper 000's packed layouts of the adjacency lists in one array of int4 (rows of 4 int32).

    * ``with_length=True`` — Listing 2 / kernel 4: every list starts on a fresh int4, element 0 is
      its length, the arc ends follow, 4 per int4 (padding −1).
    * ``with_length=False`` — Fig. 9f / kernels 5 and 7: lists start on a fresh int4 and hold only
      arc ends; ``vertices`` is int2 (first int4 index, length).

    ``vertices`` (n, 2) int32 is filled for both; ``sorted_vertices`` lists vertex ids by
    ascending degree (kernel 5's ``verticesSorted``).
    """

    n: int
    arcs4: np.ndarray           # (n_int4, 4) int32
    vertices: np.ndarray        # (n, 2) int32: first int4, length
    sorted_vertices: np.ndarray  # (n,) int32
    with_length: bool

    @classmethod
    def from_csr(cls, csr: CSR, with_length: bool = False) -> "PackedInt4":
        deg = np.diff(csr.indptr).astype(np.int64)
        slots = deg + (1 if with_length else 0)
        nq = (slots + 3) // 4
        start = np.zeros(csr.n + 1, dtype=np.int64)
        np.cumsum(nq, out=start[1:])
        flat = np.full(int(start[-1]) * 4, -1, dtype=np.int32)
        src = csr.sources().astype(np.int64)
        pos_in_list = np.arange(csr.arcs, dtype=np.int64) - csr.indptr[:-1].astype(np.int64)[src]
        off = 1 if with_length else 0
        flat[start[src] * 4 + off + pos_in_list] = csr.indices
        if with_length:
            flat[start[:-1] * 4] = deg.astype(np.int32)
        vertices = np.stack([start[:-1], deg], axis=1).astype(np.int32)
        order = np.argsort(deg, kind="stable").astype(np.int32)
        return cls(csr.n, flat.reshape(-1, 4), vertices, order, with_length)

    def neighbours(self, v: int) -> np.ndarray:
        s, d = self.vertices[v]
        flat = self.arcs4[s:].ravel()
        off = 1 if self.with_length else 0
        return flat[off:off + d].copy()

    def padding_fraction(self) -> float:
        """Share of int4 slots wasted on padding (and length words)."""
        used = int(self.vertices[:, 1].sum())
        return 1.0 - used / max(1, self.arcs4.size)


# ------------------------------------------------------------------ networkx / files
def to_networkx(g: Graph):
    import networkx as nx
    G = nx.Graph()
    G.add_nodes_from(range(g.n))
    if g.weights is None:
        G.add_edges_from(map(tuple, g.edges.tolist()))
    else:
        G.add_weighted_edges_from((int(a), int(b), float(w)) for (a, b), w in zip(g.edges, g.weights))
    if g.positions is not None:
        for i, (x, y) in enumerate(g.positions.tolist()):
            G.nodes[i]["x"], G.nodes[i]["y"] = float(x), float(y)
    return G


def from_networkx(G, name: str = "imported") -> Graph:
    """Relabel nodes 0…n−1 (in G's node order); directed input is symmetrised, self-loops dropped."""
    nodes = list(G.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    if n == 0:
        raise InvalidParameter("the graph has no vertices")
    uv = np.array([(index[a], index[b]) for a, b in G.edges()], dtype=np.int64).reshape(-1, 2)
    ws = [d.get("weight") for _a, _b, d in G.edges(data=True)]
    w = None
    if ws and all(x is not None for x in ws):
        w = np.asarray(ws, dtype=np.float32)
    e, w = canonical_edges(uv[:, 0], uv[:, 1], n, w)
    pos = None
    if nodes and all("x" in G.nodes[v] and "y" in G.nodes[v] for v in nodes):
        pos = np.array([(float(G.nodes[v]["x"]), float(G.nodes[v]["y"])) for v in nodes], dtype=np.float32)
    return Graph(n, e, w, pos, name=name)


def save_graph(g: Graph, path: str) -> None:
    """GraphML (``.graphml``) or edge list (anything else), via networkx."""
    import networkx as nx
    path = str(path)
    if path.lower().endswith(".graphml"):
        nx.write_graphml(to_networkx(g), path)
    else:
        with open(path, "w") as fh:
            fh.write(f"# {g.describe()}\n")
            if g.weights is None:
                np.savetxt(fh, g.edges, fmt="%d")
            else:
                for (a, b), w in zip(g.edges.tolist(), g.weights.tolist()):
                    fh.write(f"{a} {b} {w!r}\n")


def load_graph(path: str) -> Graph:
    """Read GraphML or an edge list (``u v [weight]`` per line, ``#`` comments)."""
    import os

    import networkx as nx
    path = str(path)
    if not os.path.isfile(path):
        raise InvalidParameter(f"cannot read {path}: no such file")
    try:
        if path.lower().endswith(".graphml"):
            G = nx.read_graphml(path)
        else:
            G = nx.read_edgelist(path, nodetype=int, data=(("weight", float),))
            if G.number_of_nodes():
                G2 = nx.Graph()
                G2.add_nodes_from(range(max(G.nodes()) + 1))
                G2.add_edges_from(G.edges(data=True))
                G = G2
    except Exception as exc:  # networkx raises many kinds
        raise InvalidParameter(f"cannot read {os.path.basename(path)}: {exc}") from exc
    return from_networkx(G, name=os.path.basename(path))
