"""Overlays (kernels/graphs/algorithms/overlays.py), one distance row (kernels/graphs/algorithms/frontier.py) and the
picking grid (kernels/graphs/data/spatial.py) on the CPU, against networkx and brute force on fresh
random graphs and positions — disconnected graphs, isolated vertices and ties included."""
import math

import networkx as nx
import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import APSPResult, apsp
from kernels.graphs.algorithms.frontier import tree_depth
from kernels.graphs.data.graph import Graph
from kernels.graphs.algorithms.overlays import OVERLAYS, canonical_labels, distance_from, overlay_values
from kernels.graphs.apsp.paths import is_shortest_path
from kernels.graphs.data.spatial import SpatialIndex
from support.random_graphs import random_graph


def nx_graph(g: Graph) -> nx.Graph:
    H = nx.Graph()
    H.add_nodes_from(range(g.n))
    if g.weights is None:
        H.add_edges_from(map(tuple, g.edges.tolist()))
    else:
        H.add_weighted_edges_from((int(u), int(v), float(w)) for (u, v), w in zip(g.edges, g.weights))
    return H


def test_registry_names_flags_and_labels():
    assert list(OVERLAYS) == ["degree", "clustering", "component", "distance", "eccentricity"]
    assert OVERLAYS["distance"].needs_source and not OVERLAYS["degree"].needs_source
    assert OVERLAYS["eccentricity"].needs_apsp and not OVERLAYS["clustering"].needs_apsp
    for cls in OVERLAYS.values():
        assert cls.label and cls.help


def test_degree_clustering_component_equal_networkx(rng):
    for _ in range(3):
        g = random_graph(rng)
        H = nx_graph(g)
        deg = overlay_values(g, "degree")
        assert deg.integer and deg.label == "degree (edges)"
        assert np.array_equal(deg.values, [H.degree(v) for v in range(g.n)])
        cc = overlay_values(g, "clustering")
        assert not cc.integer and cc.label == "local clustering coefficient"
        ref = nx.clustering(H)
        assert np.allclose(cc.values, [ref[v] for v in range(g.n)], rtol=1e-12, atol=0)
        comp = overlay_values(g, "component")
        want = np.empty(g.n)
        for i, c in enumerate(sorted(nx.connected_components(H), key=min)):
            want[list(c)] = i
        assert np.array_equal(comp.values, want)


def test_canonical_labels_number_by_smallest_vertex(rng):
    lab = rng.integers(0, 7, size=200)
    out = canonical_labels(lab * 13 + 5)
    # the same partition …
    assert np.array_equal(out[:, None] == out[None, :], lab[:, None] == lab[None, :])
    # … numbered in order of first appearance
    firsts = [int(np.flatnonzero(out == k)[0]) for k in range(out.max() + 1)]
    assert firsts == sorted(firsts)


@pytest.mark.parametrize("weights", ["none", "int", "float"])
def test_distance_overlay_and_paths_equal_networkx(rng, weights):
    g = random_graph(rng)
    if weights != "none":
        g = G.with_weights(g, weights, seed=int(rng.integers(1 << 31)))
    H = nx_graph(g)
    s = int(rng.integers(g.n))
    ov = overlay_values(g, "distance", source=s)
    ref = (nx.single_source_dijkstra_path_length(H, s) if g.weighted
           else nx.single_source_shortest_path_length(H, s))
    want = np.full(g.n, np.nan)
    for v, d in ref.items():
        want[v] = d
    assert ov.source == s and ov.pred is not None and ov.pred.dtype == np.int32
    assert ov.label == (f"distance (weights) from vertex {s}" if g.weighted else f"hops from vertex {s}")
    assert ov.integer == (not g.weighted)
    if weights == "float":
        assert np.allclose(ov.values, want, rtol=1e-12, atol=0, equal_nan=True)
    else:
        assert np.array_equal(ov.values, want, equal_nan=True)
    csr = g.csr()
    for t in range(g.n):
        path = ov.path_to(t)
        if np.isnan(want[t]):
            assert path == [] and ov.pred[t] == -1
        else:
            assert is_shortest_path(csr, path, s, t, ov.values[t], g.weighted, rtol=1e-12 if weights == "float" else 0)


def test_distance_row_fields(rng):
    g = random_graph(rng)
    s = int(rng.integers(g.n))
    row = distance_from(g, s)
    assert row.dist.dtype == np.float64 and row.pred.dtype == np.int32 and row.backend == "cpu"
    assert row.dist[s] == 0 and row.pred[s] == -1 and row.path_to(s) == [s]
    assert row.reached == int(np.isfinite(row.dist).sum())
    assert np.all(row.pred[~np.isfinite(row.dist)] == -1)


def test_clicked_row_runs_the_frontier_kernels_without_a_gpu(rng, cpu, monkeypatch):
    """The Graphs workspace's click (``row_kernel``): the library's frontier kernels — their CUDA source on
    the host device without a GPU — up to HOST_ROW_ARCS arcs, equal to scipy's row; scipy beyond."""
    from kernels.graphs.algorithms import frontier
    g = random_graph(rng)
    s = int(rng.integers(g.n))
    assert frontier.row_kernel(g, cpu)
    ov = overlay_values(g, "distance", source=s, backend=cpu, kernel=frontier.row_kernel(g, cpu))
    ref = distance_from(g, s, kernel=False)
    assert ov.backend == "host" and ref.backend == "cpu"
    want = ref.dist.copy()
    want[~np.isfinite(want)] = np.nan
    assert np.array_equal(ov.values, want, equal_nan=True)
    monkeypatch.setattr(frontier, "HOST_ROW_ARCS", g.csr().arcs - 1)
    assert not frontier.row_kernel(g, cpu)


