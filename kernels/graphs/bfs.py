"""Paper 000 §4.3: all-pairs hop counts by repeated level-synchronous BFS on the GPU.

``gpu-bfs-k1`` is the paper's first kernel (CSR, one source at a time, the frontier array copied to
the host each level); ``gpu-bfs`` is its best, kernel 7 (int4/int2 layout, degree-sorted
vertices, register → shared → global change counter), here with many sources per launch (beyond
the paper).  CUDA sources: ``cuda/bfs.cu``.
"""
from __future__ import annotations

import time

import numpy as np

from .apsp_core import APSPMethod, APSPResult, DistanceOverflow, hop_dtype, register, sentinel
from .graph import CSR, PackedInt4


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


@register
class BFSKernel7(APSPMethod):
    name = "gpu-bfs"
    help = ("Paper 000 §4.3 kernel 7: level-synchronous BFS, int4 arcs, degree-sorted vertices, "
            "many sources per launch (hop counts)")
    hops_only = True

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        return apsp_bfs_k7(csr, backend, dtype, progress, cancel, **self.options)


@register
class BFSKernel1(APSPMethod):
    name = "gpu-bfs-k1"
    help = ("Paper 000 §4.3 kernel 1: one BFS source at a time on CSR, frontier scanned on the host "
            "each level (hop counts)")
    hops_only = True

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        return apsp_bfs_k1(csr, backend, dtype, progress, cancel, **self.options)
