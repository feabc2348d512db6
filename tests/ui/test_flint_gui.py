"""Flint workspace: load, edit a parameter, run, traces while running, stop, export, presets, sessions."""
from __future__ import annotations

import json

import numpy as np
import pytest
from support.paths import ROOT



def _wait_done(qtbot, ws, timeout=60000):
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=timeout)


def test_load_edit_run_stop_export(flint_ws, qtbot, tmp_path):
    ws = flint_ws
    assert ws.model is not None and ws.model.name == "luo_rudy_1991"
    assert ws.table.rowCount() == len(ws.model.params)
    ws.set_parameter("g_Na", 20.0)
    assert ws.model.params["g_Na"] == 20.0
    r = [ws.table.item(i, 0).text() for i in range(ws.table.rowCount())].index("g_Na")
    ws.table.item(r, 1).setText("abc")                  # bad value: refused, kept
    assert ws.model.params["g_Na"] == 20.0 and ws.message.isVisible()
    qtbot.waitUntil(lambda: not ws.compiler.busy() and "CONST" in ws.listing.toPlainText(), timeout=20000)
    assert "DAG levels" in ws.listing.toPlainText()
    ws.form.sp_tend.setValue(20000.0)
    ws.run()
    qtbot.waitUntil(lambda: ws.samples.shape[0] > 5, timeout=20000)
    assert ws.is_running(), ws.message.findChild(type(ws.lb_rate)).text() if ws.message.findChild(type(ws.lb_rate)) else ""
    qtbot.waitUntil(lambda: ws.curves[0].getData()[0] is not None and len(ws.curves[0].getData()[0]) > 0,
                    timeout=5000)
    ws.stop()
    _wait_done(qtbot, ws)
    n = ws.samples.shape[0]
    assert 0 < n < 200000                                 # stopped early, finished traces kept
    ws.export_plots(str(tmp_path / "t.csv"))
    ws.export_plots(str(tmp_path / "t.npz"))
    ws.export_image(str(tmp_path / "t.png"))
    assert (tmp_path / "t.csv").read_text().startswith("t,V")
    assert np.load(tmp_path / "t.npz")["traces"].shape[0] == n
    assert (tmp_path / "t.png").stat().st_size > 1000


def test_ring_heatmap_and_pause(flint_ws, qtbot):
    ws = flint_ws
    ws.form.set_controls({"members": "ring", "n": 12, "t_end": 30.0, "dt": 0.01})
    ws.run()
    ws.pause()
    assert ws.worker.is_paused
    ws.pause()
    _wait_done(qtbot, ws)
    assert ws.samples.shape[2] == 12 and ws.heat.image is not None and ws.heat.image.shape[1] == 12


def test_presets_and_session(flint_ws, qtbot):
    ws = flint_ws
    presets = json.loads((ROOT / "resources/presets/flint.json").read_text())["presets"]
    names = [p["name"] for p in presets]
    assert "single LR-1991 beat" in names and "LR ring: colliding wavefronts" in names
    for p in presets:
        assert p["paper"] == "004 ch. 5" and "params_cpu" in p
    p = dict(presets[0])
    p["params_cpu"] = {**p["params_cpu"], "t_end": 50.0}
    ws.apply_preset(p)
    _wait_done(qtbot, ws)
    assert ws.samples.shape[0] > 0 and "single LR-1991 beat" in ws.caption()
    state, data = ws.session_state(), ws.session_data()
    json.dumps(state)
    ws.form.set_controls({"t_end": 7.0})
    ws.restore_session(state, data)
    assert ws.form.sp_tend.value() == 50.0 and np.array_equal(ws.samples, data["traces"])
    ws.set_lecture_mode(True)
    ws.set_lecture_mode(False)


def test_bad_model_file_keeps_app(flint_ws, tmp_path):
    ws = flint_ws
    bad = tmp_path / "bad.flint"
    bad.write_text("model x\nstate y = 1\n")
    ws.open_field(str(bad))
    assert ws.message.isVisible() and ws.model.name == "luo_rudy_1991"


