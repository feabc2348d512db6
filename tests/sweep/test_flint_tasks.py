"""The Flint sweep built from the one run specification (kernels/sweep/flint_tasks.py, issue 34): the
slices of a FlintRun's sweep are exactly one ensemble run of all its members; a slice of one member is
the same; the result file's identity is the run's."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import Simulation, load_model
from kernels.flint.run import FlintRun, Vary
from kernels.sweep.flint_tasks import FlintSliceTask, flint_sweep


def test_flint_run_sweep_slices_equal_one_ensemble_run(rng):
    m = load_model("luo_rudy_1991")
    lo = float(rng.uniform(20, 22))
    run = FlintRun(m, runtime="numpy", integrator="rk4", dt=0.01, t_end=14.0, n=4, record=("V", "m"), every=50)
    out = flint_sweep(run, ["g_Na=%r:%r:3" % (lo, lo + 4), "g_si=0.08,0.09"], slice_size=4, scheduler="none")
    assert out["members"] == 6 and out["slices"] == 2 and out["rows_written"] == 6
    assert (out["method"], out["engine"]) == ("rk4", "numpy")
    g_na = np.repeat(np.linspace(lo, lo + 4, 3), 2)
    g_si = np.tile([0.08, 0.09], 3)
    sim = Simulation(m, n=6, member_params={"g_Na": g_na, "g_si": g_si}, integrator="rk4")
    iv = list(m.states).index("V")
    _t, samples = sim.advance(1400, 0.01, record=[iv], every=50)
    final = sim.state()[iv]
    for r in out["rows"]:
        j = r["member"]
        assert r["g_Na"] == pytest.approx(g_na[j]) and r["g_si"] == pytest.approx(g_si[j])
        assert r["V_final"] == pytest.approx(final[j], rel=1e-12)
        assert r["V_max"] == pytest.approx(samples[:, 0, j].max(), rel=1e-12)
    assert len({round(r["V_max"], 6) for r in out["rows"]}) > 1          # the members differ
    with pytest.raises(InvalidParameter, match="not a parameter"):
        flint_sweep(run, ["nope=1,2"], scheduler="none")


def test_slice_of_one_member_and_identity(rng):
    m = load_model("wang")
    g = sorted(float(x) for x in rng.uniform(80, 160, 2))
    run = FlintRun(m, runtime="numpy", dt=0.05, t_end=0.5, every=1)
    task = FlintSliceTask(run, {"g_Na": g})
    both = task.run({"first": 0, "count": 2})
    one = [task.run({"first": i, "count": 1})[0] for i in range(2)]
    for a, b in zip(one, both):
        assert a["member"] == b["member"]
        for k in a:
            if k.endswith(("_min", "_max", "_final")):
                assert a[k] == pytest.approx(b[k], rel=1e-12, abs=1e-12)
    spec = task.fixed["run"]
    assert spec["engine"] == "numpy" and spec["method"] == "euler" and "n" not in spec
    other = FlintSliceTask(FlintRun(m, runtime="numpy", integrator="rk4", dt=0.05, t_end=0.5, every=1), {"g_Na": g})
    assert other.fixed != task.fixed                                # another run: another result file
    with pytest.raises(InvalidParameter, match="no line/ring, no vary"):
        FlintSliceTask(FlintRun(m, n=3, vary=(Vary("g_Na", 1.0, 2.0),)), {"g_K": [1.0]})
    with pytest.raises(InvalidParameter, match="FlintRun"):
        FlintSliceTask({"model": "wang"}, {"g_Na": g})
