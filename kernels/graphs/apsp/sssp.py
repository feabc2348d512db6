"""Paper 004 ch. 3: SSSP-based all-pairs shortest paths on the GPU (CUDA in ``cuda/sssp.cu``).

Harish & Narayanan's iterative SSSP (§3.3.2, Figs. 3.3–3.5): a *scatter* kernel relaxes the arcs
of every vertex in the modification set M (atomicMin into the updated costs U), a *check* kernel
takes every lowered cost and puts its vertex back into M, and a changed flag tells the host when
to stop; APSP = |V| such runs.  The task-parallel method (§3.4, Figs. 3.6–3.9) solves N problems
per launch with M, C and U interleaved per vertex (element (v, s) at v·N + s), N = 32 and B = 4
vertices per 128-thread block, with or without staging each vertex's edges in shared memory.
Path recording (§3.4.3): after convergence one more kernel finds each vertex's predecessor in the
inverted graph; the host backtracks the paths (:mod:`.paths`).

=================  ======================================================  ===================
registry name      method                                                  device elements
=================  ======================================================  ===================
``sssp-harish``    Harish & Narayanan, one source per run (N = 1)          4|V| + 2|E|
``sssp``           task parallel, device memory only ("w/o shared")        (3N+1)|V| + 2|E|
``sssp-staged``    task parallel, edges staged in shared memory (Fig 3.9)  (3N+1)|V| + 2|E|
``sssp-path``      ``sssp-staged`` + the recording kernel → predecessors   (3N+2)|V| + 4|E|
=================  ======================================================  ===================

(|E| = arcs; weights count as a second |E|.)  Fig. 3.9 as printed stages only the first N edges
of a vertex but relaxes all of them; here they are staged N = 32 at a time, so any degree is
right.  N (``S`` here) is a multiple of 32: a warp then holds 32 problems of one vertex.  Costs
are float32 (exact for integer path costs below 2**24) and must be non-negative.
"""
from __future__ import annotations

import time

import numpy as np

from ...errors import InvalidParameter
from ..cuda import HOST_COSTS, MIXED_COSTS, HostRunnable, free_memory, to_host
from .core import APSPMethod, APSPResult, float_to_hops
from ..data.graph import CSR
from .. import cuda as _cuda
from .bfs import levels_estimate

#: paper 004 §3.4.2: N = 32 problems per launch, B = 4 vertices per thread block
PAPER_N, PAPER_B = 32, 4


def paper_elements(method: str, n: int, arcs: int, N: int = PAPER_N) -> int:
    """Device array elements paper 004 counts for ``method`` (§3.4.2; path recording §3.4.3)."""
    if method == "sssp-harish":
        return 4 * n + 2 * arcs
    base = (3 * N + 1) * n + 2 * arcs
    return base + (n + 2 * arcs if method == "sssp-path" else 0)


def check_S(S, staged: bool) -> int:
    S = int(S)
    if S < 1 or (S != 1 and S % 32) or (staged and S % 32):
        raise InvalidParameter(f"problems per launch N must be a positive multiple of 32 (got {S})")
    return S


