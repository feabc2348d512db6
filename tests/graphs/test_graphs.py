"""Graph kernels on the CPU: generators, layouts, clustering (paper 001), APSP references, stats."""
import networkx as nx
import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import apsp, hop_dtype, sentinel, shortest_path
from kernels.graphs.apsp.fw import dense_matrix, fw_cpu, tile_by_model
from kernels.graphs.algorithms.clustering import (clustering_arcs_reference, global_clustering, local_clustering,
                                       ring_lattice_clustering)
from kernels.graphs.data.graph import PackedInt4, from_networkx, load_graph, save_graph, to_networkx
from kernels.graphs.data.stats import loglog_slope, normalised_times, path_length_histogram, summary


def fresh(rng, kind="ba"):
    seed = int(rng.integers(1 << 31))
    n = int(rng.integers(60, 220))
    return {"ba": lambda: G.barabasi_albert(n, int(rng.integers(1, 5)), seed),
            "ws": lambda: G.watts_strogatz(n, 2 * int(rng.integers(1, 5)), float(rng.random()) * 0.5, seed),
            "er": lambda: G.erdos_renyi(n, 3.0 / n, seed),            # usually disconnected
            "spatial": lambda: G.spatial(n, 6.0, None, seed),
            "alpha": lambda: G.watts_alpha(n, 6, 1.0, 1e-3, bool(rng.integers(2)), seed)}[kind]()


def nxg(g):
    H = nx.Graph()
    H.add_nodes_from(range(g.n))
    H.add_edges_from(map(tuple, g.edges.tolist()))
    return H


@pytest.mark.parametrize("kind", ["ba", "ws", "er", "spatial", "alpha"])
def test_generators_are_simple_seeded_and_reproducible(kind, rng):
    seed = int(rng.integers(1 << 31))
    make = {"ba": lambda s: G.barabasi_albert(300, 3, s), "ws": lambda s: G.watts_strogatz(300, 6, 0.2, s),
            "er": lambda s: G.erdos_renyi(300, 0.02, s), "spatial": lambda s: G.spatial(300, 6, None, s),
            "alpha": lambda s: G.watts_alpha(300, 6, 1.0, 1e-3, True, s)}[kind]
    a, b, c = make(seed), make(seed), make(seed + 1)
    assert np.array_equal(a.edges, b.edges) and not np.array_equal(a.edges, c.edges)
    e = a.edges
    assert (e[:, 0] < e[:, 1]).all() and e.min() >= 0 and e.max() < a.n
    assert np.unique(e[:, 0].astype(np.int64) * a.n + e[:, 1]).size == a.m


@pytest.mark.parametrize("kind", G.GENERATORS)
def test_uses_lists_exactly_the_arguments_a_generator_reads(kind, rng):
    """generators.USES drives which controls the GUI greys out: changing an argument it lists must
    change the graph, changing one it omits must not."""
    base = dict(n=240, k=6, p=0.05, alpha=2.0, ring=True, seed=int(rng.integers(1 << 30)))
    other = dict(k=8, p=0.2, alpha=0.0, ring=False, seed=base["seed"] + 1)
    ref = G.generate(kind, **base)
    for key, value in other.items():
        g = G.generate(kind, **{**base, key: value})
        same = g.m == ref.m and np.array_equal(g.edges, ref.edges)
        assert same != (key in G.USES[kind]), (kind, key)
    assert set(G.K_MEANING) == {t for t, uses in G.USES.items() if "k" in uses}


def test_generator_shapes():
    assert G.ring_lattice(50, 6).m == 150 and (G.ring_lattice(50, 6).degrees() == 6).all()
    ws = G.watts_strogatz(1000, 10, 0.3, 1)
    assert abs(ws.m - 5000) < 60                      # rewiring keeps (almost) every edge
    ba = G.barabasi_albert(2000, 4, 1)
    assert nx.is_connected(nxg(ba)) and 3.8 < 2 * ba.m / ba.n <= 8.0
    assert ba.degrees().max() > 60                    # hubs
    a1 = G.watts_alpha(500, 10, 0.0, 0.0, True, 1)
    assert a1.m == 2500 and nx.is_connected(nxg(a1))  # ring substrate: connected, exactly n·k/2 edges
    er = G.erdos_renyi(2000, 0.005, 3)
    assert abs(er.m - 0.005 * 2000 * 1999 / 2) < 5 * np.sqrt(10000)
    sp = G.spatial(1000, None, 0.05, 2)
    d = np.linalg.norm(sp.positions[sp.edges[:, 0]] - sp.positions[sp.edges[:, 1]], axis=1) / 2
    assert (d < 0.05 + 1e-6).all()


