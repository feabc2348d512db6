"""Flint workspace, SBML models with events (refused by the fixed-step compiler): they open one way —
on the adaptive ensemble engines when the ODE core takes them, else on the SBML reference simulator,
else with one message saying why each engine refuses them; traces stream, parameter edits change the
next run, Stop works, a malformed file only shows a message, and a shipped Flint model brings the
fixed-step engines back."""
from __future__ import annotations


import numpy as np
import pytest

from kernels.flint.sbml.reference import load_reference, output_times, run_reference
from support.paths import SHARED

IZH = SHARED / "models" / "BIOMD0000000127.xml"                     # Izhikevich 2003: spike reset by events
CASE = SHARED / "sbml-test-suite" / "cases" / "00026" / "00026-sbml-l3v2.xml"   # EventNoDelay

needs_izh = pytest.mark.skipif(not IZH.is_file(), reason=f"{IZH} (published BioModels file) is not present")


def _wait_done(qtbot, ws, timeout=60000):
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=timeout)


def _row(ws, name):
    return [ws.table.item(i, 0).text() for i in range(ws.table.rowCount())].index(name)


@needs_izh
def test_events_model_opens_on_the_ensemble_engines_and_streams(flint_ws, qtbot):
    """BIOMD0000000127 (events) opens on the adaptive ensemble engines: engine auto, method dopri5 first;
    the streamed traces are the EnsembleRun's numbers exactly, and equal LSODA within tolerance."""
    from kernels.flint.adaptive_run import EnsembleRun
    ws = flint_ws
    ws.open_field(str(IZH))
    assert ws.in_sbml_mode() and ws.model is None and ws.sbml_panel.ensemble()
    assert ws.form.cb_engine.currentText() == "auto" and ws.form.cb_method.currentText() == "dopri5"
    assert "SBML events" in ws.cb_model.currentText() and "ensemble" in ws.message.text()
    assert not ws.tabs.isTabEnabled(ws.tabs.indexOf(ws.compiler))
    assert ws.form.sp_n.isEnabled() and not ws.form.cb_net.isEnabled() and not ws.form.cb_dtype.isEnabled()
    ws.form.set_controls({"t_end": 60.0, "dt": 0.5, "n": 3, "vary": "a", "spread": 0.2, "record": "v"})
    ws.run()
    assert ws.is_running()
    _wait_done(qtbot, ws)
    assert ws.samples.shape == (121, 1, 3) and ws.times[-1] == pytest.approx(60.0)
    run = ws.cfg["run"]
    assert (run.method, run.n, run.vary[0].param) == ("dopri5", 3, "a")
    np.testing.assert_array_equal(ws.samples, run.run().values)
    lsoda = run_reference(load_reference(IZH), output_times(60.0, 0.5), ["v"],
                          params={"a": run.vary[0].lo}).values[:, 0]
    np.testing.assert_allclose(ws.samples[:, 0, 0], lsoda, atol=1e-3 * np.abs(lsoda).max())
    state = ws.session_state()
    assert state["controls"]["engine"] == "auto" and state["run"]["kind"] == "ensemble"
    assert state["run"]["engine"] == run.engine and "dopri5" in ws.caption()


