"""Sweep tasks: one class per kind of point, chosen by name from :data:`TASKS` (a registry, like
scipy's ``solve_ivp`` METHODS).

A task is built on the client from its *fixed* parameters (checked there, before any work) and
shipped to the workers; ``run(point)`` runs one point with the system's public API and returns a
small row (a dict of scalars) or a list of rows (one per instance / member).  Large outputs
(fields, traces) are written by the worker to files whose paths come back in the row.

* ``ch``            — one Cahn–Hilliard run (kernels.cahn_hilliard) → final mean, energy, L and
                      the coarsening exponent of L ∝ t^α (paper 000 §3.1);
* ``flint-slice``   — a slice of a Flint ensemble whose members are the points of a parameter
                      product (kernels.flint) → one row per member (min / max / final of the
                      recorded states);
* ``graph-reproduce``, ``graph-clustering``, ``sbml-case`` — in :mod:`kernels.sweep.graph_tasks`
  and :mod:`kernels.sweep.suite_tasks`.

``fixed`` (JSON-able) is part of the sweep's identity; ``fatal`` names the exceptions that stop the
whole sweep (a worker without a GPU given a GPU task) — any other :class:`ExplorerError` of one
point becomes that point's ``error`` cell and the sweep goes on.  Qt-free.
"""
from __future__ import annotations

import hashlib
from dataclasses import fields
from pathlib import Path

import numpy as np

from ..errors import BackendUnavailable, InvalidParameter
from .base import SweepTask, gpu_wanted, worker_backend

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
            from ..fileio import atomic_path
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
    from .points import canonical
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
class FlintSliceTask(SweepTask):
    """A Flint parameter sweep over an ensemble (paper 004 ch. 5): member i of the sweep takes the
    i-th combination of the ``axes`` ({parameter: values}, last axis fastest); a point is a slice
    ``{"first": i0, "count": c}`` of members integrated together as one ensemble on the worker
    (kernels.flint.Simulation, ``member_params``).  Each member gives a row: ``member``, its
    parameter values, and ``<state>_min`` / ``_max`` / ``_final`` over the recorded samples.
    ``traces_dir``: also write each slice's sampled traces as ``slice-NNNNNNNN.npz`` (times,
    samples (k, states, members), members) — the path comes back in the ``traces`` column."""

    name = "flint-slice"

    def __init__(self, model, axes: dict, t_end: float = 1000.0, dt: float = 0.01, runtime: str = "cpu",
                 integrator: str = "euler", dtype: str = "float64", every: int = 100, record=None,
                 threads: int = 1, traces_dir: str | None = None):
        from ..flint import load_model
        from ..flint.model import Model, select_states
        from ..flint.runtimes import INTEGRATORS, RUNTIMES
        m = model if isinstance(model, Model) else load_model(model)
        m.validate()
        if runtime not in RUNTIMES:
            raise InvalidParameter(f"runtime must be one of {', '.join(RUNTIMES)} (got {runtime!r})")
        if integrator not in INTEGRATORS:
            raise InvalidParameter(f"integrator must be one of {', '.join(INTEGRATORS)} (got {integrator!r})")
        if dtype not in ("float64", "float32"):
            raise InvalidParameter(f"dtype must be float64 or float32 (got {dtype!r})")
        for name_, v in (("t_end", t_end), ("dt", dt)):
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise InvalidParameter(f"{name_} must be a positive number (got {v!r})")
        if not axes:
            raise InvalidParameter("a Flint sweep needs at least one --sweep PARAM=VALUES")
        for p, vals in axes.items():
            if p not in m.params:
                raise InvalidParameter(f"--sweep: {p!r} is not a parameter of {m.name}")
            if not vals or not all(isinstance(v, (int, float)) and np.isfinite(v) for v in vals):
                raise InvalidParameter(f"--sweep {p}: the values must be finite numbers")
        rec = select_states(m, record) if record else list(m.states)
        if traces_dir is not None:
            if not Path(traces_dir).is_dir():
                raise InvalidParameter(f"traces folder {traces_dir} does not exist")
            traces_dir = str(Path(traces_dir).resolve())
        self.model = m
        self.axes = {p: [float(v) for v in vals] for p, vals in axes.items()}
        self.shape = tuple(len(v) for v in self.axes.values())
        self.members = int(np.prod(self.shape))
        sha = hashlib.sha256(m.to_text().encode()).hexdigest()
        super().__init__(model=m.name, model_sha256=sha, axes=self.axes, t_end=float(t_end), dt=float(dt),
                         runtime=runtime, integrator=integrator, dtype=dtype, every=whole_number("every", every, 1),
                         record=rec, threads=whole_number("threads", threads, 1), traces_dir=traces_dir)
        self.columns = ("member", *self.axes, *(f"{s}_{k}" for s in rec for k in ("min", "max", "final")),
                        "traces")

    def needs_gpu(self) -> bool:
        from ..flint.runtimes import runtime_class
        return runtime_class(self.fixed["runtime"]).device == "gpu"

    def slices(self, size: int) -> list[dict]:
        """The points: consecutive slices of at most ``size`` members."""
        size = whole_number("slice size", size, 1)
        return [{"first": i, "count": min(size, self.members - i)} for i in range(0, self.members, size)]

    def check_point(self, point: dict) -> dict:
        if set(point) != {"first", "count"}:
            raise InvalidParameter("a Flint sweep point is a slice {first, count}")
        first, count = whole_number("first", point["first"], 0), whole_number("count", point["count"], 1)
        if first + count > self.members:
            raise InvalidParameter(f"slice {first}+{count} is past the {self.members} members")
        return {"first": first, "count": count}

    def member_values(self, first: int, count: int) -> dict[str, np.ndarray]:
        """{parameter: values of members first … first + count − 1}."""
        idx = np.unravel_index(np.arange(first, first + count), self.shape)
        return {p: np.asarray(vals)[i] for (p, vals), i in zip(self.axes.items(), idx)}

    def run(self, point: dict) -> list[dict]:
        from ..flint import Simulation
        f = self.fixed
        first, count = int(point["first"]), int(point["count"])
        member = self.member_values(first, count)
        sim = Simulation(self.model, runtime=f["runtime"], n=count, member_params=member,
                         integrator=f["integrator"], dtype=f["dtype"], threads=f["threads"])
        states = list(self.model.states)
        idx = [states.index(r) for r in f["record"]]
        steps = int(round(f["t_end"] / f["dt"]))
        times, samples = sim.advance(steps, f["dt"], record=idx, every=f["every"])
        final = sim.state()[idx]                                        # (recorded, members)
        lo = samples.min(axis=0) if samples.size else final
        hi = samples.max(axis=0) if samples.size else final
        path = ""
        if f["traces_dir"]:
            from ..fileio import atomic_path
            dest = Path(f["traces_dir"]) / f"slice-{first:08d}.npz"
            with atomic_path(dest) as tmp:
                np.savez_compressed(tmp, times=times, samples=samples, members=np.arange(first, first + count),
                                    states=np.array(f["record"]))
            path = str(dest)
        rows = []
        for j in range(count):
            row = {"member": first + j, **{p: float(v[j]) for p, v in member.items()}, "traces": path}
            for k, s in enumerate(f["record"]):
                row[f"{s}_min"], row[f"{s}_max"], row[f"{s}_final"] = (float(lo[k, j]), float(hi[k, j]),
                                                                       float(final[k, j]))
            rows.append(row)
        return rows
