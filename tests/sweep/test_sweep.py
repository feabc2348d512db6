"""The sweep layer (kernels/sweep): ranges, result file, resume, serial vs an embedded Dask cluster,
the graph / Flint adapters against the systems' own serial runs, and bad input."""
from __future__ import annotations

import os

import numpy as np
import pytest

from kernels.errors import BackendUnavailable, ExplorerError, InvalidParameter
from kernels.sweep import Sweep, make_task, parse_axes, parse_values, product, read_rows
from kernels.sweep import cluster as cl
from kernels.sweep.results import ResultFile
from support.paths import ROOT

RNG = np.random.default_rng()


# ------------------------------------------------------------------ ranges and points

@pytest.mark.parametrize("text,expect", [
    ("-0.6:0.6:5", [-0.6, -0.3, 0.0, 0.3, 0.6]),
    ("1..4", [1, 2, 3, 4]),
    ("0.1, 0.2,3", [0.1, 0.2, 3]),
    ("euler,rk2", ["euler", "rk2"]),
    ("7", [7]),
    ("2:2:1", [2.0]),
])
def test_parse_values(text, expect):
    got = parse_values(text, "x")
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        assert (g == pytest.approx(e)) if isinstance(e, float) else (g == e and type(g) is type(e))


@pytest.mark.parametrize("text,msg", [
    ("", "no values"), ("1:2", "START:STOP:COUNT"), ("1:2:0", "COUNT"), ("1:2:x", "not a number"),
    ("0:1:1", "ambiguous"), ("4..1", "empty"), ("1.5..3", "whole numbers"), ("1,,2", "empty item"),
    ("1:nan:3", "finite"), ("0:1:99999999999", "more than"),
])
def test_parse_values_refuses(text, msg):
    with pytest.raises(InvalidParameter, match=msg):
        parse_values(text, "x")


def test_axes_product_and_identity():
    axes = parse_axes(["mean=-0.5:0.5:3", "seed=1..2"])
    pts = product(axes)
    assert pts[:3] == [{"mean": -0.5, "seed": 1}, {"mean": -0.5, "seed": 2}, {"mean": 0.0, "seed": 1}]
    assert len(pts) == 6
    with pytest.raises(InvalidParameter, match="twice"):
        parse_axes(["seed=1..2", "seed=3"])
    with pytest.raises(InvalidParameter, match="NAME=VALUES"):
        parse_axes(["mean"])
    from kernels.sweep.points import identity
    a = identity("ch", {"size": 32}, pts)
    assert a == identity("ch", {"size": 32}, [dict(p) for p in pts])
    assert a["points_sha256"] != identity("ch", {"size": 32}, pts[::-1])["points_sha256"]


# ------------------------------------------------------------------ the result file

def _ident(n=3):
    from kernels.sweep.points import identity
    return identity("t", {"a": 1}, [{"i": i} for i in range(n)])


def test_result_file_append_resume_and_refusals(tmp_path):
    p = tmp_path / "r.csv"
    cols = ["point", "i", "y", "error"]
    y = RNG.random(3)
    with ResultFile(p, _ident(), cols) as f:
        f.append([{"point": 0, "i": 0, "y": float(y[0]), "error": ""}])
        f.append([{"point": 2, "i": 2, "y": float(y[2]), "error": ""}])
    ident, columns, rows = read_rows(p)
    assert ident == _ident() and columns == cols
    assert [r["y"] for r in rows] == [float(y[0]), float(y[2])]             # bit for bit
    with pytest.raises(InvalidParameter, match="exists: --resume"):
        ResultFile(p, _ident(), cols).open()
    before = p.read_bytes()
    with pytest.raises(InvalidParameter, match="different sweep .*points"):
        ResultFile(p, _ident(4), cols, "resume").open()
    with pytest.raises(InvalidParameter, match="different sweep .*a = 1 there"):
        from kernels.sweep.points import identity
        ResultFile(p, identity("t", {"a": 2}, [{"i": i} for i in range(3)]), cols, "resume").open()
    assert p.read_bytes() == before                                          # refused: nothing written
    # a torn last line (a write cut short) is dropped on resume and its point runs again
    with open(p, "ab") as fh:
        fh.write(b"1,1,0.5")
    f = ResultFile(p, _ident(), cols, "resume").open()
    try:
        assert f.done == {0, 2}
        with pytest.raises(InvalidParameter, match="being written by another sweep"):
            ResultFile(p, _ident(), cols, "resume").open()
        f.append([{"point": 1, "i": 1, "y": 0.25, "error": ""}])
    finally:
        f.close()
    assert sorted(r["point"] for r in read_rows(p)[2]) == [0, 1, 2]
    with pytest.raises(InvalidParameter, match="not a sweep result file"):
        (tmp_path / "other.csv").write_text("a,b\n1,2\n")
        ResultFile(tmp_path / "other.csv", _ident(), cols, "resume").open()
    with pytest.raises(InvalidParameter, match="folder"):
        ResultFile(tmp_path / "no" / "r.csv", _ident(), cols)


