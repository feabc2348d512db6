"""What the sweep CLI commands call: ``ch-sweep`` (``flint … --sweep`` is :mod:`.flint_tasks`), and the ``--scheduler``
paths of ``graph-reproduce`` / ``graph-clustering`` / ``flint-suite`` (those live in
:mod:`.graph_tasks` and :mod:`.suite_tasks`).  No argparse and no printing here: the CLI modules
parse, call, and print what these return.

Ctrl+C during a sweep raises :class:`SweepInterrupted` (a ``KeyboardInterrupt``) whose message
says how many points finished and where they are, so the command can exit 130 with one line.
Qt-free.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..errors import InvalidParameter
from .points import parse_axes, product
from .run import Sweep
from .tasks import CHTask
from .results import read_rows

#: the Cahn–Hilliard quantities a sweep summarises per value of its first axis
CH_SUMMARY = ("coarsening_exponent", "length_scale_final")


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl+C during a sweep; ``str()`` is the one line to print."""


def file_mode(resume: bool = False, overwrite: bool = False, path=None) -> str:
    """The result-file mode of the ``--resume`` / ``--overwrite`` flags."""
    if resume and overwrite:
        raise InvalidParameter("--resume and --overwrite exclude each other")
    if resume and not path:
        raise InvalidParameter("--resume continues a result file: give it with --csv")
    return "resume" if resume else ("overwrite" if overwrite else "new")


def drive(sweep: Sweep, report: Callable | None = None, keep: int | None = None) -> list[dict]:
    """The rows of ``sweep`` (all, or the first ``keep``; ``sweep.rows_out`` counts them all),
    ``report(row, status)`` after each; Ctrl+C → SweepInterrupted."""
    rows: list[dict] = []
    try:
        for row in sweep.rows():
            if keep is None or len(rows) < keep:
                rows.append(row)
            if report is not None:
                report(row, sweep.status())
    except KeyboardInterrupt:
        where = (f"; the finished rows are in {sweep.file.path}: the same command with --resume runs the rest"
                 if sweep.file is not None else "")
        raise SweepInterrupted(f"interrupted after {sweep.finished + sweep.skipped} of {sweep.total} points"
                               f"{where}") from None
    return rows


def group_stats(rows: list[dict], x: str, y: str) -> list[dict]:
    """Per value of column ``x``: count, mean and standard deviation (n − 1; 0 for one) of the finite
    values of ``y`` over the rows without an error — e.g. the coarsening exponent per composition,
    with the spread over seeds as its error bar.  Sorted by ``x``; each entry ``{"x", "n", "mean", "std"}``."""
    groups: dict = {}
    for r in rows:
        v = r.get(y)
        if r.get("error") or not isinstance(v, (int, float)) or not math.isfinite(v) or r.get(x) is None:
            continue
        groups.setdefault(r[x], []).append(float(v))
    out = []
    for k in sorted(groups, key=lambda v: (isinstance(v, str), v)):
        a = np.asarray(groups[k])
        out.append({"x": k, "n": int(a.size), "mean": float(a.mean()),
                    "std": float(a.std(ddof=1)) if a.size > 1 else 0.0})
    return out


def ch_sweep(vary: list[str], steps: int = 2000, record_every: int = 100, backend: str = "auto",
             csv=None, resume: bool = False, overwrite: bool = False, scheduler: str = "local",
             workers: int | None = None, fields_dir=None, report: Callable | None = None,
             sweep_out: list | None = None, **params) -> dict:
    """A Cahn–Hilliard sweep: ``vary`` are ``NAME=VALUES`` specs (their product are the points),
    ``params`` the fixed CHParams fields.  Returns a JSON-ready dict: the points, rows, per-value
    summaries of the first axis (coarsening exponent and final L, mean ± std over the others), the
    CSV path, seconds, scheduler and workers."""
    axes = parse_axes(vary)
    if not axes:
        raise InvalidParameter("give at least one --vary NAME=VALUES (e.g. mean=-0.6:0.6:13)")
    task = CHTask(steps=steps, record_every=record_every, backend=backend, fields_dir=fields_dir, **params)
    sweep = Sweep(task, product(axes), path=csv, mode=file_mode(resume, overwrite, csv), scheduler=scheduler,
                  workers=workers)
    if sweep_out is not None:
        sweep_out.append(sweep)
    t0 = time.perf_counter()
    rows = drive(sweep, report)
    if sweep.file is not None:                     # resumed: the summary covers the whole file
        rows = read_rows(sweep.file.path)[2]
    x = next(iter(axes))
    return {"task": "ch", "vary": axes, "fixed": task.fixed, "points": sweep.total, "ran": sweep.finished,
            "skipped": sweep.skipped, "errors": sum(bool(r.get("error")) for r in rows),
            "summary": {y: group_stats(rows, x, y) for y in CH_SUMMARY}, "axis": x,
            "rows": rows, "csv": str(sweep.file.path) if sweep.file else None,
            "seconds": time.perf_counter() - t0, "scheduler": sweep.scheduler}


