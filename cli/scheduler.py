"""The ``--scheduler`` / ``--workers`` options of the sweeps on Dask (issue 25), defined once.

``ch-sweep`` and ``flint … --sweep`` run on an embedded Dask cluster by default; ``graph-reproduce``,
``graph-clustering`` and ``flint-suite`` run as before unless ``--scheduler`` is given.  The values
are checked here (:func:`scheduler_value`, :func:`workers_value`) before any work: a bad one is one
``error:`` line.  :func:`progress` prints one stderr line per finished point of a
:class:`kernels.sweep.Sweep`.
"""
from __future__ import annotations

# Imports inside functions: keep `--help` fast (cli loads every command module; kernels.sweep,
# which loads the sweep tasks of every system, loads only when a sweep runs).
import os
import sys

from kernels.errors import InvalidParameter

from .common import UsageError, number, threads_type


def add_scheduler(p, default: str | None = "local", what: str = "points", workers: bool = True) -> None:
    """Add ``--scheduler`` (default ``default``; None: without it the command runs as before,
    without Dask) and, with ``workers``, ``--workers`` to parser ``p``."""
    p.add_argument("--scheduler", default=default, metavar="WHERE",
                   help=f"where the {what} run: local (an embedded Dask cluster, one worker process per core, "
                        "or one per GPU with dask-cuda), none (serially in this process), or the address of a "
                        "running cluster such as tcp://host:8786 (started with 'dask scheduler' and "
                        "'dask worker' / 'dask cuda worker')" +
                        (f" (default {default})" if default else
                         f"; without this option the {what} run as before, without Dask"))
    if workers:
        p.add_argument("--workers", default=None, metavar="N", type=threads_type(),
                       help="worker processes of a local cluster (default: one per core, or one per GPU)")


def scheduler_value(a) -> str | None:
    """``a.scheduler`` checked (local, none or an address); None when not given."""
    if a.scheduler is None:
        return None
    from kernels.sweep.cluster import parse_scheduler
    try:
        return parse_scheduler(a.scheduler)
    except InvalidParameter as exc:
        raise UsageError(f"--scheduler: {exc}") from None


def workers_value(a, scheduler: str | None) -> int | None:
    """``a.workers`` as a whole number ≥ 1 (None: the default); refused where no local cluster
    starts (no --scheduler, or none / an address)."""
    if a.workers is None:
        return None
    n = number("--workers", a.workers, int, minimum=1, maximum=4096)
    if scheduler != "local":
        where = "without --scheduler" if scheduler is None else f"with --scheduler {scheduler}"
        raise UsageError(f"--workers sets the worker processes of a local cluster; it does not apply {where}")
    return n


def backend_choice(a) -> str:
    """The workers' backend choice: --backend, else GSE_BACKEND, else auto."""
    return (a.backend or os.environ.get("GSE_BACKEND") or "auto").lower()


def _short(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def progress(row: dict, status: dict) -> None:
    """One stderr line per finished sweep point: ``[3/52] point 2 mean -0.5, seed 3: 1.02 s on host:pid``."""
    pt = ", ".join(f"{k} {_short(row[k])}" for k in status.get("keys", ()) if k in row)
    err = f"  failed: {row['error']}" if row.get("error") else ""
    print(f"[{status['finished']}/{status['total']}] point {row['point']}{' ' + pt if pt else ''}: "
          f"{row['task_seconds']:.3g} s on {row['worker']}{err}", file=sys.stderr, flush=True)


def interrupted(exc) -> int:
    """Ctrl+C during a Dask sweep (:class:`kernels.sweep.commands.SweepInterrupted`): its one line
    (how many points finished, where they are, that --resume continues); exit status 130."""
    print(f"error: {exc}", file=sys.stderr, flush=True)
    return 130
