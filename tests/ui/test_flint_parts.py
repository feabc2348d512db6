"""The parts of the Flint workspace, each alone (no workspace, no main window): the run form, the
parameter table, the SBML panel, the trace view and the run controls (issue 36)."""
from __future__ import annotations

import csv
import time

import numpy as np
import pytest
from PyQt6.QtCore import pyqtSignal

from explorer import undo
from kernels.flint.loaders import read_model
from kernels.flint.run import FlintRun
from support.sbml_docs import event_sbml


def small_model(tmp_path, rng, n_states=3):
    """A random linear model: states x0…, parameters k0…, a chain x_i' = -k_i x_i + x_{i-1}."""
    ks = rng.uniform(0.1, 2.0, n_states)
    lines = ["model chain"] + [f"state x{i} = {rng.uniform(0.5, 2.0):.6f}" for i in range(n_states)]
    lines += [f"param k{i} = {k:.6f}" for i, k in enumerate(ks)]
    lines += [f"ode x{i} = -k{i}*x{i}" + (f" + x{i - 1}" if i else "") for i in range(n_states)]
    p = tmp_path / "chain.flint"
    p.write_text("\n".join(lines) + "\n")
    return read_model(p).model


# ----------------------------------------------------------------------------------- FlintRunForm
@pytest.fixture
def form(qtbot):
    from explorer.flint.run_form import FlintRunForm
    f = FlintRunForm(gpu=False)
    qtbot.addWidget(f)
    return f


def test_run_form_builds_and_shows_a_flint_run(form, tmp_path, rng):
    m = small_model(tmp_path, rng)
    form.bind_model(m)
    assert [form.cb_record.itemText(i) for i in range(form.cb_record.count())] == list(m.states)
    n, spread, dt = int(rng.integers(2, 9)), round(float(rng.uniform(0.05, 0.5)), 2), 0.02
    form.set_controls({"members": "ensemble", "n": n, "vary": "k1", "spread": spread, "dt": dt, "t_end": 5.0,
                       "method": "rk4", "engine": "numpy", "record": "x2"})
    run = form.flint_run()
    assert isinstance(run, FlintRun) and (run.n, run.method, run.engine, run.record, run.dt) == \
        (n, "rk4", "numpy", ("x2",), dt)
    # the old keys (a session or preset before the two axes): runtime cpu is engine numpy
    form.set_controls({"integrator": "euler", "runtime": "cpu"})
    assert (form.value("method"), form.value("engine")) == ("euler", "numpy")
    form.set_controls({"method": "rk4"})
    (v,) = run.vary
    k1 = m.params["k1"]
    assert (v.param, v.lo, v.hi) == ("k1", pytest.approx(k1 * (1 - spread)), pytest.approx(k1 * (1 + spread)))
    np.testing.assert_allclose(run.member_params()["k1"], np.linspace(k1 * (1 - spread), k1 * (1 + spread), n))
    # a session's run, shown on a fresh form, gives the same run back
    from explorer.flint.run_form import FlintRunForm
    other = FlintRunForm(gpu=False)
    other.bind_model(m)
    other.set_run(FlintRun.from_dict(m, run.to_dict()))
    assert other.flint_run().to_dict() == run.to_dict()
    assert other.controls()["spread"] == pytest.approx(spread)
    # a line with one-way protocol: the ring's initial-state row shows for rings only
    form.set_controls({"members": "ring", "n": 6, "init": "one-way wave"})
    assert form.row_visible("init") and form.one_way() and form.flint_run().protocol == "one-way"
    form.set_controls({"members": "line"})
    assert not form.row_visible("init") and form.flint_run().protocol == "uniform"
    with pytest.raises(Exception, match="not available"):
        form.set_controls({"method": "rk45"})
    with pytest.raises(Exception, match="not available"):
        form.set_controls({"engine": "cpu-nope"})


