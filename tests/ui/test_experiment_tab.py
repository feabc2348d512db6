"""The generic experiment tab (explorer/experiment_tab.py, issue 37 §2): a paper experiment registered in
``kernels.graphs.experiments.EXPERIMENTS`` with no tab of its own appears in the Graphs workspace, runs
off the GUI thread, shows its rows and the paper's claims, exports its CSV and cancels."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pytest
from PyQt6.QtCore import QTimer

from explorer.experiment_tab import MARKS, ExperimentTab, cell_text, claim_text
from explorer.graphs.sweep_tabs import shown_experiments, sweep_figures
from explorer.graphs.workspace import GraphsWorkspace
from explorer.lazy_panel import content_of
from kernels.experiments import Claim, Experiment, row_dict
from kernels.graphs.experiments import EXPERIMENTS

CLAIM = "y grows as 2·x (slope 2 ± 0.1)"


@dataclass
class ToyRow:
    x: int
    y: float


class Toy(Experiment):
    """A line y = slope·x plus small noise; the "paper" says the slope is 2."""

    name = "toy-line-test"
    title = "Toy line (test experiment)"
    columns = ("x", "y")
    row_type = ToyRow
    units = {"y": "s"}

    def __init__(self, seed: int, n: int = 6, delay: float = 0.0):
        self.seed, self.n, self.delay = seed, n, delay

    def defaults(self) -> dict:
        return {"n": self.n, "slope": 2.0, "seed": self.seed, "delay": self.delay}

    def rows(self, n, slope, seed, delay=0.0, cancel=None):
        rng = np.random.default_rng(seed)
        for x in range(1, n + 1):
            if delay:
                time.sleep(delay)
            if cancel is not None and cancel():
                return
            yield ToyRow(x, slope * x + float(rng.uniform(-0.01, 0.01)))

    def claims(self, rows):
        xs = np.array([r.x for r in rows], float)
        ys = np.array([r.y for r in rows], float)
        if len(rows) < 3:
            return [Claim(CLAIM, None, f"{len(rows)} rows: too few to fit a slope")]
        s = float(np.polyfit(xs, ys, 1)[0])
        return [Claim(CLAIM, abs(s - 2.0) <= 0.1, f"fitted slope {s:.3f}")]


class NeedsArgs(Toy):
    name = "toy-needs-args-test"

    def defaults(self) -> dict:
        return {}


@pytest.fixture
def toy():
    exp = Toy(seed=int(np.random.default_rng().integers(0, 2**31)), n=int(np.random.default_rng().integers(4, 12)))
    EXPERIMENTS.register(exp)
    yield exp
    EXPERIMENTS.unregister(exp.name)


def _workspace(qtbot, backend):
    ws = GraphsWorkspace(backend)
    qtbot.addWidget(ws)
    return ws


def _generic_tabs(ws) -> list:
    """The generic tabs' panels (each built: the tabs build on first show or access)."""
    return [content_of(ws.tabs.widget(i), build=True) for i in range(ws.tabs.count())
            if isinstance(content_of(ws.tabs.widget(i), build=True), ExperimentTab)]


def _run(qtbot, tab) -> list:
    with qtbot.waitSignal(tab.finished, timeout=10000):
        assert tab.run()
    return list(tab.rows)


def test_registered_experiment_gets_a_tab_with_no_gui_code(qtbot, backend, toy):
    ws = _workspace(qtbot, backend)
    try:
        tabs = _generic_tabs(ws)
        assert [t.experiment for t in tabs] == [toy]
        i = [ws.tabs.tabText(k) for k in range(ws.tabs.count())].index(toy.title)
        assert content_of(ws.tabs.widget(i)) is tabs[0] and ws.sweep_tabs[toy.name] is tabs[0]
        assert toy.title in tabs[0].title.text()
        assert (toy.title, tabs[0].table) in sweep_figures(ws.sweep_tabs.built())
    finally:
        ws.shutdown()


def test_real_registry_adds_no_generic_tab(qtbot, backend):
    ws = _workspace(qtbot, backend)
    try:
        assert _generic_tabs(ws) == []
        shown = {id(e) for cls in map(type, ws.sweep_tabs.values()) for e in shown_experiments(cls)}
        assert all(id(EXPERIMENTS[name]) in shown for name in EXPERIMENTS)
    finally:
        ws.shutdown()


