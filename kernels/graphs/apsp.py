"""All-pairs shortest paths: CPU references and the GPU methods of papers 000, 002 and 004.

Methods (``METHODS``):

* ``cpu`` — scipy.sparse.csgraph (BFS for hop counts, Dijkstra for weights), in row batches.
* ``gpu-bfs`` / ``gpu-bfs-k1`` — paper 000 §4.3: repeated level-synchronous BFS.  ``k1`` is the
  paper's first kernel (CSR, one source at a time, frontier array copied to the host each level);
  ``gpu-bfs`` is its best, kernel 7 (int4/int2 layout, degree-sorted vertices, register → shared →
  global change counter), here with many sources per launch (beyond the paper).
* ``fw`` / ``fw-blocked`` — Floyd–Warshall on the dense matrix: paper 002's one-launch-per-k
  kernel, and paper 004's blocked three-phase version with tile T ∈ {32, 64} chosen by paper 004's
  traffic model (:func:`tile_by_model`) or by timing (``tile="auto"``).
* ``sssp`` — paper 004 ch. 3: task-parallel SSSP (S sources per launch, interleaved layout).

Hop counts are stored compactly (:func:`hop_dtype`): uint8 / uint16 / uint32 with the all-ones
value (255, 65535, …) meaning *unreachable*; weighted distances are float32 with inf.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import GridTooLarge, InvalidParameter
from .graph import CSR, Graph, PackedInt4

METHODS = ("cpu", "gpu-bfs", "gpu-bfs-k1", "fw", "fw-blocked", "sssp")
GPU_METHODS = METHODS[1:]
FW_TILES = (32, 64)


class DistanceOverflow(InvalidParameter):
    """A hop count does not fit in the chosen compact dtype."""


def sentinel(dtype) -> int:
    return int(np.iinfo(dtype).max)


def hop_dtype(csr: CSR, requested: str | None = "auto"):
    """Smallest unsigned dtype that holds every hop count (+ the sentinel).

    ``auto`` bounds the diameter by 2 × the eccentricity of vertex 0 (per connected component
    that is an upper bound; an unreachable pair is the sentinel anyway), from one CPU BFS.
    """
    if requested not in (None, "auto"):
        dt = np.dtype(requested)
        if dt not in (np.uint8, np.uint16, np.uint32):
            raise InvalidParameter(f"hop dtype must be uint8, uint16 or uint32 (got {requested})")
        return dt
    if csr.n <= 255:
        return np.dtype(np.uint8)
    from scipy.sparse.csgraph import connected_components
    from scipy.sparse.csgraph import shortest_path as _sp
    A = csr.to_scipy(weighted=False)
    ncomp, labels = connected_components(A, directed=False)
    if ncomp > 64:                              # many components: the size bound suffices
        bound = int(np.bincount(labels).max()) - 1
    else:
        firsts = np.unique(labels, return_index=True)[1]
        d = _sp(A, method="D", directed=False, unweighted=True, indices=firsts)
        bound = 2 * int(d[np.isfinite(d)].max(initial=0))
    for dt in (np.uint8, np.uint16, np.uint32):
        if bound < sentinel(dt):
            return np.dtype(dt)
    return np.dtype(np.uint32)


@dataclass
class APSPResult:
    """Distances (n × n, host), the method, timings and launch counts."""

    dist: np.ndarray
    method: str
    seconds: float           # wall time including the copy to the host
    kernel_seconds: float    # device time without the final copy (= seconds on the CPU)
    launches: int = 0
    weighted: bool = False
    tile: int | None = None

    @property
    def unreachable(self):
        return np.inf if self.dist.dtype.kind == "f" else sentinel(self.dist.dtype)

    def as_float(self) -> np.ndarray:
        """Distances as float64 with inf for unreachable pairs."""
        if self.dist.dtype.kind == "f":
            return self.dist.astype(np.float64)
        out = self.dist.astype(np.float64)
        out[self.dist == self.unreachable] = np.inf
        return out


def estimate_bytes(n: int, method: str, itemsize: int = 1) -> int:
    if method in ("fw", "fw-blocked"):
        t = max(FW_TILES)
        npad = -(-n // t) * t
        return npad * npad * 4 + n * n * 4
    return n * n * itemsize


def check_memory(n: int, method: str, backend, itemsize: int = 1) -> None:
    """Raise :class:`GridTooLarge` before work starts when the matrix cannot fit."""
    from ..backend import host_available_memory
    need_host = n * n * (4 if method in ("fw", "fw-blocked") else itemsize)
    if need_host > 0.8 * host_available_memory():
        raise GridTooLarge(f"the {n} × {n} distance matrix needs {need_host / 2**30:.1f} GiB of host "
                           f"memory; only {host_available_memory() / 2**30:.1f} GiB are available")
    if backend is not None and backend.is_gpu and method in ("fw", "fw-blocked"):
        need = estimate_bytes(n, method)
        if need > 0.9 * backend.free_memory():
            raise GridTooLarge(f"dense Floyd–Warshall at n = {n} needs {need / 2**30:.1f} GiB of GPU memory; "
                               f"{backend.free_memory() / 2**30:.1f} GiB free — use gpu-bfs or sssp")


# ------------------------------------------------------------------ CPU reference
def apsp_cpu(g, weighted: bool | None = None, dtype="auto", batch: int | None = None,
             progress=None, cancel=None) -> APSPResult:
    """scipy.sparse.csgraph shortest paths, in row batches (compact output for hop counts)."""
    from scipy.sparse.csgraph import shortest_path
    csr = g.csr() if isinstance(g, Graph) else g
    weighted = (csr.weights is not None) if weighted is None else weighted
    n = csr.n
    A = csr.to_scipy(weighted=weighted)
    t0 = time.perf_counter()
    if weighted:
        out = np.empty((n, n), dtype=np.float32)
    else:
        dt = hop_dtype(csr, dtype)
        out = np.empty((n, n), dtype=dt)
    batch = batch or max(1, min(n, (64 << 20) // max(1, 8 * n)))
    for s0 in range(0, n, batch):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        rows = np.arange(s0, min(n, s0 + batch))
        d = shortest_path(A, method="D", directed=False, unweighted=not weighted, indices=rows)
        if weighted:
            out[rows] = d
        else:
            big = ~np.isfinite(d)
            if np.any(d[~big] >= sentinel(out.dtype)):
                raise DistanceOverflow(f"a hop count exceeds {out.dtype}")
            d[big] = sentinel(out.dtype)
            out[rows] = d
        if progress is not None:
            progress(min(n, s0 + batch) / n)
    sec = time.perf_counter() - t0
    return APSPResult(out, "cpu", sec, sec, 0, weighted)


# ------------------------------------------------------------------ GPU BFS (paper 000)
def apsp_bfs_k1(csr: CSR, backend, dtype="auto", progress=None, cancel=None, sources=None) -> APSPResult:
    """Paper 000 kernel 1: one source at a time, host scans the frontier array every level."""
    from ._cuda import blocks, kernel
    cp = backend.xp
    n = csr.n
    dt = hop_dtype(csr, dtype)
    sources = np.arange(n) if sources is None else np.asarray(sources)
    out = np.empty((sources.size, n), dtype=dt)
    k1 = kernel("bfs.cu", "bfs_k1")
    d_ptr, d_idx = cp.asarray(csr.indptr), cp.asarray(csr.indices)
    cost = cp.empty(n, dtype=cp.int32)
    front = cp.zeros(n, dtype=cp.uint8)
    INF = np.iinfo(np.int32).max
    threads = 256
    launches = 0
    t0 = time.perf_counter()
    for r, s in enumerate(sources.tolist()):
        if cancel is not None and r % 64 == 0 and cancel():
            raise InterruptedError("cancelled")
        cost.fill(INF)
        cost[s] = 0
        front.fill(0)
        front[s] = 1
        level = 0
        while True:
            k1((blocks(n, threads),), (threads,), (d_ptr, d_idx, np.int32(n), front, cost, np.int32(level)))
            launches += 1
            if not front.get().any():           # the paper's host-side frontier scan
                break
            level += 1
        c = cost.get()
        if c[c != INF].max(initial=0) >= sentinel(dt):
            raise DistanceOverflow(f"a hop count exceeds {dt}")
        c[c == INF] = sentinel(dt)
        out[r] = c
        if progress is not None and r % 64 == 0:
            progress((r + 1) / sources.size)
    sec = time.perf_counter() - t0
    return APSPResult(out, "gpu-bfs-k1", sec, sec, launches)


class BFSK7:
    """Paper 000 kernel 7, many sources per launch; keeps the layout on the device for reuse."""

    def __init__(self, csr: CSR, backend, dtype="auto", block: int = 256):
        cp = backend.xp
        self.csr, self.backend, self.cp, self.block = csr, backend, cp, int(block)
        self.dtype = hop_dtype(csr, dtype)
        pk = PackedInt4.from_csr(csr, with_length=False)
        self.arcs4 = cp.asarray(pk.arcs4)
        self.vertices = cp.asarray(pk.vertices)
        self.sorted = cp.asarray(pk.sorted_vertices)
        self.counter = cp.zeros(1, dtype=cp.uint32)
        cname = {np.uint8: "unsigned char", np.uint16: "unsigned short", np.uint32: "unsigned int"}[self.dtype.type]
        from ._cuda import kernel
        self.k7 = kernel("bfs.cu", f"bfs_k7<{cname}>")
        self.launches = 0

    def batch_size(self, limit_bytes: int | None = None) -> int:
        n = self.csr.n
        if limit_bytes is None:
            limit_bytes = min(int(0.5 * self.backend.free_memory()), 4 << 30)
        return max(1, min(n, limit_bytes // max(1, n * self.dtype.itemsize)))

    def run_batch(self, s0: int, count: int, dist=None):
        """Distances from sources s0 … s0+count−1 as a device array (count × n)."""
        cp, n = self.cp, self.csr.n
        if dist is None:
            dist = cp.empty((count, n), dtype=self.dtype)
        dist.fill(sentinel(self.dtype))
        r = cp.arange(count)
        dist[r, s0 + r] = 0
        total = n * count
        grid = (total + self.block - 1) // self.block
        top = sentinel(self.dtype)
        level = 0
        while True:
            if level + 1 >= top:
                raise DistanceOverflow(f"hop counts reach {top}: {self.dtype} is too small")
            self.counter.fill(0)
            self.k7((grid,), (self.block,), (self.arcs4, self.vertices, self.sorted, np.int32(n),
                                             np.int32(count), dist, np.int32(level), self.counter))
            self.launches += 1
            if int(self.counter.get()[0]) == 0:
                break
            level += 1
        return dist


def apsp_bfs_k7(csr: CSR, backend, dtype="auto", progress=None, cancel=None, batch=None,
                block: int = 256) -> APSPResult:
    bfs = BFSK7(csr, backend, dtype, block)
    n = csr.n
    batch = int(batch or bfs.batch_size())
    out = np.empty((n, n), dtype=bfs.dtype)
    t0 = time.perf_counter()
    kernel_s = 0.0
    buf = None
    for s0 in range(0, n, batch):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        cnt = min(batch, n - s0)
        if buf is None or buf.shape[0] != cnt:
            buf = backend.xp.empty((cnt, n), dtype=bfs.dtype)
        tk = time.perf_counter()
        bfs.run_batch(s0, cnt, buf)
        backend.synchronize()
        kernel_s += time.perf_counter() - tk
        buf.get(out=out[s0:s0 + cnt])
        if progress is not None:
            progress((s0 + cnt) / n)
    sec = time.perf_counter() - t0
    return APSPResult(out, "gpu-bfs", sec, kernel_s, bfs.launches)


# ------------------------------------------------------------------ Floyd–Warshall (papers 002, 004)
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


def _fw_blocked_device(d, npad: int, tile: int):
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


def _fw_naive_device(d, n: int):
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
        _fw_blocked_device(d, npad, t)          # warm-up / compile
        d = cp.asarray(h)
        backend.synchronize()
        t0 = time.perf_counter()
        _fw_blocked_device(d, npad, t)
        backend.synchronize()
        el = time.perf_counter() - t0
        if best is None or el < best:
            best, best_t = el, t
    return best_t


def apsp_fw(csr: CSR, backend, blocked: bool = True, tile="model", weighted: bool | None = None,
            dtype="auto", progress=None, cancel=None) -> APSPResult:
    weighted = (csr.weights is not None) if weighted is None else weighted
    check_memory(csr.n, "fw-blocked" if blocked else "fw", backend)
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
    launches = _fw_blocked_device(d, h.shape[0], tile) if blocked else _fw_naive_device(d, n)
    backend.synchronize()
    kernel_s = time.perf_counter() - t0
    res = backend.to_numpy(d)[:n, :n]
    sec = time.perf_counter() - t0
    if progress is not None:
        progress(1.0)
    out = res if weighted else _float_to_hops(res, csr, dtype)
    return APSPResult(out, "fw-blocked" if blocked else "fw", sec, kernel_s, launches, weighted,
                      tile if blocked else None)


def _float_to_hops(d: np.ndarray, csr: CSR, dtype="auto") -> np.ndarray:
    dt = hop_dtype(csr, dtype)
    fin = np.isfinite(d)
    if fin.any() and d[fin].max() >= sentinel(dt):
        dt = np.dtype(np.uint32)
    out = np.where(fin, d, sentinel(dt)).astype(dt)
    return out


# ------------------------------------------------------------------ task-parallel SSSP (paper 004)
def apsp_sssp(csr: CSR, backend, S: int | None = None, weighted: bool | None = None, dtype="auto",
              progress=None, cancel=None) -> APSPResult:
    """S single-source problems per launch pair (scatter, check); S a multiple of 32."""
    from ._cuda import blocks, kernel
    cp = backend.xp
    weighted = (csr.weights is not None) if weighted is None else weighted
    n = csr.n
    if S is None:
        S = max(32, min(-(-n // 32) * 32, (int(min(0.4 * backend.free_memory(), 2 << 30)) // (9 * n)) // 32 * 32))
    S = int(S)
    if S < 32 or S % 32:
        raise InvalidParameter(f"SSSP batch S must be a positive multiple of 32 (got {S})")
    scatter = kernel("sssp.cu", "sssp_scatter")
    check = kernel("sssp.cu", "sssp_check")
    d_ptr, d_idx = cp.asarray(csr.indptr), cp.asarray(csr.indices)
    d_w = cp.asarray(csr.weights) if (weighted and csr.weights is not None) else cp.uint64(0)
    out = np.empty((n, n), dtype=np.float32)
    cost = cp.empty(n * S, dtype=cp.float32)
    upd = cp.empty(n * S, dtype=cp.float32)
    mask = cp.empty(n * S, dtype=cp.uint8)
    flag = cp.zeros(1, dtype=cp.uint32)
    threads = 128                                # paper 004: N = 32 sources × B = 4 vertices
    launches = 0
    t0 = time.perf_counter()
    kernel_s = 0.0
    for s0 in range(0, n, S):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        cnt = min(S, n - s0)
        tk = time.perf_counter()
        cost.fill(np.inf)
        mask.fill(0)
        s = cp.arange(cnt)
        cost[(s0 + s) * S + s] = 0.0
        mask[(s0 + s) * S + s] = 1
        upd[:] = cost
        total = n * S
        while True:
            scatter((blocks(total, threads),), (threads,),
                    (d_ptr, d_idx, d_w, np.int32(n), np.int32(S), mask, cost, upd))
            flag.fill(0)
            check((blocks(total, threads),), (threads,), (np.int64(total), mask, cost, upd, flag))
            launches += 2
            if int(flag.get()[0]) == 0:
                break
        block = cost.reshape(n, S)[:, :cnt].T
        backend.synchronize()
        kernel_s += time.perf_counter() - tk
        out[s0:s0 + cnt] = block.get()
        if progress is not None:
            progress((s0 + cnt) / n)
    sec = time.perf_counter() - t0
    res = out if weighted else _float_to_hops(out, csr, dtype)
    return APSPResult(res, "sssp", sec, kernel_s, launches, weighted)


# ------------------------------------------------------------------ dispatch
def apsp(g, method: str = "cpu", backend=None, weighted: bool | None = None, dtype="auto",
         progress=None, cancel=None, **kw) -> APSPResult:
    """All-pairs shortest paths of ``g`` (Graph or CSR) by ``method`` (one of METHODS)."""
    csr = g.csr() if isinstance(g, Graph) else g
    if method not in METHODS:
        raise InvalidParameter(f"unknown APSP method {method!r}: use one of {', '.join(METHODS)}")
    weighted = (csr.weights is not None) if weighted is None else weighted
    if method == "cpu":
        check_memory(csr.n, method, backend, 4 if weighted else 2)
        return apsp_cpu(csr, weighted, dtype, progress=progress, cancel=cancel)
    if backend is None or not backend.is_gpu:
        raise InvalidParameter(f"APSP method {method!r} needs the GPU backend (use cpu here)")
    if weighted and method in ("gpu-bfs", "gpu-bfs-k1"):
        raise InvalidParameter("BFS counts hops: use fw, fw-blocked, sssp or cpu for weighted graphs")
    check_memory(csr.n, method, backend, 4 if weighted else 2)
    if method == "gpu-bfs":
        return apsp_bfs_k7(csr, backend, dtype, progress, cancel, **kw)
    if method == "gpu-bfs-k1":
        return apsp_bfs_k1(csr, backend, dtype, progress, cancel, **kw)
    if method in ("fw", "fw-blocked"):
        return apsp_fw(csr, backend, blocked=(method == "fw-blocked"), weighted=weighted, dtype=dtype,
                       progress=progress, cancel=cancel, **kw)
    return apsp_sssp(csr, backend, weighted=weighted, dtype=dtype, progress=progress, cancel=cancel, **kw)


def shortest_path(g, dist_row: np.ndarray, source: int, target: int) -> list[int]:
    """Reconstruct one shortest path source → target (hop counts) from the source's distance row
    (paper 004 Fig. 3.1: from the target, step to a neighbour one hop closer)."""
    csr = g.csr() if isinstance(g, Graph) else g
    unreach = sentinel(dist_row.dtype) if dist_row.dtype.kind == "u" else np.inf
    if dist_row[target] == unreach:
        return []
    path = [int(target)]
    v = int(target)
    while v != source:
        nb = csr.indices[csr.indptr[v]:csr.indptr[v + 1]]
        v = int(nb[np.argmin(dist_row[nb].astype(np.int64))])
        path.append(v)
    return path[::-1]
