"""Paper 001's clustering timing sweep (kernels.graphs.experiments.cc_timing) and the CPU counters behind it."""
import networkx as nx
import numpy as np
import pytest

from kernels.backend import Backend
from kernels.errors import InvalidParameter
from kernels.graphs.experiments import cc_timing as cc
from kernels.graphs.data import generators as G
from kernels.graphs.algorithms.clustering import ROW_BLOCK, cpu_counts
from kernels.graphs.data.graph import to_networkx


@pytest.fixture
def cpu():
    return Backend("cpu", np)


@pytest.mark.parametrize("kind", ["ba", "ws", "er"])
def test_threaded_row_blocks_count_exactly_what_networkx_counts(kind, rng):
    seed = int(rng.integers(1 << 30))
    n = ROW_BLOCK * 2 + int(rng.integers(1, ROW_BLOCK))          # several row blocks, a ragged last one
    g = {"ba": lambda: G.barabasi_albert(n, 4, seed), "ws": lambda: G.watts_strogatz(n, 8, 0.2, seed),
         "er": lambda: G.erdos_renyi(n, 6.0 / n, seed)}[kind]()
    H = to_networkx(g)
    t1, p1 = cpu_counts(g.csr(), 1)
    assert cpu_counts(g.csr(), 3) == (t1, p1)
    assert t1 == 2 * sum(nx.triangles(H).values()) // 3
    assert p1 == sum(d * (d - 1) for _, d in H.degree())
    assert 3 * t1 / p1 == pytest.approx(nx.transitivity(H), rel=1e-12)


def test_sweep_rows_agree_across_methods_and_with_networkx(cpu, rng):
    seed = int(rng.integers(1 << 30))
    sizes = {"ws": [300, 500], "ba": [300, 500]}
    rows = list(cc.run_cc_sweep(sizes, ["cpu", "cpu-threads", "networkx"], repeats=2, backend=cpu, seed=seed,
                                workers=2))
    assert len(rows) == 12 and all(r.agrees for r in rows)
    assert [(r.family, r.n, r.method) for r in rows[:3]] == [("ws", 300, "cpu"), ("ws", 300, "cpu-threads"),
                                                              ("ws", 300, "networkx")]
    for r in rows:
        assert r.seconds > 0 and r.std >= 0 and r.repeats == 2
        if r.method == "cpu":
            H = to_networkx(cc.make_graph(r.family, r.n, seed))
            assert r.m == H.number_of_edges()
            assert r.clustering == pytest.approx(nx.transitivity(H), rel=1e-12)
    ws = [r.clustering for r in rows if r.family == "ws"]
    ba = [r.clustering for r in rows if r.family == "ba"]
    assert min(ws) > 0.4 and max(ba) < min(ws)                  # WS k = 50, p = 0.1 is clustered (≈ 0.53)


def test_fit_slopes_and_speedups_recover_constructed_timings():
    slope = {("ws", "cpu"): 1.03, ("ws", "gpu-arc"): 1.23, ("ba", "cpu"): 1.45, ("ba", "gpu-arc"): 1.65}
    rows = [cc.CCRow(f, n, 0, m, 1e-9 * n ** e, 0.0, 1, 0, 0, 0.0, True)
            for (f, m), e in slope.items() for n in (1000, 4000, 16000)]
    s = cc.fit_slopes(rows)
    assert s[("ws", "cpu")] == pytest.approx(1.03) and s[("ba", "gpu-arc")] == pytest.approx(1.65)
    sp = cc.speedups(rows)
    assert sp[("ws", 1000, "gpu-arc")] == pytest.approx(1000 ** -0.2)
    assert ("ws", 1000, "cpu") not in sp
    assert cc.fit_slopes(rows[:1]) == {}                          # one size: no slope


def test_sweep_refuses_bad_input_before_work(cpu):
    bad = [({"xx": [200, 400]}, ["cpu"], "unknown graph family"),
           ({"ws": [200]}, ["cpu"], "at least two sizes"),
           ({"ws": [20, 400]}, ["cpu"], "between"),
           ({}, ["cpu"], "at least one graph family"),
           ({"ws": [200, 400]}, ["fast"], "unknown clustering method"),
           ({"ws": [200, 1_000_000]}, ["gpu-arc"], "limit is 30 s"),     # the host device's limit
           ({"ws": [200, 400]}, [], "at least one clustering method"),
           ({"ws": [200, cc.NETWORKX_MAX_V + 1]}, ["cpu", "networkx"], "networkx would need too much memory")]
    for sizes, methods, needle in bad:
        with pytest.raises(InvalidParameter, match=needle):
            next(cc.run_cc_sweep(sizes, methods, backend=cpu))
    with pytest.raises(InvalidParameter, match="repeats"):
        next(cc.run_cc_sweep({"ws": [200, 400]}, ["cpu"], repeats=0, backend=cpu))


def test_sweep_cancels_between_points_and_writes_csv(cpu, tmp_path):
    calls = []
    rows = list(cc.run_cc_sweep({"ws": [200, 300, 400]}, ["cpu", "cpu-threads"], repeats=1, backend=cpu,
                                cancel=lambda: calls.append(1) or len(calls) > 3))
    assert 1 <= len(rows) < 6
    cc.TIMINGS.to_csv(rows, tmp_path / "cc.csv")
    lines = (tmp_path / "cc.csv").read_text().splitlines()
    assert lines[0].split(",") == list(cc.CSV_COLUMNS) and len(lines) == len(rows) + 1


def test_paper_tables_are_consistent():
    assert set(cc.PAPER_SIZES) == set(cc.FAMILIES) == set(cc.PAPER_SLOPES) == set(cc.PAPER_LEVELS)
    assert cc.PAPER_SIZES["ws"][0] == 20_000 and cc.PAPER_SIZES["ws"][-1] == 200_000
    assert cc.PAPER_SIZES["ba"][0] == 10_000 and cc.PAPER_SIZES["ba"][-1] == 100_000
    for name in cc.PAPER_NAME.values():
        assert all(name in slopes for slopes in cc.PAPER_SLOPES.values())
