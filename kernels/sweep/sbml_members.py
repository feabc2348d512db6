"""The members of an SBML ensemble on the CPU reference simulator, spread over the sweep layer's workers.

:class:`SbmlMembersTask` (``sbml-members``) takes the same specification as the GPU ensemble engines,
:class:`kernels.flint.adaptive_run.EnsembleRun` (model, output grid, ``params`` for all members, ``vary``
spreads ``linspace(lo, hi, n)``, recorded variables), and integrates members one at a time with the
reference simulator (:func:`kernels.flint.sbml.reference.run_reference`: SciPy LSODA, root-found events,
SBML's full semantics).  A point is a slice ``{"first": i0, "count": c}``; each member gives a row:
``member``, its varied parameter values, ``events`` (event executions), ``seconds`` and
``<variable>_min`` / ``_max`` / ``_final`` over the output grid.

It is the CPU side of the ensemble benchmark (``benchmarks/flint_ensembles.py``, issue 34): the same
members as one GPU launch, on every core of the machine through the ``local`` scheduler.  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: the Flint SBML reader and simulator load when the task runs in a worker, so
# that `import kernels.sweep` (the GUI's sweep panels) does not load the Flint system.
import time

import numpy as np

from ..errors import InvalidParameter
from .base import SweepTask
from .flint_tasks import check_slice, member_slices

#: per-process cache of loaded models: path → SbmlReference (a worker loads each model once)
_LOADED: dict = {}


class SbmlMembersTask(SweepTask):
    """Members of an :class:`~kernels.flint.adaptive_run.EnsembleRun` on the reference simulator."""

    name = "sbml-members"

    def __init__(self, run):
        from ..flint.adaptive_run import EnsembleRun
        if not isinstance(run, EnsembleRun):
            raise InvalidParameter(f"sbml-members is built from an EnsembleRun (got {type(run).__name__})")
        self.spec = run
        spec = {k: v for k, v in run.to_dict().items() if k not in ("method", "engine")}
        super().__init__(**spec)
        varied = [v.param for v in run.vary]
        self.columns = ("member", *varied, "events", "seconds",
                        *(f"{s}_{k}" for s in run.record for k in ("min", "max", "final")))

    def slices(self, size: int) -> list[dict]:
        """The points: consecutive slices of at most ``size`` members."""
        return member_slices(self.spec.n, size)

    def check_point(self, point: dict) -> dict:
        return check_slice(point, self.spec.n, "an sbml-members")

    def run(self, point: dict) -> list[dict]:
        from ..flint.sbml.reference import load_reference, run_reference
        path = self.spec.path
        if path not in _LOADED:
            _LOADED[path] = load_reference(path)
        ref = _LOADED[path]
        first, count = int(point["first"]), int(point["count"])
        params = self.spec.member_params()
        varied = [v.param for v in self.spec.vary]
        times, record = self.spec.times(), list(self.spec.record)
        rows = []
        for m in range(first, first + count):
            fired = []
            t0 = time.perf_counter()
            res = run_reference(ref, times, record, {k: float(v[m]) for k, v in params.items()},
                                on_event=lambda t, e: fired.append(t))
            row = {"member": m, **{p: float(params[p][m]) for p in varied}, "events": len(fired),
                   "seconds": time.perf_counter() - t0}
            vals = np.asarray(res.values, dtype=float)
            for k, s in enumerate(record):
                col = vals[:, k]
                row[f"{s}_min"], row[f"{s}_max"], row[f"{s}_final"] = (float(col.min()), float(col.max()),
                                                                       float(col[-1]))
            rows.append(row)
        return rows
