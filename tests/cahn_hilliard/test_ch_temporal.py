"""Kernel E's temporal blocking (``ch_fused_tb``, issue #38) as CUDA source run on the CPU (the library
host device): k fused RK2 steps in one pass equal k single steps of kernel E (its default 2D warp march
and 3D register z-march) BIT FOR BIT on fresh random fields — 2D and 3D, every boundary, float32 and
float64, grids that are not multiples of the tile, k = 2, 3, 4 — and a step count not divisible by k
runs its remainder as single steps.  The GPU runs the same checks in test_ch_temporal_gpu.py."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import gpu
from kernels.backend import Backend
from kernels.cahn_hilliard import CHParams, temporal
from kernels.errors import InvalidParameter

CPU = Backend("cpu", np)
needs_host = pytest.mark.skipif(not gpu.available("host"), reason="needs the host device (a C++ compiler)")
BOUNDARIES = ("periodic", "mirror", "fixed")
# partial tiles / strips: 2D tiles are 64×64 outputs, warp-march strips 128 − 8k columns (two strips, the
# second partial; nx % 4 == 0: the 16-byte path, else the scalar one); 3D tiles 8×8×8, z-march frames
# 32×8 (scalar path); every extent ≥ 4k (k ≤ 4: 16)
BOX = {2: (37, 132), 3: (17, 18, 19)}
BOX_SCALAR_2D = (29, 130)


def _params(rng, dim, shape, boundary, dtype, **kw):
    return CHParams(dim=dim, size=shape[-1], dt=0.01 if dim == 2 else 0.004, boundary=boundary,
                    boundary_value=float(rng.uniform(-1, 1)), m=float(rng.uniform(0.5, 1.5)),
                    K=float(rng.uniform(0.5, 1.5)), dtype=dtype, variant="E", **kw)


def _stepper(p):
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    return CudaStepper(p, CPU)


def _single_steps(st, phi, n):
    a, b = phi.copy(), np.empty_like(phi)
    for _ in range(n):
        st.fused_step(a, b)
        a, b = b, a
    return a


def _check(rng, dim, boundary, dtype, k, impl, shape=None):
    shape = shape or BOX[dim]
    p = _params(rng, dim, shape, boundary, dtype)
    st = _stepper(p)
    phi = rng.uniform(-1, 1, shape).astype(dtype)
    want = _single_steps(st, phi, k)           # kernel E's default single step (2D wmarch, 3D zreg)
    if dim == 2:
        st.fused_impl = "wmarch" if impl == "wmarch" else "generic"
    else:
        st.fused_impl3d = "zreg" if impl == "zreg" else "generic"
    got = st.fused_steps(phi.copy(), np.full_like(phi, np.nan), k)
    assert np.isfinite(got).all(), "some outputs were never written"
    assert not np.array_equal(want, phi)
    np.testing.assert_array_equal(got, want)


# the fast set: each boundary × dimension × 2D kernel once, dtype and k rotating
FAST = [(2, "periodic", "float32", 2, "wmarch"), (2, "mirror", "float64", 3, "wmarch"),
        (2, "fixed", "float32", 4, "wmarch"), (2, "periodic", "float64", 3, "tile"),
        (2, "mirror", "float32", 2, "tile"), (2, "fixed", "float64", 2, "tile"),
        (3, "periodic", "float64", 2, "zreg"), (3, "mirror", "float32", 3, "zreg"),
        (3, "fixed", "float64", 4, "zreg"), (3, "periodic", "float32", 3, "tile"),
        (3, "fixed", "float64", 2, "tile")]
IDS = [f"{d}d-{b}-{t}-k{k}-{i}" for d, b, t, k, i in FAST]


@needs_host
@pytest.mark.parametrize("dim,boundary,dtype,k,impl", FAST, ids=IDS)
def test_fused_k_steps_equal_k_single_steps_bit_for_bit(dim, boundary, dtype, k, impl, rng):
    _check(rng, dim, boundary, dtype, k, impl)


@needs_host
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_warp_march_scalar_path(boundary, rng):
    """nx % 4 ≠ 0: the warp march's scalar loads and stores."""
    _check(rng, 2, boundary, str(rng.choice(["float32", "float64"])), int(rng.integers(2, 5)), "wmarch",
           BOX_SCALAR_2D)


@needs_host
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_zreg_chunks_and_vector_path(boundary, rng):
    """3D register z-march k-step kernel: several z chunks (a short last one) and the 16-byte path."""
    k = int(rng.integers(2, 5))
    shape = (23, 17, 52)
    dtype = str(rng.choice(["float32", "float64"]))
    p = _params(rng, 3, shape, boundary, dtype)
    st = _stepper(p)
    phi = rng.uniform(-1, 1, shape).astype(dtype)
    assert st.vec_ok(phi)
    want = _single_steps(st, phi, k)
    T = "float" if dtype == "float32" else "double"
    st.tb_zreg_shape = {**st.tb_zreg_shape, T: (8, 4, 5) + tuple(st.tb_zreg_shape[T][3:])}
    got = st.fused_steps(phi.copy(), np.full_like(phi, np.nan), k)
    np.testing.assert_array_equal(got, want)


