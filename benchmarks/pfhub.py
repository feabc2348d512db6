"""PFHub benchmark 1 (spinodal decomposition; Jokisaari et al., Comput. Mater. Sci. 126 (2017) 139):
1a, 1b and 1c (the T, masked) run to equilibrium by the benchmark's rule or to t = 10⁶ with adaptive
semi-implicit spectral steps (kernels.cahn_hilliard.pfhub), on the GPU when there is one.

1. Runs: wall time, accepted / rejected steps, why it stopped, F at t = 1, 10, 100, 1 000, 10 000
   (and 10⁵, 10⁶ when reached), in the benchmark's units (c = 0.5 + 0.2φ).
2. Convergence: F(t) at two refinements in dx (2, 1, 0.5) and in the step tolerance (1e-3, 1e-4,
   1e-5), to t = 100, with the difference from the finest.
3. Posted codes: the wall times they posted to PFHub (usnistgov/pfhub, _data/simulations/*/meta.yaml:
   wall_time / sim_time; other hardware, for scale only), and, with ``--posted DIR`` holding their
   free-energy CSVs (``*1a*.csv``, ``*1b*.csv``: time, free_energy or total_energy), the spread of
   their F at the report times and whether ours lies inside it.

Usage:  python benchmarks/pfhub.py [--quick] [--backend cpu|gpu] [--posted DIR]
        (--quick: 50 × 50 cells (dx = 4) to t = 100 (1c: 10), convergence to t = 10; tables also to
        $OUT/pfhub_bench.md)
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels import backend as bk  # noqa: E402
from kernels.cahn_hilliard import pfhub  # noqa: E402
from kernels.cahn_hilliard.simulation import CahnHilliard  # noqa: E402

#: wall seconds / simulated time posted to PFHub (usnistgov/pfhub _data/simulations/<id>/meta.yaml)
POSTED_WALL = [
    ("1a", "fenics_1a_ivan", "FEniCS", 388, 1160036.7),
    ("1a", "itg_moose_1a", "MOOSE", 1774, 1073370),
    ("1a", "moose_1a_jah", "MOOSE", 1958.849, 1000000),
    ("1a", "fipy_1a_travis", "FiPy", 1495.47, None),
    ("1a", "mmsp_1a_travis", "MMSP", 1125.39, None),
    ("1a", "memphis_1a", "MEMPHIS", 13864, 100000),
    ("1a", "meumapps_bm1a", "MEUMAPPS (spectral, 128², dt 0.1)", 2100, 100000),
    ("1a", "prismspf_1a", "PRISMS-PF", 708, 10000),
    ("1b", "fenics_1b_ivan", "FEniCS", 774, 1038937.5),
    ("1b", "itg_moose_1b", "MOOSE", 2280, 983023),
    ("1b", "moose_1b_jah", "MOOSE", 6137.981, 1000000),
    ("1b", "hiperc_1b_cuda", "HiPerC (CUDA)", 7464, None),
    ("1b", "memphis_1b", "MEMPHIS", 13343, 100000),
    ("1b", "prismspf_1b", "PRISMS-PF", 882, 10000),
]
LINES: list[str] = []


def say(text=""):
    print(text, flush=True)
    LINES.append(text)


def run_one(be, name, dx, tol, t_end, rule=True, budget=None):
    """One run; ``budget`` (wall seconds) cuts it short (reason "cancelled": see the t reached)."""
    sim = CahnHilliard(pfhub.preset_params(name, dx=dx, tolerance=tol), be)
    start = time.perf_counter()
    return pfhub.run(sim, t_end=t_end, stop_rate=pfhub.EQUILIBRIUM_RATE if rule else None,
                     cancelled=None if budget is None else lambda: time.perf_counter() - start > budget)


def fmt(x):
    return "—" if x is None or not np.isfinite(x) else f"{x:.6g}"


def posted_spread(folder, variant, times):
    """{t: (min, max, n)} of F over the posted CSVs of ``variant`` in ``folder``."""
    curves = []
    for path in sorted(glob.glob(os.path.join(folder, f"*{variant}*.csv"))):
        try:
            curves.append(pfhub.read_posted_curve(path))
        except Exception as exc:                 # a file we cannot read is reported, not fatal
            say(f"- skipped {os.path.basename(path)}: {exc}")
    out = {}
    for t in times:
        vals = [float(np.interp(t, ct, cf)) for ct, cf in curves if ct.min() <= t <= ct.max()]
        if vals:
            out[t] = (min(vals), max(vals), len(vals))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small grid, short times (CPU-friendly)")
    ap.add_argument("--backend", default=None, help="cpu or gpu (default: the GPU when present)")
    ap.add_argument("--t-end", type=float, default=None, help="horizon of the runs (default 1e6; quick 1e3)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="adaptive step tolerance of the runs (RMS)")
    ap.add_argument("--posted", default=None, help="folder of posted free-energy CSVs to compare with")
    ap.add_argument("--runs", default="1a,1a:1e-3,1b,1c",
                    help="the runs of part 1: variant[:tolerance], comma-separated (default 1a,1a:1e-3,1b,1c; "
                         "no tolerance: --tolerance)")
    ap.add_argument("--skip-convergence", action="store_true", help="leave out part 2")
    ap.add_argument("--budget", type=float, default=120.0, help="wall seconds per run at most (default 120; "
                    "a run cut short says 'cancelled' and the t it reached)")
    a = ap.parse_args()
    be = bk.select(a.backend)
    dx = 4.0 if a.quick else 1.0
    t_end = a.t_end or (1e2 if a.quick else pfhub.T_END)
    t_conv = 10.0 if a.quick else 1e2
    say(f"# PFHub benchmark 1 ({be.name}: {be.device_name})\n")
    run_one(be, "pfhub-1a", 4.0, a.tolerance, 10.0)                  # warm-up (FFT plans, kernels)
    say(f"## 1. Runs to equilibrium (|dF/dt|/V < {pfhub.EQUILIBRIUM_RATE:g}) or t = {t_end:g}, dx = {dx:g} "
        f"({int(200 / dx)}² cells), tolerance {a.tolerance:g}\n")
    times = [t for t in (*pfhub.REPORT_TIMES, 1e5, 1e6) if t <= t_end]
    say("| variant | tolerance | wall s | accepted steps | rejected | t reached | stopped | "
        + " | ".join(f"F({t:g})" for t in times) + " |")
    say("|---|---|---|---|---|---|---|" + "---|" * len(times))
    results = {}
    plan = []
    for item in a.runs.split(","):
        var, _, tol = item.strip().partition(":")
        plan.append(("pfhub-" + var, float(tol) if tol else a.tolerance))
    for name, tol in plan:
        r = run_one(be, name, dx, tol, min(t_end, 10.0) if a.quick and name == "pfhub-1c" else t_end,
                    budget=a.budget)
        results.setdefault(name, r)
        say(f"| {name[-2:]} | {tol:g} | {r.seconds:.2f} | {r.steps:,} | {r.rejected:,} | {r.t[-1]:.6g} | {r.reason} | "
            + " | ".join(fmt(r.energy_at(t)) for t in times) + " |")
    say("\nF(0) of the discrete field: " + ", ".join(f"{n[-2:]} {r.free_energy[0]:.7g}" for n, r in results.items())
        + f"; the analytic integral over the square {pfhub.analytic_initial_energy():.7g} (1a's periodic wrap adds "
        "the jump of the non-periodic start at the edges).\n")

    rt = [t for t in pfhub.REPORT_TIMES if t <= t_conv]
    studies = [("dx", [(d, a.tolerance) for d in ((8.0, 4.0, 2.0) if a.quick else (2.0, 1.0, 0.5))]),
               ("tolerance", [(dx, tol) for tol in (1e-3, 1e-4, 1e-5)])]
    for what, cases in [] if a.skip_convergence else studies:
        say(f"## 2. Convergence in {what} (1a, to t = {t_conv:g})\n")
        say(f"| dx | tolerance | steps | wall s | " + " | ".join(f"F({t:g})" for t in rt)
            + " | max |ΔF| vs finest |")
        say("|---|---|---|---|" + "---|" * (len(rt) + 1))
        runs = [(d, tol, run_one(be, "pfhub-1a", d, tol, t_conv, rule=False, budget=a.budget)) for d, tol in cases]
        fine = runs[-1][2]
        for d, tol, r in runs:
            dev = max(abs(r.energy_at(t) - fine.energy_at(t)) for t in rt)
            say(f"| {d:g} | {tol:g} | {r.steps:,} | {r.seconds:.2f} | "
                + " | ".join(fmt(r.energy_at(t)) for t in rt) + f" | {dev:.3g} |")
        say()

    say("## 3. Posted PFHub results\n")
    say("Wall times posted to PFHub (usnistgov/pfhub `_data/simulations/<id>/meta.yaml`; their hardware, "
        "mostly CPU cores):\n")
    say("| variant | id | code | wall s | sim time |")
    say("|---|---|---|---|---|")
    for var, sid, code, wall, sim_t in POSTED_WALL:
        say(f"| {var} | {sid} | {code} | {wall:g} | {fmt(sim_t)} |")
    if a.posted:
        for var in ("1a", "1b", "1c"):
            if f"pfhub-{var}" not in results:
                continue
            spread = posted_spread(a.posted, var, pfhub.REPORT_TIMES)
            r = results[f"pfhub-{var}"]
            say(f"\n{var}: ours against the posted spread\n")
            say("| t | posted min | posted max | codes | ours | inside |")
            say("|---|---|---|---|---|---|")
            for t, (lo, hi, n) in spread.items():
                f = r.energy_at(t)
                say(f"| {t:g} | {lo:.6g} | {hi:.6g} | {n} | {fmt(f)} | {'yes' if lo <= f <= hi else 'no'} |")
    else:
        say("\nNo posted free-energy curves given (--posted DIR): the comparison of F(t) is not made here.")
    save_markdown("pfhub_bench.md", "\n".join(LINES))


if __name__ == "__main__":
    main()