def test_tree_depth_by_pointer_jumping(rng):
    n = int(rng.integers(50, 400))
    parent = np.array([-1] + [int(rng.integers(0, v)) for v in range(1, n)])   # a random tree rooted at 0
    cut = rng.random(n) < 0.05                                                   # detach a few subtrees
    cut[0] = False
    parent[cut] = -1
    want = np.full(n, np.inf)
    for v in range(n):
        d, u = 0, v
        while parent[u] >= 0:
            u, d = parent[u], d + 1
        if u == 0:
            want[v] = d
    assert np.array_equal(tree_depth(parent, 0), want)


def test_eccentricity_from_apsp_equals_networkx(rng):
    for weights in ("none", "int"):
        g = random_graph(rng, int(rng.integers(20, 80)))
        if weights == "int":
            g = G.with_weights(g, "int", seed=int(rng.integers(1 << 31)))
        H = nx_graph(g)
        res = apsp(g, "cpu")
        ov = overlay_values(g, "eccentricity", apsp=res)
        want = []
        for v in range(g.n):
            d = (nx.single_source_dijkstra_path_length(H, v) if g.weighted
                 else nx.single_source_shortest_path_length(H, v))
            want.append(max(d.values()))
        assert np.array_equal(ov.values, want)
        assert ov.label == ("eccentricity (weights)" if g.weighted else "eccentricity (hops)")
        assert ov.integer == (not g.weighted)


def test_bad_requests_are_refused(rng):
    g = random_graph(rng)
    with pytest.raises(InvalidParameter, match="degree, clustering, component, distance, eccentricity"):
        overlay_values(g, "pagerank")
    with pytest.raises(InvalidParameter, match="source"):
        overlay_values(g, "distance")
    with pytest.raises(InvalidParameter, match=f"0 … {g.n - 1}"):
        overlay_values(g, "distance", source=g.n)
    with pytest.raises(InvalidParameter, match="APSP"):
        overlay_values(g, "eccentricity")
    full = apsp(g, "cpu")
    part = APSPResult(full.dist[:2], "cpu", 0.0, 0.0)          # two rows only (as with --sources)
    with pytest.raises(InvalidParameter, match="rows"):
        overlay_values(g, "eccentricity", apsp=part)
    w = np.ones(g.m, np.float32)
    w[int(rng.integers(g.m))] = -1.0
    with pytest.raises(InvalidParameter, match="≥ 0"):
        distance_from(Graph(g.n, g.edges, w), 0)


def test_clustering_reuses_given_values(rng):
    g = random_graph(rng)
    cc = rng.random(g.n)
    assert np.array_equal(overlay_values(g, "clustering", local_cc=cc).values, cc)
    with pytest.raises(InvalidParameter, match="shape"):
        overlay_values(g, "clustering", local_cc=cc[:-1])


# ------------------------------------------------------------------ picking grid
def brute_nearest(pos, x, y, r):
    q = pos.astype(np.float64)
    d2 = (q[:, 0] - x) ** 2 + (q[:, 1] - y) ** 2
    ok = np.flatnonzero(d2 <= r * r)
    if ok.size == 0:
        return None
    return int(ok[np.argmin(d2[ok])])                  # argmin: the first (smallest id) of equal minima


def test_spatial_index_equals_brute_force(rng):
    for _ in range(3):
        n = int(rng.integers(1, 3000))
        pos = (rng.normal(size=(n, 2)) * rng.uniform(0.01, 100)).astype(np.float32)
        dup = rng.integers(0, n, size=n // 5)           # repeated positions: ties broken by the id
        pos[rng.integers(0, n, size=dup.size)] = pos[dup]
        idx = SpatialIndex(pos)
        span = float(np.ptp(pos)) if n > 1 else 1.0
        for _ in range(300):
            if rng.random() < 0.5:                      # on or near a vertex, or anywhere (outside too)
                x, y = pos[int(rng.integers(n))].astype(np.float64) + rng.normal(size=2) * span * 1e-3
            else:
                x, y = rng.uniform(pos.min() - span, pos.max() + span, size=2)
            r = span * float(rng.choice([1e-4, 1e-2, 0.1, 2.0]))
            assert idx.nearest(x, y, r) == brute_nearest(pos, x, y, r)


def test_spatial_index_update_and_edge_cases(rng):
    pos = rng.random((500, 2)).astype(np.float32)
    idx = SpatialIndex(pos)
    new = (rng.random((800, 2)) * 3 - 1).astype(np.float32)
    idx.update(new)
    for _ in range(100):
        x, y = rng.uniform(-1.5, 2.5, size=2)
        assert idx.nearest(x, y, 0.2) == brute_nearest(new, x, y, 0.2)
    same = np.full((40, 2), 3.5, np.float32)            # one point, 40 times: the smallest id wins
    assert SpatialIndex(same).nearest(3.5, 3.5, 0.0) == 0
    assert SpatialIndex(np.zeros((0, 2), np.float32)).nearest(0, 0, 1) is None
    assert SpatialIndex(pos).nearest(math.nan, 0, 1) is None
    with pytest.raises(InvalidParameter):
        SpatialIndex(np.zeros((3, 3)))
    with pytest.raises(InvalidParameter):
        SpatialIndex(np.array([[0, np.inf]]))