class TaskParallelSSSP:
    """S single-source problems per launch (S = 1: Harish & Narayanan), on ``csr`` kept on the device.

    :meth:`run` returns the cost rows of ``sources`` (and the predecessor rows when ``record``)."""

    def __init__(self, csr: CSR, backend, S: int, staged: bool = False, threads: int = 128,
                 record: bool = False, weighted: bool = True):
        self.dev = dev = _cuda.device(backend)
        cp = dev.xp
        self.csr, self.backend, self.cp = csr, backend, cp
        self.S, self.staged, self.threads, self.record = check_S(S, staged), staged, int(threads), record
        self.weighted = bool(weighted and csr.weights is not None)
        self.d_ptr, self.d_idx = cp.asarray(csr.indptr), cp.asarray(csr.indices)
        self.d_w = cp.asarray(csr.weights) if self.weighted else _cuda.null(dev)      # null: unit weights
        if record:
            rev = csr.reversed()
            self.r_ptr, self.r_idx = cp.asarray(rev.indptr), cp.asarray(rev.indices)
            self.r_w = cp.asarray(rev.weights) if self.weighted else _cuda.null(dev)
            self.k_record = _cuda.function(dev, "sssp.cu", "sssp_record")
        self.k_init = _cuda.function(dev, "sssp.cu", "sssp_init")
        self.k_scatter = _cuda.function(dev, "sssp.cu", "sssp_scatter_staged" if staged else "sssp_scatter")
        self.k_check = _cuda.function(dev, "sssp.cu", "sssp_check")
        self.flag = cp.zeros(1, dtype=cp.int32)
        self.launches = 0
        self.iterations: list[int] = []
        self.cost_seconds = 0.0
        self.record_seconds = 0.0

    @staticmethod
    def bytes_needed(csr: CSR, S: int, weighted: bool, record: bool) -> int:
        n, arcs = csr.n, csr.arcs
        graph = 4 * (n + 1) + 4 * arcs + (4 * arcs if weighted else 0)
        return graph * (2 if record else 1) + S * n * 9 + 4 * S

    def run(self, sources: np.ndarray, progress=None, cancel=None):
        cp, n, S, threads = self.cp, self.csr.n, self.S, self.threads
        rows = int(sources.size)
        out = np.empty((rows, n), dtype=np.float32)
        pred = np.empty((rows, n), dtype=np.int32) if self.record else None
        total = n * S
        grid = (total + threads - 1) // threads
        cost = cp.empty(total, dtype=cp.float32)
        upd = cp.empty(total, dtype=cp.float32)
        mask = cp.empty(total, dtype=cp.uint8)
        n32, S32 = np.int32(n), np.int32(S)
        launch = self.dev.launch
        for r0 in range(0, rows, S):
            if cancel is not None and cancel():
                raise InterruptedError("cancelled")
            cnt = min(S, rows - r0)
            src = np.full(S, -1, dtype=np.int32)
            src[:cnt] = sources[r0:r0 + cnt]
            src_d = cp.asarray(src)
            t0 = time.perf_counter()
            launch(self.k_init, (grid,), (threads,), (n32, S32, src_d, cost, upd, mask))
            it = 0
            while True:
                it += 1
                launch(self.k_scatter, (grid,), (threads,), (self.d_ptr, self.d_idx, self.d_w, n32, S32, mask, cost, upd))
                launch(self.k_check, (grid,), (threads,), (np.int64(total), mask, cost, upd, self.flag, np.int32(it)))
                self.launches += 2
                if int(to_host(self.flag)[0]) != it:          # no cost changed in this iteration
                    break
            self.iterations.append(it)
            t1 = time.perf_counter()
            self.cost_seconds += t1 - t0
            if self.record:
                p = upd.view(cp.int32)                     # Pa reuses Ua's memory
                launch(self.k_record, (grid,), (threads,), (self.r_ptr, self.r_idx, self.r_w, n32, S32, src_d, cost, p))
                self.launches += 1
                self.dev.synchronize()
                self.record_seconds += time.perf_counter() - t1
                pred[r0:r0 + cnt] = to_host(p.reshape(n, S)[:, :cnt].T)
            out[r0:r0 + cnt] = to_host(cost.reshape(n, S)[:, :cnt].T)
            if progress is not None:
                progress((r0 + cnt) / rows)
        return out, pred


