"""``ch``: a Cahn–Hilliard run headless (paper 000 §3.1): batch steps, JSON, PNG and field exports.

The model options are generated from :class:`kernels.cahn_hilliard.params.CHParams`' fields (help,
units and choices live in the field metadata).  Order of work: every option and output path is
checked, the field (``--load``) header is read and checked, the run happens, then the results are
printed and the optional exports written (``--save-field`` before ``--export``).  With ``--load``
the loaded field's shape sets ``dim`` and ``size``; an explicit ``--dim``/``--size`` that disagrees
is refused.  When the field blows up, the last good field (the simulation restores it) is saved to
``--save-field`` if given, and the run still ends with one ``error:`` line and exit status 2.
"""
from __future__ import annotations

# Imports inside functions: keep `--help` fast (cli loads every command module; the field-file
# module kernels.cahn_hilliard.io loads only when a run reads or saves a field).
import time
from dataclasses import MISSING, fields

import argparse

from kernels import backend as bk
from kernels.cahn_hilliard import CahnHilliard, pfhub
from kernels.cahn_hilliard.cuda_stepper import check_host_size
from kernels.cahn_hilliard.params import GPU_VARIANTS, CHParams
from kernels.cahn_hilliard.simulation import estimate_bytes
from kernels.errors import GridTooLarge, SimulationBlowUp
from kernels.field_png import check_colormap, save_field_png

from .common import (CSV_EXTS, NPZ_EXTS, PNG_EXTS, UsageError, check_output, finish, note, num_type,
                     write_outputs)

NAME = "ch"
USES_BACKEND = True

#: CHParams fields that are not command-line options (``initial="file"`` comes from --load)
_NOT_OPTIONS = ()
#: the PFHub benchmark 1 presets of --preset
PFHUB_PRESETS = ("pfhub-1a", "pfhub-1b", "pfhub-1c", "pfhub-1d")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_model_options(p) -> None:
    """One option per :class:`~kernels.cahn_hilliard.params.CHParams` field (help, units, choices
    from the field metadata; default None = the dataclass default).  ``ch-sweep`` shares them."""
    for f in fields(CHParams):
        if f.name in _NOT_OPTIONS:
            continue
        md = f.metadata
        kind = md["type"]
        default = f.default if f.default is not MISSING else None
        help_text = md["help"] + (f" [{md['units']}]" if md["units"] else "")
        if default is not None:
            help_text += f" (default {default})"
        kw = dict(default=None, help=help_text, dest=f.name)
        if kind is bool:
            kw["action"] = argparse.BooleanOptionalAction
        elif md["choices"]:
            kw["choices"] = md["choices"]
            kw["type"] = kind
        elif kind is float:
            kw["type"] = num_type(float)
        elif kind is int:
            kw["type"] = num_type(int)
        p.add_argument(_option(f.name), **kw)


