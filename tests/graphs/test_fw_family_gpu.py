"""Every GPU kernel of the Floyd–Warshall family against paper 002's V1 (compiled C on the CPU), on
fresh random inputs: exact on integer weights, float32 rounding on float weights; predecessor
paths walked back and summed; negative cycles; sizes that are no multiple of any tile."""
import numpy as np
import pytest

from kernels.graphs.apsp import fw_core as C
from kernels.graphs.apsp import fw_gpu
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import apsp
from kernels.graphs.apsp.fw import versions

pytestmark = pytest.mark.gpu

GPU_VERSIONS = [v for v in versions() if v != "fw-v1"]
DPX_VERSIONS = ["fw-mm", "fw-2level", "fw-recursive", "fw-fast"]


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import select
    return select("gpu")


def random_matrix(rng, n, density=0.2, low=1, high=50, directed=True, ints=True):
    m = (rng.integers(low, high, (n, n)) if ints else rng.uniform(low, high, (n, n))).astype(np.float32)
    m[rng.random((n, n)) > density] = np.inf
    if not directed:
        m = np.minimum(m, m.T)
    return m


def reference(m, arith):
    return C.floyd_warshall(m, "fw-v1", arith=arith)


def as_float(res):
    d = res.dist.astype(np.float64)
    if res.dist.dtype == np.int32:
        d[res.dist == C.NO_PATH_INT] = np.inf
    return d


def check_paths(m, res, rng, pairs=60):
    d = as_float(res)
    n = m.shape[0]
    for i, j in rng.integers(0, n, (pairs, 2)):
        p = res.path(i, j)
        if not np.isfinite(d[i, j]):
            assert p == [], (i, j)
            continue
        assert p[0] == i and p[-1] == j
        assert C.path_length(m, p) == pytest.approx(d[i, j], rel=1e-5, abs=1e-4)


def check_equal(res, ref):
    a, b = as_float(res), as_float(ref)
    assert np.array_equal(np.isinf(a), np.isinf(b))
    if res.arith == "float32":
        assert np.allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=1e-5, atol=1e-5)
    else:
        assert np.array_equal(a, b)


@pytest.mark.parametrize("version", GPU_VERSIONS)
@pytest.mark.parametrize("arith", ["int32", "float32"])
def test_versions_equal_v1(gpu, rng, version, arith):
    n = int(rng.integers(130, 200)) if version != "fw-v2" else 70        # no multiple of any tile
    m = random_matrix(rng, n, density=float(rng.uniform(0.02, 0.2)), ints=arith == "int32",
                      directed=bool(rng.integers(2)))
    res = C.floyd_warshall(m, version, backend=gpu, arith=arith, pred=True)
    assert res.backend == "gpu"
    check_equal(res, reference(m, arith))
    check_paths(m, res, rng)
    nopred = C.floyd_warshall(m, version, backend=gpu, arith=arith, pred=False)
    check_equal(nopred, res)


@pytest.mark.parametrize("version", DPX_VERSIONS)
def test_dpx_equals_int32(gpu, rng, version):
    m = random_matrix(rng, int(rng.integers(200, 300)), density=0.05)
    a = C.floyd_warshall(m, version, backend=gpu, arith="dpx", pred=False)
    assert np.array_equal(a.dist, reference(m, "int32").dist)


@pytest.mark.parametrize("version", GPU_VERSIONS)
@pytest.mark.parametrize("n", [1, 2])
def test_tiny(gpu, rng, version, n):
    m = random_matrix(rng, n, density=1.0)
    for arith in ("int32", "float32"):
        res = C.floyd_warshall(m, version, backend=gpu, arith=arith)
        check_equal(res, reference(m, arith))


@pytest.mark.parametrize("version", ["fw-v3", "fw-v5", "fw-blocked", "fw-mm", "fw-recursive", "fw-fast"])
def test_negative_edges_and_cycles(gpu, rng, version):
    n = 97
    m = random_matrix(rng, n, density=0.08, low=1, high=20)
    # negative edges, no negative cycle: potentials h make w(u,v) + h(u) − h(v) ≥ 0
    h = rng.integers(0, 15, n).astype(np.float32)
    neg = m - h[:, None] + h[None, :]
    res = C.floyd_warshall(neg, version, backend=gpu, arith="float32")
    check_equal(res, reference(neg, "float32"))
    assert (neg[np.isfinite(neg)] < 0).any()
    cyc = m.copy()
    cyc[5, 40], cyc[40, 77], cyc[77, 5] = 1, 1, -3
    with pytest.raises(C.NegativeCycle, match="negative cycle"):
        C.floyd_warshall(cyc, version, backend=gpu, arith="float32")


