"""Headless CLI: python main.py graph-clustering … (paper 001's clustering timings, same runner as the GUI)."""
import csv
import json
import os
import subprocess
import sys

import networkx as nx
import pytest

from kernels.graphs.experiments import cc_timing as cc
from kernels.graphs.data.graph import to_networkx
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)
SMALL = ("--ws-sizes", "300,600", "--ba-sizes", "300,600", "--repeats", "2")


def cli(*args, backend="cpu"):
    env = dict(os.environ, GSE_BACKEND=backend)
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "graph-clustering", *args],
                          capture_output=True, text=True, env=env, timeout=180)


def test_json_rows_csv_and_slopes(tmp_path, rng):
    seed = int(rng.integers(1 << 30))
    path = tmp_path / "cc.csv"
    r = cli(*SMALL, "--methods", "cpu,cpu-threads,networkx", "--threads", "3", "--seed", str(seed),
            "--csv", str(path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["all_methods_agree"] is True and out["threads"] == 3 and out["repeats"] == 2
    assert len(out["rows"]) == 12 and len(r.stderr.strip().splitlines()) == 12      # one progress line each
    for row in out["rows"]:
        if row["method"] == "networkx":
            H = to_networkx(cc.make_graph(row["family"], row["n"], seed))
            assert row["clustering"] == pytest.approx(nx.transitivity(H), rel=1e-12)
    assert set(out["slopes"]) == {f"{f}/{m}" for f in ("ws", "ba") for m in ("cpu", "cpu-threads", "networkx")}
    assert out["paper_slopes"]["ba"] == {"cpu": 1.37, "cpu-threads": 1.56}
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    assert [(x["family"], int(x["n"]), x["method"]) for x in rows] == \
        [(x["family"], x["n"], x["method"]) for x in out["rows"]]


def test_defaults_on_the_cpu_and_human_table():
    r = cli("--families", "ws", "--ws-sizes", "300,600", "--repeats", "1", "--quiet")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "cpu         slope" in r.stdout and "cpu-threads slope" in r.stdout and "gpu" not in r.stdout
    assert "paper single core: 1.03" in r.stdout and "all methods agree" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (("--families", "ws,xx"), "unknown graph family"),
    (("--ws-sizes", "300"), "at least two sizes"),
    (("--ws-sizes", "300,x"), "--ws-sizes"),
    (("--ba-sizes", "50,300"), "between"),
    (("--methods", "cpu,fast"), "unknown clustering method"),
    (("--methods", "gpu-sorted", "--ws-sizes", "300,1000000"), "limit is 30 s"),
    (("--repeats", "0"), "--repeats"),
    (("--threads", "-2"), "--threads"),
])
def test_bad_input_one_error_line(args, needle):
    r = cli(*SMALL, *args)                                   # GSE_BACKEND=cpu: GPU methods run on the host
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], r.stderr
    assert r.stdout == ""