# ------------------------------------------------------------------ serial == embedded cluster

def _ch_points(n_mean=3, seeds=2):
    lo = float(RNG.uniform(-0.5, -0.2))
    return product({"mean": list(np.linspace(lo, -lo, n_mean)), "seed": [int(s) for s in RNG.integers(1, 10**6, seeds)]})


def _numbers(rows):
    skip = {"worker", "task_seconds", "compute_seconds"}
    return sorted(({k: (None if v == "" else v) for k, v in r.items() if k not in skip} for r in rows),
                  key=lambda r: r["point"])


def test_local_cluster_rows_equal_serial_rows(tmp_path):
    task = make_task("ch", steps=120, record_every=40, size=32, backend="cpu")
    pts = _ch_points()
    serial = list(Sweep(task, pts, path=tmp_path / "serial.csv", scheduler="none").rows())
    sweep = Sweep(task, pts, path=tmp_path / "local.csv", scheduler="local", workers=2)
    dist = list(sweep.rows())
    assert len(dist) == len(pts) and sorted(r["point"] for r in dist) == list(range(len(pts)))
    assert _numbers(dist) == _numbers(serial)
    assert len({r["worker"] for r in dist}) >= 1 and all(r["error"] == "" for r in dist)
    assert _numbers(read_rows(tmp_path / "local.csv")[2]) == _numbers(serial)   # the file, read back, too
    assert sweep.connection is None                                             # cluster stopped


def test_ch_point_errors_are_rows_and_bad_points_are_refused(tmp_path):
    task = make_task("ch", steps=40, record_every=20, size=16, backend="cpu", integrator="euler")
    rows = list(Sweep(task, [{"dt": 0.01}, {"dt": 5.0}], scheduler="none").rows())
    by = {r["dt"]: r for r in rows}
    assert by[0.01]["error"] == "" and np.isfinite(by[0.01]["length_scale_final"])
    assert "blew up" in by[5.0]["error"]
    with pytest.raises(InvalidParameter, match="not a Cahn–Hilliard parameter"):
        Sweep(task, [{"colour": 1}], scheduler="none")
    with pytest.raises(InvalidParameter, match="mean"):
        Sweep(task, [{"mean": 7.0}], scheduler="none")
    with pytest.raises(InvalidParameter, match="no points"):
        Sweep(task, [], scheduler="none")
    with pytest.raises(InvalidParameter, match="scheduler"):
        Sweep(task, [{"seed": 1}], scheduler="http://x")


def test_fields_written_by_the_worker(tmp_path):
    from kernels.cahn_hilliard.io import load_field
    task = make_task("ch", steps=20, record_every=10, size=16, backend="cpu", fields_dir=str(tmp_path))
    [row] = list(Sweep(task, [{"seed": 3}], scheduler="none").rows())
    phi, params, meta = load_field(row["field"])
    assert phi.shape == (16, 16) and params.seed == 3 and meta["steps"] == 20
    assert not [p for p in os.listdir(tmp_path) if ".part" in p]


# ------------------------------------------------------------------ bad input

