"""The cpu-threads variant and the Reproduce tab in the Cahn–Hilliard workspace (CPU backend): the
thread count control, the status bar, the layout options of the GPU kernels, the Fig. 10 timings
filling the plots, bad input as a message, cancel, CSV/PNG export, settings remembered."""
from __future__ import annotations

import csv

import numpy as np
import pytest

from kernels import hostcc

pytestmark = pytest.mark.skipif(hostcc.find_compiler() is None, reason="needs a host C++ compiler")
TIMEOUT = 60000


def test_variant_threads_control_and_status(ws, qtbot):
    c = ws.controls
    assert not c.widgets["threads"].isEnabled()
    # on the CPU backend cpu-threads is offered, and the CUDA kernels as their source run on the CPU
    from kernels.cahn_hilliard.params import VARIANTS
    model = c.widgets["variant"].model()
    assert model.item(VARIANTS.index("cpu-threads")).isEnabled()
    assert model.item(VARIANTS.index("B")).isEnabled()
    assert c.widgets["variant"].itemText(VARIANTS.index("B")).endswith("(CUDA source run on the CPU)")
    before = ws.sim.field_numpy().copy()
    ws.set_parameter("variant", "cpu-threads")
    assert type(ws.sim.stepper).__name__ == "ThreadedStepper"
    assert c.widgets["threads"].isEnabled() and not c.widgets["tile"].isEnabled()
    ws.set_parameter("threads", 2)
    assert ws.sim.params.threads == 2 and ws.sim.stepper.threads == 2
    assert "cpu-threads · 2 threads" in ws.decomp.text
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count > 0, timeout=TIMEOUT)
    assert not np.array_equal(before, ws.sim.field_numpy())
    ws.set_parameter("variant", "reference")
    assert not c.widgets["threads"].isEnabled() and ws.decomp.text == ""


def test_reproduce_tab_runs_fig10_on_the_cpu(ws, qtbot, tmp_path):
    tab = ws.fig10
    assert tab.experiment == "devices"
    assert not tab.ck_methods["gpu"].isEnabled() and not tab.ck_methods["multi-gpu"].isEnabled()
    tab.ed_sizes.setText("16, 32")
    tab.sp_budget.setValue(0.05)
    tab.sp_threads.setValue(2)
    assert tab.run()
    assert not tab.bt_run.isEnabled() and tab.bt_cancel.isEnabled()
    qtbot.waitUntil(lambda: tab.job is None, timeout=TIMEOUT)
    assert tab.progress.value() == tab.progress.maximum() == 6
    assert {(r.n, r.method) for r in tab.rows} == {(n, m) for n in (16, 32) for m in ("single", "threads", "numpy")}
    assert "threads faster than one core" in tab.lbl.text()
    # one curve per method on the time plot, speed-ups over the single core on the other
    curves = tab.p_time.listDataItems()
    assert len(curves) == 3
    xs, ys = curves[0].xData, curves[0].yData           # the data (getData gives log10 in log mode)
    assert list(xs) == [16, 32] and list(ys) == [r.per_1024 for r in tab.rows if r.method == "single"]
    assert len(tab.p_up.listDataItems()) == 2
    # export
    out = tab.export_csv(str(tmp_path / "t.csv"))
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and rows[0]["method"] == "single"
    png = tab.export_plots(str(tmp_path / "t.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_reproduce_bad_input_and_layouts_without_gpu(ws):
    tab = ws.fig10
    tab.ed_sizes.setText("16, abc")
    assert not tab.run()
    assert "whole numbers" in ws.message_bar.text()
    tab.ed_sizes.setText("4")
    assert not tab.run() and "N must lie" in ws.message_bar.text()
    tab.cb_exp.setCurrentIndex(tab.cb_exp.findData("layouts"))
    assert tab.experiment == "layouts" and not tab.sp_threads.isEnabled()
    tab.ed_sizes.setText("64")
    assert not tab.run()                                    # every layout is a GPU kernel: none checked here
    assert "choose at least one method" in ws.message_bar.text()


def test_reproduce_cancel_keeps_finished_points(ws, qtbot):
    tab = ws.fig10
    tab.ed_sizes.setText("16, 32, 64, 128")
    tab.sp_budget.setValue(0.2)
    assert tab.run()
    qtbot.waitUntil(lambda: len(tab.rows) >= 1, timeout=TIMEOUT)
    tab.cancel()
    qtbot.waitUntil(lambda: tab.job is None, timeout=TIMEOUT)
    assert 1 <= len(tab.rows) < 12 and tab.bt_run.isEnabled()


def test_reproduce_settings_roundtrip(ws, main_window):
    tab = ws.fig10
    tab.ed_sizes.setText("16, 48")
    tab.sp_threads.setValue(3)
    tab.sp_budget.setValue(2.5)
    tab.ck_methods["numpy"].setChecked(False)
    st = tab.state()
    tab.restore({"sizes": "99", "threads": -5, "budget": "x", "experiment": "bogus"})
    assert tab.ed_sizes.text() == "99" and tab.sp_threads.value() == 3
    tab.restore(st)
    assert tab.state() == st
    s = main_window.settings
    ws.save_settings(s)
    tab.ed_sizes.setText("1")
    ws.restore_settings(s)
    assert tab.ed_sizes.text() == "16, 48" and tab.state() == st