def test_run_form_edits_are_signalled_once_and_undone(form, tmp_path, rng):
    form.bind_model(small_model(tmp_path, rng))
    stack = undo.attach(form)
    seen = []
    form.edited.connect(lambda k, old, new: seen.append((k, old, new)))
    dt0, t0 = form.sp_dt.value(), form.sp_tend.value()
    t1 = round(float(rng.uniform(10, 900)), 1)
    form.sp_tend.setValue(t1)
    form.sp_tend.setValue(t1 + 1.0)                 # consecutive edits of one field: one step
    form.cb_method.setCurrentText("rk4")
    assert seen == [("t_end", t0, t1), ("t_end", t1, t1 + 1.0), ("method", "euler", "rk4")]
    assert stack.count() == 2
    stack.undo()
    assert form.cb_method.currentText() == "euler"
    stack.undo()
    assert form.sp_tend.value() == t0 and form.sp_dt.value() == dt0
    stack.redo()
    assert form.sp_tend.value() == t1 + 1.0
    # the boxes are undone by their text (their lists change with the model)
    form.cb_vary.setCurrentText("k1")
    assert stack.text(stack.count() - 1) == "Vary parameter: (none) → k1"
    stack.undo()
    assert form.cb_vary.currentText() == "(none)"
    # loading a model and set_value are no edits
    n = stack.count()
    form.bind_model(small_model(tmp_path, rng, 4))
    form.set_value("dt", 0.05)
    assert stack.count() == n and form.sp_dt.value() == 0.05


def items(box) -> list[str]:
    return [box.itemText(i) for i in range(box.count())]


def test_run_form_offers_the_engines_methods(form):
    """The Engine box is the engine axis (never the old runtime name cpu); the Method box offers what the
    chosen engine offers, from the registries (kernels.flint.schemes.engine_table)."""
    from kernels.flint.schemes import engine_table
    engines = items(form.cb_engine)
    assert engines[0] == "auto" and "numpy" in engines and "cpu" not in engines
    for e in engines:
        form.cb_engine.setCurrentText(e)
        want = [m for m in engine_table("flint").get(e, ["euler", "rk4"]) if m in ("euler", "rk4")]
        assert items(form.cb_method) == want, e


def test_run_form_sbml_mode_and_lecture(form, tmp_path, rng):
    form.bind_model(small_model(tmp_path, rng))
    form.cb_engine.setCurrentText("numpy")
    # an SBML model with events that the ensemble engines take: dopri5 / rodas4 on them, lsoda on numpy
    form.set_sbml_mode(["a", "b"], "b", ensemble=True, varied=["k"])
    assert form.cb_engine.currentText() == "auto" and form.cb_record.currentText() == "b"
    assert items(form.cb_method)[0] == "dopri5" and "lsoda" in items(form.cb_method)
    assert form.sp_n.isEnabled() and not form.cb_dtype.isEnabled() and not form.reference()
    assert items(form.cb_vary) == ["(none)", "k"]
    form.set_controls({"engine": "numpy", "method": "lsoda"})
    assert form.reference() and not form.sp_n.isEnabled() and "SBML reference" in form.sp_n.toolTip()
    # … that only the reference simulator takes: lsoda on numpy
    form.set_sbml_mode(["a", "b"], "b", ensemble=False)
    assert items(form.cb_method) == ["lsoda"] and form.reference()
    assert not form.cb_dtype.isEnabled() and "SBML model with events" in form.cb_dtype.toolTip()
    assert form.label("dt") == "dt (output interval)" and form.model is None
    with pytest.raises(Exception, match="no Flint model"):
        form.flint_run()
    form.set_sbml_mode(None)
    form.bind_model(small_model(tmp_path, rng))
    assert form.cb_engine.currentText() == "numpy" and items(form.cb_method) == ["euler", "rk4"]
    assert form.sp_n.isEnabled() and "Runge" in form.cb_method.toolTip() and form.label("dt") == "dt (ms)"
    form.show()
    form.set_lecture(True)
    assert not form.row_visible("dtype") and form.row_visible("dt")
    form.set_lecture(False)
    assert form.row_visible("dtype")


# --------------------------------------------------------------------------------- ParameterTable
@pytest.fixture
def table(qtbot):
    from explorer.flint.params_table import ParameterTable
    t = ParameterTable()
    qtbot.addWidget(t)
    return t


def test_parameter_table_checks_values_and_signals_edits(table, rng):
    values = {f"p{i}": float(rng.uniform(-5, 5)) for i in range(6)}
    table.show_parameters("m", values, {k: "mV" for k in values}, fixed={"p5": "set by a rule"})
    assert table.values() == values and table.horizontalHeaderItem(2).text() == "units"
    edits, refusals = [], []
    table.edited.connect(lambda *a: edits.append(a))
    table.refused.connect(refusals.append)
    v = float(rng.uniform(10, 20))
    table.item(2, 1).setText(repr(v))                      # typed
    assert edits == [("p2", values["p2"], v)] and table.value("p2") == v
    table.item(2, 1).setText("abc")                        # refused, put back
    assert table.item(2, 1).text() == repr(v) and "'abc' is not a number" in refusals[0]
    table.item(3, 1).setText("nan")
    assert table.value("p3") == values["p3"] and len(refusals) == 2
    table.set_value("p0", 1.25)
    assert edits[-1] == ("p0", values["p0"], 1.25)
    for bad, match in (("nosuch", "not a parameter of m"), ("p5", "not editable")):
        with pytest.raises(Exception, match=match):
            table.set_value(bad, 1.0)
    assert not table.editable("p5") and table.editable("p4")


