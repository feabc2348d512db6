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
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import launches
from ..errors import BackendUnavailable, InvalidParameter
from .calculator import occupancy

VERSIONS = ("cpu", "original", "improved")
#: Table 3 of paper 003: k−1 → (CPU/GPU1, CPU/GPU2) speed-ups on the Tesla T10
PAPER_TABLE3 = {1: (20, 27), 2: (31, 45), 3: (41, 63), 4: (37, 82), 5: (43, 88)}
#: registers per thread assumed for the T10 (CC 1.3) analysis — paper 003 Eq. 7 only says the
#: ~90 words per thread available are "enough", i.e. registers do not limit; nvcc for sm_13
#: is not available any more, so this is an assumption (any value ≤ 32 gives the same result)
T10_ASSUMED_REGS = 16


# ------------------------------------------------------------------------------------------ mesh

@dataclass
class TriMesh:
    """A triangle mesh of the unit square with its face/edge connectivity.

    ``cells`` are counter-clockwise; face ``f`` of cell ``c`` runs from ``cells[c, f]`` to
    ``cells[c, (f+1) % 3]``.  Each edge is stored once, oriented as the face of its *left* cell
    (the first cell that has it); ``edge_cells[:, 1] == -1`` marks a boundary edge."""

    vertices: np.ndarray       # (V, 2) float64
    cells: np.ndarray          # (C, 3) int32, CCW
    edges: np.ndarray          # (E, 2) int32 vertex ids, in the left cell's direction
    edge_cells: np.ndarray     # (E, 2) int32: left cell, right cell (-1 on the boundary)
    edge_faces: np.ndarray     # (E, 2) int32: local face index in left / right cell (-1)
    cell_edges: np.ndarray     # (C, 3) int32: edge id of each face
    area: np.ndarray           # (C,) float64
    kind: str = "perturbed"

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    @property
    def n_boundary_edges(self) -> int:
        return int((self.edge_cells[:, 1] < 0).sum())

    @property
    def centroids(self) -> np.ndarray:
        return self.vertices[self.cells].mean(axis=1)

    def describe(self) -> str:
        return (f"{self.n_cells} triangles, {len(self.vertices)} vertices, {self.n_edges} edges "
                f"({self.n_boundary_edges} on the boundary), {self.kind}")


def _signed_area(v: np.ndarray, cells: np.ndarray) -> np.ndarray:
    a, b, c = v[cells[:, 0]], v[cells[:, 1]], v[cells[:, 2]]
    return 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))


def build_connectivity(vertices: np.ndarray, cells: np.ndarray, kind: str = "custom") -> TriMesh:
    """Orient the cells counter-clockwise and derive edges, left/right cells and boundary edges."""
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    cells = np.array(cells, dtype=np.int64)
    if cells.ndim != 2 or cells.shape[1] != 3 or len(cells) == 0:
        raise InvalidParameter("cells must be a non-empty (C, 3) array of vertex ids")
    area = _signed_area(vertices, cells)
    flip = area < 0
    cells[flip] = cells[flip][:, ::-1]
    area = np.abs(area)
    if np.any(area <= 0):
        raise InvalidParameter(f"{int((area <= 0).sum())} degenerate (zero-area) triangles")
    nv = len(vertices)
    fa = cells.ravel()                                  # face f of cell c at 3c + f
    fb = np.roll(cells, -1, axis=1).ravel()
    key = np.minimum(fa, fb) * nv + np.maximum(fa, fb)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    start = np.r_[True, ks[1:] != ks[:-1]]
    eid_sorted = np.cumsum(start) - 1
    counts = np.bincount(eid_sorted)
    if counts.max() > 2:
        raise InvalidParameter("non-manifold mesh: an edge is shared by more than two triangles")
    ne = int(eid_sorted[-1]) + 1
    face_edge = np.empty(len(key), dtype=np.int64)
    face_edge[order] = eid_sorted
    first = order[start]                               # face ids of the left sides
    second_pos = np.nonzero(~start)[0]
    edge_cells = np.full((ne, 2), -1, dtype=np.int32)
    edge_faces = np.full((ne, 2), -1, dtype=np.int32)
    edge_cells[:, 0] = first // 3
    edge_faces[:, 0] = first % 3
    sec_face = order[second_pos]
    sec_edge = eid_sorted[second_pos]
    edge_cells[sec_edge, 1] = sec_face // 3
    edge_faces[sec_edge, 1] = sec_face % 3
    edges = np.stack([fa[first], fb[first]], axis=1).astype(np.int32)
    return TriMesh(vertices, cells.astype(np.int32), edges, edge_cells, edge_faces,
                   face_edge.reshape(-1, 3).astype(np.int32), area, kind)


