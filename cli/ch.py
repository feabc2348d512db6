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

import time
from dataclasses import MISSING, fields

from .common import NPZ_EXTS, PNG_EXTS, UsageError, check_output, finish, note, num_type, write_outputs

NAME = "ch"
USES_BACKEND = True

#: CHParams fields that are not command-line options (``initial="file"`` comes from --load)
_NOT_OPTIONS = ()


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_model_options(p) -> None:
    """One option per :class:`~kernels.cahn_hilliard.params.CHParams` field (help, units, choices
    from the field metadata; default None = the dataclass default).  ``ch-sweep`` shares them."""
    from kernels.cahn_hilliard.params import CHParams
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
        if md["choices"]:
            kw["choices"] = md["choices"]
            kw["type"] = kind
        elif kind is float:
            kw["type"] = num_type(float)
        elif kind is int:
            kw["type"] = num_type(int)
        p.add_argument(_option(f.name), **kw)


def given_params(a) -> dict:
    """The CHParams fields given on the command line (the others keep the dataclass defaults)."""
    from kernels.cahn_hilliard.params import CHParams
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


def _params(a, header):
    """CHParams from the options (unset ones: the dataclass defaults; --load: the field's shape)."""
    from kernels.cahn_hilliard.params import CHParams
    given = given_params(a)
    if header is not None:
        for key, val in (("dim", header.dim), ("size", header.size)):
            if key in given and given[key] != val:
                raise UsageError(f"--{key} {given[key]} disagrees with the loaded field ({a.load}: "
                                 f"{'×'.join(map(str, header.shape))}); leave --dim/--size out with --load")
            given[key] = val
    return CHParams(**given).validate()


def run(a) -> int:
    from kernels import backend as bk
    from kernels.cahn_hilliard import CahnHilliard
    from kernels.cahn_hilliard.io import load_field, read_field_header, save_field
    from kernels.cahn_hilliard.simulation import estimate_bytes
    from kernels.errors import GridTooLarge, SimulationBlowUp
    from kernels.field_png import check_colormap
    # --- everything checked before any work
    check_output(a.export, PNG_EXTS, "--export")
    check_output(a.save_field, NPZ_EXTS, "--save-field")
    check_colormap(a.colormap)
    steps, every = a.steps, a.record_every
    header = read_field_header(a.load) if a.load else None
    params = _params(a, header)
    if header is not None:
        from kernels.backend import host_available_memory
        need = estimate_bytes(params)
        if need > 0.8 * host_available_memory():
            raise GridTooLarge(f"the loaded {'×'.join(map(str, header.shape))} field needs about "
                               f"{need / 2**30:.1f} GiB to run; {host_available_memory() / 2**30:.1f} GiB "
                               "are available")
    be = bk.select(a.backend)
    field0 = None
    if a.load:
        field0, _saved_params, _meta = load_field(a.load)
        params = params.with_changes(initial="file")
    sim = CahnHilliard(params, be, field0=field0)
    if not a.json:
        for text in ([be.notice] if be.notice else []) + sim.notes:
            note(text)
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
               size=p.size, dim=p.dim, integrator=p.integrator, variant=p.variant, boundary=p.boundary)
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
    from kernels.field_png import save_field_png
    save_field_png(path, field, cmap=cmap)
    return path
