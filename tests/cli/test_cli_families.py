"""The command line of the Floyd–Warshall, BFS/SSSP and Dask sweep families (issues 20, 21, 25):
``graph`` with every method and its options, ``graph-fw``, ``graph-bfs``, ``graph-sssp``,
``ch-sweep``, ``flint … --sweep`` and ``--scheduler none`` of graph-reproduce.  CPU here; the GPU
paths are ``@pytest.mark.gpu``.  Graph seeds are fresh random numbers: the checks hold for any graph."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import networkx as nx
import numpy as np
import pytest
from support.cli_calls import cli_here
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)


def cli(*args, backend="cpu"):
    """The command's answer, run in this process through ``cli.main`` (as ``python main.py`` would
    with GSE_BACKEND and OMP_NUM_THREADS=2); the Ctrl+C tests start ``main.py`` themselves."""
    return cli_here(*args, env_extra={"GSE_BACKEND": backend, "OMP_NUM_THREADS": "2"})


def run_json(*args, backend="cpu"):
    r = cli(*args, "--json", backend=backend)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr

    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")
    return json.loads(r.stdout, parse_constant=bad)


def one_error_line(r, needle):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert needle in lines[0], lines[0]


@pytest.fixture
def seed(rng):
    return int(rng.integers(0, 2**31))


def sweep_rows(path):
    """The rows of a sweep result file (line 1: its identity, line 2: the columns)."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh.readlines()[1:]))


# ------------------------------------------------------------------------------------------ graph
def test_cpu_capable_methods_agree_with_the_reference(seed, tmp_path):
    """fw-blocked and cpu-dijkstra now run without a GPU; same distances as scipy on any graph."""
    base = ("graph", "--generator", "ws", "--n", 150, "--k", 4, "--p", 0.1, "--seed", seed, "--weights", "int")
    ref = run_json(*base, "--apsp", "cpu", "--export-distances", tmp_path / "ref.npy")
    for method in ("fw-blocked", "cpu-dijkstra"):
        out = run_json(*base, "--apsp", method, "--export-distances", tmp_path / f"{method}.npy")
        assert out["apsp_method"] == method and out["mean_path_length"] == pytest.approx(ref["mean_path_length"])
        assert np.array_equal(np.load(tmp_path / f"{method}.npy"), np.load(tmp_path / "ref.npy"))
    assert run_json(*base, "--apsp", "fw-blocked")["apsp_params"]["tile"] == 32      # predecessors: tile 32


def test_path_weights_sum_to_the_reported_length(seed, tmp_path):
    el = tmp_path / "g.edgelist"
    out = run_json("graph", "--n", 120, "--k", 2, "--seed", seed, "--weights", "int", "--apsp", "fw-v1",
                   "--path", 0, 5, "--export-graph", el)
    H = nx.read_edgelist(el, nodetype=int, data=(("weight", float),))
    path, length = out["path"], out["path_length"]
    assert path[0] == 0 and path[-1] == 5
    assert sum(H[a][b]["weight"] for a, b in zip(path, path[1:])) == length
    assert length == nx.dijkstra_path_length(H, 0, 5)
    assert out["apsp_params"]["arith"] == "int32"
    text = cli("graph", "--n", 120, "--k", 2, "--seed", seed, "--weights", "int", "--apsp", "fw-v1", "--path", 0, 5)
    assert text.returncode == 0 and f"path 0 → 5: {' '.join(map(str, path))} ({len(path) - 1} hops" in text.stdout