def generate_mesh(n_cells: int = 2000, kind: str = "perturbed", jitter: float = 0.25, seed=None,
                  shuffle: bool = True) -> TriMesh:
    """A triangle mesh of the unit square with about ``n_cells`` triangles.

    ``kind="perturbed"``: an n×n grid of squares, each cut along a random diagonal, interior
    vertices moved by up to ``jitter``·h (valences vary, as in Fig. 1); ``kind="delaunay"``: the
    Delaunay triangulation (scipy.spatial) of jittered grid points.  ``shuffle`` numbers the cells
    in random order, as a mesh generator's output is, so that neighbours are far apart in memory.
    """
    if kind not in ("perturbed", "delaunay"):
        raise InvalidParameter(f"unknown mesh kind {kind!r}: use perturbed or delaunay")
    if not 2 <= int(n_cells) <= 20_000_000:
        raise InvalidParameter(f"mesh size must be 2 … 20,000,000 triangles, got {n_cells}")
    if not 0 <= jitter < 0.5:
        raise InvalidParameter(f"jitter must be in [0, 0.5), got {jitter}")
    rng = np.random.default_rng(seed)
    n = max(1, int(round(math.sqrt(int(n_cells) / 2))))
    h = 1.0 / n
    g = np.linspace(0.0, 1.0, n + 1)
    X, Y = np.meshgrid(g, g, indexing="xy")
    v = np.stack([X.ravel(), Y.ravel()], axis=1)
    interior = (v[:, 0] > 0) & (v[:, 0] < 1) & (v[:, 1] > 0) & (v[:, 1] < 1)
    v[interior] += rng.uniform(-jitter * h, jitter * h, size=(int(interior.sum()), 2))
    if kind == "perturbed":
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="xy")
        i, j = i.ravel(), j.ravel()
        a = j * (n + 1) + i                    # lower-left
        b, c, d = a + 1, a + n + 2, a + n + 1  # lower-right, upper-right, upper-left
        diag = rng.random(len(a)) < 0.5
        t1 = np.where(diag[:, None], np.stack([a, b, c], 1), np.stack([a, b, d], 1))
        t2 = np.where(diag[:, None], np.stack([a, c, d], 1), np.stack([b, c, d], 1))
        cells = np.concatenate([t1, t2])
    else:
        from scipy.spatial import Delaunay
        cells = Delaunay(v).simplices
        ar = np.abs(_signed_area(v, cells))
        cells = cells[ar > 1e-14 * h * h]
    if shuffle:
        cells = cells[rng.permutation(len(cells))]
    return build_connectivity(v, cells, kind)


# ------------------------------------------------------------------------------------- problem

@dataclass
class Problem:
    """A mesh with solution points and everything the three stages read (host arrays).

    Point ``i`` of cell ``c`` has the global index ``c·P + i``; face points come first
    (``f·m + j``), then the inner points."""

    mesh: TriMesh
    m: int                      # points per face, k − 1
    inner: int                  # inner points per cell
    n_params: int               # #Parameters
    dtype: np.dtype
    P: int                      # solution points per cell (Eq. 1)
    u0: np.ndarray              # (C, P, NP) initial values
    g_edge: np.ndarray          # (E·m,) outward (from the left cell) coefficient g of each edge point
    edge_pts: np.ndarray        # (E·m, 2) int32 global point ids: left, right (-1 on the boundary)
    g_pt: np.ndarray            # (C·P,) the same g seen from each point's own cell (0 for inner points)
    nbr: np.ndarray             # (C·P,) int32 neighbour point across the face (-1: boundary / inner)
    s_cell: np.ndarray          # (C,) P / area
    lam: object                 # intra-cell coupling λ (dtype scalar)
    dt: object                  # time step (dtype scalar)
    info: dict = field(default_factory=dict)

    @property
    def n_cells(self) -> int:
        return self.mesh.n_cells

    @property
    def n_points(self) -> int:
        return self.mesh.n_cells * self.P

    def describe(self) -> str:
        return (f"{self.mesh.n_cells} cells × {self.P} solution points (k−1 = {self.m}, {self.inner} inner) "
                f"× {self.n_params} parameters, {np.dtype(self.dtype).name}")