def test_unreachable_scheduler_is_one_message(tmp_path, monkeypatch):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    monkeypatch.setattr(cl, "CONNECT_TIMEOUT", 1.5)
    task = make_task("ch", steps=10, size=16, backend="cpu")
    out = tmp_path / "r.csv"
    with pytest.raises(InvalidParameter, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        list(Sweep(task, [{"seed": 1}], path=out, scheduler=f"tcp://127.0.0.1:{port}").rows())
    assert not out.exists()                                   # nothing half-written


@pytest.mark.skipif(cl.local_gpu_count() > 0, reason="needs a machine without a GPU")
def test_gpu_task_without_a_gpu_is_refused_before_work(tmp_path):
    out = tmp_path / "r.csv"
    task = make_task("ch", steps=10, size=16, backend="gpu")
    with pytest.raises(BackendUnavailable, match="needs a CUDA GPU, but this machine has none"):
        list(Sweep(task, [{"seed": 1}], path=out, scheduler="none").rows())
    assert not out.exists()
    g = make_task("graph-reproduce", method="gpu-bfs", instances=1)
    with pytest.raises(BackendUnavailable, match="needs a CUDA GPU"):
        list(Sweep(g, g.make_points(["ba"], [100, 200]), scheduler="none").rows())


def test_cli_helpers_refuse_flag_mixups():
    from kernels.sweep.commands import ch_sweep, file_mode
    with pytest.raises(InvalidParameter, match="exclude"):
        file_mode(True, True, "x.csv")
    with pytest.raises(InvalidParameter, match="--csv"):
        file_mode(True, False, None)
    with pytest.raises(InvalidParameter, match="at least one --vary"):
        ch_sweep([], scheduler="none")
    with pytest.raises(InvalidParameter, match="unknown Cahn–Hilliard parameter"):
        ch_sweep(["seed=1..2"], scheduler="none", colour=3)


def test_ch_sweep_command_summary(tmp_path):
    from kernels.sweep.commands import ch_sweep
    seen = []
    out = ch_sweep(["mean=-0.3:0.3:2", "seed=1..2"], steps=60, record_every=20, size=16, backend="cpu",
                   csv=tmp_path / "ch.csv", scheduler="none", report=lambda r, st: seen.append(st["finished"]))
    assert out["points"] == 4 and out["ran"] == 4 and seen == [1, 2, 3, 4]
    [lo, hi] = out["summary"]["coarsening_exponent"]
    assert lo["mean"] == pytest.approx(np.mean([r["coarsening_exponent"] for r in out["rows"] if r["mean"] < 0]))
    assert lo["n"] == 2 and lo["std"] > 0 and lo["mean"] < 1 and hi["n"] == 2
    again = ch_sweep(["mean=-0.3:0.3:2", "seed=1..2"], steps=60, record_every=20, size=16, backend="cpu",
                     csv=tmp_path / "ch.csv", resume=True, scheduler="none")
    assert again["ran"] == 0 and again["skipped"] == 4


# ------------------------------------------------------------------ adapters vs the systems' serial runs

@pytest.mark.parametrize("connectivity,max_redraws", [("redraw", 10), ("giant", 10)])
def test_graph_reproduce_adapter_equals_run_sweep(connectivity, max_redraws):
    from kernels import backend as bk
    from kernels.graphs.experiments import reproduce as rp
    from kernels.sweep.graph_tasks import reproduce_sweep
    seed = int(RNG.integers(1, 10**6))
    kw = dict(instances=2, method="cpu-sampled", seed0=seed, max_redraws=max_redraws, sources=8,
              connectivity=connectivity, clustering=True)
    ref = list(rp.run_sweep(["alpha", "ba"], [60, 120], backend=bk.select("cpu"), **kw))
    got = list(reproduce_sweep(["alpha", "ba"], [60, 120], backend="cpu", scheduler="none", **kw))
    key = lambda r: (r.type, r.n, r.instance)                         # noqa: E731
    strip = lambda r: {k: v for k, v in r.to_dict().items() if k != "seconds"}   # noqa: E731
    assert [strip(r) for r in sorted(got, key=key)] == [strip(r) for r in sorted(ref, key=key)]


def test_graph_clustering_adapter_equals_run_cc_sweep():
    from kernels import backend as bk
    from kernels.graphs.experiments import cc_timing as cc
    from kernels.sweep.graph_tasks import clustering_sweep
    seed = int(RNG.integers(1, 10**6))
    sizes = {"ws": [200, 300], "ba": [200, 260]}
    ref = list(cc.run_cc_sweep(sizes, ["cpu", "cpu-threads"], 1, backend=bk.select("cpu"), seed=seed, workers=2))
    got = list(clustering_sweep(sizes, ["cpu", "cpu-threads"], 1, backend="cpu", seed=seed, threads=2, scheduler="none"))
    pick = lambda rows: sorted((r.family, r.n, r.method, r.m, r.t, r.p, r.agrees) for r in rows)   # noqa: E731
    assert pick(got) == pick(ref) and all(r.agrees for r in got)


def test_graph_clustering_task_passes_the_gpus_of_the_multi_methods():
    from kernels import backend as bk
    from kernels.graphs.experiments import cc_timing as cc
    from kernels.sweep.graph_tasks import ClusteringTimingTask, clustering_sweep
    seed = int(RNG.integers(1, 10**6))
    sizes = {"ws": [200, 300]}
    ref = list(cc.run_cc_sweep(sizes, ["cpu", "multi-arc"], 1, backend=bk.select("cpu"), seed=seed, gpus=3))
    got = list(clustering_sweep(sizes, ["cpu", "multi-arc"], 1, backend="cpu", seed=seed, gpus=3, scheduler="none"))
    pick = lambda rows: sorted((r.n, r.method, r.t, r.p, r.gpus) for r in rows)   # noqa: E731
    assert pick(got) == pick(ref) and {r.gpus for r in got if r.method == "multi-arc"} == {3}
    assert "gpus" not in ClusteringTimingTask(methods=["cpu"]).fixed          # other sweeps keep their identity
    with pytest.raises(InvalidParameter, match="gpus"):
        ClusteringTimingTask(methods=["multi-arc"], gpus=0)


def test_unknown_task_name():
    with pytest.raises(InvalidParameter, match="unknown sweep task"):
        make_task("nope")
    assert isinstance(InvalidParameter("x"), ExplorerError)


def test_systems_do_not_import_the_sweep_layer():
    root = ROOT / "kernels"
    for sysdir in ("cahn_hilliard", "graphs", "flint", "occupancy", "rng"):
        for f in (root / sysdir).rglob("*.py"):
            assert "sweep" not in "".join(ln for ln in f.read_text().splitlines(True)
                                          if ln.lstrip().startswith(("import", "from"))), f


def test_a_timed_out_point_does_not_wait_for_its_worker_to_restart():
    """A worker stuck in native code (a GPU kernel) can keep its nanny long: the restart runs in the
    background, so the point is recorded failed at once and the sweep goes on (a real hang on the GPU
    machine: the suite stopped for minutes with every other case done)."""
    import threading
    import time

    task = make_task("ch", steps=20, record_every=10, size=16, backend="cpu")
    sweep = Sweep(task, [{"seed": 1}, {"seed": 2}], scheduler="none", timeout=0.5)
    release, asked = threading.Event(), []

    class Future:
        def __init__(self, key):
            self.key = key

        def done(self):
            return False

    class Client:
        def processing(self):
            return {"tcp://w1": ["a"], "tcp://w2": ["b"]}

        def cancel(self, futures, force=False):
            asked.append(("cancel", sorted(f.key for f in futures)))

        def restart_workers(self, workers, timeout=None, raise_for_error=True):
            asked.append(("restart", sorted(workers)))
            release.wait(30)                   # the nanny that does not come back

    class Connection:
        client = Client()
    sweep.connection = Connection()
    late, fresh = Future("a"), Future("b")
    sweep._futures = {late: (0, time.perf_counter() - 5.0), fresh: (1, time.perf_counter())}
    t0 = time.perf_counter()
    rows = list(sweep._expire(set()))
    assert time.perf_counter() - t0 < 0.5
    assert [r["point"] for r in rows] == [0] and rows[0]["error"].startswith("timed out after 0.5 s")
    assert list(sweep._futures) == [fresh]
    for _ in range(100):
        if len(asked) == 2:
            break
        time.sleep(0.01)
    assert asked == [("cancel", ["a"]), ("restart", ["tcp://w1"])]
    release.set()


def test_points_wait_for_a_restarted_gpu_worker_and_go_to_its_new_address():
    """A restarted worker comes back at a new address: points pinned to the old one never ran (the
    suite on a one-GPU machine stopped after its first time-out).  While the restart runs nothing is
    submitted; then the GPU workers are asked for again."""
    import threading
    import time

    task = make_task("ch", steps=20, record_every=10, size=16, backend="cpu")
    sweep = Sweep(task, [{"seed": 1}], scheduler="none", timeout=0.5)
    release = threading.Event()

    class Future:
        key = "a"

        def done(self):
            return False

    class Client:
        def processing(self):
            return {"tcp://old": ["a"]}

        def cancel(self, futures, force=False):
            pass

        def restart_workers(self, workers, timeout=None, raise_for_error=True):
            release.wait(30)

    class Connection:
        client = Client()
        answers = [[], ["tcp://new"]]

        def gpu_workers(self):
            return self.answers.pop(0), "starting"
    sweep.connection = Connection()
    sweep._gpu_workers = ["tcp://old"]
    sweep._futures = {Future(): (0, time.perf_counter() - 5.0)}
    assert len(list(sweep._expire(set()))) == 1
    assert not sweep._gpu_workers_ready()             # the restart is still running
    release.set()
    for _ in range(100):
        if sweep._restarted.is_set():
            break
        time.sleep(0.01)
    assert not sweep._gpu_workers_ready()             # ended, but no GPU worker answers yet
    assert sweep._gpu_workers_ready() and sweep._gpu_workers == ["tcp://new"]
    assert sweep._gpu_workers_ready()                 # nothing to ask any more
