"""Graph container and adjacency layouts of paper 000 §4.2 (Fig. 9e CSR, Fig. 9f / Listing 2 int4 packing).

A :class:`Graph` is undirected and simple: ``edges`` holds each edge once as ``(u, v)`` with
``u < v`` (int32, sorted); an undirected edge is two arcs in the adjacency layouts.
"""
from __future__ import annotations

# Imports inside functions: SciPy and networkx load where used (slow to import; `main.py --help` loads this module).
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from ... import filegate
from ...errors import InvalidParameter
from ...fileio import atomic_path, atomic_write
from array import array


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


#: most vertices a graph file may imply (edge list: largest id + 1; GraphML: nodes); larger files
#: are refused before the graph is built (``load_graph(max_vertices=…)``, CLI ``--max-vertices``)
MAX_VERTICES = 5_000_000
#: most edges a graph file may hold (the CSR layout's int32 arc count allows 2³⁰)
MAX_EDGES = 100_000_000
#: an edge list without an ``n = N`` header is refused when its largest id implies more than this many
#: times the vertices that appear in an edge (and more than :data:`SPARSE_MIN` vertices): vertex ids
#: are taken as 0 … max, so sparse labels (``0 30000``) would silently add thousands of isolated vertices
SPARSE_FACTOR = 10
SPARSE_MIN = 1000
_HEADER_N = re.compile(r"(?:^|[\s:,;(])n\s*=\s*([-+]?\d+)")