@needs_izh
def test_events_model_on_the_reference_simulator_runs_edits_stops(flint_ws, qtbot):
    ws = flint_ws
    ws.open_field(str(IZH))
    ws.form.set_controls({"engine": "numpy", "method": "lsoda"})
    assert ws.form.reference() and "LSODA" in ws.form.cb_engine.toolTip()
    assert "event" in ws.listing.toPlainText()
    assert not ws.form.sp_n.isEnabled() and not ws.form.cb_net.isEnabled()
    assert ws.message.isVisible()                        # says where it runs and why
    names = [ws.table.item(i, 0).text() for i in range(ws.table.rowCount())]
    assert {"a", "b", "c", "d", "Vthresh", "v", "U"} <= set(names)
    recs = [ws.form.cb_record.itemText(i) for i in range(ws.form.cb_record.count())]
    assert "v" in recs and "U" in recs
    ws.form.cb_record.setCurrentText("v")
    ws.form.set_controls({"t_end": 100.0, "dt": 0.1})
    ws.run()
    assert ws.is_running()
    _wait_done(qtbot, ws)
    assert ws.samples.shape == (1001, 1, 1) and ws.times[-1] == pytest.approx(100.0)
    assert ws.curves[0].getOriginalDataset()[0] is not None and len(ws.curves[0].getOriginalDataset()[0]) == 1001
    v1 = ws.samples[:, 0, 0].copy()
    # the streamed traces are exactly the reference simulator's numbers
    direct = run_reference(load_reference(IZH), output_times(100.0, 0.1), ["v"]).values[:, 0]
    assert np.array_equal(v1, direct)
    # spikes: v reaches the threshold and is reset by the event (resolution 0.1 may miss the peak)
    assert v1.max() > -30 and v1.min() < -65
    # edit a parameter: the next run differs; a bad value is refused
    r = _row(ws, "a")
    ws.table.item(r, 1).setText("0.1")
    assert ws.sbml_params == {"a": 0.1}
    ws.table.item(r, 1).setText("abc")
    assert ws.sbml_params == {"a": 0.1} and ws.table.item(r, 1).text() == "0.1"
    ws.run()
    _wait_done(qtbot, ws)
    v2 = ws.samples[:, 0, 0]
    assert v2.shape == v1.shape and np.abs(v2 - v1).max() > 1.0
    assert np.array_equal(v2, run_reference(load_reference(IZH), output_times(100.0, 0.1), ["v"],
                                            params={"a": 0.1}).values[:, 0])
    # a long run streams in chunks and stops early
    ws.form.set_controls({"t_end": 50000.0, "dt": 0.1})
    ws.run()
    # the bar counts per mille of 500 001 points: it moves once ~500 have streamed
    qtbot.waitUntil(lambda: ws.samples.shape[0] > 50 and ws.progress.value() > 0, timeout=30000)
    assert ws.is_running()
    ws.stop()
    _wait_done(qtbot, ws)
    n = ws.samples.shape[0]
    assert 50 < n < 500001 and len(ws.times) == n
    assert "stopped" in ws.lb_rate.text()
    assert "SBML reference" in ws.caption()
    state = ws.session_state()
    assert state["params"] == {"a": 0.1} and state["controls"]["method"] == "lsoda"
    assert state["controls"]["engine"] == "numpy"
    # a shipped model brings the fixed-step engines back
    ws.cb_model.setCurrentIndex(ws.cb_model.findText("luo_rudy_1991.flint"))
    assert not ws.in_sbml_mode() and ws.model is not None
    assert ws.form.cb_method.findText("lsoda") < 0 and ws.form.cb_engine.currentText() == "auto"   # the default
    assert ws.tabs.isTabEnabled(ws.tabs.indexOf(ws.compiler)) and ws.form.cb_method.isEnabled()


def test_suite_case_with_event_runs_in_gui(flint_ws, qtbot):
    if not CASE.is_file():
        pytest.skip(f"{CASE} (SBML Test Suite) is not present")
    ws = flint_ws
    ws.open_field(str(CASE))
    assert ws.in_sbml_mode()
    ws.form.cb_record.setCurrentText("S1")
    ws.form.set_controls({"t_end": 5.0, "dt": 0.1})
    ws.run()
    _wait_done(qtbot, ws)
    import csv
    rows = list(csv.DictReader(CASE.with_name("00026-results.csv").open()))
    want = np.array([float(r["S1"]) for r in rows])       # amounts; compartment size 1
    assert ws.samples.shape[0] == len(want)
    assert np.allclose(ws.samples[:, 0, 0], want, rtol=1e-4, atol=1e-4)


def test_malformed_sbml_shows_message(flint_ws, tmp_path):
    ws = flint_ws
    bad = tmp_path / "bad.xml"
    bad.write_text("<sbml><model")
    ws.open_field(str(bad))
    assert ws.message.isVisible() and not ws.in_sbml_mode()
    assert ws.model is not None and ws.model.name == "luo_rudy_1991"
    ws.run()                                             # the app still runs the loaded model
    ws.stop()


@needs_izh
def test_malformed_after_sbml_mode_keeps_it(flint_ws, tmp_path):
    ws = flint_ws
    ws.open_field(str(IZH))
    bad = tmp_path / "bad.xml"
    bad.write_text("<sbml><model")
    ws.open_field(str(bad))
    assert ws.message.isVisible() and ws.in_sbml_mode() and ws.sbml.name == "BIOMD0000000127"
    with pytest.raises(Exception):
        ws.set_parameter("nosuch", 1.0)


