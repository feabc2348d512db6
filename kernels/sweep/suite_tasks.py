"""The SBML Test Suite's one executor (``main.py flint-suite``, benchmarks): :func:`run_cases` runs
:func:`kernels.flint.sbml.conformance.run_case` for every case on the sweep layer.

Contract: outcomes in case order; ``progress(done,
total, eta_seconds, outcome)`` after every case; a case past ``timeout`` seconds is failed with
"timed out after T s (worker killed)" and its worker is restarted (the clock starts when the case
is submitted; at most one case per worker thread is in flight, so that is when it starts); a case
whose worker dies is failed with "crashed: worker process died (…)" (an embedded cluster does not
retry it: Dask's allowed-failures is 0 there).  ``workers`` is the number of local worker
processes (``scheduler="local"``); with a ``tcp://`` address the cluster's workers run the cases
(the suite folder and ``out_dir`` must be the same path on every machine).  ``scheduler="none"`` is
the serial path: the cases run here one by one, without a time limit or crash isolation (debugging,
and where worker processes are unwanted).  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: a system's kernels load when its task runs. This package registers every
# system's task: hoisted, `import kernels.sweep` (the GUI's sweep panels) would load all three systems.
import importlib
import json
import os
import time
from typing import Callable

from ..errors import InvalidParameter
from .run import Sweep
from .base import SweepTask
from .. import limits
from dataclasses import asdict
from pathlib import Path

TIMEOUT_MESSAGE = "timed out after {timeout:g} s (worker killed)"
_QUIET = {"done": False}


def _silence() -> None:
    """Send this worker process's stdout / stderr to /dev/null (native solvers' chatter), once."""
    if not _QUIET["done"]:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        _QUIET["done"] = True


class SBMLCaseTask(SweepTask):
    """One SBML Test Suite case per point ``{"case": "00001", "folder": "…/cases"}``: the worker loads
    the case from its folder (``suite.load_case``) and runs it (``suite.run_case``)."""

    name = "sbml-case"
    columns = ("case", "status", "message", "seconds", "worst", "tags")
    shares_gpu = True             # one member per case: NVRTC and the model's parsing dominate

    def __init__(self, runtime: str | Callable = "cpu", out_dir: str | None = None, quiet: bool = False):
        from ..flint.schemes import ADAPTIVE_BACKENDS
        if isinstance(runtime, str) and runtime not in ADAPTIVE_BACKENDS:
            raise InvalidParameter(f"unknown runtime {runtime!r}")
        self.spec = ADAPTIVE_BACKENDS[runtime].target if isinstance(runtime, str) else runtime
        self.quiet = bool(quiet)
        self.limits = limits.current()            # the expansion limits (--max-…) travel to the workers
        name = runtime if isinstance(runtime, str) else getattr(runtime, "__name__", "runtime")
        super().__init__(runtime=name, out_dir=None if out_dir is None else str(out_dir))

    def needs_gpu(self) -> bool:
        from ..flint.schemes import ADAPTIVE_BACKENDS
        b = ADAPTIVE_BACKENDS.get(self.fixed["runtime"], None)
        return b is not None and b.device == "gpu"

    def check_point(self, point: dict) -> dict:
        if set(point) != {"case", "folder"}:
            raise InvalidParameter(f"an SBML case point is {{case, folder}} (got {point})")
        return dict(point)

    def run(self, point: dict) -> dict:

        from ..flint.sbml import conformance as suite
        if self.quiet:
            _silence()
        case = suite.load_case(Path(point["folder"]), point["case"])
        try:
            fn = self.spec if callable(self.spec) else _resolve(self.spec)
        except Exception as exc:  # noqa: BLE001 — the case's outcome
            oc = suite.Outcome(case.id, "failed", f"runtime not loadable: {exc}", 0.0, None, case.tags)
        else:
            with limits.raised(**asdict(getattr(self, "limits", limits.Limits()))):
                oc = suite.run_case(case, fn, self.fixed["out_dir"])
        d = asdict(oc)
        d["worst"] = json.dumps(d["worst"]) if d["worst"] is not None else ""
        d["tags"] = json.dumps(d["tags"])
        return d


def _resolve(spec: str) -> Callable:
    mod, _, attr = spec.partition(":")
    return getattr(importlib.import_module(mod), attr)


def _outcome(row: dict, case, timeout: float):
    from ..flint.sbml import conformance as suite
    err = row.get("error") or ""
    if not err:
        return suite.Outcome(row["case"], row["status"], row["message"], row["seconds"],
                             json.loads(row["worst"]) if row["worst"] else None, json.loads(row["tags"]))
    if err.startswith("timed out"):
        msg = TIMEOUT_MESSAGE.format(timeout=timeout)
    elif "died" in err:
        msg = "crashed: worker process died (the Dask worker running it was lost)"
    else:
        msg = f"exception {err}"
    return suite.Outcome(case.id, "failed", msg, round(float(row.get("task_seconds") or 0.0), 4), None, case.tags)


def run_cases(cases: list, runtime: str | Callable = "cpu", workers: int = 2, timeout: float = 60.0,
              out_dir=None, progress: Callable | None = None, quiet: bool = True,
              scheduler: str = "local") -> list:
    """Every case of ``cases`` run by ``runtime`` (an adaptive backend's name or a callable) on
    ``scheduler`` (see the module docstring); returns the outcomes in case order."""
    if workers < 1 or not timeout > 0:
        raise InvalidParameter("workers must be ≥ 1 and timeout > 0")
    if not cases:
        return []
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    by_id = {c.id: c for c in cases}
    local = scheduler in ("local", "none")
    task = SBMLCaseTask(runtime, None if out_dir is None else str(Path(out_dir).resolve()),
                        quiet=quiet and scheduler == "local")
    sweep = Sweep(task, [{"case": c.id, "folder": str(c.dir.parent.resolve())} for c in cases], scheduler=scheduler,
                  workers=min(workers, len(cases)) if local else None, timeout=timeout,
                  config={"distributed.scheduler.allowed-failures": 0})
    results: dict = {}
    t_start = time.perf_counter()
    for row in sweep.rows():
        oc = _outcome(row, by_id[sweep.points[row["point"]]["case"]], timeout)
        results[oc.case] = oc
        if progress:
            n = len(results)
            el = time.perf_counter() - t_start
            progress(n, len(cases), el / n * (len(cases) - n) if n else None, oc)
    if sweep.cancelled or len(results) < len(cases):
        raise InterruptedError(f"suite run stopped after {len(results)} of {len(cases)} cases")
    return [results[c.id] for c in cases]
