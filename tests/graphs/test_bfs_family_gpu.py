"""The BFS family (paper 000 kernels 1–7, compact kernel 7, MS-BFS) and the SSSP family (paper 004
ch. 3) on the GPU, against scipy on fresh random graphs of every family — disconnected ones and
isolated vertices included, undirected and directed; recorded paths checked step by step."""
import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.graphs.data import digraphs as D
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import DistanceOverflow, apsp
from kernels.graphs.data.graph import Graph, canonical_edges
from kernels.graphs.apsp.msbfs import apsp_msbfs
from kernels.graphs.apsp.paths import backtrack, is_shortest_path

pytestmark = pytest.mark.gpu

PAPER = [f"gpu-bfs-k{k}" for k in range(1, 8)]
BFS = PAPER + ["gpu-bfs", "gpu-msbfs"]
SSSP = ["sssp-harish", "sssp", "sssp-staged", "sssp-path"]


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import select
    return select("gpu")


def with_isolated(g: Graph, extra: int) -> Graph:
    """``g`` with ``extra`` vertices of degree 0 appended."""
    return Graph(g.n + extra, g.edges, g.weights, name=g.name + " + isolated")


def family(rng, kind: str, n: int) -> Graph:
    seed = int(rng.integers(1 << 31))
    return {"ba": lambda: G.barabasi_albert(n, int(rng.integers(1, 5)), seed),
            "ws": lambda: G.watts_strogatz(n, 2 * int(rng.integers(1, 4)), float(rng.random()) * 0.3, seed),
            "er": lambda: G.erdos_renyi(n, 1.5 / n, seed),                        # disconnected
            "alpha": lambda: G.watts_alpha(n, 6, 0.0, 1e-9, True, seed),
            "random": lambda: G.dimacs_random(n, 2.5, False, seed),              # disconnected
            "rmat": lambda: with_isolated(G.rmat(n, 3.0, seed), 5),               # isolated vertices
            "complete": lambda: G.complete(min(n, 60))}[kind]()


KINDS = ["ba", "ws", "er", "alpha", "random", "rmat", "complete"]


def scipy_rows(csr, weighted, sources=None):
    from scipy.sparse.csgraph import shortest_path
    return shortest_path(csr.to_scipy(weighted=weighted), method="D", directed=csr.directed,
                         unweighted=not weighted, indices=sources)


def hops_equal(res, csr, sources=None):
    ref = scipy_rows(csr, False, sources)
    d = res.as_float()
    return d.shape == ref.shape and np.array_equal(d, ref)


@pytest.mark.parametrize("kind", KINDS)
def test_every_bfs_kernel_equals_scipy(gpu, rng, kind):
    g = family(rng, kind, int(rng.integers(120, 260)))
    csr = g.csr()
    for m in BFS:
        r = apsp(g, m, backend=gpu)
        assert hops_equal(r, csr), f"{m} differs on {g.describe()}"
        assert r.method == m and r.launches > 0


@pytest.mark.parametrize("m", PAPER)
def test_paper_kernels_multi_source_and_blocks(gpu, rng, m):
    g = with_isolated(family(rng, "er", 300), 3)
    csr = g.csr()
    batch, block = int(rng.integers(2, 90)), int(rng.choice([32, 96, 256, 512]))
    r = apsp(g, m, backend=gpu, batch=batch, block=block)
    assert hops_equal(r, csr)
    src = rng.choice(g.n, 7, replace=False)
    r = apsp(g, m, backend=gpu, sources=src, batch=3)
    assert hops_equal(r, csr, src)


def test_bfs_kernels_on_directed_graphs(gpu, rng):
    n = int(rng.integers(150, 300))
    for csr in (D.random_digraph(n, 3 * n, None, False, int(rng.integers(99))),
                D.rmat_digraph(n, 3 * n, None, int(rng.integers(99))), D.ring_digraph(n)):
        assert csr.directed
        for m in BFS:
            kw = dict(batch=64) if m in PAPER else {}
            assert hops_equal(apsp(csr, m, backend=gpu, **kw), csr), f"{m} on a directed graph"
        src = rng.choice(n, 5, replace=False)
        assert hops_equal(apsp(csr, "gpu-msbfs", backend=gpu, sources=src), csr, src)


def test_msbfs_batches_blocks_and_dtypes(gpu, rng):
    g = with_isolated(family(rng, "ws", int(rng.integers(300, 700))), 2)
    csr = g.csr()
    for batch in (64, 192, 4096):                       # several batches, a ragged last one
        assert hops_equal(apsp_msbfs(csr, gpu, batch=batch), csr)
    assert hops_equal(apsp_msbfs(csr, gpu, batch=128, limit_bytes=1), csr)   # column-block mode
    assert hops_equal(apsp_msbfs(csr, gpu, dtype="uint32", batch=64), csr)
    ring = G.ring_lattice(700, 2)                       # diameter 350: uint16
    r = apsp(ring, "gpu-msbfs", backend=gpu)
    assert r.dist.dtype == np.uint16 and hops_equal(r, ring.csr())
    with pytest.raises(DistanceOverflow):
        apsp_msbfs(ring.csr(), gpu, dtype="uint8")


@pytest.mark.parametrize("kind", KINDS)
def test_every_sssp_method_equals_scipy_dijkstra(gpu, rng, kind):
    g = G.with_weights(family(rng, kind, int(rng.integers(100, 220))), "int",
                       w_max=int(rng.integers(1, 500)), seed=int(rng.integers(99)))
    csr = g.csr()
    ref = scipy_rows(csr, True).astype(np.float32)
    for m in SSSP:
        r = apsp(g, m, backend=gpu)
        assert r.dist.dtype == np.float32 and np.array_equal(r.dist, ref), f"{m} differs on {g.describe()}"
    hops = apsp(Graph(g.n, g.edges), "sssp-staged", backend=gpu)       # unweighted: hop counts
    assert hops_equal(hops, Graph(g.n, g.edges).csr())


