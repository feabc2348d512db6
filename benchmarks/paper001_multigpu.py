"""Paper 001 on 1 vs 2 GPUs of one host: RNG Table 1, clustering Figs. 14–15, APSP rows split.

* **RNG** (paper 001 §6.5, Table 1: 24·10⁹ numbers, discarded): approach 1 (T = 30 720 threads
  per GPU, L = 97) and approach 2 (one L = 92 153 table per GPU) on 1 and 2 GPUs through
  ``kernels.rng.quality.table1`` (the RNG panel's runner), next to the paper's GTX 295 times
  (CUDA 1 8.40 s → multi-GPU 4.33 s; CUDA 2 15.44 s → 8.33 s).  Approach 1 draws the full 24·10⁹;
  approach 2 (a Python-side launch per ≤ 30 718 numbers) a tenth, extrapolated.
* **Clustering** (§5.5, §5.7): kernels 1 and 2 on one GPU (``gpu-arc``/``gpu-sorted``) and over
  2 GPUs (``multi-arc``/``multi-sorted``: graph replicated, arcs in work blocks of
  256 × 8 × #SMs through a shared cursor) on WS k = 50, p = 0.1, V = 20 000 … 200 000 and BA
  k ≈ 50, V = 10 000 … 100 000 via ``kernels.graphs.experiments.cc_timing.run_cc_sweep``; the 1-GPU / 2-GPU
  time ratio beside the paper's (WS kernel 1: 1.3× slower at 20 000, 1.1× faster at 40 000, 1.5×
  faster at 200 000; BA kernel 2: 1.3× … 1.7× faster).  Every row's t, p must equal the first
  method's.
* **APSP** (beyond the paper): ``gpu-bfs`` vs ``multi-bfs`` on 2 GPUs, BA k = 100.

Usage: ``python benchmarks/paper001_multigpu.py [--quick] [--repeats 10] [--rng-numbers N] [--cc-sizes V,V]``
— markdown and CSVs to ``$OUT`` when set.  ``--quick``: small sizes (runs on the CPU backend with
virtual GPUs: a dry run); the test suite's adds ``--repeats 1 --rng-numbers 1e6 --cc-sizes 500,1000``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

LINES: list[str] = []
#: paper 001 §5.7: 2-GPU over 1-GPU speed-ups it states (V → factor; < 1 = slower)
PAPER_CC = {("ws", "arc"): {20_000: 1 / 1.3, 40_000: 1.1, 200_000: 1.5},
            ("ba", "sorted"): "1.3× (smallest V) … 1.7× (largest V), always faster"}


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


def save_csv(name, rows, columns):
    d = os.environ.get("OUT")
    if not d:
        return
    import csv
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow([getattr(r, c) for c in columns])


def rng_section(be, quick, repeats=3, numbers=None):
    """``numbers``: approach 1's count (approach 2 draws a tenth); default 10⁷ with ``quick``, else
    Table 1's 24·10⁹.  Best of ``repeats`` (at most 3; approach 2 at most 2)."""
    from kernels.rng import quality as q
    out("### RNG: paper 001 Table 1 on 1 and 2 GPUs")
    out()
    n1 = int(numbers or (10 ** 7 if quick else 24 * 10 ** 9))
    n2 = max(1, n1 // 10)
    rows = (list(q.table1(n1, ("gpu1",), be, (1, 2), repeats=min(3, repeats)))
            + list(q.table1(n2, ("gpu2",), be, (1, 2), repeats=min(2, repeats))))
    if not quick:
        rows += list(q.table1(24 * 10 ** 7, ("threads",), be, repeats=1))
    out("| approach | GPUs | where | streams | numbers timed | time (s) | numbers/s | 24·10⁹ numbers (s) | "
        "paper (s) | paper row | test vector |")
    out("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        out(f"| {r.approach} | {r.gpus} | {r.devices} | {r.streams} | {r.numbers:.3g} | {r.seconds:.4g} | "
            f"{r.rate:.3g} | {r.extrapolated:.4g} | {'' if r.paper_seconds is None else r.paper_seconds} | "
            f"{r.paper_row} | {'pass' if r.test_vector else 'FAIL'} |")
    by = {(r.approach, r.gpus): r for r in rows}
    for a, paper in (("gpu1", 8.40 / 4.33), ("gpu2", 15.44 / 8.33)):
        if (a, 1) in by and (a, 2) in by:
            out(f"\n{a}: 2 GPUs / 1 GPU speed-up {by[a, 1].extrapolated / by[a, 2].extrapolated:.2f}× "
                f"(paper {paper:.2f}×)")
    save_csv("paper001_multigpu_rng.csv", rows, q.CSV_COLUMNS)
    out()


def cc_section(be, quick, repeats, gpus, cc_sizes=None):
    from kernels.graphs.experiments import cc_timing as cc
    out(f"### Clustering coefficient: kernels 1 and 2 on 1 GPU and over {gpus} GPUs")
    out()
    sizes = ({"ws": [2000, 4000], "ba": [2000, 4000]} if quick else
             {"ws": [20_000, 40_000, 60_000, 100_000, 140_000, 200_000],
              "ba": [10_000, 20_000, 40_000, 70_000, 100_000]})
    if cc_sizes:
        sizes = {f: [int(v) for v in cc_sizes.split(",")] for f in sizes}
    methods = ["gpu-arc", "gpu-sorted", "multi-arc", "multi-sorted"] if be.is_gpu else \
        ["cpu", "multi-arc", "multi-sorted"]
    t0 = time.perf_counter()
    rows = list(cc.run_cc_sweep(sizes, methods, repeats, be, seed=1, gpus=gpus))
    t = {(r.family, r.n, r.method): r for r in rows}
    out(f"Mean of {repeats} timed counts after one untimed; ms. Ratio = 1-GPU time / {gpus}-GPU time "
        "(> 1: the GPUs are faster).")
    out()
    out("| graph | V | arcs | gpu-arc | multi-arc | ratio k1 | gpu-sorted | multi-sorted | ratio k2 | paper (2 GPUs) "
        "| C | agree |")
    out("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f, ns in sizes.items():
        for n in ns:
            g = {m: t.get((f, n, m)) for m in ("gpu-arc", "multi-arc", "gpu-sorted", "multi-sorted", "cpu")}
            one1, one2 = g["gpu-arc"] or g["cpu"], g["gpu-sorted"] or g["cpu"]
            k1 = one1.seconds / g["multi-arc"].seconds
            k2 = one2.seconds / g["multi-sorted"].seconds
            paper = PAPER_CC.get((f, "arc"), {}).get(n) if f == "ws" else None
            ptext = (f"k1 {paper:.2f}×" if paper else "") if f == "ws" else "k2 1.3×–1.7×"
            agree = all(r.agrees for r in rows if r.family == f and r.n == n)
            ms = lambda r: f"{r.seconds * 1e3:.3f}" if r is not None else "—"  # noqa: E731
            out(f"| {f.upper()} | {n} | {2 * one1.m} | {ms(g['gpu-arc'])} | {ms(g['multi-arc'])} | {k1:.2f}× | "
                f"{ms(g['gpu-sorted'])} | {ms(g['multi-sorted'])} | {k2:.2f}× | {ptext} | {one1.clustering:.4f} | "
                f"{agree} |")
    fits = cc.fit_slopes(rows)
    out()
    out("Log–log slopes of time vs V (ours / paper's): " + "; ".join(
        f"{f.upper()} {m} {s:.2f} / {cc.PAPER_SLOPES[f].get(cc.PAPER_NAME.get(m, ''), '—')}"
        for (f, m), s in sorted(fits.items())))
    out(f"\nAll methods count the same t and p: **{all(r.agrees for r in rows)}** ({time.perf_counter() - t0:.0f} s)")
    save_csv("paper001_multigpu_cc.csv", rows, cc.CSV_COLUMNS)
    out()


def apsp_section(be, quick, gpus):
    import numpy as np

    from kernels.graphs.data import generators as G
    from kernels.graphs.apsp import apsp
    out(f"### APSP: sources split over {gpus} GPUs (beyond the paper)")
    out()
    n = (500 if not be.is_gpu else 2000) if quick else 30_000      # a CPU dry run: the smallest that shows the split
    g = G.barabasi_albert(n, 50, 1)
    one = apsp(g, "gpu-bfs" if be.is_gpu else "cpu", be)
    multi = apsp(g, "multi-bfs", be, gpus=gpus)
    multi = apsp(g, "multi-bfs", be, gpus=gpus)              # second run: compiled, pools warm
    same = bool(np.array_equal(one.dist, multi.dist))
    out(f"BA k = 100, V = {n}: {one.method} {one.seconds:.3f} s, multi-bfs on {gpus} GPUs {multi.seconds:.3f} s "
        f"({one.seconds / multi.seconds:.2f}×), batches per GPU {multi.timings['batches_per_device']}, "
        f"rows equal: **{same}**")
    out()


def main():
    from kernels.backend import select
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--skip", default="", help="comma list of sections to skip: rng, cc, apsp")
    ap.add_argument("--rng-numbers", type=float, default=None,
                    help="RNG approach 1's count (approach 2: a tenth); default 1e7 with --quick, else 24e9")
    ap.add_argument("--cc-sizes", default=None, metavar="V,V",
                    help="the clustering section's sizes for both families (default --quick 2000,4000)")
    a = ap.parse_args()
    be = select("auto")
    skip = set(filter(None, a.skip.split(",")))
    dev = "CPU (virtual GPUs)"
    if be.is_gpu:
        import cupy as cp
        n = cp.cuda.runtime.getDeviceCount()
        dev = f"{n} × {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()} (CuPy {cp.__version__})"
    out(f"## Paper 001 on 1 vs {a.gpus} GPUs (benchmarks/paper001_multigpu.py)")
    out()
    out(f"Devices: {dev}; {os.cpu_count()} CPU threads; {time.strftime('%Y-%m-%d')}.")
    out()
    t0 = time.perf_counter()
    if "rng" not in skip:
        rng_section(be, a.quick, a.repeats, a.rng_numbers)
    if "cc" not in skip:
        cc_section(be, a.quick, a.repeats, a.gpus, a.cc_sizes)
    if "apsp" not in skip:
        apsp_section(be, a.quick, a.gpus)
    out(f"Total {time.perf_counter() - t0:.0f} s.")
    save_markdown("paper001_multigpu.md", "\n".join(LINES))


if __name__ == "__main__":
    main()
