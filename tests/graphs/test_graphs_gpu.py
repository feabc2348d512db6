"""GPU graph kernels (CuPy RawKernels) against the CPU references, on fresh random graphs."""
import networkx as nx
import numpy as np
import pytest

from kernels.graphs.data import generators as G
from kernels.graphs.apsp import DistanceOverflow, apsp
from kernels.graphs.apsp.bfs import apsp_bfs_k7
from kernels.graphs.apsp.fw import autotune_tile, dense_matrix, fw_cpu
from kernels.graphs.algorithms.clustering import GPUClustering, global_clustering, local_clustering, ring_lattice_clustering
from support.paths import ROOT

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import select
    return select("gpu")


def fresh(rng, kind):
    seed = int(rng.integers(1 << 31))
    n = int(rng.integers(100, 700))
    return {"ba": lambda: G.barabasi_albert(n, int(rng.integers(1, 6)), seed),
            "ws": lambda: G.watts_strogatz(n, 2 * int(rng.integers(1, 6)), float(rng.random()) * 0.3, seed),
            "er": lambda: G.erdos_renyi(n, 2.5 / n, seed),          # disconnected: sentinel pairs
            "spatial": lambda: G.spatial(n, 7.0, None, seed),
            "alpha": lambda: G.watts_alpha(n, 8, 0.0, 1e-9, True, seed)}[kind]()


KINDS = ["ba", "ws", "er", "spatial", "alpha"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["gpu-bfs", "gpu-bfs-k1", "fw", "fw-blocked", "sssp"])
def test_gpu_apsp_hops_equal_cpu_exactly(gpu, rng, kind, method):
    g = fresh(rng, kind)
    ref = apsp(g, "cpu")
    r = apsp(g, method, backend=gpu)
    assert r.dist.dtype == ref.dist.dtype
    assert np.array_equal(r.dist, ref.dist), f"{method} differs on {g.describe()}"


@pytest.mark.parametrize("tile", [32, 64])
def test_fw_blocked_tiles_and_padding(gpu, rng, tile):
    g = G.with_weights(fresh(rng, "er"), kind="float", seed=int(rng.integers(99)))   # n not a multiple of tile
    ref = fw_cpu(dense_matrix(g.csr()))
    r = apsp(g, "fw-blocked", backend=gpu, tile=tile)
    assert r.tile == tile
    assert np.array_equal(np.isinf(r.dist), np.isinf(ref))
    assert np.allclose(r.dist, ref, rtol=1e-5)


@pytest.mark.parametrize("method", ["fw", "fw-blocked", "sssp"])
def test_weighted_gpu_apsp_matches_scipy(gpu, rng, method):
    g = G.with_weights(fresh(rng, "ba"), kind="int", w_max=50, seed=int(rng.integers(99)))
    ref = apsp(g, "cpu")
    r = apsp(g, method, backend=gpu)
    assert np.allclose(r.dist, ref.dist, rtol=1e-6)       # integer weights: exact in float32


def test_k7_uint16_batches_and_overflow(gpu, rng):
    g = G.ring_lattice(700, 2)                            # diameter 350 > 254
    ref = apsp(g, "cpu")
    assert ref.dist.dtype == np.uint16
    r = apsp_bfs_k7(g.csr(), gpu, batch=97)               # several source batches, ragged last one
    assert np.array_equal(r.dist, ref.dist)
    with pytest.raises(DistanceOverflow):
        apsp_bfs_k7(g.csr(), gpu, dtype="uint8")


def test_sssp_non_multiple_batch(gpu, rng):
    g = fresh(rng, "ws")
    r = apsp(g, "sssp", backend=gpu, S=64)
    assert np.array_equal(r.dist, apsp(g, "cpu").dist)


@pytest.mark.parametrize("kind", ["ba", "ws", "spatial", "er"])
@pytest.mark.parametrize("variant", ["arc", "sorted"])
def test_gpu_clustering_equals_networkx(gpu, rng, kind, variant):
    g = fresh(rng, kind)
    H = nx.Graph(list(map(tuple, g.edges.tolist())))
    H.add_nodes_from(range(g.n))
    assert global_clustering(g, gpu, variant) == pytest.approx(nx.transitivity(H), abs=1e-12)
    lc = local_clustering(g, gpu, variant)
    ref = nx.clustering(H)
    assert np.allclose(lc, [ref[v] for v in range(g.n)], atol=1e-12)
    assert global_clustering(g, gpu, variant) == global_clustering(g)     # CPU and GPU agree exactly


def test_gpu_clustering_large_and_ring(gpu):
    g = G.watts_strogatz(20000, 10, 0.1, 4)
    assert GPUClustering(g.csr(), gpu).run() == pytest.approx(global_clustering(g), abs=1e-12)
    assert global_clustering(G.ring_lattice(5000, 50), gpu) == pytest.approx(ring_lattice_clustering(50))


