"""Paper 003's case study: an unstructured-grid finite-volume solver on triangle meshes, on the CPU
and on the GPU written two ways — the paper's original mapping and its occupancy-improved one.

Paper 003 (Solano-Quinde, Bode, Wang, Somani, GPGPU-4 2011) analyses a high-order CFD solver
(correction procedure via reconstruction, details "out of scope" of the paper) only through its
structure: every triangle carries ``#SolutionPoints = faces·(k−1) + InnerPoints`` points (Eq. 1),
each with ``#Parameters`` values, and every iteration has three stages (Algorithm 1):

1. **cell-oriented** — each point gets a coefficient from the points of its own cell;
2. **edge-oriented** — each point on a face gets a coefficient from its neighbour point across the
   face (the edge's left and right points, found through a pointer array, Fig. 5);
3. **update** — each point's values are updated from both coefficients; convergence is checked.

What is simulated here (the paper does not specify the numerics; this is the simplest scheme with
exactly that structure, documented so the three stages do real work):

* **Equation** — ``#Parameters`` scalars advected by the solid-body rotation
  ``a(x, y) = ω·(−(y − ½), x − ½)`` in the unit square (ω = 2π), explicit Euler in time.
* **Points** — each face holds ``m = k − 1`` points at ``t = (j + ½)/m`` along the face
  (flux-point style, so a point has exactly one neighbour across its face: point ``j`` of the
  left cell ↔ point ``m−1−j`` of the right cell), plus ``inner`` points; Eq. 1's count.
* **Cell stage** — ``c_cell = λ·(mean of the cell's points − u_i)`` (intra-cell coupling).
* **Edge stage** — first-order upwind flux through the face segment of each point,
  ``F = g·u_upwind`` with ``g = a(x_j)·n·|e|/m`` (outward from the left cell), giving
  ``c_edge = −F·P/A`` on the left point and ``+F·P/A`` on the right point (so each cell's mean
  obeys the first-order finite-volume update exactly; ``P`` points, area ``A``).  Boundary faces
  have the inflow value 0.
* **Update** — ``u ← u + Δt·(c_cell + c_edge)``; the residual ``max |c_cell + c_edge|`` is the
  convergence measure (run to a step count, or until it falls below ``tol``).

Versions (all give the same numbers: the CUDA code is compiled with ``--fmad=false`` and the
arithmetic is written in the same order as the NumPy reference, so float64 agrees to rounding
— in practice bit for bit):

* ``cpu`` — NumPy reference (:func:`cpu_run`).
* ``original`` — Algorithm 1 with the paper's straightforward mapping (§6.1): **one cell per
  thread block, one thread per solution point** for the cell stage and the update, one edge per
  block (one thread per edge point, §6.1 "the edge-oriented stage is similar") for the edge
  stage; array-of-structures layout (a point's parameters contiguous, Fig. 6a).  On the Tesla T10
  a block is one warp and 8 blocks/SM → 8 of 32 warps = **25 % occupancy** (Eq. 8).
* ``improved`` — Algorithm 2: **several cells per block** (Eqs. 9–10), the cell and edge stages
  fused into one kernel traversing cells (a per-point neighbour pointer read sequentially,
  Fig. 7b), structure-of-arrays layout (parameter-major, Fig. 6b), then a streaming update.
  ``cells_per_block`` is chosen with :mod:`kernels.occupancy` — the paper's "doubled occupancy"
  (two warps per block: 50 % on the T10) or the most active threads per SM on the current GPU.

Mesh sizes: paper 003 gives no mesh size, only ``k − 1 = 1 … 5`` (Table 3); the generator covers
10² … 10⁶ cells and ``k − 1`` 1 … 5 (or more).

This module holds the CPU reference and the runner; the mesh and the problem set-up live in
:mod:`.unstructured_mesh`, the CUDA kernels, their occupancy and :class:`GPUSolver` in
:mod:`.unstructured_gpu` (all re-exported here).
"""
from __future__ import annotations

import numpy as np

# the mesh / problem and the GPU versions live in their own modules; their names are re-exported
from .unstructured_gpu import (CUDA_SRC, IMPROVED_KERNELS, NVRTC_OPTIONS, ORIGINAL_KERNELS,
                               T10_ASSUMED_REGS, UPDATE_BLOCK, GPUSolver, best_cells_per_block,
                               case_study_occupancy, cuda_source, get_module, paper_cells_per_block)
from .unstructured_mesh import (Problem, TriMesh, build_connectivity, generate_mesh, make_problem,
                                signed_area, solution_points)