def given_params(a) -> dict:
    """The CHParams fields given on the command line (the others keep the dataclass defaults)."""
    return {f.name: getattr(a, f.name) for f in fields(CHParams) if getattr(a, f.name, None) is not None}


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Cahn–Hilliard phase separation (paper 000 §3.1)",
                       description="Run a Cahn–Hilliard simulation headless.")
    add_model_options(p)
    p.add_argument("--steps", type=num_type(int, minimum=0), default=1000, help="time steps (default 1000)")
    p.add_argument("--load", metavar="FIELD.npz", help="start from a saved field (.npz, or a bare .npy array); "
                                                         "its shape sets --dim and --size")
    p.add_argument("--record-every", type=num_type(int, minimum=1), default=100,
                   help="diagnostics every N steps (default 100)")
    p.add_argument("--export", metavar="PNG", help="write the final field as PNG (3D: middle slice)")
    p.add_argument("--colormap", default="viridis", help="colormap of --export: viridis, coolwarm, RdBu, grays, "
                                                         "magma, fire (default viridis)")
    p.add_argument("--save-field", metavar="NPZ", help="write the final field + parameters (.npz); after a "
                                                       "blow-up, the last good field")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")
    p.add_argument("--preset", choices=PFHUB_PRESETS, help="PFHub benchmark 1 set-up (kernels.cahn_hilliard.pfhub): "
                   "1a periodic, 1b no-flux, 1c T-shaped mask (explicit RK2), 1d sphere (not built); other "
                   "options apply on top (--dx keeps the benchmark's lengths: cells = length/dx)")
    p.add_argument("--t-end", type=num_type(float, above=0), metavar="T",
                   help="run to time T (instead of --steps), landing exactly on T; with a PFHub preset also "
                        "stopped by the benchmark's rule |dF/dt|/V < --stop-rate")
    p.add_argument("--stop-rate", type=num_type(float, minimum=0), metavar="R",
                   help="stop when |dF/dt| per unit volume < R (default 1e-14 with a PFHub preset, else off; "
                        "0: off); needs --t-end")
    p.add_argument("--energy-csv", metavar="F.csv", help="write time,free_energy (PFHub's format; F in the "
                   "benchmark's units for PFHub runs) for every accepted step; needs --t-end")
    p.add_argument("--energy-every", type=num_type(float, minimum=0), default=0.0, metavar="DT",
                   help="--energy-csv: one row per DT time units (default 0: every step)")


def _params(a, header):
    """CHParams from the options (unset ones: the dataclass defaults; --load: the field's shape)."""
    given = given_params(a)
    if getattr(a, "preset", None):
        dx = given.pop("dx", 1.0)
        if header is not None:
            raise UsageError("--preset and --load exclude each other")
        return pfhub.preset_params(a.preset, dx=dx, **given)
    if header is not None:
        for key, val in (("dim", header.dim), ("size", header.size)):
            if key in given and given[key] != val:
                raise UsageError(f"--{key} {given[key]} disagrees with the loaded field ({a.load}: "
                                 f"{'×'.join(map(str, header.shape))}); leave --dim/--size out with --load")
            given[key] = val
    return CHParams(**given).validate()


def run(a) -> int:
    from kernels.cahn_hilliard.io import load_field, read_field_header, save_field
    # --- everything checked before any work
    check_output(a.export, PNG_EXTS, "--export")
    check_output(a.save_field, NPZ_EXTS, "--save-field")
    check_output(a.energy_csv, CSV_EXTS, "--energy-csv")
    check_colormap(a.colormap)
    for opt, val in (("--energy-csv", a.energy_csv), ("--stop-rate", a.stop_rate)):
        if val is not None and a.t_end is None:
            raise UsageError(f"{opt} needs --t-end (a run to a time, not a step count)")
    steps, every = a.steps, a.record_every
    header = read_field_header(a.load) if a.load else None
    params = _params(a, header)
    if header is not None:
        need = estimate_bytes(params)
        if need > 0.8 * bk.host_available_memory():
            raise GridTooLarge(f"the loaded {'×'.join(map(str, header.shape))} field needs about "
                               f"{need / 2**30:.1f} GiB to run; {bk.host_available_memory() / 2**30:.1f} GiB "
                               "are available")
    be = bk.select(a.backend)
    if not be.is_gpu and params.variant in GPU_VARIANTS and a.t_end is None:
        check_host_size(params, steps)    # CUDA source run on the CPU: refuse runs over about 30 s
    field0 = None
    if a.load:
        field0, _saved_params, _meta = load_field(a.load)
        params = params.with_changes(initial="file")
    sim = CahnHilliard(params, be, field0=field0)
    if not a.json:
        for text in ([be.notice] if be.notice else []) + sim.notes:
            note(text)
    if a.t_end is not None:
        return _run_to_time(a, sim, be)
    # --- the run
    t0 = time.perf_counter()
    done = 0
    try:
        while done < steps:
            n = min(every, steps - done)
            sim.step(n)
            done += n
    except SimulationBlowUp as exc:
        if not a.save_field:
            raise
        path = save_field(a.save_field, sim.field_numpy(), sim.params, t=sim.t, steps=sim.step_count)
        raise SimulationBlowUp(f"{exc} The last good field (step {sim.step_count}, t = {sim.t:g}) was saved "
                               f"to {path}.") from None
    be.synchronize()
    seconds = time.perf_counter() - t0
    p = sim.params
    out = sim.summary()
    out.update(seconds=seconds, steps_per_second=(done / seconds if seconds > 0 else None),
               size=p.size, dim=p.dim, integrator=p.integrator, variant=p.variant, boundary=p.boundary,
               emulated=bool(getattr(sim.stepper, "emulated", False)))
    if hasattr(sim.stepper, "threads"):           # cpu-threads: the thread count the run used
        out["threads"] = sim.stepper.threads
    if a.load:
        out["loaded_field"] = str(a.load)
    # --- the optional outputs, after the results exist (one failing output loses nothing else)
    field = sim.field_numpy()
    outputs = []
    if a.save_field:
        outputs.append(("saved_field", lambda: save_field(a.save_field, field, sim.params, t=sim.t,
                                                          steps=sim.step_count)))
    if a.export:
        outputs.append(("export", lambda: _png(a.export, field, a.colormap)))
    return finish(out, a.json, write_outputs(out, outputs))


