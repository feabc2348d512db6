"""The SBML Test Suite runner on the sweep layer (kernels/sweep/suite_tasks.py): the same outcomes
as the process pool of kernels.flint.sbml.conformance.run_cases, on an embedded Dask cluster, including a hung
case (time limit, worker restarted) and a crashing one (worker lost)."""
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
        time.sleep(60)
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


@pytest.mark.timeout(120)
def test_dask_suite_outcomes_equal_the_process_pool(tmp_path):
    from kernels.sweep.suite_tasks import run_cases
    root = tmp_path / "suite"
    kinds = ["crash", "ok", "hang", "wrong", "refuse", "raise", "ok", "ok"]
    for i, what in enumerate(kinds, start=1):
        _case(root, f"{i:05d}", what)
    cases = S.discover(root)
    register_backend("fake-sweep", fake_runtime)
    pool = S.run_cases(cases, "fake-sweep", workers=2, timeout=1.5, out_dir=tmp_path / "pool")
    seen = []
    t0 = time.perf_counter()
    dask = run_cases(cases, "fake-sweep", workers=2, timeout=1.5, out_dir=tmp_path / "dask", scheduler="local",
                     progress=lambda d, n, eta, oc: seen.append((d, n)))
    assert time.perf_counter() - t0 < 60
    assert [o.case for o in dask] == [c.id for c in cases]
    assert [o.status for o in dask] == [o.status for o in pool]
    by = {o.case: o for o in dask}
    assert "crashed: worker process died" in by["00001"].message
    assert by["00003"].message == "timed out after 1.5 s (worker killed)" == \
        {o.case: o for o in pool}["00003"].message
    for cid in ("00002", "00004", "00005", "00006", "00007", "00008"):
        assert by[cid].message == {o.case: o for o in pool}[cid].message
    assert seen == [(d, 8) for d in range(1, 9)]
    assert sorted(os.listdir(tmp_path / "dask")) == sorted(os.listdir(tmp_path / "pool"))
