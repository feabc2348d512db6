"""Headless CLI: python main.py graph-reproduce … (paper 000's mean-path sweep, same runner as the GUI)."""
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

from kernels.graphs.data import generators as G
from kernels.graphs.experiments import reproduce as rp
from kernels.graphs.data.graph import to_networkx
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)
SMALL = ("--sizes", "200,400", "--instances", "2")


def cli(*args, backend="cpu"):
    env = dict(os.environ, GSE_BACKEND=backend)
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "graph-reproduce", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def _strict(text):
    """json.loads that refuses NaN / Infinity (strict JSON only)."""
    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")
    return json.loads(text, parse_constant=bad)


def _run_json(*args):
    r = cli(*SMALL, *args, "--json")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return _strict(r.stdout), r


def _exact_mean_path(g):
    return nx.average_shortest_path_length(to_networkx(g))


def test_json_csv_and_fitted_exponents(tmp_path):
    path = tmp_path / "sweep.csv"
    out, r = _run_json("--method", "cpu-sampled", "--csv", str(path))
    types = ["alpha-ring", "alpha", "ba"]
    for key in ("types", "sizes", "instances", "method", "connectivity", "params", "exponents",
                "paper_exponents", "clustering", "rows", "seconds"):
        assert key in out, key
    assert out["types"] == types and out["sizes"] == [200, 400] and out["instances"] == 2
    assert out["method"] == "cpu-sampled" and out["connectivity"] == "redraw" and out["sources"] == rp.SAMPLED_SOURCES
    assert out["paper_exponents"] == rp.PAPER_EXPONENTS
    assert out["params"] == {"alpha-ring": rp.alpha_params("alpha-ring"), "alpha": rp.alpha_params("alpha")}
    rows = out["rows"]
    assert len(rows) == 3 * 2 * 2
    assert [(x["type"], x["n"], x["instance"]) for x in rows] == [
        (t, n, i) for t in types for n in (200, 400) for i in range(2)]
    # one progress line per finished instance on stderr, stdout is the JSON alone
    assert len([ln for ln in r.stderr.splitlines() if ln.startswith("[")]) == 12
    for t in types:
        mine = [x for x in rows if x["type"] == t]
        means = [np.mean([x["mean_path_length"] for x in mine if x["n"] == n]) for n in (200, 400)]
        slope = np.polyfit(np.log([200, 400]), np.log(means), 1)[0]
        assert out["exponents"][t] == pytest.approx(slope, rel=1e-9, abs=1e-12)
        c = [x["clustering"] for x in mine]
        assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in c)
        assert out["clustering"][t] == pytest.approx(np.mean(c), rel=1e-12)
        assert all(x["giant_fraction"] == 1.0 and x["method"] == "cpu-sampled" for x in mine)
    # the ring substrate is a big world (path grows ~ N), BA a small one
    assert out["exponents"]["alpha-ring"] > 0.6 > 0.3 > out["exponents"]["ba"]
    # CSV: FIG14.to_csv's header and one line per instance, values matching the JSON rows
    with open(path, newline="") as fh:
        lines = list(csv.reader(fh))
    assert tuple(lines[0]) == rp.CSV_COLUMNS and len(lines) == 13
    for rec, x in zip(lines[1:], rows):
        d = dict(zip(lines[0], rec))
        assert (d["type"], int(d["n"]), int(d["seed"]), int(d["m"])) == (x["type"], x["n"], x["seed"], x["m"])
        assert float(d["mean_path_length"]) == pytest.approx(x["mean_path_length"], abs=1e-6)


