"""The Cahn–Hilliard array reference: stencil, integrators, conservation, stability."""
import itertools
import math

import numpy as np
import pytest

from kernels.cahn_hilliard import CahnHilliard, CHParams
from kernels.cahn_hilliard import diagnostics, stencil
from kernels.cahn_hilliard.params import stability_limit
from kernels.cahn_hilliard.steppers import ReferenceStepper, SpectralStepper
from kernels.errors import GridTooLarge, InvalidParameter, SimulationBlowUp


def loop_rhs(phi, p):
    """Direct per-cell 13-point (2D) formula with explicit ghost rules: an independent check."""
    n = phi.shape[0]

    def get(i, j):
        if p.boundary == "periodic":
            return phi[i % n, j % n]
        if p.boundary == "mirror":
            def r(k):
                return -k - 1 if k < 0 else (2 * n - k - 1 if k >= n else k)
            return phi[r(i), r(j)]
        if 0 <= i < n and 0 <= j < n:
            return phi[i, j]
        return p.boundary_value

    def lap(f, i, j):
        return (f(i + 1, j) + f(i - 1, j) + f(i, j + 1) + f(i, j - 1) - 4 * f(i, j)) / p.dx ** 2

    def mu(i, j):
        v = get(i, j)
        return -p.b * v + p.u * v ** 3 - p.K * lap(get, i, j)

    out = np.empty_like(phi)
    for i in range(n):
        for j in range(n):
            out[i, j] = p.m * lap(mu, i, j)
    return out


