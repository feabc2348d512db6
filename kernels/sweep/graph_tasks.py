"""The graph sweeps on a cluster: paper 000's mean-path sweep (kernels.graphs.experiments.reproduce) and paper
001's clustering timings (kernels.graphs.experiments.cc_timing), fanned out over Dask workers.

* ``graph-reproduce`` — a point is one instance ``{type, n, instance}`` when instances are
  independent (connectivity "giant", ``max_redraws`` 0 or one instance: instance i is drawn from
  seed0 + i), else one (type, N) ``{type, n}`` with all its instances: in "redraw" mode instance
  i + 1 starts after the seeds instance i used, so the chain stays on one worker and the numbers
  equal the serial run's.  Each instance's ``seconds`` is its own APSP time on its worker.
* ``graph-clustering`` — a point is one (family, V): one graph, every method timed on it
  (``cc_timing.point_rows``), so the methods' exact agreement is checked on the same graph; a
  method runs once untimed per worker process before its first timing.

:func:`reproduce_sweep` and :func:`clustering_sweep` yield the systems' own row objects
(``SweepRow``, ``CCRow``) like the serial ``run_sweep`` / ``run_cc_sweep``, in completion order
(``Experiment.row_from_dict`` of ``reproduce.FIG14`` / ``cc_timing.TIMINGS``; any other paper
experiment runs on a cluster through the generic ``experiment`` task, :mod:`.experiment_task`).
Timings stay per task; for comparable times give each worker its own GPU (LocalCUDACluster does)
or, on CPUs, as many workers as there are free cores.  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: a system's kernels load when its task runs. This package registers every
# system's task: hoisted, `import kernels.sweep` (the GUI's sweep panels) would load all three systems.
from dataclasses import fields
from typing import Iterator

from ..errors import InvalidParameter
from .run import Sweep
from .base import SweepTask, gpu_wanted, worker_backend
from .experiment_task import rows_of
from ..errors import BackendUnavailable

#: workers in a process keep their warm-up state across points (first-call costs untimed)
_WARM: set = {"networkx"}


class GraphReproduceTask(SweepTask):
    """Paper 000 Fig. 14 / Table II: mean shortest path (and clustering) of one instance or one
    (type, N) group (see the module docstring)."""

    name = "graph-reproduce"

    def __init__(self, method: str = "cpu-sampled", backend: str = "auto", instances: int = 3, seed0: int = 1,
                 max_redraws: int = 10, sources: int = 64, params: dict | None = None, connectivity: str = "redraw",
                 clustering: bool = True, reference: str | None = None):
        from ..graphs.experiments import reproduce as rp
        from ..graphs.apsp import METHODS
        if method not in tuple(METHODS) + ("cpu-sampled",):
            raise InvalidParameter(f"unknown method {method!r}: use {', '.join(tuple(METHODS) + ('cpu-sampled',))}")
        if connectivity not in rp.CONNECTIVITY:
            raise InvalidParameter(f"connectivity must be one of {', '.join(rp.CONNECTIVITY)} (got {connectivity!r})")
        if int(instances) < 1 or int(max_redraws) < 0:
            raise InvalidParameter("instances must be ≥ 1 and max_redraws ≥ 0")
        for t, ov in (params or {}).items():
            rp.alpha_params(t, ov)
        super().__init__(method=method, backend=backend, instances=int(instances), seed0=int(seed0),
                         max_redraws=int(max_redraws), sources=int(sources), params=params or {},
                         connectivity=connectivity, clustering=bool(clustering), reference=reference or None)
        self.columns = tuple(f.name for f in fields(rp.SweepRow))

    @property
    def independent(self) -> bool:
        f = self.fixed
        return f["connectivity"] == "giant" or f["max_redraws"] == 0 or f["instances"] == 1

    def needs_gpu(self) -> bool:
        from ..graphs.apsp import method_names
        return self.fixed["method"] in method_names(gpu=True) or self.fixed["backend"] == "gpu"

    def wants_gpu(self) -> bool:
        return self.needs_gpu() or (self.fixed["backend"] == "auto" and gpu_wanted("auto"))

    def make_points(self, types, sizes) -> list[dict]:
        """The points in the serial order: per type, per N, (per instance)."""
        from ..graphs.experiments import reproduce as rp
        for t in types:
            rp.graph_type(t)                                   # unknown types refused here
        sizes = sorted(int(n) for n in sizes)
        if not sizes or sizes[0] < rp.MIN_N:
            raise InvalidParameter(f"sizes must be integers ≥ {rp.MIN_N}")
        rp.check_reference(self.fixed["reference"], sizes)
        if self.independent:
            return [{"type": t, "n": n, "instance": i} for t in types for n in sizes
                    for i in range(self.fixed["instances"])]
        return [{"type": t, "n": n} for t in types for n in sizes]

    def check_point(self, point: dict) -> dict:
        from ..graphs.experiments import reproduce as rp
        if point.get("type") not in rp.PAPER_EXPONENTS or not isinstance(point.get("n"), int):
            raise InvalidParameter(f"a graph-reproduce point is {{type, n[, instance]}} (got {point})")
        return dict(point)

    def run(self, point: dict) -> list[dict]:
        from ..graphs.experiments import reproduce as rp
        f = self.fixed
        be = worker_backend(f["backend"])
        i = point.get("instance")
        rows = list(rp.run_sweep([point["type"]], [point["n"]], 1 if i is not None else f["instances"],
                                 method=f["method"], backend=be, seed0=f["seed0"] + (i or 0),
                                 max_redraws=f["max_redraws"], sources=f["sources"], params=f["params"],
                                 connectivity=f["connectivity"], clustering=f["clustering"],
                                 reference=f["reference"]))
        if i is not None:
            for r in rows:
                r.instance = i
        return [r.to_dict() for r in rows]


class ClusteringTimingTask(SweepTask):
    """Paper 001 Figs. 14–15: every method's clustering count timed on one (family, V) graph."""

    name = "graph-clustering"

    def __init__(self, methods=("cpu",), repeats=5, backend: str = "auto", seed: int = 1, threads: int | None = None,
                 gpus: int = 2):
        from ..graphs.experiments import cc_timing as cc
        methods = list(dict.fromkeys(methods))
        for m in methods:
            if m not in cc.CLUSTERING_METHODS:
                raise InvalidParameter(f"unknown clustering method {m!r}: use one of {', '.join(cc.CLUSTERING_METHODS)}")
        reps = {m: int(repeats.get(m, 1) if isinstance(repeats, dict) else repeats) for m in methods}
        if not methods or min(reps.values()) < 1:
            raise InvalidParameter("choose at least one method, each with repeats ≥ 1")
        threads = int(threads or cc.default_workers())
        if threads < 1:
            raise InvalidParameter(f"threads must be ≥ 1 (got {threads})")
        fixed = dict(methods=methods, repeats=reps, backend=backend, seed=int(seed), threads=threads)
        if any(m in cc.MULTI_METHODS for m in methods):    # only then (the identity of other sweeps is unchanged)
            fixed["gpus"] = cc.check_gpus(gpus)
        super().__init__(**fixed)
        self.columns = tuple(f.name for f in fields(cc.CCRow))

    def needs_gpu(self) -> bool:
        from ..graphs.experiments import cc_timing as cc
        return any(m in cc.GPU_METHODS for m in self.fixed["methods"]) or self.fixed["backend"] == "gpu"

    def make_points(self, sizes: dict) -> list[dict]:
        from ..graphs.experiments import cc_timing as cc
        sizes = cc.check_sizes(sizes)
        top = {f: ns for f, ns in sizes.items()}
        if "networkx" in self.fixed["methods"] and max(max(v) for v in top.values()) > cc.NETWORKX_MAX_V:
            raise InvalidParameter(f"networkx would need too much memory above {cc.NETWORKX_MAX_V:,} vertices")
        return [{"family": f, "n": n} for f, ns in sizes.items() for n in ns]

    def check_point(self, point: dict) -> dict:
        from ..graphs.experiments import cc_timing as cc
        if point.get("family") not in cc.FAMILIES or not isinstance(point.get("n"), int):
            raise InvalidParameter(f"a graph-clustering point is {{family, n}} (got {point})")
        return dict(point)

    def run(self, point: dict) -> list[dict]:
        from ..graphs.experiments import cc_timing as cc
        f = self.fixed
        be = worker_backend(f["backend"])
        if self.needs_gpu() and not be.is_gpu:
            raise BackendUnavailable(f"GPU clustering methods need a GPU; this worker has none ({be.notice})")
        return [r.to_dict() for r in cc.point_rows(point["family"], point["n"], f["methods"], f["repeats"], be,
                                                    f["seed"], f["threads"], _WARM, gpus=f.get("gpus", 2))]




