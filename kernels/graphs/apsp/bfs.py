"""Paper 000 §4.3: all-pairs hop counts by repeated level-synchronous BFS on the GPU, kernels 1–7.

The paper runs one BFS per source (|V| BFS runs, one kernel launch per level) and evolves the
kernel in seven steps (Fig. 10; CUDA in ``cuda/bfs.cu``):

======  ===============  ==================================================================
kernel  registry name    change
======  ===============  ==================================================================
K1      ``gpu-bfs-k1``   CSR (Fig. 9e), bool frontier array copied to the host and scanned
K2      ``gpu-bfs-k2``   a global frontier counter (atomicSub / atomicAdd), only it is copied
K3      ``gpu-bfs-k3``   the counter kept per block in shared memory, flushed once (Listing 4)
K4      ``gpu-bfs-k4``   int4 arcs, each list led by its length (Listing 2)
K5      ``gpu-bfs-k5``   int2 vertices + int4 arcs (Fig. 9f), vertices taken in degree order
K6      ``gpu-bfs-k6``   K5 + a frontier-update array and flag, no atomics, host swaps
                         (the paper discards it; kept so its result can be seen)
K7      ``gpu-bfs-k7``   K5 + a register count per thread, one shared atomic per thread
======  ===============  ==================================================================

Every paper kernel runs ``batch`` sources per launch: ``batch=1`` (the default) is the paper's
one source per BFS; a larger batch is the multi-source form (beyond the paper: row s of the
cost and frontier matrices belongs to source s).  ``gpu-bfs`` is kernel 7 compacted (beyond the
paper): the frontier is implicit in "hop count = level", the hop counts are stored as uint8/16/32
and as many sources as fit go in one launch — the project's fast BFS.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import time

import numpy as np

from ...errors import InvalidParameter
from ..cuda import PLAIN_COSTS, HostRunnable, free_memory, to_host
from .core import APSPMethod, APSPResult, DistanceOverflow, hop_dtype, sentinel
from ..data.graph import CSR, PackedInt4
from .. import cuda as _cuda
from ..algorithms.frontier import tree_depth
from .core import REGISTRY

#: paper 000 kernel → CUDA function
PAPER_KERNELS = {1: "bfs_k1", 2: "bfs_k2", 3: "bfs_k3", 4: "bfs_k4", 5: "bfs_k5", 6: "bfs_k6", 7: "bfs_k7p"}
#: the kernel each one was derived from (paper 000 Fig. 10: K6 is discarded, K7 builds on K5)
PARENT = {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 5}
#: block size of all tests in paper 000 §4.3 (256 threads: 100 % occupancy on its GPUs)
PAPER_BLOCK = 256
INF_COST = 0x7FFFFFFF


def check_block(block) -> int:
    block = int(block)
    if block < 32 or block > 1024 or block % 32:
        raise InvalidParameter(f"threads per block must be a multiple of 32 in 32 … 1024 (got {block})")
    return block


class PaperBFS:
    """Kernel ``k`` (1 … 7) of paper 000 with its graph layout on the device.

    :meth:`run` computes the hop counts from ``sources`` (rows of the result, in order), ``batch``
    sources per launch.  ``launches`` counts the BFS kernel launches."""

    def __init__(self, csr: CSR, backend, k: int, block: int = PAPER_BLOCK, dtype="auto"):
        if k not in PAPER_KERNELS:
            raise InvalidParameter(f"paper 000 has kernels 1 … 7 (got {k})")
        self.dev = dev = _cuda.device(backend)
        cp = dev.xp
        self.csr, self.backend, self.cp, self.k = csr, backend, cp, k
        self.block = check_block(block)
        self.dtype = hop_dtype(csr, dtype)
        self.fn = _cuda.function(dev, "bfs.cu", PAPER_KERNELS[k])
        if k <= 3:                                       # CSR (Fig. 9e)
            self.graph = (cp.asarray(csr.indptr), cp.asarray(csr.indices))
        elif k == 4:                                     # Listing 2: length first in the int4 list
            pk = PackedInt4.from_csr(csr, with_length=True)
            self.graph = (cp.asarray(pk.arcs4), cp.asarray(np.ascontiguousarray(pk.vertices[:, 0])))
        else:                                            # Fig. 9f + verticesSorted
            pk = PackedInt4.from_csr(csr, with_length=False)
            self.graph = (cp.asarray(pk.arcs4), cp.asarray(pk.vertices), cp.asarray(pk.sorted_vertices))
        self.init = _cuda.function(dev, "bfs.cu", "bfs_init<unsigned char>" if k == 1 else "bfs_init<int>")
        self.compact = _cuda.function(dev, "bfs.cu", f"bfs_compact<{_cuda.CTYPE[self.dtype.name]}>")
        self.counter = cp.zeros(1, dtype=cp.int32)
        self.overflow = cp.zeros(1, dtype=cp.uint32)
        self.launches = 0
        self._work = None

    @staticmethod
    def bytes_needed(csr: CSR, k: int, batch: int) -> int:
        """Device bytes: the layout plus int32 costs and the frontier array(s) of one batch."""
        n, arcs = csr.n, csr.arcs
        graph = 4 * (n + 1 + arcs) if k <= 3 else 16 * (arcs + 2 * n) // 4 + 16 * n
        front = {1: 1, 6: 8}.get(k, 4)
        return graph + batch * n * (4 + front + 4)      # cost, frontier(s), compact copy (≤ 4 B)

    def _batch(self, src_d, out_rows):
        """Hop counts of the sources ``src_d`` (device int64) into the device array ``out_rows``
        (len(src) × n); a hop count too large for the dtype sets ``self.overflow``."""
        cp, n, k, block = self.cp, self.csr.n, self.k, self.block
        cnt = int(src_d.size)
        total = n * cnt
        grid = (total + block - 1) // block
        if self._work is None or self._work[0].size < total:
            self._work = (cp.empty(total, dtype=cp.int32), cp.empty(total, dtype=cp.uint8 if k == 1 else cp.int32),
                          cp.empty(total, dtype=cp.int32) if k == 6 else None)
        cost, front, update = (a[:total] if a is not None else None for a in self._work)
        launch = self.dev.launch
        launch(self.init, (grid,), (block,), (np.int32(n), np.int32(cnt), src_d, cost, front))
        g = self.graph
        n32, c32 = np.int32(n), np.int32(cnt)
        if k == 6:
            update.fill(0)
            flag = self.counter
            while True:
                flag.fill(0)
                launch(self.fn, (grid,), (block,), (*g, n32, c32, front, update, cost, flag))
                self.launches += 1
                if int(to_host(flag)[0]) == 0:
                    break
                front, update = update, front            # host-side swap (Listing 13) …
                update.fill(0)                           # … and reset of the update array
        else:
            level = 0
            if k > 1:
                self.counter.fill(cnt)                   # the sources are the first frontier
            while True:
                if k == 1:
                    launch(self.fn, (grid,), (block,), (*g, n32, c32, front, cost, np.int32(level)))
                else:
                    launch(self.fn, (grid,), (block,), (*g, n32, c32, front, cost, np.int32(level), self.counter))
                self.launches += 1
                if k == 1:
                    if not to_host(front).any():         # K1: the whole frontier array to the host
                        break
                elif int(to_host(self.counter)[0]) == 0:  # K2 …: only the counter
                    break
                level += 1
        launch(self.compact, (grid,), (block,), (np.int64(total), cost, out_rows, self.overflow))

    def run(self, sources: np.ndarray, batch: int = 1, progress=None, cancel=None):
        """(hop counts len(sources) × n on the host, seconds without the final copies)."""
        cp, n = self.cp, self.csr.n
        out = np.empty((sources.size, n), dtype=self.dtype)
        chunk = max(batch, min(sources.size, (64 << 20) // max(1, n * self.dtype.itemsize) // batch * batch))
        buf = cp.empty((chunk, n), dtype=self.dtype)
        src_d = cp.asarray(sources, dtype=cp.int64)
        self._work = None
        self.overflow.fill(0)
        kernel_s, r0, t_report = 0.0, 0, time.perf_counter()
        while r0 < sources.size:
            rows = min(chunk, sources.size - r0)
            tk = time.perf_counter()
            for b0 in range(0, rows, batch):
                if cancel is not None and cancel():
                    raise InterruptedError("cancelled")
                cnt = min(batch, rows - b0)
                self._batch(src_d[r0 + b0:r0 + b0 + cnt], buf[b0:b0 + cnt])
                if progress is not None and time.perf_counter() - t_report > 0.2:
                    t_report = time.perf_counter()
                    progress((r0 + b0 + cnt) / sources.size)
            self.dev.synchronize()
            kernel_s += time.perf_counter() - tk
            if int(to_host(self.overflow)[0]):
                raise DistanceOverflow(f"a hop count exceeds {self.dtype}")
            to_host(buf[:rows], out[r0:r0 + rows])
            r0 += rows
        if progress is not None:
            progress(1.0)
        return out, kernel_s


def apsp_paper_bfs(csr: CSR, backend, k: int, dtype="auto", progress=None, cancel=None, sources=None,
                   batch: int = 1, block: int = PAPER_BLOCK) -> APSPResult:
    """Hop counts by paper 000's kernel ``k``; ``batch`` sources per launch (1: the paper's)."""
    src = csr.source_array(sources)
    bfs = PaperBFS(csr, backend, k, block, dtype)
    t0 = time.perf_counter()
    out, kernel_s = bfs.run(src, max(1, int(batch)), progress, cancel)
    return APSPResult(out, f"gpu-bfs-k{k}", time.perf_counter() - t0, kernel_s, bfs.launches)


def apsp_bfs_k1(csr: CSR, backend, dtype="auto", progress=None, cancel=None, sources=None) -> APSPResult:
    """Paper 000 kernel 1: one source at a time, host scans the frontier array every level."""
    return apsp_paper_bfs(csr, backend, 1, dtype, progress, cancel, sources)


# ------------------------------------------------------------------ kernel 7, compact (gpu-bfs)
class BFSK7:
    """Paper 000 kernel 7, compacted, many sources per launch; keeps the layout on the device."""

    def __init__(self, csr: CSR, backend, dtype="auto", block: int = PAPER_BLOCK):
        self.dev = dev = _cuda.device(backend)
        cp = dev.xp
        self.csr, self.backend, self.cp, self.block = csr, backend, cp, check_block(block)
        self.dtype = hop_dtype(csr, dtype)
        pk = PackedInt4.from_csr(csr, with_length=False)
        self.arcs4 = cp.asarray(pk.arcs4)
        self.vertices = cp.asarray(pk.vertices)
        self.sorted = cp.asarray(pk.sorted_vertices)
        self.counter = cp.zeros(1, dtype=cp.uint32)
        self.k7 = _cuda.function(dev, "bfs.cu", f"bfs_k7<{_cuda.CTYPE[self.dtype.name]}>")
        self.launches = 0

    def batch_size(self, limit_bytes: int | None = None) -> int:
        n = self.csr.n
        if limit_bytes is None:
            limit_bytes = min(int(0.5 * free_memory(self.backend)), 4 << 30)
        return max(1, min(n, limit_bytes // max(1, n * self.dtype.itemsize)))

    def run_batch(self, s0: int, count: int, dist=None, sources=None):
        """Distances from sources s0 … s0+count−1 (or ``sources[s0:s0+count]``) as a device array
        (count × n)."""
        cp, n = self.cp, self.csr.n
        if dist is None:
            dist = cp.empty((count, n), dtype=self.dtype)
        dist.fill(sentinel(self.dtype))
        r = cp.arange(count)
        cols = s0 + r if sources is None else cp.asarray(sources[s0:s0 + count])
        dist[r, cols] = 0
        total = n * count
        grid = (total + self.block - 1) // self.block
        top = sentinel(self.dtype)
        level = 0
        while True:
            if level + 1 >= top:
                raise DistanceOverflow(f"hop counts reach {top}: {self.dtype} is too small")
            self.counter.fill(0)
            self.dev.launch(self.k7, (grid,), (self.block,), (self.arcs4, self.vertices, self.sorted, np.int32(n),
                                                        np.int32(count), dist, np.int32(level), self.counter))
            self.launches += 1
            if int(to_host(self.counter)[0]) == 0:
                break
            level += 1
        return dist


def apsp_bfs_k7(csr: CSR, backend, dtype="auto", progress=None, cancel=None, batch=None,
                block: int = PAPER_BLOCK, sources=None) -> APSPResult:
    src = None if sources is None else csr.source_array(sources)
    bfs = BFSK7(csr, backend, dtype, block)
    n = csr.n
    rows = n if src is None else src.size
    batch = int(batch or bfs.batch_size())
    out = np.empty((rows, n), dtype=bfs.dtype)
    t0 = time.perf_counter()
    kernel_s = 0.0
    buf = None
    for s0 in range(0, rows, batch):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        cnt = min(batch, rows - s0)
        if buf is None or buf.shape[0] != cnt:
            buf = bfs.cp.empty((cnt, n), dtype=bfs.dtype)
        tk = time.perf_counter()
        bfs.run_batch(s0, cnt, buf, src)
        bfs.dev.synchronize()
        kernel_s += time.perf_counter() - tk
        to_host(buf, out[s0:s0 + cnt])
        if progress is not None:
            progress((s0 + cnt) / rows)
    sec = time.perf_counter() - t0
    return APSPResult(out, "gpu-bfs", sec, kernel_s, bfs.launches)


# ------------------------------------------------------------------ registry
class HopMethod(HostRunnable, APSPMethod):
    """Common to the BFS family: hop counts only, no weights (so no negative ones); the CUDA
    source runs on the host device without a GPU (:class:`~..cuda.HostRunnable`)."""

    hops_only = True
    negative_weights = False

    @classmethod
    def level_function(cls, backend=None, dtype="uint8"):
        """The CUDA function this method launches once per BFS level (occupancy: registers,
        shared memory), on the device of ``backend`` (the GPU backend: CUDA; else the host device)."""
        raise NotImplementedError


class BFSKernel7(HopMethod):
    name = "gpu-bfs"
    help = ("Paper 000 §4.3 kernel 7, compacted (beyond the paper): int4 arcs, degree-sorted vertices, "
            "frontier = hop count equals the level, uint8/16/32 hops, many sources per launch")

    def __init__(self, batch=None, block: int = PAPER_BLOCK, sources=None):
        super().__init__(batch=batch, block=check_block(block), sources=sources)

    def memory_bytes(self, csr, weighted):
        n = csr.n
        rows = n if self.options["sources"] is None else len(np.ravel(self.options["sources"]))
        batch = int(self.options["batch"] or 1)          # auto: sized to the free memory itself
        return 16 * (csr.arcs + 4 * n) // 4 + 12 * n + min(rows, batch) * n

    def host_work(self, csr):
        rows = self.rows(csr)
        return bfs_host_work(csr, rows, int(self.options["batch"] or rows))

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        self.check_host(csr, backend)
        return apsp_bfs_k7(csr, backend, dtype, progress, cancel, **self.options)

    @classmethod
    def level_function(cls, backend=None, dtype="uint8"):
        return _cuda.function(_cuda.device(backend), "bfs.cu", f"bfs_k7<{_cuda.CTYPE[np.dtype(dtype).name]}>")


class PaperBFSMethod(HopMethod):
    """Paper 000 kernel ``kernel``; options ``batch`` (sources per launch, 1 = the paper's),
    ``block`` (threads per block, paper 256) and ``sources`` (rows to compute; default all)."""

    kernel: int = 1

    def __init__(self, batch: int = 1, block: int = PAPER_BLOCK, sources=None):
        batch = int(batch)
        if batch < 1:
            raise InvalidParameter(f"sources per launch must be ≥ 1 (got {batch})")
        super().__init__(batch=batch, block=check_block(block), sources=sources)

    def memory_bytes(self, csr, weighted):
        return PaperBFS.bytes_needed(csr, self.kernel, self.options["batch"])

    def host_work(self, csr):
        return bfs_host_work(csr, self.rows(csr), self.options["batch"])

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        self.check_host(csr, backend)
        return apsp_paper_bfs(csr, backend, self.kernel, dtype, progress, cancel, **self.options)

    @classmethod
    def level_function(cls, backend=None, dtype="uint8"):
        return _cuda.function(_cuda.device(backend), "bfs.cu", PAPER_KERNELS[cls.kernel])


def levels_estimate(csr: CSR) -> int:
    """BFS levels per source, for the host guard: the largest eccentricity (within what it reaches)
    of four spread vertices (CPU BFS each) + 2 — on a connected undirected graph any source's is at
    most twice one of them; four starts also cover a digraph whose first vertex reaches little."""
    from scipy.sparse.csgraph import breadth_first_order

    if csr.n == 0:
        return 1
    A = csr.to_scipy(weighted=False)
    top = 0
    for s in sorted({0, csr.n // 3, 2 * csr.n // 3, csr.n - 1}):
        _order, pred = breadth_first_order(A, s, directed=True, return_predecessors=True)
        depth = tree_depth(pred, s)
        top = max(top, int(depth[np.isfinite(depth)].max(initial=0)))
    return top + 2


def bfs_host_work(csr: CSR, rows: int, batch: int) -> tuple[float, float, float]:
    """(launches, threads, arc visits) of ``rows`` BFS runs, ``batch`` sources per launch: one
    launch of batch × n threads per level, every arc visited once per source."""
    levels = levels_estimate(csr)
    batches = -(-rows // max(1, batch))
    launches = batches * (levels + 2)
    return float(launches), float(launches) * min(batch, rows) * csr.n, float(rows) * csr.arcs


PAPER_HELP = {
    1: "CSR, bool frontier array copied to the host and scanned every level",
    2: "kernel 1 + one global frontier counter (atomicAdd / atomicSub), only the counter is copied",
    3: "kernel 2 with the counter per block in shared memory, flushed once per block (Listing 4)",
    4: "kernel 3 on int4 arcs led by the list length (Listing 2)",
    5: "kernel 4 → int2 vertices + int4 arcs (Fig. 9f), vertices taken in degree order",
    6: "kernel 5 + frontier-update array and flag, no atomics, host swaps (discarded by the paper)",
    7: "kernel 5 + per-thread register count, one shared atomic per thread (the paper's best)",
}


def _paper_method(k: int) -> type[APSPMethod]:
    cls = type(f"BFSKernel{k}" if k != 7 else "BFSKernel7Paper", (PaperBFSMethod,),
               {"name": f"gpu-bfs-k{k}", "kernel": k, "__doc__": f"Paper 000 §4.3 kernel {k}.",
                **({"host_costs": PLAIN_COSTS} if k <= 2 else {}),          # K1, K2: no barrier
                "help": f"Paper 000 §4.3 kernel {k}: {PAPER_HELP[k]}; one source per BFS "
                        "(option batch: sources per launch) — hop counts"})
    return cls


BFSKernel1, BFSKernel2, BFSKernel3, BFSKernel4, BFSKernel5, BFSKernel6, BFSKernel7Paper = (
    _paper_method(k) for k in range(1, 8))


def kernel_function(name: str, dtype="uint8", backend=None):
    """The CUDA function the BFS method ``name`` launches per level (for occupancy: registers,
    shared memory), asked of its registered class (``level_function``)."""
    cls = REGISTRY.get(name, None)
    if cls is None or not issubclass(cls, HopMethod):
        raise InvalidParameter(f"unknown BFS kernel {name!r}")
    return cls.level_function(backend, dtype)
