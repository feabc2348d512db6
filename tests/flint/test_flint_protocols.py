"""One-way wave on a ring of LR-1991 cells (sustained re-entry) and the circulation measurements.

Paper 004's LR-Ring model is a re-entry demonstration; a uniformly stimulated ring only gives two
colliding wavefronts.  These tests run on the NumPy runtime, the long ring run on the compiled host runtime (explicit Euler, dt 0.01 ms: 0.02 ms is
unstable for LR-1991 at rest, β_m ≈ 166/ms).  The ring's one-way initial state is made on the same
compiled runtime: :func:`one_way_wave` takes the runtime as a parameter and both runtimes integrate
the same explicit Euler steps, so the state's checks hold alike (and c makes it several times faster).
"""
import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import Network, Simulation, load_model
from kernels.flint.protocols import circulation, front_passages, no_stimulus, one_way_wave
from kernels.flint.runtimes import network_stimulus

from kernels import hostcc

N, D, DT = 160, 0.15, 0.01        # the preset "LR ring: sustained re-entry"
#: the ring's 175 000 steps: the compiled host runtime where there is a compiler (seconds), else NumPy
#: (minutes); both integrate the same explicit Euler steps (test_flint_host_c.py checks they agree)
LONG_RUNTIME = "c" if hostcc.find_compiler() else "cpu"
T_END = 1750.0                     # ≈ 3 revolutions of ≈ 565 ms


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991.flint")


@pytest.fixture(scope="module")
def reentry(lr):
    y0 = one_way_wave(lr, N, D, dt=DT, runtime=LONG_RUNTIME)
    sim = Simulation(lr, LONG_RUNTIME, network=Network("ring", N, "V", D), member_params=no_stimulus(lr, N), y0=y0)
    t, y = sim.advance(int(round(T_END / DT)), DT, record=[0], every=10)
    return y0, t, y[:, 0, :]


def test_front_passages_interpolates_upcrossings():
    t = np.arange(0.0, 10.0, 1.0)
    v = np.array([-80, -80, -30, -10, 20, 0, -60, -80, 10, 30], float)
    np.testing.assert_allclose(front_passages(t, v, -20.0), [2.5, 7 + 60 / 90])


def test_circulation_tells_the_direction():
    n, t = 10, np.arange(0.0, 100.0, 0.5)
    fwd = np.where((t[:, None] - 3.0 * np.arange(n)[None, :]) % 30.0 < 5.0, 20.0, -80.0)
    c = circulation(t, fwd)
    assert c["direction"] == 1 and c["revolutions"] == 3 and np.allclose(c["periods"], 30.0)
    assert circulation(t, fwd[:, ::-1])["direction"] == -1
    both = np.maximum(fwd, fwd[:, ::-1])              # two waves going round both ways
    assert circulation(t, both)["direction"] == 0


def test_one_way_wave_state(lr, reentry):
    y0, _, _ = reentry
    info = y0.info
    assert y0.shape == (lr.n_states, N) and np.isfinite(y0).all()
    assert 0.25 < info["cv_cells_per_ms"] < 0.33              # measured on the line
    assert info["pulse_cells"] + 5 <= N                         # the ring is longer than the pulse
    v = y0[0]
    f = info["front"]
    assert v[f] > -20 and (v[f + 5:] < -80).all()               # resting cells ahead of the front
    assert v[0] < -70 and v[-1] < -80                           # no backward front across the seam


def test_ring_sustains_one_way_reentry(reentry):
    y0, t, V = reentry
    c = circulation(t, V)
    assert c["direction"] == 1                                  # every passage → the next cell, mod N
    assert len(c["events"]) >= 3 * N                            # ≥ 3 revolutions
    ref = circulation(t, V, cell=(y0.info["front"] + 1) % N)    # the cell just ahead of the front
    assert ref["revolutions"] >= 4
    p = ref["periods"]
    assert ref["period_spread"] < 0.02, p                       # steady period
    assert 450.0 < ref["period"] < 700.0
    assert ref["period"] == pytest.approx(N / y0.info["cv_cells_per_ms"], rel=0.1)
    assert V[-1].max() > 0                                      # still going at the end


def test_uniform_stimulus_gives_colliding_fronts(lr):
    n = 40
    sim = Simulation(lr, "cpu", network=Network("ring", n, "V", 2.0), member_params=network_stimulus(lr, n))
    t, y = sim.advance(6000, 0.01, record=[0], every=10)
    c = circulation(t, y[:, 0, :])
    assert c["direction"] == 0 and len(c["events"]) == n       # each cell once: the fronts annihilated


def test_ring_shorter_than_the_wave_is_refused(lr):
    with pytest.raises(InvalidParameter, match="smaller D or more cells"):
        one_way_wave(lr, 40, 2.0)
