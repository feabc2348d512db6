"""Clustering coefficient on several GPUs of one host (paper 001 §5.5), exact.

Paper 001 runs its per-arc kernels (kernel 1: arcs in storage order; kernel 2: arcs sorted by
the degree of their end vertex) on the two GPUs of a GTX 295 with one pThread per GPU: the whole
graph is copied to every device and the arcs are handed out in work blocks of
``threadsPerBlock × blocksPerSM × #SMs`` arcs per launch through the same mutex-protected cursor
as the CPU version (Alg. 13–14), so a faster or less loaded GPU takes more blocks.

**Graph replicated, arcs partitioned** (as the paper).  Thread i of the kernel reads the
adjacency lists of vj (its arc's end) and of every vk in it — vertices two hops from the arc's
source, anywhere in the graph (a small-world or scale-free graph has no locality to cut along).
Partitioning the graph would make most of those reads remote (peer reads over NVLink/PCIe, or a
2-hop halo that is most of the graph); replicating it costs (V + 1 + 2|A|)·4 bytes per GPU —
80 MB for the paper's largest WS graph (V = 200 000, k = 50) — while only the arcs are split.
Each device keeps two 64-bit counters (t, p); the host adds the devices' integers, so the result
equals the one-GPU counts exactly (integer sums are order-free).

On the NumPy backend the devices are *virtual GPUs* (:mod:`kernels.devices`): the same cursor,
blocks and reduction, each block counted by :func:`arc_block_counts` — a vectorised NumPy
version of the kernel's arithmetic over one block of arcs.
"""
from __future__ import annotations

import numpy as np

from ... import devices as dv
from ...errors import InvalidParameter
from .clustering import arc_order
from ..data.graph import CSR, Graph

#: the paper's work block: threads per block × resident blocks per SM × SMs (per GPU, per launch)
THREADS = 256
BLOCKS_PER_SM = 8
#: expanded (arc, vk) pairs per NumPy chunk of a virtual GPU's block
PAIR_CHUNK = 1 << 22


def arc_keys(csr: CSR) -> np.ndarray:
    """Sorted int64 keys ``source·n + end`` of every arc (CSR rows in order, ends sorted)."""
    return csr.sources().astype(np.int64) * csr.n + csr.indices.astype(np.int64)