def test_sources_rows_and_exported_predecessors(seed, tmp_path):
    """--sources: cpu-dijkstra's rows equal the full matrix's; fw's predecessors walk along edges
    whose weights sum to the distances."""
    base = ("graph", "--generator", "er", "--n", 90, "--p", 0.05, "--seed", seed, "--weights", "int")
    run_json(*base, "--apsp", "fw", "--export-distances", tmp_path / "d.npy", "--export-paths", tmp_path / "p.npy",
             "--export-graph", tmp_path / "g.edgelist")
    d, pred = np.load(tmp_path / "d.npy"), np.load(tmp_path / "p.npy")
    H = nx.read_edgelist(tmp_path / "g.edgelist", nodetype=int, data=(("weight", float),))
    src = sorted({int(s) for s in np.random.default_rng(seed).integers(0, 90, 5)})
    out = run_json(*base, "--apsp", "cpu-dijkstra", "--threads", 2, "--sources", ",".join(map(str, src)),
                   "--export-distances", tmp_path / "rows.npy")
    rows = np.load(tmp_path / "rows.npy")
    assert rows.shape == (len(src), 90) and out["sources"] == len(src)
    assert np.array_equal(rows, d[src])
    fin = np.isfinite(rows) & (rows > 0)
    assert out["mean_path_length"] == pytest.approx(float(rows[fin].mean()), rel=1e-6)
    walked = 0
    for s in src:
        for t in range(90):
            if s == t or not np.isfinite(d[s, t]):
                assert s == t or pred[s, t] == -1
                continue
            walk, v = [t], t
            while v != s and len(walk) <= 90:
                v = int(pred[s, v])
                walk.append(v)
            assert walk[-1] == s
            assert sum(H[a][b]["weight"] for a, b in zip(walk, walk[1:])) == d[s, t]
            walked += 1
    assert walked > 0


# ------------------------------------------------------------------------------------------ graph-fw
def test_graph_fw_rows_agree_and_csv(tmp_path):
    path = tmp_path / "fw.csv"
    out = run_json("graph-fw", "--versions", "fw-v1", "fw-blocked", "--sizes", "40,70", "--arith", "int32",
                   "--repeats", 2, "--csv", path, "--quiet")
    rows = out["rows"]
    assert [(r["version"], r["n"]) for r in rows] == [("fw-v1", 40), ("fw-blocked", 40), ("fw-v1", 70),
                                                      ("fw-blocked", 70)]
    assert all(r["agrees"] and r["arith"] == "int32" and r["repeats"] == 2 and len(r["times"]) == 2 for r in rows)
    assert out["all_agree"] and out["peak_updates_per_s"] is None
    with open(path, newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 4


def test_graph_fw_ctrl_c_keeps_the_finished_rows(tmp_path):
    path = tmp_path / "fw.csv"
    env = dict(os.environ, GSE_BACKEND="cpu")
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "main.py"), "graph-fw", "--versions", "fw-blocked",
                          "--sizes", "32,3000", "--repeats", "1", "--csv", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = p.stderr.readline()
        assert first.startswith("[1/2] BFW"), first
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("error: interrupted after 1 of 2 points; partial CSV")
    part = tmp_path / "fw.partial.csv"
    assert not path.exists() and len(part.read_text().splitlines()) == 2


# ------------------------------------------------------------------------------------------ BFS / SSSP
def test_graph_bfs_runs_on_the_cpu_host_without_a_gpu():
    """Issue 33: without a GPU paper 000's kernels run their CUDA source on the CPU (the evolution's
    kernels agree on every hop count); sizes over the host's 30 s guard get one error naming it."""
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present here")
    r = cli("graph-bfs", "--sizes", "120,140", "--types", "alpha-ring", "--kernels", "gpu-bfs-k1,gpu-bfs-k7")
    assert r.returncode == 0 and "all kernels give the same hop counts" in r.stdout + r.stderr, r.stderr
    one_error_line(cli("graph-bfs", "--sizes", "20000,40000", "--types", "ba"), "30 s")


def test_graph_bfs_report_of_synthetic_rows():
    """The text and JSON of the evolution from rows (the GPU runs them): slopes vs N, changes."""
    from cli.graph_bfs import evolution_lines, evolution_summary
    from kernels.graphs.experiments.bfs_evolution import EvoRow
    rows = [EvoRow("ba", n, 0, 1, 3 * n, k, 1, 256, sec * (n / 100) ** 2, 10, 2.0, True)
            for n in (100, 200) for k, sec in (("gpu-bfs-k1", 1.0), ("gpu-bfs-k2", 0.5))]
    out = evolution_summary(rows)
    assert out["slopes"]["ba/gpu-bfs-k1"] == pytest.approx(2.0) and out["all_agree"]
    assert out["changes"]["ba/gpu-bfs-k2"]["vs_parent_pct"] == pytest.approx(-50.0)
    assert out["changes"]["ba/gpu-bfs-k2"]["ours"] == "faster"
    text = "\n".join(evolution_lines(rows))
    assert "gpu-bfs-k2  slope 2.000" in text and "-50.0 % vs parent" in text


