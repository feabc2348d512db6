"""Paper 003's case study on the GPU: the original (one cell per block) and occupancy-improved
(several cells per block, fused cell+edge stage, parameter-major data) CUDA versions give the CPU
reference's numbers on fresh random meshes; their kernels' occupancy (calculator = driver)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.occupancy import unstructured as U

pytestmark = pytest.mark.gpu


def _close(a, b, dtype):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    rtol = 1e-12 if np.dtype(dtype) == np.dtype(np.float64) else 1e-5
    scale = max(np.abs(b).max(), 1e-30)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("kind", ["perturbed", "delaunay"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_versions_agree_with_cpu(rng, kind, dtype):
    for _ in range(2):
        mesh = U.generate_mesh(int(rng.integers(300, 6000)), kind=kind, seed=int(rng.integers(1 << 30)))
        pb = U.make_problem(mesh, int(rng.integers(1, 6)), int(rng.integers(0, 3)), int(rng.integers(1, 5)),
                            dtype=dtype)
        steps = int(rng.integers(3, 25))
        ref, hist = U.cpu_run(pb, steps)
        for version, cpb in (("original", None), ("improved", "auto"), ("improved", "paper"),
                             ("improved", 1), ("improved", int(rng.integers(2, 1024 // pb.P + 1)))):
            g = U.GPUSolver(pb, version, cpb)
            u, h = g.run(steps)
            assert u.shape == ref.shape and u.dtype == np.dtype(dtype)
            _close(u, ref, dtype)
            _close(h, hist, dtype)


def test_reset_and_rerun_is_repeatable():
    pb = U.make_problem(U.generate_mesh(2000, seed=5), 3, 1, 4)
    g = U.GPUSolver(pb, "improved")
    a, _ = g.run(10)
    g.reset()
    b, _ = g.run(10)
    assert np.array_equal(a, b)
    g.reset(a)
    c, _ = g.run(5)
    d, _ = U.cpu_run(pb, 5, u=a.copy())
    _close(c, d, np.float64)


def test_large_mesh_one_step():
    pb = U.make_problem(U.generate_mesh(300_000, seed=7), 5, 1, 4, dtype=np.float32)
    ref, h = U.cpu_run(pb, 2)
    for version in ("original", "improved"):
        u, hh = U.GPUSolver(pb, version).run(2)
        _close(u, ref, np.float32)


def test_occupancy_on_this_gpu_and_t10():
    from kernels.occupancy.gpu import app_kernels, device_spec
    spec = device_spec()
    pb = U.make_problem(U.generate_mesh(1000, seed=1), 3, 1, 4)
    orig, imp = U.GPUSolver(pb, "original"), U.GPUSolver(pb, "improved")
    oo, oi = orig.occupancy(spec), imp.occupancy(spec)
    for rows in (oo, oi):
        for name, r in rows.items():
            assert r["driver_blocks_per_sm"] == r["active_blocks_per_sm"], (name, r)
    assert oi["celledge_impr"]["occupancy"] > oo["cell_orig"]["occupancy"]
    assert oi["celledge_impr"]["occupancy"] > 0.5
    # the calculator with the real registers, on this GPU and on the T10
    regs = {n: r["registers"] for n, r in {**oo, **oi}.items()}
    here = U.case_study_occupancy(spec, 3, regs=regs, cells_per_block=imp.cells_per_block)
    assert here["occupancy"]["improved"] == oi["celledge_impr"]["occupancy"]
    assert here["occupancy"]["original"] == oo["cell_orig"]["occupancy"]
    t10 = U.case_study_occupancy("1.3", 3, regs={n: min(r, 32) for n, r in regs.items()})
    assert t10["occupancy"]["original"] == 0.25
    names = [n for n, _ in app_kernels(include_rng=False)]
    assert any("celledge_impr" in n for n in names) and any("cell_orig" in n for n in names)


def test_time_per_step_positive():
    pb = U.make_problem(U.generate_mesh(20_000, seed=2), 2, 1, 4)
    for version in ("original", "improved"):
        t = U.GPUSolver(pb, version).time_per_step(3)
        assert 0 < t < 1.0
