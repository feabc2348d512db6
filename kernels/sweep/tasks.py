"""Sweep tasks: one class per kind of point, chosen by name from :data:`TASKS` (a registry, like
scipy's ``solve_ivp`` METHODS).

A task is built on the client from its *fixed* parameters (checked there, before any work) and
shipped to the workers; ``run(point)`` runs one point with the system's public API and returns a
small row (a dict of scalars) or a list of rows (one per instance / member).  Large outputs
(fields, traces) are written by the worker to files whose paths come back in the row.

* ``ch``            — one Cahn–Hilliard run (kernels.cahn_hilliard) → final mean, energy, L and
                      the coarsening exponent of L ∝ t^α (paper 000 §3.1);
* ``flint-slice`` (a slice of a Flint ensemble, built from a ``FlintRun``), in
  :mod:`kernels.sweep.flint_tasks`;
* ``graph-reproduce``, ``graph-clustering``, ``sbml-case`` — in :mod:`kernels.sweep.graph_tasks`
  and :mod:`kernels.sweep.suite_tasks`.

``fixed`` (JSON-able) is part of the sweep's identity; ``fatal`` names the exceptions that stop the
whole sweep (a worker without a GPU given a GPU task) — any other :class:`ExplorerError` of one
point becomes that point's ``error`` cell and the sweep goes on.  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: a system's kernels load when its task runs. This package registers every
# system's task: hoisted, `import kernels.sweep` (the GUI's sweep panels) would load all three systems.
import hashlib
from dataclasses import fields
from pathlib import Path

import numpy as np

from ..errors import BackendUnavailable, InvalidParameter
from .base import SweepTask, gpu_wanted, worker_backend
from ..fileio import atomic_path
from .points import canonical

# ----------------------------------------------------------------------------- Cahn–Hilliard
class CHTask(SweepTask):
    """One Cahn–Hilliard run per point (dφ/dt = m∇²(−bφ + uφ³ − K∇²φ), paper 000 §3.1).

    Fixed: any :class:`CHParams` field, ``steps``, ``record_every`` (diagnostics interval: the
    length scale L(t) behind the coarsening exponent), ``backend`` (auto / cpu / gpu) and
    ``fields_dir`` (write each final field there as ``point-NNNNN.npz``; its path comes back).
    A point may vary any numeric or categorical CHParams field and ``steps``."""

    name = "ch"
    columns = ("steps", "t", "mean_final", "free_energy_final", "length_scale_final", "coarsening_exponent",
               "compute_seconds", "backend", "field")

    def __init__(self, steps: int = 2000, record_every: int = 100, backend: str = "auto",
                 fields_dir: str | None = None, **params):
        from ..cahn_hilliard import CHParams
        names = {f.name for f in fields(CHParams)}
        unknown = set(params) - names
        if unknown:
            raise InvalidParameter(f"unknown Cahn–Hilliard parameter(s): {', '.join(sorted(unknown))}")
        if backend not in ("auto", "cpu", "gpu"):
            raise InvalidParameter(f"backend must be auto, cpu or gpu (got {backend!r})")
        steps, record_every = whole_number("steps", steps, 0), whole_number("record_every", record_every, 1)
        if params.get("initial") == "file":
            raise InvalidParameter("a sweep starts each run from its own initial condition, not a loaded field")
        self.base = CHParams(**params).validate()
        if fields_dir is not None:
            d = Path(fields_dir)
            if not d.is_dir():
                raise InvalidParameter(f"fields folder {d} does not exist")
            fields_dir = str(d.resolve())
        super().__init__(steps=steps, record_every=record_every, backend=backend, fields_dir=fields_dir,
                         **{k: getattr(self.base, k) for k in sorted(params)})
        self.backend_choice = backend

    def needs_gpu(self) -> bool:
        """A GPU is needed for --backend gpu only: without one, kernels A–E run their CUDA source on
        the host device (issue 33), refused by the stepper above its size guard."""
        return self.backend_choice == "gpu"

    def wants_gpu(self) -> bool:
        return self.needs_gpu() or (self.backend_choice == "auto" and gpu_wanted("auto"))

    def check_point(self, point: dict) -> dict:
        from ..cahn_hilliard import CHParams
        types = {f.name: f.type for f in fields(CHParams)}
        out = {}
        for k, v in point.items():
            if k == "steps":
                out[k] = whole_number("steps", v, 0)
            elif k in types:
                out[k] = typed_value(k, v, getattr(CHParams(), k))
            else:
                raise InvalidParameter(f"{k} is not a Cahn–Hilliard parameter (vary e.g. mean, noise, seed, size, dt)")
        if out.get("initial") == "file":
            raise InvalidParameter("initial = file cannot be swept")
        self.base.with_changes(**{k: v for k, v in out.items() if k != "steps"})     # validates
        return out

    def run(self, point: dict) -> dict:
        from ..cahn_hilliard import CahnHilliard
        be = worker_backend(self.backend_choice)
        if self.needs_gpu() and not be.is_gpu:
            raise BackendUnavailable(f"this Cahn–Hilliard sweep needs a GPU; this worker has none ({be.notice})")
        steps = int(point.get("steps", self.fixed["steps"]))
        params = self.base.with_changes(**{k: v for k, v in point.items() if k != "steps"})
        sim = CahnHilliard(params, be)
        every = self.fixed["record_every"]
        done = 0
        while done < steps:
            n = min(every, steps - done)
            sim.step(n)
            done += n
        be.synchronize()
        s = sim.summary()
        path = ""
        if self.fixed["fields_dir"]:
            from ..cahn_hilliard.io import save_field
            dest = Path(self.fixed["fields_dir"]) / f"{point_name(point)}.npz"
            with atomic_path(dest) as tmp:
                save_field(tmp, sim.field_numpy(), sim.params, t=sim.t, steps=sim.step_count)
            path = str(dest)
        return {"steps": s["steps"], "t": float(s["t"]), "mean_final": float(s["mean_final"]),
                "free_energy_final": float(s["free_energy_final"]),
                "length_scale_final": float(s["length_scale_final"]),
                "coarsening_exponent": float(s["coarsening_exponent"]),
                "compute_seconds": float(sim.compute_seconds), "backend": be.name, "field": path}


def point_name(point: dict) -> str:
    """A file name for a point's output: its values, readable and unique per point."""
    text = "_".join(f"{k}{v}" for k, v in sorted(point.items()))
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:80]
    return f"{safe}-{hashlib.sha1(canonical(point).encode()).hexdigest()[:8]}" if safe else "point"


def whole_number(name: str, v, lo: int) -> int:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise InvalidParameter(f"{name} must be a whole number ≥ {lo} (got {v!r})")
    return int(v)


def typed_value(name: str, v, like):
    """``v`` as the type of the parameter's default ``like`` (int, float or a word)."""
    if isinstance(like, bool):
        raise InvalidParameter(f"{name} cannot be swept")
    if isinstance(like, int):
        return whole_number(name, v, -2**62)
    if isinstance(like, float) or like is None:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
            raise InvalidParameter(f"{name} must be a number (got {v!r})")
        return float(v)
    return str(v)


# ----------------------------------------------------------------------------- Flint ensembles