def test_run_shows_the_rows_and_checks_the_claims(qtbot, toy):
    tab = ExperimentTab(toy)
    qtbot.addWidget(tab)
    want = list(toy.rows(**toy.defaults()))
    got = _run(qtbot, tab)
    assert [row_dict(r) for r in got] == [row_dict(r) for r in want]
    assert tab.cells_shown() == [[cell_text(v) for v in line] for line in toy.table(want)]
    assert [tab.table.horizontalHeaderItem(j).text() for j in range(2)] == list(toy.columns)
    assert "(s)" in tab.table.horizontalHeaderItem(1).toolTip() and "s" in tab.table.item(0, 1).toolTip()
    assert tab.claims_shown() == [f"{MARKS[True]} {CLAIM}"]
    assert "fitted slope" in tab.claims_list.item(0).toolTip()
    slope = float(np.random.default_rng().uniform(2.5, 5.0))       # a run that contradicts the paper
    tab.settings = {"slope": slope}
    got = _run(qtbot, tab)
    want = list(toy.rows(**{**toy.defaults(), "slope": slope}))
    assert [row_dict(r) for r in got] == [row_dict(r) for r in want]
    assert tab.claims_shown() == [claim_text(c) for c in toy.claims(want)] == [f"{MARKS[False]} {CLAIM}"]
    tab.settings = {"n": 2}                                         # too few rows: not measured
    _run(qtbot, tab)
    assert tab.claims_shown() == [f"{MARKS[None]} {CLAIM}"] and len(tab.rows) == 2


def test_rows_needing_settings_are_refused_before_the_run(qtbot):
    seen = []
    tab = ExperimentTab(NeedsArgs(seed=1), message=lambda text, level: seen.append((text, level)))
    qtbot.addWidget(tab)
    assert not tab.run() and tab.job is None
    assert seen and seen[0][1] == "error" and "toy-needs-args-test" in seen[0][0]


def test_a_failing_run_says_why_and_can_run_again(qtbot, toy):
    seen = []
    tab = ExperimentTab(toy, message=lambda text, level: seen.append((text, level)), settings={"n": "many"})
    qtbot.addWidget(tab)
    _run(qtbot, tab)                                                # range(1, "many" + 1): TypeError
    assert tab.rows == [] and tab.job is None and tab.bt_run.isEnabled()
    assert seen[-1][1] == "error" and "TypeError" in seen[-1][0] == tab.lbl.text()
    tab.settings = {}
    assert len(_run(qtbot, tab)) == toy.n


def test_export_csv_is_the_experiments_csv_and_atomic(qtbot, toy, tmp_path):
    tab = ExperimentTab(toy)
    qtbot.addWidget(tab)
    assert tab.export_csv(tmp_path / "none.csv") is None and not (tmp_path / "none.csv").exists()
    rows = _run(qtbot, tab)
    out = tab.export_csv(tmp_path / "toy")
    assert out == tmp_path / "toy.csv"
    toy.to_csv(list(toy.rows(**toy.defaults())), tmp_path / "direct.csv")
    assert out.read_bytes() == (tmp_path / "direct.csv").read_bytes()
    assert len(out.read_text().splitlines()) == len(rows) + 1
    before = out.read_bytes()

    def broken(rows_):                    # fails after the first line: the earlier file stays whole
        yield [rows_[0].x, rows_[0].y]
        raise ValueError("disk full (test)")

    toy.table = broken
    try:
        assert tab.export_csv(out) is None
    finally:
        del toy.table
    assert out.read_bytes() == before and "disk full" in tab.lbl.text()


def test_cancel_stops_a_long_run_and_the_ui_stays_responsive(qtbot, toy):
    toy.n, toy.delay = 100000, 0.01
    tab = ExperimentTab(toy)
    qtbot.addWidget(tab)
    assert tab.run() and not tab.bt_run.isEnabled() and tab.bt_cancel.isEnabled()
    qtbot.waitUntil(lambda: len(tab.rows) >= 3, timeout=5000)
    fired = []
    t0 = time.perf_counter()
    QTimer.singleShot(10, lambda: fired.append(time.perf_counter() - t0))
    qtbot.waitUntil(lambda: bool(fired), timeout=1000)              # the GUI thread is free while it runs
    assert tab.table.rowCount() == len(tab.rows) >= 3
    with qtbot.waitSignal(tab.finished, timeout=3000):
        tab.bt_cancel.click()
    n = len(tab.rows)
    assert 3 <= n < toy.n and tab.job is None and tab.bt_run.isEnabled() and not tab.bt_cancel.isEnabled()
    assert "cancelled" in tab.lbl.text()
    qtbot.wait(100)
    assert len(tab.rows) == n                                       # nothing arrives after the cancel
    assert tab.claims_shown() == [claim_text(c) for c in toy.claims(tab.rows)]