@pytest.mark.slow
def test_large_n_generates_in_seconds():
    import time
    for make in (lambda: G.barabasi_albert(100_000, 5, 1), lambda: G.watts_strogatz(100_000, 10, 0.1, 1),
                 lambda: G.erdos_renyi(100_000, 1e-4, 1), lambda: G.spatial(100_000, 8, None, 1),
                 lambda: G.ring_lattice(100_000, 10)):
        t0 = time.perf_counter()
        g = make()
        assert g.n == 100_000 and time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize("args,needle", [
    ((G.ring_lattice, 10, 10), "k must be smaller"), ((G.ring_lattice, 10, 3), "even"),
    ((G.watts_strogatz, 100, 4, -0.1), "probability"), ((G.erdos_renyi, 100, 1.5), "probability"),
    ((G.barabasi_albert, 10, 10), "m < n"), ((G.spatial, 1, 4), "n must be")])
def test_bad_parameters_are_clear_errors(args, needle):
    with pytest.raises(InvalidParameter, match=needle):
        args[0](*args[1:])


def test_csr_int4_layouts_and_networkx_roundtrip(rng):
    g = fresh(rng, "ba")
    csr = g.csr()
    H = nxg(g)
    for v in range(g.n):
        assert sorted(H[v]) == csr.indices[csr.indptr[v]:csr.indptr[v + 1]].tolist()
    for with_len in (True, False):
        pk = PackedInt4.from_csr(csr, with_length=with_len)
        assert pk.arcs4.shape[1] == 4 and pk.arcs4.dtype == np.int32
        for v in range(g.n):
            assert pk.neighbours(v).tolist() == sorted(H[v])
            if with_len:
                assert pk.arcs4[pk.vertices[v, 0], 0] == len(H[v])
        deg = csr.degrees()
        assert (np.diff(deg[pk.sorted_vertices]) >= 0).all()
    back = from_networkx(to_networkx(g))
    assert np.array_equal(back.edges, g.edges)


def test_graph_file_roundtrip(tmp_path, rng):
    g = G.with_weights(fresh(rng, "ws"), seed=1)
    for name in ("g.graphml", "g.edgelist"):
        save_graph(g, tmp_path / name)
        h = load_graph(tmp_path / name)
        assert h.n == g.n and np.array_equal(h.edges, g.edges)
        assert np.allclose(h.weights, g.weights)
    with pytest.raises(InvalidParameter, match="cannot read"):
        load_graph(tmp_path / "missing.graphml")
    (tmp_path / "bad.graphml").write_text("<not xml")
    with pytest.raises(InvalidParameter, match="cannot read"):
        load_graph(tmp_path / "bad.graphml")


# ------------------------------------------------------------------ clustering (paper 001)
@pytest.mark.parametrize("kind", ["ba", "ws", "spatial", "er"])
def test_clustering_equals_networkx(kind, rng):
    g = fresh(rng, kind)
    H = nxg(g)
    assert global_clustering(g) == pytest.approx(nx.transitivity(H), abs=1e-12)
    lc = local_clustering(g)
    ref = nx.clustering(H)
    assert np.allclose(lc, [ref[v] for v in range(g.n)], atol=1e-12)
    csr = g.csr()
    t, p, c = clustering_arcs_reference(g.n, csr.sources(), csr.indices)
    assert c == pytest.approx(nx.transitivity(H), abs=1e-12)
    assert t == 2 * sum(nx.triangles(H).values()) // 3 and p == int((csr.degrees() * (csr.degrees() - 1)).sum())


def test_alg12_corrections_self_arcs_and_arc_order(rng):
    g = fresh(rng, "ws")
    csr = g.csr()
    src, dst = csr.sources(), csr.indices
    loops = rng.choice(g.n, 10, replace=False)
    src2 = np.concatenate([src, loops])
    dst2 = np.concatenate([dst, loops])
    perm = rng.permutation(src2.size)
    _, _, c = clustering_arcs_reference(g.n, src2[perm], dst2[perm])
    assert c == pytest.approx(nx.transitivity(nxg(g)), abs=1e-12)