def test_parameter_table_undo_per_parameter_and_per_model(table, rng):
    stack = undo.attach(table)
    values = {f"p{i}": float(rng.uniform(1, 5)) for i in range(4)}
    table.show_parameters("m", values, {})
    table.set_value("p1", 7.0)
    table.set_value("p1", 8.0)              # merges with the edit before
    table.set_value("p3", 9.0)
    assert stack.count() == 2
    stack.undo()
    assert table.value("p3") == values["p3"]
    stack.undo()
    assert table.value("p1") == values["p1"] and table.item(1, 1).text() == repr(values["p1"])
    stack.redo()
    assert table.value("p1") == 8.0
    # another model shown: the old entries do nothing to it
    other = {f"p{i}": float(rng.uniform(1, 5)) for i in range(4)}
    table.show_parameters("n", other, {})
    stack.undo()
    assert table.values() == other


# ------------------------------------------------------------------------------------- SbmlPanel


def test_sbml_panel_owns_the_reference_model_and_names_gui_controls(qtbot, tmp_path, rng, monkeypatch):
    from explorer.flint.sbml_panel import GUI_REMEDY, SbmlPanel
    from kernels.flint.sbml.reference import MAX_OUTPUT_POINTS, output_times, reference_fallback, run_reference
    k, thr = float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.0, 3.0))
    ref = reference_fallback(event_sbml(tmp_path, k, thr))
    assert ref is not None
    panel = SbmlPanel()
    qtbot.addWidget(panel)
    assert panel.isHidden() and not panel.active()
    panel.enter(ref, "events are not supported", None)       # the ensemble engines take it
    assert not panel.isHidden() and "events are not supported" in panel.text() and panel.toolTip()
    assert panel.ensemble() and "runs as an ensemble" in panel.text() and panel.varied == ["k", "thr"]
    panel.enter(ref, "events are not supported", "delays are outside the ODE core")
    assert not panel.ensemble() and "SBML reference mode" in panel.text() and "delays" in panel.text()
    assert "delays are outside" in panel.loaded_text()
    values, roles, fixed = panel.parameters()
    assert values["k"] == k and "x" in values
    panel.set_parameter("k", 2 * k)
    panel.set_parameter("thr", thr)                 # the file's value: no edit
    assert panel.edits() == {"k": 2 * k}
    cfg = panel.run_config(4.0, 0.5, "x")
    np.testing.assert_array_equal(cfg["times"], output_times(4.0, 0.5))
    got = run_reference(cfg["sbml"], cfg["times"], cfg["record"], params=cfg["params"]).values[:, 0]
    phase = 2 * k * cfg["times"] / thr                # the sawtooth of the edited rate, away from its resets
    away = np.abs(phase - np.round(phase)) > 1e-3
    assert cfg["params"] == {"k": 2 * k} and away.sum() >= 5
    np.testing.assert_allclose(got[away], (thr * np.mod(phase, 1.0))[away], atol=1e-6)
    # a grid the reference simulator refuses: the message names the GUI's controls, not --every
    dt = 1e-4
    t_end = dt * MAX_OUTPUT_POINTS * float(rng.uniform(1.5, 3.0))
    with pytest.raises(Exception) as exc:
        panel.run_config(t_end, dt, "x")
    assert GUI_REMEDY in str(exc.value) and "every" not in str(exc.value)
    monkeypatch.setattr("kernels.backend.host_available_memory", lambda: 10_000)    # the solver's grid check
    with pytest.raises(Exception) as exc:
        panel.run_config(100.0, 0.01, "x")
    assert type(exc.value).__name__ == "GridTooLarge"
    assert GUI_REMEDY in str(exc.value) and "every" not in str(exc.value)
    monkeypatch.undo()
    panel.leave()
    assert not panel.active() and panel.isHidden() and panel.edits() == {}


