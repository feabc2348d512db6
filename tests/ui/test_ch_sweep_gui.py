"""The Cahn–Hilliard Sweep tab: a sweep on an embedded Dask cluster filling the plot live, progress
and workers, bad input kept as a message, cancel, resume, CSV export, settings remembered."""
from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("distributed")
TIMEOUT = 60000


def _small(tab, scheduler="none", mean="-0.3:0.3:3", seed="1..2", steps=60):
    tab.ed_axes["mean"].setText(mean)
    tab.ed_axes["noise"].setText("")
    tab.ed_axes["seed"].setText(seed)
    tab.ed_more.setText("")
    tab.sp_steps.setValue(steps)
    tab.sp_every.setValue(20)
    tab.sp_size.setValue(16)
    tab.cb_backend.setCurrentText("cpu")
    tab.panel.cb_sched.setCurrentText(scheduler)


def _wait(qtbot, panel):
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT)


def test_sweep_on_a_local_cluster_fills_the_plot(qtbot, ws, tmp_path):
    tab = ws.sweep
    _small(tab, "local")
    tab.panel.sp_workers.setValue(2)
    out = tmp_path / "rows.csv"
    tab.panel.ed_file.setText(str(out))
    assert tab.panel.run()
    seen = []
    tab.panel.job.status.connect(seen.append)                     # (the cluster takes a moment to start)
    assert not tab.panel.bt_run.isEnabled() and tab.panel.bt_cancel.isEnabled()
    _wait(qtbot, tab.panel)
    assert tab.panel.progress.value() == tab.panel.progress.maximum() == 6
    assert [st["finished"] for st in seen] == [1, 2, 3, 4, 5, 6]
    assert seen[-1]["workers"] == 2 and seen[-1]["kind"] == "local-cpu"
    assert len(tab.panel.rows) == 6 and all(r["error"] == "" for r in tab.panel.rows)
    assert "6 rows, done" in tab.panel.lbl.text() and str(out) in tab.panel.lbl.text()
    # the plot: 3 compositions, mean ± std over the 2 seeds
    assert [s["n"] for s in tab.stats] == [2, 2, 2]
    xs, ys = tab.curve.getData()
    assert np.allclose(xs, [-0.3, 0.0, 0.3])
    alpha = {r["mean"]: [] for r in tab.panel.rows}
    for r in tab.panel.rows:
        alpha[r["mean"]].append(r["coarsening_exponent"])
    assert np.allclose(ys, [np.mean(alpha[x]) for x in sorted(alpha)])
    tab.cb_y.setCurrentText("final length scale L")
    assert np.allclose(tab.curve.getData()[1], [np.mean([r["length_scale_final"] for r in tab.panel.rows
                                                         if r["mean"] == x]) for x in sorted(alpha)])
    # export: one row per run
    exp = tab.panel.export_csv(str(tmp_path / "export.csv"))
    with open(exp, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and {float(r["mean"]) for r in rows} == {-0.3, 0.0, 0.3}
    # resume the same sweep from its file: nothing left to run, the rows come back from the file
    tab.panel.ck_resume.setChecked(True)
    tab.panel.cb_sched.setCurrentText("none")
    assert tab.panel.run()
    _wait(qtbot, tab.panel)
    assert len(tab.panel.rows) == 6 and tab.panel.progress.value() == 6


def test_bad_input_cancel_and_settings(qtbot, ws, main_window, tmp_path):
    tab = ws.sweep
    _small(tab)
    tab.ed_axes["mean"].setText("0.5:0.1")                          # malformed range
    assert not tab.panel.run()
    assert "START:STOP:COUNT" in ws.message_bar.text() and tab.panel.bt_run.isEnabled()
    tab.ed_axes["mean"].setText("-0.3:0.3:3")
    tab.panel.cb_sched.setCurrentText("tcp://nowhere")
    assert not tab.panel.run() and "scheduler" in ws.message_bar.text()
    # cancel a long serial sweep while it runs: right after Run, so that the check does not depend on
    # how fast the GUI thread takes the rows (on a loaded machine it took none before all 60 were done)
    _small(tab, "none", mean="-0.4:0.4:30", seed="1..2", steps=1500)
    assert tab.panel.run()
    tab.panel.cancel()
    _wait(qtbot, tab.panel)
    assert len(tab.panel.rows) < 60 and "cancelled" in tab.panel.lbl.text()
    assert tab.panel.bt_run.isEnabled() and not tab.panel.bt_cancel.isEnabled()
    # settings: saved with the workspace, restored into a fresh tab
    tab.ed_more.setText("dt=0.005,0.01")
    main_window.settings.beginGroup("test")
    ws.save_settings(main_window.settings)
    tab.ed_more.setText("")
    tab.sp_steps.setValue(7)
    ws.restore_settings(main_window.settings)
    main_window.settings.endGroup()
    assert tab.ed_more.text() == "dt=0.005,0.01" and tab.sp_steps.value() == 1500
    assert tab.panel.cb_sched.currentText() == "none"
