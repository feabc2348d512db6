"""PFHub benchmark 1 on the GPU (CuPy): the adaptive spectral run of 1a / 1b, the cosine stepper, the
masked T and rectangles match the NumPy runs (kernels.cahn_hilliard.pfhub)."""
import numpy as np
import pytest

from kernels.backend import Backend
from kernels.cahn_hilliard import CahnHilliard, CHParams, domains, pfhub

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import gpu_backend
    return gpu_backend()


@pytest.fixture
def cpu():
    return Backend("cpu", np)


@pytest.mark.parametrize("name", ["pfhub-1a", "pfhub-1b"])
def test_adaptive_gpu_run_matches_cpu(gpu, cpu, name):
    """The full 200 × 200 set-up to t = 200 (spinodal growth and the first coarsening)."""
    runs = {}
    for be in (gpu, cpu):
        sim = CahnHilliard(pfhub.preset_params(name), be)
        runs[be.name] = (pfhub.run(sim, t_end=200.0, stop_rate=None), sim.field_numpy())
    (rg, fg), (rc, fc) = runs[gpu.name], runs[cpu.name]
    assert rg.t[-1] == rc.t[-1] == 200.0
    assert abs(rg.steps - rc.steps) <= max(2, rc.steps // 50)          # the same step decisions, nearly
    for t in (1.0, 10.0, 100.0, 200.0):
        assert rg.energy_at(t) == pytest.approx(rc.energy_at(t), rel=1e-6)
    assert np.abs(fg - fc).max() < 1e-4
    assert np.all(np.diff(rg.free_energy) < 0)


@pytest.mark.parametrize("boundary", ["periodic", "mirror"])
def test_spectral_steppers_on_a_rectangle_match_cpu(gpu, cpu, rng, boundary):
    ny, nx = (int(n) for n in rng.integers(24, 80, size=2))
    p = CHParams(size=nx, size_y=ny, boundary=boundary, integrator="spectral", dtype="float64", dt=0.5)
    phi = rng.uniform(-0.5, 0.5, (ny, nx))
    out = []
    for be in (gpu, cpu):
        sim = CahnHilliard(p, be)
        sim.set_field(phi)
        sim.step(20)
        out.append(sim.field_numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-10)


@pytest.mark.parametrize("integrator,dt,steps", [("rk2", 0.002, 200), ("spectral", 2.0, 20)])
def test_masked_t_matches_cpu_and_conserves_mass(gpu, cpu, rng, integrator, dt, steps):
    """The T (PFHub 1c) with the masked reference (RK2) and the masked semi-implicit CG stepper."""
    p = pfhub.preset_params("pfhub-1c", integrator=integrator, dt=dt, adaptive=False)
    mask = domains.domain_mask(p)
    phi = np.where(mask, rng.uniform(-0.5, 0.5, p.shape), 0.0)
    out = []
    for be in (gpu, cpu):
        sim = CahnHilliard(p, be)
        sim.set_field(phi)
        sim.step(steps)
        out.append(sim.field_numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-8)
    assert out[0][mask].sum() == pytest.approx(phi[mask].sum(), abs=1e-10)
    assert not out[0][~mask].any()
