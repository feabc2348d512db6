"""Throughput of the Marsaglia lagged-Fibonacci RNG variants (paper 001 §6.7, Table 1).

Paper 001 times 24e9 numbers (numbers discarded).  We time a scaled-down
count per generator, report numbers/s and the time extrapolated to 24e9:

* sequential CPU (Alg. 26–27, pure Python, L = 97) — a small count;
* vectorised NumPy, single stream, L = 92 153 (Alg. 31–32 on the CPU);
* NumPy reference of approach 1 (30 720 streams, L = 97);
* GPU approach 1 (Alg. 29–30), T = 30 720, L = 97: "discard" (paper's
  setting, values xor-ed into a per-thread sink) and "store" (float32 to
  global memory);
* GPU approach 2 (Alg. 31–32), L = 92 153, 3 launches per L numbers:
  discard and store;
* ``cupy.random`` uniform float32 (cuRAND XORWOW legacy API and the
  Generator API), stored;
* approaches 1 and 2 as CUDA source run on the CPU (the GPU layer's host device), when a host
  C++ compiler is installed.

Usage: ``python benchmarks/rng.py [--quick] [--streams T]``; writes ``$OUT/rng_bench.md``
when ``OUT`` is set.  ``--streams``: approach 1's streams (default 30 720, the paper's); the test
suite's dry run takes ``--quick --streams 3072`` (the tables of 30 720 streams take most of it).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels import gpu, rng  # noqa: E402
from kernels.backend import gpu_available  # noqa: E402

TOTAL = 24e9
PAPER = {"cpu": 256.45, "gpu1": 8.40, "gpu2": 15.44}


def _cpu_time(fn, repeat=1):
    return gpu.timing.time_calls(fn, repeat=repeat, warmup=0).best


def _gpu_time(fn, repeat=3, device="cuda"):
    """Best of ``repeat`` calls after one warm-up (compile, pool): the GPU layer's timing helper
    (CUDA events on the GPU, perf_counter on the host device)."""
    return gpu.timing.time_calls(fn, repeat=repeat, warmup=1, device=device).best


def run(quick: bool = False, streams: int = 30720):
    rows = []

    def add(name, n, t, paper=None, note=""):
        rows.append((name, n, t, n / t, TOTAL / (n / t), paper, note))
        print(f"  {name}: {n:.3g} numbers in {t:.4f} s", flush=True)

    # --- CPU ---------------------------------------------------------------
    n = 20_000 if quick else 200_000
    g = rng.Ranmar(1802, 9373)
    add("CPU sequential (Python, L=97)", n, _cpu_time(lambda: g.integers24(n)), PAPER["cpu"],
        "one core, pure Python")

    n = 1 << 22 if quick else 4096 * 4096
    t0 = time.perf_counter()
    v = rng.RanmarVec.from_seed(1, lag=rng.L_BIG)
    setup = time.perf_counter() - t0
    add("NumPy vectorised single stream (L=92153)", n,
        _cpu_time(lambda: v.uniform(n, np.float32), repeat=2), None,
        f"table fill {setup:.2f} s not timed")

    T, k = int(streams), (16 if quick else 64)
    from kernels.rng.gpu import thread_seeds
    from kernels.rng.ranmar import RanmarVec, fill_tables
    pt = RanmarVec(lag=97, table=fill_tables(*thread_seeds(1, T), 97))
    add(f"NumPy approach-1 layout (T={T}, L=97)", T * k,
        _cpu_time(lambda: pt.integers24(k), repeat=2), None, "all streams in lock-step")

    # --- the CUDA kernels run on the CPU (host device of kernels.gpu) --------
    if gpu.available("host"):
        from kernels.rng.gpu import PerThreadGPU, SingleTableGPU
        host = gpu.device("host")
        g1 = PerThreadGPU(T, seed=1, device=host)
        k = (33 if quick else 330) * 30720 // T                # ≈ 1e6 / 1e7 numbers
        add("host path approach 1, discard (CUDA source on the CPU)", T * k,
            _gpu_time(lambda: g1.discard(k), device=host), PAPER["gpu1"], "same kernel, host C++")
        add("host path approach 1, store f32", T * k,
            _gpu_time(lambda: g1.generate(k), device=host), PAPER["gpu1"], "")
        g2 = SingleTableGPU(seed=1, device=host)
        n = (11 if quick else 109) * rng.L_BIG                 # ≈ 1e6 / 1e7 numbers
        add("host path approach 2, discard (CUDA source on the CPU)", n,
            _gpu_time(lambda: g2.discard(n), device=host), PAPER["gpu2"], "3 launches per L numbers")
        add("host path approach 2, store f32", n,
            _gpu_time(lambda: g2.generate(n), device=host), PAPER["gpu2"], "")

    # --- GPU ---------------------------------------------------------------
    ok, _why = gpu_available()
    device = "none"
    if ok:
        import cupy as cp
        from kernels.rng.gpu import PerThreadGPU, SingleTableGPU
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()

        g1 = PerThreadGPU(T, seed=1)
        k = 1024 if quick else 8192
        add(f"GPU approach 1, discard (T={T}, L=97)", T * k,
            _gpu_time(lambda: g1.discard(k)), PAPER["gpu1"], "paper's setting")
        k = 512 if quick else 2048
        add("GPU approach 1, store f32", T * k,
            _gpu_time(lambda: g1.generate(k)), PAPER["gpu1"], "(n, T) interleaved output")

        g2 = SingleTableGPU(seed=1)
        n = (10 if quick else 100) * rng.L_BIG
        add("GPU approach 2, discard (L=92153)", n,
            _gpu_time(lambda: g2.discard(n)), PAPER["gpu2"], "3 launches of 30718 per L numbers")
        add("GPU approach 2, store f32", n,
            _gpu_time(lambda: g2.generate(n)), PAPER["gpu2"], "")

        n = 1 << (24 if quick else 27)
        rs = cp.random.RandomState(1)
        add("cupy.random RandomState.uniform f32 (cuRAND XORWOW)", n,
            _gpu_time(lambda: rs.uniform(size=n, dtype=cp.float32)), None, "stored")
        gen = cp.random.default_rng(1)
        add("cupy.random default_rng().random f32", n,
            _gpu_time(lambda: gen.random(n, dtype=cp.float32)), None, "stored")

    lines = [
        "# Marsaglia lagged-Fibonacci RNG throughput (paper 001 Table 1, scaled)",
        "",
        f"CPU: {platform.processor() or platform.machine()} ({os.cpu_count()} cores visible); "
        f"GPU: {device}; NumPy {np.__version__}"
        + (f"; CuPy {__import__('cupy').__version__}" if ok else ""),
        "",
        "| Generator | numbers timed | time (s) | numbers/s | extrapolated to 24e9 (s) "
        "| paper Table 1 (s) | note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, n, t, rate, ext, paper, note in rows:
        p = f"{paper:.2f}" if paper else ""
        lines.append(f"| {name} | {n:.3g} | {t:.4g} | {rate:.3g} | {ext:.4g} | {p} | {note} |")
    md = "\n".join(lines) + "\n"
    print(md)
    save_markdown("rng_bench.md", md)
    return md


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller counts")
    ap.add_argument("--streams", type=int, default=30720, help="approach 1's streams T (default 30720, the paper's)")
    a = ap.parse_args()
    if a.streams < 1:
        ap.error("--streams must be ≥ 1")
    run(a.quick, a.streams)