def reproduce_sweep(types, sizes, instances: int = 3, method: str = "cpu-sampled", backend: str = "auto",
                    seed0: int = 1, max_redraws: int = 10, sources: int = 64, params: dict | None = None,
                    connectivity: str = "redraw", clustering: bool = True, reference: str | None = None,
                    scheduler: str = "local", workers: int | None = None, path=None, mode: str = "new",
                    sweep_out: list | None = None) -> Iterator:
    """``reproduce.run_sweep`` on a cluster: yields ``SweepRow`` objects as instances finish (any
    order).  ``backend`` is the workers' choice (auto / cpu / gpu); ``path`` also appends each row
    to a sweep result file (``mode``: new / resume / overwrite).  ``sweep_out`` (a list) receives
    the :class:`Sweep`, for cancel and status."""
    from ..graphs.experiments.reproduce import FIG14
    task = GraphReproduceTask(method=method, backend=backend, instances=instances, seed0=seed0,
                              max_redraws=max_redraws, sources=sources, params=params, connectivity=connectivity,
                              clustering=clustering, reference=reference)
    sweep = Sweep(task, task.make_points(types, sizes), path=path, mode=mode, scheduler=scheduler, workers=workers)
    if sweep_out is not None:
        sweep_out.append(sweep)
    return rows_of(sweep, FIG14)         # a field added later keeps its default


def clustering_sweep(sizes: dict, methods=("cpu",), repeats=5, backend: str = "auto", seed: int = 1,
                     threads: int | None = None, scheduler: str = "local", workers: int | None = None,
                     path=None, mode: str = "new", sweep_out: list | None = None, gpus: int = 2) -> Iterator:
    """``cc_timing.run_cc_sweep`` on a cluster: yields ``CCRow`` objects per (family, V) as they
    finish.  ``threads``: threads of cpu-threads; ``gpus``: devices of the multi-* methods (on one
    worker); ``workers``: Dask worker processes of a local cluster."""
    from ..graphs.experiments.cc_timing import TIMINGS
    task = ClusteringTimingTask(methods=methods, repeats=repeats, backend=backend, seed=seed, threads=threads,
                                gpus=gpus)
    sweep = Sweep(task, task.make_points(sizes), path=path, mode=mode, scheduler=scheduler, workers=workers)
    if sweep_out is not None:
        sweep_out.append(sweep)
    return rows_of(sweep, TIMINGS)