def test_sssp_directed_thesis_topologies_and_options(gpu, rng):
    n = int(rng.integers(200, 400))
    for topo in D.TOPOLOGIES:
        csr = D.thesis_graph(topo, n, 4 * n, int(rng.integers(2, 5000)), int(rng.integers(99)))
        ref = scipy_rows(csr, True).astype(np.float32)
        for m, kw in (("sssp-harish", {}), ("sssp", dict(S=32)), ("sssp", dict(S=96)), ("sssp-staged", dict(S=32)),
                      ("sssp-staged", dict(S=64, threads=256)), ("sssp-path", {}), ("cpu-dijkstra", {})):
            r = apsp(csr, m, backend=gpu if m != "cpu-dijkstra" else None, **kw)
            assert np.array_equal(r.dist, ref), f"{m} {kw} differs on the {topo} digraph"


def test_staging_handles_degrees_above_32(gpu, rng):
    """Fig. 3.9 as printed stages only the first N edges; hubs of degree ≫ 32 must still be right."""
    n = 400
    ring = G.ring_lattice(n, 2).edges
    u = np.r_[np.zeros(n - 1, np.int64), ring[:, 0]]                 # a star (degree 399) + a ring
    v = np.r_[np.arange(1, n), ring[:, 1]]
    e, w = canonical_edges(u, v, n, rng.integers(1, 50, u.size).astype(np.float32))
    g = Graph(n, e, w)
    ref = scipy_rows(g.csr(), True).astype(np.float32)
    assert np.array_equal(apsp(g, "sssp-staged", backend=gpu).dist, ref)


def test_recorded_paths_are_shortest_paths(gpu, rng):
    for csr in (G.with_weights(with_isolated(family(rng, "er", 250), 3), "int", w_max=40,
                               seed=int(rng.integers(99))).csr(),
                D.random_digraph(300, 1200, 300, True, int(rng.integers(99))),
                D.rmat_digraph(300, 900, 1000, int(rng.integers(99)))):
        src = rng.choice(csr.n, 40, replace=False)
        r = apsp(csr, "sssp-path", backend=gpu, sources=src)
        assert r.pred is not None and r.pred.shape == r.dist.shape
        assert np.array_equal(r.dist, scipy_rows(csr, True, src).astype(np.float32))
        checked = 0
        for i, s in enumerate(src):
            for t in range(csr.n):
                path = backtrack(r.pred[i], s, t)
                if not np.isfinite(r.dist[i, t]):
                    assert path == [] and r.pred[i, t] == -1
                    continue
                assert is_shortest_path(csr, path, s, t, r.dist[i, t]), f"path {s} → {t}"
                checked += 1
        assert checked > 0
        assert r.timings["record"] > 0 and r.timings["cost"] > 0


def test_bad_input_refused_before_gpu_work(gpu, rng):
    g = family(rng, "ba", 100)
    for m in BFS + SSSP:
        with pytest.raises(InvalidParameter):
            apsp(g, m, backend=gpu, sources=[g.n])               # a source outside the graph
    with pytest.raises(InvalidParameter):
        apsp(Graph(g.n, g.edges, np.zeros(g.m, np.float32)), "sssp-path", backend=gpu)   # zero weights
    for m, kw in (("sssp-staged", dict(S=40)), ("gpu-msbfs", dict(batch=100)), ("gpu-bfs-k3", dict(block=100))):
        with pytest.raises(InvalidParameter):
            apsp(g, m, backend=gpu, **kw)


def test_evolution_and_sweep_runners(gpu, rng):
    from kernels.graphs.experiments import bfs_evolution as E
    rows = list(E.run_evolution(["alpha", "ba"], [100, 200], E.KERNELS + E.EXTRA, instances=2, backend=gpu,
                                batch=1, seed0=int(rng.integers(99))))
    assert len(rows) == 2 * 2 * 2 * 9 and all(r.agrees for r in rows)
    assert set(E.fit_slopes(rows)) == {(t, k) for t in ("alpha", "ba") for k in E.KERNELS + E.EXTRA}
    pc = E.percent_changes(rows)
    assert np.isfinite(pc["ba", "gpu-bfs-k7"][0]) and np.isnan(pc["ba", "gpu-bfs-k1"][0])
    from kernels.gpu import launch_occupancy
    sweep = list(E.run_block_sweep(["ba"], [150], [32, 256], "gpu-bfs-k7", repeats=2, backend=gpu,
                                   occupancy_of=launch_occupancy))
    assert [r.block for r in sweep] == [32, 256] and all(0 < r.occupancy <= 1 and r.registers > 0 for r in sweep)


def test_sssp_experiment_runners(gpu, rng):
    from kernels.graphs.experiments import sssp_table as T
    rows = list(T.run_table(methods=T.TABLE_METHODS, backend=gpu, n=200, arcs=700, w_max=500,
                            seed=int(rng.integers(99)), max_sources={"sssp-harish": 40}))
    assert len(rows) == 16 and all(r.agrees for r in rows)
    assert all(r.scaled == (r.method == "sssp-harish") for r in rows)
    ov = list(T.run_path_overhead([300, 600], gpu, seed=int(rng.integers(99)), check_paths=20))
    assert all(r.paths_valid == r.paths_checked == 20 and r.overhead > 0 for r in ov)