def test_autotune_picks_a_tile(gpu):
    assert autotune_tile(512, gpu) in (32, 64)


def test_reproduce_sweep_on_the_gpu_equals_the_cpu(gpu):
    """Paper 000's sweep: GPU kernel 7 + GPU clustering give the CPU rows (hops exact, C to rounding),
    for both connectivity readings, on fresh seeds."""
    from kernels.backend import select
    from kernels.graphs.experiments import reproduce as rp
    seed = int(np.random.default_rng().integers(1 << 20))
    kw = dict(types=["alpha-ring", "alpha", "ba"], sizes=[150, 300], instances=2, seed0=seed,
              params={"alpha": {"alpha": 6.0, "p": 1e-10}})
    for conn in rp.CONNECTIVITY:
        g_rows = list(rp.run_sweep(method="gpu-bfs", backend=gpu, connectivity=conn, **kw))
        c_rows = list(rp.run_sweep(method="cpu", backend=select("cpu"), connectivity=conn, **kw))
        assert [(r.type, r.n, r.seed, r.m, r.diameter, r.giant_fraction) for r in g_rows] == \
               [(r.type, r.n, r.seed, r.m, r.diameter, r.giant_fraction) for r in c_rows]
        np.testing.assert_allclose([r.mean_path_length for r in g_rows], [r.mean_path_length for r in c_rows],
                                   rtol=1e-12)
        np.testing.assert_allclose([r.clustering for r in g_rows], [r.clustering for r in c_rows], rtol=1e-9)
    # Table II's CPU column: the CPU reference timed on the GPU sweep's own graphs agrees with kernel 7
    ref = list(rp.run_sweep(method="gpu-bfs", backend=gpu, reference="cpu-floyd", clustering=False, **kw))
    assert ref and all(r.ref_agrees is True and r.ref_seconds > 0 for r in ref)
    assert set(rp.speedups(ref)) == {(r.type, r.n) for r in ref}


def test_reproduce_cli_defaults_to_the_gpu(tmp_path):
    import json
    import os
    import subprocess
    import sys
    root = str(ROOT)
    r = subprocess.run([sys.executable, os.path.join(root, "main.py"), "graph-reproduce", "--sizes", "200,400",
                        "--instances", "1", "--json", "--quiet", "--csv", str(tmp_path / "s.csv")],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, GSE_BACKEND="gpu"))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["method"] == "gpu-bfs" and len(out["rows"]) == 6
    assert set(out["exponents"]) == {"alpha-ring", "alpha", "ba"}
    assert (tmp_path / "s.csv").read_text().count("\n") == 7


def test_clustering_timing_sweep_gpu_kernels_count_what_the_cpu_counts(gpu):
    """Paper 001's timing sweep: both GPU kernels give the CPU's integer t and p on every graph
    (fresh seed), and the GPU is the default there."""
    from kernels.graphs.experiments import cc_timing as cc
    from kernels.devices import gpu_count
    seed = int(np.random.default_rng().integers(1 << 20))
    multi = list(cc.MULTI_METHODS) if gpu_count(gpu) >= 2 else []        # 2 GPUs: their curves too
    assert cc.default_methods(gpu) == ["cpu", "cpu-threads", "gpu-arc", "gpu-sorted"] + multi
    assert cc.default_sizes(gpu) == {f: list(v) for f, v in cc.PAPER_SIZES.items()}
    rows = list(cc.run_cc_sweep({"ws": [3000, 6000], "ba": [3000, 6000]}, cc.default_methods(gpu), repeats=2,
                                backend=gpu, seed=seed))
    assert len(rows) == 4 * (4 + len(multi)) and all(r.agrees for r in rows)
    by = {(r.family, r.n, r.method): (r.t, r.p) for r in rows}
    for (f, n, m), tp in by.items():
        assert tp == by[(f, n, "cpu")] and tp[0] > 0
    assert all(r.seconds > 0 for r in rows)


def test_clustering_cli_defaults_to_the_gpu_kernels():
    import json
    import os
    import subprocess
    import sys
    root = str(ROOT)
    r = subprocess.run([sys.executable, os.path.join(root, "main.py"), "graph-clustering", "--ws-sizes", "2000,4000",
                        "--ba-sizes", "2000,4000", "--repeats", "1", "--json", "--quiet"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, GSE_BACKEND="gpu"))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    import cupy as cp
    multi = ["multi-arc", "multi-sorted"] if cp.cuda.runtime.getDeviceCount() >= 2 else []
    assert out["methods"] == ["cpu", "cpu-threads", "gpu-arc", "gpu-sorted"] + multi and out["all_methods_agree"]
    assert out["paper_slopes"]["ws"]["gpu-sorted"] == 1.11 and len(out["rows"]) == 4 * (4 + len(multi))
