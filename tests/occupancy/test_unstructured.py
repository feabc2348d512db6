"""Paper 003's case study on the CPU: mesh generation and connectivity, the three stages, Algorithm 2's
cell traversal equal to Algorithm 1, and the occupancy of both GPU versions on the Tesla T10."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.occupancy import unstructured as U


@pytest.fixture(params=["perturbed", "delaunay"])
def mesh(request, rng):
    return U.generate_mesh(int(rng.integers(200, 3000)), kind=request.param, seed=int(rng.integers(1 << 30)))


def test_mesh_connectivity(mesh):
    C, E, V = mesh.n_cells, mesh.n_edges, len(mesh.vertices)
    assert V - E + C == 1                                  # Euler: a disc
    assert np.all(mesh.area > 0) and mesh.area.sum() == pytest.approx(1.0, rel=1e-12)
    # every face maps to its edge; left faces run along the edge, right faces against it
    for side in (0, 1):
        has = mesh.edge_cells[:, side] >= 0
        c, f = mesh.edge_cells[has, side], mesh.edge_faces[has, side]
        a, b = mesh.cells[c, f], mesh.cells[c, (f + 1) % 3]
        e = mesh.edges[has]
        if side == 0:
            assert np.array_equal(a, e[:, 0]) and np.array_equal(b, e[:, 1])
        else:
            assert np.array_equal(a, e[:, 1]) and np.array_equal(b, e[:, 0])
        assert np.array_equal(mesh.cell_edges[c, f], np.nonzero(has)[0])
    # boundary edges are exactly those on the unit square's sides
    bnd = mesh.edge_cells[:, 1] < 0
    p = mesh.vertices[mesh.edges[bnd]]                      # (Eb, 2, 2)
    on = lambda q: (np.isclose(q[..., 0], 0) | np.isclose(q[..., 0], 1)  # noqa: E731
                    | np.isclose(q[..., 1], 0) | np.isclose(q[..., 1], 1))
    assert on(p).all()
    assert mesh.n_boundary_edges == (2 * E - 3 * C)
    # cells are counter-clockwise
    assert np.all(U.signed_area(mesh.vertices, mesh.cells) > 0)


def test_mesh_sizes_span_and_bad_input():
    assert U.generate_mesh(100, seed=1).n_cells == 98
    assert abs(U.generate_mesh(200_000, seed=1).n_cells - 200_000) < 2000
    for bad in (dict(n_cells=1), dict(kind="quad"), dict(jitter=0.7)):
        with pytest.raises(InvalidParameter):
            U.generate_mesh(**{"n_cells": 100, **bad})
    with pytest.raises(InvalidParameter, match="zero-area"):
        U.build_connectivity(np.array([[0, 0], [1, 0], [2, 0]]), [[0, 1, 2]])


def test_problem_points_and_neighbours(mesh, rng):
    m, inner, npar = int(rng.integers(1, 6)), int(rng.integers(0, 3)), int(rng.integers(1, 5))
    pb = U.make_problem(mesh, m, inner, npar)
    assert pb.P == 3 * m + inner                            # Eq. 1
    assert pb.u0.shape == (mesh.n_cells, pb.P, npar)
    face = (np.arange(pb.n_points) % pb.P) < 3 * m
    nb = pb.nbr
    inter = nb >= 0
    assert not inter[~face].any()
    assert np.array_equal(nb[nb[inter]], np.nonzero(inter)[0])       # symmetric
    assert np.array_equal(pb.g_pt[nb[inter]], -pb.g_pt[inter])        # exactly opposite
    assert (~inter & face).sum() == mesh.n_boundary_edges * m
    L, R = pb.edge_pts[:, 0], pb.edge_pts[:, 1]
    assert np.array_equal(np.sort(np.r_[L, R[R >= 0]]), np.nonzero(face)[0])   # each face point once
    # g sums to a·n over each edge: the rotation is divergence-free, so the outward flux of each
    # cell vanishes up to the midpoint rule's exactness for the linear field (it is exact)
    cell_flux = np.bincount(np.arange(pb.n_points) // pb.P, weights=pb.g_pt.astype(float), minlength=mesh.n_cells)
    assert np.abs(cell_flux).max() < 1e-12


def test_stages_are_conservative_finite_volume(mesh, rng):
    pb = U.make_problem(mesh, int(rng.integers(1, 6)), 1, 3)
    u = pb.u0 + rng.random(pb.u0.shape)
    c_cell, c_edge = U.cpu_stages(pb, u)
    C, P, NP = u.shape
    # the cell stage leaves every cell's mean unchanged
    assert np.abs(c_cell.reshape(C, P, NP).sum(axis=1)).max() < 1e-9 * np.abs(c_cell).max()
    # the edge stage changes Σ A·mean only through boundary fluxes
    total = (mesh.area[:, None] * c_edge.reshape(C, P, NP).mean(axis=1)).sum(axis=0)
    L, R, g = pb.edge_pts[:, 0], pb.edge_pts[:, 1], pb.g_edge
    b = R < 0
    uf = u.reshape(C * P, NP)
    Fb = np.where(g[b, None] > 0, g[b, None] * uf[L[b]], 0.0)
    assert np.allclose(total, -Fb.sum(axis=0), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_algorithm2_cell_traversal_equals_algorithm1(mesh, rng, dtype):
    pb = U.make_problem(mesh, int(rng.integers(1, 6)), int(rng.integers(0, 3)), int(rng.integers(1, 5)), dtype=dtype)
    u1 = u2 = pb.u0
    for _ in range(5):
        u1, r1 = U.cpu_step(pb, u1)
        u2, r2 = U.cpu_step_cell_traversal(pb, u2)
        assert u1.dtype == np.dtype(dtype)
        assert np.array_equal(u1, u2) and r1 == r2


def test_run_is_stable_and_converges_to_rest():
    pb = U.make_problem(U.generate_mesh(800, seed=3), 2, 1, 2)
    u, hist = U.cpu_run(pb, 400)
    assert np.isfinite(u).all() and u.min() > -1e-12 and u.max() <= pb.u0.max() + 1e-12   # upwind: monotone
    assert hist[-1] < hist[0]
    u, hist = U.cpu_run(pb, 400, tol=hist[0] * 0.99)
    assert len(hist) < 400


def test_occupancy_t10_paper_claim():
    """Paper 003 §6.1: one cell per block → 1 warp per block, 8 blocks per SM → 25 %; the
    improved packing (two warps of cells per block) doubles it, for every k−1 of Table 3."""
    for m in range(1, 6):
        o = U.case_study_occupancy("1.3", m, inner=1, n_params=4, itemsize=8)
        orig, imp = o["original"]["cell_orig"], o["improved"]["celledge_impr"]
        assert orig.warps_per_block == 1 and orig.active_blocks_per_sm == 8 and orig.limiter == "blocks"
        assert orig.occupancy == 0.25
        assert o["occupancy"]["improved"] == 0.5 == 2 * o["occupancy"]["original"]
        assert imp.warps_per_block == 2 and imp.active_blocks_per_sm == 8
        assert o["cells_per_block"] * o["P"] <= 64
    # the paper's example (k = 10, 27 points + 1 inner): still one warp → 25 %
    o = U.case_study_occupancy("1.3", 9, inner=1)
    assert o["P"] == 28 and o["occupancy"]["original"] == 0.25
    # agrees with the paper's own Eqs. 2–4 (choosers.paper003_occupancy)
    from kernels.occupancy.choosers import paper003_occupancy
    assert paper003_occupancy(10, 2048, 2048)["occupancy"] == 0.25
    assert paper003_occupancy(60, 2048, 2048)["occupancy"] == 0.5


def test_best_cells_per_block_reaches_full_occupancy():
    for cc in ("8.0", "9.0"):
        for m in range(1, 6):
            P = U.solution_points(m, 1)
            cpb = U.best_cells_per_block(cc, P, 32, 4 * 8 * P)
            o = U.case_study_occupancy(cc, m, regs=32, cells_per_block=cpb)
            assert o["occupancy"]["improved"] >= 0.9 and o["occupancy"]["improved"] > o["occupancy"]["original"]


@pytest.mark.parametrize("n_params,itemsize", [(4, 8), (2, 8), (1, 4), (4, 4)])
def test_best_packing_on_t10_follows_eq11(n_params, itemsize):
    """On the T10 the fused kernel's shared memory caps the active warps: paper 003 Eq. 11,
    ActWarps ≈ 512 / shared bytes per solution point (at most 32)."""
    per_point = n_params * itemsize
    for m in range(1, 6):
        P = U.solution_points(m, 1)
        cpb = U.best_cells_per_block("1.3", P, 16, per_point * P)
        o = U.case_study_occupancy("1.3", m, n_params=n_params, itemsize=itemsize, regs=16, cells_per_block=cpb)
        warps = o["improved"]["celledge_impr"].active_warps_per_sm
        assert warps == pytest.approx(min(32, 512 / per_point), abs=2)
        assert o["occupancy"]["improved"] >= 2 * o["occupancy"]["original"]


def test_bad_problem_input():
    mesh = U.generate_mesh(100, seed=0)
    for kw in (dict(k_minus_1=0), dict(inner=-1), dict(n_params=0), dict(dtype=np.int32)):
        with pytest.raises(InvalidParameter):
            U.make_problem(mesh, **kw)


def test_gpu_versions_explain_without_gpu():
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present")
    from kernels.errors import BackendUnavailable
    pb = U.make_problem(U.generate_mesh(100, seed=0))
    with pytest.raises(BackendUnavailable, match="CPU reference"):
        U.GPUSolver(pb, "improved")
