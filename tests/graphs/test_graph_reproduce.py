"""Paper 000's sweep runner (kernels.graphs.experiments.reproduce)."""
import numpy as np
import pytest

from kernels.backend import Backend
from kernels.errors import InvalidParameter
from kernels.graphs.experiments import reproduce as rp


@pytest.fixture
def cpu():
    return Backend("cpu", np)


def test_sweep_rows_fit_and_normalisation(cpu, tmp_path):
    rows = list(rp.run_sweep(["alpha-ring", "ba"], [200, 400, 800], instances=2, backend=cpu))
    assert len(rows) == 12 and {r.type for r in rows} == {"alpha-ring", "ba"}
    fits = rp.fit_exponents(rows)
    # ring substrate without shortcuts: a big world, path ∝ N (paper 0.995); BA: small world
    assert 0.8 < fits["alpha-ring"] < 1.1, fits
    assert 0.0 < fits["ba"] < 0.35, fits
    norm = rp.normalised(rows)
    for (t, n) in {(r.type, r.n) for r in rows}:
        idx = [i for i, r in enumerate(rows) if (r.type, r.n) == (t, n)]
        # Eq. 3 keeps the group's mean time when APSP values are equal, and rescales each t_i
        L = np.array([rows[i].mean_path_length for i in idx])
        t_ = np.array([rows[i].seconds for i in idx])
        np.testing.assert_allclose([norm[i] for i in idx], t_ / L * L.mean())
    rp.FIG14.to_csv(rows, tmp_path / "s.csv")
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert len(lines) == 13 and lines[0].startswith("type,n,instance")


def test_sweep_is_reproducible_and_cancellable(cpu):
    a = [r.mean_path_length for r in rp.run_sweep(["ba"], [100, 200], 2, backend=cpu, seed0=5)]
    b = [r.mean_path_length for r in rp.run_sweep(["ba"], [100, 200], 2, backend=cpu, seed0=5)]
    assert a == b
    calls = []
    rows = list(rp.run_sweep(["ba"], [100, 200], 3, backend=cpu, cancel=lambda: calls.append(1) or len(calls) > 2))
    assert len(rows) == 2


def test_sweep_refuses_bad_input(cpu):
    with pytest.raises(InvalidParameter):
        list(rp.run_sweep(["nope"], [100, 200], backend=cpu))
    with pytest.raises(InvalidParameter):
        list(rp.run_sweep(["ba"], [5, 10], backend=cpu))


def test_clustering_levels_match_paper_001():
    lv = rp.clustering_levels(n_ws=4000, n_ba=4000)
    assert lv["ws"][0] == pytest.approx(0.53, abs=0.02)
    assert 0.005 < lv["ba"][0] < 0.05


def test_sampled_mean_path_is_exact_with_all_sources_and_close_with_few():
    from kernels.graphs.data import generators as G
    from kernels.graphs.apsp import apsp
    from kernels.graphs.data.stats import sampled_summary, summary
    seed = int(np.random.default_rng().integers(1 << 30))
    g = G.barabasi_albert(600, 3, seed)
    full = summary(apsp(g, "cpu").dist)
    every = sampled_summary(g, sources=g.n, seed=seed)
    assert every["mean_path_length"] == pytest.approx(full["mean_path_length"], rel=1e-12)
    assert every["diameter"] == full["diameter"] and every["connected"] == full["connected"]
    few = sampled_summary(g, sources=64, seed=seed)
    assert few["sources"] == 64 and few["diameter"] <= full["diameter"]
    # 64 × 599 distances: the estimate's relative error is ~1 % (std ≈ 0.7 / L / sqrt(64))
    assert few["mean_path_length"] == pytest.approx(full["mean_path_length"], rel=0.05)


def test_sampled_sweep_rows_and_refusal():
    rows = list(rp.run_sweep(["ba"], [300, 600], instances=1, method="cpu-sampled", sources=32))
    assert [r.method for r in rows] == ["cpu-sampled"] * 2 and all(r.mean_path_length > 1 for r in rows)
    with pytest.raises(InvalidParameter, match="sources"):
        list(rp.run_sweep(["ba"], [300, 600], method="cpu-sampled", sources=1))