SLOW = [(d, b, t, k, i) for d in (2, 3) for i in (("wmarch", "tile") if d == 2 else ("zreg", "tile"))
        for b in BOUNDARIES for t in ("float32", "float64") for k in (2, 3, 4)
        if (d, b, t, k, i) not in FAST]


@needs_host
@pytest.mark.slow
@pytest.mark.parametrize("dim,boundary,dtype,k,impl", SLOW, ids=[f"{d}d-{b}-{t}-k{k}-{i}" for d, b, t, k, i in SLOW])
def test_fused_k_steps_matrix(dim, boundary, dtype, k, impl, rng):
    _check(rng, dim, boundary, dtype, k, impl)


@needs_host
def test_step_runs_the_remainder_as_single_steps(rng):
    """7 steps with 3 per pass (3 + 3 + 1) == 7 single steps, through CudaStepper.step."""
    shape = BOX[2]
    boundary = str(rng.choice(BOUNDARIES))
    p1 = _params(rng, 2, shape, boundary, "float64", steps_per_pass="1")
    p3 = p1.with_changes(steps_per_pass="3")
    phi = rng.uniform(-1, 1, shape)
    st3 = _stepper(p3)
    assert st3.steps_per_pass() == 3
    got = st3.step(phi.copy(), 7)
    want = _stepper(p1).step(phi.copy(), 7)
    np.testing.assert_array_equal(got, want)
    names = [ln.name for ln in __import__("kernels.launches", fromlist=["recorded"]).recorded("cahn_hilliard")]
    assert any(n.startswith("CH ch_fused_wmarch2d_tb<double, ") and f"<double, {BOUNDARIES.index(boundary)}, 3, " in n
               for n in names)


@needs_host
def test_simulation_diagnostics_see_the_same_fields(rng):
    """A Simulation stepping 5 at a time with 2 steps per pass records what single steps record."""
    from kernels.cahn_hilliard.simulation import CahnHilliard as Simulation
    seed = int(rng.integers(1 << 30))
    runs = []
    for k in ("1", "2"):
        p = CHParams(dim=2, size=40, dt=0.01, variant="E", dtype="float64", seed=seed, steps_per_pass=k)
        sim = Simulation(p, CPU)
        for _ in range(2):
            sim.step(5)
        runs.append((sim.field_numpy().copy(), list(sim.history.energy), list(sim.history.mean)))
        assert sim.temporal_blocking() == {"steps_per_pass": int(k)}
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1] and runs[0][2] == runs[1][2]


def test_plan_and_auto_rule():
    assert temporal.plan(7, 3) == [3, 3, 1]
    assert temporal.plan(8, 4) == [4, 4]
    assert temporal.plan(2, 3) == [1, 1]
    assert temporal.plan(3, 1) == [1, 1, 1]
    big2 = CHParams(dim=2, size=1024, variant="E")
    assert temporal.requested(big2) == temporal.AUTO_K_2D
    assert temporal.requested(CHParams(dim=3, size=256, variant="E")) == temporal.AUTO_K_3D
    assert temporal.requested(big2.with_changes(steps_per_pass="4")) == 4


def test_auto_rule_follows_the_constants(monkeypatch):
    """auto picks AUTO_K_2D / AUTO_K_3D for kernel E on large fields only, and says so in the help."""
    monkeypatch.setattr(temporal, "AUTO_K_2D", 3)
    monkeypatch.setattr(temporal, "AUTO_K_3D", 2)
    assert temporal.requested(CHParams(dim=2, size=1024, variant="E")) == 3
    assert temporal.requested(CHParams(dim=2, size=1000, variant="E")) == 1
    assert temporal.requested(CHParams(dim=3, size=128, variant="E")) == 2
    assert temporal.requested(CHParams(dim=3, size=100, variant="E")) == 1
    assert temporal.requested(CHParams(dim=2, size=1024, variant="cpu-threads")) == 1
    assert temporal.auto_rule() == ("auto = 3 for kernel E on 2D fields of at least 1024² cells, 2 for kernel E "
                                    "on 3D fields of at least 128³ cells, else 1")
    monkeypatch.setattr(temporal, "AUTO_K_2D", 1)
    monkeypatch.setattr(temporal, "AUTO_K_3D", 1)
    assert temporal.auto_rule().startswith("auto = 1 (single steps)")


def test_fits_lowers_k_for_small_grids_and_shared_memory():
    p = CHParams(dim=2, size=10, variant="E", boundary="periodic", steps_per_pass="4")
    assert temporal.fits(p, 4, 4, None) == 2            # halo 4k ≤ 10
    assert temporal.fits(p.with_changes(boundary="fixed"), 4, 4, None) == 4   # fixed: no images needed
    p3 = CHParams(dim=3, size=256, variant="E")
    limit = 227 * 1024
    k = temporal.fits(p3, 4, 4, limit)
    assert temporal.smem_bytes(3, k, 4) <= limit and (k == 4 or temporal.smem_bytes(3, k + 1, 4) > limit)
    assert temporal.fits(p3, 4, 8, None) == 4


