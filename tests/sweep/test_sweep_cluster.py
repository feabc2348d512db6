"""Sweeps on real multi-process Dask clusters on 127.0.0.1: a worker killed mid-sweep (Dask
reschedules; every point is written once), a client killed mid-sweep and resumed (only the missing
points run), a GPU task on workers without GPUs.  Loopback only, free ports, bounded in time; every
process started here is stopped at the end."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kernels.errors import BackendUnavailable
from kernels.sweep import Sweep, make_task, product, read_rows
from support.paths import ROOT

pytest.importorskip("distributed")
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
       "GSE_BACKEND": "cpu", "OMP_NUM_THREADS": "1", "DASK_CONFIG": str(ROOT / "resources" / "dask")}


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _start(args, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=ROOT, env=ENV, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=open(log, "wb"), start_new_session=True)


def _stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)


def _points(n):
    seeds = [int(s) for s in np.random.default_rng().choice(10**6, n, replace=False)]
    return product({"seed": seeds})


@pytest.mark.timeout(150)
def test_tcp_cluster_survives_a_killed_worker(tmp_path):
    from distributed import Client
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard", "--no-show"],
                    tmp_path / "scheduler.log")]
    try:
        for i in range(2):
            procs.append(_start(["worker", addr, "--host", "127.0.0.1", "--nthreads", "1", "--nworkers", "1",
                                 "--no-dashboard", "--death-timeout", "30", "--name", f"w{i}"],
                                tmp_path / f"worker{i}.log"))
        with Client(addr, timeout=30, set_as_default=False) as c:
            c.wait_for_workers(2, timeout=60)
            pids = {w: pid for w, pid in c.run(os.getpid).items()}
            # the README's worker settings (resources/dask/worker.yaml) reached the workers
            assert set(c.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_").values()) == {None}
        # a GPU task on workers without GPUs: refused before any point runs, nothing written
        gpu_out = tmp_path / "gpu.csv"
        with pytest.raises(BackendUnavailable, match=f"any worker of {addr} has none"):
            list(Sweep(make_task("ch", steps=10, size=16, backend="gpu"), [{"seed": 1}], path=gpu_out,
                       scheduler=addr).rows())
        assert not gpu_out.exists()
        # the sweep: one worker is killed (SIGKILL, nanny and all) after the second row
        task = make_task("ch", steps=2000, record_every=100, size=64, backend="cpu")
        pts = _points(12)
        out = tmp_path / "ch.csv"
        sweep = Sweep(task, pts, path=out, scheduler=addr)
        got, killed = [], None
        for row in sweep.rows():
            got.append(row)
            if len(got) == 2:
                killed = procs[1]
                os.killpg(killed.pid, signal.SIGKILL)
        assert killed is not None and killed.wait(10) is not None
        assert sorted(r["point"] for r in got) == list(range(len(pts)))      # every point exactly once
        rows = read_rows(out)[2]
        assert sorted(r["point"] for r in rows) == list(range(len(pts)))     # no duplicate, none missing
        assert all(r["error"] is None and np.isfinite(r["length_scale_final"]) for r in rows)
        assert {r["seed"] for r in rows} == {p["seed"] for p in pts}
        survivor = [str(pid) for pid in pids.values()]
        assert all(r["worker"].rsplit(":", 1)[1] in survivor for r in rows)
        assert sweep.connection is None
        # Cancel mid-sweep: rows() returns, and the scheduler is left with none of the sweep's tasks
        sweep = Sweep(task, _points(12), scheduler=addr)
        t0 = time.monotonic()
        n = 0
        for _row in sweep.rows():
            n += 1
            sweep.cancel()
        assert n < 12 and time.monotonic() - t0 < 30 and sweep.connection is None
        with Client(addr, timeout=30, set_as_default=False) as c:
            deadline = time.monotonic() + 20
            while c.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert c.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0
    finally:
        _stop(procs)
    assert all(p.poll() is not None for p in procs)


SCRIPT = """
import sys
from kernels.sweep import Sweep, make_task
task = make_task("ch", steps=400, record_every=100, size=48, backend="cpu")
pts = [{"seed": s} for s in map(int, sys.argv[2].split(","))]
for row in Sweep(task, pts, path=sys.argv[1], mode=sys.argv[3], scheduler="none").rows():
    print(row["point"], flush=True)
"""


@pytest.mark.timeout(120)
def test_killed_client_then_resume_runs_only_the_missing_points(tmp_path):
    out = tmp_path / "ch.csv"
    pts = _points(10)
    seeds = ",".join(str(p["seed"]) for p in pts)
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), seeds, "new"], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(3):                                   # three points finished …
            assert proc.stdout.readline()
        os.killpg(proc.pid, signal.SIGKILL)                  # … then the client dies
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    before = {r["point"] for r in read_rows(out)[2]}
    assert 3 <= len(before) < len(pts)
    task = make_task("ch", steps=400, record_every=100, size=48, backend="cpu")
    sweep = Sweep(task, pts, path=out, mode="resume", scheduler="none")
    ran = [r["point"] for r in sweep.rows()]
    assert sorted(ran) == sorted(set(range(len(pts))) - before)          # only the missing points ran
    assert sweep.skipped == len(before)
    rows = read_rows(out)[2]
    assert sorted(r["point"] for r in rows) == list(range(len(pts)))
    # and the numbers equal a fresh serial run's
    ref = {r["point"]: r["length_scale_final"] for r in Sweep(task, pts, scheduler="none").rows()}
    assert {r["point"]: r["length_scale_final"] for r in rows} == ref


def test_a_task_that_shares_the_gpu_gets_a_worker_per_core_not_per_gpu(monkeypatch):
    """The SBML suite on a GPU engine (one small launch per case; parsing and NVRTC on the CPU) ran on
    the one worker of a one-GPU machine, whatever --workers said; a task with ``shares_gpu`` gets
    ``workers`` processes sharing the GPU.  Here the GPU count is faked (the processes are plain)."""
    from kernels.sweep import cluster as cl
    from kernels.sweep.suite_tasks import SBMLCaseTask
    assert SBMLCaseTask.shares_gpu and not make_task("ch", steps=1, size=16).shares_gpu
    monkeypatch.setattr(cl, "local_gpu_count", lambda: 1)
    with cl.connect("local", 3, gpu=True, gpu_shared=True) as conn:
        assert conn.kind == "local-gpu" and len(conn.workers()) == 3 and conn.threads() == 3
        assert "3 worker processes share GPU 0" in conn.notes[0]
