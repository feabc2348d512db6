"""The SBML Test Suite's one executor, the sweep layer (kernels/sweep/suite_tasks.py): the serial path
(scheduler "none") and worker processes (scheduler "local", an embedded Dask cluster) give the same
outcomes; "local" also fails a hung case (time limit, worker restarted) and a crashing one (worker
lost) alone."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from kernels.errors import Unsupported
from kernels.flint.sbml import conformance as S
from kernels.flint.schemes import register_backend

pytest.importorskip("distributed")


def fake_runtime(model, times, variables, amount, concentration):
    """Behaviour chosen by the model file's text: ok, wrong, refuse, raise, hang, crash."""
    what = Path(model).read_text().strip()
    if what == "hang":
        time.sleep(600)
    if what == "crash":
        os._exit(7)
    if what == "refuse":
        raise Unsupported("fake: <delay> is not supported")
    if what == "raise":
        raise ZeroDivisionError("boom")
    out = {"S1": np.exp(-times), "k": np.full(times.shape, 2.0)}
    if what == "wrong":
        out["S1"] = out["S1"] * 1.01
    return {v: out[v] for v in variables}


def _case(root: Path, cid: str, what: str):
    d = root / "cases" / cid
    d.mkdir(parents=True)
    (d / f"{cid}-sbml-l3v2.xml").write_text(what)
    (d / f"{cid}-settings.txt").write_text("start: 0\nduration: 2\nsteps: 4\nvariables: S1, k\n"
                                           "absolute: 1e-6\nrelative: 1e-4\namount: S1\nconcentration: \n")
    (d / f"{cid}-model.m").write_text("(*\ncomponentTags: Species\ntestTags:      Amount\ntestType:      TimeCourse\n*)\n")
    t = np.linspace(0, 2, 5)
    (d / f"{cid}-results.csv").write_text("\n".join(["time,S1,k"] + [f"{float(x)!r},{float(np.exp(-x))!r},2"
                                                                      for x in t]) + "\n")


#: per-case time limit: generous for a loaded 2-core box (Dask workers start slowly there), far
#: below the hung case's sleep
#: a case's clock starts when it is handed to a running worker (no point is submitted while a
#: crashed worker restarts), so the limit bounds the case's own run: milliseconds for every case
#: here but the hung one, which sleeps 600 s
TIMEOUT = 10.0


def test_serial_path_outcomes(tmp_path):
    """Scheduler none runs the cases here, one by one: every outcome but hang/crash (no isolation)."""
    from kernels.sweep.suite_tasks import run_cases
    root = tmp_path / "suite"
    for i, what in enumerate(["ok", "wrong", "refuse", "raise"], start=1):
        _case(root, f"{i:05d}", what)
    register_backend("fake-sweep", fake_runtime, replace=True)
    out = run_cases(S.discover(root), "fake-sweep", workers=1, timeout=TIMEOUT, out_dir=tmp_path / "o",
                    scheduler="none")
    assert [o.status for o in out] == ["passed", "failed", "refused", "failed"]
    assert out[1].message.startswith("wrong numbers") and "<delay>" in out[2].message
    assert "ZeroDivisionError" in out[3].message
    assert sorted(os.listdir(tmp_path / "o")) == ["00001.csv", "00002.csv"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_one_executor_serial_and_local_agree(tmp_path):
    """The same cases through the serial path and through local worker processes: equal outcomes where
    both run them; local alone also isolates a crash and a hang (message naming the limit)."""
    from kernels.sweep.suite_tasks import run_cases
    root = tmp_path / "suite"
    kinds = ["crash", "ok", "hang", "wrong", "refuse", "raise", "ok", "ok"]
    for i, what in enumerate(kinds, start=1):
        _case(root, f"{i:05d}", what)
    cases = S.discover(root)
    register_backend("fake-sweep", fake_runtime, replace=True)
    runnable = [c for c, k in zip(cases, kinds) if k not in ("crash", "hang")]
    serial = run_cases(runnable, "fake-sweep", workers=1, timeout=TIMEOUT, out_dir=tmp_path / "serial",
                       scheduler="none")
    seen = []
    local = run_cases(cases, "fake-sweep", workers=2, timeout=TIMEOUT, out_dir=tmp_path / "local", scheduler="local",
                      progress=lambda d, n, eta, oc: seen.append((d, n)))
    assert [o.case for o in local] == [c.id for c in cases]
    by = {o.case: o for o in local}
    assert "crashed: worker process died" in by["00001"].message and by["00001"].status == "failed"
    assert by["00003"].message == f"timed out after {TIMEOUT:g} s (worker killed)"
    for o in serial:
        assert (by[o.case].status, by[o.case].message) == (o.status, o.message)
    assert seen == [(d, 8) for d in range(1, 9)]
    assert sorted(os.listdir(tmp_path / "local")) == sorted(os.listdir(tmp_path / "serial"))
