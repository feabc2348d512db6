"""Issue 33: every Graphs CUDA kernel of papers 000, 001 and 004 runs without a GPU — the SAME
``.cu`` source compiled for the CPU by the host device of :mod:`kernels.gpu` — and gives the CPU
reference's numbers exactly: BFS kernels 1–7, the compact kernel 7, MS-BFS, the four SSSP methods
(with path recording), the per-arc clustering kernels and the frontier row of the overlay.  Fresh
random small graphs each run (the ``rng`` fixture); the GPU test at the end checks host == GPU bit
for bit."""
import numpy as np
import pytest

from kernels.backend import cpu_backend
from kernels.errors import InvalidParameter
from kernels.graphs.experiments import bfs_evolution as E
from kernels.graphs.data import digraphs as D
from kernels.graphs.data import generators as G
from kernels.graphs.experiments import sssp_table as T
from kernels.graphs.apsp import METHODS, apsp
from kernels.graphs.algorithms.clustering import cpu_counts, kernel_counts, local_clustering
from kernels.graphs.algorithms.frontier import distance_from
from kernels.graphs.apsp.paths import backtrack, is_shortest_path

BFS = [f"gpu-bfs-k{k}" for k in range(1, 8)] + ["gpu-bfs", "gpu-msbfs"]
SSSP = ["sssp-harish", "sssp", "sssp-staged", "sssp-path"]
CPU = cpu_backend()


def small_graph(rng, n_lo=24, n_hi=56):
    """A fresh small undirected graph of a random family (BA hubs, WS rings, sparse ER: disconnected)."""
    n, seed = int(rng.integers(n_lo, n_hi)), int(rng.integers(1 << 30))
    kind = rng.choice(["ba", "ws", "er"])
    if kind == "ba":
        return G.barabasi_albert(n, int(rng.integers(1, 4)), seed)
    if kind == "ws":
        return G.watts_strogatz(n, 2 * int(rng.integers(1, 3)), float(rng.random()) * 0.4, seed)
    return G.erdos_renyi(n, 2.5 / n, seed)


def small_digraph(rng, weighted=True):
    """A fresh random digraph (Hamiltonian cycle or not: then some pairs are unreachable)."""
    n = int(rng.integers(20, 48))
    return D.random_digraph(n, int(rng.integers(2, 5)) * n, int(rng.integers(2, 50)) if weighted else None,
                            bool(rng.integers(2)), int(rng.integers(1 << 30)))


def test_methods_are_available_and_emulated_without_a_gpu():
    for m in BFS + SSSP:
        assert METHODS[m].available(CPU) and METHODS[m].emulated(CPU) and METHODS[m].available(None)
        assert "GPU only" not in METHODS[m].help
    assert E.emulated(CPU) and all(T.emulated(m, CPU) for m in SSSP) and not T.emulated("cpu-dijkstra", CPU)


@pytest.mark.parametrize("method", BFS)
def test_bfs_kernel_on_the_host_equals_the_cpu_reference(method, rng):
    g = small_graph(rng)
    ref = apsp(g, "cpu").dist
    r = apsp(g, method, backend=CPU)
    assert r.dist.dtype == ref.dtype and np.array_equal(r.dist, ref), method
    assert r.launches > 0


@pytest.mark.parametrize("k", [2, 3, 6, 7])
def test_paper_kernels_multi_source_form_and_source_subset(k, rng):
    """batch > 1 (several sources per launch, rows of the cost matrix) and a subset of sources."""
    g = small_graph(rng)
    src = rng.choice(g.n, size=int(rng.integers(3, 9)), replace=False)
    ref = apsp(g, "cpu").dist[src]
    r = apsp(g, f"gpu-bfs-k{k}", backend=CPU, batch=int(rng.integers(2, 6)), sources=src,
             block=int(rng.choice([32, 64, 128])))
    assert np.array_equal(r.dist, ref)


def test_msbfs_source_subset_runs_on_the_inverted_digraph(rng):
    csr = small_digraph(rng, weighted=False)
    src = rng.choice(csr.n, size=int(rng.integers(2, 10)), replace=False)
    ref = apsp(csr, "cpu", weighted=False).dist[src]
    assert np.array_equal(apsp(csr, "gpu-msbfs", backend=CPU, sources=src).dist, ref)
    assert np.array_equal(apsp(csr, "gpu-bfs-k5", backend=CPU, sources=src).dist, ref)


@pytest.mark.parametrize("method", SSSP)
def test_sssp_method_on_the_host_equals_scipy(method, rng):
    csr = small_digraph(rng)
    ref = apsp(csr, "cpu", weighted=True).dist                 # float32 of scipy's Dijkstra
    r = apsp(csr, method, backend=CPU)
    assert r.dist.dtype == np.float32 and np.array_equal(r.dist, ref), method
    if method == "sssp-path":                                  # every recorded path is a shortest one
        for i in range(csr.n):
            for j in rng.choice(csr.n, size=6):
                if np.isfinite(r.dist[i, j]):
                    assert is_shortest_path(csr, backtrack(r.pred[i], i, int(j)), i, int(j), r.dist[i, j])
                else:
                    assert r.pred[i, j] == -1


