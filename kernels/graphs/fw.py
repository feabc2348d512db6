"""Floyd–Warshall on the dense distance matrix: papers 002 and 004 (ch. 4).

``fw`` is paper 002's one-launch-per-k kernel; ``fw-blocked`` paper 004's blocked three-phase
version with tile T ∈ {32, 64} chosen by paper 004's traffic model (:func:`tile_by_model`) or by
timing (``tile="auto"``).  Update: D(i, j) ← min(D(i, j), D(i, k) + D(k, j)) for k = 0 … n−1.
CUDA sources: ``cuda/fw.cu``.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import InvalidParameter
from .apsp_core import APSPMethod, APSPResult, float_to_hops, register
from .graph import CSR

FW_TILES = (32, 64)


def dense_matrix(csr: CSR, pad_to: int = 1, weighted: bool = True) -> np.ndarray:
    """float32 adjacency matrix: 0 diagonal, w (or 1) per arc, inf elsewhere; padded with inf."""
    n = csr.n
    npad = -(-n // pad_to) * pad_to
    d = np.full((npad, npad), np.inf, dtype=np.float32)
    w = csr.weights if (weighted and csr.weights is not None) else np.float32(1.0)
    src = csr.sources()
    d[src, csr.indices] = w
    np.fill_diagonal(d[:n, :n], 0.0)
    return d


def fw_cpu(d: np.ndarray) -> np.ndarray:
    """Plain Floyd–Warshall on a dense float matrix (NumPy, one vectorised k-step at a time)."""
    d = d.copy()
    for k in range(d.shape[0]):
        np.minimum(d, d[:, k, None] + d[None, k, :], out=d)
    return d


def device_spec(backend) -> dict:
    """Peak bandwidth B_g (bytes/s) and peak simple ops O_g (ops/s) of the GPU (paper 004 Table 4.1)."""
    p = backend.props or {}
    sms = int(p.get("multiProcessorCount", 132))
    clock = float(p.get("clockRate", 1_755_000)) * 1e3
    mem_clock = float(p.get("memoryClockRate", 2_619_000)) * 1e3
    bus = int(p.get("memoryBusWidth", 5120))
    cc = backend.compute_capability or (9, 0)
    cores = {(7, 0): 64, (8, 0): 64}.get(tuple(cc), 128)
    return dict(B=2.0 * mem_clock * bus / 8.0, O=sms * cores * clock)


def fw_traffic_ratio(n: int, t: int, elem: int = 4) -> float:
    """N_b / N_c of paper 004 (Eqs. 4.1, 4.2): bytes moved per operation for tile t."""
    nb = (4.0 * n ** 3 / t - 2.0 * n ** 2) * elem
    nc = 2.0 * n * (n ** 2 - 2 * t + 1)
    return nb / nc


def tile_by_model(n: int, backend=None, tiles=FW_TILES) -> int:
    """Paper 004's rule: the smallest tile whose traffic per op is below the GPU's B_g / O_g
    (else the largest tile offered)."""
    spec = device_spec(backend) if backend is not None else dict(B=3.35e12, O=2.97e13)
    ratio = spec["B"] / spec["O"]
    for t in sorted(tiles):
        if fw_traffic_ratio(max(n, t), t) < ratio:
            return t
    return max(tiles)


def fw_blocked_device(d, npad: int, tile: int):
    from ._cuda import kernel
    nt = npad // tile
    k1 = kernel("fw.cu", f"fw_phase1<{tile}>")
    k2 = kernel("fw.cu", f"fw_phase2<{tile}>")
    k3 = kernel("fw.cu", f"fw_phase3<{tile}>")
    n32 = np.int32(npad)
    for K in range(nt):
        kk = np.int32(K)
        k1((1,), (16, 16), (d, n32, kk))
        if nt > 1:
            k2((nt, 2), (16, 16), (d, n32, kk))
            k3((nt, nt), (16, 16), (d, n32, kk))
    return 3 * nt


def fw_naive_device(d, n: int):
    from ._cuda import kernel
    k = kernel("fw.cu", "fw_naive")
    threads = 256
    grid = min(65535 * 4, (n * n + threads - 1) // threads)
    for kk in range(n):
        k((grid,), (threads,), (d, np.int32(n), np.int32(kk)))
    return n


def autotune_tile(n: int, backend, tiles=FW_TILES) -> int:
    """Time one blocked FW per tile on a random dense matrix of size min(n, 1024); keep the fastest."""
    cp = backend.xp
    m = max(min(n, 1024), max(tiles))
    best, best_t = None, None
    rng = np.random.default_rng(0)
    base = rng.uniform(1, 10, (m, m)).astype(np.float32)
    for t in tiles:
        npad = -(-m // t) * t
        h = np.full((npad, npad), np.inf, np.float32)
        h[:m, :m] = base
        d = cp.asarray(h)
        fw_blocked_device(d, npad, t)          # warm-up / compile
        d = cp.asarray(h)
        backend.synchronize()
        t0 = time.perf_counter()
        fw_blocked_device(d, npad, t)
        backend.synchronize()
        el = time.perf_counter() - t0
        if best is None or el < best:
            best, best_t = el, t
    return best_t


def apsp_fw(csr: CSR, backend, blocked: bool = True, tile="model", weighted: bool | None = None,
            dtype="auto", progress=None, cancel=None) -> APSPResult:
    weighted = (csr.weights is not None) if weighted is None else weighted
    n = csr.n
    if blocked:
        if tile == "model":
            tile = tile_by_model(n, backend)
        elif tile == "auto":
            tile = autotune_tile(n, backend)
        tile = int(tile)
        if tile not in FW_TILES:
            raise InvalidParameter(f"tile must be one of {FW_TILES}, 'model' or 'auto' (got {tile})")
    h = dense_matrix(csr, pad_to=tile if blocked else 1, weighted=weighted)
    t0 = time.perf_counter()
    d = backend.xp.asarray(h)
    launches = fw_blocked_device(d, h.shape[0], tile) if blocked else fw_naive_device(d, n)
    backend.synchronize()
    kernel_s = time.perf_counter() - t0
    res = backend.to_numpy(d)[:n, :n]
    sec = time.perf_counter() - t0
    if progress is not None:
        progress(1.0)
    out = res if weighted else float_to_hops(res, csr, dtype)
    return APSPResult(out, "fw-blocked" if blocked else "fw", sec, kernel_s, launches, weighted,
                      tile if blocked else None)


def dense_bytes(n: int, pad: int = max(FW_TILES)) -> int:
    """Device bytes of the padded float32 matrix plus its host copy's staging."""
    npad = -(-n // pad) * pad
    return npad * npad * 4 + n * n * 4


@register
class FloydWarshall(APSPMethod):
    name = "fw"
    negative_weights = True
    help = "Paper 002: Floyd–Warshall, one kernel launch per k over the dense matrix"
    dense = True

    @classmethod
    def device_bytes(cls, n):
        return dense_bytes(n)

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        return apsp_fw(csr, backend, blocked=False, weighted=weighted, dtype=dtype, progress=progress,
                       cancel=cancel, **self.options)


@register
class BlockedFloydWarshall(APSPMethod):
    name = "fw-blocked"
    negative_weights = True
    help = ("Paper 004 §4.3: blocked three-phase Floyd–Warshall, tile 32 or 64 by the traffic model "
            "(tile=model) or by timing (tile=auto)")
    dense = True

    @classmethod
    def device_bytes(cls, n):
        return dense_bytes(n)

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        return apsp_fw(csr, backend, blocked=True, weighted=weighted, dtype=dtype, progress=progress,
                       cancel=cancel, **self.options)