def solution_points(m: int, inner: int) -> int:
    """Paper 003 Eq. 1 for triangles: 3·(k−1) + inner."""
    return 3 * m + inner


def make_problem(mesh: TriMesh, k_minus_1: int = 2, inner: int = 1, n_params: int = 4,
                 dtype=np.float64, cfl: float = 0.5, omega: float = 2 * math.pi) -> Problem:
    """Solution points, geometry coefficients, initial condition and time step for ``mesh``."""
    m, inner, npar = int(k_minus_1), int(inner), int(n_params)
    if not 1 <= m <= 10:
        raise InvalidParameter(f"k−1 (points per face) must be 1 … 10, got {m}")
    if not 0 <= inner <= 16:
        raise InvalidParameter(f"inner points must be 0 … 16, got {inner}")
    if not 1 <= npar <= 8:
        raise InvalidParameter(f"parameters per point must be 1 … 8, got {npar}")
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise InvalidParameter(f"dtype must be float64 or float32, got {dtype}")
    P = solution_points(m, inner)
    C = mesh.n_cells
    V = mesh.vertices
    # ---- edge points: positions and g = a(x)·(dy, −dx)/m  (outward normal × |e|/m of the left cell)
    A, B = V[mesh.edges[:, 0]], V[mesh.edges[:, 1]]
    t = (np.arange(m) + 0.5) / m
    X = A[:, None, :] + t[None, :, None] * (B - A)[:, None, :]              # (E, m, 2)
    ax, ay = -omega * (X[..., 1] - 0.5), omega * (X[..., 0] - 0.5)
    d = (B - A) / m
    g = (ax * d[:, None, 1] - ay * d[:, None, 0]).reshape(-1).astype(dtype)  # (E·m,)
    lc, rc = mesh.edge_cells[:, 0].astype(np.int64), mesh.edge_cells[:, 1].astype(np.int64)
    lf, rf = mesh.edge_faces[:, 0].astype(np.int64), mesh.edge_faces[:, 1].astype(np.int64)
    j = np.arange(m)
    L = lc[:, None] * P + lf[:, None] * m + j[None, :]
    R = np.where(rc[:, None] >= 0, rc[:, None] * P + rf[:, None] * m + (m - 1 - j)[None, :], -1)
    L, R = L.reshape(-1), R.reshape(-1)
    n_pts = C * P
    if n_pts >= 2 ** 31:
        raise InvalidParameter(f"{n_pts} solution points exceed 32-bit indexing")
    g_pt = np.zeros(n_pts, dtype=dtype)
    g_pt[L] = g
    has_r = R >= 0
    g_pt[R[has_r]] = -g[has_r]                                              # exact negation
    nbr = np.full(n_pts, -1, dtype=np.int32)
    nbr[L[has_r]] = R[has_r]
    nbr[R[has_r]] = L[has_r]
    s_cell = (P / mesh.area).astype(dtype)
    # ---- point positions (initial condition only): face points on the faces, inner at the centroid
    pos = np.empty((C, P, 2))
    pos[:, 3 * m:, :] = mesh.centroids[:, None, :]
    Xf = X.reshape(-1, 2)
    pos.reshape(-1, 2)[L] = Xf
    pos.reshape(-1, 2)[R[has_r]] = Xf[has_r]
    u0 = np.empty((C, P, npar))
    for p in range(npar):                     # a bump per parameter, at different angles
        ang = 2 * math.pi * p / npar
        cx, cy = 0.5 + 0.25 * math.cos(ang), 0.5 + 0.25 * math.sin(ang)
        u0[..., p] = (1.0 + p) * np.exp(-((pos[..., 0] - cx) ** 2 + (pos[..., 1] - cy) ** 2) / (2 * 0.08 ** 2))
    u0 = u0.astype(dtype)
    # ---- λ and Δt: λ = the largest advective rate, Δt = cfl / (λ + that rate)
    rate = float(np.max(np.abs(g_pt.astype(np.float64)) * np.repeat(s_cell.astype(np.float64), P)))
    lam = rate
    dt = cfl / (lam + rate)
    return Problem(mesh, m, inner, npar, dtype, P, u0, g, np.stack([L, R], 1).astype(np.int32), g_pt, nbr,
                   s_cell, dtype.type(lam), dtype.type(dt),
                   info={"omega": omega, "cfl": cfl, "max_rate": rate})


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