# ------------------------------------------------------------------------------------- TraceView
def test_trace_view_streams_draws_and_exports(qtbot, tmp_path, rng):
    from explorer.flint.trace_view import MAX_TRACES, TraceView
    view = TraceView()
    qtbot.addWidget(view)
    n = int(rng.integers(MAX_TRACES + 1, 3 * MAX_TRACES))
    view.begin(["V"], n, {"V": "mV"})
    assert len(view.curves) == MAX_TRACES
    chunks = [(np.sort(rng.uniform(0, 1, 5)) + i, rng.normal(size=(5, 1, n))) for i in range(4)]
    for t, y in chunks:
        view.append(t, y)
    t_all, y_all = np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])
    np.testing.assert_array_equal(view.times, t_all)
    np.testing.assert_array_equal(view.samples, y_all)
    view.refresh()                       # streaming: the tab in front (Traces) is drawn, the heatmap waits
    k = int(view.show_idx[-1])
    np.testing.assert_array_equal(view.curves[-1].getOriginalDataset()[1], y_all[:, 0, k])
    assert view.heat.image is None or view.heat.image.shape != (len(t_all), n)
    view.setCurrentWidget(view.heat_view)    # bringing the heatmap to the front draws it
    assert view.heat.image.shape == (len(t_all), n)
    assert view.heat_bar.levels() == pytest.approx((y_all[:, 0].min(), y_all[:, 0].max()))
    # the readout: the sample of the nearest trace at the nearest time
    i = int(rng.integers(len(t_all)))
    text = view.describe_trace(t_all[i], y_all[i, 0, k])
    assert text.startswith(f"t = {t_all[i]:.5g} ms: V = ") and "mV" in text
    cell = int(rng.integers(n))
    assert f"cell {cell}: V = {y_all[i, 0, cell]:.5g} mV" in view.describe_heat(t_all[i], cell + 0.5)
    # export, and restore into another view
    out = view.write_traces(str(tmp_path / "t.csv"))
    rows = list(csv.reader(open(out, encoding="utf-8")))
    assert len(rows) == len(t_all) + 1 and float(rows[3][0]) == pytest.approx(t_all[2])
    again = TraceView()
    qtbot.addWidget(again)
    again.restore(t_all, y_all, ["V"], {"V": "mV"})
    np.testing.assert_array_equal(again.samples, y_all)
    # several states of one member: a legend, one curve a state; lecture mode thickens the pens
    view.begin(["a", "b", "c"], 1)
    view.append(np.arange(3.0), rng.normal(size=(3, 3, 1)))
    view.refresh()
    assert [lab.text for _s, lab in view.plot.getPlotItem().legend.items] == ["a", "b", "c"]
    view.set_lecture(True)
    assert all(c.opts["pen"].widthF() > 2 for c in view.curves)
    view.set_lecture(False)
    assert all(c.opts["pen"].widthF() == pytest.approx(1.5) for c in view.curves)


# ----------------------------------------------------------------------------------- RunControls
def test_run_controls_progress_pause_stop_and_finished(qtbot, rng):
    from explorer.flint.run_controls import RunControls
    from explorer.flint.worker import PROGRESS_SCALE
    from explorer.jobs import Job

    class Counter(Job):
        steps = pyqtSignal(object, float)

        def __init__(self, total):
            super().__init__("count")
            self.total, self.done_steps = total, 0

        def work(self):
            while self.done_steps < self.total and not self.checkpoint():
                self.done_steps += 1
                self.steps.emit(self.done_steps, 1000.0)
                time.sleep(0.002)

    bar = RunControls()
    qtbot.addWidget(bar)
    ended = []
    bar.finished.connect(ended.append)
    total = int(rng.integers(20, 60))
    w = Counter(total)
    bar.start(w, total)
    assert bar.is_running() and bar.bt_run.text() == "Running…"
    qtbot.waitUntil(lambda: not bar.is_running(), timeout=10000)
    assert ended == [w] and bar.progress.value() == PROGRESS_SCALE and "steps/s" in bar.lb_rate.text()
    assert bar.bt_run.text() == "Run"
    # pause, then stop: the worker ends early, finished once
    w2 = Counter(10 ** 6)
    bar.start(w2, 10 ** 6)
    bar.pause()
    assert bar.paused() and bar.bt_pause.text() == "Resume"
    bar.stop()
    qtbot.waitUntil(lambda: not bar.is_running(), timeout=10000)
    assert ended == [w, w2] and w2.done_steps < 10 ** 6 and bar.bt_pause.text() == "Pause"
    assert all(b.toolTip() for b in (bar.bt_run, bar.bt_pause, bar.bt_stop, bar.progress, bar.lb_rate))


