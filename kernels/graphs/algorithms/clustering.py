"""Clustering coefficient (paper 001 §5): C = 3 × triangles / connected triples (Newman).

* :func:`clustering_arcs_reference` — Algorithm 12 literally, over an arbitrary arc list
  (directed input, self-arcs and 2-cycles corrected); pure Python, for checking.
* :func:`global_clustering` / :func:`local_clustering` — CPU (sparse-matrix triangle count) or GPU
  (CuPy RawKernel, one thread per arc, paper 001 §5.4 kernel 1; ``variant="sorted"`` = kernel 2,
  arcs sorted by the degree of their end vertex).

Counting conventions (paper 001 Alg. 12): t = 2 × triangles, p = Σ_v d_v(d_v − 1) = 2 × triples,
C = 3t / p — equal to ``networkx.transitivity``; local c_v = 2T_v / (d_v(d_v − 1)) equals
``networkx.clustering`` (0 where d_v < 2).  A ring lattice of degree k gives 3(k−2)/(4(k−1)).
"""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter
from ..data.graph import CSR, Graph
from concurrent.futures import ThreadPoolExecutor
from .. import cuda as _cuda
from ..cuda import HOST_COSTS, HOST_LIMIT_S, blocks, null, to_host

VARIANTS = ("arc", "sorted")


def ring_lattice_clustering(k: int) -> float:
    return 3.0 * (k - 2) / (4.0 * (k - 1))


def clustering_arcs_reference(n: int, src, dst) -> tuple[int, int, float]:
    """Algorithm 12 of paper 001 on arcs (src[i] → dst[i]); returns (t, p, 3t/p).

    Self-arcs are skipped and their pseudo-paths u → v → v removed (``p −= R[v]``, R = number of
    in-arcs of v from other vertices); 2-cycles vi → vj → vi are removed (``p −= 2``).  Duplicate
    arcs are not allowed.  For symmetric input this equals networkx.transitivity of the graph
    without its self-loops.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in zip(src.tolist(), dst.tolist()):
        adj[a].append(b)
    sets = [set(x) for x in adj]
    R = np.bincount(dst[src != dst], minlength=n)
    t = p = 0
    for vi in range(n):
        for vj in adj[vi]:
            if vj == vi:
                p -= int(R[vi])
                continue
            p += len(adj[vj])
            if vi > vj:
                for vk in adj[vj]:
                    if vk == vi:
                        p -= 2
                        continue
                    if vk == vj:
                        continue                 # self-arc of vj: no triple
                    if vi > vk:
                        t += vi in sets[vk]
    return t, p, (3.0 * t / p if p > 0 else 0.0)


#: rows per block of the CPU triangle count: bounds the memory of A[rows]·A (a BA hub's two-hop
#: set is large) and is the unit of work the threads of ``workers > 1`` take in turn
ROW_BLOCK = 2048


def _triangles_cpu(csr: CSR, workers: int = 1) -> np.ndarray:
    """2 × triangles at each vertex: row sums of (A·A) ∘ A, computed ROW_BLOCK rows at a time.
    ``workers > 1`` hands the row blocks to a thread pool (scipy's sparse product releases the GIL):
    paper 001's pThreads version, whose threads take blocks of source vertices from a shared cursor
    (Alg. 13–14); small graphs get smaller blocks, so that every thread has several."""
    A = csr.to_scipy(weighted=False)
    A.data[:] = 1.0
    rows = ROW_BLOCK if workers <= 1 else min(ROW_BLOCK, max(64, -(-csr.n // (4 * int(workers)))))

    def block(r0):
        B = A[r0:r0 + rows]
        return np.asarray((B @ A).multiply(B).sum(axis=1)).ravel()

    starts = range(0, csr.n, rows)
    if workers > 1:
        with ThreadPoolExecutor(int(workers)) as pool:
            parts = list(pool.map(block, starts))
    else:
        parts = [block(r0) for r0 in starts]
    return (np.concatenate(parts) if parts else np.zeros(0)).astype(np.int64)


def arc_order(csr: CSR, variant: str):
    """Arc sources S and ends A in the kernel's order: storage order (kernel 1) or sorted by the
    end vertex's degree (kernel 2, so a warp's outer loops have similar lengths)."""
    if variant not in VARIANTS:
        raise InvalidParameter(f"unknown clustering variant {variant!r}: use {' or '.join(VARIANTS)}")
    S, A = csr.sources(), csr.indices
    if variant == "sorted":
        order = np.argsort(np.diff(csr.indptr)[A], kind="stable")
        S, A = S[order], A[order]
    return S, A


def kernel_counts(csr: CSR, backend, variant: str = "arc", local: bool = False):
    """(t, p, per-vertex 2T_v as a device array or None) by the per-arc CUDA kernel (kernel 1,
    ``variant="sorted"``: kernel 2) on the device of ``backend``: the GPU, or without one the host
    device (the same CUDA source run on the CPU)."""
    return GPUClustering(csr, backend, variant).counts(local)


class GPUClustering:
    """Device-resident inputs of the per-arc kernel, for repeated timing (benchmarks) — on the
    GPU, or without one on the host device (``emulated``)."""

    def __init__(self, csr: CSR, backend, variant: str = "arc"):
        self.dev = dev = _cuda.device(backend)
        cp = dev.xp
        S, A = arc_order(csr, variant)
        self.csr, self.cp = csr, cp
        self.emulated = bool(dev.emulated)
        self.d = [cp.asarray(csr.indptr), cp.asarray(csr.indices), cp.asarray(S), cp.asarray(A)]
        self.counters = cp.zeros(2, dtype=cp.uint64)
        self.fn = _cuda.function(dev, "clustering.cu", "cc_per_arc")

    def counts(self, local: bool = False):
        """(t, p) from one launch (the counters are copied back, so this synchronises); with
        ``local`` (t, p, per-vertex 2T_v on the device)."""
        self.counters.fill(0)
        arcs = self.csr.arcs
        tri = self.cp.zeros(self.csr.n, dtype=self.cp.uint32) if local else None
        threads = 256
        if arcs:
            self.dev.launch(self.fn, (blocks(arcs, threads),), (threads,),
                            (*self.d, np.int64(arcs), self.counters, tri if tri is not None else null(self.dev)))
        c = to_host(self.counters).view(np.int64)
        return (int(c[0]), int(c[1]), tri) if local else (int(c[0]), int(c[1]))

    def run(self) -> float:
        t, p = self.counts()
        return 3.0 * t / p if p > 0 else 0.0


#: seconds per inner-loop step of the per-arc kernel on the host (fitted to the CPU time of WS
#: V = 4 000, k = 50 on the CI machine: 0.25 s)
HOST_STEP_S = 1.5e-9


def host_work(csr: CSR) -> tuple[float, float, float]:
    """(launches, threads, inner-loop steps) of the per-arc kernel, for the host guard: every arc
    (vi, vj) with vi > vj walks A_j and, per vk < vi, A_k up to vi (about half a list)."""
    deg = csr.degrees().astype(np.float64)
    mean = deg.mean() if deg.size else 0.0
    return 1.0, float(csr.arcs), 0.5 * float((deg * deg).sum()) * (1.0 + 0.5 * mean)


def _as_csr(g) -> CSR:
    return g.csr() if isinstance(g, Graph) else g


def cpu_counts(csr: CSR, workers: int = 1) -> tuple[int, int]:
    """Paper 001's counters on the CPU: t = 2 × triangles, p = Σ_v d_v(d_v − 1)."""
    deg = csr.degrees()
    t = int(_triangles_cpu(csr, workers).sum()) // 3      # Σ_v 2T_v = 6 × triangles → t = 2 × triangles
    return t, int((deg * (deg - 1)).sum())


