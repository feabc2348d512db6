"""The Floyd–Warshall family on the CPU: every CPU version against scipy's floyd_warshall and
against paper 002's V1 (compiled C) on fresh random graphs — exact on integer weights, float32
rounding on float weights; predecessor paths; negative edges and cycles; n = 1, 2 and sizes that
are no multiple of any tile; the registry, the arithmetic choice, the memory refusal, the sweep."""
import numpy as np
import pytest
from scipy.sparse.csgraph import floyd_warshall as scipy_fw

from kernels.errors import GridTooLarge, InvalidParameter
from kernels.graphs.apsp import fw_core as C
from kernels.graphs.experiments import fw_sweep as S
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import METHODS, apsp, method_names, shortest_path
from kernels.graphs.apsp import fw
from kernels.graphs.apsp.fw import versions
from kernels.hostcc import find_compiler
from support.paths import ROOT

CPU_VERSIONS = versions(cpu=True)


def random_matrix(rng, n, density=0.2, low=1, high=50, directed=True, ints=True):
    m = (rng.integers(low, high, (n, n)) if ints else rng.uniform(low, high, (n, n))).astype(np.float32)
    m[rng.random((n, n)) > density] = np.inf
    if not directed:
        m = np.minimum(m, m.T)
    return m


def as_float(res):
    d = res.dist.astype(np.float64)
    if res.dist.dtype == np.int32:
        d[res.dist == C.NO_PATH_INT] = np.inf
    return d


def scipy_ref(m):
    """scipy's floyd_warshall on the same arcs (a sparse matrix: its dense input reads 0 as no edge)."""
    import scipy.sparse as sp
    fin = np.isfinite(m) & ~np.eye(m.shape[0], dtype=bool)
    r, c = np.nonzero(fin)
    return scipy_fw(sp.csr_matrix((m[r, c].astype(np.float64), (r, c)), shape=m.shape), directed=True)


def check_paths(m, res, rng, pairs=40):
    d = as_float(res)
    n = m.shape[0]
    for i, j in rng.integers(0, n, (pairs, 2)):
        p = res.path(i, j)
        if not np.isfinite(d[i, j]):
            assert p == []
            continue
        assert p[0] == i and p[-1] == j and len(set(p)) == len(p)
        assert C.path_length(m, p) == pytest.approx(d[i, j], rel=1e-5, abs=1e-4)


def test_registry_lists_every_version_with_help():
    want = {"fw-v1", "fw-v2", "fw-v3", "fw-v4", "fw-v4-coop", "fw-v5", "fw", "fw-blocked", "fw-mm", "fw-2level",
            "fw-recursive", "fw-tuned", "fw-fast"}
    assert want <= set(versions())
    for v in versions():
        cls = METHODS[v]
        assert cls.family == "fw" and cls.help and ("Paper 00" in cls.help or "Ours" in cls.help), v
    assert set(CPU_VERSIONS) >= {"fw-v1", "fw", "fw-blocked", "fw-mm", "fw-2level", "fw-recursive", "fw-fast"}
    assert "fw-v3" in method_names(gpu=True) and "fw-blocked" in method_names(gpu=False)


@pytest.mark.parametrize("version", CPU_VERSIONS)
@pytest.mark.parametrize("arith", ["int32", "float32", "dpx"])
def test_cpu_versions_equal_scipy_and_v1(rng, version, arith):
    if arith == "dpx" and "dpx" not in METHODS[version].ariths:
        pytest.skip("no DPX kernels in this version")
    n = int(rng.integers(70, 140))                                  # no multiple of any tile
    m = random_matrix(rng, n, density=float(rng.uniform(0.02, 0.15)), ints=arith != "float32",
                      directed=bool(rng.integers(2)))
    res = C.floyd_warshall(m, version, arith=arith)
    assert res.backend == "cpu" and res.dist.shape == (n, n)
    ref = scipy_ref(m)
    got = as_float(res)
    assert np.array_equal(np.isinf(got), np.isinf(ref))
    v1 = C.floyd_warshall(m, "fw-v1", arith="float32" if arith == "float32" else "int32")
    if arith == "float32":
        assert np.allclose(got[np.isfinite(got)], ref[np.isfinite(ref)], rtol=1e-5)      # float32 sums of paths
        assert np.allclose(got[np.isfinite(got)], as_float(v1)[np.isfinite(got)], rtol=1e-5)
    else:
        assert np.array_equal(got, ref) and np.array_equal(res.dist, v1.dist)
    check_paths(m, res, rng)