@pytest.mark.slow
def test_reentry_preset_circulates_one_way(flint_ws, qtbot):
    """Preset "LR ring: sustained re-entry": one-way wave initial state, stimulus off, the wave
    goes round the ring ≥ 2 times in the recorded V (cell × time heatmap).  The run is watched on
    the Heatmap tab, where this preset's result shows (its description says so): on the Traces tab
    the 50 ms redraw of 64 growing traces took the GUI thread, and the GIL from the run's thread,
    for most of the test's time; with the heatmap in front the run's thread has the time to itself."""
    from kernels.flint.protocols import circulation
    ws = flint_ws
    presets = json.loads((ROOT / "resources/presets/flint.json").read_text())["presets"]
    p = dict(next(q for q in presets if q["name"] == "LR ring: sustained re-entry"))
    assert p["params"]["init"] == "one-way wave" and p["params"]["members"] == "ring"
    assert p["params"]["t_end"] >= 1800.0                       # ≥ 3 revolutions of ≈ 565 ms shown
    p["params_cpu"] = {**p["params_cpu"], "t_end": 1250.0, "run": False}   # ≥ 2 revolutions, quicker
    ws.apply_preset(p)
    assert ws.one_way() and ws.form.row_visible("init") and "re-entry" in ws.form.cb_init.toolTip()
    run = ws.flint_run()
    assert run.protocol == "one-way" and not run.member_params()["stim_amplitude"].any()
    ws.view.setCurrentWidget(ws.heat_view)
    ws.run()
    _wait_done(qtbot, ws, timeout=240000)
    n = p["params"]["n"]
    assert ws.samples.shape[2] == n and ws.heat.image is not None and ws.heat.image.shape[1] == n
    assert "one-way wave" in ws.caption()
    c = circulation(ws.times, ws.samples[:, 0, :])
    assert c["direction"] == 1                                  # one way, a single wave
    assert len(c["events"]) >= 2 * n                            # every cell passed ≥ 2 times
    ws.form.set_controls({"members": "line"})
    assert not ws.form.row_visible("init") and not ws.one_way()


@pytest.mark.slow
def test_several_recorded_states_rybak_preset(flint_ws, qtbot, tmp_path):
    """Preset "Rybak CPG: flexor–extensor rhythm" records two population traces (a comma list) of one
    member: one curve each with a legend, samples (k, 2, 1), CSV columns named after them; a pattern
    picks several states; a pattern that matches nothing, or several states with N > 1, only shows
    a message."""
    ws = flint_ws
    presets = json.loads((ROOT / "resources/presets/flint.json").read_text())["presets"]
    p = dict(next(q for q in presets if q["name"] == "Rybak CPG: flexor–extensor rhythm"))
    assert p["params"]["t_end"] >= 2500.0                     # ≥ 2 cycles of ≈ 1.2 s
    p["params_cpu"] = {**p["params_cpu"], "t_end": 20.0}      # the rhythm itself: tests/flint/test_flint_models.py
    ws.apply_preset(p)
    _wait_done(qtbot, ws)
    assert ws.record_names == ["S_Mn_F", "S_Mn_E"]
    assert ws.samples.shape[1:] == (2, 1) and ws.samples.shape[0] > 10 and len(ws.curves) == 2
    legend = ws.plot.getPlotItem().legend
    assert legend is not None and [lab.text for _s, lab in legend.items] == ws.record_names
    assert np.array_equal(ws.curves[1].getOriginalDataset()[1], ws.samples[:, 1, 0])
    ws.export_plots(str(tmp_path / "r.csv"))
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == "t,S_Mn_F,S_Mn_E"
    ws.form.cb_record.setEditText("V_RG_*_0")                      # a pattern: V of neuron 0 of RG-F and RG-E
    assert ws.flint_run().record_index == [list(ws.model.states).index(s) for s in ("V_RG_F_0", "V_RG_E_0")]
    ws.message.hide()
    ws.form.cb_record.setEditText("nope_*")
    ws.run()
    assert not ws.is_running() and ws.message.isVisible()
    ws.form.cb_record.setEditText("S_RG_F, S_RG_E")
    ws.form.set_controls({"n": 3})
    ws.run()
    assert not ws.is_running() and ws.message.isVisible()


def test_compiled_cpu_runtimes_match_numpy(flint_ws, qtbot):
    """Runtimes c and c-is (the TS / IS sources compiled by the host C++ compiler) run from the GUI on
    a line, and give the NumPy runtime's traces."""
    import pytest
    from kernels.flint.runtimes.host_c import find_compiler
    ws = flint_ws
    if find_compiler() is None:
        assert ws.form.cb_engine.findText("c") < 0          # not offered without a compiler
        pytest.skip("no host C++ compiler")
    assert "compiled for the host" in ws.form.cb_engine.toolTip()
    traces = {}
    for rt in ("numpy", "c", "c-is"):
        ws.form.set_controls({"engine": rt, "members": "line", "n": 8, "t_end": 30.0, "dt": 0.01})
        assert ws.form.cb_engine.currentText() == rt
        ws.run()
        _wait_done(qtbot, ws)
        assert ws.samples.shape[0] > 0, f"engine {rt}: no traces"
        if rt != "numpy":                                 # the compile is announced, then its time
            assert f"compiled for engine {rt} in" in ws.message.label.text(), ws.message.label.text()
        traces[rt] = ws.samples.copy()
    assert traces["numpy"].shape == traces["c"].shape and traces["numpy"].max() > 0
    for rt in ("c", "c-is"):
        np.testing.assert_allclose(traces[rt], traces["numpy"], rtol=1e-9, atol=1e-9)


