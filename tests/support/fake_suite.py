"""A fake SBML Test Suite and a fake runtime for the tests of the suite executor
(``tests/flint/sbml/test_sbml_suite.py``, ``tests/sweep/test_sweep_suite.py``), and the one run of it
through local worker processes that both check.

The run on ``scheduler="local"`` (an embedded Dask cluster) waits out the hung case's time limit and
restarts two workers (the crash, the hang): about 15 s, nearly all of it waiting.  Both test modules
assert on the same run (:func:`local_run`, made once a process; their tests carry
``pytest.mark.xdist_group(LOCAL_GROUP)`` so that pytest-xdist gives them one worker).  Nothing in a
test changes the outcomes or the written files, so sharing them checks the same things."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from kernels.errors import Unsupported
from kernels.flint.schemes import register_backend

#: the cases of the fake suite, 00001 … 00008
KINDS = ("crash", "ok", "hang", "wrong", "refuse", "raise", "ok", "ok")
#: the per-case time limit of the isolation run: long enough for a loaded box, short against the hang.
#: A case's clock starts when it is handed to a running worker (no point is submitted while a
#: crashed worker restarts), so the limit bounds the case's own run: milliseconds for every case
#: here but the hung one, which sleeps 600 s
TIMEOUT = 10.0
#: the xdist group of the tests that use :func:`local_run`
LOCAL_GROUP = "fake-suite-local"


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


register_backend("fake", fake_runtime, replace=True)


def make_case(root: Path, cid: str, what: str, tags=("Species", "Parameter"), ttags=("Amount",)) -> None:
    """Case ``cid`` of the fake suite under ``root/cases``: its model file holds ``what``."""
    d = root / "cases" / cid
    d.mkdir(parents=True)
    (d / f"{cid}-sbml-l3v2.xml").write_text(what)
    (d / f"{cid}-settings.txt").write_text("start: 0\nduration: 2\nsteps: 4\nvariables: S1, k\n"
                                           "absolute: 1e-6\nrelative: 1e-4\namount: S1\nconcentration: \n")
    (d / f"{cid}-model.m").write_text(f"(*\ncomponentTags: {', '.join(tags)}\ntestTags:      {', '.join(ttags)}\n"
                                      "testType:      TimeCourse\n*)\n")
    t = np.linspace(0, 2, 5)
    rows = ["time,S1,k"] + [f"{float(x)!r},{float(np.exp(-x))!r},2" for x in t]
    (d / f"{cid}-results.csv").write_text("\n".join(rows) + "\n")


def make_suite(root: Path) -> Path:
    """The fake suite of :data:`KINDS` under ``root`` (odd-numbered cases tagged ``Odd``)."""
    for i, what in enumerate(KINDS, start=1):
        make_case(root, f"{i:05d}", what, ttags=("Amount", "Odd") if i % 2 else ("Amount",))
    return root


class LocalRun:
    """The fake suite run by runtime ``fake`` on 2 local worker processes: ``cases``, ``outcomes``,
    ``seen`` (every progress call's (done, total, case)) and ``out_dir`` (the cases' written CSVs)."""

    def __init__(self, base: Path):
        from kernels.flint.sbml import conformance as S
        from kernels.sweep.suite_tasks import run_cases
        self.root = make_suite(base / "suite")
        self.out_dir = base / "local"
        self.cases = S.discover(self.root)
        self.seen: list = []
        self.outcomes = run_cases(self.cases, "fake", workers=2, timeout=TIMEOUT, out_dir=self.out_dir,
                                  scheduler="local", progress=lambda d, n, eta, oc: self.seen.append((d, n, oc.case)))


_RUN: dict = {}


def local_run(tmp_path_factory) -> LocalRun:
    """:class:`LocalRun`, made once in this process (in a folder of ``tmp_path_factory``)."""
    if "run" not in _RUN:
        _RUN["run"] = LocalRun(tmp_path_factory.mktemp("fake-suite"))
    return _RUN["run"]