def check_clustering_host(csr: CSR) -> None:
    """Refuse (InvalidParameter) a per-arc kernel run on the host device estimated above the host
    limit (about 30 s), naming the limit in arcs."""
    sec = float(np.dot(HOST_COSTS[:2] + (HOST_STEP_S,), host_work(csr)))
    if sec > HOST_LIMIT_S:
        fit = int(csr.n * HOST_LIMIT_S / sec)            # at a fixed degree distribution the work ∝ |V|
        raise InvalidParameter(
            f"the clustering kernel runs its CUDA source on the CPU here (no GPU): |V| = {csr.n:,}, "
            f"{csr.arcs:,} arcs would take about {sec:.0f} s; the limit is {HOST_LIMIT_S:.0f} s (about "
            f"|V| = {fit:,} at this mean degree) — use cpu, a smaller graph or a GPU")


def use_kernel(backend, kernel: bool | None) -> bool:
    """Whether the CUDA kernel counts: ``kernel`` when given, else on a GPU backend only."""
    return bool(backend is not None and backend.is_gpu) if kernel is None else bool(kernel)


def global_clustering(g, backend=None, variant: str = "arc", kernel: bool | None = None) -> float:
    """Transitivity 3t/p; by the CUDA kernel when ``kernel`` (default: on a GPU backend; True
    without a GPU runs it on the host device), else the CPU count."""
    csr = _as_csr(g)
    if use_kernel(backend, kernel):
        t, p = kernel_counts(csr, backend, variant)
    else:
        t, p = cpu_counts(csr)
    return 3.0 * t / p if p > 0 else 0.0


def sampled_clustering(g, wedges: int = 20000, seed: int = 0) -> float:
    """Transitivity estimated from ``wedges`` random wedges (Schank & Wagner 2005): a centre v is
    drawn with probability ∝ d_v(d_v − 1), then two distinct neighbours; the fraction of closed
    wedges is an unbiased estimate of 3t/p (standard error ≤ 0.5/sqrt(wedges))."""
    csr = _as_csr(g)
    deg = csr.degrees()
    w = (deg * (deg - 1)).astype(np.float64)
    if w.sum() == 0 or wedges < 1:
        return 0.0
    rng = np.random.default_rng(seed)
    v = rng.choice(csr.n, size=int(wedges), p=w / w.sum())
    a = rng.integers(0, deg[v])
    b = rng.integers(0, deg[v] - 1)
    b = b + (b >= a)                                    # a second, distinct neighbour
    x, y = csr.indices[csr.indptr[v] + a], csr.indices[csr.indptr[v] + b]
    # closed when arc x→y exists: arc keys source·n + end are globally sorted (CSR rows in order,
    # each row's ends sorted), so one search over all of them finds it
    keys = x.astype(np.int64) * csr.n + y
    flat = csr.sources().astype(np.int64) * csr.n + csr.indices
    pos = np.minimum(np.searchsorted(flat, keys), flat.size - 1)
    closed = flat[pos] == keys
    return float(closed.mean())


def local_clustering(g, backend=None, variant: str = "arc", kernel: bool | None = None) -> np.ndarray:
    """c_v = 2T_v / (d_v(d_v − 1)) as float64 (0 for d_v < 2); ``kernel`` as in
    :func:`global_clustering`."""
    csr = _as_csr(g)
    if use_kernel(backend, kernel):
        _t, _p, tri = kernel_counts(csr, backend, variant, local=True)
        tri2 = to_host(tri).astype(np.int64)              # each triangle found twice: 2T_v
    else:
        tri2 = _triangles_cpu(csr)                          # 2T_v
    deg = csr.degrees()
    den = deg * (deg - 1)
    return np.where(den > 0, tri2 / np.maximum(den, 1), 0.0)
