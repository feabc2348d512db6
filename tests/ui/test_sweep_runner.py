"""The composed run / cancel / export part of the sweep tabs (explorer.sweep_runner.SweepRunner) on
its own, with a tiny experiment: rows streamed off the GUI thread are kept in the experiment's serial
order whatever order they arrive in, the tab's redraw / summary are called, a row whose own check
failed is a warning, Cancel stops the run, a failure is said, and the CSV export writes the rows
through the experiment's ``to_csv``; the tab only lays the runner's widgets out."""
from __future__ import annotations

import csv
import threading

import numpy as np
from PyQt6.QtWidgets import QVBoxLayout, QWidget

from kernels.errors import InvalidParameter
from kernels.experiments import Experiment

from explorer.sweep_runner import SweepRunner, forwards_to_runner

TIMEOUT = 10000


class Squares(Experiment):
    """Rows {"i", "x", "square"}; serial order by i; a row whose square is wrong fails its check."""

    name, title, columns = "squares", "Squares", ("i", "x", "square")

    def order_key(self, row):
        return row["i"]

    def problem(self, row):
        return None if row["square"] == row["x"] ** 2 else f"point {row['i']}: wrong square"


@forwards_to_runner
class Tab(QWidget):
    """A minimal sweep tab composing a runner, recording what the runner asks of it."""

    def __init__(self, messages):
        super().__init__()
        self.redraws = 0
        self.runner = SweepRunner(self, run=lambda: None, redraw=self.redraw, summary=self.summary,
                                  export_plots=lambda path=None: None, message=lambda t, lvl: messages.append((t, lvl)),
                                  experiment=Squares(), csv_name="squares.csv", run_text="Go")
        self.runner.lay_out(QVBoxLayout(self), "run the squares")

    def redraw(self):
        self.redraws += 1

    def summary(self):
        return f"{len(self.rows)} squares"


def test_run_keeps_serial_order_warns_and_exports(qtbot, tmp_path):
    rng = np.random.default_rng()
    n = int(rng.integers(5, 12))
    xs = rng.integers(-1000, 1000, n)
    bad = int(rng.integers(n))
    arrival = rng.permutation(n)                   # a cluster's completion order
    rows = [{"i": int(i), "x": int(xs[i]), "square": int(xs[i]) ** 2 + (1 if i == bad else 0)} for i in arrival]
    messages = []
    tab = Tab(messages)
    qtbot.addWidget(tab)
    assert tab.runner.parent() is tab and tab.bt_run is tab.runner.bt_run and tab.bt_run.text() == "Go"
    with qtbot.waitSignal(tab.finished, timeout=TIMEOUT):
        tab.runner.start("squares", lambda cancelled: iter(rows), n)
        assert tab.job is not None and not tab.bt_run.isEnabled() and tab.bt_cancel.isEnabled()
    assert tab.job is None and tab.bt_run.isEnabled() and not tab.bt_cancel.isEnabled()
    assert [r["i"] for r in tab.rows] == list(range(n))
    assert tab.rows is tab.runner.rows and tab.redraws == n
    assert tab.progress.value() == n and tab.progress.maximum() == n
    assert tab.lbl.text() == f"{n} squares"
    assert messages == [(f"point {bad}: wrong square", "warning")]
    out = tab.export_csv(str(tmp_path / "sq.csv"))
    got = list(csv.reader(open(out)))
    assert got[0] == ["i", "x", "square"]
    assert [[int(c) for c in r] for r in got[1:]] == [[i, int(xs[i]), int(xs[i]) ** 2 + (i == bad)] for i in range(n)]


def test_cancel_stops_after_the_row_being_made(qtbot):
    messages = []
    tab = Tab(messages)
    qtbot.addWidget(tab)
    first = threading.Event()

    def rows(cancelled):
        yield {"i": 0, "x": 3, "square": 9}
        first.set()
        while not cancelled():
            threading.Event().wait(0.01)
        yield {"i": 1, "x": 4, "square": 16}        # the point being made when Cancel came: kept
        yield {"i": 2, "x": 5, "square": 25}        # after it: never made

    tab.runner.start("squares", rows, 5)
    assert first.wait(5)
    with qtbot.waitSignal(tab.runner.ended, timeout=TIMEOUT) as ended:
        tab.bt_cancel.click()
    assert ended.args == ["cancelled", False]
    assert [r["i"] for r in tab.rows] == [0, 1] and tab.job is None
    assert tab.lbl.text() == "2 squares — cancelled" and messages == []


def test_failure_and_empty_export_are_messages(qtbot, tmp_path):
    messages = []
    tab = Tab(messages)
    qtbot.addWidget(tab)
    assert tab.export_csv(str(tmp_path / "none.csv")) is None and not (tmp_path / "none.csv").exists()
    assert messages[-1] == ("Run the timings first.", "warning")

    def rows(cancelled):
        yield {"i": 0, "x": 2, "square": 4}
        raise InvalidParameter("x out of range")

    with qtbot.waitSignal(tab.runner.ended, timeout=TIMEOUT) as ended:
        tab.runner.start("squares", rows, 2)
    assert ended.args[1] is True and "x out of range" in ended.args[0]
    assert "x out of range" in tab.lbl.text() and messages[-1][1] == "error"
    assert len(tab.rows) == 1 and tab.bt_run.isEnabled()
