"""The Cahn–Hilliard PFHub tab: a benchmark run off the GUI thread drawing F(t) on log–log axes, posted
curves as overlays (bad files kept as a message), cancel, exports, settings, the field shown after."""
from __future__ import annotations

import csv

import numpy as np

TIMEOUT = 60000


def _small(tab, t_end=50.0):
    tab.cb_variant.setCurrentIndex(tab.cb_variant.findData("pfhub-1a"))
    tab.sp_dx.setValue(4.0)                    # 50 × 50 cells
    tab.sp_tend.setValue(t_end)


def test_run_draws_f_of_t_and_shows_the_field(qtbot, ws, tmp_path):
    tab = ws.pfhub
    _small(tab)
    assert tab.run()
    assert not tab.bt_run.isEnabled() and tab.bt_cancel.isEnabled()
    qtbot.waitUntil(lambda: tab.job is None, timeout=TIMEOUT)
    res = tab.result
    assert res.t[-1] == 50.0 and res.steps > 3 and np.all(np.diff(res.free_energy) < 0)
    assert tab.progress.value() == 1000 and "t = 50" in tab.progress.format()
    assert "accepted steps" in tab.lbl.text() and "F(10)" in tab.lbl.text()
    items = [i for i in tab.plot.listDataItems()]
    assert len(items) == 1 and np.allclose(10 ** items[0].getData()[1], res.free_energy[1:])
    # the view shows the run's final field
    assert ws.sim.params.initial == "pfhub" and ws.sim.t == 50.0
    np.testing.assert_array_equal(ws.sim.field_numpy(), tab.sim.field_numpy())
    # exports
    out = tab.export_csv(str(tmp_path / "F.csv"))
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["time", "free_energy"] and len(rows) == len(res.t) + 1
    png = tab.export_plots(str(tmp_path / "F.png"))
    assert png is not None and png.stat().st_size > 1000


def test_posted_curves_overlay_and_bad_files(qtbot, ws, tmp_path, rng):
    tab = ws.pfhub
    t = np.sort(rng.uniform(1, 1e4, 30)); f = rng.uniform(20, 320, 30)
    good = tmp_path / "moose_1a.csv"
    with open(good, "w", newline="") as fh:
        w = csv.writer(fh); w.writerow(["time", "free_energy"]); w.writerows(zip(t, f))
    assert tab.load_posted(str(good)) == "moose_1a"
    items = tab.plot.listDataItems()
    assert len(items) == 1 and np.allclose(10 ** items[0].getData()[0], t)
    assert "moose_1a" in [lab.text for _s, lab in tab.plot.legend.items]
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\nfoo,bar\n")
    assert tab.load_posted(str(bad)) is None
    assert "time" in ws.message_bar.text() and len(tab.posted) == 1          # state kept
    tab.clear_posted()
    assert not tab.plot.listDataItems()


def test_cancel_and_settings(qtbot, ws):
    tab = ws.pfhub
    _small(tab, t_end=1e7)
    tab.sp_tol.setValue(1e-5)
    assert tab.run()
    qtbot.waitUntil(lambda: tab.result is not None, timeout=TIMEOUT)
    tab.cancel()
    qtbot.waitUntil(lambda: tab.job is None, timeout=TIMEOUT)
    assert tab.result.t[-1] < 1e7 and "cancelled" in tab.lbl.text()
    state = tab.state()
    tab.restore({"variant": "pfhub-1d", "dx": 99, "rule": "yes"})             # malformed: ignored
    assert tab.state() == state
    tab.ed_rate.setText("fast")                                               # bad input: a message, no run
    assert not tab.run() and "threshold" in ws.message_bar.text() and tab.job is None
    tab.ed_rate.setText("1e-14")
    tab.restore({**state, "variant": "pfhub-1b", "dx": 2.0})
    assert tab.cb_variant.currentData() == "pfhub-1b" and tab.sp_dx.value() == 2.0
    i = tab.cb_variant.findData("pfhub-1d")
    assert not tab.cb_variant.model().item(i).isEnabled() and "sphere" in tab.cb_variant.model().item(i).toolTip()


def test_pfhub_presets_apply_in_the_workspace(qtbot, ws):
    from explorer.presets import load_presets
    found = {p["name"]: p for p in load_presets("cahn_hilliard")}
    pre = found["PFHub 1c"]
    ws.apply_preset({**pre, "params": {**pre["params"], "run": False}})
    p = ws.sim.params
    assert p.domain == "t-shape" and p.shape == (120, 100) and ws.canvas.shape == (120, 100)
    assert "PFHub benchmark 1" in ws.caption() and "100×120" in ws.caption()
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count >= ws.worker.steps_per_frame, timeout=TIMEOUT)
    assert ws.sim.adaptive_log is not None and len(ws.sim.adaptive_log) >= 1