@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_stencil_matches_direct_loop(boundary, rng):
    p = CHParams(size=9, boundary=boundary, boundary_value=-0.7, m=1.3, b=0.8, u=1.1, K=0.6, dx=0.9)
    phi = rng.uniform(-1, 1, (9, 9))
    np.testing.assert_allclose(stencil.rhs(phi, p), loop_rhs(phi, p), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim", [2, 3])
def test_linear_fourier_mode_is_an_eigenfunction(dim, rng):
    """With b = u = 0 (pure K∇⁴), a lattice Fourier mode decays with rate m K Λ(k)²."""
    n = 16
    p = CHParams(size=n, dim=dim, b=0.0, u=0.0, K=0.7, m=1.9, dx=1.0)
    ks = rng.integers(0, n, size=dim)
    grids = np.meshgrid(*[np.arange(n)] * dim, indexing="ij")
    phase = sum(2 * math.pi * k * g / n for k, g in zip(ks, grids))
    phi = np.cos(phase)
    lam = sum(4 * math.sin(math.pi * k / n) ** 2 for k in ks)
    np.testing.assert_allclose(stencil.rhs(phi, p), -p.m * p.K * lam ** 2 * phi, atol=1e-10)


@pytest.mark.parametrize("dim,boundary,integrator",
                         list(itertools.product([2, 3], ["periodic", "mirror"], ["euler", "rk2"]))
                         + [(2, "periodic", "spectral"), (3, "periodic", "spectral")])
def test_mean_conserved_and_energy_non_increasing(dim, boundary, integrator, cpu, rng):
    n = 48 if dim == 2 else 16
    dt = 0.01 if dim == 2 else 0.005
    if integrator == "spectral":
        dt *= 10
    p = CHParams(size=n, dim=dim, boundary=boundary, integrator=integrator, dt=dt, initial="file")
    f0 = rng.uniform(-0.5, 0.5, (n,) * dim).astype(np.float32) + rng.uniform(-0.3, 0.3)
    sim = CahnHilliard(p, cpu, field0=f0)
    for _ in range(10):
        sim.step(10)
    h = sim.history
    assert abs(h.mean[-1] - h.mean[0]) < 1e-6
    e = np.array(h.energy)
    assert np.all(np.diff(e) <= 1e-6 * np.abs(e[:-1]).max()), e
    assert e[-1] < e[0]


def _run(phi0, p, t_end, cpu):
    st = ReferenceStepper(p, cpu)
    n = int(round(t_end / p.dt))
    return st.step(phi0.copy(), n)


def test_rk2_second_order_euler_first_order(cpu, rng):
    n = 24
    phi0 = rng.uniform(-0.6, 0.6, (n, n))
    # smooth the start so the error is dominated by time stepping, not by stiff noise
    for _ in range(3):
        phi0 = 0.2 * (phi0 + np.roll(phi0, 1, 0) + np.roll(phi0, -1, 0) + np.roll(phi0, 1, 1) + np.roll(phi0, -1, 1))
    t_end = 0.4
    base = CHParams(size=n, dtype="float64", initial="file")
    ref = _run(phi0, base.with_changes(dt=0.02 / 64, integrator="rk2"), t_end, cpu)
    for integ, order in (("rk2", 2), ("euler", 1)):
        errs = [np.linalg.norm(_run(phi0, base.with_changes(dt=dt, integrator=integ), t_end, cpu) - ref)
                for dt in (0.02, 0.01, 0.005)]
        rates = [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
        assert all(abs(r - order) < 0.25 for r in rates), (integ, errs, rates)


def test_stability_limit_value():
    assert stability_limit(CHParams()) == pytest.approx(0.025)
    assert stability_limit(CHParams(dim=3)) == pytest.approx(2 / 168)
    p = CHParams(m=2.0, b=0.5, K=3.0, dx=0.5)
    lam = 8 / 0.25
    assert stability_limit(p) == pytest.approx(2 / (2.0 * (2 * 0.5 * lam + 3.0 * lam ** 2)))


@pytest.mark.parametrize("integrator", ["euler", "rk2"])
def test_below_limit_bounded_above_limit_caught(integrator, cpu):
    base = CHParams(size=32, integrator=integrator, dtype="float64", noise=0.3, seed=3)
    dtm = stability_limit(base)
    sim = CahnHilliard(base.with_changes(dt=0.97 * dtm), cpu)
    sim.step(3000)  # t ≈ 73: phases saturated at ±1, the stiffest modes at their largest rate
    assert np.abs(sim.field_numpy()).max() < 1.2
    sim = CahnHilliard(base.with_changes(dt=1.25 * dtm), cpu)
    with pytest.raises(SimulationBlowUp, match="dt"):
        for _ in range(60):
            sim.step(50)
    f = sim.field_numpy()
    assert np.isfinite(f).all() and np.abs(f).max() <= 1e3  # last good field kept


def test_spectral_stable_at_50x_explicit_limit(cpu, rng):
    p = CHParams(size=64, integrator="spectral", initial="file")
    p = p.with_changes(dt=50 * stability_limit(p))
    f0 = rng.uniform(-0.1, 0.1, (64, 64)).astype(np.float32)
    sim = CahnHilliard(p, cpu, field0=f0)
    for _ in range(20):
        sim.step(5)
    f = sim.field_numpy()
    assert np.abs(f).max() < 1.2
    assert abs(sim.history.mean[-1] - sim.history.mean[0]) < 1e-5
    e = np.array(sim.history.energy)
    assert np.all(np.diff(e) <= 1e-6 * abs(e).max())


def test_spectral_converges_to_explicit_solution_first_order(cpu, rng):
    """Same discrete operator: the stabilised semi-implicit scheme converges (O(dt)) to RK2's answer."""
    n = 32
    phi0 = rng.uniform(-0.5, 0.5, (n, n))
    p = CHParams(size=n, dtype="float64", initial="file", dt=0.0005)
    a = _run(phi0, p.with_changes(integrator="rk2"), 0.4, cpu)
    errs = []
    for dt in (0.004, 0.002, 0.001):
        sp = SpectralStepper(p.with_changes(integrator="spectral", dt=dt), cpu)
        errs.append(np.linalg.norm(sp.step(phi0.copy(), int(round(0.4 / dt))) - a) / np.linalg.norm(a))
    assert errs[-1] < 5e-3
    for i in range(2):
        assert 1.6 < errs[i] / errs[i + 1] < 2.4, errs


def test_length_scale_of_a_stripe_pattern():
    n, wl = 128, 16
    x = np.arange(n)
    phi = np.tile(np.sin(2 * math.pi * x / wl), (n, 1))
    assert diagnostics.length_scale(phi) == pytest.approx(wl, rel=1e-9)
    k, S = diagnostics.structure_factor(phi, nbins=64)
    assert k[np.argmax(S)] == pytest.approx(2 * math.pi / wl, abs=math.pi / 64)


def test_coarsening_exponent_near_one_third(cpu):
    """Late-stage coarsening L ∝ t^(1/3) (Lifshitz–Slyozov), via the fast spectral stepper."""
    p = CHParams(size=128, integrator="spectral", dt=0.5, seed=7, dtype="float64")
    sim = CahnHilliard(p, cpu)
    for _ in range(60):
        sim.step(20)
    alpha = sim.coarsening_exponent()
    assert 0.2 < alpha < 0.45, alpha


def test_droplets_start_as_a_25_75_binary_mixture(cpu):
    sim = CahnHilliard(CHParams(size=256, initial="droplets", boundary="fixed", seed=11), cpu)
    f = sim.field_numpy()
    assert set(np.unique(f)) == {-1.0, 1.0}
    assert (f > 0).mean() == pytest.approx(0.25, abs=0.01)   # 5σ of the binomial spread
    sim = CahnHilliard(CHParams(size=256, initial="droplets", mean=0.2, seed=11), cpu)
    assert (sim.field_numpy() > 0).mean() == pytest.approx(0.6, abs=0.01)


@pytest.mark.parametrize("bad,msg", [
    (dict(dt=-1), "dt"), (dict(size=4), "size"), (dict(dim=4), "dim"), (dict(boundary="x"), "boundary"),
    (dict(m=float("nan")), "m"), (dict(integrator="spectral", boundary="fixed"), "periodic"),
    (dict(variant="E", integrator="euler"), "rk2"), (dict(noise=-1), "noise"),
])
def test_invalid_parameters_refused_with_reason(bad, msg):
    with pytest.raises(InvalidParameter, match=msg):
        CHParams(**bad).validate()


def test_grid_too_large_refused_before_allocating(cpu, monkeypatch):
    """The estimate is checked against the memory actually free, before any allocation."""
    free = 256 << 20
    monkeypatch.setattr(cpu, "free_memory", lambda: free)
    sim = CahnHilliard(CHParams(size=256), cpu)          # ~8 MiB: fits
    calls = []
    monkeypatch.setattr(np, "empty_like", lambda *a, **k: calls.append(a) or pytest.fail("allocated"))
    with pytest.raises(GridTooLarge, match=r"needs about .* GiB .* 0\.25 GiB of host memory"):
        sim.reset(CHParams(size=4096))                    # ~0.8 GiB: refused
    assert sim.params.size == 256 and sim.phi.shape == (256, 256)   # old run intact
    assert not calls


def test_grid_too_large_for_this_machine(cpu):
    from kernels.cahn_hilliard.simulation import estimate_bytes
    p = CHParams(dim=3, size=1024, dtype="float64")
    if estimate_bytes(p, 10) <= cpu.free_memory():
        pytest.skip("this machine has room even for the largest grid")
    with pytest.raises(GridTooLarge, match="host memory"):
        CahnHilliard(p, cpu)


def test_live_and_reset_parameter_changes(cpu):
    sim = CahnHilliard(CHParams(size=32), cpu)
    assert sim.set_params(dt=0.005, K=0.5) == []
    assert sim.params.dt == 0.005 and sim.stepper.params.K == 0.5
    assert sim.set_params(size=64) == ["size"]
    assert sim.params.size == 32
    with pytest.raises(InvalidParameter):
        sim.set_params(dt=0)


def test_loaded_field_is_not_modified(cpu, rng):
    f0 = rng.uniform(-0.2, 0.2, (32, 32)).astype(np.float32)
    keep = f0.copy()
    sim = CahnHilliard(CHParams(size=32, initial="file"), cpu, field0=f0)
    sim.step(20)
    np.testing.assert_array_equal(f0, keep)
    assert not np.array_equal(sim.field_numpy(), keep)