@pytest.mark.parametrize("k", [4, 10, 50])
def test_ring_lattice_clustering_formula(k):
    g = G.ring_lattice(400, k)
    assert global_clustering(g) == pytest.approx(ring_lattice_clustering(k), abs=1e-12)
    assert np.allclose(local_clustering(g), ring_lattice_clustering(k))


def test_paper001_clustering_levels():
    assert global_clustering(G.watts_strogatz(4000, 50, 0.1, 1)) == pytest.approx(0.53, abs=0.02)
    assert global_clustering(G.barabasi_albert(20000, 25, 1)) < 0.02


# ------------------------------------------------------------------ APSP references
@pytest.mark.parametrize("kind", ["ba", "ws", "er", "spatial"])
def test_cpu_apsp_hops_equal_networkx(kind, rng):
    g = fresh(rng, kind)
    r = apsp(g, "cpu")
    assert r.dist.dtype == np.uint8
    top = sentinel(r.dist.dtype)
    ref = dict(nx.all_pairs_shortest_path_length(nxg(g)))
    want = np.full((g.n, g.n), top, dtype=np.int64)
    for s, row in ref.items():
        for t, d in row.items():
            want[s, t] = d
    assert np.array_equal(r.dist.astype(np.int64), want)
    s = summary(r.dist)
    if nx.is_connected(nxg(g)):
        assert s["mean_path_length"] == pytest.approx(nx.average_shortest_path_length(nxg(g)), rel=1e-12)
        assert s["diameter"] == nx.diameter(nxg(g)) and s["connected"]
    else:
        assert not s["connected"] and s["reachable_fraction"] < 1


def test_weighted_cpu_apsp_and_numpy_floyd_warshall(rng):
    g = G.with_weights(fresh(rng, "er"), kind="float", seed=int(rng.integers(1000)))
    r = apsp(g, "cpu")
    d = fw_cpu(dense_matrix(g.csr()))
    assert np.allclose(r.dist, d, rtol=1e-5) and np.array_equal(np.isinf(r.dist), np.isinf(d))
    H = to_networkx(g)
    ref = dict(nx.all_pairs_dijkstra_path_length(H))
    for s in range(0, g.n, 17):
        for t, v in ref[s].items():
            assert r.dist[s, t] == pytest.approx(v, rel=1e-5)


def test_hop_dtype_grows_with_diameter():
    assert hop_dtype(G.barabasi_albert(1000, 3, 1).csr()) == np.uint8
    assert hop_dtype(G.ring_lattice(2000, 2).csr()) == np.uint16
    r = apsp(G.ring_lattice(1200, 2), "cpu")
    assert r.dist.dtype == np.uint16 and summary(r.dist)["diameter"] == 600


def test_shortest_path_reconstruction(rng):
    g = fresh(rng, "spatial")
    r = apsp(g, "cpu")
    H = nxg(g)
    for _ in range(10):
        s, t = rng.integers(g.n, size=2)
        path = shortest_path(g, r.dist[s], int(s), int(t))
        if r.dist[s, t] == sentinel(r.dist.dtype):
            assert path == []
        else:
            assert path[0] == s and path[-1] == t and len(path) - 1 == r.dist[s, t]
            assert all(H.has_edge(a, b) for a, b in zip(path, path[1:]))


def test_stats_helpers():
    d = np.array([[0, 1, 255], [1, 0, 255], [255, 255, 0]], dtype=np.uint8)
    assert path_length_histogram(d).tolist() == [0, 2]
    assert normalised_times([2.0, 4.0], [1.0, 3.0]).tolist() == [4.0, 8.0 / 3.0]
    assert loglog_slope([10, 100, 1000], [1, 10, 100]) == pytest.approx(1.0)
    assert tile_by_model(4096) in (32, 64)


def test_unknown_method_and_gpu_only_methods_on_cpu(rng):
    from kernels.backend import Backend
    from kernels.graphs.apsp import METHODS
    g = fresh(rng, "ba")
    with pytest.raises(InvalidParameter, match="unknown APSP method"):
        apsp(g, "dijkstra")
    cpu = Backend("cpu", np)
    # a CUDA method runs its CUDA source on the CPU (issue 33): the reference's hop counts
    assert np.array_equal(apsp(g, "gpu-bfs", backend=cpu).dist, apsp(g, "cpu").dist)
    gpu_only = [m for m, c in METHODS.items() if not c.available(cpu)]
    for m in gpu_only[:1]:                         # any method still without a host path says so
        with pytest.raises(InvalidParameter, match="needs the GPU"):
            apsp(g, m, backend=cpu)