@pytest.mark.parametrize("version", CPU_VERSIONS)
def test_tiny_and_disconnected(rng, version):
    for n in (1, 2):
        m = random_matrix(rng, n, density=1.0)
        res = C.floyd_warshall(m, version)
        assert np.array_equal(as_float(res), scipy_ref(m))
        assert res.path(0, n - 1)[-1] == n - 1
    m = np.full((5, 5), np.inf, np.float32)
    m[0, 1] = m[1, 2] = 3
    res = C.floyd_warshall(m, version, arith="int32")
    assert res.dist[0, 2] == 6 and res.dist[2, 0] == C.NO_PATH_INT and res.path(2, 0) == []
    assert res.path(0, 2) == [0, 1, 2]


@pytest.mark.parametrize("version", ["fw-v1", "fw", "fw-blocked", "fw-recursive", "fw-fast"])
def test_negative_edges_and_negative_cycle(rng, version):
    n = 60
    m = random_matrix(rng, n, density=0.1, low=1, high=20)
    h = rng.integers(0, 15, n).astype(np.float32)
    neg = m - h[:, None] + h[None, :]                 # reweighting by potentials: no negative cycle
    assert (neg[np.isfinite(neg)] < 0).any()
    res = C.floyd_warshall(neg, version)
    assert res.arith == "float32"                     # auto: negative weights stay in float32
    ref = scipy_ref(neg)
    got = as_float(res)
    assert np.allclose(got[np.isfinite(got)], ref[np.isfinite(ref)], atol=1e-4)
    check_paths(neg, res, rng)
    cyc = m.copy()
    a, b, c = rng.choice(n, 3, replace=False)
    cyc[a, b], cyc[b, c], cyc[c, a] = 1, 1, -5
    # every negative cycle uses the one negative arc c → a: the vertex named must lie on a cycle through it
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order
    arcs = np.isfinite(cyc) & ~np.eye(n, dtype=bool)
    A = sp.csr_matrix(arcs.astype(np.int8))
    from_a = set(breadth_first_order(A, a, directed=True, return_predecessors=False).tolist())
    to_c = set(breadth_first_order(A.T.tocsr(), c, directed=True, return_predecessors=False).tolist())
    for arith in ("float32", "int32"):
        with pytest.raises(C.NegativeCycle) as exc:
            C.floyd_warshall(cyc, version, arith=arith)
        assert exc.value.vertex in from_a & to_c
        assert isinstance(exc.value, InvalidParameter) and "negative cycle" in str(exc.value)


def test_arith_choice_and_int_limits(rng):
    m = random_matrix(rng, 20)
    assert C.choose_arith(m) == "int32"
    assert C.choose_arith(m + 0.5) == "float32"
    assert C.choose_arith(m - 100) == "float32"                # negative weights: float32
    with pytest.raises(InvalidParameter, match="not all integers"):
        C.choose_arith(m + 0.5, "int32")
    big = m * 2e7
    with pytest.raises(InvalidParameter, match="path limit"):
        C.choose_arith(big, "dpx")
    with pytest.raises(InvalidParameter, match="unknown arithmetic"):
        C.choose_arith(m, "int64")


def test_dpx_arithmetic_is_min_of_wrapping_add():
    """The CPU's DPX stand-in computes __viaddmin_s32(a, b, c) = min(a + b, c) with 32-bit adds; the
    kernels' sentinel keeps every sum of stored values in range (no wrap ever happens)."""
    inf = np.int32(C.FW_INT_INF)
    assert int(inf) + int(inf) < 2 ** 31                       # INF + INF fits int32
    assert int(inf) - C.INT_PATH_LIMIT >= C.INT_UNREACHABLE_FROM
    a = np.array([inf, 5, -3], np.int32)
    b = np.array([inf, inf, 7], np.int32)
    c = np.array([inf, 9, 10], np.int32)
    assert np.minimum(a + b, c).tolist() == [int(inf), 9, 4]


