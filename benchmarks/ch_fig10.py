"""Paper 001 §4.9 (Fig. 10) re-measured: Cahn–Hilliard time per 1024 RK2 steps against field length N
on one core, on every core (OpenMP threads), the NumPy reference, one GPU and every GPU.

Through ``kernels.cahn_hilliard.fig10.run_fig10`` (the GUI's Reproduce tab uses the same runner).
Prints the table (seconds per 1024 steps; steps actually timed in brackets when fewer than 1024),
the speed-ups over the single core, and which of the paper's claims hold.  2D float32 by default.

Usage:  python benchmarks/ch_fig10.py [--quick] [--dim 2] [--budget 2] [--threads 0] [--variant C]
        [--sizes 256,512,…]   [--experiment devices|layouts]
        (markdown also to $OUT/ch_fig10_<experiment>_<dim>d.md, rows to .csv beside it)
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

LINES: list[str] = []


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


def main():
    from kernels.cahn_hilliard import fig10
    from kernels.cahn_hilliard.cpu_threads import resolve_threads

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="QUICK_SIZES and a short budget (a dry run)")
    ap.add_argument("--dim", type=int, default=2, choices=(2, 3))
    ap.add_argument("--sizes", help="comma-separated N (default: the paper's range, or QUICK_SIZES)")
    ap.add_argument("--budget", type=float, default=None, help="seconds of timed steps per point (default 2)")
    ap.add_argument("--threads", type=int, default=0, help="threads of the threads method (0: every core)")
    ap.add_argument("--variant", default="C", help="CUDA variant of the GPU methods (default C, paper 001 Alg. 6)")
    ap.add_argument("--exchange", default="host", help="multi-GPU halo exchange (default host, as the paper)")
    ap.add_argument("--experiment", default="devices", choices=tuple(fig10.EXPERIMENTS),
                    help="devices: paper 001 Fig. 10; layouts: paper 000's tiles and strips vs rectangles (GPU)")
    a = ap.parse_args()
    gpus = fig10.gpu_count()
    if a.sizes:
        sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    elif a.dim == 3:
        sizes = [32, 64, 128] if a.quick else [64, 128, 192, 256]
    else:
        sizes = list(fig10.QUICK_SIZES if a.quick or not gpus else fig10.PAPER_SIZES)
    budget = a.budget if a.budget is not None else (0.3 if a.quick else 2.0)
    layouts = a.experiment == "layouts"
    methods = list(fig10.LAYOUTS) if layouts else fig10.default_methods(gpus)
    threads = resolve_threads(a.threads)
    out(f"# {'Paper 000 layouts' if layouts else 'Paper 001 Fig. 10'} — Cahn–Hilliard {a.dim}D RK2 float32, "
        "time per 1024 steps")
    out()
    out(f"{threads} CPU threads ({os.cpu_count()} cores seen), {gpus} GPU(s); GPU variant {a.variant}, "
        f"multi-GPU exchange {a.exchange}; ≤ {budget:g} s of timed steps per point")
    out()
    rows = []
    t0 = time.perf_counter()
    for r in fig10.run_fig10(sizes, methods, dim=a.dim, threads=threads, variant=a.variant, gpus=max(gpus, 2),
                             exchange=a.exchange, budget=budget):
        rows.append(r)
        print(f"  N = {r.n} {r.method}: {r.per_1024:.4g} s / 1024 steps ({r.steps} timed; "
              f"{time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    devices = {r.method: r.device for r in rows}
    out("| N | " + " | ".join(fig10.LABELS.get(m, m) for m in methods) + " |")
    out("|---|" + "---|" * len(methods))
    t = {(r.n, r.method): r for r in rows}
    for n in sorted({r.n for r in rows}):
        cells = []
        for m in methods:
            r = t.get((n, m))
            cells.append("—" if r is None else f"{r.per_1024:.4g}" + ("" if r.steps >= 1024 else f" ({r.steps})"))
        out(f"| {n} | " + " | ".join(cells) + " |")
    out()
    out("Seconds per 1024 steps (in brackets: steps timed when fewer). Devices: "
        + "; ".join(f"{m}: {d}" for m, d in devices.items()))
    out()
    ups = fig10.speedups(rows, "A rectangles" if layouts else "single")
    if ups:
        out(f"Speed-up over {'A rectangles' if layouts else 'the single core'}: " + "; ".join(
            f"N = {n}: " + ", ".join(f"{m} {s:.1f}×" for (nn, m), s in ups.items() if nn == n)
            for n in sorted({n for n, _ in ups})))
        out()
    out("Paper 000's claims:" if layouts else "Paper 001's claims:")
    for claim, holds, why in (fig10.LAYOUT_TIMES if layouts else fig10.FIG10).claims(rows):
        verdict = "not measured" if holds is None else ("holds" if holds else "does NOT hold")
        out(f"- {claim}: **{verdict}** ({why})")
    stem = f"ch_fig10_{a.experiment}_{a.dim}d"
    save_markdown(stem + ".md", "\n".join(LINES))
    if os.environ.get("OUT"):
        (fig10.LAYOUT_TIMES if layouts else fig10.FIG10).to_csv(rows, os.path.join(os.environ["OUT"], stem + ".csv"))


if __name__ == "__main__":
    main()
