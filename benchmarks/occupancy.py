"""Occupancy: calculator vs the CUDA API, and measured throughput vs theoretical occupancy.

    python benchmarks/occupancy.py [--json out.json]

Prints markdown tables for benchmarks/RESULTS.md:
1. agreement of kernels.occupancy with cudaOccupancyMaxActiveBlocksPerMultiprocessor over the
   forced-register sweep (block sizes × registers × static/dynamic shared memory);
2. the app's kernels: registers, static shared memory, occupancy at their launch block size;
3. block-size sweeps of two app kernels (Cahn–Hilliard variant A stage, Marsaglia per-thread
   generator): measured throughput beside theoretical occupancy.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write all rows as JSON here")
    ap.add_argument("--ch-size", type=int, default=4096)
    ap.add_argument("--rng-threads", type=int, default=30720 * 8)
    ap.add_argument("--quick", action="store_true", help="small block-size sweeps (a smoke test)")
    a = ap.parse_args(argv)
    if a.quick:
        a.ch_size, a.rng_threads = 512, 30720

    import cupy as cp

    from kernels.occupancy import gpu as og
    from kernels import app_kernels
    spec = og.device_spec()
    dev = spec.examples
    print(f"# Occupancy benchmark — {dev} (CC {spec.cc}), CuPy {cp.__version__}, "
          f"{time.strftime('%Y-%m-%d')}\n")
    out = {"device": dev, "cc": spec.cc}

    t0 = time.perf_counter()
    kernels = og.register_sweep_kernels()
    t_compile = time.perf_counter() - t0
    sweep = og.ground_truth_sweep(kernels)
    regs = sorted({r["registers"] for r in sweep["rows"]})
    print("## Calculator vs CUDA occupancy API\n")
    print(f"{sweep['agree']} of {sweep['n']} configurations agree exactly ({sweep['api']}); "
          f"{len(kernels)} kernels compiled with --maxrregcount (registers {regs}), static shared memory "
          f"0 / 12000 B, dynamic 0 … 200000 B, 13 block sizes 32 … 1024 "
          f"(compile {t_compile:.1f} s, queries {sweep['seconds']:.2f} s).\n")
    by_lim: dict = {}
    for r in sweep["rows"]:
        by_lim.setdefault(r["limiter"], [0, 0])
        by_lim[r["limiter"]][0] += 1
        by_lim[r["limiter"]][1] += r["driver"] == r["calculator"]
    print("| limiter (calculator) | configurations | agree |\n|---|---:|---:|")
    for k, (n, ok) in sorted(by_lim.items()):
        print(f"| {k} | {n} | {ok} |")
    out["sweep"] = {k: v for k, v in sweep.items() if k != "rows"}
    carve = {}
    for c in (0, 25, 50, 100):
        ks = og.register_sweep_kernels(maxrreg=(32, 64, 128))
        s = og.ground_truth_sweep(ks, blocks=(64, 128, 256, 512), carveout=c,
                                  dyn_smem=(0, 4096, 12288, 30000, 70000, 150000))
        for _r, _s, k in ks:
            k.preferred_shared_memory_carveout = -1
        carve[c] = (s["agree"], s["n"])
    print("\n| carve-out preference | agree / configurations |\n|---|---:|")
    for c, (ok, n) in carve.items():
        print(f"| {c} % | {ok} / {n} |")
    out["carveout"] = carve

    print("\n## The app's kernels on this GPU\n")
    app_kernels.compile_app_kernels()
    rows = og.app_kernel_table()
    print("| kernel | registers | static smem (B) | max threads/block | block | blocks/SM | occupancy | limiter | driver blocks/SM |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        print(f"| `{r['name']}` | {r['registers']} | {r['static_smem']} | {r['max_threads_per_block']} | "
              f"{r['block']} | {r['active_blocks_per_sm']} | {r['occupancy']:.0%} | {r['limiter']} | "
              f"{r['driver_blocks_per_sm']} |")
    out["app_kernels"] = rows

    print("\n## Block-size sweeps: measured throughput vs theoretical occupancy\n")
    out["block_sweeps"] = {}
    for kind, size in (("ch_point", a.ch_size), ("rng_per_thread", a.rng_threads)):
        sw = app_kernels.block_size_sweep(kind, size)
        out["block_sweeps"][kind] = sw
        best = max(sw, key=lambda r: r["throughput"])
        unit = sw[0]["unit"]
        print(f"### `{kind}` (size {size}, {sw[0]['registers']} registers/thread) — best block {best['block']}\n")
        print(f"| block | time (ms) | {unit} | relative | occupancy | limiter |\n|---:|---:|---:|---:|---:|---|")
        for r in sw:
            print(f"| {r['block']} | {r['seconds'] * 1e3:.3f} | {r['throughput']:.3e} | "
                  f"{r['throughput'] / best['throughput']:.2f} | {r['occupancy']:.0%} | {r['limiter']} |")
        print()
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