def test_bad_matrices_one_clear_error():
    for bad, needle in ((np.zeros((3, 4)), "square"), (np.zeros((0, 0)), "empty"),
                        (np.array([[0, np.nan], [1, 0]]), "NaN"), (np.array([[0, -np.inf], [1, 0]]), "−inf"),
                        (np.array([["a"]]), "numbers")):
        with pytest.raises(InvalidParameter, match=needle):
            C.floyd_warshall(bad, "fw-v1")
    with pytest.raises(InvalidParameter, match="unknown Floyd"):
        C.floyd_warshall(np.zeros((2, 2)), "fw-v9")
    big = fw.FWV3.host_limit() + 1             # without a GPU: the CUDA source on the CPU, up to its size limit
    with pytest.raises(InvalidParameter, match=f"limit is 30 s — n ≤ {big - 1}"):
        C.floyd_warshall(np.zeros((big, big), np.float32), "fw-v3")
    with pytest.raises(InvalidParameter, match="no CUDA kernels"):
        C.floyd_warshall(np.zeros((2, 2)), "fw-v1", emulate=1)
    with pytest.raises(InvalidParameter, match="unknown option"):
        C.floyd_warshall(np.zeros((2, 2)), "fw-mm", tiles=3)
    with pytest.raises(InvalidParameter, match="tile"):
        C.floyd_warshall(np.zeros((2, 2)), "fw-mm", tile=48)
    with pytest.raises(InvalidParameter, match="not in"):
        C.path(np.full((3, 3), -1, np.int32), 0, 7)


def test_memory_refused_before_allocation(monkeypatch):
    import kernels.backend as B
    monkeypatch.setattr(B, "host_available_memory", lambda: 64 << 20)
    with pytest.raises(GridTooLarge, match="host memory"):
        C.floyd_warshall(np.zeros((3000, 3000), np.float32), "fw-v1")


def test_graph_path_predecessors_and_shortest_path(rng):
    g = G.with_weights(G.watts_strogatz(int(rng.integers(80, 160)), 4, 0.2, int(rng.integers(1 << 30))), kind="float",
                       seed=int(rng.integers(99)))
    ref = apsp(g, "cpu")
    for v in ("fw-v1", "fw-blocked", "fw-fast"):
        r = apsp(g, v)
        assert r.method == v and r.pred is not None and r.dist.dtype == np.float32
        assert np.allclose(r.dist, ref.dist, rtol=1e-5)
        s, t = (int(x) for x in rng.integers(0, g.n, 2))
        p = shortest_path(g, r.dist[s], s, t, r)
        w = {(int(a), int(b)): float(x) for (a, b), x in zip(g.edges, g.weights)}
        length = sum(w.get((a, b), w.get((b, a), np.inf)) for a, b in zip(p[:-1], p[1:]))
        assert p[0] == s and p[-1] == t and length == pytest.approx(float(r.dist[s, t]), rel=1e-5)
    hops = apsp(G.barabasi_albert(120, 2, int(rng.integers(1 << 30))), "fw-blocked")
    assert hops.dist.dtype == np.uint8 and hops.pred is not None


@pytest.mark.skipif(find_compiler() is None, reason="needs a host C++ compiler")
def test_gpu_versions_run_their_cuda_source_on_the_cpu(rng):
    from kernels.backend import Backend
    be = Backend("cpu", np)
    g = G.barabasi_albert(int(rng.integers(30, 60)), 2, int(rng.integers(99)))
    ref = apsp(g, "fw-v1", backend=be).dist
    r = apsp(g, "fw-v3", backend=be)
    assert METHODS["fw-v3"].emulated(be) and r.params["emulated"] and np.array_equal(r.dist, ref)
    assert not METHODS["fw-mm"].emulated(be) and "emulated" not in apsp(g, "fw-mm", backend=be).params


