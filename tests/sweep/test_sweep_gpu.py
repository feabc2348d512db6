"""Sweeps on a local GPU cluster (dask_cuda.LocalCUDACluster, one worker per GPU) against the serial
runs on this process's GPU: paper 000's reproduce sweep (gpu-bfs) and Cahn–Hilliard runs, on fresh
random seeds; the numbers must be equal (timings aside)."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("distributed")


def _same(a, b):
    na = lambda v: "nan" if isinstance(v, float) and math.isnan(v) else v       # noqa: E731
    return {k: na(v) for k, v in a.items()} == {k: na(v) for k, v in b.items()}


def test_gpu_cluster_reproduce_and_ch_equal_serial(rng):
    from kernels import backend as bk
    from kernels.graphs.experiments import reproduce as rp
    from kernels.sweep import Sweep, make_task, product
    from kernels.sweep.graph_tasks import reproduce_sweep
    be = bk.select("gpu")
    seed = int(rng.integers(1, 10**6))
    kw = dict(instances=2, method="gpu-bfs", seed0=seed, max_redraws=10, connectivity="redraw", clustering=True)
    ref = list(rp.run_sweep(["alpha", "ba"], [300, 700], backend=be, **kw))
    holder: list = []
    got = list(reproduce_sweep(["alpha", "ba"], [300, 700], backend="gpu", scheduler="local", sweep_out=holder, **kw))
    key = lambda r: (r.type, r.n, r.instance)                                    # noqa: E731
    drop = lambda r: {k: v for k, v in r.to_dict().items() if k != "seconds"}   # noqa: E731
    assert len(got) == len(ref) == 8
    assert all(_same(drop(x), drop(y)) for x, y in zip(sorted(got, key=key), sorted(ref, key=key)))
    task = make_task("ch", steps=200, record_every=50, size=128, backend="gpu")
    pts = product({"mean": [float(rng.uniform(-0.5, 0.5))], "seed": [int(s) for s in rng.integers(1, 10**6, 2)]})
    serial = list(Sweep(task, pts, scheduler="none").rows())
    dist = list(Sweep(task, pts, scheduler="local").rows())
    skip = ("worker", "task_seconds", "compute_seconds")
    strip = lambda r: {k: v for k, v in r.items() if k not in skip}             # noqa: E731
    s = sorted(map(strip, serial), key=lambda r: r["point"])
    d = sorted(map(strip, dist), key=lambda r: r["point"])
    assert all(_same(x, y) for x, y in zip(s, d)) and all(r["backend"] == "gpu" for r in d)
    assert all(np.isfinite(r["length_scale_final"]) for r in d)