@pytest.mark.parametrize("bad", ["0", "5", "two", 5, True])
def test_params_reject_bad_steps_per_pass(bad):
    with pytest.raises(InvalidParameter, match="steps per pass"):
        CHParams(steps_per_pass=bad).validate()


def test_params_accept_steps_per_pass():
    for v in ("auto", "1", "2", "3", "4", 3):
        assert CHParams(steps_per_pass=v).validate().steps_per_pass == v
    assert "steps_per_pass" in CHParams().to_dict()


def test_cli_option(capsys):
    from cli.ch import add_model_options, given_params
    import argparse
    ap = argparse.ArgumentParser()
    add_model_options(ap)
    assert given_params(ap.parse_args(["--steps-per-pass", "3"]))["steps_per_pass"] == "3"
    with pytest.raises(SystemExit):
        ap.parse_args(["--steps-per-pass", "5"])


@needs_host
def test_benchmark_temporal_rows_on_the_host():
    """benchmarks/ch.py's temporal rows (the CPU part of ``--temporal --host``) on a small 2D grid."""
    from benchmarks.ch_temporal import BIT_ROW, temporal_results
    p = CHParams(dim=2, size=64, dt=0.01, variant="E")
    res = temporal_results(p, CPU, "host", steps=12, reps=1, quick=True)
    assert res[BIT_ROW] == "yes (k = 2, 3, 4)"
    for k in (1, 2, 3, 4):
        assert 0 < res[f"E k={k}"] < 10
    assert 0 < res["E k=2 shared tile"] < 10


# ---- cpu-threads (compiled C++ with OpenMP): ch_rk2_tb, bands with 4k halo rows per thread ----------
def _threads_case(rng, dim, boundary, dtype, k, threads):
    from kernels.cahn_hilliard.cpu_threads import ThreadedStepper
    n = 37 if dim == 2 else 19                  # bands of 13 / 7 rows with 3 threads: partial last band
    p = CHParams(dim=dim, size=n, dt=0.01 if dim == 2 else 0.004, boundary=boundary,
                 boundary_value=float(rng.uniform(-1, 1)), m=float(rng.uniform(0.5, 1.5)),
                 K=float(rng.uniform(0.5, 1.5)), dtype=dtype, variant="cpu-threads", threads=threads)
    phi = rng.uniform(-1, 1, (n,) * dim).astype(dtype)
    want = ThreadedStepper(p.with_changes(steps_per_pass="1"), CPU).step(phi.copy(), k)
    st = ThreadedStepper(p.with_changes(steps_per_pass=str(k)), CPU)
    assert st.steps_per_pass() == k
    got = st.fused_steps(phi.copy(), np.full_like(phi, np.nan), k)
    assert not np.array_equal(want, phi)
    np.testing.assert_array_equal(got, want)


THREADS_FAST = [(2, "periodic", "float32", 2, 3), (2, "mirror", "float64", 4, 2), (2, "fixed", "float32", 3, 1),
                (3, "periodic", "float64", 3, 2), (3, "mirror", "float32", 2, 3), (3, "fixed", "float64", 4, 3)]


@pytest.mark.parametrize("dim,boundary,dtype,k,threads", THREADS_FAST,
                         ids=[f"{d}d-{b}-{t}-k{k}-t{n}" for d, b, t, k, n in THREADS_FAST])
def test_cpu_threads_fused_k_steps_bit_for_bit(dim, boundary, dtype, k, threads, rng):
    _threads_case(rng, dim, boundary, dtype, k, threads)


THREADS_SLOW = [(d, b, t, k, n) for d in (2, 3) for b in BOUNDARIES for t in ("float32", "float64")
                for k in (2, 3, 4) for n in (1, 3) if (d, b, t, k, n) not in THREADS_FAST]


@pytest.mark.slow
@pytest.mark.parametrize("dim,boundary,dtype,k,threads", THREADS_SLOW,
                         ids=[f"{d}d-{b}-{t}-k{k}-t{n}" for d, b, t, k, n in THREADS_SLOW])
def test_cpu_threads_fused_matrix(dim, boundary, dtype, k, threads, rng):
    _threads_case(rng, dim, boundary, dtype, k, threads)


def test_cpu_threads_step_with_remainder(rng):
    """cpu-threads: 7 steps at 3 per pass == 7 single steps, and equal to the NumPy reference bit for bit."""
    from kernels.cahn_hilliard.cpu_threads import ThreadedStepper
    from kernels.cahn_hilliard.steppers import ReferenceStepper
    p = CHParams(dim=2, size=40, dt=0.01, boundary=str(rng.choice(BOUNDARIES)), dtype="float64",
                 variant="cpu-threads", threads=2, steps_per_pass="3")
    phi = rng.uniform(-1, 1, p.shape)
    got = ThreadedStepper(p, CPU).step(phi.copy(), 7)
    np.testing.assert_array_equal(got, ReferenceStepper(p.with_changes(variant="reference"), CPU).step(phi.copy(), 7))
