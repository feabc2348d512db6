"""CPU versions of the Floyd–Warshall family: in place on the padded working matrix of
:mod:`.fw_core` (float32 with inf, or int32 with ``FW_INT_INF``), optional predecessors.

* :func:`fw_v1` — paper 002 §III-A, Listing 3: the sequential triple loop, compiled C on one
  CPU thread (kernels.hostcc; one library per machine, cached);
* :func:`fw_plain` — paper 004 Fig. 4.1 in NumPy, one vectorised k step at a time;
* :func:`fw_blocked` — the iterative blocked FW (paper 004 Figs. 4.2–4.3, Venkataraman et al.)
  with min-plus products over t × t tiles: pivot tile closed, both panels updated, then every
  other tile, row block by row block (the rows in cache);
* :func:`fw_recursive` — paper 004 Fig. 4.4 (Buluç et al.'s R-Kleene): quadrant recursion with
  min-plus products, plain FW below t_R.

int32 runs use the kernels' integer arithmetic (a + b wraps like the GPU's 32-bit add; the
sentinel keeps every sum in range), so ``dpx`` — Hopper's ``__viaddmin_s32(a, b, c) = min(a + b,
c)`` — computes the same integers here.  Predecessors follow strict improvements only, as on the
GPU.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ...hostcc import compile_library

V1_SOURCE = r"""
// Paper 002, Listing 3: the sequential Floyd-Warshall, one CPU thread.
template <typename T>
static void fw(T* d, int* p, int n)
{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) {
            const T dik = d[(long long)i * n + k];
            T* di = d + (long long)i * n;
            const T* dk = d + (long long)k * n;
            for (int j = 0; j < n; j++) {
                if (dik + dk[j] < di[j]) {
                    di[j] = dik + dk[j];
                    if (p) p[(long long)i * n + j] = p[(long long)k * n + j];
                }
            }
        }
}
extern "C" void fw_v1_float(float* d, int* p, int n) { fw<float>(d, p, n); }
extern "C" void fw_v1_int(int* d, int* p, int n) { fw<int>(d, p, n); }
"""

_lib = None


def v1_library():
    """The compiled V1 loop (BackendUnavailable without a C++ compiler)."""
    global _lib
    if _lib is None:
        lib = compile_library(V1_SOURCE, what="the sequential CPU Floyd–Warshall (paper 002 V1)",
                              kind="graphs-c", prefix="fw_v1")
        for name, ct in (("fw_v1_float", ctypes.c_float), ("fw_v1_int", ctypes.c_int32)):
            f = getattr(lib, name)
            f.argtypes = (ctypes.POINTER(ct), ctypes.POINTER(ctypes.c_int32), ctypes.c_int)
            f.restype = None
        _lib = lib
    return _lib


def fw_v1(d: np.ndarray, p: np.ndarray | None, cancel=None) -> int:
    """Paper 002 V1 in place on ``d`` (C-contiguous float32 / int32)."""
    lib = v1_library()
    assert d.flags.c_contiguous and (p is None or p.flags.c_contiguous)
    if d.dtype == np.float32:
        f, ct = lib.fw_v1_float, ctypes.c_float
    else:
        f, ct = lib.fw_v1_int, ctypes.c_int32
    pp = None if p is None else p.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
    f(d.ctypes.data_as(ctypes.POINTER(ct)), pp, d.shape[0])
    return 0


def relax(d: np.ndarray, p: np.ndarray | None, col: np.ndarray, row: np.ndarray, prow: np.ndarray | None) -> None:
    """d ← min(d, col[:, None] + row[None, :]) in place; p ← prow where strictly smaller."""
    cand = col[:, None] + row[None, :]
    if p is None:
        np.minimum(d, cand, out=d)
        return
    better = cand < d
    np.copyto(d, cand, where=better)
    np.copyto(p, np.broadcast_to(prow[None, :], p.shape), where=better)


def minplus(c, pc, a, b, pb) -> None:
    """c ← min(c, a ⊗ b) in place (min-plus product, k in order); pc ← pb[k] on improvement.
    ``a`` and ``b`` are read as they are at the call (copies where they alias ``c``)."""
    for k in range(a.shape[1]):
        relax(c, pc, a[:, k], b[k], None if pb is None else pb[k])


def fw_plain(d: np.ndarray, p: np.ndarray | None, cancel=None) -> int:
    """Paper 004 Fig. 4.1, one vectorised k step at a time (row k and column k do not change
    in step k, so the in-place update is exact)."""
    for k in range(d.shape[0]):
        if cancel is not None and k % 64 == 0 and cancel():
            raise InterruptedError("cancelled")
        relax(d, p, d[:, k].copy(), d[k].copy(), None if p is None else p[k].copy())
    return 0


def close_tile(d, p) -> None:
    """Plain FW on one tile (a view), in place."""
    for k in range(d.shape[0]):
        relax(d, p, d[:, k].copy(), d[k].copy(), None if p is None else p[k].copy())


def fw_blocked(d: np.ndarray, p: np.ndarray | None, tile: int = 64, cancel=None, rows: int | None = None) -> int:
    """Iterative blocked FW with t × t tiles (n a multiple of ``tile``); ``rows``: the row block
    of the non-pivot update (default: about 2 MiB of the matrix)."""
    n = d.shape[0]
    rows = rows or max(tile, ((2 << 20) // max(1, 4 * n)) // tile * tile)
    for kb in range(0, n, tile):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        s = slice(kb, kb + tile)
        P = d[s, s]
        pP = None if p is None else p[s, s]
        close_tile(P, pP)
        # panels: row band R ← P ⊗ R, column band C ← C ⊗ P (P closed: no k order needed)
        R, C = d[s], d[:, s]
        pR, pC = (None, None) if p is None else (p[s], p[:, s])
        Rold, pRold = R.copy(), None if p is None else pR.copy()
        minplus(R, pR, P.copy(), Rold, pRold)
        minplus(C, pC, C.copy(), P.copy(), None if p is None else pP.copy())
        # every other element: D ← min(D, C ⊗ R) (the bands themselves do not change: P closed)
        Cb, Rb = C.copy(), R.copy()
        pRb = None if p is None else pR.copy()
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            minplus(d[r0:r1], None if p is None else p[r0:r1], Cb[r0:r1], Rb, pRb)
    return 0


def fw_recursive(d: np.ndarray, p: np.ndarray | None, t_r: int = 32, cancel=None) -> int:
    """Paper 004 Fig. 4.4 on quadrants (splits at multiples of t_R; n a multiple of t_R)."""

    def mp(c, pc, a, b, pb):
        minplus(c, pc, a.copy(), b.copy(), None if pb is None else pb.copy())

    def rec(o: int, s: int):
        if cancel is not None and cancel():
            raise InterruptedError("cancelled")
        if s <= t_r:
            close_tile(d[o:o + s, o:o + s], None if p is None else p[o:o + s, o:o + s])
            return
        a = t_r * -(-(s // t_r) // 2)
        o2, e = o + a, o + s
        blk = lambda r0, r1, c0, c1: (d[r0:r1, c0:c1], None if p is None else p[r0:r1, c0:c1])  # noqa: E731
        M11, M12, M21, M22 = blk(o, o2, o, o2), blk(o, o2, o2, e), blk(o2, e, o, o2), blk(o2, e, o2, e)
        rec(o, a)
        mp(*M12, M11[0], M12[0], M12[1])
        mp(*M21, M21[0], M11[0], M11[1])
        mp(*M22, M21[0], M12[0], M12[1])
        rec(o2, s - a)
        mp(*M21, M22[0], M21[0], M21[1])
        mp(*M12, M12[0], M22[0], M22[1])
        mp(*M11, M12[0], M21[0], M21[1])

    rec(0, d.shape[0])
    return 0
