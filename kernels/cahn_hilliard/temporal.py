"""Temporal blocking of kernel E (issue #38): k RK2 steps fused into one pass over the field.

One launch (``cuda/ch_temporal.cuh``) holds each output tile with a halo of 4·k cells (an RK2 step of
the Cahn–Hilliard stencil reaches 4 cells: μ, φ*, μ*, φⁿ⁺¹ one each) and advances it k steps before one
write — the scheme of AN5D (Matsumura et al., CGO 2020) and EBISU (Zhang et al., ICS 2023): in 2D the warp march ``ch_fused_wmarch2d_tb`` (k register
row pipelines), in 3D the register z-march ``ch_fused_zreg3d_tb`` (k plane pipelines), and a shared-memory
tile ``ch_fused_tb`` (2D ``fused_impl="generic"``, 3D ``fused_impl3d`` other than zreg).  Every cell does the same
arithmetic in the same order as a single step of kernel E (the same ``ch_stencil.cuh`` functions),
so k fused steps equal k single steps **bit for bit** on the same device and build
(tests/test_ch_temporal.py on the host device, tests/test_ch_temporal_gpu.py on the GPU).

``steps_per_pass`` (a :class:`~.params.CHParams` field): ``"auto"`` or 1–4.  :func:`requested`
resolves it (:func:`auto_steps_per_pass`: :data:`AUTO_K_2D` / :data:`AUTO_K_3D` for kernel E on large 2D / 3D
fields, both 1 until measured faster on the GPU — single steps of E are partly compute-bound, 2D 0.066 ms and
3D 0.154 ms per step against a 0.046 ms memory floor, and k-step passes save memory traffic but add halo work)
and lowers it where the grid or the shared memory cannot hold the halo (:func:`fits`).  A step count
not divisible by k runs its remainder as single steps (:func:`plan`).

The cpu-threads variant (``host/ch_omp.cpp``: ``ch_rk2_tb``) blocks the same way on the CPU: each OpenMP
thread advances bands of rows (3D: planes) with 4k halo rows through k steps in its own buffers, bit for
bit k single steps (and so the NumPy reference).
"""
from __future__ import annotations

import numpy as np

#: (threads, outputs OX, OY, OZ) per block of ch_fused_tb per dimension
TB_SHAPE = {2: (256, 64, 64, 1), 3: (256, 8, 8, 8)}
#: (warps per block, φ rows in flight, rows per warp (0: one wave), min. blocks per SM) of the 2D warp-march
#: k-step kernel ch_fused_wmarch2d_tb per dtype (no register cap: k windows of 14 rows of 4 values)
WMARCH_TB_SHAPE = {"float": (1, 3, 0, 1), "double": (1, 2, 0, 1)}
#: (TX, TY, chunk (0: one wave), min. blocks per SM, φ planes in flight, cells per thread VW) of the 3D register
#: z-march k-step kernel ch_fused_zreg3d_tb per dtype (a (TX+8k)×(TY+8k) frame; dynamic shared memory
#: 2·4k planes, :func:`zreg_smem_bytes`)
ZREG_TB_SHAPE = {"float": (32, 8, 0, 1, 2, 4), "double": (32, 8, 0, 1, 1, 4)}
#: auto: kernel E's fused steps per pass on 2D fields of at least AUTO_MIN_CELLS_2D cells and on 3D fields of
#: at least AUTO_MIN_CELLS_3D (every other case: 1).  Both 1 until the H100 run of ``benchmarks/ch.py
#: --temporal`` shows a k-step pass faster than single steps (its rows "E temporal, k steps per pass" against
#: "E, 1 step per pass"): set the winning k here; the CLI / GUI help follows (:func:`auto_rule`).
AUTO_MIN_CELLS_2D = 1024 * 1024
AUTO_K_2D = 1
AUTO_MIN_CELLS_3D = 128 ** 3
AUTO_K_3D = 1
#: the most dynamic shared memory per block a GPU gives (H100: 227 KiB) when the device does not say
SMEM_LIMIT = 227 * 1024
#: the ch_fused_tb tile buffers (φ, μ, φ*)
BUFFERS = 3


def halo(k: int) -> int:
    """Halo width of a k-step pass: the stencil radius of one RK2 step (4) times k."""
    return 4 * int(k)


def smem_bytes(dim: int, k: int, itemsize: int, shape=None) -> int:
    """Dynamic shared memory of one ch_fused_tb block (three tiles of (O + 8k) cells per axis)."""
    _, ox, oy, oz = shape or TB_SHAPE[dim]
    h = 2 * halo(k)
    cells = (ox + h) * (oy + h) * ((oz + h) if dim == 3 else 1)
    return BUFFERS * cells * int(itemsize)