def test_session_saves_the_flint_run_and_runs_without_controls_restore(flint_ws):
    """The workspace builds a FlintRun (the CLI's spec); the session saves it, and a session with only
    the run (no "controls") restores the same widgets.  "± spread" is the CLI's vary lo..hi."""
    from kernels.flint.run import FlintRun
    ws = flint_ws
    ws.form.set_controls({"members": "ensemble", "n": 5, "vary": "g_Na", "spread": 0.25, "t_end": 3.0, "dt": 0.01,
                          "method": "rk4", "engine": "numpy", "record": "V"})
    run = ws.flint_run()
    assert isinstance(run, FlintRun) and run.n == 5 and run.integrator == "rk4" and run.record == ("V",)
    g0 = ws.model.params["g_Na"]
    (v,) = run.vary
    assert (v.param, v.lo, v.hi) == ("g_Na", g0 * 0.75, g0 * 1.25)
    np.testing.assert_array_equal(ws.flint_run().member_params()["g_Na"], np.linspace(g0 * 0.75, g0 * 1.25, 5))
    state = ws.session_state()
    json.dumps(state)
    assert state["run"] == run.to_dict()
    only_run = {k: v for k, v in state.items() if k not in ("controls", "params")}
    ws.form.set_controls({"n": 2, "spread": 0.1, "method": "euler", "t_end": 9.0})
    ws.restore_session(only_run, {})
    assert ws.form.sp_n.value() == 5 and ws.form.cb_method.currentText() == "rk4" and ws.form.sp_tend.value() == 3.0
    assert ws.form.cb_engine.currentText() == "numpy"
    # an old session's controls (runtime / integrator keys; runtime cpu) restore the same run
    old_ctl = {k: v for k, v in state["controls"].items() if k not in ("method", "engine")}
    old_ctl.update(runtime="cpu", integrator="rk4")
    ws.form.set_controls({"method": "euler", "engine": "auto"})
    ws.restore_session({**state, "controls": old_ctl}, {})
    assert ws.flint_run().to_dict() == run.to_dict()
    assert abs(ws.form.sp_spread.value() - 0.25) < 1e-9 and ws.form.cb_vary.currentText() == "g_Na"
    assert ws.flint_run().to_dict() == run.to_dict()


def test_files_read_by_a_model_are_shown(flint_ws, tmp_path, rng):
    """Issue 35: the paths a model's reading opened (here an SBML comp external definition beside
    it) are reported in the GUI too, not only in ``flint --json``."""
    from support.sbml_docs import SUB_SBML, sbml_top
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "sub.xml").write_text(SUB_SBML.format(x0=float(rng.uniform(1, 9))))
    top = sbml_top(tmp_path, "parts/sub.xml")
    assert flint_ws.load(str(top))
    assert flint_ws.files_read == [str(top.resolve()), str((parts / "sub.xml").resolve())]
    assert "files read" in flint_ws.message.text() and "sub.xml" in flint_ws.message.text()


def test_every_control_of_the_workspace_has_a_tooltip(flint_ws):
    """Issue 36: the whole workspace (controls, Compiler tab, trace views), not only the left panel."""
    from PyQt6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QPlainTextEdit, QTableWidget
    ws = flint_ws
    widgets = [w for cls in (QAbstractButton, QAbstractSpinBox, QComboBox, QPlainTextEdit, QTableWidget)
               for w in ws.findChildren(cls)]
    assert len(widgets) >= 35
    missing = [(type(w).__name__, getattr(w, "text", lambda: "")()) for w in widgets if not w.toolTip().strip()]
    assert not missing, missing


def test_session_round_trip_runs_exactly_the_saved_run(flint_ws, qtbot):
    """Issue 34: the worker integrates the FlintRun itself (run.simulation()); a restored session runs
    exactly the run it saved — same method/engine/threads, same numbers as that run built afresh.  An
    old session (runtime/integrator keys) restores the same run."""
    from kernels.flint.run import FlintRun
    from explorer.flint.worker import HOST_THREADS
    ws = flint_ws
    ws.form.set_controls({"members": "ensemble", "n": 3, "vary": "g_Na", "spread": 0.2, "t_end": 2.0, "dt": 0.01,
                          "method": "rk4", "engine": "numpy", "record": "V"})
    state = ws.session_state()
    saved = state["run"]
    assert (saved["method"], saved["engine"], saved["threads"]) == ("rk4", "numpy", HOST_THREADS)
    ws.form.set_controls({"n": 2, "spread": 0.1, "method": "euler", "t_end": 5.0})
    only_run = {k: v for k, v in state.items() if k not in ("controls", "params")}
    ws.restore_session(only_run, {})
    ws.run()
    worker = ws.worker
    assert worker is not None
    _wait_done(qtbot, ws)
    assert worker.run.to_dict() == saved
    ref_run = FlintRun.from_dict(ws.model, saved)
    ref = ref_run.simulation()
    ref.advance(ref_run.steps, ref_run.dt, record=ref_run.record_index, every=ref_run.every)
    np.testing.assert_allclose(worker.sim.state(), ref.state(), rtol=1e-12, atol=0)
    old = dict(saved)
    old["runtime"], old["integrator"] = "cpu", old.pop("method")
    old.pop("engine")
    ws.form.set_controls({"n": 2, "method": "euler"})
    ws.restore_session({**only_run, "run": old}, {})
    assert ws.flint_run().to_dict() == saved