def _has_arc(keys: np.ndarray, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = a.astype(np.int64) * n + b
    pos = np.minimum(np.searchsorted(keys, q), max(keys.size - 1, 0))
    return keys[pos] == q if keys.size else np.zeros(q.shape, bool)


def arc_block_counts(csr: CSR, S: np.ndarray, A: np.ndarray, keys: np.ndarray | None = None) -> tuple[int, int]:
    """(t, p) that the per-arc kernel adds for the arcs ``S[i] → A[i]`` (paper 001 Alg. 18–19):
    p += |A_j|, minus 2 for each 2-cycle vi → vj → vi with vi > vj; for vi > vj,
    t += #{vk ∈ A_j : vk < vi, vi ∈ A_k}.  Self-arcs must be absent (the GPU layout drops them)."""
    keys = arc_keys(csr) if keys is None else keys
    n, ptr, idx = csr.n, csr.indptr.astype(np.int64), csr.indices
    S = np.asarray(S, np.int64)
    A = np.asarray(A, np.int64)
    deg = np.diff(ptr)
    down = S > A
    p = int(deg[A].sum()) - 2 * int(_has_arc(keys, n, A[down], S[down]).sum())
    t = 0
    vi, vj = S[down], A[down]
    lens = deg[vj]
    start = 0
    while start < vi.size:                     # chunks of arcs whose expanded lists fit PAIR_CHUNK
        csum = np.cumsum(lens[start:])
        stop = start + max(1, int(np.searchsorted(csum, PAIR_CHUNK, side="right")))
        li, lj, ll = vi[start:stop], vj[start:stop], lens[start:stop]
        rep_i = np.repeat(li, ll)
        offs = np.repeat(ptr[lj] - np.concatenate(([0], np.cumsum(ll)[:-1])), ll)
        vk = idx[np.arange(rep_i.size) + offs]
        keep = vk < rep_i
        t += int(_has_arc(keys, n, vk[keep], rep_i[keep]).sum())
        start = stop
    return t, p


def default_block(backend, devices, arcs: int) -> int:
    """Paper 001's work block: THREADS × BLOCKS_PER_SM × SMs of the first device; on virtual
    GPUs a quarter of each device's share (so the cursor still balances)."""
    if backend is not None and backend.is_gpu:
        sms = int(backend.xp.cuda.runtime.getDeviceProperties(devices[0])["multiProcessorCount"])
        return THREADS * BLOCKS_PER_SM * sms
    return max(1, -(-arcs // (4 * len(devices))))


class MultiGPUClustering:
    """Per-arc clustering counts over several (real or virtual) GPUs; inputs laid out once.

    ``MultiGPUClustering(graph_or_csr, backend, variant="arc"|"sorted", gpus=2, block=None)``;
    :meth:`counts` returns the exact (t, p) and records the blocks each device took
    (:attr:`blocks_taken`)."""

    def __init__(self, g, backend, variant: str = "arc", gpus=2, block: int | None = None):
        csr = g.csr() if isinstance(g, Graph) else g
        self.csr, self.backend, self.variant = csr, backend, variant
        self.gpu = bool(backend is not None and backend.is_gpu)
        self.devices, self.notes = dv.resolve_devices(gpus, backend, "arc partitions",
                                                      "same work blocks and exact reduction, NumPy counts")
        S, A = arc_order(csr, variant)
        self.arcs = int(S.size)
        self.block = int(block or default_block(backend, self.devices, max(1, self.arcs)))
        if self.block < 1:
            raise InvalidParameter(f"work block must be ≥ 1 arc (got {block})")
        self.blocks_taken: list[int] = [0] * len(self.devices)
        if self.gpu:
            cp = backend.xp

            def upload(rank, dev):      # the graph replicated, the (ordered) arcs too: blocks are views
                return [cp.asarray(csr.indptr), cp.asarray(csr.indices), cp.asarray(S), cp.asarray(A),
                        cp.zeros(2, dtype=cp.uint64)]

            self.dev = dv.run_on_devices(backend, self.devices, upload)
        else:
            self.host = (S, A, arc_keys(csr))

    def _device_counts(self, rank, dev, cursor) -> tuple[int, int]:
        if self.gpu:
            from .. import cuda as _cuda
            ptr, idx, S, A, counters = self.dev[rank]
            counters.fill(0)
            cp = self.backend.xp
            gdev = _cuda.device(self.backend)              # follows the current CUDA device
            fn = _cuda.function(gdev, "clustering.cu", "cc_per_arc")
            null = _cuda.null(gdev)

            def launch(a, b):          # returns at once: the event marks the block's end
                gdev.launch(fn, (_cuda.blocks(b - a, THREADS),), (THREADS,),
                            (ptr, idx, S[a:b], A[a:b], np.int64(b - a), counters, null))
                done = cp.cuda.Event(disable_timing=True)
                done.record()
                return done

            # at most two blocks in flight per GPU: blocks go to the GPUs as they finish them, as the
            # paper's pThreads' synchronous launches did (kernels.devices.drain)
            taken = dv.drain(cursor, launch, in_flight=2)
            c = counters.get().view(np.int64)
            t, p = int(c[0]), int(c[1])
        else:
            S, A, keys = self.host
            acc = [0, 0]

            def count(a, b):
                dt, dp = arc_block_counts(self.csr, S[a:b], A[a:b], keys)
                acc[0] += dt
                acc[1] += dp

            taken = dv.drain(cursor, count)
            t, p = acc
        self.blocks_taken[rank] = taken
        return t, p

    def counts(self) -> tuple[int, int]:
        """Exact (t, p): every device counts the blocks it takes; the host adds the integers."""
        cursor = dv.WorkCursor(self.arcs, self.block)
        parts = dv.run_on_devices(self.backend if self.gpu else None, self.devices,
                                  lambda r, d: self._device_counts(r, d, cursor))
        return sum(t for t, _ in parts), sum(p for _, p in parts)

    def run(self) -> float:
        t, p = self.counts()
        return 3.0 * t / p if p > 0 else 0.0