def test_sweep_rows_tables_and_csv(rng, tmp_path):
    rows = list(S.run_sweep(["fw-v1", "fw-blocked:tile=32", "fw-recursive:t_r=16"], [40, 70], None, "int32", 2,
                            seed=int(rng.integers(99))))
    assert [(r.n, r.version) for r in rows] == [(40, "fw-v1"), (40, "fw-blocked"), (40, "fw-recursive"),
                                                (70, "fw-v1"), (70, "fw-blocked"), (70, "fw-recursive")]
    assert all(r.agrees and r.repeats == 2 and len(r.times) == 2 and r.pct_peak is None for r in rows)
    path = tmp_path / "fw.csv"
    S.TIMINGS.to_csv(rows, path)
    text = path.read_text().splitlines()
    assert text[0].startswith("spec,version,label,n") and len(text) == 7
    t2 = S.table_ii(rows)
    assert t2["versions"]["fw-v1"]["paper_mean"] == pytest.approx(40.358, abs=1e-3)
    assert t2["steps"]["fw-v3→fw-v4"]["paper_table"] == pytest.approx(43.0, abs=0.1)
    assert t2["steps"]["fw-v4→fw-v5"]["paper_table"] == pytest.approx(16.5, abs=0.1)
    with pytest.raises(InvalidParameter, match="the limit is 30 s"):
        list(S.run_sweep(["fw-v5"], [S.fw_versions()["fw-v5"].host_limit() + 64], None))
    with pytest.raises(InvalidParameter, match="teaching"):
        S.check_specs(["fw-v2"], None, [4096])
    with pytest.raises(InvalidParameter, match="key=value"):
        S.parse_spec("fw-mm:tile")
    assert S.parse_spec("fw-mm:tile=16,l=auto") == ("fw-mm", {"tile": 16, "l": "auto"})


def test_paper_graph_is_papers_input(rng):
    n = int(rng.integers(50, 300))
    m = S.paper_graph(n, int(rng.integers(1 << 30)))
    off = np.isfinite(m) & ~np.eye(n, dtype=bool)
    assert off.sum() == 4 * n and m[off].min() >= 1 and m[off].max() <= n - 1
    assert np.all(np.diagonal(m) == 0)


def test_occupancy_presets_name_compiled_fw_kernels():
    """The occupancy presets of paper 004 name kernels the GPU side can compile and measure."""
    import json

    from kernels.graphs.apsp.fw_gpu import NAMES, PRESET_KERNELS
    doc = json.loads((ROOT / "resources/presets/occupancy.json").read_text())
    keys = [p["params"]["kernel"] for p in doc["presets"] if "kernel" in p["params"]]
    assert set(keys) == {"fw-mm t=64", "fw-2level t=32"}
    for k in keys:
        file, name, threads = PRESET_KERNELS[k]
        assert name in NAMES[file] and threads in (64, 256)


def test_path_between_every_kind_of_result(rng):
    """path_between: predecessors (FW), Dijkstra (weighted, no predecessors), hops (unweighted)."""
    import networkx as nx

    from kernels.graphs.apsp import path_between
    g = G.with_weights(G.watts_strogatz(90, 4, 0.1, int(rng.integers(1 << 30))), kind="int", w_max=9,
                       seed=int(rng.integers(99)))
    H = nx.Graph()
    for (a, b), w in zip(g.edges.tolist(), g.weights.tolist()):
        H.add_edge(a, b, weight=w)
    s, t = (int(x) for x in rng.choice(g.n, 2, replace=False))
    want = nx.shortest_path_length(H, s, t, weight="weight")
    for res in (apsp(g, "fw-v1"), apsp(g, "cpu"), None):
        p = path_between(g, s, t, res)
        assert p[0] == s and p[-1] == t and nx.path_weight(H, p, "weight") == want
    u = G.barabasi_albert(60, 2, int(rng.integers(1 << 30)))
    p = path_between(u, 0, 59)
    assert len(p) - 1 == nx.shortest_path_length(nx.Graph(u.edges.tolist()), 0, 59)
    with pytest.raises(InvalidParameter, match="not in"):
        path_between(u, 0, 60)
