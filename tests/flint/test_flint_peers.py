"""Issue 38's Flint peers (benchmarks/peers): the hand-written LR-1991 CUDA kernel, run on the CPU
through the host compiler, integrates Flint's equations (to rounding: libm's exp against
NumPy's) on fresh random states; diffrax / jax.jit against the NumPy runtime where they import;
the hand-written kernel on the GPU (``gpu``)."""
import sys

import numpy as np
import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT))
from benchmarks.peers import flint_jax as FJ  # noqa: E402
from benchmarks.peers.lr1991_cuda import host_run, initial_states  # noqa: E402
from kernels.flint import Simulation, load_model  # noqa: E402


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991")


def random_states(lr, rng, n):
    """Initial states perturbed per cell (gates stay in (0, 1), Cai > 0)."""
    y = initial_states(lr, n)
    y[0] += rng.uniform(-2, 2, n)                       # away from the removable 0/0 at V = -47.13, -77
    y[1:7] = np.clip(y[1:7] * rng.uniform(0.8, 1.2, (6, n)), 1e-6, 1 - 1e-6)
    y[7] *= rng.uniform(0.8, 1.2, n)
    return y


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_hand_written_kernel_integrates_flints_equations(lr, integrator):
    rng = np.random.default_rng()
    n, steps, step0 = int(rng.integers(2, 9)), int(rng.integers(800, 1600)), int(rng.integers(0, 600))
    y0 = random_states(lr, rng, n)
    sim = Simulation(lr, "cpu", n=n, integrator=integrator)
    sim.set_state(y0)
    sim.advance(step0, 0.01)                            # the stimulus (t = 10–12 ms) inside either part
    mid = sim.state()
    sim.advance(steps, 0.01)
    got = host_run(mid, steps, 0.01, step0=step0, rk4=integrator == "rk4")
    np.testing.assert_allclose(got, sim.state(), rtol=1e-11, atol=1e-13)   # libm's exp vs NumPy's: ulps
    assert not np.allclose(host_run(mid, steps, 0.01, step0=step0 + 5000), got)   # t matters: the stimulus


@pytest.mark.slow
def test_jax_and_diffrax_peers_match_numpy(lr):
    why = FJ.available()
    if why:
        pytest.skip(why)
    rng = np.random.default_rng()
    n, steps = 3, int(rng.integers(1200, 1600))
    ref = Simulation(lr, "cpu", n=n)
    ref.advance(steps, 0.01)
    run, y0 = FJ.fori_euler(lr, n, 0.01)
    np.testing.assert_allclose(np.asarray(run(y0, 0, steps)), ref.state(), rtol=1e-10)
    run, y0 = FJ.diffrax_solve(lr, n, steps, 0.01, "euler")
    y, ns = run(y0)
    assert np.asarray(ns).tolist() == [steps] * n
    np.testing.assert_allclose(np.asarray(y).T, ref.state(), rtol=1e-9)
    rk = Simulation(lr, "cpu", n=n, integrator="rk4")
    rk.advance(steps, 0.01)
    run, y0 = FJ.diffrax_solve(lr, n, steps, 0.01, "dopri5")
    np.testing.assert_allclose(np.asarray(run(y0)[0]).T, rk.state(), rtol=1e-2)


@pytest.mark.gpu
def test_hand_written_kernel_on_the_gpu_matches_the_host(lr):
    from benchmarks.peers.lr1991_cuda import HandLR91
    rng = np.random.default_rng()
    y0 = random_states(lr, rng, 300)
    for rk4 in (False, True):
        k = HandLR91(y0, block=64, options=("-std=c++14", "--fmad=false"))
        k.run(1500, 0.01, rk4)
        np.testing.assert_allclose(k.state(), host_run(y0, 1500, 0.01, rk4=rk4), rtol=1e-11, atol=1e-13)