def test_refused_output_grid_names_the_gui_controls(flint_ws, tmp_path):
    """Issue 36: a grid the reference simulator refuses is explained with the controls of the GUI
    (its row labels), not with the CLI's option "every"."""
    from support.sbml_docs import event_sbml
    ws = flint_ws
    assert ws.open_field(str(event_sbml(tmp_path, 1.0, 2.0))) and ws.in_sbml_mode()
    ws.form.set_controls({"t_end": 1e6, "dt": 1e-4})
    ws.run()
    text = ws.message.text()
    assert not ws.is_running() and ws.message.level == "error"
    assert ws.form.label("dt") in text and ws.form.label("t_end") in text and "every" not in text


def test_event_firings_are_marked_on_the_time_axis(flint_ws, qtbot, tmp_path, rng):
    """The sawtooth model's reset fires at j·thr/k: the finished run marks exactly those times (member 0)
    on the trace plot; a session keeps the markers."""
    from support.sbml_docs import event_sbml
    k, thr = float(rng.uniform(0.8, 2.0)), float(rng.uniform(1.0, 2.0))
    ws = flint_ws
    assert ws.open_field(str(event_sbml(tmp_path, k, thr))) and ws.sbml_panel.ensemble()
    ws.form.set_controls({"engine": "numpy", "method": "dopri5", "t_end": 9.0, "dt": 0.1, "n": 1, "record": "x"})
    ws.run()
    _wait_done(qtbot, ws)
    res = ws.last_result
    assert res is not None and res.complete
    if not res.reports_events:
        pytest.skip("the NumPy Dormand–Prince does not report event firings here")
    want = thr / k * np.arange(1, int(9.0 * k / thr) + 1)
    np.testing.assert_allclose(ws.view.event_times, want, rtol=1e-7)
    lines = [m.value() for m in ws.view.event_markers]
    assert lines == list(ws.view.event_times) and all(m in ws.plot.getPlotItem().items for m in ws.view.event_markers)
    assert "event firings marked" in ws.lb_rate.text()
    state, data = ws.session_state(), ws.session_data()
    np.testing.assert_allclose(state["event_times"], want, rtol=1e-7)
    ws.view.set_events([])
    assert not ws.view.event_markers
    ws.restore_session(state, data)
    np.testing.assert_allclose(ws.view.event_times, want, rtol=1e-7)


def test_suite_event_case_opens_the_way_biomodels_does(flint_ws, tmp_path):
    """Issue 34: an SBML model with events opens one way, suite case or BioModels file: the ensemble
    engines, else the reference simulator, else one message naming each refusal — never the fixed-step
    compiler's "stimuli must be piecewise functions of time" alone."""
    from explorer.flint.sbml_panel import open_sbml
    case = SHARED / "sbml-test-suite" / "cases" / "00987" / "00987-sbml-l3v1.xml"
    if not case.is_file():
        pytest.skip(f"{case} (SBML Test Suite) is not present")
    ws = flint_ws
    ref, ensemble_why, ref_why = open_sbml(case)
    opened = ws.open_field(str(case))
    text = ws.message.text()
    if ensemble_why is None:
        assert opened and ws.sbml_panel.ensemble() and ws.form.cb_method.currentText() != "lsoda"
    elif ref is not None:
        assert opened and ws.form.reference() and ensemble_why in text
    else:
        assert not opened and text.startswith("cannot run 00987") and ensemble_why in text and ref_why in text


def test_algebraic_rule_model_opens_on_rodas4(flint_ws, qtbot):
    """A model with an algebraic rule (suite case 00039): only the DAE core takes it, so the Method box
    offers rodas4 (and lsoda); the run equals the suite's expected values."""
    import csv
    case = SHARED / "sbml-test-suite" / "cases" / "00039" / "00039-sbml-l3v2.xml"
    if not case.is_file():
        pytest.skip(f"{case} (SBML Test Suite) is not present")
    ws = flint_ws
    assert ws.open_field(str(case)) and ws.sbml_panel.ensemble() and ws.sbml_panel.stiff_only
    methods = [ws.form.cb_method.itemText(i) for i in range(ws.form.cb_method.count())]
    assert methods == ["rodas4", "lsoda"] and not ws.form.reference()
    ws.form.set_controls({"t_end": 8.0, "dt": 0.16, "record": "S1"})
    ws.run()
    _wait_done(qtbot, ws)
    want = np.array([float(r["S1"]) for r in csv.DictReader(case.with_name("00039-results.csv").open())])
    assert ws.cfg["run"].method == "rodas4" and ws.samples.shape == (len(want), 1, 1)
    np.testing.assert_allclose(ws.samples[:, 0, 0], want, rtol=1e-4, atol=1e-4)
