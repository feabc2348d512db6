"""The ``sbml-members`` sweep task: an SBML ensemble's members on the CPU reference simulator, sliced over
the sweep layer.  Each member's row must be the reference run of that member's own parameter values
(``linspace(lo, hi, n)``, computed here independently), whatever the slicing; the events column counts
the event executions the reference reports."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint.adaptive_run import EnsembleRun
from kernels.flint.run import Vary
from kernels.flint.sbml.reference import load_reference, run_reference
from kernels.sweep import SbmlMembersTask, Sweep
from support.paths import SHARED

MODEL = SHARED / "models" / "BIOMD0000000127.xml"


def _run(n, lo, hi):
    if not MODEL.is_file():
        pytest.skip(f"{MODEL} not found")
    return EnsembleRun(str(MODEL), method="dopri5", engine="numpy", n=n, t_end=60.0, dt=2.0,
                       vary=(Vary("d", lo, hi),), backend="cpu")


def test_members_are_reference_runs_of_their_own_parameters():
    rng = np.random.default_rng()
    n = 5
    lo, hi = sorted(rng.uniform(1.0, 9.0, 2))
    run = _run(n, lo, hi)
    task = SbmlMembersTask(run)
    size = int(rng.integers(1, n))
    rows = sorted(Sweep(task, task.slices(size), scheduler="none").rows(), key=lambda r: r["member"])
    assert [r["member"] for r in rows] == list(range(n))
    ref = load_reference(str(MODEL))
    for m in (0, int(rng.integers(1, n))):
        d = lo + (hi - lo) * m / (n - 1)
        assert rows[m]["d"] == pytest.approx(d, rel=1e-12)
        fired = []
        res = run_reference(ref, run.times(), list(run.record), {"d": d}, on_event=lambda t, e: fired.append(t))
        assert rows[m]["events"] == len(fired) > 0
        for k, s in enumerate(run.record):
            assert rows[m][f"{s}_final"] == res.values[-1, k]
            assert rows[m][f"{s}_max"] == res.values[:, k].max()


def test_slices_are_checked():
    task = SbmlMembersTask(_run(3, 2.0, 8.0))
    with pytest.raises(InvalidParameter):
        task.check_point({"first": 2, "count": 2})
    with pytest.raises(InvalidParameter):
        SbmlMembersTask("not a run")
