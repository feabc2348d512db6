"""Sweeps on Dask (kernels/sweep): parallel speed-up, scheduling overhead, and the GPU Table II sweep.

CPU part (default):
  1. ``--runs`` Cahn–Hilliard runs (``--size``², ``--steps`` RK2 steps, float32, NumPy) varying the
     mean composition and the seed: serial in this process (``--scheduler none``) vs an embedded
     LocalCluster of ``--workers`` single-threaded worker processes; speed-up = serial / cluster
     wall time (cluster start-up counted).  The rows must be equal (every number but timings).
  2. Scheduling overhead per task: ``--empty`` empty tasks through the same Sweep (result CSV with
     one fsync'ed append per row included), on one worker and on ``--workers`` workers: wall time
     per task, cluster start-up excluded.

GPU part (``--gpu``): paper 000's Table II sweep (kernels.graphs.experiments.reproduce.run_sweep, gpu-bfs,
``--sizes``, ``--instances``) serial on one GPU vs the same sweep through ``--scheduler local``
(dask_cuda.LocalCUDACluster: one worker per GPU) — the numbers (mean path, diameter, clustering,
edges, seeds, redraws) must match; wall times side by side (cluster start-up shown apart).  Then a
few Cahn–Hilliard GPU runs, serial vs the GPU cluster, rows equal.

Usage:  python benchmarks/sweeps.py [--runs 64 --size 256 --steps 2000 --workers 2 --empty 400]
        python benchmarks/sweeps.py --quick [--workers 1 --runs 4]   (the test suite's dry run)
        python benchmarks/sweeps.py --gpu [--sizes 1000,5000,10000,15000,20000 --instances 3]
(markdown also to $OUT/sweeps_bench.md)
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels.sweep import Sweep, SweepTask, make_task, product  # noqa: E402

LINES: list[str] = []


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


class EmptyTask(SweepTask):
    """A task that does nothing: what remains of a sweep's time is its overhead."""

    name = "empty"
    columns = ("x",)

    def run(self, point):
        return {"x": point["i"]}


def _numbers(rows, skip=("worker", "task_seconds", "compute_seconds", "seconds")):
    """The rows' numbers for an equality check (NaN compared as text)."""
    nan = lambda v: "nan" if isinstance(v, float) and v != v else v     # noqa: E731
    return sorted((tuple((k, nan(v)) for k, v in r.items() if k not in skip) for r in rows))


def warm_up(dev: str, method: str) -> None:
    """First calls (CUDA context, kernel compilation or cache load) of the graph and CH kernels."""
    from kernels import backend as bk
    from kernels.cahn_hilliard import CahnHilliard, CHParams
    from kernels.graphs.data import generators as G
    from kernels.graphs.apsp import apsp
    from kernels.graphs.algorithms.clustering import global_clustering
    be = bk.select(dev)
    for g in (G.ring_lattice(600, 2), G.barabasi_albert(600, 5, 1)):
        apsp(g, method, backend=be)
        global_clustering(g, backend=be)
    CahnHilliard(CHParams(size=64), be).step(10)
    be.synchronize()


def timed_sweep(task, points, scheduler, workers=None, path=None, warm=None):
    """(rows, seconds including cluster start, seconds of the rows alone); ``warm`` = warm_up's
    arguments, run on every worker before the rows are timed."""
    t0 = time.perf_counter()
    sw = Sweep(task, points, path=path, scheduler=scheduler, workers=workers)
    sw.open()
    if warm and sw.connection is not None and sw.connection.client is not None:
        sw.connection.client.run(warm_up, *warm)
    t1 = time.perf_counter()
    rows = list(sw.rows())
    t2 = time.perf_counter()
    return rows, t2 - t0, t2 - t1


