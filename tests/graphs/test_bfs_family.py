"""CPU side of the BFS / SSSP families: generators and digraphs, the compiled Dijkstra comparator,
path backtracking and reconstruction, option and memory refusals, the experiments' arithmetic."""
import numpy as np
import pytest

from kernels.errors import GridTooLarge, InvalidParameter
from kernels.graphs.experiments import bfs_evolution as E
from kernels.graphs.data import digraphs as D
from kernels.graphs.data import generators as G
from kernels.graphs.experiments import sssp_table as T
from kernels.graphs.apsp import METHODS, apsp
from kernels.graphs.data.graph import CSR, Graph
from kernels.graphs.apsp.paths import backtrack, is_shortest_path, path_cost, reconstruct

OURS = [f"gpu-bfs-k{k}" for k in range(1, 8)] + ["gpu-bfs", "gpu-msbfs", "sssp-harish", "sssp", "sssp-staged",
                                                   "sssp-path", "cpu-dijkstra"]


def scipy_rows(csr, weighted, sources=None):
    from scipy.sparse.csgraph import shortest_path
    return shortest_path(csr.to_scipy(weighted=weighted), method="D", directed=csr.directed,
                         unweighted=not weighted, indices=sources)


def test_registry_names_and_help():
    for m in OURS:
        cls = METHODS[m]
        assert cls.name == m and ("Paper 0" in cls.help or "MS-BFS" in cls.help)
        assert cls.negative_weights is False
    assert METHODS["gpu-bfs"].hops_only and not METHODS["sssp-path"].hops_only
    assert not METHODS["cpu-dijkstra"].gpu


@pytest.mark.parametrize("kind", ["random", "rmat", "complete"])
def test_new_generators_are_seeded_simple_graphs(rng, kind):
    n, seed = int(rng.integers(50, 400)), int(rng.integers(1 << 30))
    a = G.generate(kind, n, k=4, ring=bool(rng.integers(2)), seed=seed)
    b = G.generate(kind, n, k=4, ring=a.params.get("cycle", True), seed=seed)
    assert np.array_equal(a.edges, b.edges)
    e = a.edges
    assert (e[:, 0] < e[:, 1]).all() and np.unique(e[:, 0].astype(np.int64) * n + e[:, 1]).size == a.m
    want = n * (n - 1) // 2 if kind == "complete" else round(n * 4 / 2)
    assert a.m == want
    assert set(G.USES[kind]) <= {"k", "ring", "seed", "p", "alpha"} and kind in G.LABELS


def test_dimacs_cycle_connects_and_rmat_is_skewed(rng):
    from kernels.graphs.data.graph import components
    g = G.dimacs_random(500, 2.2, True, int(rng.integers(99)))
    assert components(g)[0] == 1
    r = G.rmat(4096, 8, int(rng.integers(99)))
    d = r.degrees()
    assert d.max() > 5 * d.mean()                       # heavy tail (G(n, p) at mean 8: max ≈ 20)
    with pytest.raises(InvalidParameter):
        G.complete(G.COMPLETE_MAX_N + 1)
    with pytest.raises(InvalidParameter):
        G.rmat(100, 200)


def test_digraphs(rng):
    n, arcs, seed = int(rng.integers(100, 500)), 0, int(rng.integers(99))
    arcs = 3 * n
    for csr in (D.random_digraph(n, arcs, 50, True, seed), D.rmat_digraph(n, arcs, 50, seed)):
        assert csr.directed and csr.arcs == arcs
        src = csr.sources()
        assert (src != csr.indices).all()
        assert np.unique(src.astype(np.int64) * n + csr.indices).size == arcs
        assert csr.weights.min() >= 1 and csr.weights.max() <= 50 and np.all(csr.weights % 1 == 0)
    ring = D.ring_digraph(n)
    assert (ring.degrees() == 1).all() and ring.weights is None
    d = scipy_rows(ring, False, [0])[0]
    assert d[n - 1] == n - 1                            # one way round
    assert D.complete_digraph(30).arcs == 30 * 29
    st = D.outdegree_stats(D.thesis_graph("powerlaw", seed=seed))
    assert abs(st["mean"] - 16384 / 4677) < 1e-9 and st["max"] > 200 and st["below3"] > 0.7
    rev = D.random_digraph(n, arcs, 9, False, seed).reversed()
    fwd = D.random_digraph(n, arcs, 9, False, seed)
    assert np.allclose(scipy_rows(rev, True).T, scipy_rows(fwd, True))


def with_isolated(g, extra):
    return Graph(g.n + extra, g.edges, g.weights)


