"""Flint runtimes ``c`` and ``c-is`` (kernels/flint/host_c.py): the TS runtime's generated CUDA C and
the IS bytecode interpreter compiled for host cores (paper 004 Table 5.4's CPU-1 TS / IS, CPU-8 with
threads) agree with the NumPy runtime to 1e-10 relative in float64 for ensembles with per-member
parameters, lines and rings, Euler and RK4, and a flattened network."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from kernels.errors import BackendUnavailable, InvalidParameter, SimulationBlowUp
from support.paths import ROOT

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                                reason="no host C++ compiler (g++/clang++)")


@pytest.fixture(scope="module")
def lr():
    from kernels.flint import load_model
    return load_model("luo_rudy_1991.flint")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    """A private library cache, so the tests compile (and test) from scratch."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg"))


def _close(a, b, tol=1e-10):
    """Relative error per variable, scaled by its magnitude over the run (gates can be ~1e-8)."""
    assert a.shape == b.shape
    scale = np.abs(b).max(axis=(0, 2), keepdims=True)
    err = np.abs(a - b) / np.maximum(scale, 1e-300)
    assert err.max() <= tol, err.max()


HOST = ["c", "c-is"]


#: NumPy reference runs by name, made once a worker: the ``c`` and ``c-is`` cases of a test with fixed
#: inputs compare against the same run (a test with fresh random inputs makes its own)
_REFERENCE: dict = {}


def _pair(model, steps, every=25, runtime="c", reference=None, **kw):
    """[(times, samples, sim) of the NumPy runtime, the same of ``runtime``]; ``reference``: a name
    under which the NumPy run is kept for the next case with the same inputs."""
    from kernels.flint import Simulation

    def run(rt):
        sim = Simulation(model, runtime=rt, **kw)
        return sim.advance(steps, 0.01, every=every) + (sim,)
    if reference is None:
        return [run("cpu"), run(runtime)]
    if reference not in _REFERENCE:
        _REFERENCE[reference] = run("cpu")
    return [_REFERENCE[reference], run(runtime)]


@pytest.mark.parametrize("runtime", HOST)
@pytest.mark.parametrize("integrator, steps", [("euler", 2500), ("rk4", 1200)])
def test_c_matches_numpy_ensemble(lr, integrator, steps, runtime):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    n = 37
    member = {"g_Na": rng.uniform(15, 25, n), "g_si": rng.uniform(0.06, 0.1, n)}
    (t_ref, ref, _), (t_c, got, sim) = _pair(lr, steps, n=n, member_params=member, integrator=integrator,
                                             runtime=runtime, threads=1 + (integrator == "rk4"))
    assert np.array_equal(t_c, t_ref)
    _close(got, ref)
    assert ref[:, 0].max() > 20, f"seed {seed}: no upstroke in the window"
    assert sim.steps == steps and sim.state().shape == (lr.n_states, n)


@pytest.mark.parametrize("runtime", HOST)
def test_c_matches_numpy_ring_and_line(lr, runtime):
    from kernels.flint import Network
    from kernels.flint.runtimes import network_stimulus
    ring = Network("ring", 30, "V", 2.0)
    (_, ref, _), (_, got, _) = _pair(lr, 2500, network=ring, member_params=network_stimulus(lr, 30), runtime=runtime,
                                     threads=3, reference="ring30")
    _close(got, ref)
    line = Network("line", 30, "V", 2.0)
    (_, ref, _), (_, got, _) = _pair(lr, 2400, network=line, member_params=network_stimulus(lr, 30), integrator="rk4",
                                     runtime=runtime, reference="line30-rk4")
    _close(got, ref)
    assert ref[:, 0, -1].max() > 0, "the wave did not reach the line's far end"


@pytest.mark.parametrize("runtime", HOST)
def test_c_matches_numpy_flattened_network(runtime):
    """Wang's 100-neuron network flattened into one 400-ODE model (a 100-term sum per neuron)."""
    from kernels.flint import load_model
    m = load_model("wang")
    (_, ref, _), (_, got, _) = _pair(m, 300, every=50, runtime=runtime, reference="wang-flat")
    _close(got, ref)


def test_threads_give_identical_results(lr):
    """Cells spread over OpenMP threads: bit-identical to one thread (each cell's arithmetic is the same)."""
    from kernels.flint import Simulation
    member = {"g_Na": np.random.default_rng().uniform(15, 25, 101)}
    got = [Simulation(lr, runtime="c", n=101, member_params=member, threads=k).advance(600, 0.01, every=50)[1]
           for k in (1, 4)]
    assert np.array_equal(got[0], got[1])
    with pytest.raises(InvalidParameter, match="threads"):
        Simulation(lr, runtime="c", threads=0)


def test_sampling_cadence_across_calls(lr):
    """Samples fall on the same global step numbers as the NumPy runtime's when advance() is called in
    pieces that do not line up with ``every``."""
    from kernels.flint import Simulation
    res = {}
    for rt in ("cpu", "c"):
        sim = Simulation(lr, runtime=rt)
        parts = [sim.advance(k, 0.01, every=7) for k in (5, 13, 1, 30)]
        parts = [p for p in parts if len(p[0])]
        res[rt] = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), sim.state())
    assert np.array_equal(res["c"][0], res["cpu"][0]) and len(res["c"][0]) == 49 // 7
    _close(res["c"][1], res["cpu"][1])
    np.testing.assert_allclose(res["c"][2], res["cpu"][2], rtol=1e-12)


def test_float32_and_set_state(lr):
    from kernels.flint import Simulation
    ref = Simulation(lr, runtime="cpu").advance(1500, 0.01, every=25)[1]
    sim = Simulation(lr, runtime="c", dtype="float32")
    got = sim.advance(1500, 0.01, every=25)[1]
    assert got.dtype == np.float32
    assert np.abs(got[:, 0, 0] - ref[:, 0, 0]).max() < 0.5
    y = sim.state() * 1.0
    y[0] = -80.0
    sim.set_state(y)
    assert sim.state()[0, 0] == np.float32(-80.0)
    sim.advance(10, 0.01)                      # runs from the state set, a fresh contiguous buffer
    assert np.isfinite(sim.state()).all()


def test_c_bad_input(lr, monkeypatch):
    from kernels.flint import Simulation
    from kernels.flint.runtimes import host_c
    with pytest.raises(InvalidParameter, match="cell mapping"):
        Simulation(lr, runtime="c-is", mapping="expression")
    with pytest.raises(SimulationBlowUp, match="NaN/Inf"):
        Simulation(lr, runtime="c").advance(200, 5.0)
    with pytest.raises(BackendUnavailable, match="compile of the model failed"):
        host_c.compile_library("this is not C++;")
    from kernels import hostcc
    monkeypatch.setattr(hostcc, "find_compiler", lambda: None)
    with pytest.raises(BackendUnavailable, match="no C\\+\\+ compiler"):
        Simulation(lr, runtime="c")


def test_cli_runtime_c(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": __import__("os").environ["PATH"]}
    r = subprocess.run([sys.executable, "main.py", "flint", "luo_rudy_1991", "--runtime", "c", "--t-end", "400",
                        "--record", "V", "--json"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["runtime"] == "c" and out["steps"] == 40000
    assert out["variables"]["V"]["max"] > 20 and out["variables"]["V"]["min"] < -80
