"""Paper 004 ch. 3: task-parallel SSSP on the GPU, S sources per launch in an interleaved layout.

All-pairs distances as n single-source problems, S at a time (scatter / check kernel pair until
no cost changes).  CUDA sources: ``cuda/sssp.cu``.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import InvalidParameter
from .apsp_core import APSPMethod, APSPResult, float_to_hops, register
from .graph import CSR


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
    res = out if weighted else float_to_hops(out, csr, dtype)
    return APSPResult(res, "sssp", sec, kernel_s, launches, weighted)


@register
class TaskParallelSSSP(APSPMethod):
    name = "sssp"
    help = ("Paper 004 ch. 3: task-parallel SSSP, S sources per launch interleaved (scatter/check "
            "kernels); weighted or hop counts")

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        return apsp_sssp(csr, backend, weighted=weighted, dtype=dtype, progress=progress, cancel=cancel,
                         **self.options)