def cpu_part(a):
    out(f"### Cahn–Hilliard sweep: {a.runs} runs of {a.size}² × {a.steps} RK2 steps (float32, NumPy), "
        f"serial vs {a.workers} local workers")
    out()
    n_mean = max(1, a.runs // 4)
    pts = product({"mean": list(np.linspace(-0.6, 0.6, n_mean)), "seed": list(range(1, a.runs // n_mean + 1))})
    task = make_task("ch", steps=a.steps, record_every=100, size=a.size, backend="cpu")
    with tempfile.TemporaryDirectory() as d:
        serial, ts, _ = timed_sweep(task, pts, "none", path=os.path.join(d, "serial.csv"))
        dist, td, td_rows = timed_sweep(task, pts, "local", a.workers, path=os.path.join(d, "local.csv"))
    same = _numbers(serial) == _numbers(dist)
    out("| run | points | wall s | s per point | speed-up |")
    out("|---|---|---|---|---|")
    out(f"| serial (`--scheduler none`) | {len(pts)} | {ts:.1f} | {ts / len(pts):.3f} | 1.00× |")
    out(f"| LocalCluster, {a.workers} workers (start-up included) | {len(pts)} | {td:.1f} | {td / len(pts):.3f} | "
        f"**{ts / td:.2f}×** |")
    out(f"| the same, start-up excluded | {len(pts)} | {td_rows:.1f} | {td_rows / len(pts):.3f} | {ts / td_rows:.2f}× |")
    out()
    out(f"Rows equal to the serial run's (every number but timings): **{same}**; mean task time serial "
        f"{np.mean([r['task_seconds'] for r in serial]):.3f} s, on the cluster "
        f"{np.mean([r['task_seconds'] for r in dist]):.3f} s.")
    out()
    out(f"### Scheduling overhead: {a.empty} empty tasks (result CSV, one fsync'ed append per row)")
    out()
    out("| workers | wall s (start-up excluded) | ms per task |")
    out("|---|---|---|")
    pts = [{"i": i} for i in range(a.empty)]
    for w in sorted({1, a.workers}):
        with tempfile.TemporaryDirectory() as d:
            rows, _t, t_rows = timed_sweep(EmptyTask(), pts, "local", w, path=os.path.join(d, "e.csv"))
        assert len(rows) == a.empty
        out(f"| {w} | {t_rows:.2f} | **{1e3 * t_rows / a.empty:.1f}** |")
    with tempfile.TemporaryDirectory() as d:
        _r, _t, t_rows = timed_sweep(EmptyTask(), pts, "none", path=os.path.join(d, "e.csv"))
    out(f"| serial (`none`, CSV appends only) | {t_rows:.2f} | {1e3 * t_rows / a.empty:.2f} |")
    out()
    return same


def gpu_part(a):
    from kernels import backend as bk
    from kernels.graphs.experiments import reproduce as rp
    from kernels.sweep import cluster as cl
    from kernels.sweep.graph_tasks import reproduce_sweep
    dev = "cpu" if a.dry_run else "gpu"
    method = "cpu" if a.dry_run else "gpu-bfs"
    be = bk.select(dev)
    sizes = [int(s) for s in a.sizes.split(",")]
    types = ["alpha-ring", "alpha", "ba"]
    out(f"### Paper 000 Table II sweep on the GPU: serial vs `--scheduler local` — {be.describe()}")
    out()
    try:
        import dask_cuda
        how = f"dask_cuda {dask_cuda.__version__} LocalCUDACluster"
    except Exception as exc:  # noqa: BLE001
        how = f"LocalCluster (dask_cuda not importable: {type(exc).__name__})"
    out(f"{len(types)} types × N = {a.sizes} × {a.instances} instances, method {method}, clustering on, "
        f"connectivity redraw; {cl.local_gpu_count()} GPU(s); cluster: {how}.")
    out()
    warm_up(dev, method)                                   # compile / first calls before timing
    kw = dict(instances=a.instances, method=method, seed0=7, max_redraws=10, connectivity="redraw",
              clustering=True)
    t0 = time.perf_counter()
    serial = list(rp.run_sweep(types, sizes, backend=be, **kw))
    ts = time.perf_counter() - t0
    holder: list = []
    t0 = time.perf_counter()
    it = reproduce_sweep(types, sizes, backend=dev, scheduler="local", sweep_out=holder, **kw)
    holder[0].open()
    holder[0].connection.client.run(warm_up, dev, method)      # the same warm-up on every worker
    t1 = time.perf_counter()
    dist = list(it)
    t2 = time.perf_counter()
    st = {"kind": holder[0].connection.kind if holder[0].connection else "closed"}
    key = lambda r: (r.type, r.n, r.instance)                      # noqa: E731
    same = (_numbers([r.to_dict() for r in sorted(serial, key=key)])
            == _numbers([r.to_dict() for r in sorted(dist, key=key)]))
    apsp_s = sum(r.seconds for r in serial), sum(r.seconds for r in dist)
    out("| run | instances | wall s | sum of per-instance APSP s | vs serial |")
    out("|---|---|---|---|---|")
    out(f"| serial `run_sweep` | {len(serial)} | {ts:.2f} | {apsp_s[0]:.3f} | 1.000 |")
    out(f"| `--scheduler local`, rows only | {len(dist)} | {t2 - t1:.2f} | {apsp_s[1]:.3f} | **{(t2 - t1) / ts:.3f}** |")
    out(f"| the same + cluster start-up and worker warm-up ({t1 - t0:.1f} s) | {len(dist)} | {t2 - t0:.2f} | | {(t2 - t0) / ts:.3f} |")
    out()
    out(f"Numbers equal to the serial run's (mean path, diameter, clustering, m, seeds, redraws): **{same}**.")
    out()
    fits_s, fits_d = rp.fit_exponents(serial), rp.fit_exponents(dist)
    out("Exponents serial / cluster: " + "; ".join(f"{t} {fits_s[t]:.4f} / {fits_d[t]:.4f}" for t in types))
    out()
    # Cahn–Hilliard on the GPU workers
    task = make_task("ch", steps=1000, record_every=100, size=128 if a.dry_run else 512, backend=dev)
    pts = product({"mean": [-0.4, 0.4], "seed": [1, 2]})
    s_rows, s_t, _ = timed_sweep(task, pts, "none")        # (compiled by the warm-up above)
    d_rows, d_t, d_rows_t = timed_sweep(task, pts, "local", warm=(dev, method))
    out(f"Cahn–Hilliard {task.fixed['size']}² × 1000 steps on the {dev.upper()}, {len(pts)} runs: serial {s_t:.2f} s, GPU cluster "
        f"{d_t:.2f} s ({d_rows_t:.2f} s without start-up); rows equal: **{_numbers(s_rows) == _numbers(d_rows)}**; "
        f"backends {sorted({r['backend'] for r in d_rows})}.")
    return same and st is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=None, help="CH runs (default 64; --quick 8)")
    ap.add_argument("--size", type=int, default=None, help="CH grid side (default 256; --quick 32)")
    ap.add_argument("--steps", type=int, default=None, help="RK2 steps a run (default 2000; --quick 50)")
    ap.add_argument("--workers", type=int, default=None, help="local workers (default 2; the test suite's "
                    "dry run takes 1: the overhead table then starts one cluster, not two)")
    ap.add_argument("--empty", type=int, default=None, help="empty tasks (default 400; --quick 20)")
    ap.add_argument("--gpu", action="store_true", help="the GPU part instead of the CPU part")
    ap.add_argument("--sizes", default="1000,5000,10000,15000,20000")
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--dry-run", action="store_true", help="the GPU part's code on the CPU (method cpu), small")
    ap.add_argument("--quick", action="store_true", help="8 small runs, 2 workers (a smoke test of the CPU "
                    "part); options given explicitly are kept")
    a = ap.parse_args()
    for key, full, quick in (("runs", 64, 8), ("size", 256, 32), ("steps", 2000, 50), ("workers", 2, 2),
                             ("empty", 400, 20)):
        if getattr(a, key) is None:
            setattr(a, key, quick if a.quick else full)
    import dask
    import distributed
    out(f"## Sweeps on Dask (benchmarks/sweeps.py) — {time.strftime('%Y-%m-%d')}, {platform.node()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, dask {dask.__version__}, "
        f"distributed {distributed.__version__}")
    out()
    ok = gpu_part(a) if a.gpu else cpu_part(a)
    save_markdown("sweeps_bench.md", "\n".join(LINES))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
