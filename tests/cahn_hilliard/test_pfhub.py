"""PFHub benchmark 1 on the CPU: the mapping, the initial free energy against the analytic integral,
adaptive steps (each accepted one lowers F), the T mask's no-flux, rectangles, the cosine stepper,
presets through sessions, and the ``ch`` options and bad inputs (kernels.cahn_hilliard.pfhub)."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import cli
from kernels.cahn_hilliard import domains, pfhub, stencil
from kernels.cahn_hilliard.diagnostics import free_energy
from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.simulation import CahnHilliard
from kernels.cahn_hilliard.steppers import CosineStepper, cosine_symbol, make_stepper
from kernels.errors import InvalidParameter, Unsupported


def periodic_lap(g, dx):
    return (np.roll(g, 1, 0) + np.roll(g, -1, 0) + np.roll(g, 1, 1) + np.roll(g, -1, 1) - 4 * g) / dx ** 2


# ------------------------------------------------------------------ the mapping
def test_mapping_reproduces_the_benchmark_energy_and_dynamics(rng, cpu):
    c = rng.uniform(0.2, 0.8, size=(24, 40))
    phi = (c - 0.5) / 0.2
    f_chem = 5.0 * (c - 0.3) ** 2 * (0.7 - c) ** 2
    ours = -0.5 * pfhub.B * phi ** 2 + 0.25 * pfhub.U * phi ** 4 + pfhub.F_OFFSET_DENSITY
    np.testing.assert_allclose(ours, f_chem, rtol=1e-12, atol=1e-15)
    # ∂c/∂t of the benchmark, with the same discrete Laplacian, equals A·(our F(φ))
    dx = rng.uniform(0.5, 2.0)
    dfdc = 2 * 5.0 * (c - 0.3) * (0.7 - c) * (0.7 - c) - 2 * 5.0 * (c - 0.3) ** 2 * (0.7 - c)
    dcdt = 5.0 * periodic_lap(dfdc - 2.0 * periodic_lap(c, dx), dx)
    p = CHParams(m=pfhub.M_OURS, b=pfhub.B, u=pfhub.U, K=pfhub.K_GRAD, dx=dx, size=40, size_y=24,
                 dtype="float64")
    np.testing.assert_allclose(0.2 * stencil.rhs(phi, p), dcdt, rtol=1e-9, atol=1e-13)
    assert (pfhub.B, pfhub.K_GRAD, pfhub.M_OURS) == pytest.approx((0.032, 0.08, 125.0))


# ------------------------------------------------------------------ the initial free energy
def testinitial_gradient_is_exact(rng):
    x, y = rng.uniform(0, 200, 50), rng.uniform(0, 200, 50)
    h = 1e-5
    gx, gy = pfhub.initial_gradient(x, y)
    fdx = (pfhub.initial_c(x + h, y) - pfhub.initial_c(x - h, y)) / (2 * h)
    fdy = (pfhub.initial_c(x, y + h) - pfhub.initial_c(x, y - h)) / (2 * h)
    np.testing.assert_allclose(gx, fdx, atol=1e-9)
    np.testing.assert_allclose(gy, fdy, atol=1e-9)


def test_initial_free_energy_matches_the_analytic_integral(cpu):
    exact = pfhub.analytic_initial_energy()
    assert exact == pytest.approx(pfhub.analytic_initial_energy(nodes=40), rel=1e-12)   # converged
    # a brute-force midpoint sum of the analytic integrand on a 1000² grid agrees
    n = 1000
    x = (np.arange(n) + 0.5) * 200.0 / n
    c = pfhub.initial_c(x[None, :], x[:, None])
    gx, gy = pfhub.initial_gradient(x[None, :], x[:, None])
    brute = ((5 * (c - 0.3) ** 2 * (0.7 - c) ** 2 + (gx ** 2 + gy ** 2)).sum()) * (200.0 / n) ** 2
    assert brute == pytest.approx(exact, rel=1e-6)
    # the discrete F of the no-flux set-up (no jump at the edges) converges to it in dx
    errs = []
    for dx in (2.0, 1.0, 0.5):
        p = pfhub.preset_params("pfhub-1b", dx=dx)
        sim = CahnHilliard(p, cpu)
        errs.append(abs(pfhub.benchmark_energy(free_energy(sim.phi, p), p) - exact))
    assert errs[1] < 2e-6 * exact and errs[2] < errs[1] < errs[0]


# ------------------------------------------------------------------ adaptive steps
@pytest.mark.parametrize("name,changes", [("pfhub-1a", dict(size=48, size_y=32)),
                                          ("pfhub-1b", dict(size=32, size_y=40)),
                                          ("pfhub-1a", dict(size=24, integrator="rk2"))])
def test_each_accepted_adaptive_step_lowers_the_energy(cpu, rng, name, changes):
    p = pfhub.preset_params(name, **changes)
    sim = CahnHilliard(p, cpu)
    sim.set_field(sim.field_numpy() + rng.uniform(-0.05, 0.05, p.shape))
    mass = sim.field_numpy().sum()
    t_end = 1.0 if p.integrator == "rk2" else 50.0
    res = pfhub.run(sim, t_end=t_end, stop_rate=None)
    assert sim.t == t_end and res.steps >= 5
    assert np.all(np.diff(res.free_energy) < 0)
    assert sim.field_numpy().sum() == pytest.approx(mass, abs=1e-9 * p.cells)
    dts = np.array(res.dt[1:])
    if p.integrator == "rk2":                                  # grows to the explicit limit, never beyond
        from kernels.cahn_hilliard.params import stability_limit
        assert dts.max() == pytest.approx(stability_limit(p)) and dts.min() < 0.5 * dts.max()
    else:
        assert dts.max() > 20 * dts.min()                       # the step adapts


def test_tighter_tolerance_gives_a_closer_answer(cpu):
    """Step doubling converges: F(t) at two tolerances against a tight one."""
    out = {}
    for tol in (3e-2, 3e-3, 1e-4):
        sim = CahnHilliard(pfhub.preset_params("pfhub-1a", size=24, tolerance=tol), cpu)
        out[tol] = pfhub.run(sim, t_end=40.0, stop_rate=None).free_energy[-1]
    assert abs(out[3e-3] - out[1e-4]) < abs(out[3e-2] - out[1e-4])


def test_stopping_rule_ends_the_run_at_equilibrium(cpu):
    sim = CahnHilliard(pfhub.preset_params("pfhub-1b", size=16), cpu)
    res = pfhub.run(sim, t_end=1e9, stop_rate=1e-9)
    assert res.reason.startswith("equilibrium") and sim.t < 1e9
    rate = abs(res.free_energy[-1] - res.free_energy[-2]) / res.dt[-1] / pfhub.volume(sim.params)
    assert rate < 1e-9


# ------------------------------------------------------------------ the T mask
def test_t_shape_geometry():
    m = domains.TShapeDomain.mask((120, 100), 1.0)
    assert m.sum() == 100 * 20 + 20 * 100
    assert m[100:].all() and not m[:100, :40].any() and not m[:100, 60:].any() and m[:100, 40:60].all()
    with pytest.raises(InvalidParameter, match="100 × 120"):
        domains.TShapeDomain.mask((100, 100), 1.0)


def test_masked_operator_on_a_full_box_is_the_mirror_stencil(rng):
    shape = tuple(rng.integers(8, 20, size=2))
    p = CHParams(size=shape[1], size_y=shape[0], boundary="mirror", dtype="float64",
                 b=rng.uniform(0.5, 2), u=rng.uniform(0.5, 2), K=rng.uniform(0.5, 2), dx=rng.uniform(0.5, 2))
    phi = rng.uniform(-1, 1, shape)
    w = domains.link_weights(np.ones(shape, bool))
    np.testing.assert_allclose(domains.masked_update(phi, phi, 0.01, p, w), stencil.update(phi, phi, 0.01, p),
                               rtol=1e-12, atol=1e-12)
    assert domains.masked_free_energy(phi, p, np.ones(shape, bool)) == pytest.approx(free_energy(phi, p),
                                                                                      rel=1e-12)


@pytest.mark.parametrize("integrator", ["rk2", "spectral"])
def test_t_mask_conserves_mass_and_keeps_the_outside(cpu, rng, integrator):
    p = pfhub.preset_params("pfhub-1c", dx=2.0, integrator=integrator, adaptive=False,
                            dt=0.002 if integrator == "rk2" else 5.0)
    sim = CahnHilliard(p, cpu)
    mask = domains.domain_mask(p)
    sim.set_field(np.where(mask, rng.uniform(-0.5, 0.5, p.shape), 0.0))
    mass, e0 = sim.field_numpy()[mask].sum(), free_energy(sim.phi, p)
    sim.step(100 if integrator == "rk2" else 10)
    phi = sim.field_numpy()
    assert phi[~mask].max() == 0 and phi[~mask].min() == 0
    assert phi[mask].sum() == pytest.approx(mass, abs=1e-11)
    assert free_energy(sim.phi, p) < e0
    with pytest.raises(InvalidParameter, match="masked"):
        make_stepper(p.with_changes(integrator="spectral", boundary="periodic"), cpu)
    with pytest.raises(InvalidParameter, match="masked"):
        make_stepper(p.with_changes(integrator="rk2", variant="cpu-threads"), cpu)


def test_masked_spectral_stepper_converges_to_the_explicit_solution(cpu, rng):
    """First order in dt towards masked RK2 at a small step (the same discrete operator)."""
    base = pfhub.preset_params("pfhub-1c", dx=2.0, adaptive=False)
    mask = domains.domain_mask(base)
    phi = np.where(mask, rng.uniform(-0.5, 0.5, base.shape), 0.0)

    def run(integrator, dt, t=0.4):
        sim = CahnHilliard(base.with_changes(integrator=integrator, dt=dt), cpu)
        sim.set_field(phi)
        sim.step(int(round(t / dt)))
        return sim.field_numpy()
    ref = run("rk2", 0.001)
    e1, e2 = (np.abs(run("spectral", dt) - ref).max() for dt in (0.02, 0.01))
    assert e2 < 0.65 * e1 and e2 < 0.05


# ------------------------------------------------------------------ rectangles
@pytest.mark.parametrize("integrator,boundary", [("rk2", "periodic"), ("rk2", "mirror"), ("spectral", "periodic"),
                                                 ("spectral", "mirror")])
def test_rectangle_equals_square_at_equal_sides(cpu, rng, integrator, boundary):
    n = int(rng.integers(12, 24))
    phi = rng.uniform(-0.3, 0.3, (n, n))
    base = dict(size=n, boundary=boundary, integrator=integrator, dtype="float64", dt=0.02, initial="spinodal")
    a, b = CahnHilliard(CHParams(**base), cpu), CahnHilliard(CHParams(**base, size_y=n), cpu)
    for s in (a, b):
        s.set_field(phi)
        s.step(20)
    np.testing.assert_array_equal(a.field_numpy(), b.field_numpy())


@pytest.mark.parametrize("integrator", ["rk2", "spectral"])
@pytest.mark.parametrize("dim", [2, 3])
def test_a_periodic_rectangle_tiles_its_square(cpu, rng, integrator, dim):
    """A periodic nx × (nx/2) rectangle evolves like each half of the nx × nx square made of two copies."""
    n = 16
    half_shape = (n // 2, n) if dim == 2 else (n, n // 2, n)
    axis = 0 if dim == 2 else 1
    phi = rng.uniform(-0.3, 0.3, half_shape)
    kw = dict(size=n, dim=dim, integrator=integrator, dtype="float64", dt=0.005)
    rect = CahnHilliard(CHParams(**kw, size_y=n // 2), cpu)
    sq = CahnHilliard(CHParams(**kw), cpu)
    rect.set_field(phi)
    sq.set_field(np.concatenate([phi, phi], axis=axis))
    rect.step(15); sq.step(15)
    got = sq.field_numpy()
    first = got[: n // 2] if dim == 2 else got[:, : n // 2]
    np.testing.assert_allclose(first, rect.field_numpy(), rtol=0, atol=1e-12)


def test_rectangles_refused_by_square_only_variants(cpu):
    with pytest.raises(InvalidParameter, match="square"):
        make_stepper(CHParams(size=32, size_y=16, variant="cpu-threads"), cpu)


# ------------------------------------------------------------------ the cosine stepper
def test_cosine_symbol_diagonalises_the_mirror_laplacian(rng, cpu):
    import scipy.fft as sf
    shape = tuple(rng.integers(6, 18, size=2))
    dx = rng.uniform(0.5, 2)
    g = rng.standard_normal(shape)
    spec = sf.idctn(-cosine_symbol(shape, dx) * sf.dctn(g, type=2, norm="ortho"), type=2, norm="ortho")
    fd = domains.masked_laplacian(g, [w.astype(float) for w in domains.link_weights(np.ones(shape, bool))], dx * dx)
    np.testing.assert_allclose(spec, fd, atol=1e-10)



def test_spectral_mirror_runs_the_cosine_stepper(cpu):
    assert isinstance(make_stepper(CHParams(boundary="mirror", integrator="spectral", size=16), cpu), CosineStepper)


# ------------------------------------------------------------------ presets and sessions
@pytest.mark.parametrize("name", ["pfhub-1a", "pfhub-1b", "pfhub-1c"])
def test_presets_round_trip_through_sessions(cpu, name):
    p = pfhub.preset_params(name)
    assert pfhub.preset_name(p) == name
    sim = CahnHilliard(p, cpu)
    sim.step(3)
    state = json.loads(json.dumps({**sim.state_dict(), "phi": None}))       # params as a session holds them
    state["phi"] = sim.field_numpy()
    other = CahnHilliard(CHParams(size=16), cpu)
    other.load_state_dict(state)
    assert other.params == p and other.t == sim.t
    np.testing.assert_array_equal(other.field_numpy(), sim.field_numpy())


def test_presets_refuse_1d_and_unknown_names():
    with pytest.raises(Unsupported, match="sphere"):
        pfhub.preset_params("pfhub-1d")
    with pytest.raises(InvalidParameter, match="unknown PFHub preset"):
        pfhub.preset_params("pfhub-9")
    with pytest.raises(InvalidParameter, match="divide"):
        pfhub.preset_params("pfhub-1a", dx=0.7)


def test_gui_presets_file_matches_the_module():
    from importlib.resources import files
    data = json.loads(files("resources.presets").joinpath("cahn_hilliard.json").read_text())
    found = {"pfhub-" + e["name"][6:]: e for e in data["presets"] if e["name"].startswith("PFHub ")}
    assert set(found) == {"pfhub-1a", "pfhub-1b", "pfhub-1c"}
    for name, entry in found.items():
        prm = {k: v for k, v in entry["params"].items() if k in CHParams.__dataclass_fields__}
        assert CHParams().with_changes(**prm) == pfhub.preset_params(name)


def test_posted_curve_reader(tmp_path, rng):
    t = np.sort(rng.uniform(0, 1e4, 20)); f = rng.uniform(10, 300, 20)
    path = tmp_path / "posted.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh); w.writerow(["time", "total_energy"]); w.writerows(zip(t, f))
    tt, ff = pfhub.read_posted_curve(path)
    np.testing.assert_array_equal(tt, t); np.testing.assert_array_equal(ff, f)
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InvalidParameter, match="time"):
        pfhub.read_posted_curve(tmp_path / "bad.csv")


# ------------------------------------------------------------------ the ch command
def ch(capsys, *args):
    code = cli.main(["--backend", "cpu", "ch", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_ch_preset_energy_csv_and_fields(tmp_path, capsys):
    csv_path, npz = tmp_path / "F.csv", tmp_path / "field.npz"
    code, out, err = ch(capsys, "--preset", "pfhub-1a", "--size", 24, "--size-y", 20, "--t-end", 1000, "--adaptive",
                        "--energy-csv", csv_path, "--save-field", npz, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["t"] == 1000 and res["steps"] > 3 and res["preset"] is None   # resized: no longer 1a
    rows = list(csv.reader(open(csv_path)))
    assert rows[0] == ["time", "free_energy"]
    t, f = np.array(rows[1:], float).T
    assert t[0] == 0 and t[-1] == 1000 and np.all(np.diff(t) > 0) and np.all(np.diff(f) < 0)
    assert f[0] == pytest.approx(res["free_energy_initial"]) and f[-1] == pytest.approx(res["free_energy_final"])
    with np.load(npz) as z:
        assert "c = 0.5 + 0.2 phi" in str(z["mapping"]) and z["phi"].shape == (20, 24)
        assert list(z["snapshot_times"]) == [1000.0] and z["phi_t0001000"].shape == (20, 24)
        np.testing.assert_array_equal(z["phi_t0001000"], z["phi"])


@pytest.mark.parametrize("args,fragment", [
    (("--preset", "pfhub-1d", "--t-end", 10), "sphere"),
    (("--preset", "pfhub-1a", "--energy-csv", "{o}/F.csv"), "needs --t-end"),
    (("--preset", "pfhub-1a", "--t-end", 10, "--energy-csv", "{o}/F.png"), "'.png'"),
    (("--preset", "pfhub-1c", "--boundary", "periodic", "--t-end", 1), "masked"),
    (("--size", 32, "--size-y", 16, "--variant", "cpu-threads", "--steps", 1), "square"),
    (("--preset", "pfhub-1a", "--dx", 0.7, "--t-end", 1), "divide"),
    (("--preset", "pfhub-1a", "--t-end", -1), "--t-end"),
    (("--size-y", 5, "--steps", 1), "size_y"),
    (("--dt-floor", 1, "--dt-ceiling", 0.5, "--steps", 1), "dt_floor"),
])
def test_ch_bad_inputs(tmp_path, capsys, args, fragment):
    code, out, err = ch(capsys, *[str(a).replace("{o}", str(tmp_path)) for a in args])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], err
    assert not list(tmp_path.iterdir())                        # nothing written
