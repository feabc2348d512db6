"""Auto-tuning of the blocked Floyd–Warshall kernels by timing them on this GPU (paper 004 §4.4).

The thesis picks ``l`` (sub-blocks per thread block of the MM-based non-pivot kernel) from a
static model (Eqs. 4.4–4.10, reproduced for its GTX 280 in :mod:`kernels.occupancy.choosers`);
its instruction counts came from the GT200 binary, so on another GPU we time the real kernels
instead: for each tile t, one pivot, one pivot row+column and one non-pivot launch per l (on a
random matrix of the run's size, step K = 0), and the whole run is estimated as n/t × (their
sum) — the per-K work is the same for every K.  The fastest (t, l) is returned with the table it
came from; results are cached per (GPU, n, arithmetic, predecessors).  :func:`tune_fast` does
the same for our ``fw-fast`` (tile × GEMM configuration).
"""
from __future__ import annotations

import time

import numpy as np

from . import fw_gpu
from ... import gpu

_CACHE: dict = {}


def l_candidates(n: int) -> list[int]:
    """1, 2, 3, 4, 6, 8, 12, 16, … up to n/64 (paper 004: 1 ≤ l ≤ n/64)."""
    out, v = [], 1
    while v <= max(1, n // 64):
        out.append(v)
        v = v + 1 if v < 4 else (v * 3 // 2 if (v & (v - 1)) == 0 else v * 4 // 3)
    return out


def _matrix(xp, n: int, arith: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    if arith == "float32":
        h = rng.uniform(1, 100, (n, n)).astype(np.float32)
    else:
        h = rng.integers(1, 100, (n, n)).astype(np.int32)
    np.fill_diagonal(h, 0)
    return xp.asarray(h)


def _timer(dev):
    """fn → median seconds of ``repeats`` calls on ``dev`` (after one untimed call): CUDA events on
    the GPU, the wall clock on the host device (:func:`kernels.gpu.timing.time_calls`)."""

    def measure(fn, repeats: int = 3) -> float:
        return gpu.timing.time_calls(fn, repeat=repeats, warmup=1, device=dev).median

    return measure


def tune_mm(backend, n: int, arith: str = "float32", pred: bool = False, tiles=fw_gpu.THESIS_TILES) -> dict:
    """The (t, l) of the MM-based blocked FW with the least estimated time at size n."""
    key = ("mm", getattr(backend, "device_name", "host"), n, arith, pred, tuple(tiles))
    if key in _CACHE:
        return _CACHE[key]
    t0 = time.perf_counter()
    dev = fw_gpu.device(backend)
    measure = _timer(dev)
    d = _matrix(dev.xp, n, "float32" if arith == "float32" else "int32")
    p = dev.xp.full((n, n), -1, dtype=np.int32) if pred else None
    t, b = fw_gpu.ctype(d.dtype), fw_gpu.BOOL[pred]
    op = 1 if (arith == "dpx" and not pred) else 0
    pp = np.uintp(0) if p is None else p
    table = []
    for tile in tiles:
        if n % tile or n < 2 * tile:
            continue
        hp, hr = fw_gpu.THESIS_H_PIVOT[tile], fw_gpu.THESIS_H_ROWCOL
        kp = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_th_pivot<{t},{b},{tile},{hp}>")
        kr = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_th_rowcol<{t},{b},{tile},{hr}>")
        kn = fw_gpu.kernel(dev, "fw_thesis.cu", f"fw_mm_nonpivot<{t},{op},{b},{tile}>")
        args = (d, pp, np.int32(n), np.int32(0))
        tp = measure(lambda: dev.launch(kp, (1,), (hp, tile), args))
        tr = measure(lambda: dev.launch(kr, (n // tile, 2), (hr, tile), args))
        for l in l_candidates(n):
            tn = measure(lambda: dev.launch(kn, (-(-n // 64 // l), n // 16 - tile // 16), (64,), args + (np.int32(l),)))
            table.append({"tile": tile, "l": l, "seconds": (n // tile) * (tp + tr + tn),
                          "nonpivot_seconds": tn})
    best = min(table, key=lambda r: r["seconds"])
    out = {"tile": best["tile"], "l": best["l"], "table": table, "seconds": time.perf_counter() - t0}
    _CACHE[key] = out
    return out


def tune_fast(backend, n: int, arith: str = "float32", pred: bool = False) -> dict:
    """The (tile, GEMM configuration) of fw-fast with the least estimated time at size n
    (one K step timed per candidate; predecessor runs have one configuration)."""
    key = ("fast", getattr(backend, "device_name", "host"), n, arith, pred)
    if key in _CACHE:
        return _CACHE[key]
    t0 = time.perf_counter()
    dev = fw_gpu.device(backend)
    measure = _timer(dev)
    d = _matrix(dev.xp, n, "float32" if arith == "float32" else "int32")
    p = dev.xp.full((n, n), -1, dtype=np.int32) if pred else None
    table = []
    cfgs = [fw_gpu.DEFAULT_GEMM] if pred else list(fw_gpu.GEMM_CONFIGS)
    for tile in fw_gpu.FAST_TILES:
        if n % tile or n < 2 * tile:
            continue
        for cfg in cfgs:
            step = measure(lambda: fw_gpu.run_fast_step(dev, d, p, n, 0, tile, cfg, arith == "dpx"))
            table.append({"tile": tile, "cfg": cfg, "seconds": (n // tile) * step})
    best = min(table, key=lambda r: r["seconds"])
    out = {"tile": best["tile"], "cfg": best["cfg"], "table": table, "seconds": time.perf_counter() - t0}
    _CACHE[key] = out
    return out


def time_blocked_tiles(n: int, backend, tiles=fw_gpu.BLOCKED_TILES) -> int:
    """fw-blocked's ``tile="auto"``: time one whole blocked FW per tile on a random float32 matrix
    of size min(n, 1024); the fastest tile."""
    key = ("blocked", getattr(backend, "device_name", "host"), min(n, 1024), tuple(tiles))
    if key in _CACHE:
        return _CACHE[key]
    dev = fw_gpu.device(backend)
    measure = _timer(dev)
    m = max(min(n, 1024), max(tiles))
    best, best_t = None, None
    for t in tiles:
        npad = -(-m // t) * t
        d = _matrix(dev.xp, npad, "float32")
        el = measure(lambda: fw_gpu.run_blocked(dev, d, None, npad, t), repeats=1)
        if best is None or el < best:
            best, best_t = el, t
    _CACHE[key] = best_t
    return best_t
