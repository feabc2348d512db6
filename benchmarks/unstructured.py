"""Paper 003's case study: both GPU versions vs the CPU NumPy reference over mesh sizes and k−1.

    python benchmarks/unstructured.py [--quick] [--dtype float64|float32] [--json out.json]

For each mesh size and k−1 (paper Table 3 uses k−1 = 1 … 5; it gives no mesh size) the script times
one iteration (cell stage, edge stage, update) of

* CPU  — the NumPy reference (``kernels.occupancy.unstructured.cpu_step``),
* GPU1 — the paper's original mapping: one cell (one edge) per block, one thread per solution point,
* GPU2 — the occupancy-improved version: several cells per block, cell+edge stages fused,
         parameter-major data (cells per block chosen by the calculator for this GPU),

checks that all three give the same numbers, and prints a markdown table of times, speed-ups and the
theoretical occupancy of the cell-stage kernels on this GPU and on the paper's Tesla T10.  With
``$OUT`` set the table is also written to ``$OUT/unstructured_bench.md``.
The CPU baseline is vectorised NumPy on one core — not the paper's optimised CPU code.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402


def cpu_time(pb, steps: int) -> float:
    from kernels.occupancy.unstructured import cpu_step
    u = pb.u0
    u, _ = cpu_step(pb, u)                         # warm-up
    t0 = time.perf_counter()
    for _ in range(steps):
        u, _ = cpu_step(pb, u)
    return (time.perf_counter() - t0) / steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two small meshes, k−1 ∈ {1, 3, 5}")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--params", type=int, default=4, help="#Parameters per solution point")
    ap.add_argument("--sizes", type=int, nargs="*", help="mesh sizes (triangles)")
    ap.add_argument("--json", help="write all rows as JSON here")
    a = ap.parse_args(argv)

    import cupy as cp

    from kernels.occupancy import unstructured as U
    from kernels.occupancy.gpu import device_spec

    spec = device_spec()
    sizes = a.sizes or ([2_000, 50_000] if a.quick else [2_000, 20_000, 200_000, 1_000_000])
    ms = [1, 3, 5] if a.quick else [1, 2, 3, 4, 5]
    dtype = np.dtype(a.dtype)
    lines = [f"# Paper 003 case study — {spec.examples} (CC {spec.cc}), CuPy {cp.__version__}, "
             f"{time.strftime('%Y-%m-%d')}", "",
             f"Per-iteration times (cell + edge + update stages), {dtype.name}, {a.params} parameters per point, "
             "1 inner point; perturbed-grid meshes with randomly numbered cells. "
             "Occupancy: theoretical, cell-stage kernel (fused cell+edge kernel in GPU2), "
             "this GPU with the kernels' real registers / Tesla T10 (CC 1.3) with GPU2 packed the paper's way "
             "(two warps per block).", "",
             "| cells | k−1 | points | CPU ms | GPU1 ms | GPU2 ms | CPU/GPU1 | CPU/GPU2 | GPU1/GPU2 | "
             "occ. GPU1 | occ. GPU2 (cells/block) | T10 GPU1→GPU2 | max rel. diff |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    rows = []
    for n in sizes:
        mesh = U.generate_mesh(n, seed=12345)
        for m in ms:
            pb = U.make_problem(mesh, m, 1, a.params, dtype=dtype)
            cpu_steps = max(1, min(20, int(2e6 // max(pb.n_points, 1))))
            t_cpu = cpu_time(pb, cpu_steps)
            g1, g2 = U.GPUSolver(pb, "original"), U.GPUSolver(pb, "improved", "auto")
            gpu_steps = max(5, min(200, int(5e7 // max(pb.n_points, 1))))
            t1, t2 = g1.time_per_step(gpu_steps), g2.time_per_step(gpu_steps)
            # correctness: a few steps from u0 on all three
            ref, _ = U.cpu_run(pb, 3)
            g1.reset()
            g2.reset()
            d = max(float(np.max(np.abs(g.run(3)[0].astype(np.float64) - ref))) for g in (g1, g2))
            rel = d / max(float(np.abs(ref).max()), 1e-30)
            o1, o2 = g1.occupancy(spec), g2.occupancy(spec)
            regs = {k: min(v["registers"], 32) for k, v in {**o1, **o2}.items()}
            t10 = U.case_study_occupancy("1.3", m, 1, a.params, dtype.itemsize, regs=regs)
            row = {"cells": mesh.n_cells, "k_minus_1": m, "points": pb.n_points, "cpu_s": t_cpu, "gpu1_s": t1,
                   "gpu2_s": t2, "speedup1": t_cpu / t1, "speedup2": t_cpu / t2, "gpu1_over_gpu2": t1 / t2,
                   "occ1": o1["cell_orig"]["occupancy"], "occ2": o2["celledge_impr"]["occupancy"],
                   "cells_per_block": g2.cells_per_block, "t10_occ1": t10["occupancy"]["original"],
                   "t10_occ2": t10["occupancy"]["improved"], "max_rel_diff": rel,
                   "regs": {k: v["registers"] for k, v in {**o1, **o2}.items()}}
            rows.append(row)
            line = (f"| {row['cells']} | {m} | {pb.n_points} | {t_cpu * 1e3:.2f} | {t1 * 1e3:.3f} | {t2 * 1e3:.3f} | "
                    f"{row['speedup1']:.1f}× | {row['speedup2']:.1f}× | {row['gpu1_over_gpu2']:.2f} | "
                    f"{row['occ1']:.0%} | {row['occ2']:.0%} ({g2.cells_per_block}) | "
                    f"{row['t10_occ1']:.0%}→{row['t10_occ2']:.0%} | {rel:.1e} |")
            lines.append(line)
            print(line, flush=True)
            del g1, g2
            cp.get_default_memory_pool().free_all_blocks()
    lines += ["", "Paper 003 Table 3 (Tesla T10 vs optimised CPU code): k−1 = 1…5 → CPU/GPU1 "
              + ", ".join(str(v[0]) for v in U.PAPER_TABLE3.values()) + "; CPU/GPU2 "
              + ", ".join(str(v[1]) for v in U.PAPER_TABLE3.values()) + "."]
    print(lines[-1])
    save_markdown("unstructured_bench.md", "\n".join(lines))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": spec.examples, "cc": spec.cc, "dtype": dtype.name, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