# --------------------------------------------------------------------------------- CUDA source

CUDA_SRC = r"""
// Paper 003 case study. Solution point i of cell c has global id c*SP + i; face points first
// (face f, point j at f*MF + j), then the inner points. real = float or double.
// AoS (original, Fig. 6a): u[gp*NPAR + p].  SoA (improved, Fig. 6b): u[p*npts + gp].

__device__ __forceinline__ void res_max(RESBITS* res, real m)
{   // residual max |rate| via the integer max of the bit patterns (valid for m >= 0)
    atomicMax(res, (RESBITS)REAL_AS_BITS(m));
}

// ---------------------------------------------------------------- original (Algorithm 1)
// Cell-oriented stage: one cell per block, one thread per solution point (paper §6.1).
extern "C" __global__ void cell_orig(const real* __restrict__ u, real* __restrict__ ccoef, real lam)
{
    __shared__ real su[SP * NPAR];
    const int c = blockIdx.x, i = threadIdx.x;
    const real* uc = u + (unsigned long long)c * SP * NPAR;      // Ptr = #SolPts * #Params * (#Cell - 1)
    for (int p = 0; p < NPAR; ++p) su[i * NPAR + p] = uc[i * NPAR + p];
    __syncthreads();
    for (int p = 0; p < NPAR; ++p) {
        real s = su[p];
        for (int j = 1; j < SP; ++j) s += su[j * NPAR + p];
        const real mean = s / (real)SP;
        ccoef[((unsigned long long)c * SP + i) * NPAR + p] = lam * (mean - su[i * NPAR + p]);
    }
}

// Edge-oriented stage: one edge per block, one thread per point on the edge (k-1 threads).
// ept: the left/right point pointers of each edge point (Fig. 5, step 2); -1 = boundary.
extern "C" __global__ void edge_orig(const real* __restrict__ u, real* __restrict__ ecoef,
                                     const int* __restrict__ ept, const real* __restrict__ g,
                                     const real* __restrict__ s_cell)
{
    const int q = blockIdx.x * MF + threadIdx.x;
    const int L = ept[2 * q], R = ept[2 * q + 1];
    const real gq = g[q];
    const real sL = s_cell[L / SP];
    const real sR = R >= 0 ? s_cell[R / SP] : (real)0;
    for (int p = 0; p < NPAR; ++p) {
        const real uL = u[(unsigned long long)L * NPAR + p];
        const real uR = R >= 0 ? u[(unsigned long long)R * NPAR + p] : (real)0;
        const real F = gq > 0 ? gq * uL : gq * uR;
        ecoef[(unsigned long long)L * NPAR + p] = -F * sL;
        if (R >= 0) ecoef[(unsigned long long)R * NPAR + p] = F * sR;
    }
}

// Update stage: one cell per block, one thread per solution point.
extern "C" __global__ void update_orig(real* __restrict__ u, const real* __restrict__ ccoef,
                                       const real* __restrict__ ecoef, real dt, RESBITS* res)
{
    __shared__ real red[SP];
    const unsigned long long base = ((unsigned long long)blockIdx.x * SP + threadIdx.x) * NPAR;
    real m = 0;
    for (int p = 0; p < NPAR; ++p) {
        const real r = ccoef[base + p] + ecoef[base + p];
        u[base + p] = u[base + p] + dt * r;
        m = fmax(m, fabs(r));
    }
    red[threadIdx.x] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int j = 1; j < SP; ++j) m = fmax(m, red[j]);
        res_max(res, m);
    }
}

// ---------------------------------------------------------------- improved (Algorithm 2)
// Cell and edge stages fused, several cells per block (blockDim.x = cells_per_block * SP),
// one thread per solution point, parameter-major data; the neighbour pointer array is read
// sequentially (Fig. 7b).  Dynamic shared memory: NPAR * blockDim.x reals.
extern "C" __global__ void celledge_impr(const real* __restrict__ u, real* __restrict__ rate,
                                         const int* __restrict__ nbr, const real* __restrict__ gpt,
                                         const real* __restrict__ s_cell, real lam, int ncells)
{
    extern __shared__ unsigned char shraw[];
    real* sh = reinterpret_cast<real*>(shraw);
    const int t = threadIdx.x, bd = blockDim.x;
    const int cpb = bd / SP;
    const int lc = t / SP, i = t - lc * SP;
    const int c = blockIdx.x * cpb + lc;
    const bool ok = lc < cpb && c < ncells;
    const unsigned long long npts = (unsigned long long)ncells * SP;
    const unsigned long long gp = (unsigned long long)c * SP + i;
    for (int p = 0; p < NPAR; ++p) sh[p * bd + t] = ok ? u[p * npts + gp] : (real)0;
    __syncthreads();
    if (!ok) return;
    const int first = t - i;
    const bool face = i < 3 * MF;
    const int nb = face ? nbr[gp] : -1;
    const real g = face ? gpt[gp] : (real)0;
    const real sc = s_cell[c];
    for (int p = 0; p < NPAR; ++p) {
        real s = sh[p * bd + first];
        for (int j = 1; j < SP; ++j) s += sh[p * bd + first + j];
        const real mean = s / (real)SP;
        const real ui = sh[p * bd + t];
        const real cc = lam * (mean - ui);
        real ce = 0;
        if (face) {
            const real un = nb >= 0 ? u[p * npts + nb] : (real)0;
            const real F = g > 0 ? g * ui : g * un;
            ce = -F * sc;
        }
        rate[p * npts + gp] = cc + ce;
    }
}

// Update: streaming over all NPAR * npts values, grid-stride, warp-reduced residual.
extern "C" __global__ void update_impr(real* __restrict__ u, const real* __restrict__ rate, real dt,
                                       long long n, RESBITS* res)
{
    real m = 0;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (long long)gridDim.x * blockDim.x) {
        const real r = rate[k];
        u[k] = u[k] + dt * r;
        m = fmax(m, fabs(r));
    }
    for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) res_max(res, m);
}
"""


