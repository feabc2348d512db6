"""Paper 003's case study, the mesh and the problem: triangle meshes of the unit square with their
face/edge connectivity (:class:`TriMesh`, :func:`generate_mesh`), and the solution points, geometry
coefficients, initial condition and time step the three stages read (:class:`Problem`,
:func:`make_problem`, Eq. 1's point count).  The scheme is described in
:mod:`kernels.occupancy.unstructured`, which re-exports these names.
"""
from __future__ import annotations

# Imports inside functions: SciPy's Delaunay (slow to import) loads only when an unstructured mesh is triangulated.
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameter


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


def signed_area(v: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Signed area of each triangle (positive: counter-clockwise)."""
    a, b, c = v[cells[:, 0]], v[cells[:, 1]], v[cells[:, 2]]
    return 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))


def build_connectivity(vertices: np.ndarray, cells: np.ndarray, kind: str = "custom") -> TriMesh:
    """Orient the cells counter-clockwise and derive edges, left/right cells and boundary edges."""
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    cells = np.array(cells, dtype=np.int64)
    if cells.ndim != 2 or cells.shape[1] != 3 or len(cells) == 0:
        raise InvalidParameter("cells must be a non-empty (C, 3) array of vertex ids")
    area = signed_area(vertices, cells)
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
        ar = np.abs(signed_area(v, cells))
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