# ---------------------------------------------------------------------- StimulusEditor, CompilerPanel
def test_stimulus_editor_writes_through_its_callback(qtbot, tmp_path, rng):
    from explorer.flint.stimulus import STIM_PARAMS, StimulusEditor
    names = [p[0] for p in STIM_PARAMS]
    vals = {"stim_amplitude": -float(rng.uniform(5, 50)), "stim_start": float(rng.uniform(0, 20)),
            "stim_duration": float(rng.uniform(0.5, 3)), "stim_period": float(rng.uniform(200, 900))}
    p = tmp_path / "stim.flint"
    p.write_text("model stim\nstate v = 0\n" + "".join(f"param {k} = {v:.2f}\n" for k, v in vals.items())
                 + "ode v = -v\n")
    m = read_model(p).model
    calls = []
    ed = StimulusEditor(lambda name, v: calls.append((name, v)))
    qtbot.addWidget(ed)
    ed.bind(m)
    assert ed.isEnabled() and calls == []                    # showing the model's values is no edit
    assert [ed.spins[k].value() for k in names] == pytest.approx([m.params[k] for k in names], abs=1e-9)
    ed.spins["stim_period"].setValue(321.0)
    assert calls == [("stim_period", 321.0)]
    ed.bind(small_model(tmp_path, rng))                       # no stimulus parameters: disabled, says why
    assert not ed.isEnabled() and all(k in ed.toolTip() for k in names)


def test_compiler_panel_compiles_in_the_background(qtbot, tmp_path, rng):
    from explorer.flint.compiler_panel import CompilerPanel
    from kernels.flint import compile_model
    panel = CompilerPanel()
    qtbot.addWidget(panel)
    m = small_model(tmp_path, rng, int(rng.integers(2, 6)))
    panel.request(m, 1, {}, None)
    qtbot.waitUntil(lambda: not panel.busy() and panel.prog is not None, timeout=30000)
    want = compile_model(m, 1, {}, None, panel.options())
    assert panel.level_counts() == list(want.level_counts)
    assert want.listing() in panel.listing.toPlainText()
    assert list(panel.bars.opts["height"]) == list(want.level_counts)
    header, rows = panel.table_rows()
    assert header[0] == "option" and len(rows) == len(panel.checks)
    panel.set_option("cse", False)
    qtbot.waitUntil(lambda: not panel.busy() and not panel.prog.options.cse, timeout=30000)
    assert all(b.toolTip() for b in (panel.bt_csv, panel.bt_chart, *panel.checks.values()))


def test_a_compile_finishing_after_its_panel_is_deleted_is_dropped(qtbot, tmp_path, rng):
    """A window closed and deleted while its background compile runs: the result arrives for a deleted
    panel and is dropped (it raised "wrapped C/C++ object … has been deleted" in the job's slot)."""
    from PyQt6 import sip
    from PyQt6.QtWidgets import QApplication
    from explorer.flint.compiler_panel import CompilerPanel
    panel = CompilerPanel()
    panel.request(small_model(tmp_path, rng, int(rng.integers(2, 6))), 1, {}, None)
    jobs = list(panel._jobs)
    sip.delete(panel)
    for j in jobs:
        assert j.wait(30000)
    for _ in range(20):                                        # the job's queued done signal
        QApplication.processEvents()
    assert sip.isdeleted(panel)


def test_trace_view_marks_events_on_the_time_axis(qtbot, rng):
    """set_events draws one dashed vertical line a firing (at most MAX_EVENT_MARKERS), under the traces;
    a new run (begin) and an empty list take them away."""
    from explorer.flint.trace_view import MAX_EVENT_MARKERS, TraceView
    view = TraceView()
    qtbot.addWidget(view)
    view.begin(["x"], 2)
    times = np.sort(rng.uniform(0, 50, int(rng.integers(3, 20))))
    view.set_events(times)
    items = view.plot.getPlotItem().items
    assert [m.value() for m in view.event_markers] == list(times) and all(m in items for m in view.event_markers)
    assert all(m.angle == 90 and m.zValue() < 0 for m in view.event_markers)
    view.set_events(np.arange(MAX_EVENT_MARKERS + 7, dtype=float))
    assert len(view.event_markers) == MAX_EVENT_MARKERS and len(view.event_times) == MAX_EVENT_MARKERS + 7
    view.begin(["x"], 1)
    assert not view.event_markers and not len(view.event_times)
    view.set_events(times)
    view.set_events([])
    assert not view.event_markers and not any(m in view.plot.getPlotItem().items for m in view.event_markers)