def test_exact_method_rows_are_true_and_no_clustering_is_null():
    out, _ = _run_json("--types", "ba,alpha-ring", "--method", "cpu", "--no-clustering", "--seed", "7")
    assert out["clustering"] == {} and out["sources"] is None and out["params"].keys() == {"alpha-ring"}
    assert len(out["rows"]) == 2 * 2 * 2
    assert all(x["clustering"] is None for x in out["rows"])
    # every row is the exact mean path of the graph its seed generates
    for x in out["rows"]:
        if x["type"] == "ba":
            g = G.barabasi_albert(x["n"], 50, x["seed"])
        else:
            g = G.watts_alpha(x["n"], seed=x["seed"], **rp.alpha_params("alpha-ring"))
        assert x["m"] == g.m
        assert x["mean_path_length"] == pytest.approx(_exact_mean_path(g), rel=1e-12)
    assert {x["seed"] for x in out["rows"] if x["instance"] == 0} == {7}


def test_alpha_overrides_reach_the_rows():
    base, _ = _run_json("--types", "alpha", "--method", "cpu")
    over, r = _run_json("--types", "alpha", "--method", "cpu", "--alpha2", "2", "--p2", "1", "--p1", "0.5")
    assert over["params"] == {"alpha": dict(rp.alpha_params("alpha"), alpha=2.0, p=1.0)}
    assert "--p1 ignored" in r.stderr                       # set 1 given but its type not run
    for x in over["rows"]:
        g = G.watts_alpha(x["n"], seed=x["seed"], **over["params"]["alpha"])
        assert x["m"] == g.m
        assert x["mean_path_length"] == pytest.approx(_exact_mean_path(g), rel=1e-12)
        assert x["clustering"] == pytest.approx(nx.transitivity(to_networkx(g)), abs=1e-12)
    # p = 1: every new link random, so the clustering collapses towards k / N
    for b, o in zip(base["rows"], over["rows"]):
        assert o["clustering"] < 0.6 * b["clustering"] and o["mean_path_length"] != b["mean_path_length"]


def test_giant_component_connectivity():
    out, r = _run_json("--types", "alpha,ba", "--method", "cpu", "--k2", "2", "--p2", "1",
                       "--connectivity", "giant")
    assert out["connectivity"] == "giant" and len(out["rows"]) == 8
    a = [x for x in out["rows"] if x["type"] == "alpha"]
    assert all(0 < x["giant_fraction"] <= 1 for x in a)
    assert any(x["giant_fraction"] < 1 for x in a)          # mean degree 2: not connected
    assert "largest component" in r.stderr
    for x in a:
        H = to_networkx(G.watts_alpha(x["n"], seed=x["seed"], **out["params"]["alpha"]))
        big = H.subgraph(max(nx.connected_components(H), key=len))
        assert x["giant_fraction"] == pytest.approx(big.number_of_nodes() / x["n"], abs=1e-12)
        assert x["m"] == big.number_of_edges()
        assert x["mean_path_length"] == pytest.approx(nx.average_shortest_path_length(big), rel=1e-12)
    assert all(x["giant_fraction"] == 1.0 for x in out["rows"] if x["type"] == "ba")