def cuda_source(dtype, P: int, m: int, n_params: int) -> str:
    """The kernels' CUDA source for one configuration (self-contained, for NVRTC or nvcc)."""
    dbl = np.dtype(dtype) == np.dtype(np.float64)
    head = (f"#define SP {int(P)}\n#define MF {int(m)}\n#define NPAR {int(n_params)}\n"
            + ("typedef double real;\ntypedef unsigned long long RESBITS;\n"
               "#define REAL_AS_BITS(x) __double_as_longlong(x)\n" if dbl else
               "typedef float real;\ntypedef unsigned int RESBITS;\n#define REAL_AS_BITS(x) __float_as_uint(x)\n"))
    return head + CUDA_SRC


#: NVRTC options: no FMA contraction, so that a*b+c rounds as NumPy does
NVRTC_OPTIONS = ("--fmad=false",)
ORIGINAL_KERNELS = ("cell_orig", "edge_orig", "update_orig")
IMPROVED_KERNELS = ("celledge_impr", "update_impr")
UPDATE_BLOCK = 256

_MODULES: dict = {}


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception as exc:  # noqa: BLE001 - ImportError or no device
        raise BackendUnavailable("the GPU versions of the case study need CuPy and a CUDA GPU "
                                 f"({exc.__class__.__name__}: {exc}); the CPU reference runs anywhere") from exc


