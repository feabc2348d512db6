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
blocks and reduction, each block counted by the same CUDA source (``cuda/clustering.cu``,
``cc_per_arc``) run on the host device (:mod:`kernels.gpu.host`: compiled by the host C++ compiler),
as the one-GPU path (:class:`~.clustering.GPUClustering`) runs without a GPU — one host thread per
virtual GPU, each launching the kernel on the blocks it takes, with its own two counters.
"""
from __future__ import annotations

import numpy as np

from ... import devices as dv
from ...errors import InvalidParameter
from .. import cuda as _cuda
from .clustering import arc_order
from ..data.graph import Graph

#: the paper's work block: threads per block × resident blocks per SM × SMs (per GPU, per launch)
THREADS = 256
BLOCKS_PER_SM = 8


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
                                                      "same work blocks and exact reduction, the CUDA "
                                                      "kernel run on the CPU")
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
        else:                           # virtual GPUs: one host copy of the inputs, counters per device
            inputs = [np.ascontiguousarray(x) for x in (csr.indptr, csr.indices, S, A)]
            self.dev = [[*inputs, np.zeros(2, dtype=np.uint64)] for _ in self.devices]

    def _device_counts(self, rank, dev, cursor) -> tuple[int, int]:
        ptr, idx, S, A, counters = self.dev[rank]
        counters.fill(0)
        gdev = _cuda.device(self.backend)      # the current CUDA device, or the host device (no GPU)
        fn = _cuda.function(gdev, "clustering.cu", "cc_per_arc")
        null = _cuda.null(gdev)

        def launch(a, b):
            gdev.launch(fn, (_cuda.blocks(b - a, THREADS),), (THREADS,),
                        (ptr, idx, S[a:b], A[a:b], np.int64(b - a), counters, null))
            if not self.gpu:
                return None                    # the host device returns when the block is done
            done = self.backend.xp.cuda.Event(disable_timing=True)     # returns at once: the event
            done.record()                                               # marks the block's end
            return done

        # at most two blocks in flight per GPU: blocks go to the GPUs as they finish them, as the
        # paper's pThreads' synchronous launches did (kernels.devices.drain)
        taken = dv.drain(cursor, launch, in_flight=2)
        c = _cuda.to_host(counters).view(np.int64)
        self.blocks_taken[rank] = taken
        return int(c[0]), int(c[1])

    def counts(self) -> tuple[int, int]:
        """Exact (t, p): every device counts the blocks it takes; the host adds the integers."""
        cursor = dv.WorkCursor(self.arcs, self.block)
        parts = dv.run_on_devices(self.backend if self.gpu else None, self.devices,
                                  lambda r, d: self._device_counts(r, d, cursor))
        return sum(t for t, _ in parts), sum(p for _, p in parts)

    def run(self) -> float:
        t, p = self.counts()
        return 3.0 * t / p if p > 0 else 0.0
