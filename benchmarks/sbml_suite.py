"""SBML Test Suite conformance: the project's CPU simulator beside libRoadRunner.

    python benchmarks/sbml_suite.py [CASES…] [--runtimes cpu,roadrunner] [--workers N] [--timeout S]
                                    [--suite-dir D] [--sample] [--json out.json]

Runs every TimeCourse case (or the given ids/ranges, or the fixed CI sample) with each runtime that
is available here (through kernels.flint.sbml.conformance, the runner behind `main.py flint-suite`) and prints
markdown for benchmarks/RESULTS.md: runtime, passed, failed, refused, wall seconds; then the tags
whose passed/failed/refused counts differ between the runtimes.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", help="case ids or ranges (default: all TimeCourse cases)")
    ap.add_argument("--runtimes", default="cpu,roadrunner", help="comma-separated runtimes to compare")
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=60.0, help="per-case time limit (s)")
    ap.add_argument("--suite-dir", default=None)
    ap.add_argument("--sample", action="store_true", help="only the fixed CI sample")
    ap.add_argument("--json", help="write every runtime's full report here")
    ap.add_argument("--quick", action="store_true", help="the first 10 cases of the CI sample, runtime cpu only")
    a = ap.parse_args(argv)
    if a.quick:
        a.sample, a.runtimes = True, "cpu"

    from cli.flint_suite import read_sample, suite_dir
    from kernels.flint.sbml import conformance as suite
    from kernels.flint.schemes import backend_unavailable
    from kernels.sweep.suite_tasks import run_cases
    ids = suite.parse_case_ids(a.cases) if a.cases else None
    if a.sample:
        sample = set(read_sample())
        ids = sorted(sample) if ids is None else [i for i in ids if i in sample]
        if a.quick:
            ids = ids[:10]
    root = suite_dir(a.suite_dir)
    cases = suite.discover(root, ids)
    print(f"# SBML Test Suite — {len(cases)} TimeCourse cases, {a.workers} workers, "
          f"timeout {a.timeout:g} s, {time.strftime('%Y-%m-%d')}\n")
    reports = {}
    for rt in [r.strip() for r in a.runtimes.split(",") if r.strip()]:
        why = backend_unavailable(rt)
        if why:
            print(f"- {rt}: skipped ({why})")
            continue
        t0 = time.perf_counter()
        tty = sys.stderr.isatty()
        out = run_cases(cases, rt, workers=a.workers, timeout=a.timeout, scheduler="local",
                              progress=lambda d, n, eta, oc: tty and print(
                                  f"\r{rt} {d}/{n} ETA {eta or 0:.0f} s ", end="", file=sys.stderr))
        if tty:
            print(file=sys.stderr)
        reports[rt] = suite.report(cases, out, rt, time.perf_counter() - t0, str(root))

    print("\n| runtime | passed | failed | refused | wall s |\n|---|---:|---:|---:|---:|")
    for rt, rep in reports.items():
        t = rep["totals"]
        print(f"| {rt} | {t['passed']} | {t['failed']} | {t['refused']} | {rep['wall_seconds']:.1f} |")

    if len(reports) > 1:
        names = list(reports)
        tags = sorted({k for rep in reports.values() for k in rep["tags"]})
        zero = {"passed": 0, "failed": 0, "refused": 0}
        rows = [(k, [reports[r]["tags"].get(k, zero) for r in names]) for k in tags]
        rows = [(k, cells) for k, cells in rows if any(c != cells[0] for c in cells)]
        print(f"\nTags that differ (passed / failed / refused), {len(rows)} of {len(tags)}:\n")
        print("| tag | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
        for k, cells in rows:
            print(f"| {k} | " + " | ".join(f"{c['passed']} / {c['failed']} / {c['refused']}" for c in cells) + " |")
    if a.json:
        suite.write_json(a.json, {"cases": len(cases), "workers": a.workers, "timeout": a.timeout,
                                  "reports": reports})
    return 0


if __name__ == "__main__":
    sys.exit(main())