def test_sssp_hop_counts_and_problems_per_launch(rng):
    g = small_graph(rng)
    ref = apsp(g, "cpu").dist
    assert np.array_equal(apsp(g, "sssp-staged", backend=CPU, S=64).dist, ref)
    assert np.array_equal(apsp(g, "sssp", backend=CPU, S=32, threads=64).dist, ref)


@pytest.mark.parametrize("variant", ["arc", "sorted"])
def test_clustering_kernels_on_the_host_count_exactly(variant, rng):
    g = G.watts_strogatz(int(rng.integers(80, 200)), 2 * int(rng.integers(2, 6)), float(rng.random()) * 0.3,
                         int(rng.integers(1 << 30)))
    csr = g.csr()
    assert kernel_counts(csr, CPU, variant) == cpu_counts(csr)
    assert np.array_equal(local_clustering(g, CPU, variant, kernel=True), local_clustering(g))


def reference_pred(csr, dist, s):
    """frontier.cu's definition: the smallest neighbour u with d(u) < d(v) and d(u) + w = d(v)."""
    pred = np.full(csr.n, -1, dtype=np.int32)
    w = csr.weights if csr.weights is not None else np.ones(csr.arcs)
    for v in range(csr.n):
        if v == s or not np.isfinite(dist[v]):
            continue
        lo, hi = csr.indptr[v], csr.indptr[v + 1]
        ok = [int(u) for u, x in zip(csr.indices[lo:hi], w[lo:hi]) if dist[u] < dist[v] and dist[u] + float(x) == dist[v]]
        pred[v] = min(ok) if ok else -1
    return pred


@pytest.mark.parametrize("weighted", [False, True])
def test_frontier_row_on_the_host(weighted, rng):
    g = small_graph(rng, 40, 120)
    if weighted:
        g = G.with_weights(g, "int", seed=int(rng.integers(99)))
    s = int(rng.integers(g.n))
    row = distance_from(g, s, CPU, kernel=True)
    ref = distance_from(g, s, CPU)
    assert row.backend == "host" and ref.backend == "cpu"
    assert np.array_equal(row.dist, ref.dist)
    assert np.array_equal(row.pred, reference_pred(g.csr(), row.dist, s))


def test_host_guard_names_the_limit_before_any_work(rng):
    g = G.barabasi_albert(5000, 3, int(rng.integers(99)))
    with pytest.raises(InvalidParameter, match=r"limit is 30 s — about [\d,]+ sources"):
        apsp(g, "gpu-bfs-k3", backend=CPU)
    with pytest.raises(InvalidParameter, match="limit is 30 s"):
        E.check_host(["ba"], [20000], ["gpu-bfs-k3"], CPU)
    E.check_host(["ba"], [60], ["gpu-bfs-k3", "gpu-msbfs"], CPU)          # a lecture-sized run passes
    from kernels.graphs.experiments import cc_timing as cc
    with pytest.raises(InvalidParameter, match="limit is 30 s"):
        cc.check_host("ws", 1_000_000)                    # measured on a 4 000-vertex sample, scaled
    cc.check_host("ws", 2000)


# ------------------------------------------------------------------ host == GPU, bit for bit
@pytest.mark.gpu
def test_host_equals_gpu_bit_for_bit(rng):
    from kernels.backend import gpu_backend
    gpu = gpu_backend()
    g = small_graph(rng, 200, 400)
    for m in BFS:
        a, b = apsp(g, m, backend=CPU), apsp(g, m, backend=gpu)
        assert np.array_equal(a.dist, b.dist) and a.launches == b.launches, m
    csr = small_digraph(rng)
    for m in SSSP:
        a, b = apsp(csr, m, backend=CPU), apsp(csr, m, backend=gpu)
        assert a.dist.tobytes() == b.dist.tobytes() and a.launches == b.launches, m
        if m == "sssp-path":
            assert np.array_equal(a.pred, b.pred)
    w = G.watts_strogatz(2000, 20, 0.1, int(rng.integers(99))).csr()
    for v in ("arc", "sorted"):
        t1, p1, tri1 = kernel_counts(w, CPU, v, local=True)
        t2, p2, tri2 = kernel_counts(w, gpu, v, local=True)
        assert (t1, p1) == (t2, p2) and np.array_equal(np.asarray(tri1), tri2.get())
    for gg in (g, G.with_weights(g, "float", seed=3)):
        s = int(rng.integers(gg.n))
        a, b = distance_from(gg, s, CPU, kernel=True), distance_from(gg, s, gpu)
        assert a.dist.tobytes() == b.dist.tobytes() and np.array_equal(a.pred, b.pred)