def _png(path, field, cmap):
    save_field_png(path, field, cmap=cmap)
    return path


def _run_to_time(a, sim, be) -> int:
    """``--t-end``: adaptive (or fixed-dt) steps to T with the optional stopping rule, the energy CSV
    and the field with snapshots at t = 10³ … 10⁶ (kernels.cahn_hilliard.pfhub)."""
    p = sim.params
    rate = a.stop_rate if a.stop_rate is not None else (pfhub.EQUILIBRIUM_RATE if pfhub.is_pfhub(p) else 0.0)
    snaps = pfhub.SNAPSHOT_TIMES if a.save_field else ()
    try:
        res = pfhub.run(sim, t_end=a.t_end, stop_rate=rate or None, snapshot_times=snaps)
    except SimulationBlowUp as exc:
        if a.save_field:
            from kernels.cahn_hilliard.io import save_field
            path = save_field(a.save_field, sim.field_numpy(), sim.params, t=sim.t, steps=sim.step_count)
            raise SimulationBlowUp(f"{exc} The last good field (t = {sim.t:g}) was saved to {path}.") from None
        raise
    out = {"preset": pfhub.preset_name(p), "t": sim.t, "stopped": res.reason,
           "steps": res.steps, "rejected_steps": res.rejected, "seconds": res.seconds,
           "adaptive": p.adaptive, "integrator": p.integrator, "variant": p.variant, "boundary": p.boundary,
           "domain": p.domain, "grid": "×".join(map(str, p.shape[::-1])), "dx": p.dx,
           "dt_min": min(res.dt[1:], default=None), "dt_max": max(res.dt[1:], default=None),
           "free_energy_initial": res.free_energy[0], "free_energy_final": res.free_energy[-1],
           "backend": be.name, "device": be.device_name,
           "emulated": bool(getattr(sim.stepper, "emulated", False))}
    out.update({f"F(t={t:g})": res.energy_at(t) for t in pfhub.REPORT_TIMES if t <= sim.t})
    outputs = []
    if a.energy_csv:
        outputs.append(("energy_csv", lambda: (pfhub.write_energy_csv(a.energy_csv, res, a.energy_every),
                                               a.energy_csv)[1]))
    if a.save_field:
        field = sim.field_numpy()
        outputs.append(("saved_field", lambda: (pfhub.write_fields(a.save_field, field, p, res, sim.t,
                                                                   sim.step_count), a.save_field)[1]))
    if a.export:
        outputs.append(("export", lambda: _png(a.export, sim.field_numpy(), a.colormap)))
    return finish(out, a.json, write_outputs(out, outputs))
