"""The SBML Test Suite's one executor, the sweep layer (kernels/sweep/suite_tasks.py): the serial path
(scheduler "none") and worker processes (scheduler "local", an embedded Dask cluster) give the same
outcomes; "local" also fails a hung case (time limit, worker restarted) and a crashing one (worker
lost) alone."""
from __future__ import annotations

import os

import pytest

from kernels.flint.sbml import conformance as S
from support.fake_suite import KINDS, LOCAL_GROUP, TIMEOUT, local_run, make_case

pytest.importorskip("distributed")


# the fake suite, runtime (backend "fake") and the local run: tests/support/fake_suite.py, shared
# with tests/flint/sbml/test_sbml_suite.py


def test_serial_path_outcomes(tmp_path):
    """Scheduler none runs the cases here, one by one: every outcome but hang/crash (no isolation)."""
    from kernels.sweep.suite_tasks import run_cases
    root = tmp_path / "suite"
    for i, what in enumerate(["ok", "wrong", "refuse", "raise"], start=1):
        make_case(root, f"{i:05d}", what)
    out = run_cases(S.discover(root), "fake", workers=1, timeout=TIMEOUT, out_dir=tmp_path / "o",
                    scheduler="none")
    assert [o.status for o in out] == ["passed", "failed", "refused", "failed"]
    assert out[1].message.startswith("wrong numbers") and "<delay>" in out[2].message
    assert "ZeroDivisionError" in out[3].message
    assert sorted(os.listdir(tmp_path / "o")) == ["00001.csv", "00002.csv"]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.xdist_group(LOCAL_GROUP)
def test_one_executor_serial_and_local_agree(tmp_path, tmp_path_factory):
    """The same cases through the serial path and through local worker processes: equal outcomes where
    both run them; local alone also isolates a crash and a hang (message naming the limit).  (The local
    run is support.fake_suite.local_run, made once: tests/flint/sbml/test_sbml_suite.py checks it too.)"""
    from kernels.sweep.suite_tasks import run_cases
    run = local_run(tmp_path_factory)
    cases, local = run.cases, run.outcomes
    runnable = [c for c, k in zip(cases, KINDS) if k not in ("crash", "hang")]
    serial = run_cases(runnable, "fake", workers=1, timeout=TIMEOUT, out_dir=tmp_path / "serial",
                       scheduler="none")
    assert [o.case for o in local] == [c.id for c in cases]
    by = {o.case: o for o in local}
    assert "crashed: worker process died" in by["00001"].message and by["00001"].status == "failed"
    assert by["00003"].message == f"timed out after {TIMEOUT:g} s (worker killed)"
    for o in serial:
        assert (by[o.case].status, by[o.case].message) == (o.status, o.message)
    assert [(d, n) for d, n, _ in run.seen] == [(d, 8) for d in range(1, 9)]
    assert sorted(os.listdir(run.out_dir)) == sorted(os.listdir(tmp_path / "serial"))