# --- largest component, sampled clustering, giant connectivity, α-model overrides -----------------

def _fresh_seed():
    return int(np.random.default_rng().integers(1 << 30))


@pytest.mark.parametrize("trial", range(3))
def test_largest_component_matches_networkx(trial):
    import networkx as nx
    from kernels.graphs.data import generators as G
    from kernels.graphs.data.graph import largest_component, to_networkx
    seed = _fresh_seed()
    g = G.with_weights(G.erdos_renyi(400, 2.0 / 400, seed), "int", seed=seed)   # mean degree 2: disconnected
    H = to_networkx(g)
    S = sorted(max(nx.connected_components(H), key=len))
    sub, frac = largest_component(g)
    assert 1 < len(S) < g.n, seed
    assert sub.n == len(S) and frac == pytest.approx(len(S) / g.n, abs=1e-15)
    relabel = {old: new for new, old in enumerate(S)}                   # order-preserving
    want = {(relabel[u], relabel[v]) for u, v in H.subgraph(S).edges()}
    want = {(min(e), max(e)) for e in want}
    got = [tuple(e) for e in sub.edges.tolist()]
    assert set(got) == want and len(got) == len(want) == sub.m
    assert got == sorted(got) and all(u < v for u, v in got)            # Graph's edge invariants kept
    Hs = to_networkx(sub)
    assert nx.is_connected(Hs)
    wmap = {(relabel[u], relabel[v]): d["weight"] for u, v, d in H.subgraph(S).edges(data=True)}
    for (u, v), w in zip(got, sub.weights.tolist()):
        assert w == wmap.get((u, v), wmap.get((v, u)))
    # a connected graph is returned as it is
    ba = G.barabasi_albert(300, 2, seed)
    same, f = largest_component(ba)
    assert same is ba and f == 1.0


def test_largest_component_keeps_positions():
    from kernels.graphs.data.graph import Graph, largest_component
    pos = np.arange(12, dtype=np.float32).reshape(6, 2)
    g = Graph(6, np.array([[0, 1], [3, 4], [3, 5], [4, 5]], np.int32), positions=pos)
    sub, frac = largest_component(g)
    assert sub.n == 3 and frac == 0.5
    assert sub.edges.tolist() == [[0, 1], [0, 2], [1, 2]]
    np.testing.assert_array_equal(sub.positions, pos[3:])


@pytest.mark.parametrize("kind", ["ws", "ba", "alpha"])
def test_sampled_clustering_is_close_to_exact(kind):
    from kernels.graphs.data import generators as G
    from kernels.graphs.algorithms.clustering import global_clustering, sampled_clustering
    seed = _fresh_seed()
    g = {"ws": lambda: G.watts_strogatz(3000, 10, 0.1, seed),
         "ba": lambda: G.barabasi_albert(3000, 5, seed),
         "alpha": lambda: G.watts_alpha(3000, seed=seed, **rp.alpha_params("alpha"))}[kind]()
    exact = global_clustering(g)
    wedges = 20000
    est = sampled_clustering(g, wedges=wedges, seed=seed + 1)
    se = np.sqrt(exact * (1 - exact) / wedges)
    assert abs(est - exact) <= 4 * se + 1e-12, (kind, seed, est, exact)
    # more wedges shrink the error (standard error / sqrt(10))
    assert abs(sampled_clustering(g, wedges=200000, seed=seed + 3) - exact) <= 4 * se / np.sqrt(10) + 1e-12


def test_sampled_clustering_edge_cases():
    from kernels.graphs.algorithms.clustering import sampled_clustering
    from kernels.graphs.data.graph import Graph
    matching = Graph(10, np.array([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]], np.int32))
    assert sampled_clustering(matching) == 0.0                      # no wedges at all
    star = Graph(6, np.array([[0, i] for i in range(1, 6)], np.int32))
    assert sampled_clustering(star, wedges=500) == 0.0              # wedges, none closed
    k5 = Graph(5, np.array([[i, j] for i in range(5) for j in range(i + 1, 5)], np.int32))
    assert sampled_clustering(k5, wedges=500) == 1.0                # every wedge closed