def _weight(text, where: str) -> float:
    """A finite, non-negative edge weight (float32-representable) or InvalidParameter naming ``where``."""
    try:
        w = float(text)
    except (TypeError, ValueError, OverflowError):
        raise InvalidParameter(f"{where}: the weight {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(w) or not math.isfinite(float(np.float32(w))):
        raise InvalidParameter(f"{where}: the weight {w!r} is not a finite (float32) number")
    if w < 0:
        raise InvalidParameter(f"{where}: the weight {w!r} is negative; an undirected edge of negative "
                               "weight is a negative cycle, so shortest paths are undefined")
    return w


def from_networkx(G, name: str = "imported", max_vertices: int = MAX_VERTICES) -> Graph:
    """Relabel nodes 0…n−1 (in G's node order); directed input is symmetrised, self-loops dropped.

    Weights (edge attribute ``weight``) must be given on every edge or on none, and be finite
    numbers ≥ 0; positions (node attributes ``x``, ``y``) must be numbers.  Anything else is
    refused with InvalidParameter naming the edge or node."""
    nodes = list(G.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    if n == 0:
        raise InvalidParameter("the graph has no vertices")
    if n > max_vertices:
        raise InvalidParameter(f"the graph has {n:,} vertices; the limit is {max_vertices:,} (--max-vertices)")
    uv = np.array([(index[a], index[b]) for a, b in G.edges()], dtype=np.int64).reshape(-1, 2)
    ws = [(a, b, d.get("weight")) for a, b, d in G.edges(data=True)]
    given = [x is not None for _a, _b, x in ws]
    w = None
    if any(given):
        if not all(given):
            a, b, _x = ws[given.index(False)]
            raise InvalidParameter(f"edge {a}–{b} has no weight but other edges have one: give every edge a "
                                   "weight or none")
        w = np.asarray([_weight(x, f"edge {a}–{b}") for a, b, x in ws], dtype=np.float32)
    e, w = canonical_edges(uv[:, 0], uv[:, 1], n, w)
    pos = None
    if nodes and all("x" in G.nodes[v] and "y" in G.nodes[v] for v in nodes):
        pos = np.empty((n, 2), dtype=np.float32)
        for i, v in enumerate(nodes):
            for j, k in enumerate("xy"):
                try:
                    pos[i, j] = float(G.nodes[v][k])
                except (TypeError, ValueError, OverflowError):
                    raise InvalidParameter(f"node {v}: position {k} = {str(G.nodes[v][k])[:40]!r} is not a "
                                           "number") from None
        if not np.isfinite(pos).all():
            raise InvalidParameter("a node position is not a finite number")
    return Graph(n, e, w, pos, name=name)


def save_graph(g: Graph, path: str) -> None:
    """GraphML (``.graphml``) or edge list (anything else), written atomically (an interrupted
    write leaves any earlier file).  The edge list starts with ``# name: n = N, m = M, …`` so that
    :func:`load_graph` restores isolated vertices past the largest id."""
    import networkx as nx

    path = str(path)
    if path.lower().endswith(".graphml"):
        with atomic_path(path) as tmp:
            nx.write_graphml(to_networkx(g), str(tmp))
    else:
        with atomic_write(path, "w") as fh:
            fh.write(f"# {g.describe()}\n")
            if g.weights is None:
                np.savetxt(fh, g.edges, fmt="%d")
            else:
                for (a, b), w in zip(g.edges.tolist(), g.weights.tolist()):
                    fh.write(f"{a} {b} {w!r}\n")


def read_edge_list(path: str, max_vertices: int = MAX_VERTICES, name: str | None = None) -> Graph:
    """An edge list: ``u v`` or ``u v weight`` per line (whitespace separated, ``#`` comments).

    Vertex ids are integers 0 … n−1 with n = largest id + 1, or the ``n = N`` of a comment line
    before the first edge (the header :func:`save_graph` writes).  Refused with the line named:
    other column counts, ids that are not integers ≥ 0, weights that are not finite numbers ≥ 0,
    lines with and without weights in one file, ids implying more than ``max_vertices`` vertices,
    more than :data:`MAX_EDGES` edges, and sparse ids (see :data:`SPARSE_FACTOR`) without a header."""
    label = name or os.path.basename(path)
    us, vs, ws = array("q"), array("q"), array("d")
    weighted = None
    header_n = None
    top = -1
    fh = filegate.open_text(path, filegate.GRAPH, label)       # regular file, size, bounded reads
    with fh:
        try:
            for no, raw in enumerate(fh, 1):
                line, _, comment = raw.partition("#")
                toks = line.split()
                if not toks:
                    if comment and weighted is None and header_n is None:
                        mt = _HEADER_N.search(comment)
                        header_n = int(mt.group(1)) if mt else None
                        if header_n is not None and header_n < 0:
                            raise InvalidParameter(f"{label} line {no}: the header says n = {header_n}; the number "
                                                   "of vertices cannot be negative")
                    continue
                where = f"{label} line {no}"
                if len(toks) not in (2, 3):
                    raise InvalidParameter(f"{where}: expected 'u v' or 'u v weight', got {len(toks)} columns")
                if weighted is None:
                    weighted = len(toks) == 3
                elif weighted != (len(toks) == 3):
                    raise InvalidParameter(f"{where}: {'no' if weighted else 'a'} weight, unlike the lines "
                                           "before it: give every edge a weight or none")
                ids = []
                for t in toks[:2]:
                    if not t.lstrip("+-").isdigit() or len(t) > 19:
                        raise InvalidParameter(f"{where}: vertex id {t[:40]!r} is not an integer")
                    k = int(t)
                    if k < 0:
                        raise InvalidParameter(f"{where}: vertex id {k} is negative (ids are 0 … n−1)")
                    if k >= max_vertices:
                        raise InvalidParameter(f"{where}: vertex id {k} implies at least {k + 1:,} vertices; the "
                                               f"limit is {max_vertices:,} (--max-vertices)")
                    ids.append(k)
                us.append(ids[0])
                vs.append(ids[1])
                top = max(top, ids[0], ids[1])
                if weighted:
                    ws.append(_weight(toks[2], f"{where} (edge {ids[0]}–{ids[1]})"))
                if len(us) > MAX_EDGES:
                    raise InvalidParameter(f"{label}: more than {MAX_EDGES:,} edges")
        except UnicodeDecodeError:
            raise InvalidParameter(f"cannot read {label}: not a text file (not UTF-8)") from None
        except OSError as exc:
            raise InvalidParameter(f"cannot read {label}: {exc.strerror or exc}") from None
    if top < 0 and header_n is None:
        raise InvalidParameter(f"{label}: no edges and no '# n = N' line: the graph has no vertices")
    u = np.frombuffer(us, dtype=np.int64) if len(us) else np.zeros(0, np.int64)
    v = np.frombuffer(vs, dtype=np.int64) if len(vs) else np.zeros(0, np.int64)
    n = top + 1
    if header_n is not None:
        if header_n < n:
            raise InvalidParameter(f"{label}: the header says n = {header_n}, but vertex id {top} is used")
        if header_n > max_vertices:
            raise InvalidParameter(f"{label}: the header says n = {header_n:,}; the limit is {max_vertices:,} "
                                   "(--max-vertices)")
        n = header_n
    elif n > SPARSE_MIN:
        seen = np.unique(np.concatenate([u, v])).size
        if n > SPARSE_FACTOR * seen:
            raise InvalidParameter(f"{label}: the largest vertex id {top} implies {n:,} vertices but only {seen:,} "
                                   f"appear in an edge: number the vertices 0 … n−1, or declare n in a comment "
                                   f"line before the edges ('# n = {n}')")
    w = np.frombuffer(ws, dtype=np.float64) if weighted else None
    e, w = canonical_edges(u, v, max(n, 1), w)
    return Graph(n, e, w, None, name=label)


def load_graph(path: str, max_vertices: int = MAX_VERTICES) -> Graph:
    """Read GraphML (``.graphml``) or an edge list (any other name; :func:`read_edge_list`).
    Both pass the file gate (:mod:`kernels.filegate`: regular files within the ``graph`` /
    ``graphml`` size limits; GraphML checked for entities and depth before networkx parses it).

    Every problem is an InvalidParameter naming the file (and line, edge or node)."""
    import networkx as nx
    path = str(path)
    label = os.path.basename(path)
    if not os.path.exists(path):
        raise InvalidParameter(f"cannot read {path}: no such file")
    if not path.lower().endswith(".graphml"):
        return read_edge_list(path, max_vertices, label)
    text = filegate.read_xml(path, filegate.GRAPHML, label)  # the gate: size, entities, depth (any BOM)
    try:
        G = nx.parse_graphml(text)
    except RecursionError:
        raise InvalidParameter(f"cannot read {label}: nested too deeply") from None
    except Exception as exc:  # networkx/ElementTree raise many kinds
        raise InvalidParameter(f"cannot read {label}: {' '.join(str(exc).split())[:200]}") from exc
    try:
        return from_networkx(G, name=label, max_vertices=max_vertices)
    except InvalidParameter as exc:
        raise InvalidParameter(f"{label}: {exc}") from None
