"""The Flint parameter sweep on the sweep layer, built from the one run specification
(:class:`kernels.flint.run.FlintRun`, issue 34: the CLI, the workspace, sessions and sweeps share it).

* :class:`FlintSliceTask` (``flint-slice``): member i of the sweep takes the i-th combination of the
  ``axes`` ({parameter: values}, last axis fastest); a point is a slice ``{"first": i0, "count": c}``
  of members integrated together as one ensemble — the sweep's FlintRun with ``n = c``, its
  :meth:`~kernels.flint.run.FlintRun.simulation` given the slice's parameter values.  Each member gives
  a row: ``member``, its parameter values, and ``<state>_min`` / ``_max`` / ``_final`` over the recorded
  samples; ``traces_dir``: each slice's sampled traces also go to ``slice-NNNNNNNN.npz``.
* :func:`flint_sweep`: the sweep of a FlintRun over ``--sweep`` specs (what ``main.py flint --sweep``
  calls).

The task's fixed parameters are the run's :meth:`~kernels.flint.run.FlintRun.to_dict` (less ``n``, set
per slice) with the model's text hash: a result file resumes only the same run.  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: a system's kernels load when its task runs. This package registers every
# system's task: hoisted, `import kernels.sweep` (the GUI's sweep panels) would load all three systems.
import dataclasses
import hashlib
import time
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import InvalidParameter
from .base import SweepTask
from .points import parse_axes
from ..fileio import atomic_path
from .commands import drive, file_mode
from .run import Sweep


def whole(name: str, v, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise InvalidParameter(f"{name} must be an integer ≥ {low} (got {v!r})")
    return int(v)


def member_slices(members: int, size) -> list[dict]:
    """Consecutive slices ``{"first", "count"}`` of at most ``size`` of ``members`` members."""
    size = whole("slice size", size, 1)
    return [{"first": i, "count": min(size, members - i)} for i in range(0, members, size)]


def check_slice(point: dict, members: int, what: str) -> dict:
    """``point`` as a slice of ``members`` members with typed values; InvalidParameter naming ``what``."""
    if set(point) != {"first", "count"}:
        raise InvalidParameter(f"{what} point is a slice {{first, count}}")
    first, count = whole("first", point["first"], 0), whole("count", point["count"], 1)
    if first + count > members:
        raise InvalidParameter(f"slice {first}+{count} is past the {members} members")
    return {"first": first, "count": count}


class FlintSliceTask(SweepTask):
    """A Flint parameter sweep over an ensemble: ``run`` (a :class:`~kernels.flint.run.FlintRun` of an
    ensemble, no ``vary``: the sweep's axes vary the members) and ``axes`` ({parameter: values})."""

    name = "flint-slice"

    def __init__(self, run, axes: dict, traces_dir: str | None = None):
        from ..flint.run import FlintRun
        if not isinstance(run, FlintRun):
            raise InvalidParameter(f"a Flint sweep is built from a FlintRun (got {type(run).__name__})")
        if run.members != "ensemble" or run.vary:
            raise InvalidParameter("a Flint sweep's members are an ensemble whose parameters the sweep's axes set "
                                   "(no line/ring, no vary)")
        if run.mapping != "cell":
            raise InvalidParameter("a Flint sweep runs the cell mapping (one thread a member)")
        m = run.model
        if not axes:
            raise InvalidParameter("a Flint sweep needs at least one --sweep PARAM=VALUES")
        for p, vals in axes.items():
            if p not in m.params:
                raise InvalidParameter(f"--sweep: {p!r} is not a parameter of {m.name}")
            if not vals or not all(isinstance(v, (int, float)) and np.isfinite(v) for v in vals):
                raise InvalidParameter(f"--sweep {p}: the values must be finite numbers")
        if traces_dir is not None:
            if not Path(traces_dir).is_dir():
                raise InvalidParameter(f"traces folder {traces_dir} does not exist")
            traces_dir = str(Path(traces_dir).resolve())
        self.spec = run
        self.axes = {p: [float(v) for v in vals] for p, vals in axes.items()}
        self.shape = tuple(len(v) for v in self.axes.values())
        self.members = int(np.prod(self.shape))
        spec = {k: v for k, v in run.to_dict().items() if k not in ("n", "params")}
        sha = hashlib.sha256(m.to_text().encode()).hexdigest()
        super().__init__(model=m.name, model_sha256=sha, axes=self.axes, run=spec, traces_dir=traces_dir)
        self.columns = ("member", *self.axes, *(f"{s}_{k}" for s in run.record_names for k in ("min", "max", "final")),
                        "traces")

    def needs_gpu(self) -> bool:
        from ..flint.runtimes import runtime_class
        return runtime_class(self.spec.runtime).device == "gpu"

    def slices(self, size: int) -> list[dict]:
        """The points: consecutive slices of at most ``size`` members."""
        return member_slices(self.members, size)

    def check_point(self, point: dict) -> dict:
        return check_slice(point, self.members, "a Flint sweep")

    def member_values(self, first: int, count: int) -> dict[str, np.ndarray]:
        """{parameter: values of members first … first + count − 1}."""
        idx = np.unravel_index(np.arange(first, first + count), self.shape)
        return {p: np.asarray(vals)[i] for (p, vals), i in zip(self.axes.items(), idx)}

    def slice_run(self, count: int):
        """The sweep's FlintRun with ``count`` members (one slice)."""
        return dataclasses.replace(self.spec, n=int(count))

    def run(self, point: dict) -> list[dict]:
        first, count = int(point["first"]), int(point["count"])
        member = self.member_values(first, count)
        spec = self.slice_run(count)
        sim = spec.simulation(member_params=member)
        idx, names = spec.record_index, spec.record_names
        times, samples = sim.advance(spec.steps, spec.dt, record=idx, every=spec.every)
        final = sim.state()[idx]                                        # (recorded, members)
        lo = samples.min(axis=0) if samples.size else final
        hi = samples.max(axis=0) if samples.size else final
        path = ""
        if self.fixed["traces_dir"]:
            dest = Path(self.fixed["traces_dir"]) / f"slice-{first:08d}.npz"
            with atomic_path(dest) as tmp:
                np.savez_compressed(tmp, times=times, samples=samples, members=np.arange(first, first + count),
                                    states=np.array(names))
            path = str(dest)
        rows = []
        for j in range(count):
            row = {"member": first + j, **{p: float(v[j]) for p, v in member.items()}, "traces": path}
            for k, s in enumerate(names):
                row[f"{s}_min"], row[f"{s}_max"], row[f"{s}_final"] = (float(lo[k, j]), float(hi[k, j]),
                                                                       float(final[k, j]))
            rows.append(row)
        return rows


def flint_sweep(run, sweep: list[str], slice_size: int = 10_000, csv=None, resume: bool = False,
                overwrite: bool = False, scheduler: str = "local", workers: int | None = None, traces_dir=None,
                report: Callable | None = None, sweep_out: list | None = None) -> dict:
    """The FlintRun ``run`` swept over the ``sweep`` specs (``PARAM=VALUES``): every combination is one
    member; members go to the workers in slices of ``slice_size``, each slice one ensemble run.  One row
    per member (min / max / final of the recorded states) goes to ``csv``.  Returns a JSON-ready dict
    (rows left out when there are more than 1 000)."""
    axes = parse_axes(sweep)
    task = FlintSliceTask(run, axes, traces_dir=traces_dir)
    sw = Sweep(task, task.slices(slice_size), path=csv, mode=file_mode(resume, overwrite, csv),
               scheduler=scheduler, workers=workers)
    if sweep_out is not None:
        sweep_out.append(sw)
    t0 = time.perf_counter()
    rows = drive(sw, report, keep=1001)
    out = {"task": task.name, "model": run.model.name, "sweep": axes, "members": task.members, "slices": sw.total,
           "slices_run": sw.finished, "skipped": sw.skipped, "rows_written": sw.rows_out,
           "errors": sorted(sw.errors), "csv": str(sw.file.path) if sw.file else None,
           "seconds": time.perf_counter() - t0, "scheduler": sw.scheduler, "record": run.record_names,
           "method": run.method, "engine": run.engine}
    if sw.rows_out <= 1000:
        out["rows"] = sorted(rows, key=lambda r: r.get("member", -1))
    return out