def test_giant_connectivity_analyses_the_largest_component():
    import networkx as nx
    from kernels.graphs.data import generators as G
    from kernels.graphs.data.graph import to_networkx
    ov = {"k": 2, "p": 1.0}                        # α-model set 2 with mean degree 2: disconnected
    rows = list(rp.run_sweep(["alpha", "ba"], [150, 300], instances=2, seed0=_fresh_seed() % 1000,
                             connectivity="giant", params={"alpha": ov}))
    assert len(rows) == 8 and all(0 < r.giant_fraction <= 1 for r in rows)
    a = [r for r in rows if r.type == "alpha"]
    assert any(r.giant_fraction < 1 for r in a)
    for r in a:
        H = to_networkx(G.watts_alpha(r.n, seed=r.seed, **rp.alpha_params("alpha", ov)))
        big = H.subgraph(max(nx.connected_components(H), key=len))
        assert r.regenerated == 0 and r.m == big.number_of_edges()
        assert r.giant_fraction == pytest.approx(big.number_of_nodes() / r.n, abs=1e-15)
        assert r.mean_path_length == pytest.approx(nx.average_shortest_path_length(big), rel=1e-12)
        assert r.diameter == nx.diameter(big)
        assert r.clustering == pytest.approx(nx.transitivity(big), abs=1e-12)
    # connected BA: the whole graph, the same numbers as with redraw
    b = [r for r in rows if r.type == "ba"]
    assert all(r.giant_fraction == 1.0 for r in b)
    seed0 = b[0].seed
    red = list(rp.run_sweep(["ba"], [150, 300], instances=2, seed0=seed0, connectivity="redraw"))
    assert [r.mean_path_length for r in red] == [r.mean_path_length for r in b]


def test_alpha_params_merge_and_refusals():
    from kernels.graphs.data import generators as G
    before = {k: dict(v) for k, v in G.ALPHA_SETS.items()}
    assert rp.alpha_params("alpha-ring") == G.ALPHA_SETS[1] and rp.alpha_params("alpha") == G.ALPHA_SETS[2]
    assert rp.alpha_params("alpha", {"p": 0.5}) == dict(G.ALPHA_SETS[2], p=0.5)
    assert rp.alpha_params("alpha-ring", {"alpha": 2.0, "k": 6}) == dict(G.ALPHA_SETS[1], alpha=2.0, k=6)
    assert G.ALPHA_SETS == before                                    # the paper sets are not mutated
    for bad in ({"q": 1}, {"ring": False}, {"p": 1.5}, {"p": -0.1}, {"alpha": -1.0}):
        with pytest.raises(InvalidParameter):
            rp.alpha_params("alpha", bad)
    # refused before any work: the cancel hook (asked before each draw) is never reached
    for bad in ({"alpha": {"p": 2.0}}, {"alpha-ring": {"alpha": -1}}, {"alpha": {"bogus": 1}}):
        asked = []
        with pytest.raises(InvalidParameter):
            list(rp.run_sweep(["ba", "alpha-ring", "alpha"], [100, 200], cancel=lambda: asked.append(1) or False,
                              params=bad))
        assert asked == []
    # overrides change the generated graphs (p = 1: random links, clustering collapses)
    kw = dict(instances=1, method="cpu-sampled", seed0=3)
    base = list(rp.run_sweep(["alpha"], [300, 600], **kw))
    over = list(rp.run_sweep(["alpha"], [300, 600], params={"alpha": {"p": 1.0}}, **kw))
    assert all(o.clustering < 0.6 * b.clustering for b, o in zip(base, over))


