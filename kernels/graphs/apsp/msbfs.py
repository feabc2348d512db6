"""Bit-parallel multi-source BFS (``gpu-msbfs``): all-pairs hop counts, one bit per source.

Beyond papers 000 and 004: MS-BFS (Then, Kaufmann, Chirigati, Hoang-Vu, Pham, Kemper, Neumann,
Vo, "The More the Merrier: Efficient Multi-Source Graph Traversal", PVLDB 8(4), 2015).  The B
sources of a batch share every traversal step: per vertex, 64-bit words hold one bit per source
(``seen``, ``visit``, ``next``), and one level is ``next[v] = (OR of visit[u] over the arcs
v → u) & ~seen[v]``.  A level costs one pass over the arcs for 64 sources per word instead of one
pass per source — paper 000's kernel 7 does the latter, |V| / 64 times the memory traffic.

GPU form (``cuda/msbfs.cu``): one thread per (vertex, word), the words of a vertex adjacent — paper
004's interleaving (Fig. 3.8) with one bit per problem.  The level at which bit s reaches v is
dist(v → s), written into row v of the result at column s: the 64 sources of a word are 64
adjacent elements, so the result is written in 8-byte pieces.  The whole n × n hop matrix stays in
GPU memory when it fits (else it is built in column blocks); the copy to the host comes last.
"""
from __future__ import annotations

import time

import numpy as np

from ...errors import InvalidParameter
from .core import APSPResult, DistanceOverflow, hop_dtype, sentinel
from ..cuda import free_memory, to_host
from .bfs import HopMethod, bfs_host_work, check_block
from ..data.graph import CSR
from .. import cuda as _cuda

#: sources per batch unless chosen (64 per word; 4096 = 64 words per vertex)
DEFAULT_BATCH = 4096


def check_batch(batch) -> int:
    batch = int(batch)
    if batch < 64 or batch % 64:
        raise InvalidParameter(f"MS-BFS sources per batch must be a positive multiple of 64 (got {batch})")
    return batch