def auto_S(n: int, backend) -> int:
    """Problems per launch for ``sssp`` (beyond the paper's 32): as many as fit in ~40 % of the
    free memory (≤ 2 GiB), a multiple of 32, at most n rounded up."""
    fit = int(min(0.4 * free_memory(backend), 2 << 30)) // (9 * max(1, n)) // 32 * 32
    return max(32, min(-(-n // 32) * 32, fit))


def apsp_sssp(csr: CSR, backend, S: int | None = None, weighted: bool | None = None, dtype="auto",
              progress=None, cancel=None, staged: bool = False, threads: int | None = None,
              record: bool = False, sources=None, name: str = "sssp") -> APSPResult:
    """All-pairs (or ``sources``-rows) costs by S problems per launch; ``staged``: Fig. 3.9's
    shared-memory kernel; ``record``: predecessors in ``APSPResult.pred`` (paper 004 §3.4.3)."""
    weighted = (csr.weights is not None) if weighted is None else weighted
    src = csr.source_array(sources)
    S = auto_S(csr.n, backend) if S is None else S
    threads = threads or PAPER_N * PAPER_B
    runner = TaskParallelSSSP(csr, backend, S, staged, threads, record, weighted)
    t0 = time.perf_counter()
    out, pred = runner.run(src, progress, cancel)
    sec = time.perf_counter() - t0
    res = out if weighted else float_to_hops(out, csr, dtype)
    return APSPResult(res, name, sec, runner.cost_seconds + runner.record_seconds, runner.launches, weighted,
                      pred=pred, timings={"cost": runner.cost_seconds, "record": runner.record_seconds,
                                          "iterations": runner.iterations})


class SSSPMethod(HostRunnable, APSPMethod):
    """Common options: ``S`` (problems per launch, the thesis's N), ``threads`` (per block) and
    ``sources`` (rows to compute; default all).  Costs must be non-negative."""

    negative_weights = False
    staged = False
    record = False
    default_S: int | None = PAPER_N
    default_threads = PAPER_N * PAPER_B
    host_costs = MIXED_COSTS                     # plain scatter + check with a barrier

    def __init__(self, S: int | None = None, threads: int | None = None, sources=None):
        S = self.default_S if S is None else S
        if S is not None:
            check_S(S, self.staged)
        threads = int(threads or self.default_threads)
        if threads < 32 or threads > 1024 or threads % 32:
            raise InvalidParameter(f"threads per block must be a multiple of 32 in 32 … 1024 (got {threads})")
        super().__init__(S=S, threads=threads, sources=sources)

    def memory_bytes(self, csr, weighted):
        return TaskParallelSSSP.bytes_needed(csr, self.options["S"] or PAPER_N, weighted, self.record)

    def host_work(self, csr):
        """Iterations ≈ BFS levels (twice that weighted: a cost can fall again); per iteration a
        scatter and a check launch over n·S threads, every arc relaxed about once per source per
        level of lowering."""
        rows = self.rows(csr)
        S = self.options["S"] or auto_S(csr.n, None)
        weighted = csr.weights is not None
        its = levels_estimate(csr) * (2 if weighted else 1)
        batches = -(-rows // S)
        launches = batches * (2 * its + 2)
        return float(launches), float(launches) * csr.n * S, float(rows) * csr.arcs * (2 if weighted else 1)

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        self.check_host(csr, backend)
        if self.record and weighted and csr.min_weight() <= 0:
            raise InvalidParameter("path recording needs positive weights (a zero-weight arc can make a vertex "
                                   "its own predecessor's predecessor)")
        return apsp_sssp(csr, backend, weighted=weighted, dtype=dtype, progress=progress, cancel=cancel,
                         staged=self.staged, record=self.record, name=self.name, **self.options)


class TaskParallelSSSPMethod(SSSPMethod):
    name = "sssp"
    help = ("Paper 004 §3.4: task-parallel SSSP without shared memory, S problems per launch interleaved "
            "(default: as many as fit; S = 32 is the thesis's) — weighted or hop counts")
    default_S = None                                        # auto (beyond the paper)


class HarishSSSP(SSSPMethod):
    name = "sssp-harish"
    help = ("Paper 004 §3.3.2: Harish & Narayanan's SSSP (scatter/check kernels, mask/cost/updated arrays, "
            "changed flag), one source per run, |V| runs — weighted or hop counts")
    default_S = 1
    default_threads = 256

    def __init__(self, threads: int | None = None, sources=None):
        super().__init__(1, threads, sources)


class StagedSSSP(SSSPMethod):
    name = "sssp-staged"
    help = ("Paper 004 §3.4.1 Fig. 3.9: task-parallel SSSP with each vertex's edges staged in shared memory, "
            "N = 32 problems × B = 4 vertices per block — weighted or hop counts")
    staged = True
    host_costs = HOST_COSTS                      # the staged scatter votes (__ballot_sync)


class PathSSSP(SSSPMethod):
    name = "sssp-path"
    help = ("Paper 004 §3.4.3: staged task-parallel SSSP + the path-recording kernel over the inverted graph "
            "(predecessors for CPU backtracking) — weighted or hop counts")
    staged = True
    record = True
    host_costs = HOST_COSTS                      # the staged scatter votes (__ballot_sync)
