"""The fused CuPy kernels of kernels.cahn_hilliard.fused against the NumPy expressions they replace
(the spectral step's N(φ) and a·f + c·g with the k = 0 pin, the step-doubling extrapolation and Σd²,
the free energy), on fresh random fields."""
import numpy as np
import pytest

from kernels.cahn_hilliard import CHParams, diagnostics, fused

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    from kernels.backend import gpu_backend
    return gpu_backend().xp


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nonlinear_and_combine_match_numpy(cp, rng, dtype):
    ny, nx = (int(n) for n in rng.integers(8, 64, size=2))
    phi = rng.uniform(-1, 1, (ny, nx)).astype(dtype)
    u, b = dtype(rng.uniform(0.5, 2)), dtype(rng.uniform(0.5, 2))
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(fused.nonlinear(cp.asarray(phi), u, b).get(), u * phi * phi * phi - b * phi,
                               rtol=tol, atol=tol)
    f, g = (np.fft.rfftn(rng.uniform(-1, 1, (ny, nx))) for _ in range(2))
    a, c = (rng.uniform(-1, 1, f.shape) for _ in range(2))
    dc = np.array([complex(*rng.normal(size=2))])
    want = a * f + c * g
    want[0, 0] = dc[0]
    got = fused.spectral_combine(*(cp.asarray(x) for x in (f, g, a, c, dc))).get()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim,boundary", [(2, "periodic"), (2, "mirror"), (3, "periodic"), (3, "mirror")])
def test_extrapolation_and_energy_match_numpy(cp, rng, dim, boundary):
    n = [int(v) for v in rng.integers(5, 24, size=dim)]
    kw = dict(size=n[-1], size_y=n[-2]) | ({"size_z": n[0]} if dim == 3 else {})
    p = CHParams(dim=dim, boundary=boundary, dx=float(rng.uniform(0.5, 2)), K=float(rng.uniform(0.5, 3)), **kw)
    half, full = (rng.uniform(-1, 1, p.shape) for _ in range(2))
    w = np.float64(1 / 3)
    want_d2 = float(np.vdot(half - full, half - full))
    want = half + (half - full) * w
    g_half, work = cp.asarray(half), cp.empty((2,) + p.shape, np.float64)
    fused.extrapolate(g_half, cp.asarray(full), w, work[0])
    np.testing.assert_allclose(g_half.get(), want, rtol=1e-14, atol=1e-14)
    assert float(work[0].sum()) == pytest.approx(want_d2, rel=1e-12)
    fused.energy_density(g_half, p, work[1])
    assert float(work[1].sum()) == pytest.approx(diagnostics.free_energy(want, p), rel=1e-10)
