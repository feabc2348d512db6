"""DOPRI5's stiffness test (Hairer & Wanner II §IV.2; method auto turns to Rodas4 on it): the NumPy twin and
the kernel's host build both stop Robertson's problem (fresh random rate constants) long before the step
budget; on a non-stiff model the test changes nothing (the same numbers, bit for bit, with it on or off)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import Unsupported
from kernels.flint.adaptive_run import lower
from kernels.flint.ensemble import gpu as dp_gpu
from kernels.flint.ensemble import rk
from kernels import hostcc
from support.paths import ROOT, SHARED

ROBERTSON = ROOT / "resources" / "models" / "robertson.xml"


def _robertson(n, rng):
    core = lower(str(ROBERTSON), ["A", "B", "C"])
    k = {"k1": 0.04 * rng.uniform(0.5, 2, n), "k2": 3e7 * rng.uniform(0.5, 2, n), "k3": 1e4 * rng.uniform(0.5, 2, n)}
    return core, k


def test_twin_stops_robertson_early():
    rng = np.random.default_rng()
    core, k = _robertson(2, rng)
    seen = []
    orig = rk.stiffness_test

    def spy(ks, hh):
        v = orig(ks, hh)
        seen.append(v)
        return v
    rk.stiffness_test = spy
    try:
        with pytest.raises(Unsupported, match="stiffness test"):
            rk.integrate(rk.Problem(core, 2, k), np.linspace(0, 40, 11), stiff_test=True)
    finally:
        rk.stiffness_test = orig
    assert 15 <= len(seen) < 100                 # 15 positive tests in a row, from the 1000th accepted step
    assert np.nanmax(seen[-1]) > 3.25


def _stops_robertson_and_leaves_non_stiff_alone(integrate, flavour: str):
    """``integrate`` (the GPU or the host launcher) stops Robertson (fresh random rates) on DOPRI5's
    stiffness test, and gives BIOMD0000000127 the same numbers with the test on or off: (core, d, times,
    those numbers)."""
    rng = np.random.default_rng()
    core, k = _robertson(3, rng)
    with pytest.raises(Unsupported, match="stiffness test"):
        integrate(dp_gpu.gpu_problem(core, 3, k), np.linspace(0, 40, 11), flavour, stiff_test=True)
    model = SHARED / "models" / "BIOMD0000000127.xml"
    if not model.is_file():
        pytest.skip(f"{model} not found")
    core = lower(str(model), ["v", "U"])
    d = {"d": rng.uniform(2, 8, 4)}
    times = np.linspace(0, 60, 31)
    on = integrate(dp_gpu.gpu_problem(core, 4, d), times, flavour, stiff_test=True)
    off = integrate(dp_gpu.gpu_problem(core, 4, d), times, flavour)
    assert np.array_equal(on, off, equal_nan=True)
    return core, d, times, on


@pytest.mark.skipif(hostcc.find_compiler() is None, reason="no host C++ compiler")
def test_host_build_stops_robertson_and_leaves_non_stiff_alone():
    core, d, times, _on = _stops_robertson_and_leaves_non_stiff_alone(dp_gpu.integrate_host, "ts")
    twin_on = rk.integrate(rk.Problem(core, 4, d), times, stiff_test=True)
    twin_off = rk.integrate(rk.Problem(core, 4, d), times)
    assert np.array_equal(twin_on, twin_off, equal_nan=True)


@pytest.mark.gpu
@pytest.mark.parametrize("flavour", ["ts", "is"])
def test_gpu_stops_robertson_and_leaves_non_stiff_alone(flavour):
    """The same on the GPU (CuPy, NVRTC), both flavours; and the GPU agrees with the host build."""
    core, d, times, on = _stops_robertson_and_leaves_non_stiff_alone(dp_gpu.integrate_gpu, flavour)
    host = dp_gpu.integrate_host(dp_gpu.gpu_problem(core, 4, d), times, flavour)
    assert np.allclose(on, host, rtol=1e-6, atol=1e-8, equal_nan=True)