def test_graph_sssp_table_and_scaling_on_the_cpu(seed):
    out = run_json("graph-sssp", "table", "--n", 300, "--arcs", 1200, "--w-max", 50, "--seed", seed % 1000)
    rows = {r["topology"]: r for r in out["rows"]}
    assert set(rows) == {"random", "powerlaw", "ring", "complete"}
    assert all(r["method"] == "cpu-dijkstra" and r["agrees"] is True and r["seconds"] > 0 for r in rows.values())
    assert rows["complete"]["scaled"] and rows["complete"]["sources_timed"] == 256       # the default limit
    assert rows["complete"]["arcs"] == 300 * 299 and rows["ring"]["arcs"] == 300 and out["all_agree"]
    out = run_json("graph-sssp", "scaling", "--values", "128,256", "--max-sources", 64)
    assert [(r["n"], r["arcs"], r["sources_timed"], r["agrees"]) for r in out["rows"]] == [(128, 512, 64, True),
                                                                                          (256, 1024, 64, True)]


def test_graph_sssp_limits_are_paper_004s_element_counts():
    from kernels.graphs.experiments import sssp_table as T
    out = run_json("graph-sssp", "limits", "--memory", "512M")
    assert out["largest_vertices"] == {m: T.largest_vertices(m, 512 * 2**20) for m in T.GPU_METHODS}
    assert out["largest_vertices"]["sssp-staged"] < out["largest_vertices"]["sssp-harish"]


# ------------------------------------------------------------------------------------------ Dask sweeps
def test_ch_sweep_rows_then_resume_runs_none(tmp_path):
    path = tmp_path / "ch.csv"
    args = ("ch-sweep", "--vary", "mean=-0.3:0.3:2", "--vary", "seed=1..2", "--size", 16, "--steps", 60,
            "--scheduler", "none", "--csv", path, "--backend", "cpu")
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    assert "4 points (4 run now, 0 already in the file)" in r.stdout
    rows = sweep_rows(path)
    assert len(rows) == 4 and {(float(x["mean"]), int(x["seed"])) for x in rows} == {(-0.3, 1), (-0.3, 2),
                                                                                      (0.3, 1), (0.3, 2)}
    assert all(x["error"] == "" and int(x["steps"]) == 60 for x in rows)
    out = run_json(*args, "--resume", "--quiet")
    assert out["ran"] == 0 and out["skipped"] == 4 and len(sweep_rows(path)) == 4


def test_ch_sweep_ctrl_c_keeps_the_finished_rows_and_resume_runs_the_rest(tmp_path):
    path = tmp_path / "ch.csv"
    args = ["ch-sweep", "--vary", "seed=1..3", "--size", "96", "--steps", "6000", "--scheduler", "none",
            "--csv", str(path)]
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "main.py"), *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ, GSE_BACKEND="cpu"))
    try:
        first = p.stderr.readline()
        assert first.startswith("[1/3] point 0 seed 1:"), first
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: interrupted after 1 of 3 points; the finished rows are in") and "--resume" in last
    assert [int(x["seed"]) for x in sweep_rows(path)] == [1]
    out = run_json(*args, "--resume", "--quiet")
    assert out["ran"] == 2 and out["skipped"] == 1
    assert sorted(int(x["seed"]) for x in sweep_rows(path)) == [1, 2, 3]


def test_flint_sweep_members_equal_single_runs(tmp_path):
    path = tmp_path / "lr.csv"
    out = run_json("flint", "luo_rudy_1991", "--sweep", "g_Na=15:25:4", "--runtime", "cpu", "--t-end", 5,
                   "--scheduler", "none", "--csv", path, "--record", "V")
    assert out["members"] == 4 and out["slices"] == 1 and not out["errors"]
    rows = sweep_rows(path)
    assert [float(x["g_Na"]) for x in rows] == pytest.approx([15, 15 + 10 / 3, 15 + 20 / 3, 25])
    for x in (rows[0], rows[3]):
        one = run_json("flint", "luo_rudy_1991", "--set", f"g_Na={x['g_Na']}", "--runtime", "cpu", "--t-end", 5,
                       "--record", "V")
        assert float(x["V_final"]) == pytest.approx(one["variables"]["V"]["final"], rel=1e-12)