def test_human_table(tmp_path):
    r = cli(*SMALL, "--types", "alpha-ring,ba", "--csv", str(tmp_path / "s.csv"), "--quiet")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    for t in ("alpha-ring", "ba"):
        assert rp.TYPE_LABELS[t] in r.stdout and f"(paper {rp.PAPER_EXPONENTS[t]})" in r.stdout
    assert rp.TYPE_LABELS["alpha"] not in r.stdout
    assert r.stdout.count("N =    200: mean path") == 2 and r.stdout.count("N =    400: mean path") == 2
    assert "mean clustering" in r.stdout and (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("args,needle", [
    (("--types", "alpha,nope"), "nope"),
    (("--types", ","), "--types"),
    (("--sizes", "200"), "at least two"),
    (("--sizes", "5,200"), "between 20 and 60000"),
    (("--sizes", "200,70000"), "between 20 and 60000"),
    (("--sizes", "200,abc"), "integer"),
    (("--instances", "0"), "--instances"),
    (("--instances", "two"), "--instances"),
    (("--p2", "1.5"), "p must lie in [0, 1]"),
    (("--alpha1", "-1"), "alpha must be"),
    (("--p1", "nan"), "--p1"),
    (("--k2", "0"), "--k2"),
    (("--connectivity", "bogus"), "connectivity"),
    (("--sources", "1", "--method", "cpu-sampled"), "sources"),
    (("--method", "dijkstra"), "dijkstra"),
    (("--max-redraws", "-1"), "--max-redraws"),
    (("--reference", "gpu"), "unknown CPU reference"),
    (("--sizes", "200,6000", "--reference", "cpu-floyd"), "O(N³)"),
])
def test_bad_input_one_error_line(args, needle):
    t0 = time.perf_counter()
    r = cli(*SMALL, *args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and r.stdout == ""
    lines = [ln for ln in r.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert needle in lines[0]
    assert time.perf_counter() - t0 < 10                   # refused before any work


def test_gpu_method_without_gpu_runs_on_the_cpu_or_names_the_limit():
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present here")
    r = cli("--sizes", "60,90", "--instances", "1", "--types", "ba", "--method", "gpu-bfs-k3", "--no-clustering",
            "--json")                                                   # CUDA source on the CPU
    assert r.returncode == 0, r.stderr
    out = _strict(r.stdout)
    assert out["emulated"] is True
    for row in out["rows"]:                                             # the exact mean path of each draw
        g = rp.graph_type("ba")(row["n"], row["seed"])
        assert row["mean_path_length"] == pytest.approx(_exact_mean_path(g), abs=1e-12)


def test_gpu_method_above_the_host_limit_is_refused_naming_it():
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present here")
    r = cli("--sizes", "1000,8000", "--types", "ba", "--method", "gpu-bfs-k1")
    assert r.returncode == 2 and r.stderr.startswith("error:") and "limit is 30 s" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    # without --method, a CPU backend picks cpu-sampled
    out, _ = _run_json("--types", "ba", "--no-clustering")
    assert out["method"] == "cpu-sampled"


def test_ctrl_c_stops_cleanly(tmp_path):
    path = tmp_path / "partial.csv"
    path.write_text("type,n,instance\na complete earlier CSV\n")       # must survive the interrupted run
    env = dict(os.environ, GSE_BACKEND="cpu")
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "main.py"), "graph-reproduce", "--types", "ba",
                          "--sizes", "200,60000", "--instances", "3", "--method", "cpu-sampled", "--csv", str(path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = p.stderr.readline()                        # instance 1 of N = 200 done; N = 60000 under way
        assert first.startswith("[1/6] ba N = 200"), first
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    rest = [ln for ln in err.splitlines() if not ln.startswith("[")]
    assert len(rest) == 1 and rest[0].startswith("error: interrupted after") and "Traceback" not in err
    assert "partial CSV" in rest[0]
    part = tmp_path / "partial.partial.csv"                 # beside --csv: a complete CSV there is kept
    assert str(part) in rest[0] and path.read_text() == "type,n,instance\na complete earlier CSV\n"
    lines = part.read_text().splitlines()
    assert lines[0].startswith("type,n,instance") and 2 <= len(lines) <= 4


def test_cpu_reference_speedups_in_json():
    out, r = _run_json("--types", "ba,alpha-ring", "--method", "cpu", "--reference", "cpu-floyd", "--no-clustering")
    assert out["reference"] == "cpu-floyd"
    assert all(x["ref_method"] == "cpu-floyd" and x["ref_agrees"] is True and x["ref_seconds"] > 0
               for x in out["rows"])
    assert set(out["speedups"]) == {f"{t}/{n}" for t in ("ba", "alpha-ring") for n in (200, 400)}
    for key, x in out["speedups"].items():
        t, n = key.split("/")
        mine = [row for row in out["rows"] if row["type"] == t and row["n"] == int(n)]
        assert x == pytest.approx(np.mean([m["ref_seconds"] for m in mine]) / np.mean([m["seconds"] for m in mine]))
    assert "cpu-floyd" in r.stderr                                 # progress lines name the reference
