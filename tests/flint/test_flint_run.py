"""FlintRun (kernels/flint/run.py): one validated run spec for the CLI and the GUI; one meaning of vary
(linspace lo..hi), the GUI's "± spread" expressed as Vary.around; the session round trip."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import load_model
from kernels.flint.run import FlintRun, Vary


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991")


def test_vary_is_linspace_lo_hi_and_spread_is_around_v0(lr):
    run = FlintRun(lr, n=5, vary=("g_Na=10:20",))
    np.testing.assert_array_equal(run.member_params()["g_Na"], np.linspace(10, 20, 5))
    v0, s = lr.params["g_si"], 0.3
    around = FlintRun(lr, n=7, vary=(Vary.around("g_si", v0, s),)).member_params()["g_si"]
    np.testing.assert_allclose(around, v0 * (1 + s * np.linspace(-1, 1, 7)), rtol=1e-15, atol=0)
    assert around[0] == pytest.approx(v0 * (1 - s)) and around[-1] == pytest.approx(v0 * (1 + s))


def test_ring_members_and_protocols(lr):
    ring = FlintRun(lr, members="ring", n=6, coupling=0.5, protocol="one-way")
    net = ring.network
    assert (net.kind, net.n_cells, net.state, net.D) == ("ring", 6, "V", 0.5)
    assert not np.any(ring.member_params()["stim_amplitude"])                 # one-way: stimulus off
    line = FlintRun(lr, members="line", n=8)
    amp = line.member_params()["stim_amplitude"]
    assert np.count_nonzero(amp) == 5 and amp[0] == lr.params["stim_amplitude"]
    assert FlintRun(lr).network is None and FlintRun(lr).member_params() == {}


@pytest.mark.parametrize("kw, match", [
    ({"runtime": "nope"}, "engine must be numpy, c, c-is, is, ts or auto"),
    ({"integrator": "rk45"}, "method must be euler or rk4"),
    ({"dtype": "float16"}, "dtype"), ({"dt": 0}, "dt must be > 0"), ({"dt": float("nan")}, "dt must be > 0"),
    ({"dt": 5.0, "t_end": 1.0}, "not one step"), ({"members": "grid"}, "members must be"),
    ({"members": "ring", "n": 1}, "at least 2 cells"), ({"n": 0}, "n must be"),
    ({"vary": ("nope=1:2",)}, "not a parameter"), ({"record": ("Q",)}, "not a state"),
    ({"protocol": "one-way"}, "starts a ring"), ({"runtime": "c", "mapping": "expression"}, "cell mapping"),
    ({"members": "line", "n": 3, "coupled": "Z"}, "coupled variable"), ({"every": 0}, "every must be"),
])
def test_bad_specs_are_refused_when_made(lr, kw, match):
    with pytest.raises(InvalidParameter, match=match):
        FlintRun(lr, **kw)


def test_frozen_and_session_round_trip(lr):
    m = lr.copy()
    m.params["g_Na"] = 20.0
    run = FlintRun(m, runtime="cpu", integrator="rk4", dt=0.01, t_end=1.0, members="ring", n=4, coupling=0.2,
                   vary=(Vary("g_si", 0.07, 0.11),), record=("V", "m"), every=5, protocol="one-way")
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.dt = 1.0
    back = FlintRun.from_dict(lr, run.to_dict())
    assert back.to_dict() == run.to_dict() and back.model.params["g_Na"] == 20.0
    assert lr.params["g_Na"] != 20.0                       # the caller's model is not touched
    t, y = run.simulation().advance(run.steps, run.dt, record=run.record_index, every=run.every)
    assert y.shape == (run.steps // 5, 2, 4) and run.record_names == ["V", "m"]


@pytest.mark.parametrize("kw, field, choices", [
    ({"integrator": "dopri9"}, "method", "euler or rk4"), ({"runtime": "gpu"}, "engine", "numpy, c, c-is, is, ts"),
    ({"dtype": "float16"}, "dtype", "float64 or float32"), ({"mapping": "warp"}, "mapping", "cell or expression"),
])
def test_settings_checked_in_one_place(lr, kw, field, choices):
    """A bad method / engine / dtype / mapping: one error naming the setting and its choices, the same
    from check_settings (what the CLI calls before loading a model) and from FlintRun."""
    from kernels.flint.run import RunSettingError, check_settings
    args = {"method": kw.get("integrator", "euler"), "engine": kw.get("runtime", "auto"),
            "dtype": kw.get("dtype", "float64"), "mapping": kw.get("mapping", "cell")}
    with pytest.raises(RunSettingError) as a:
        check_settings(**args)
    with pytest.raises(RunSettingError) as b:
        FlintRun(lr, **kw)
    assert a.value.field == b.value.field == field and choices in str(a.value) and str(a.value) == str(b.value)


def test_engine_names_and_old_sessions(lr):
    """Engine numpy is Runtime cpu; a session saves method/engine; an old session (runtime/integrator)
    loads the same run."""
    run = FlintRun(lr, runtime="numpy", integrator="rk4", t_end=1.0)
    assert run.runtime == "cpu" and run.engine == "numpy" and run.method == "rk4"
    d = run.to_dict()
    assert d["engine"] == "numpy" and d["method"] == "rk4" and "runtime" not in d
    old = {k: v for k, v in d.items() if k not in ("engine", "method")} | {"runtime": "cpu", "integrator": "rk4"}
    assert FlintRun.from_dict(lr, old) == FlintRun.from_dict(lr, d) == run
    assert FlintRun(lr, integrator="auto").method == "euler"