__all__ = [
    # mesh and problem (unstructured_mesh)
    "TriMesh", "build_connectivity", "generate_mesh", "signed_area", "Problem", "solution_points",
    "make_problem",
    # GPU versions and their occupancy (unstructured_gpu)
    "CUDA_SRC", "cuda_source", "NVRTC_OPTIONS", "ORIGINAL_KERNELS", "IMPROVED_KERNELS",
    "UPDATE_BLOCK", "get_module", "T10_ASSUMED_REGS", "paper_cells_per_block",
    "best_cells_per_block", "case_study_occupancy", "GPUSolver",
    # this module: the CPU reference and the runner
    "VERSIONS", "PAPER_TABLE3", "cpu_stages", "cpu_step", "cpu_run", "cpu_step_cell_traversal",
    "run_version", "cell_means",
]

VERSIONS = ("cpu", "original", "improved")
#: Table 3 of paper 003: k−1 → (CPU/GPU1, CPU/GPU2) speed-ups on the Tesla T10
PAPER_TABLE3 = {1: (20, 27), 2: (31, 45), 3: (41, 63), 4: (37, 82), 5: (43, 88)}


# ------------------------------------------------------------------------------ CPU reference

def cpu_stages(pb: Problem, u: np.ndarray):
    """One iteration's three stages on the CPU: returns (c_cell, c_edge) as (C·P, NP) arrays."""
    C, P, NP = u.shape
    # 1. cell-oriented: mean of the cell's points, summed in point order (as the kernels do)
    s = u[:, 0, :].copy()
    for j in range(1, P):
        s = s + u[:, j, :]
    mean = s / pb.dtype.type(P)
    c_cell = (pb.lam * (mean[:, None, :] - u)).reshape(C * P, NP)
    # 2. edge-oriented: upwind flux per edge point, to the left (−) and right (+) points
    uf = u.reshape(C * P, NP)
    L, R = pb.edge_pts[:, 0], pb.edge_pts[:, 1]
    has_r = R >= 0
    uL = uf[L]
    uR = np.zeros_like(uL)
    uR[has_r] = uf[R[has_r]]
    gq = pb.g_edge[:, None]
    F = np.where(gq > 0, gq * uL, gq * uR)
    c_edge = np.zeros_like(uf)
    c_edge[L] = -F * pb.s_cell[L // P][:, None]
    c_edge[R[has_r]] = F[has_r] * pb.s_cell[R[has_r] // P][:, None]
    return c_cell, c_edge


def cpu_step(pb: Problem, u: np.ndarray) -> tuple[np.ndarray, float]:
    """Cell stage, edge stage, update: (new u (C, P, NP), residual max |rate|)."""
    c_cell, c_edge = cpu_stages(pb, u)
    rate = c_cell + c_edge                                              # 3. update
    new = u.reshape(rate.shape) + pb.dt * rate
    return new.reshape(u.shape), float(np.max(np.abs(rate)))


def cpu_run(pb: Problem, steps: int, tol: float = 0.0, u=None) -> tuple[np.ndarray, list[float]]:
    """Algorithm 1 on the CPU: ``steps`` iterations (or until the residual < ``tol``)."""
    u = pb.u0.copy() if u is None else u
    hist = []
    for _ in range(int(steps)):
        u, r = cpu_step(pb, u)
        hist.append(r)
        if r < tol:
            break
    return u, hist


def cpu_step_cell_traversal(pb: Problem, u: np.ndarray) -> tuple[np.ndarray, float]:
    """Algorithm 2 in NumPy (what ``celledge_impr`` does per thread): traverse cells, every face
    point computes its own upwind flux from the neighbour pointer (each interior edge twice, once
    from each side).  Gives exactly :func:`cpu_step`'s numbers — a CPU check of the improved
    kernel's logic (the neighbour pointers and the sign of g seen from the right cell)."""
    C, P, NP = u.shape
    s = u[:, 0, :].copy()
    for j in range(1, P):
        s = s + u[:, j, :]
    mean = s / pb.dtype.type(P)
    uf = u.reshape(C * P, NP)
    cc = (pb.lam * (mean[:, None, :] - u)).reshape(C * P, NP)
    face = (np.arange(C * P) % P) < 3 * pb.m
    nb = pb.nbr
    un = np.zeros_like(uf)
    un[nb >= 0] = uf[nb[nb >= 0]]
    g = pb.g_pt[:, None]
    F = np.where(g > 0, g * uf, g * un)
    ce = np.where(face[:, None], -F * np.repeat(pb.s_cell, P)[:, None], pb.dtype.type(0))
    rate = cc + ce
    new = uf + pb.dt * rate
    return new.reshape(u.shape), float(np.max(np.abs(rate)))


def run_version(pb: Problem, version: str, steps: int, cells_per_block=None) -> tuple[np.ndarray, list[float]]:
    """Run one version ("cpu", "original", "improved") for ``steps`` iterations from ``pb.u0``."""
    if version == "cpu":
        return cpu_run(pb, steps)
    return GPUSolver(pb, version, cells_per_block).run(steps)


def cell_means(u: np.ndarray) -> np.ndarray:
    """Per-cell mean of the first parameter (what the mesh view colours)."""
    return np.asarray(u, dtype=np.float64)[:, :, 0].mean(axis=1)
