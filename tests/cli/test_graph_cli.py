"""Headless CLI: python main.py graph … --json."""
import json
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)


def cli(*args, backend="cpu"):
    env = dict(os.environ, GSE_BACKEND=backend)
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "graph", *args],
                          capture_output=True, text=True, env=env, timeout=240)


def test_graph_json_exports_and_values(tmp_path):
    el, npy = tmp_path / "g.edgelist", tmp_path / "d.npy"
    r = cli("--generator", "ba", "--n", "400", "--k", "3", "--seed", "1", "--apsp", "cpu",
            "--export-graph", str(el), "--export-distances", str(npy), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for key in ("n", "m", "mean_path_length", "diameter", "global_clustering", "average_clustering",
                "apsp_method", "seconds"):
        assert key in out
    H = nx.read_edgelist(el, nodetype=int)
    assert out["n"] == 400 == H.number_of_nodes() and out["m"] == H.number_of_edges()
    assert out["global_clustering"] == pytest.approx(nx.transitivity(H), abs=1e-12)
    assert out["average_clustering"] == pytest.approx(nx.average_clustering(H), abs=1e-12)
    assert out["mean_path_length"] == pytest.approx(nx.average_shortest_path_length(H), rel=1e-12)
    assert out["diameter"] == nx.diameter(H) and out["apsp_method"] == "cpu"
    d = np.load(npy)
    assert d.shape == (400, 400) and d.dtype == np.uint8
    assert d[0, 7] == nx.shortest_path_length(H, 0, 7)
    # same seed, same graph; load the exported file back
    r2 = cli("--load", str(el), "--apsp", "cpu", "--json")
    assert json.loads(r2.stdout)["mean_path_length"] == out["mean_path_length"]


def test_graphml_weighted_and_disconnected(tmp_path):
    gm = tmp_path / "g.graphml"
    r = cli("--generator", "er", "--n", "300", "--p", "0.004", "--weights", "int", "--export-graph", str(gm), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["weighted"] and not out["connected"] and out["reachable_fraction"] < 1
    H = nx.read_graphml(gm)
    assert H.number_of_nodes() == 300


@pytest.mark.parametrize("args,needle", [
    (("--generator", "ring", "--n", "10", "--k", "10"), "k must be smaller"),
    (("--generator", "ws", "--p", "-0.5"), "probability"),
    (("--generator", "ba", "--n", "1"), "n must be"),
    (("--load", "/nonexistent/g.graphml"), "g.graphml"),
    (("--generator", "ba", "--n", "300", "--apsp", "fw-blocked", "--tile", "48"), "tile"),
])
def test_bad_input_one_error_line(args, needle):
    r = cli(*args)
    if "--tile" in args and r.returncode == 2 and "GPU" in r.stderr:
        needle = "GPU"                                  # no GPU here: refused before the tile check
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert needle in lines[0]


@pytest.mark.parametrize("method, cc", [("gpu-bfs-k5", "arc"), ("gpu-msbfs", "sorted")])
def test_cuda_methods_without_gpu_run_on_the_cpu(method, cc):
    """Issue 33: --backend cpu runs a CUDA method's source on the CPU (JSON "emulated": true) with the
    reference's numbers (computed here in-process on the same seeded graph)."""
    from kernels.graphs.data import generators as G
    from kernels.graphs.apsp import apsp
    from kernels.graphs.algorithms.clustering import global_clustering, local_clustering
    from kernels.graphs.data.stats import summary
    seed = int(np.random.default_rng().integers(1 << 20))
    r = cli("--generator", "ws", "--n", "120", "--k", "4", "--p", "0.1", "--seed", str(seed), "--json",
            "--apsp", method, "--clustering", cc)
    assert r.returncode == 0, r.stderr
    b = json.loads(r.stdout)
    g = G.generate("ws", 120, k=4, p=0.1, seed=seed)
    s = summary(apsp(g, "cpu").dist)
    assert b["emulated"] is True and b["apsp_method"] == method and b["clustering_method"] == cc
    assert (b["mean_path_length"], b["diameter"]) == (s["mean_path_length"], s["diameter"])
    assert b["global_clustering"] == global_clustering(g)
    assert b["average_clustering"] == float(local_clustering(g).mean())


def test_cuda_method_above_the_host_limit_is_refused_naming_it():
    r = cli("--generator", "ba", "--n", "20000", "--apsp", "gpu-bfs-k1")
    assert r.returncode == 2 and r.stderr.startswith("error:") and "limit is 30 s" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "sources of this graph fit" in r.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["gpu-bfs", "fw-blocked", "sssp"])
def test_gpu_methods_match_cpu(method, tmp_path):
    a = json.loads(cli("--generator", "ws", "--n", "800", "--k", "6", "--p", "0.05", "--apsp", "cpu", "--json").stdout)
    b = cli("--generator", "ws", "--n", "800", "--k", "6", "--p", "0.05", "--apsp", method, "--json", backend="gpu")
    assert b.returncode == 0, b.stderr
    b = json.loads(b.stdout)
    for key in ("mean_path_length", "diameter", "global_clustering", "average_clustering", "m"):
        assert b[key] == pytest.approx(a[key], abs=1e-12)