@pytest.mark.parametrize("tile", fw_gpu.THESIS_TILES)
@pytest.mark.parametrize("method", ["fw-mm", "fw-2level"])
def test_thesis_tiles_and_l(gpu, rng, method, tile):
    m = random_matrix(rng, 300, density=0.03)
    ref = reference(m, "int32")
    for l in (1, 3):
        res = C.floyd_warshall(m, method, backend=gpu, arith="int32", pred=False, tile=tile, l=l)
        assert res.params == {"tile": tile, "l": l}
        assert np.array_equal(res.dist, ref.dist)


@pytest.mark.parametrize("t_r", fw_gpu.THESIS_TILES)
def test_recursive_thresholds(gpu, rng, t_r):
    m = random_matrix(rng, 250, density=0.03)
    res = C.floyd_warshall(m, "fw-recursive", backend=gpu, arith="int32", t_r=t_r)
    assert np.array_equal(res.dist, reference(m, "int32").dist)
    check_paths(m, res, rng)


@pytest.mark.parametrize("lookahead", [False, True])
@pytest.mark.parametrize("cfg", list(fw_gpu.GEMM_CONFIGS))
@pytest.mark.parametrize("tile", fw_gpu.FAST_TILES)
def test_fast_tiles_and_configs(gpu, rng, tile, cfg, lookahead):
    m = random_matrix(rng, 333, density=0.02)
    res = C.floyd_warshall(m, "fw-fast", backend=gpu, arith="int32", pred=False, tile=tile, cfg=cfg,
                           lookahead=lookahead)
    assert res.params["lookahead"] == lookahead
    assert np.array_equal(res.dist, reference(m, "int32").dist)


def test_occupancy_preset_kernels_compile_here(gpu):
    for key, (_file, _name, threads) in fw_gpu.PRESET_KERNELS.items():
        r = fw_gpu.compiled_resources(key)
        assert r["threads"] == threads and 0 < r["registers"] <= 255
        t = int(key.split("t=")[1])
        want = 16 * t * 4 if key.startswith("fw-mm") else 2 * t * fw_gpu.TWO_LEVEL_TP[t] * 4
        assert r["smem_static"] == want             # B' strip (MM) / two t x t' stages (two-level), int32


@pytest.mark.parametrize("cfg", list(fw_gpu.GEMM_CONFIGS))
@pytest.mark.parametrize("t", ["float", "int", "dpx"])
def test_minplus_gemm_configs(gpu, rng, cfg, t):
    """The plain min-plus product (the benchmark's ceiling kernel) against NumPy, odd sizes."""
    cp = gpu.xp
    M, N, K = 4 * int(rng.integers(20, 70)), 4 * int(rng.integers(20, 70)), 4 * int(rng.integers(5, 40))
    dt = np.float32 if t == "float" else np.int32
    a, b, c = (rng.integers(0, 1000, s).astype(dt) for s in ((M, K), (K, N), (M, N)))
    want = np.minimum(c, (a[:, :, None].astype(np.int64) + b[None, :, :]).min(axis=1)).astype(dt)
    dc = cp.asarray(c)
    fw_gpu.gemm(fw_gpu.CudaDevice(gpu), dc, dc, cp.asarray(a), cp.asarray(b), M, N, K, lda=K, ldb=N, ldci=N, ldco=N,
                cfg=cfg, dpx=t == "dpx")
    assert np.array_equal(cp.asnumpy(dc), want)


def test_tuned_reports_its_choice(gpu, rng):
    m = random_matrix(rng, 256, density=0.05)
    res = C.floyd_warshall(m, "fw-tuned", backend=gpu, arith="int32", pred=False)
    assert np.array_equal(res.dist, reference(m, "int32").dist)
    assert res.params["tile"] in fw_gpu.THESIS_TILES and res.params["l"] >= 1
    rows = res.params["tuned"]
    best = min(rows, key=lambda r: r["seconds"])
    assert (best["tile"], best["l"]) == (res.params["tile"], res.params["l"])
    fast = C.floyd_warshall(m, "fw-fast", backend=gpu, arith="int32", pred=False, tile="auto", cfg="auto")
    assert np.array_equal(fast.dist, res.dist) and fast.params["tuned"]


@pytest.mark.parametrize("version", ["fw-v5", "fw-mm", "fw-fast"])
def test_graph_path_matches_scipy(gpu, rng, version):
    g = G.with_weights(G.erdos_renyi(int(rng.integers(150, 260)), 0.03, int(rng.integers(1 << 30))), kind="int",
                       w_max=30, seed=int(rng.integers(99)))
    ref = apsp(g, "cpu")
    res = apsp(g, version, backend=gpu)
    assert np.array_equal(res.dist, ref.dist)
    assert res.pred is not None
    hops = apsp(G.barabasi_albert(300, 3, int(rng.integers(1 << 30))), version, backend=gpu)
    assert hops.dist.dtype.kind == "u"


def test_memory_refused_before_allocation(gpu):
    from kernels.errors import GridTooLarge
    free = gpu.free_memory()
    n = int(np.sqrt(free / 4)) + 1024                      # the matrix alone exceeds free memory
    with pytest.raises(GridTooLarge, match="GPU memory"):
        C.check_fits(C.bytes_needed(n, False), 0, gpu)


