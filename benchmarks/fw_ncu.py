"""Kernels for Nsight Compute (benchmarks/fw.py's int-vs-DPX-vs-float question): one launch each of the
min-plus product (ceiling) or of fw-fast's non-pivot phase, float32 / int32 / DPX, on random data.

Usage: ncu --clock-control none --section … python benchmarks/fw_ncu.py [--n 4096] [--what gemm|phase3]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from kernels.backend import select  # noqa: E402
from kernels.graphs.apsp import fw_gpu  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--what", default="gemm")
    ap.add_argument("--cfg", default=fw_gpu.DEFAULT_GEMM)
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="n = 512, float only (a smoke test)")
    a = ap.parse_args()
    if a.quick:
        a.n = 512
    be = select("gpu")
    cp, n = be.xp, a.n
    dev = fw_gpu.CudaDevice(be)
    rng = np.random.default_rng(0)
    for t in (("float",) if a.quick else ("float", "int", "dpx")):
        dt = np.float32 if t == "float" else np.int32
        if a.what == "gemm":
            x, y = (cp.asarray(rng.integers(1, 1000, (n, n)).astype(dt)) for _ in range(2))
            c = cp.asarray(rng.integers(1000, 3000, (n, n)).astype(dt))
            fw_gpu.gemm(dev, c, c, x, y, n, n, n, lda=n, ldb=n, ldci=n, ldco=n, cfg=a.cfg, dpx=t == "dpx")
        else:
            d = cp.asarray(rng.integers(1, 1000, (n, n)).astype(dt))
            kb = n // 2
            fw_gpu.gemm(dev, d, d, fw_gpu.offset(d, kb), fw_gpu.offset(d, kb * n), n, n, a.tile, lda=n, ldb=n,
                        ldci=n, ldco=n, cfg=a.cfg, dpx=t == "dpx", skip_rows=(kb, kb + a.tile),
                        skip_cols=(kb, kb + a.tile), dtype=d.dtype)
        be.synchronize()


if __name__ == "__main__":
    main()
