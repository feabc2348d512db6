"""``flint-suite``: SBML Test Suite conformance of the Flint SBML simulator (per-tag table, JSON).

Exit status 0 when no case failed, 1 otherwise, 2 on bad input.  ``--json FILE`` and ``--out-dir``
are checked before any case runs.  ``--scheduler`` runs the cases on Dask
(:func:`kernels.sweep.suite_tasks.run_cases`: same outcomes and time limit); without it the local
process pool runs them as before."""
from __future__ import annotations

import os
import sys
import time

from kernels.errors import InvalidParameter

from .common import (JSON_EXTS, UsageError, check_out_dir, check_output, dumps, number, raise_failed,
                     write_outputs)
from .scheduler import add_scheduler, scheduler_value

NAME = "flint-suite"
USES_BACKEND = False
BACKEND_HINT = "its --runtime chooses CPU or GPU"


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="SBML Test Suite conformance of the Flint SBML simulator",
                       description="Run SBML Test Suite TimeCourse cases, compare with results.csv by the suite's "
                                   "rule, print a per-tag table; exit 0 when no case failed, 1 otherwise.")
    p.add_argument("cases", nargs="*", metavar="CASES", help="case ids or ranges, e.g. 1 42 100-200 (default: all)")
    p.add_argument("--runtime", default="cpu", help="cpu (NumPy/SciPy LSODA), roadrunner (libRoadRunner peer), dopri-cpu (the "
                        "GPU integrator's NumPy twin), is, ts (GPU: adaptive Dormand–Prince, ODE core)")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write every case's outcome as JSON ('-': stdout)")
    p.add_argument("--out-dir", default=None, metavar="DIR", help="write each simulated case as DIR/NNNNN.csv")
    p.add_argument("--workers", default=None, help="worker processes (default: CPU count, at most 8)")
    p.add_argument("--timeout", default="60", help="per-case time limit in seconds")
    p.add_argument("--suite-dir", default=None, metavar="D", help="suite root (default: GSE_SBML_SUITE or "
                                                                    "../shared/sbml-test-suite)")
    p.add_argument("--sample", action="store_true", help="only the fixed CI sample (tests/data/sbml_suite_sample.txt)")
    add_scheduler(p, None, "cases", workers=False)


def run(a) -> int:
    from kernels.flint import suite
    if a.runtime not in ("cpu", "roadrunner", "dopri-cpu", "is", "ts"):
        raise UsageError(f"--runtime must be cpu, roadrunner, dopri-cpu, is or ts (got {a.runtime!r})")
    if a.runtime in ("is", "ts") and suite.runtime_unavailable(a.runtime):
        raise UsageError(suite.runtime_unavailable(a.runtime))
    if a.json not in (None, "-"):
        check_output(a.json, JSON_EXTS, "--json")
    check_out_dir(a.out_dir)
    workers = number("--workers", a.workers, int, minimum=1, maximum=256) if a.workers is not None \
        else min(8, os.cpu_count() or 1)
    timeout = number("--timeout", a.timeout, above=0)
    scheduler = scheduler_value(a)
    try:
        ids = suite.parse_case_ids(a.cases) if a.cases else None
    except InvalidParameter as exc:
        raise UsageError(f"CASES: {exc}") from None
    if a.sample:
        sample = suite.read_sample()
        ids = sample if ids is None else [i for i in ids if i in set(sample)]
    root = suite.suite_dir(a.suite_dir)
    cases = suite.discover(root, ids)
    if not cases:
        raise UsageError(f"no TimeCourse cases in {root} match {' '.join(a.cases) or '--sample'}")
    why = suite.runtime_unavailable(a.runtime)
    if why:
        raise UsageError(why)
    tty = sys.stderr.isatty()
    last = [0.0]

    def progress(done, total, eta, oc):
        now = time.perf_counter()
        if done < total and now - last[0] < (0.2 if tty else 10):
            return
        last[0] = now
        eta_s = "" if eta is None else f" ETA {int(eta) // 60}m{int(eta) % 60:02d}s"
        line = f"[{done}/{total}] {100 * done / max(total, 1):5.1f}%{eta_s}  last {oc.case} {oc.status}"
        print(("\r" + line.ljust(70)) if tty else line, end="\n" if not tty or done == total else "",
              file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    if scheduler is None:
        outcomes = suite.run_cases(cases, a.runtime, workers=workers, timeout=timeout, out_dir=a.out_dir,
                                   progress=progress)
    else:
        from kernels.sweep.suite_tasks import run_cases
        outcomes = run_cases(cases, a.runtime, workers=workers, timeout=timeout, out_dir=a.out_dir, progress=progress,
                             scheduler=scheduler)
    wall = time.perf_counter() - t0
    rep = suite.report(cases, outcomes, a.runtime, wall, str(root))
    if a.json == "-":
        print(dumps(rep))
        return 1 if rep["totals"]["failed"] else 0
    failed = write_outputs({}, [("json", lambda: (suite.write_json(a.json, rep), a.json)[1])] if a.json else [])
    print(suite.format_tag_table(rep["tags"]))
    for o in outcomes:
        if o.status == "failed":
            print(f"failed {o.case}: {o.message}")
    t = rep["totals"]
    print(f"{a.runtime}: {t['total']} cases, {t['passed']} passed, {t['failed']} failed, "
          f"{t['refused']} refused in {wall:.1f} s ({workers} workers)")
    raise_failed(failed)
    return 1 if rep["totals"]["failed"] else 0
