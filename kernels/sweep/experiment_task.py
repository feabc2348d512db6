"""Any paper experiment on a cluster: the ``experiment`` task (issue 37 §2).

A paper figure or table is a :class:`kernels.experiments.Experiment`; this task runs one over Dask
workers without knowing which: the experiment is named by its ``"package.module:ATTRIBUTE"``
reference (JSON-able, part of the sweep's identity; :func:`reference` gives it for an instance), the
points are :meth:`Experiment.points` of the run's settings, a worker runs ``rows(**point)`` and returns
each row as a dict (:func:`kernels.experiments.row_dict`), and :func:`experiment_sweep` yields the
experiment's own row objects back (``Experiment.row_from_dict``) as points finish — the same rows a
serial ``rows(**settings)`` yields, in completion order (``Experiment.ordered`` sorts them).

A setting ``backend`` (auto / cpu / gpu) becomes each worker's array backend.  So a new paper table
runs on a cluster with no code here.  Qt-free.
"""
from __future__ import annotations

import importlib
from typing import Iterator

from ..errors import ExplorerError, InvalidParameter
from ..experiments import Experiment, row_dict
from .base import SweepTask, gpu_wanted, worker_backend
from .run import Sweep


def resolve(ref) -> Experiment:
    """The experiment an ``"module:ATTRIBUTE"`` reference names (or an experiment, returned as is)."""
    if isinstance(ref, Experiment):
        return ref
    mod, _, attr = str(ref).partition(":")
    try:
        exp = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError, ValueError):
        raise InvalidParameter(f"no experiment {ref!r}: give it as package.module:ATTRIBUTE") from None
    if not isinstance(exp, Experiment):
        raise InvalidParameter(f"{ref!r} is not an experiment (a kernels.experiments.Experiment)")
    return exp


def reference(exp) -> str:
    """The ``"module:ATTRIBUTE"`` reference of an experiment instance defined at a module's top level."""
    if isinstance(exp, str):
        return reference(resolve(exp))
    mod = importlib.import_module(type(exp).__module__)
    for name, value in vars(mod).items():
        if value is exp:
            return f"{mod.__name__}:{name}"
    raise InvalidParameter(f"{exp!r} is not a module-level experiment (a sweep names it by module:ATTRIBUTE)")


class ExperimentTask(SweepTask):
    """One point of a paper experiment: ``rows(**point)`` of the experiment named by ``experiment``."""

    name = "experiment"

    def __init__(self, experiment, backend: str | None = None, **settings):
        exp = resolve(experiment)
        if backend not in (None, "auto", "cpu", "gpu"):
            raise InvalidParameter(f"backend must be auto, cpu or gpu (got {backend!r})")
        super().__init__(experiment=reference(exp), backend=backend, settings=dict(settings))
        rt = exp.row_type                        # the row dicts' keys (CSV columns may add derived ones)
        self.columns = tuple(getattr(rt, "__dataclass_fields__", None) or exp.columns)

    @property
    def experiment(self) -> Experiment:
        return resolve(self.fixed["experiment"])

    def needs_gpu(self) -> bool:
        return self.fixed["backend"] == "gpu"

    def wants_gpu(self) -> bool:
        return self.needs_gpu() or (self.fixed["backend"] == "auto" and gpu_wanted("auto"))

    def make_points(self) -> list[dict]:
        """The experiment's points, each reduced to the settings it narrows (the sweep adds a point's
        keys to its rows: the fixed settings stay in ``fixed``)."""
        fixed = self.fixed["settings"]
        return [{k: v for k, v in p.items() if k not in fixed or fixed[k] != v}
                for p in self.experiment.points(**fixed)]

    def run(self, point: dict) -> list[dict]:
        kw = {**self.fixed["settings"], **point}
        if self.fixed["backend"] is not None:
            kw["backend"] = worker_backend(self.fixed["backend"])
        return [row_dict(r) for r in self.experiment.rows(**kw)]


def rows_of(sweep: Sweep, experiment) -> Iterator:
    """The experiment's row objects from a sweep's rows, as they finish; a point's error raises."""
    exp = resolve(experiment)
    for row in sweep.rows():
        if row.get("error"):
            where = ", ".join(f"{k} {row[k]}" for k in sweep.points[row["point"]])
            raise ExplorerError(f"{where}: {row['error']}")
        yield exp.row_from_dict(row)


def experiment_sweep(experiment, settings: dict, backend: str | None = None, scheduler: str = "local",
                     workers: int | None = None, path=None, mode: str = "new",
                     sweep_out: list | None = None) -> Iterator:
    """``experiment.rows(**settings)`` on a cluster: yields the experiment's row objects as its points
    finish (any order).  ``path`` also appends each row to a sweep result file (``mode``: new / resume /
    overwrite); ``sweep_out`` (a list) receives the :class:`Sweep`, for cancel and status."""
    task = ExperimentTask(experiment, backend=backend, **settings)
    sweep = Sweep(task, task.make_points(), path=path, mode=mode, scheduler=scheduler, workers=workers)
    if sweep_out is not None:
        sweep_out.append(sweep)
    return rows_of(sweep, task.fixed["experiment"])
