"""SBML ensembles on the GPU against the CPU reference on every core (issue 34, targets 2 and 3).

1. ``biomodels``: BIOMD0000000127 (Izhikevich 2003 spiking neuron; two events reset v and U at each
   spike, a stimulus switched on at a fixed time), ``--n`` members (default 10 000) with the reset
   parameter ``d`` spread over 2 … 8, 1000 ms with output every 1 ms, recording v, U and the stimulus i.
   Rows: :class:`kernels.flint.adaptive_run.EnsembleRun` — the Flint workspace's path — on ``ts`` and
   ``is`` (Dormand–Prince with event location, rtol 1e-8), first run in the process (with the NVRTC
   compile) and second run; the same source compiled for the host on every core (``c``, OpenMP); the CPU
   reference simulator (SciPy LSODA with root-found events, SBML's full semantics) member by member on
   every core through the sweep layer's ``local`` scheduler (task ``sbml-members``), timed on
   ``--cpu-members`` members and scaled to ``--n`` when fewer (marked); libRoadRunner member by member
   where it imports; and the user's command, ``main.py flint MODEL --method … --engine … --ensemble N
   --vary … --json``, timed as a fresh process (the first engine of each method).  Checked: for every member the CPU reference ran, the GPU's number of event
   executions equals the reference's, and v, U at t end agree within the SBML Test Suite's usual
   tolerance (|Δ| ≤ 1e-7 + 1e-4·|ref|); counts of members outside it are printed, not hidden.
   Goal: ``ts`` ≥ 50× the CPU reference on all cores of the same machine.
2. ``stiff``: Robertson's problem (``resources/models/robertson.xml``; Hairer & Wanner II §IV.1),
   ``--n`` members with k1 spread over 0.02 … 0.08 and k3 over 5e3 … 2e4, t = 0 … 40 every 0.4: method
   ``auto`` (it must pick Rodas4) and ``rodas4`` on ``ts`` / ``is``, against the CPU reference the same
   way; every member's A, B, C at t end within the suite tolerance of LSODA's.

Usage:  python benchmarks/flint_ensembles.py [--sections biomodels,stiff] [--n 10000] [--cpu-members M]
        (markdown also to $OUT/flint_ensembles.md)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels import backend as bk  # noqa: E402
from kernels.errors import ExplorerError  # noqa: E402
from kernels.flint.adaptive_run import EnsembleRun, available_engines, engine_offers_auto  # noqa: E402
from kernels.flint.run import Vary  # noqa: E402
from kernels.sweep import SbmlMembersTask, Sweep  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")
ABS, REL = 1e-7, 1e-4                        # the SBML Test Suite's usual comparison tolerance
LINES: list[str] = []


def say(text: str = "") -> None:
    print(text, flush=True)
    LINES.append(text)


def cpu_reference(run: EnsembleRun, members: int, workers: int) -> tuple[list[dict], float, float]:
    """(rows of the first ``members`` members, seconds to start the local cluster, seconds of the members)
    — the CPU reference member by member on ``workers`` processes of the sweep layer."""
    spec = EnsembleRun.from_dict(run.to_dict(), engine="numpy", backend="cpu", n=run.n)
    task = SbmlMembersTask(spec)
    size = max(1, members // (workers * 8))
    points = [p for p in task.slices(size) if p["first"] < members]
    points[-1]["count"] = min(points[-1]["count"], members - points[-1]["first"])
    t0 = time.perf_counter()
    sw = Sweep(task, points, scheduler="local" if workers > 1 else "none", workers=workers).open()
    t1 = time.perf_counter()
    rows = [r for r in sw.rows() if not r.get("error")]
    return sorted(rows, key=lambda r: r["member"]), t1 - t0, time.perf_counter() - t1


def roadrunner_loop(run: EnsembleRun, members: int) -> float | None:
    """Seconds libRoadRunner takes for ``members`` members in a loop (parameters set per member), or
    None where it does not import."""
    try:
        import roadrunner
    except ImportError:
        return None
    rr = roadrunner.RoadRunner(str(run.path))
    params = run.member_params()
    times = run.times()
    t0 = time.perf_counter()
    for m in range(members):
        rr.resetAll()
        for k, v in params.items():
            rr[k] = float(v[m])
        rr.simulate(float(times[0]), float(times[-1]), len(times))
    return time.perf_counter() - t0


def gpu_rows(run: EnsembleRun, engines: list[str], method: str):
    """{engine: (first-run seconds, second-run seconds, result)} for the engines that run here."""
    out = {}
    for e in engines:
        try:
            r = EnsembleRun.from_dict(run.to_dict(), engine=e, method=method, backend=None)
        except ExplorerError as exc:
            say(f"| {e} | {method} | skipped: {exc} | | |")
            continue
        t0 = time.perf_counter()
        r.run()                             # returns host arrays: the device work is done
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = r.run()
        out[e] = (first, time.perf_counter() - t0, res)
    return out


def cli_seconds(run: EnsembleRun, engine: str, method: str) -> tuple[float, str]:
    """(wall seconds, the command) of the user's command for the same ensemble, ``main.py flint … --json``
    in a fresh process: interpreter start, imports, compile (or its cache) and the run."""
    vary = [f"--vary={v.param}={v.lo!r}:{v.hi!r}" for v in run.vary]
    cmd = [sys.executable, os.path.join(ROOT, "main.py"), "flint", str(run.path), "--method", method, "--engine",
           engine, "--ensemble", str(run.n), *vary, "--t-end", repr(run.t_end), "--dt", repr(run.dt), "--json"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise ExplorerError((done.stderr or done.stdout).strip().splitlines()[-1])
    return wall, " ".join(["main.py", *cmd[3:]])


def agreement(res, rows, names: list[str]) -> tuple[int, int, int, float]:
    """(members compared, event-count mismatches, members outside the tolerance at t end, worst
    |Δ| / (ABS + REL·|ref|)) of the ensemble result ``res`` against the reference rows."""
    counts = np.zeros(res.values.shape[2], dtype=int)
    for m, _t, _e in res.events:
        counts[m] += 1
    bad_events = bad_values = 0
    worst = 0.0
    for row in rows:
        m = row["member"]
        if res.reports_events and counts[m] != row["events"]:
            bad_events += 1
        ratio = 0.0
        for k, s in enumerate(res.names):
            if s not in names:
                continue
            ref = row[f"{s}_final"]
            ratio = max(ratio, abs(res.values[-1, k, m] - ref) / (ABS + REL * abs(ref)))
        bad_values += ratio > 1
        worst = max(worst, ratio)
    return len(rows), bad_events, bad_values, worst


def engines_for(method: str) -> list[str]:
    """ts, is (GPU) and c (the same source on the host, every core) where they run ``method`` here."""
    if method == "auto":
        return [e for e in ("ts", "is", "c") if engine_offers_auto(e) and available_engines("dopri5", None).count(e)]
    gpu = [e for e in ("ts", "is") if e in available_engines(method, "gpu")]
    return gpu + [e for e in ("c",) if e in available_engines(method, "cpu")]


def machine() -> str:
    """The GPU's name (when there is one) and the host's CPU count."""
    be = bk.current()
    return f"{be.device_name + ', ' if be.is_gpu else ''}{os.cpu_count()} CPU cores"


def section(title: str, run: EnsembleRun, methods: list[str], names: list[str], args) -> None:
    say(f"\n## {title}\n")
    say(f"{run.n:,} members, t = 0 … {run.t_end:g} every {run.dt:g} ({len(run.times())} points), "
        f"vary {', '.join(f'{v.param} = {v.lo:g} … {v.hi:g}' for v in run.vary)}; "
        f"on {machine()}")
    cpu_n = min(args.cpu_members, run.n)
    rows, start_s, cpu_s = cpu_reference(run, cpu_n, args.workers)
    scale = run.n / max(1, len(rows))
    cpu_full = cpu_s * scale
    mark = "" if len(rows) == run.n else f" (scaled from {len(rows):,} members)"
    say(f"CPU reference: {len(rows):,} members on {args.workers} worker processes in {cpu_s:.2f} s "
        f"(+ {start_s:.1f} s to start the local cluster) → {cpu_full:.1f} s for {run.n:,}{mark}; "
        f"{np.mean([r['seconds'] for r in rows]) * 1e3:.1f} ms a member on one core")
    say("\n| engine | method | first run s | second run s | × CPU reference (all cores) | members checked | "
        "event-count mismatches | outside suite tolerance at t end | worst Δ/tol |")
    say("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for method in methods:
        for e, (first, second, res) in gpu_rows(run, engines_for(method), method).items():
            checked, bad_ev, bad_val, worst = agreement(res, rows, names)
            say(f"| {e} | {method} | {first:.2f} | {second:.3f} | **{cpu_full / second:.0f}×** | {checked:,} | "
                f"{bad_ev if res.reports_events else 'n/a'} | {bad_val} | {worst:.3g} |")
    for method in methods:
        for e in engines_for(method)[:1]:
            try:
                wall, cmd = cli_seconds(run, e, method)
            except ExplorerError as exc:
                say(f"| `main.py flint` ({e}) | {method} | failed: {exc} | | | | | | |")
                continue
            say(f"| `main.py flint` ({e}, a fresh process) | {method} | {wall:.2f} | | {cpu_full / wall:.0f}× | | | | |")
    say(f"| CPU reference (LSODA, sweep `local`) | lsoda | | {cpu_full:.1f}{mark and ' *'} | 1× | | | | |")
    rr_n = min(run.n, args.rr_members)
    rr = roadrunner_loop(run, rr_n)
    if rr is None:
        say("| libRoadRunner | cvode | not importable here | | | | | | |")
    else:
        rr_full = rr * run.n / rr_n
        say(f"| libRoadRunner loop (one core) | cvode | | {rr_full:.1f} (from {rr_n}) | {cpu_full / rr_full:.2f}× | | | | |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sections", default="biomodels,stiff")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--cpu-members", type=int, default=10_000,
                    help="members the CPU reference runs (scaled to --n when fewer)")
    ap.add_argument("--rr-members", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--t-end", type=float, default=1000.0, help="BIOMD0000000127's end time (ms)")
    ap.add_argument("--quick", action="store_true", help="a CPU smoke test: 16 members, 4 on the reference, serial")
    args = ap.parse_args()
    if args.quick:
        args.n, args.cpu_members, args.workers, args.rr_members, args.t_end = 16, 4, 1, 2, min(args.t_end, 50.0)
    bk.select("auto")
    say(f"# SBML ensembles: GPU against the CPU reference ({time.strftime('%Y-%m-%d')})")
    secs = args.sections.split(",")
    if "biomodels" in secs:
        path = os.path.join(SHARED_MODELS, "BIOMD0000000127.xml")
        if not os.path.isfile(path):
            say(f"\n## BIOMD0000000127: skipped ({path} not found)")
        else:
            run = EnsembleRun(path, method="dopri5", engine="numpy", n=args.n, t_end=args.t_end, dt=1.0,
                              vary=(Vary("d", 2.0, 8.0),), backend="cpu")
            section("BIOMD0000000127 (events)", run, ["dopri5", "auto"], ["v", "U"], args)
    if "stiff" in secs:
        path = os.path.join(ROOT, "resources", "models", "robertson.xml")
        run = EnsembleRun(path, method="rodas4", engine="numpy", n=args.n, t_end=40.0, dt=0.4,
                          vary=(Vary("k1", 0.02, 0.08), Vary("k3", 5e3, 2e4)), backend="cpu")
        section("Robertson (stiff)", run, ["auto", "rodas4"], ["A", "B", "C"], args)
    save_markdown("flint_ensembles.md", "\n".join(LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