def state_bytes(n: int, batch: int) -> int:
    """seen, visit, next: three bit sets of ``batch`` bits per vertex."""
    return 3 * n * (batch // 8)


class MSBFS:
    """MS-BFS on ``csr`` (kept on the device).  :meth:`columns` gives ``M[v, j] = dist(v → t_j)``
    for a list of targets t; :func:`apsp_msbfs` turns that into rows of the distance matrix."""

    def __init__(self, csr: CSR, backend, dtype="auto", block: int = 256):
        self.dev = dev = _cuda.device(backend)
        cp = dev.xp
        self.csr, self.backend, self.cp, self.block = csr, backend, cp, check_block(block)
        self.dtype = hop_dtype(csr, dtype)
        self.d_ptr, self.d_idx = cp.asarray(csr.indptr), cp.asarray(csr.indices)
        ct = _cuda.CTYPE[self.dtype.name]
        self.clear = _cuda.function(dev, "msbfs.cu", "msbfs_clear")
        self.seed = _cuda.function(dev, "msbfs.cu", f"msbfs_seed<{ct}>")
        self.level = _cuda.function(dev, "msbfs.cu", f"msbfs_level<{ct}>")
        self.active = cp.zeros(1, dtype=cp.uint32)
        self.launches = 0
        self.levels: list[int] = []

    def run_batch(self, targets_d, t0: int, cnt: int, batch: int, D, ld: int, col0: int, bits) -> None:
        """BFS from ``targets_d[t0:t0+cnt]`` (pulling along out-arcs), writing M[:, col0 + j]."""
        n, block = self.csr.n, self.block
        W = batch // 64
        seen, visit, nxt = bits
        threads = n * W
        grid = (threads + block - 1) // block
        launch = self.dev.launch
        launch(self.clear, (grid,), (block,), (np.int32(n), np.int32(W), np.int32(cnt), seen, visit))
        launch(self.seed, ((cnt + 255) // 256,), (256,), (np.int32(W), np.int32(cnt), targets_d[t0:t0 + cnt], seen,
                                                     visit, D, np.int64(ld), np.int64(col0)))
        top = sentinel(self.dtype)
        level = 0
        while True:
            if level + 1 >= top:
                raise DistanceOverflow(f"hop counts reach {top}: {self.dtype} is too small")
            launch(self.level, (grid,), (block,), (self.d_ptr, self.d_idx, np.int32(n), np.int32(W), visit, nxt, seen,
                                             D, np.int64(ld), np.int64(col0), np.uint32(level + 1), self.active))
            self.launches += 1
            visit, nxt = nxt, visit
            if int(to_host(self.active)[0]) != level + 1:
                break
            level += 1
        self.levels.append(level)

    def columns(self, targets: np.ndarray, batch: int = DEFAULT_BATCH, progress=None, cancel=None,
                limit_bytes: int | None = None):
        """(M as a host array n × len(targets), seconds without the final copy)."""
        cp, n = self.cp, self.csr.n
        k = int(targets.size)
        batch = min(check_batch(batch), -(-k // 64) * 64)
        itemsize = self.dtype.itemsize
        ld_full = -(-k // 64) * 64
        free = free_memory(self.backend)
        limit = limit_bytes if limit_bytes is not None else int(0.6 * free)
        full = n * ld_full * itemsize + state_bytes(n, batch) <= limit
        bits = tuple(cp.empty(n * (batch // 64), dtype=cp.uint64) for _ in range(3))
        targets_d = cp.asarray(targets, dtype=cp.int64)
        out = np.empty((n, k), dtype=self.dtype)
        kernel_s = 0.0
        t_start = time.perf_counter()
        if full:
            D = cp.full((n, ld_full), sentinel(self.dtype), dtype=self.dtype)
            for t0 in range(0, k, batch):
                if cancel is not None and cancel():
                    raise InterruptedError("cancelled")
                self.run_batch(targets_d, t0, min(batch, k - t0), batch, D, ld_full, t0, bits)
                if progress is not None:
                    progress(min(k, t0 + batch) / k)
            self.dev.synchronize()
            kernel_s = time.perf_counter() - t_start
            to_host(D if ld_full == k else cp.ascontiguousarray(D[:, :k]), out)
        else:
            D = cp.empty((n, batch), dtype=self.dtype)
            for t0 in range(0, k, batch):
                if cancel is not None and cancel():
                    raise InterruptedError("cancelled")
                cnt = min(batch, k - t0)
                tk = time.perf_counter()
                D.fill(sentinel(self.dtype))
                self.run_batch(targets_d, t0, cnt, batch, D, batch, 0, bits)
                self.dev.synchronize()
                kernel_s += time.perf_counter() - tk
                out[:, t0:t0 + cnt] = to_host(D[:, :cnt])
                if progress is not None:
                    progress((t0 + cnt) / k)
        return out, kernel_s


def apsp_msbfs(csr: CSR, backend, dtype="auto", progress=None, cancel=None, batch: int = DEFAULT_BATCH,
               block: int = 256, sources=None, limit_bytes: int | None = None) -> APSPResult:
    """All-pairs hop counts by MS-BFS (rows ``sources``, default all).

    All pairs: the targets are every vertex and M = the distance matrix itself (M[v, s] =
    dist(v → s)).  A subset of sources runs on the inverted graph, where M[v, j] = dist(s_j → v),
    and is transposed into rows.  ``limit_bytes`` caps the device memory for the whole-matrix
    mode (default 60 % of the free memory; below it the matrix is built in column blocks)."""
    t0 = time.perf_counter()
    if sources is None:
        ms = MSBFS(csr, backend, dtype, block)
        out, kernel_s = ms.columns(np.arange(csr.n, dtype=np.int64), batch, progress, cancel, limit_bytes)
    else:
        src = csr.source_array(sources)
        ms = MSBFS(csr.reversed(), backend, dtype, block)
        cols, kernel_s = ms.columns(src, batch, progress, cancel, limit_bytes)
        out = np.ascontiguousarray(cols.T)
    return APSPResult(out, "gpu-msbfs", time.perf_counter() - t0, kernel_s, ms.launches)


class MultiSourceBFS(HopMethod):
    name = "gpu-msbfs"
    help = ("Bit-parallel multi-source BFS (MS-BFS, Then et al., VLDB 2015; beyond papers 000/004): one bit "
            "per source, 64 per word, one pass over the arcs per level for a whole batch — hop counts")

    def __init__(self, batch: int = DEFAULT_BATCH, block: int = 256, sources=None, limit_bytes=None):
        super().__init__(batch=check_batch(batch), block=check_block(block), sources=sources,
                         limit_bytes=limit_bytes)

    def memory_bytes(self, csr, weighted):
        n = csr.n
        batch = min(self.options["batch"], -(-n // 64) * 64)
        return 4 * (n + 1 + csr.arcs) + state_bytes(n, batch) + n * batch      # column-block mode

    def host_work(self, csr):
        # one launch per level per batch of B sources, n·B/64 threads each; an arc visit per word
        rows, B = self.rows(csr), self.options["batch"]
        launches, _threads, _arcs = bfs_host_work(csr, rows, B)
        words = -(-min(B, rows) // 64)
        return launches, launches * csr.n * words, launches * csr.arcs * words

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        self.check_host(csr, backend)
        return apsp_msbfs(csr, backend, dtype, progress, cancel, **self.options)

    @classmethod
    def level_function(cls, backend=None, dtype="uint8"):
        return _cuda.function(_cuda.device(backend), "msbfs.cu", f"msbfs_level<{_cuda.CTYPE[np.dtype(dtype).name]}>")