def get_module(dtype, P: int, m: int, n_params: int):
    """The compiled RawModule for one configuration (cached)."""
    cp = _cupy()
    key = (np.dtype(dtype).name, int(P), int(m), int(n_params), cp.cuda.Device().id)
    if key not in _MODULES:
        _MODULES[key] = cp.RawModule(code=cuda_source(dtype, P, m, n_params), options=NVRTC_OPTIONS)
    return _MODULES[key]


# --------------------------------------------------------------------- cells per block (occupancy)

def paper_cells_per_block(P: int, warps: int = 2, warp_size: int = 32) -> int:
    """Paper 003's occupancy improvement on the T10: pack cells into blocks of ``warps`` warps
    (two warps → 16 of 32 warps active, i.e. the occupancy doubled from 25 % to 50 %)."""
    return max(1, (warps * warp_size) // int(P))


def best_cells_per_block(spec, P: int, regs: int, smem_per_cell: int = 0, max_threads: int | None = None) -> int:
    """Cells per block giving the most active solution-point threads per SM (Eqs. 9–10 with the
    full calculator), the smallest such block on ties.  ``spec``: a CC or ArchSpec."""
    from .specs import get_spec
    spec = get_spec(spec)
    top = min(spec.max_threads_per_block, max_threads or spec.max_threads_per_block)
    best, best_cpb = -1, 1
    for cpb in range(1, top // int(P) + 1):
        r = occupancy(spec, cpb * P, regs, 0, cpb * smem_per_cell, strict=False)
        useful = r.active_blocks_per_sm * cpb * P
        if useful > best:
            best, best_cpb = useful, cpb
    return best_cpb


def case_study_occupancy(cc, k_minus_1: int = 2, inner: int = 1, n_params: int = 4, itemsize: int = 8,
                         regs: dict | int | None = None, cells_per_block: int | None = None) -> dict:
    """Theoretical occupancy of both versions' kernels on ``cc`` (a CC or ArchSpec).

    ``regs``: registers per thread, one number for all kernels or {kernel: regs} (from
    :func:`kernels.occupancy.gpu.kernel_resources` on a GPU); default :data:`T10_ASSUMED_REGS`.
    ``cells_per_block``: the improved version's packing (default: the paper's two warps).
    Returns {"original": {kernel: OccupancyResult}, "improved": {...}, "cells_per_block": n,
    "P": points per cell, "occupancy": {"original": …, "improved": …}} — the latter for the
    stage the paper analyses, the cell-oriented one (fused with the edge stage in Algorithm 2)."""
    m = int(k_minus_1)
    P = solution_points(m, int(inner))
    cpb = int(cells_per_block or paper_cells_per_block(P))

    def r_of(name):
        if isinstance(regs, dict):
            return int(regs.get(name, T10_ASSUMED_REGS))
        return int(regs if regs is not None else T10_ASSUMED_REGS)

    # launch shapes: (threads per block, static smem, dynamic smem), as GPUSolver launches them
    shapes = {
        "original": {"cell_orig": (P, P * n_params * itemsize, 0),
                     "edge_orig": (m, 0, 0),
                     "update_orig": (P, P * itemsize, 0)},
        "improved": {"celledge_impr": (cpb * P, 0, n_params * cpb * P * itemsize),
                     "update_impr": (UPDATE_BLOCK, 0, 0)},
    }
    out: dict = {"cells_per_block": cpb, "P": P}
    for version, ks in shapes.items():
        out[version] = {name: occupancy(cc, threads, r_of(name), st, dyn, strict=False)
                        for name, (threads, st, dyn) in ks.items()}
    out["occupancy"] = {"original": out["original"]["cell_orig"].occupancy,
                        "improved": out["improved"]["celledge_impr"].occupancy}
    return out


# ---------------------------------------------------------------------------------- GPU versions

class GPUSolver:
    """One GPU version (``"original"`` or ``"improved"``) of the case study on a :class:`Problem`."""

    def __init__(self, pb: Problem, version: str = "improved", cells_per_block: int | str | None = None):
        if version not in ("original", "improved"):
            raise InvalidParameter(f"unknown GPU version {version!r}: use original or improved")
        cp = _cupy()
        self.cp, self.pb, self.version = cp, pb, version
        self.mod = get_module(pb.dtype, pb.P, pb.m, pb.n_params)
        self.kernels = {fn: self.mod.get_function(fn)
                        for fn in (ORIGINAL_KERNELS if version == "original" else IMPROVED_KERNELS)}
        C, P, NP = pb.n_cells, pb.P, pb.n_params
        self.npts = C * P
        dbl = pb.dtype == np.dtype(np.float64)
        self.res = cp.zeros(1, dtype=np.uint64 if dbl else np.uint32)
        self.s_cell = cp.asarray(pb.s_cell)
        if version == "original":
            self.ept = cp.asarray(np.ascontiguousarray(pb.edge_pts.reshape(-1)))
            self.g = cp.asarray(pb.g_edge)
            self.ccoef = cp.zeros((self.npts * NP,), dtype=pb.dtype)
            self.ecoef = cp.zeros((self.npts * NP,), dtype=pb.dtype)    # inner points stay 0
            self.cells_per_block = 1
        else:
            self.nbr = cp.asarray(pb.nbr)
            self.gpt = cp.asarray(pb.g_pt)
            self.rate = cp.zeros((self.npts * NP,), dtype=pb.dtype)
            if cells_per_block in (None, "auto", "best"):
                from .gpu import device_spec, kernel_resources
                regs = kernel_resources(self.kernels["celledge_impr"])["registers"]
                cells_per_block = best_cells_per_block(device_spec(), P, regs, NP * P * pb.dtype.itemsize,
                                                       max_threads=1024)
            elif cells_per_block == "paper":
                cells_per_block = paper_cells_per_block(P)
            cpb = int(cells_per_block)
            if not 1 <= cpb * P <= 1024:
                raise InvalidParameter(f"{cpb} cells × {P} points = {cpb * P} threads per block: must be 1 … 1024")
            self.cells_per_block = cpb
            dyn = NP * cpb * P * pb.dtype.itemsize
            if dyn > 48 * 1024:                  # opt in to more than 48 KB of dynamic shared memory
                self.kernels["celledge_impr"].max_dynamic_shared_size_bytes = dyn
            self.update_grid = int(min(-(-self.npts * NP // UPDATE_BLOCK), 65535 * 4))
        dt = pb.dtype.name
        for ln in self.launches():            # the launch registry ("My kernels" reads it)
            launches.record(f"UG {ln['kernel']}<{dt}, P={P}, k-1={pb.m}, NP={NP}>", self.kernels[ln["kernel"]],
                            ln["block"], ln["dyn_smem"], system="occupancy")
        self.u = None
        self.reset()

    # ---------------------------------------------------------------- layout
    def to_device(self, u: np.ndarray):
        if self.version == "original":                                  # AoS, as (C, P, NP)
            return self.cp.asarray(np.ascontiguousarray(u).reshape(-1))
        return self.cp.asarray(np.ascontiguousarray(np.moveaxis(u, 2, 0)).reshape(-1))   # SoA

    def to_host(self, d=None) -> np.ndarray:
        d = self.u if d is None else d
        pb = self.pb
        h = self.cp.asnumpy(d)
        if self.version == "original":
            return h.reshape(pb.n_cells, pb.P, pb.n_params)
        return np.moveaxis(h.reshape(pb.n_params, pb.n_cells, pb.P), 0, 2).copy()

    def reset(self, u: np.ndarray | None = None) -> None:
        self.u = self.to_device(self.pb.u0 if u is None else u)

    # ---------------------------------------------------------------- launches
    def launches(self) -> list[dict]:
        """Each kernel's launch: name, grid, block, dynamic shared memory."""
        pb = self.pb
        if self.version == "original":
            return [{"kernel": "cell_orig", "grid": pb.n_cells, "block": pb.P, "dyn_smem": 0},
                    {"kernel": "edge_orig", "grid": pb.mesh.n_edges, "block": pb.m, "dyn_smem": 0},
                    {"kernel": "update_orig", "grid": pb.n_cells, "block": pb.P, "dyn_smem": 0}]
        bd = self.cells_per_block * pb.P
        return [{"kernel": "celledge_impr", "grid": -(-pb.n_cells // self.cells_per_block), "block": bd,
                 "dyn_smem": pb.n_params * bd * pb.dtype.itemsize},
                {"kernel": "update_impr", "grid": self.update_grid, "block": UPDATE_BLOCK, "dyn_smem": 0}]

    def step(self) -> None:
        """One iteration (no host synchronisation)."""
        pb, k = self.pb, self.kernels
        T = pb.dtype.type
        if self.version == "original":
            k["cell_orig"]((pb.n_cells,), (pb.P,), (self.u, self.ccoef, T(pb.lam)))
            k["edge_orig"]((pb.mesh.n_edges,), (pb.m,), (self.u, self.ecoef, self.ept, self.g, self.s_cell))
            k["update_orig"]((pb.n_cells,), (pb.P,), (self.u, self.ccoef, self.ecoef, T(pb.dt), self.res))
        else:
            bd = self.cells_per_block * pb.P
            k["celledge_impr"]((-(-pb.n_cells // self.cells_per_block),), (bd,),
                               (self.u, self.rate, self.nbr, self.gpt, self.s_cell, T(pb.lam),
                                np.int32(pb.n_cells)),
                               shared_mem=pb.n_params * bd * pb.dtype.itemsize)
            k["update_impr"]((self.update_grid,), (UPDATE_BLOCK,),
                             (self.u, self.rate, T(pb.dt), np.int64(self.npts * pb.n_params), self.res))

    def residual(self) -> float:
        """max |rate| of the iterations since the last call (reads the device, resets it)."""
        bits = self.cp.asnumpy(self.res)
        self.res.fill(0)
        return float(bits.view(np.float64 if bits.dtype == np.uint64 else np.float32)[0])

    def run(self, steps: int, tol: float = 0.0, check_every: int = 1) -> tuple[np.ndarray, list[float]]:
        """``steps`` iterations from the current state (the residual read every ``check_every``);
        returns (u on the host as (C, P, NP), residual history)."""
        hist = []
        for s in range(int(steps)):
            self.step()
            if (s + 1) % check_every == 0 or s == steps - 1:
                r = self.residual()
                hist.append(r)
                if r < tol:
                    break
        return self.to_host(), hist

    def time_per_step(self, steps: int = 20) -> float:
        """Seconds per iteration (CUDA events, after a warm-up; residual not read back)."""
        cp = self.cp
        self.step()
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(int(steps)):
            self.step()
        b.record()
        b.synchronize()
        return cp.cuda.get_elapsed_time(a, b) * 1e-3 / int(steps)

    def occupancy(self, spec=None) -> dict:
        """{kernel: dict} with registers, smem and theoretical + driver occupancy on this GPU."""
        from .gpu import device_spec, kernel_occupancy
        spec = spec or device_spec()
        out = {}
        for ln in self.launches():
            out[ln["kernel"]] = kernel_occupancy(self.kernels[ln["kernel"]], ln["block"], ln["dyn_smem"], spec)
        return out


def run_version(pb: Problem, version: str, steps: int, cells_per_block=None) -> tuple[np.ndarray, list[float]]:
    """Run one version ("cpu", "original", "improved") for ``steps`` iterations from ``pb.u0``."""
    if version == "cpu":
        return cpu_run(pb, steps)
    return GPUSolver(pb, version, cells_per_block).run(steps)


def cell_means(u: np.ndarray) -> np.ndarray:
    """Per-cell mean of the first parameter (what the mesh view colours)."""
    return np.asarray(u, dtype=np.float64)[:, :, 0].mean(axis=1)