def test_mean_clustering_skips_unmeasured():
    def row(t, c):
        return rp.SweepRow(t, 100, 0, 1, 10, 2.0, 3, "cpu", 0.1, clustering=c)
    rows = [row("ba", 0.2), row("ba", 0.4), row("ba", float("nan")), row("alpha", float("nan")),
            row("alpha-ring", 0.5)]
    assert rp.mean_clustering(rows) == pytest.approx({"ba": 0.3, "alpha-ring": 0.5})
    assert rp.mean_clustering([]) == {}
    swept = list(rp.run_sweep(["ba"], [100, 200], instances=2, clustering=False))
    assert all(np.isnan(r.clustering) for r in swept) and rp.mean_clustering(swept) == {}


def _maker(connected_from: int, log: list):
    """A maker whose draws are disconnected (two rings) for seeds below ``connected_from``."""
    from kernels.graphs.data import generators as G
    from kernels.graphs.data.graph import Graph

    def make(n, seed, cancel=None):
        log.append(seed)
        if seed >= connected_from:
            return G.ring_lattice(n, 2)
        half = G.ring_lattice(n // 2, 2).edges
        return Graph(n, np.concatenate([half, half + n // 2]).astype(np.int32))
    return make


def test_draw_redraws_disconnected_instances_then_keeps_the_last():
    from kernels.graphs.data.graph import components
    s0 = _fresh_seed() % 1000
    log = []
    g, used, redraws, frac = rp.draw(_maker(s0 + 3, log), 40, s0)
    assert (used, redraws, frac) == (s0 + 3, 3, 1.0) and log == [s0, s0 + 1, s0 + 2, s0 + 3]
    assert components(g)[0] == 1
    log = []
    g, used, redraws, _ = rp.draw(_maker(s0 + 50, log), 40, s0, max_redraws=4, step=7)
    assert (used, redraws) == (s0 + 28, 4) and components(g)[0] == 2      # limit reached: last draw kept
    log = []
    g, used, redraws, frac = rp.draw(_maker(s0 + 50, log), 40, s0, connectivity="giant")
    assert (g.n, used, redraws, frac, len(log)) == (20, s0, 0, 0.5, 1)
    assert rp.draw(_maker(s0 + 50, []), 40, s0, cancel=lambda: True) is None


def test_sweep_runs_apsp_only_on_the_draw_it_keeps(cpu, monkeypatch):
    calls = []
    real = rp.apsp
    monkeypatch.setattr(rp, "apsp", lambda g, *a, **k: calls.append(g.n) or real(g, *a, **k))
    log = []
    monkeypatch.setattr(rp, "graph_type", lambda t, params=None, **k: _maker(7, log))
    rows = list(rp.run_sweep(["alpha"], [40, 60], instances=2, backend=cpu, seed0=3, clustering=False))
    assert [r.regenerated for r in rows] == [4, 0, 4, 0] and [r.seed for r in rows] == [7, 8, 7, 8]
    assert calls == [40, 40, 60, 60] and all(r.mean_path_length > 0 for r in rows)


@pytest.mark.parametrize("reference", rp.REFERENCES)
def test_cpu_reference_is_timed_on_the_same_graph_and_agrees(cpu, reference, tmp_path, monkeypatch):
    seed0 = _fresh_seed() % 1000
    rows = list(rp.run_sweep(["alpha-ring", "ba"], [150, 300], instances=2, backend=cpu, seed0=seed0,
                             clustering=False, reference=reference))
    assert all(r.ref_method == reference and r.ref_seconds > 0 and r.ref_agrees is True for r in rows)
    sp = rp.speedups(rows)
    assert set(sp) == {(t, n) for t in ("alpha-ring", "ba") for n in (150, 300)}
    r0 = [r for r in rows if (r.type, r.n) == ("ba", 300)]
    assert sp[("ba", 300)] == pytest.approx(np.mean([r.ref_seconds for r in r0]) / np.mean([r.seconds for r in r0]))
    rp.FIG14.to_csv(rows, tmp_path / "s.csv")
    head, first = (tmp_path / "s.csv").read_text().splitlines()[:2]
    assert head.endswith("ref_method,ref_seconds,ref_agrees") and first.endswith("True")
    # a reference that disagrees is reported, and sampled rows are not compared
    monkeypatch.setattr(rp, "reference_apsp", lambda g, ref: (0.5, 1e9))
    bad = list(rp.run_sweep(["ba"], [150, 300], instances=1, backend=cpu, clustering=False, reference=reference))
    assert [r.ref_agrees for r in bad] == [False, False]
    smp = list(rp.run_sweep(["ba"], [150, 300], instances=1, method="cpu-sampled", backend=cpu,
                            clustering=False, reference=reference))
    assert [r.ref_agrees for r in smp] == [None, None] and all(r.ref_seconds == 0.5 for r in smp)


def test_reference_refusals_and_floyd_equals_bfs():
    with pytest.raises(InvalidParameter, match="unknown CPU reference"):
        next(rp.run_sweep(["ba"], [150, 300], reference="gpu-bfs"))
    with pytest.raises(InvalidParameter, match="O\\(N³\\)"):
        next(rp.run_sweep(["ba"], [150, rp.FLOYD_MAX_N + 1], reference="cpu-floyd"))
    assert rp.check_reference(None, [100]) is None and rp.check_reference("", [100]) is None
    from kernels.graphs.data import generators as G
    g = G.erdos_renyi(200, 0.012, _fresh_seed())                    # disconnected: reachable pairs only
    assert rp.reference_apsp(g, "cpu-floyd")[1] == pytest.approx(rp.reference_apsp(g, "cpu")[1], rel=1e-12)


def test_host_refusal_is_decided_from_n_without_generating(cpu, monkeypatch):
    """check_host refuses a host-emulated method at a large N from N alone (the generators are
    never called), names the limit, and still generates and accepts a lecture-sized sweep."""
    def boom(*a, **k):
        raise AssertionError("check_host generated a graph")
    monkeypatch.setattr(rp, "graph_type", lambda *a, **k: boom)
    for method in ("gpu-bfs", "gpu-bfs-k3", "sssp", "multi-bfs"):
        with pytest.raises(InvalidParameter, match=r"^type alpha-ring, N = 40,000: .*the limit is 30 s"):
            rp.check_host(["alpha-ring", "alpha", "ba"], [20000, 40000], method, cpu)
    with pytest.raises(AssertionError, match="generated a graph"):      # a small N needs the graph
        rp.check_host(["ba"], [60], "gpu-bfs", cpu)
    monkeypatch.undo()
    rp.check_host(["alpha-ring", "alpha", "ba"], [60, 200], "gpu-bfs", cpu)        # accepted, as before
    rp.check_host(["ba"], [20000], "cpu", cpu)                  # not emulated: no estimate at all


def test_host_bound_is_below_the_estimate_on_real_graphs(cpu, rng):
    """host_bound_graph's estimate never exceeds the method's estimate on a generated graph of the
    same N (fresh seeds), so the early refusal refuses nothing the full estimate would accept."""
    from kernels.graphs.apsp import METHODS
    from kernels.graphs.cuda import HostRunnable
    n = int(rng.integers(200, 600))
    graphs = [rp.graph_type(t)(n, int(rng.integers(1 << 30))).csr() for t in ("alpha-ring", "alpha", "ba")]
    bound = rp.host_bound_graph(n)
    checked = 0
    for name in METHODS:
        runner = METHODS[name]()
        if isinstance(runner, HostRunnable) and rp.emulated(name, cpu):
            checked += 1
            for csr in graphs:
                assert runner.host_seconds(bound) <= runner.host_seconds(csr), (name, csr.n)
    assert checked >= 10


def test_host_refusal_between_bound_and_estimate_uses_the_graph(cpu):
    """N = 4 000 with multi-sssp: the bound (about 16 s) passes, the estimate on the generated α-model
    graph does not — refused with the method's own message, as before."""
    with pytest.raises(InvalidParameter, match=r"^type alpha, N = 4,000: multi-sssp runs its CUDA source .* arcs would "
                                               r"take about \d+ s; the limit is 30 s — about [\d,]+ sources"):
        rp.check_host(["alpha"], [4000], "multi-sssp", cpu)