def test_graph_reproduce_without_and_with_scheduler_none_agree(seed):
    args = ("graph-reproduce", "--types", "ba", "--sizes", "200,300", "--instances", 2, "--no-clustering",
            "--seed", seed % 10000, "--quiet")
    a, b = run_json(*args), run_json(*args, "--scheduler", "none")
    keep = ("type", "n", "instance", "seed", "m", "mean_path_length", "diameter", "regenerated")
    assert [{k: r[k] for k in keep} for r in a["rows"]] == [{k: r[k] for k in keep} for r in b["rows"]]
    assert a["exponents"] == b["exponents"]


def test_graph_clustering_with_scheduler_none_counts_the_same(seed):
    args = ("graph-clustering", "--families", "ws", "--ws-sizes", "200,300", "--methods", "cpu,cpu-threads",
            "--repeats", 1, "--threads", 2, "--seed", seed % 10000)
    a, b = run_json(*args), run_json(*args, "--scheduler", "none")
    keep = ("family", "n", "method", "clustering", "agrees")
    assert [{k: r[k] for k in keep} for r in a["rows"]] == [{k: r[k] for k in keep} for r in b["rows"]]
    assert a["all_methods_agree"] and b["all_methods_agree"]


# ------------------------------------------------------------------------------------------ GPU
@pytest.mark.gpu
def test_gpu_methods_with_their_options_match_the_cpu(seed, tmp_path):
    base = ("graph", "--generator", "ws", "--n", 300, "--k", 6, "--p", 0.05, "--seed", seed)
    run_json(*base, "--apsp", "cpu", "--export-distances", tmp_path / "ref.npy")
    ref = np.load(tmp_path / "ref.npy")
    for method, opts in (("gpu-bfs-k3", ("--batch", 4, "--block", 128)), ("gpu-msbfs", ("--batch", 128)),
                         ("sssp", ("--S", 32, "--threads", 128)), ("fw-v3", ("--arith", "int32")),
                         ("fw-mm", ("--tile", 16, "--fw-option", "l=2"))):
        run_json(*base, "--apsp", method, *opts, "--export-distances", tmp_path / "d.npy", backend="gpu")
        assert np.array_equal(np.load(tmp_path / "d.npy").astype(np.float64), ref.astype(np.float64)), method


@pytest.mark.gpu
def test_gpu_sssp_path_exports_predecessors(seed, tmp_path):
    out = run_json("graph", "--n", 200, "--seed", seed, "--weights", "int", "--apsp", "sssp-path", "--path", 3, 77,
                   "--export-paths", tmp_path / "p.npy", "--export-graph", tmp_path / "g.edgelist", backend="gpu")
    H = nx.read_edgelist(tmp_path / "g.edgelist", nodetype=int, data=(("weight", float),))
    assert out["path_length"] == nx.dijkstra_path_length(H, 3, 77)
    assert np.load(tmp_path / "p.npy").shape == (200, 200)


@pytest.mark.gpu
def test_gpu_graph_bfs_sssp_and_fw_commands():
    evo = run_json("graph-bfs", "--types", "ba", "--sizes", "200,400", "--instances", 1, "--kernels",
                   "gpu-bfs-k1,gpu-bfs-k7", "--quiet", backend="gpu")
    assert evo["all_agree"] and len(evo["rows"]) == 4
    sw = run_json("graph-bfs", "--sweep", "--types", "ba", "--sizes", 400, "--blocks", "64,128", "--repeats", 1,
                  "--quiet", backend="gpu")
    assert [r["block"] for r in sw["rows"]] == [64, 128] and 0 < sw["rows"][0]["occupancy"] <= 1
    tab = run_json("graph-sssp", "table", "--n", 300, "--arcs", 1200, "--w-max", 50, "--quiet", backend="gpu")
    assert tab["all_agree"] and {r["method"] for r in tab["rows"]} == {"sssp-harish", "sssp", "sssp-staged",
                                                                       "cpu-dijkstra"}
    fw = run_json("graph-fw", "--versions", "fw-v1", "fw-v3", "fw-blocked", "--sizes", "64,130", "--arith", "int32",
                  "--quiet", backend="gpu")
    assert fw["all_agree"] and all(r["pct_peak"] is not None for r in fw["rows"] if r["version"] != "fw-v1")