@pytest.mark.parametrize("weighted", [True, False])
def test_cpu_dijkstra_equals_scipy(rng, weighted):
    seed = int(rng.integers(99))
    graphs = [with_isolated(G.erdos_renyi(300, 1.2 / 300, seed), 4).csr(),          # disconnected
              G.barabasi_albert(250, 3, seed).csr(), G.dimacs_random(200, 3, False, seed).csr(),
              D.random_digraph(300, 900, None, False, seed), D.rmat_digraph(256, 800, None, seed)]
    for csr in graphs:
        if weighted:
            csr = CSR(csr.n, csr.indptr, csr.indices, rng.integers(1, 1000, csr.arcs).astype(np.float32),
                      csr.directed)
            if not csr.directed:                        # keep the two arcs of an edge equal
                csr = Graph(csr.n, *G.canonical_edges(csr.sources(), csr.indices, csr.n, csr.weights)).csr()
        r = apsp(csr, "cpu-dijkstra", threads=int(rng.integers(1, 4)))
        ref = scipy_rows(csr, weighted)
        assert np.array_equal(r.as_float(), ref)
        src = rng.choice(csr.n, 5)
        assert np.array_equal(apsp(csr, "cpu-dijkstra", sources=src).as_float(), ref[src])


def test_backtracking_and_reconstruction(rng):
    from scipy.sparse.csgraph import shortest_path
    for csr in (D.random_digraph(200, 700, 30, False, int(rng.integers(99))),
                G.with_weights(with_isolated(G.erdos_renyi(150, 2 / 150, int(rng.integers(99))), 2), "int",
                               w_max=20, seed=1).csr()):
        d, p = shortest_path(csr.to_scipy(), method="D", directed=csr.directed, return_predecessors=True)
        p = np.where(p < 0, -1, p)
        for s in rng.choice(csr.n, 10, replace=False):
            for t in range(csr.n):
                path = backtrack(p[s], s, t)
                if np.isfinite(d[s, t]):
                    assert is_shortest_path(csr, path, s, t, d[s, t])
                    assert is_shortest_path(csr, reconstruct(csr, d, s, t), s, t, d[s, t])
                else:
                    assert path == [] and reconstruct(csr, d, s, t) == []
    bad = np.full(5, -1)
    bad[3], bad[2] = 2, 3                                # a cycle 3 → 2 → 3
    with pytest.raises(InvalidParameter):
        backtrack(bad, 0, 3)
    assert path_cost(D.ring_digraph(5), [0, 2]) is None  # not an arc


def test_sources_and_options_refused(rng):
    g = G.barabasi_albert(60, 2, 1)
    for bad in ([60], [-1], [1.5], ["a"], []):
        with pytest.raises(InvalidParameter):
            apsp(g, "cpu-dijkstra", sources=bad)
    assert g.csr().source_array([3.0]).tolist() == [3]
    for m, kw in (("sssp", dict(S=33)), ("sssp-staged", dict(S=1)), ("gpu-msbfs", dict(batch=96)),
                  ("gpu-bfs-k2", dict(batch=0)), ("gpu-bfs-k5", dict(block=48)), ("sssp-harish", dict(threads=20))):
        with pytest.raises(InvalidParameter):
            METHODS[m](**kw)


class TinyGPU:
    """A backend that claims a GPU with almost no free memory: nothing may reach the device."""

    is_gpu = True
    xp = None

    def free_memory(self):
        return 4096


def test_memory_formula_refuses_before_gpu_work(rng):
    g = G.with_weights(G.barabasi_albert(500, 3, 1), "int", w_max=9, seed=1)
    for m in OURS:
        if METHODS[m].gpu:
            with pytest.raises(GridTooLarge, match=m):
                apsp(g, m, backend=TinyGPU(), weighted=not METHODS[m].hops_only)
    csr = g.csr()
    assert METHODS["sssp"](S=64).memory_bytes(csr, True) > METHODS["sssp"](S=32).memory_bytes(csr, True)
    # the thesis's element counts reproduce its limits on a 512 MB GPU (|E| = 4|V|): 1.2 M vs 10.7 M
    assert 1.2e6 <= T.largest_vertices("sssp-staged", T.PAPER_GPU_BYTES) < 1.3e6
    assert 10.7e6 <= T.largest_vertices("sssp-harish", T.PAPER_GPU_BYTES) < 11.5e6


