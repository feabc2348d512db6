"""Graph layouts on the GPU (CuPy) against the CPU reference: the force layout's operations and
forces, its quality, reproducibility and pinning; the spectral layout's subspace."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.graphs.data import generators as G
from kernels.graphs.layout import ForceLayout, compute_layout, layout_quality
from kernels.graphs.layout.force import CpuOps

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    from kernels.backend import gpu_backend
    return gpu_backend()


def seed_of(rng):
    return int(rng.integers(0, 2**31))


def test_gpu_ops_equal_the_cpu_ops(rng, gpu):
    import cupy as cp

    from kernels.graphs.layout.force_gpu import GpuOps
    g = G.barabasi_albert(int(rng.integers(500, 3000)), int(rng.integers(1, 8)), seed=seed_of(rng))
    ops, ref = GpuOps(g, gpu, 1e7), CpuOps(g)         # 1e7: bounds the deposits below
    x = (rng.normal(size=(g.n, 2)) * rng.uniform(1, 1000)).astype(np.float32)
    a = cp.asnumpy(ops.attraction(cp.asarray(x)))
    b = ref.attraction(x)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * np.abs(b).max())
    ops.fused = False                                                # the generic path's prefix sums
    np.testing.assert_allclose(cp.asnumpy(ops.attraction(cp.asarray(x))), b, rtol=1e-4, atol=1e-4 * np.abs(b).max())
    size = int(rng.integers(100, 5000))
    idx = rng.integers(0, size, 40_000)
    w = (rng.random(40_000) * 50).astype(np.float32)
    got = cp.asnumpy(ops.deposit(cp.asarray(idx), cp.asarray(w), size))
    np.testing.assert_allclose(got, np.bincount(idx, weights=w, minlength=size), rtol=1e-6, atol=1e-6)
    again = cp.asnumpy(ops.deposit(cp.asarray(idx), cp.asarray(w), size))
    np.testing.assert_array_equal(got, again)                       # fixed point: order-independent


def test_gpu_forces_and_first_steps_equal_the_cpu(rng, gpu, cpu):
    import cupy as cp
    g = G.barabasi_albert(int(rng.integers(1000, 5000)), 4, seed=seed_of(rng))
    x0 = rng.normal(size=(g.n, 2)) * 30
    grid = int(rng.choice([64, 128, 256]))                  # the same mesh on both (defaults differ)
    lc = ForceLayout(g, backend=cpu, pos0=x0, grid=grid)
    lg = ForceLayout(g, backend=gpu, pos0=x0, grid=grid)
    assert lg.ops.fused, lg.ops.fallback_reason            # the fused kernels compiled
    fc = lc.forces()
    fg = cp.asnumpy(lg.forces())
    np.testing.assert_allclose(fg, fc, rtol=1e-3, atol=1e-4 * np.abs(fc).max())
    lc.step(1)                      # one step: the dynamics amplify float differences ~10× per step after
    lg.step(1)
    xc, xg = lc.positions_host(), lg.positions_host()
    assert np.abs(xg - xc).max() < 1e-4 * np.abs(xc).max()


def test_gpu_force_reaches_the_cpu_quality(rng, gpu, cpu):
    g = G.barabasi_albert(2000, 5, seed=seed_of(rng))
    s = seed_of(rng)
    qc = layout_quality(g, compute_layout(g, "force", backend=cpu, seed=s))
    qg = layout_quality(g, compute_layout(g, "force", backend=gpu, seed=s))
    print(f"edge ratio CPU {qc['edge_ratio']:.4f}, GPU {qg['edge_ratio']:.4f}; neighbourhood preservation "
          f"CPU {qc['neighbourhood_preservation']:.3f}, GPU {qg['neighbourhood_preservation']:.3f}")
    assert qg["edge_ratio"] <= 1.02 * qc["edge_ratio"]
    assert qg["neighbourhood_preservation"] >= 0.8 * qc["neighbourhood_preservation"]


def test_gpu_same_seed_same_layout_bitwise(rng, gpu):
    g = G.barabasi_albert(int(rng.integers(2000, 20000)), 5, seed=seed_of(rng))
    s = seed_of(rng)
    a = compute_layout(g, "force", backend=gpu, iterations=60, seed=s)
    b = compute_layout(g, "force", backend=gpu, iterations=60, seed=s)
    np.testing.assert_array_equal(a, b)


def test_gpu_positions_stay_on_the_device_and_pin_holds(rng, gpu):
    import cupy as cp
    g = G.barabasi_albert(int(rng.integers(300, 2000)), 3, seed=seed_of(rng))
    lay = ForceLayout(g, backend=gpu, seed=seed_of(rng))
    p = lay.positions()
    assert isinstance(p, cp.ndarray) and p.dtype == cp.float32 and p.shape == (g.n, 2)
    lay.step(2)
    assert lay.positions() is p                                      # updated in place, no copy
    i = int(rng.integers(0, g.n))
    xy = rng.uniform(-10, 10, 2)
    lay.pin(i, xy)
    lay.step(20)
    np.testing.assert_array_equal(lay.positions_host()[i], np.float32(xy))
    with pytest.raises(InterruptedError):
        compute_layout(g, "force", backend=gpu, cancel=lambda: True)


def test_gpu_spectral_equals_the_cpu_up_to_sign(rng, gpu, cpu):
    import scipy.linalg
    g = G.barabasi_albert(int(rng.integers(600, 3000)), 3, seed=seed_of(rng))
    a = compute_layout(g, "spectral", backend=cpu).astype(np.float64)
    b = compute_layout(g, "spectral", backend=gpu).astype(np.float64)
    assert scipy.linalg.subspace_angles(a, b).max() < 1e-3
    for c in range(2):                                   # the same eigenvector on each axis, up to sign
        assert abs(abs(np.corrcoef(a[:, c], b[:, c])[0, 1]) - 1.0) < 1e-4
