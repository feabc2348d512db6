"""Floyd–Warshall on dense matrices: the contract every version of the family shares.

:func:`floyd_warshall` solves D(i, j) ← min(D(i, j), D(i, k) + D(k, j)) for k = 0 … n−1
(papers 002 and 004 ch. 4) on a square matrix of edge weights — directed, negative weights
allowed, ``inf`` (float) or ``NO_PATH_INT`` (int32) for "no edge" — with any registered version
(:data:`kernels.graphs.apsp.core.REGISTRY` entries of family ``"fw"``), on the GPU or the CPU.

Arithmetic (``arith``):

* ``float32`` — the paper's element type in our GUI; sums round (results of different versions
  agree to float32 rounding, not bit for bit, because they add in different orders);
* ``int32`` — exact; "no path" inside the kernels is ``FW_INT_INF`` = 2³⁰ − 1, so every sum
  of two stored values fits in int32 as long as |path length| < 2²⁸ (checked before the run);
* ``dpx`` — int32 through Hopper's fused add-min instruction ``__viaddmin_s32`` (sm_90; the CPU
  computes the same integers);
* ``auto`` — int32 when every finite weight is a non-negative integer within range, else float32
  (with negative weights float32 keeps negative-cycle detection safe: a negative cycle drives
  sums towards −inf, which float32 holds but int32 would wrap).

Predecessors (``pred=True``): ``pred[i, j]`` is the vertex before ``j`` on a shortest ``i → j``
path (−1: none, or ``i == j``), kept by every version as it relaxes (an update through k takes
``pred[k, j]``, strict improvements only); :func:`path` walks them back.

Negative cycles are detected afterwards (a negative diagonal entry) and reported by one
:class:`NegativeCycle` naming a vertex on a cycle.  A matrix that does not fit in the memory of
the device (or host) is refused before any allocation (:class:`~kernels.errors.GridTooLarge`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...errors import GridTooLarge, InvalidParameter
from .paths import backtrack
from .core import REGISTRY
from ... import backend as kernel_backend

#: "no path" inside the int32 kernels (cuda/fw_common.cuh)
FW_INT_INF = 2 ** 30 - 1
#: int32 results at or above this are "no path" (an INF plus negative path lengths stays above it)
INT_UNREACHABLE_FROM = 2 ** 29
#: admissible |path length| for int32 runs: (n − 1) · max |w| below this
INT_PATH_LIMIT = 2 ** 28
#: "no path" in int32 results handed back to the caller
NO_PATH_INT = int(np.iinfo(np.int32).max)
ARITHS = ("auto", "float32", "int32", "dpx")


class NegativeCycle(InvalidParameter):
    """The graph has a cycle of negative total weight: shortest paths are undefined."""

    def __init__(self, vertex: int, on_cycle: bool = True):
        self.vertex = int(vertex)
        where = "through" if on_cycle else "reachable from"
        super().__init__(f"the graph has a negative cycle ({where} vertex {self.vertex}): shortest paths "
                         "are undefined")


@dataclass
class FWResult:
    """Distances (n × n, host; float32 with inf, or int32 with ``NO_PATH_INT``), predecessors
    (int32, −1 none) or None, the version, the arithmetic, times and launch count, the version's
    parameters (tile, l, …; an auto-tuner's choice included)."""

    dist: np.ndarray
    pred: np.ndarray | None
    version: str
    arith: str
    seconds: float            # wall time: upload, kernels, download
    kernel_seconds: float     # device (or CPU) compute time without the copies
    launches: int = 0
    params: dict = field(default_factory=dict)
    backend: str = "cpu"

    def path(self, i: int, j: int) -> list[int]:
        return path(self.pred, i, j)


def check_matrix(matrix) -> np.ndarray:
    """The matrix as a square 2-D numeric array, or InvalidParameter naming the problem."""
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise InvalidParameter(f"Floyd–Warshall needs a square matrix (got shape {m.shape})")
    if m.shape[0] == 0:
        raise InvalidParameter("the matrix is empty (0 vertices)")
    if m.dtype.kind not in "iufb":
        raise InvalidParameter(f"the matrix must hold numbers (got {m.dtype})")
    if m.dtype.kind == "f" and np.isnan(m).any():
        raise InvalidParameter("the matrix holds NaN: use inf for 'no edge'")
    if m.dtype.kind == "f" and np.isneginf(m).any():
        raise InvalidParameter("the matrix holds −inf: weights must be finite (inf = no edge)")
    return m


def choose_arith(m: np.ndarray, arith: str = "auto") -> str:
    """``auto`` → int32 when every finite weight is an integer and the path bound fits, else
    float32; an explicit int32 / dpx is checked (InvalidParameter when it cannot be exact)."""
    if arith not in ARITHS:
        raise InvalidParameter(f"unknown arithmetic {arith!r}: use one of {', '.join(ARITHS)}")
    if m.dtype.kind in "iub" and m.dtype != np.int32 and m.size and np.abs(m.astype(np.int64)).max() >= NO_PATH_INT:
        raise InvalidParameter("integer weights must fit in int32")
    fin = m[np.isfinite(m)] if m.dtype.kind == "f" else m[m != NO_PATH_INT].astype(np.int64)
    integral = m.dtype.kind in "iub" or bool(np.all(fin == np.round(fin)))
    wmax = float(np.abs(fin).max()) if fin.size else 0.0
    fits = integral and wmax * max(1, m.shape[0] - 1) < INT_PATH_LIMIT
    if arith == "auto":
        return "int32" if fits and (fin.size == 0 or fin.min() >= 0) else "float32"
    if arith in ("int32", "dpx") and not fits:
        why = "weights are not all integers" if not integral else (
            f"(n − 1) · max |w| = {wmax * (m.shape[0] - 1):.3g} reaches the int32 path limit 2^28")
        raise InvalidParameter(f"{arith} arithmetic would not be exact here: {why}; use float32")
    return arith


def working_matrix(m: np.ndarray, arith: str, pad_to: int = 1) -> np.ndarray:
    """The matrix in the kernels' form: float32 (inf) or int32 (FW_INT_INF), diagonal ≤ 0 (the
    empty path), padded with "no path" to a multiple of ``pad_to``."""
    n = m.shape[0]
    npad = -(-n // pad_to) * pad_to
    if arith == "float32":
        w = np.full((npad, npad), np.inf, dtype=np.float32)
        w[:n, :n] = m
    else:
        w = np.full((npad, npad), FW_INT_INF, dtype=np.int32)
        if m.dtype.kind == "f":
            src = np.where(np.isfinite(m), m.astype(np.float64), FW_INT_INF).astype(np.int64)
        else:
            src = np.where(m == NO_PATH_INT, FW_INT_INF, m.astype(np.int64))
        w[:n, :n] = src
    idx = np.arange(n)
    w[idx, idx] = np.minimum(w[idx, idx], 0)
    return w


def initial_pred(w: np.ndarray, n: int) -> np.ndarray:
    """pred[i, j] = i where an edge i → j exists (i ≠ j), −1 elsewhere (padding included)."""
    npad = w.shape[0]
    inf = np.inf if w.dtype.kind == "f" else FW_INT_INF
    p = np.full((npad, npad), -1, dtype=np.int32)
    edge = w[:n, :n] != inf
    p[:n, :n] = np.where(edge, np.arange(n, dtype=np.int32)[:, None], -1)
    np.fill_diagonal(p[:n, :n], -1)
    return p


def finish(w: np.ndarray, n: int, arith: str) -> np.ndarray:
    """Kernel output → distances: float32 as is; int32 with NO_PATH_INT for "no path"."""
    d = w[:n, :n]
    if arith == "float32":
        return np.ascontiguousarray(d)
    return np.where(d >= INT_UNREACHABLE_FROM, NO_PATH_INT, d).astype(np.int32)


def check_negative_cycle(dist: np.ndarray, matrix=None, pred: np.ndarray | None = None) -> None:
    """NegativeCycle when a diagonal entry is negative.  The vertex named lies on a negative cycle
    of ``matrix``: the cycle the predecessors of a negative-diagonal vertex run into (checked by its
    weight), else the vertex with the most negative diagonal.  For int32 results a distance below
    −(n − 1)·max|w| (impossible without a negative cycle) counts too."""
    diag = np.diagonal(dist)
    neg = np.flatnonzero(diag < 0)
    if neg.size:
        v = int(neg[np.argmin(diag[neg])])
        cyc = pred_cycle(pred, v) if pred is not None else []
        if cyc and matrix is not None:
            m = np.asarray(matrix, dtype=np.float64)
            if sum(m[x, y] for x, y in zip(cyc, cyc[1:] + cyc[:1])) < 0:
                v = min(cyc)
        raise NegativeCycle(v)
    if dist.dtype == np.int32 and matrix is not None:
        m = np.asarray(matrix)
        fin = m[np.isfinite(m)] if m.dtype.kind == "f" else m[m != NO_PATH_INT]
        bound = -float(np.abs(fin).max() if fin.size else 0) * max(1, m.shape[0] - 1)
        rows = np.flatnonzero((dist < bound).any(axis=1))
        if rows.size:
            raise NegativeCycle(int(rows[0]), on_cycle=False)


def pred_cycle(pred: np.ndarray, v: int) -> list[int]:
    """The loop that v's predecessor chain (source v) runs into, in path order; [] when none."""
    seen, chain, u = {}, [], v
    for _ in range(pred.shape[0] + 1):
        if u in seen:
            return chain[seen[u]:][::-1]
        seen[u] = len(chain)
        chain.append(u)
        u = int(pred[v, u])
        if u < 0:
            return []
    return []


def path(pred: np.ndarray | None, i: int, j: int) -> list[int]:
    """Vertices of a shortest i → j path from the predecessor matrix ([] when j is unreachable):
    row i walked back by :func:`kernels.graphs.apsp.paths.backtrack`."""
    if pred is None:
        raise InvalidParameter("no predecessor matrix: run Floyd–Warshall with pred=True")
    n = pred.shape[0]
    for v, what in ((i, "source"), (j, "target")):
        if not 0 <= int(v) < n:
            raise InvalidParameter(f"{what} vertex {v} is not in 0 … {n - 1}")
    return backtrack(pred[int(i)], int(i), int(j))


def path_length(matrix, p: list[int]) -> float:
    """Sum of the edge weights along ``p`` (float64)."""
    m = np.asarray(matrix)
    return float(sum(float(m[a, b]) for a, b in zip(p[:-1], p[1:])))


def bytes_needed(npad: int, pred: bool, extra: int = 0) -> int:
    """Device bytes of the padded matrix (and predecessors) plus a version's scratch."""
    return npad * npad * 4 * (2 if pred else 1) + int(extra)


def check_fits(need_device: int, need_host: int, backend) -> None:
    """GridTooLarge before any allocation when the device (GPU run) or the host cannot hold it."""
    host = kernel_backend.host_available_memory()
    if need_host > 0.8 * host:
        raise GridTooLarge(f"Floyd–Warshall needs {need_host / 2**30:.1f} GiB of host memory; "
                           f"{host / 2**30:.1f} GiB are available")
    if backend is not None and backend.is_gpu:
        free = backend.free_memory()
        if need_device > 0.9 * free:
            raise GridTooLarge(f"Floyd–Warshall needs {need_device / 2**30:.1f} GiB of GPU memory; "
                               f"{free / 2**30:.1f} GiB free")


def fw_versions() -> dict:
    """name → class of every registered FW version."""
    return {k: c for k, c in REGISTRY.items() if getattr(c, "family", "") == "fw"}


def floyd_warshall(matrix, version: str = "fw-fast", backend=None, arith: str = "auto", pred: bool | None = None,
                   progress=None, cancel=None, check_cycles: bool = True, **options) -> FWResult:
    """All-pairs shortest paths of the dense weight ``matrix`` with FW version ``version``.

    ``backend``: the GPU backend runs the version's GPU kernels, the CPU backend (or None) its CPU
    implementation (versions with none are refused).  ``pred``: keep predecessors (None: the
    version's default — yes, except fw-blocked at tile 64).  ``options`` go to the version (tile,
    l, t_r, …).  Negative cycles raise :class:`NegativeCycle` (``check_cycles=False``: return the
    raw matrix, whose negative diagonal marks them)."""
    fam = fw_versions()
    if version not in fam:
        raise InvalidParameter(f"unknown Floyd–Warshall version {version!r}: use one of {', '.join(fam)}")
    method = fam[version](pred=pred, arith=arith, **options)
    return solve(method, matrix, backend, arith, pred, progress, cancel, check_cycles)


def solve(method, matrix, backend=None, arith: str = "auto", pred: bool | None = None, progress=None, cancel=None,
          check_cycles: bool = True) -> FWResult:
    """Run the FW version instance ``method`` (see :func:`floyd_warshall`; ``pred`` None: the
    instance's own choice)."""
    cls = type(method)
    pred = method.pred if pred is None else bool(pred)
    m = check_matrix(matrix)
    arith = choose_arith(m, arith)
    where = method.placement(backend)
    if where is None:
        raise InvalidParameter(f"{cls.name} cannot run on this backend: use one of "
                               + ", ".join(k for k, c in fw_versions().items() if c.available(backend)))
    on_gpu = where == "gpu"
    n = m.shape[0]
    method.check(n, arith, on_gpu or where == "host")
    if where == "host":
        method.check_host(n)
    pad = method.pad(n, where != "cpu")
    npad = -(-n // pad) * pad
    check_fits(bytes_needed(npad, pred, cls.scratch_bytes(npad, pred)) if on_gpu else 0,
               bytes_needed(npad, pred) * 2 + m.nbytes, backend if on_gpu else None)
    t0 = time.perf_counter()
    w = working_matrix(m, arith, pad)
    p = initial_pred(w, n) if pred else None
    if on_gpu:
        xp = backend.xp
        dw = xp.asarray(w)
        dp = None if p is None else xp.asarray(p)
        backend.synchronize()
        tk = time.perf_counter()
        launches, params = method.solve_gpu(backend, dw, dp, npad, arith, cancel)
        backend.synchronize()
        kernel_s = time.perf_counter() - tk
        w = backend.to_numpy(dw)
        p = None if dp is None else backend.to_numpy(dp)
    elif where == "host":                 # the CUDA kernels on the host device, in place on NumPy arrays
        tk = time.perf_counter()
        launches, params = method.solve_gpu(None, w, p, npad, arith, cancel)
        kernel_s = time.perf_counter() - tk
        params = dict(params, emulated=True)
    else:
        tk = time.perf_counter()
        launches, params = method.solve_cpu(w, p, npad, arith, cancel)
        kernel_s = time.perf_counter() - tk
    dist = finish(w, n, arith)
    pr = None if p is None else np.ascontiguousarray(p[:n, :n])
    sec = time.perf_counter() - t0
    if progress is not None:
        progress(1.0)
    if check_cycles:
        check_negative_cycle(dist, m, pr)
    return FWResult(dist, pr, cls.name, arith, sec, kernel_s, launches, params, where)
