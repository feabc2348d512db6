"""``ch-sweep``: many Cahn–Hilliard runs over composition, noise, seed … on Dask (issue 25).

One run per combination of the ``--vary`` values (:func:`kernels.sweep.commands.ch_sweep`), on an
embedded Dask cluster (default), an existing one (``--scheduler tcp://host:8786``) or serially
(``--scheduler none``).  Every option, the points and the result file are checked before any run;
each finished run is appended to ``--csv`` at once (a killed sweep loses nothing; ``--resume``
runs only the missing points).  Exit status 0, 1 when a point failed (its error is printed and in
the CSV's ``error`` column), 2 on bad input, 130 on Ctrl+C (the finished rows are in ``--csv``).
"""
from __future__ import annotations

# Imports inside functions: keep `--help` fast (cli loads every command module; kernels.sweep,
# which loads the sweep tasks of every system, loads only when a sweep runs).
import os

from kernels.errors import InvalidParameter

from .ch import add_model_options, given_params
from .common import UsageError, check_out_dir, check_output, num_type, print_result
from .scheduler import add_scheduler, backend_choice, interrupted, progress, scheduler_value, workers_value

NAME = "ch-sweep"
USES_BACKEND = True


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents,
                       help="Cahn–Hilliard sweep: many runs over composition, noise, seed … on Dask",
                       description="Run one Cahn–Hilliard simulation per combination of the --vary values, on an "
                                   "embedded Dask cluster (default), an existing one (--scheduler tcp://host:8786) "
                                   "or serially (--scheduler none).  Each finished run is appended to --csv at once "
                                   "(a killed sweep loses nothing; --resume runs only the missing points).  Prints, "
                                   "per value of the first --vary parameter, the coarsening exponent α (L ∝ t^α) "
                                   "and the final length scale L, mean ± std over the other parameters.  "
                                   "--backend is the workers' backend.")
    p.add_argument("--vary", action="append", default=[], metavar="NAME=VALUES", required=True,
                   help="a swept parameter (repeatable; the runs are all combinations): VALUES is START:STOP:COUNT "
                        "(COUNT evenly spaced values, ends included), FIRST..LAST (integers) or a comma list; "
                        "any model option below or steps, e.g. --vary mean=-0.6:0.6:13 --vary seed=1..4")
    p.add_argument("--steps", type=num_type(int, minimum=0), default=2000, help="time steps per run (default 2000)")
    p.add_argument("--record-every", type=num_type(int, minimum=1), default=100,
                   help="diagnostics every N steps: the L(t) behind the coarsening-exponent fit (default 100)")
    add_model_options(p)
    add_scheduler(p, "local", "runs")
    p.add_argument("--csv", metavar="FILE", help="result file (.csv): one row per run, appended as each finishes")
    p.add_argument("--resume", action="store_true",
                   help="continue --csv: run only the points not in it (it must be from this very sweep)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --csv")
    p.add_argument("--fields-dir", metavar="DIR", help="also write each run's final field as DIR/<point>.npz "
                                                       "(the folder must exist)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _short(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def run(a) -> int:
    from kernels.sweep.commands import SweepInterrupted, ch_sweep, file_mode
    check_output(a.csv, (".csv",), "--csv")
    check_out_dir(a.fields_dir, "--fields-dir")
    if a.fields_dir is not None and not os.path.isdir(a.fields_dir):
        raise UsageError(f"--fields-dir {a.fields_dir} does not exist (create the folder first)")
    try:
        file_mode(a.resume, a.overwrite, a.csv)
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None
    scheduler = scheduler_value(a)
    workers = workers_value(a, scheduler)
    try:
        out = ch_sweep(a.vary, steps=a.steps, record_every=a.record_every, backend=backend_choice(a), csv=a.csv,
                       resume=a.resume, overwrite=a.overwrite, scheduler=scheduler, workers=workers,
                       fields_dir=a.fields_dir, report=None if a.quiet else progress, **given_params(a))
    except SweepInterrupted as exc:
        return interrupted(exc)
    status = 1 if out["errors"] else 0
    if a.json:
        print_result(out, True)
        return status
    print(f"Cahn–Hilliard sweep: {out['points']} points ({out['ran']} run now, {out['skipped']} already in the "
          f"file), scheduler {out['scheduler']}, {out['seconds']:.1f} s")
    x = out["axis"]
    alpha = {s["x"]: s for s in out["summary"]["coarsening_exponent"]}
    length = {s["x"]: s for s in out["summary"]["length_scale_final"]}
    for v in sorted(set(alpha) | set(length), key=lambda v: (isinstance(v, str), v)):
        al, L = alpha.get(v), length.get(v)
        print(f"    {x} = {_short(v)}: α = " + (f"{al['mean']:.4f} ± {al['std']:.4f}" if al else "—") +
              ", L = " + (f"{L['mean']:.4g} ± {L['std']:.2g}" if L else "—") + f" ({(al or L)['n']} runs)")
    for r in out["rows"]:
        if r.get("error"):
            print(f"point {r['point']} failed: {r['error']}")
    if out["csv"]:
        print(f"rows in {out['csv']}")
    return status