def test_table_runner_on_the_cpu(tmp_path, rng):
    rows = list(T.run_table(methods=["cpu-dijkstra"], n=150, arcs=500, w_max=99, seed=int(rng.integers(99)),
                            max_sources={("cpu-dijkstra", "complete"): 30}))
    assert [r.topology for r in rows] == list(T.TOPOLOGIES) and all(r.agrees for r in rows)
    assert [r.scaled for r in rows] == [False, False, False, True]
    T.to_csv(rows, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().count("\n") == 5
    with pytest.raises(InvalidParameter, match="limit is 30 s"):    # the thesis's size on the host device
        list(T.run_table(methods=["sssp"], backend=None))


def row(t, n, k, s, mean=2.0, inst=0):
    return E.EvoRow(t, n, inst, 1, 0, k, 1, 256, s, 1, mean, True)


def test_evolution_arithmetic():
    rows = [row("ba", n, k, c * n ** 2) for n in (1000, 2000, 4000)
            for k, c in (("gpu-bfs-k1", 1.0), ("gpu-bfs-k2", 2.0), ("gpu-bfs-k5", 0.5), ("gpu-bfs-k7", 0.25))]
    fits = E.fit_slopes(rows)
    assert all(abs(v - 2.0) < 1e-9 for v in fits.values())
    pc = E.percent_changes(rows)
    assert pc["ba", "gpu-bfs-k2"] == pytest.approx((100.0, 100.0))
    assert pc["ba", "gpu-bfs-k7"] == pytest.approx((-50.0, -75.0))      # K7's parent is K5
    assert np.isnan(pc["ba", "gpu-bfs-k1"][0])
    assert E.effect_word(-10) == "faster" and E.effect_word(1) == "≈" and E.effect_word(5) == "slower"
    # Eq. 3: instances with a longer mean path are scaled down
    two = [row("ba", 1000, "gpu-bfs-k1", 2.0, 4.0, 0), row("ba", 1000, "gpu-bfs-k1", 1.0, 2.0, 1)]
    assert E.normalised(two) == pytest.approx([1.5, 1.5])
    with pytest.raises(InvalidParameter, match="unknown BFS kernel"):
        list(E.run_evolution(["ba"], [100, 200], ["gpu-bfs-k9"], backend=None))
    with pytest.raises(InvalidParameter):
        E.check_blocks([32, 40])


def test_host_memory_check_counts_only_the_chosen_rows(monkeypatch):
    import kernels.backend as kb
    monkeypatch.setattr(kb, "host_available_memory", lambda: 10 << 20)
    csr = D.random_digraph(3000, 9000, 50, True, 1)          # 3000² float32 = 36 MB > 8 MB
    with pytest.raises(GridTooLarge):
        apsp(csr, "cpu-dijkstra")
    r = apsp(csr, "cpu-dijkstra", sources=[0, 5])
    assert r.dist.shape == (2, 3000)
    assert np.array_equal(r.dist, scipy_rows(csr, True, [0, 5]).astype(np.float32))


def test_evolution_host_refusal_is_decided_from_n_without_generating(monkeypatch, rng):
    """bfs_evolution.check_host refuses a kernel at a large N from N alone (the generator is never
    called: the bound of reproduce.refuse_by_bound), and the bound never exceeds a kernel's estimate on
    a generated graph of the same N, so nothing the full estimate accepts is refused."""
    from kernels.backend import Backend
    from kernels.graphs.cuda import HostRunnable
    from kernels.graphs.experiments import reproduce as rp
    cpu = Backend("cpu", np)
    n = int(rng.integers(200, 500))
    graphs = [rp.graph_type(t)(n, int(rng.integers(1 << 30))).csr() for t in ("alpha-ring", "ba")]
    bound, checked = rp.host_bound_graph(n), 0
    for k in E.KERNELS:
        runner = METHODS[k](**E.options(k, 1, E.PAPER_BLOCK))
        if isinstance(runner, HostRunnable):
            checked += 1
            assert all(runner.host_seconds(bound) <= runner.host_seconds(g) for g in graphs), k
    assert checked >= 2

    def boom(*a, **k):
        raise AssertionError("check_host generated a graph")
    monkeypatch.setattr(rp, "graph_type", lambda *a, **k: boom)
    with pytest.raises(InvalidParameter, match=r"^type alpha-ring, N = 200,000: .*whatever the graph's arcs; "
                                               r"the limit is 30 s"):
        E.check_host(["alpha-ring", "ba"], [1000, 200_000], E.KERNELS[:1], cpu)
    with pytest.raises(AssertionError, match="generated a graph"):      # a small N needs the graph
        E.check_host(["ba"], [60], E.KERNELS[:1], cpu)
    monkeypatch.undo()
    E.check_host(["alpha-ring", "ba"], [60, 200], E.KERNELS, cpu)      # accepted, as before