#: versions and options for the host == GPU comparison (each version's deterministic kernels)
HOST_SPECS = [("fw-v2", {}), ("fw-v3", {}), ("fw-v4", {}), ("fw-v4-coop", {}), ("fw-v5", {}), ("fw", {}),
              ("fw-blocked", {"tile": 32}), ("fw-mm", {"tile": 32, "l": 2}), ("fw-2level", {"tile": 16}),
              ("fw-recursive", {"t_r": 32}), ("fw-fast", {"tile": 64})]


@pytest.mark.parametrize("name,opts", HOST_SPECS, ids=[s for s, _ in HOST_SPECS])
def test_host_device_equals_the_gpu_bit_for_bit(gpu, rng, name, opts):
    """The same CUDA source on the host device (kernels.gpu.host) and on the GPU: every update is one
    float add and a compare (no contraction on either side), so float32 distances and predecessors
    are bit-for-bit the same; int32 too."""
    from kernels.backend import select
    n = int(rng.integers(100, 200))
    m = random_matrix(rng, n, ints=False)
    for arith in ("float32", "int32"):
        mm = np.floor(m) if arith == "int32" else m
        g = C.floyd_warshall(mm, name, gpu, arith=arith, pred=True, **opts)
        h = C.floyd_warshall(mm, name, select("cpu"), arith=arith, pred=True,
                             emulate=int(C.fw_versions()[name].cpu), **opts)
        assert g.backend == "gpu" and h.backend == "host" and h.params["emulated"]
        assert g.dist.dtype == h.dist.dtype and np.array_equal(g.dist.view(np.uint32), h.dist.view(np.uint32))
        assert np.array_equal(g.pred, h.pred)


#: issue 38's opt-in fw-fast variants: each must equal the launch sequence bit for bit
FAST_VARIANTS = ([{"persistent": 1, "cfg": c} for c in fw_gpu.PERSIST_CONFIGS]
                 + [{"persistent": 1, "tile": 128, "cfg": c} for c in fw_gpu.PERSIST_128_CONFIGS]
                 + [{"graph": 1, "lookahead": 0}, {"graph": 1, "lookahead": 1, "tile": 128}])


@pytest.mark.parametrize("arith", ["float32", "int32", "dpx"])
def test_fast_variants_equal_fw_fast_bit_for_bit(gpu, rng, arith):
    """persistent=1 (one cooperative kernel) and graph=1 (the launches as one CUDA graph) against the
    plain launch sequence on the GPU, on a fresh random graph of a size no multiple of the tile; the
    int32 distances also against V1, the persistent kernel also against its host-device run."""
    from kernels.backend import select
    n = int(rng.integers(300, 900))
    n += n % 64 == 0
    m = random_matrix(rng, n, ints=arith != "float32")
    for opts in FAST_VARIANTS:
        base = C.floyd_warshall(m, "fw-fast", gpu, arith=arith, pred=False, tile=opts.get("tile", 64),
                                lookahead=opts.get("lookahead", 0), cfg=opts.get("cfg", fw_gpu.DEFAULT_GEMM))
        got = C.floyd_warshall(m, "fw-fast", gpu, arith=arith, pred=False, **opts)
        assert got.backend == "gpu" and np.array_equal(got.dist.view(np.uint32), base.dist.view(np.uint32)), opts
    if arith != "float32":
        assert np.array_equal(got.dist, reference(m, "int32").dist)
    small = m[:200, :200]
    g = C.floyd_warshall(small, "fw-fast", gpu, arith=arith, pred=True, persistent=1)
    s = C.floyd_warshall(small, "fw-fast", gpu, arith=arith, pred=True, tile=64, lookahead=0)
    h = C.floyd_warshall(small, "fw-fast", select("cpu"), arith=arith, pred=True, persistent=1, emulate=1)
    assert g.launches == 1 and g.params["persistent"] and h.backend == "host"
    for other in (s, h):
        assert np.array_equal(g.dist.view(np.uint32), other.dist.view(np.uint32)) and np.array_equal(g.pred, other.pred)


def test_fast_graph_replays_on_new_contents(gpu, rng):
    """A captured graph is launched again for the same buffer with new contents: still the launch
    sequence's result."""
    import cupy as cp
    dev = fw_gpu.device(gpu)
    n = 512
    d = cp.empty((n, n), cp.int32)
    for _ in range(3):
        w = C.working_matrix(random_matrix(rng, n - int(rng.integers(0, 60))), "int32", n)
        d.set(w)
        fw_gpu.run_fast_graph(dev, d, None, n, 64, fw_gpu.DEFAULT_GEMM, False, False)
        ref = cp.asarray(w)
        fw_gpu.run_fast(dev, ref, None, n, 64, fw_gpu.DEFAULT_GEMM, False, False)
        assert bool((d == ref).all())
