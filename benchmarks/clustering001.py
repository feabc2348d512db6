"""Paper 001 §5.7 (Figs. 14–15) re-measured: clustering-coefficient time vs V at the paper's sizes.

Watts–Strogatz k = 50, p = 0.1 (V = 20 000 … 200 000) and Barabási–Albert k ≈ 50 (V = 10 000 …
100 000), through ``kernels.graphs.experiments.cc_timing.run_cc_sweep`` (the GUI tab's and ``main.py
graph-clustering``'s runner): single-core CPU, the threaded CPU version (all cores), GPU kernel 1
(one thread per arc) and kernel 2 (arcs sorted by end-vertex degree), and networkx.transitivity
as the peer at the smallest V of each family.  Prints per V the mean time of each method, the
speed-ups over the single core and C, then the fitted log–log slopes next to the paper's; checks
that every method counts the same t and p.

Usage:  python benchmarks/clustering001.py [--cpu-repeats 2] [--gpu-repeats 10] [--quick]
        [--sizes ws=V,V,… --sizes ba=V,V,…]
(markdown also to $OUT/clustering001_bench.md).  ``--sizes`` replaces a family's sizes (at least two,
for a slope); the test suite's dry run uses ``--sizes ws=500,1000 --sizes ba=500,1000``: every method
and the networkx peer on both families, at small V.
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
    from kernels.backend import select
    from kernels.graphs.experiments import cc_timing as cc

    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu-repeats", type=int, default=2)
    ap.add_argument("--gpu-repeats", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="QUICK_SIZES instead of the paper's (a dry run)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", action="append", default=[], metavar="FAMILY=V,V,…",
                    help="a family's sizes instead of the paper's or QUICK_SIZES (repeat per family)")
    a = ap.parse_args()
    be = select("auto")
    sizes = {f: list((cc.QUICK_SIZES if a.quick else cc.PAPER_SIZES)[f]) for f in cc.FAMILIES}
    for spec in a.sizes:
        fam, _, vs = spec.partition("=")
        if fam not in sizes:
            ap.error(f"--sizes {spec!r}: unknown family {fam!r} (use {', '.join(sizes)})")
        try:
            sizes[fam] = [int(v) for v in vs.split(",")]
        except ValueError:
            ap.error(f"--sizes {spec!r}: give FAMILY=V,V,… with whole numbers")
    gpu = [m for m in cc.GPU_METHODS if be.is_gpu]
    workers = cc.default_workers()
    out(f"# Paper 001 clustering timings — {be.describe()}, {workers} CPU threads")
    out()
    t_start = time.perf_counter()
    rows = []
    reps = {"cpu": a.cpu_repeats, "cpu-threads": a.cpu_repeats, **{m: a.gpu_repeats for m in gpu}}
    peers = {f: ns[:1] + ns[1:2] for f, ns in sizes.items()}      # networkx: the two smallest V (a slope)
    for part, methods in ((sizes, list(reps)), (peers, ["networkx"])):
        for r in cc.run_cc_sweep(part, methods, reps, backend=be, seed=a.seed, workers=workers):
            rows.append(r)
            print(f"  {r.family} V = {r.n} {r.method}: {r.seconds * 1e3:.3f} ms "
                  f"({time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)
    ref = {(r.family, r.n): (r.t, r.p) for r in rows if r.method == "cpu"}
    agree = all((r.t, r.p) == ref[(r.family, r.n)] for r in rows)
    methods = list(dict.fromkeys(r.method for r in rows))
    t = {(r.family, r.n, r.method): r for r in rows}
    out(f"CPU methods: mean of {a.cpu_repeats} runs, GPU kernels: mean of {a.gpu_repeats} runs (inputs already "
        "on the device), each method after one untimed run on its first graph; networkx: one run at the two "
        "smallest V.")
    out()
    out("| graph | V | edges | " + " | ".join(f"{m} (ms)" for m in methods) +
        " | kernel 1 / 2 speed-up over 1 core | C |")
    out("|---|---|---|" + "---|" * len(methods) + "---|---|")
    for f, ns in sizes.items():
        for n in ns:
            cells = [f"{t[(f, n, m)].seconds * 1e3:.3f}" if (f, n, m) in t else "—" for m in methods]
            sp = [f"{t[(f, n, 'cpu')].seconds / t[(f, n, m)].seconds:.0f}×" for m in gpu]
            r0 = t[(f, n, "cpu")]
            out(f"| {f.upper()} | {n} | {r0.m} | " + " | ".join(cells) + f" | {' / '.join(sp) or '—'} | "
                f"{r0.clustering:.4f} |")
    out()
    slopes = cc.fit_slopes(rows)
    out("Log–log slopes of time vs V (paper 001 Figs. 14–15; ours / paper's):")
    out()
    out("| graph | " + " | ".join(methods) + " |")
    out("|---|" + "---|" * len(methods))
    for f in sizes:
        cells = []
        for m in methods:
            paper = cc.PAPER_SLOPES[f].get(cc.PAPER_NAME.get(m, ""))
            mine = slopes.get((f, m))
            cells.append(("—" if mine is None else f"{mine:.2f}") + (f" / {paper}" if paper is not None else ""))
        out(f"| {f.upper()} | " + " | ".join(cells) + " |")
    out()
    out(f"Clustering levels: WS {t[('ws', sizes['ws'][-1], 'cpu')].clustering:.3f} (paper ≈ 0.53), "
        f"BA {t[('ba', sizes['ba'][-1], 'cpu')].clustering:.4f} at V = {sizes['ba'][-1]} (paper ≈ 0.01).")
    out(f"All methods count the same t and p on every graph: **{agree}**.  Total {time.perf_counter() - t_start:.0f} s.")
    save_markdown("clustering001_bench.md", "\n".join(LINES))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