def zreg_smem_bytes(k: int, itemsize: int, shape) -> int:
    """Dynamic shared memory of one ch_fused_zreg3d_tb block: two sets of 4k planes of
    ((TY+8k+2)·(TX+8k) + 8) values."""
    tx, ty = shape[0], shape[1]
    h = 2 * halo(k)
    return 2 * 4 * int(k) * ((ty + h + 2) * (tx + h) + 8) * int(itemsize)


def zreg_threads(k: int, shape) -> int:
    """Threads per block of ch_fused_zreg3d_tb: one per group of VW frame cells, rounded up to warps."""
    tx, ty, vw = shape[0], shape[1], shape[5]
    h = 2 * halo(k)
    return -(-((tx + h) // vw * (ty + h)) // 32) * 32


def auto_rule() -> str:
    """What ``steps_per_pass="auto"`` picks, in words (CLI and GUI help)."""
    parts = [f"{k} for kernel E on {d}D fields of at least {n}{'²' if d == 2 else '³'} cells"
             for d, k, n in ((2, AUTO_K_2D, round(AUTO_MIN_CELLS_2D ** 0.5)), (3, AUTO_K_3D, round(AUTO_MIN_CELLS_3D ** (1 / 3))))
             if k > 1]
    return ("auto = " + ", ".join(parts) + ", else 1") if parts else \
        "auto = 1 (single steps) until a GPU benchmark shows k-step passes faster"


def auto_steps_per_pass(params) -> int:
    """k for ``steps_per_pass="auto"``: kernel E on a 2D field of at least :data:`AUTO_MIN_CELLS_2D` cells gets
    :data:`AUTO_K_2D`, on a 3D field of at least :data:`AUTO_MIN_CELLS_3D` :data:`AUTO_K_3D`; everything else 1
    (small fields, and cpu-threads, whose k-step bands measured no faster than single steps on a shared 2-core
    machine: 2D 1024² 87–90 vs 70 ms per step)."""
    if params.variant != "E":
        return 1
    cells = int(np.prod(params.shape))
    if params.dim == 2 and cells >= AUTO_MIN_CELLS_2D:
        return AUTO_K_2D
    if params.dim == 3 and cells >= AUTO_MIN_CELLS_3D:
        return AUTO_K_3D
    return 1


def requested(params) -> int:
    """The k asked for (``"auto"`` resolved), before :func:`fits` lowers it."""
    v = str(params.steps_per_pass)
    return auto_steps_per_pass(params) if v == "auto" else int(v)


def fits(params, k: int, itemsize: int, smem_limit: int | None = SMEM_LIMIT, smem=None) -> int:
    """The largest k' ≤ ``k`` the grid and the device hold: periodic and mirror ghosts need the halo
    4k' ≤ every extent (the mapped frame must lie in [−n, 2n)); the block's shared memory (``smem(k)``
    bytes, default the tile's :func:`smem_bytes`) must fit ``smem_limit`` (None: no limit, the host)."""
    if smem is None:
        def smem(j):
            return smem_bytes(params.dim, j, itemsize)
    k = max(1, int(k))
    while k > 1:
        if params.boundary != "fixed" and halo(k) > min(params.shape):
            k -= 1
            continue
        if smem_limit is not None and smem(k) > smem_limit:
            k -= 1
            continue
        break
    return k


def plan(n: int, k: int) -> list[int]:
    """Steps per launch for ``n`` steps with k-step passes: ⌊n/k⌋ passes of k, then the rest as
    single steps (k = 1: n single steps)."""
    n, k = int(n), max(1, int(k))
    if k == 1:
        return [1] * n
    return [k] * (n // k) + [1] * (n % k)


def strip_width(k: int) -> int:
    """Output columns of one warp of ch_fused_wmarch2d_tb: 128 less the 4k-column halo each side."""
    return 128 - 2 * halo(k)


def expression(T: str, bc: int, dim: int, k: int, shape=None) -> tuple[str, int]:
    """(template instantiation, threads per block) of ch_fused_tb."""
    nt, ox, oy, oz = shape or TB_SHAPE[dim]
    return f"ch_fused_tb<{T}, {bc}, {dim}, {k}, {nt}, {ox}, {oy}, {oz}>", nt


def grid(dim: int, nx: int, ny: int, nz: int, shape=None) -> tuple[int, int, int]:
    """Blocks of a ch_fused_tb launch over an nx × ny (× nz) field."""
    _, ox, oy, oz = shape or TB_SHAPE[dim]
    return (-(-nx // ox), -(-ny // oy), -(-nz // oz) if dim == 3 else 1)
