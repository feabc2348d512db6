"""``flint MODEL --sweep PARAM=VALUES …``: a Flint parameter sweep over an ensemble on Dask (issue 25).

Every combination of the ``--sweep`` values is one ensemble member; the members run in slices of
``--slice`` (one ensemble run each) spread over ``--scheduler``'s workers
(:func:`kernels.sweep.flint_tasks.flint_sweep`, built from the run's one
:class:`~kernels.flint.run.FlintRun`), one row per member (min / max / final of the recorded
states) appended to ``--csv`` as each slice finishes.  Before any slice runs: the time grid, the
settings, the model, ``--set``, the sweep values, the result file and the memory of one slice
(with its recorded samples).  Exit status 1 when a slice failed, 130 on Ctrl+C (the finished rows
are in ``--csv``; the same command with ``--resume`` runs the rest).
"""
from __future__ import annotations

import math

# Imports inside functions: kernels.sweep (≈100–170 ms: its package loads every system's sweep tasks and
# Dask), loaded when a sweep runs, so that `--help` does not pay for it.
from kernels.errors import InvalidParameter
from kernels.flint.model import select_states
from kernels.flint.run import FlintRun
from kernels.flint.runtimes import check_memory, samples_in

from .common import UsageError, check_out_dir, check_output, num_type, number, print_result
from .flint_options import auto_backend, grid, load, parameter_sets, say_alias, settings
from .scheduler import add_scheduler, interrupted, scheduler_value, workers_value

#: the options that mean something only with --sweep: (flag, argparse dest)
SWEEP_ONLY = (("--slice", "slice"), ("--scheduler", "scheduler"), ("--workers", "workers"),
              ("--resume", "resume"), ("--overwrite", "overwrite"), ("--traces-dir", "traces_dir"))
DEFAULT_SLICE = 10_000


def add_options(p) -> None:
    """The sweep options of the ``flint`` parser (defaults None / False: given or not is known)."""
    p.add_argument("--sweep", action="append", default=[], metavar="PARAM=VALUES",
                   help="a parameter sweep over an ensemble (repeatable; every combination is one member): VALUES "
                        "is START:STOP:COUNT, FIRST..LAST or a comma list, e.g. --sweep g_Na=16:30:1000 "
                        "--sweep g_si=0.06,0.09; the members run in slices (--slice) spread over --scheduler's "
                        "workers, one row per member (min / max / final of the recorded states) in --csv. "
                        "Not with --vary, --ensemble, --line/--ring or --method lsoda")
    p.add_argument("--slice", default=None, metavar="N", type=num_type(int, minimum=1),
                   help=f"members per task of a --sweep (one ensemble run each; default {DEFAULT_SLICE})")
    add_scheduler(p, None, "slices of a --sweep")
    p.add_argument("--resume", action="store_true", default=None,
                   help="--sweep: continue --csv, running only the missing slices")
    p.add_argument("--overwrite", action="store_true", default=None, help="--sweep: replace an existing --csv")
    p.add_argument("--traces-dir", metavar="DIR",
                   help="--sweep: also write each slice's sampled traces as DIR/slice-NNNNNNNN.npz (the folder "
                        "must exist)")


def _members(a, model) -> int:
    """Members of the sweep: the product of the value counts (values checked here)."""
    from kernels.sweep.points import parse_axes
    try:
        axes = parse_axes(a.sweep)
    except InvalidParameter as exc:
        raise UsageError(f"--sweep: {exc}") from None
    for p, vals in axes.items():
        if p not in model.params:
            raise UsageError(f"--sweep: {p!r} is not a parameter of {model.name}")
        if not all(isinstance(v, (int, float)) for v in vals):
            raise UsageError(f"--sweep {p}: the values must be numbers")
    return math.prod(len(v) for v in axes.values())


def run(a) -> int:
    """``flint … --sweep``: everything checked, then the sweep (see the module docstring)."""
    from kernels.sweep.commands import SweepInterrupted, file_mode
    from kernels.sweep.points import MAX_POINTS

    why = "(the sweep's members are the ensemble)"
    if a.runtime == "sbml":
        raise UsageError("--sweep does not apply to --runtime sbml / --method lsoda (one model instance); use "
                         "--engine numpy, c, "
                         "c-is, is or ts")
    for flag, bad in (("--vary", a.vary), ("--line/--ring", a.line or a.ring), ("--ensemble", str(a.ensemble) != "1")):
        if bad:
            raise UsageError(f"{flag} does not combine with --sweep {why}")
    integrator, dtype, mapping = settings(a)
    if mapping != "cell":
        raise UsageError("--mapping expression does not apply to --sweep (each slice runs one thread a member)")
    t_end, dt, every, steps = grid(a)
    threads = number("--threads", a.threads, int, minimum=1)
    size = number("--slice", a.slice if a.slice is not None else DEFAULT_SLICE, int, minimum=1, maximum=MAX_POINTS)
    check_output(a.csv, (".csv",), "--csv")
    check_out_dir(a.traces_dir, "--traces-dir")
    try:
        file_mode(bool(a.resume), bool(a.overwrite), a.csv)
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None
    scheduler = scheduler_value(a) or "local"
    workers = workers_value(a, scheduler)
    model = load(a)
    sets = parameter_sets(a, model)
    members = _members(a, model)
    try:
        rec = select_states(model, a.record) if a.record else list(model.states)
    except InvalidParameter as exc:
        text = str(exc)
        raise UsageError(f"--{text}" if text.startswith("record:") else f"--record: {text}") from None
    if -(-members // size) > MAX_POINTS:
        raise UsageError(f"--sweep: {members:,} members in slices of {size:,} are more than {MAX_POINTS:,} tasks; "
                         "raise --slice or sweep fewer values")
    n = min(size, members)
    from kernels.sweep.flint_tasks import flint_sweep
    model.params.update(sets)
    spec = FlintRun(model, runtime=a.runtime, integrator=integrator, dtype=dtype, mapping=mapping, threads=threads,
                    dt=dt, t_end=t_end, n=n, record=tuple(rec), every=every, backend=auto_backend(a))
    a.runtime = spec.runtime                      # engine auto: what it picked for a slice
    check_memory(model, n, len(a.sweep), a.runtime, mapping, 4 if dtype == "float32" else 8,
                 recorded=samples_in(0, steps, every) * len(rec) * n)
    try:
        out = flint_sweep(spec, a.sweep, slice_size=size, csv=a.csv, resume=bool(a.resume),
                          overwrite=bool(a.overwrite), scheduler=scheduler, workers=workers, traces_dir=a.traces_dir)
    except SweepInterrupted as exc:
        return interrupted(exc)
    say_alias(a)                                 # an old --runtime spelling: one note, with the results
    status = 1 if out["errors"] else 0
    if a.json:
        print_result(out, True)
        return status
    print(f"{out['model']}: {out['members']} members ({' × '.join(f'{k} {len(v)}' for k, v in out['sweep'].items())}) "
          f"in {out['slices']} slices ({out['slices_run']} run now, {out['skipped']} already in the file) on "
          f"engine {out['engine']}, scheduler {out['scheduler']}, {out['seconds']:.1f} s")
    for e in out["errors"]:
        print(f"failed slice(s): {e}")
    if out["csv"]:
        print(f"one row per member in {out['csv']}")
    return status
