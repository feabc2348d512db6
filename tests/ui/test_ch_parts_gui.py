"""Each part of the Cahn–Hilliard workspace tested alone (pytest-qt, real OpenGL under Xvfb): the
view bar, the parameter form with its edits model and undo, the decomposition report, the field
files and figures, the session reader and the diagnostic plots."""
from __future__ import annotations

import numpy as np
import pytest
from PyQt6.QtCore import QPointF
from PyQt6.QtWidgets import QWidget

from explorer import undo
from explorer.cahn_hilliard.canvas import FieldCanvas
from explorer.cahn_hilliard import controls as cp
from explorer.cahn_hilliard.controls import ControlPanel
from explorer.cahn_hilliard.decomposition import DecompositionReport, describe_decomposition, fit_gpus
from explorer.cahn_hilliard.param_edits import ParameterEdits
from explorer.cahn_hilliard.plots import DiagnosticsPlots
from explorer.cahn_hilliard.sessions import read_session, run_arrays
from explorer.cahn_hilliard.view_bar import ViewBar
from explorer.widgets import MessageBar
from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.simulation import CahnHilliard
from kernels.errors import ExplorerError


@pytest.fixture
def rng():
    return np.random.default_rng()


# ------------------------------------------------------------------ view bar
def test_view_bar_follows_the_canvas_and_its_choices_undo(qtbot, backend, rng):
    canvas = FieldCanvas(backend)
    n = int(rng.integers(8, 20))
    canvas.update_field(rng.uniform(-1, 1, (n, n, n)).astype(np.float32))
    bar = ViewBar(canvas, offered_gpus=2)
    qtbot.addWidget(bar)
    bar.sync(gpus=2)
    assert not bar.view3d_bar.isHidden() and bar.slice_slider.maximum() == n - 1
    assert not bar.slabs_check.isEnabled()                     # slabs are drawn over 2D fields only
    k = int(rng.integers(0, n))
    bar.slice_slider.setValue(k)
    assert canvas.slice_index == k and bar.slice_pos.text() == str(k)
    bar.slice_axis.setCurrentText("x")
    assert canvas.slice_axis == "x" and bar.state()["slice_axis"] == "x"
    bar.iso_check.setChecked(True)
    assert canvas.iso_enabled
    chosen = []
    bar.colormap_chosen.connect(chosen.append)
    stack = undo.attach(bar)
    bar.select_colormap("magma")
    bar.select_colormap("fire")                # one field edited twice: one undo step
    assert chosen == ["magma", "fire"] and stack.count() == 1
    stack.undo()
    assert bar.colormap() == "viridis" and chosen[-1] == "viridis"
    stack.redo()
    assert bar.colormap() == "fire"
    canvas.update_field(rng.uniform(-1, 1, (2 * n, 2 * n)).astype(np.float32))
    bar.sync(gpus=2)
    assert bar.view3d_bar.isHidden() and bar.slabs_check.isEnabled()


# --------------------------------------------------------- form + edits model
@pytest.fixture
def form(qtbot, backend):
    """A ControlPanel and its ParameterEdits on a small simulation, with an undo stack."""
    host = QWidget()
    qtbot.addWidget(host)
    sim = CahnHilliard(CHParams(size=16), backend)
    controls = ControlPanel(backend, parent=host)
    controls.set_params(sim.params)
    bar = MessageBar(host)
    import threading
    edits = ParameterEdits(sim, controls, bar, threading.RLock(), False, lambda m: bar.show_message(m, "error"))
    stack = undo.attach(host)
    form.host = host                    # keep the parent alive with the test
    host.show()                         # MessageBar.text() is the text shown
    return sim, controls, edits, bar, stack


def test_live_edits_apply_merge_and_undo(form, rng):
    sim, controls, edits, _bar, stack = form
    m0 = sim.params.m
    values = [round(float(v), 3) for v in rng.uniform(0.5, 3.0, 3)]
    for v in values:
        controls.set_value("m", v)                     # as typed in the form
    assert sim.params.m == pytest.approx(values[-1]) and stack.count() == 1     # merged
    stack.undo()
    assert sim.params.m == pytest.approx(m0) and controls.value("m") == pytest.approx(m0)
    stack.redo()
    assert sim.params.m == pytest.approx(values[-1])


def test_undo_of_a_needs_reset_edit_marks_it_again(form):
    sim, controls, edits, _bar, stack = form
    controls.set_value("size", 32)
    assert edits.pending == {"size": 32} and "⟳" in controls.labels["size"].text()
    stack.undo()                                        # back to the running 16: nothing pending
    assert edits.pending == {} and "⟳" not in controls.labels["size"].text()
    stack.redo()
    assert edits.pending == {"size": 32} and "⟳" in controls.labels["size"].text()
    sim.reset(edits.params())                           # Reset applies 32 …
    edits.clear()
    assert sim.params.size == 32 and "⟳" not in controls.labels["size"].text()
    stack.undo()                                        # … and undoing the edit pends 16, marked ⟳
    assert edits.pending == {"size": 16} and "⟳" in controls.labels["size"].text()


def test_refused_edit_is_shown_back_and_pushes_nothing(form):
    sim, controls, edits, bar, stack = form
    controls.set_value("gpus", 1)
    n0 = stack.count()
    controls.set_value("dx", 0.01)                     # allowed by the spin box …
    if bar.level == "error":                           # … refused by the model: shown back
        assert controls.value("dx") == pytest.approx(sim.params.dx) and stack.count() == n0
    programmatic = CHParams(size=24, m=2.0)
    controls.set_params(programmatic)                   # shown by the program: not an edit
    assert stack.count() in (n0, n0 + 1)
    assert controls.value("m") == 2.0


def test_3d_size_notice_lasts_while_its_size_is_pending(form):
    sim, controls, edits, bar, _stack = form
    controls.set_value("size", 256)
    controls.set_value("dim", 3)
    assert edits.pending["size"] == 64 and "64³" in bar.text() and bar.isVisibleTo(bar.parentWidget())
    controls.set_value("size", 32)                     # another size: the notice is stale, gone
    assert "64³" not in bar.text() and not bar.isVisibleTo(bar.parentWidget())
    controls.set_value("size", 64)
    controls.set_value("dim", 2)
    controls.set_value("size", 200)
    controls.set_value("dim", 3)
    assert "64³" in bar.text()
    sim.reset(edits.params())
    edits.clear()                                       # Reset: nothing pending, no notice
    assert not bar.isVisibleTo(bar.parentWidget()) and sim.params.shape == (64, 64, 64)


# ------------------------------------------------------------ decomposition
class _Sim:
    def __init__(self, d, notes=(), params=None):
        self.stepper, self.notes, self._d = object(), list(notes), d
        self.params = params or CHParams(size=16)

    def decomposition(self):
        return dict(self._d)


def test_decomposition_report_text_and_notes(qtbot):
    bar = MessageBar()
    qtbot.addWidget(bar)
    rep = DecompositionReport(bar)
    sim = _Sim({"gpus": 2, "exchange": "host", "slab_rows": [[0, 10], [10, 16]], "virtual_gpus": True},
               ["peer access off"], CHParams(size=16, gpus=2, exchange="host"))
    assert rep.sync(sim) and rep.text == "2 virtual GPUs · host · slabs of 10/6 rows"
    assert rep.slab_starts() == [10] and "peer access off" in bar.text() and bar.level == "info"
    assert not rep.sync(sim)                            # nothing new
    sim2 = _Sim({"gpus": 1})
    assert rep.sync(sim2) and rep.text == "" and not bar.isVisibleTo(None)
    assert describe_decomposition({"threads": 1}) == "cpu-threads · 1 thread (OpenMP)"
    p, note = fit_gpus(CHParams(size=16, gpus=3), 1, False)
    assert p.gpus == 1 and "3 GPUs were asked for" in note
    assert fit_gpus(CHParams(size=16), 2, True) == (CHParams(size=16), "")


# ------------------------------------------------------------------ sessions
def test_read_session_checks_before_anything_changes(backend, rng):
    seed = int(rng.integers(1, 10_000))
    sim = CahnHilliard(CHParams(size=16, seed=seed), backend)
    sim.step(int(rng.integers(3, 12)))
    data = run_arrays(sim.state_dict())
    state = {"params": sim.params.to_dict(), "pending": {"size": 32}, "t": sim.t, "steps": sim.step_count,
             "colormap": "fire", "preset": {"name": "x", "paper": "000"}, "plots_visible": False}
    plan = read_session(state, data)
    run = sim.check_state_dict({"params": plan.params, **plan.run})
    other = CahnHilliard(CHParams(size=16), backend)
    other.load_state_dict(run)
    assert np.array_equal(other.field_numpy(), sim.field_numpy()) and other.step_count == sim.step_count
    assert plan.pending == {"size": 32} and plan.view == {"colormap": "fire"} and plan.plots_visible is False
    assert read_session({"params": {**sim.params.to_dict(), "initial": "file"}}, {}).params.initial == "spinodal"
    with pytest.raises(ExplorerError):
        read_session({"params": sim.params.to_dict(), "pending": {"dt": -1.0}}, {})


# -------------------------------------------------------------------- plots
def _history(rng, n):
    t = np.sort(rng.uniform(1, 1000, n))
    return {"t": t, "energy": rng.uniform(0, 10, n), "mean": np.zeros(n), "length": 2 * t ** (1 / 3)}


def test_plots_time_axis_before_the_first_step_starts_at_zero(qtbot, rng):
    plots = DiagnosticsPlots()
    qtbot.addWidget(plots)
    plots.update_history({"t": [0.0], "energy": [float(rng.uniform(1, 9))], "mean": [0.0], "length": [np.nan]})
    for p in (plots.p_energy, plots.p_mean):
        lo, hi = p.viewRange()[0]
        assert lo >= 0 and hi > lo                      # not −0.5 … 0.5 around t = 0
    plots.update_history(_history(rng, 40))
    assert plots.p_energy.vb.autoRangeEnabled()[0] and plots.p_mean.vb.autoRangeEnabled()[0]


def test_length_legend_back_from_lecture_and_clear_of_the_curve(qtbot, rng):
    plots = DiagnosticsPlots()
    qtbot.addWidget(plots)
    plots.resize(1400, 320)
    plots.show()
    qtbot.waitExposed(plots)
    plots.update_history(_history(rng, 60))
    qtbot.wait(50)
    r0 = plots.legend.boundingRect()
    for lecture in (True, False):
        plots.set_lecture(lecture)
        qtbot.wait(50)
        plots.p_length.vb.autoRange()
        qtbot.wait(50)
        box = plots.legend.sceneBoundingRect()
        xs, ys = plots.c_length.getData()
        inside = [box.contains(plots.p_length.vb.mapViewToScene(QPointF(float(x), float(y))))
                  for x, y in zip(xs, ys)]
        assert not any(inside), f"legend over the L(t) curve (lecture {lecture})"
    r1 = plots.legend.boundingRect()
    assert (r1.width(), r1.height()) == (r0.width(), r0.height())


def test_3d_view_refits_the_cube_after_a_size_change_until_the_user_turns_it(qtbot, backend, rng):
    canvas = FieldCanvas(backend, size=(500, 400))
    qtbot.addWidget(canvas.native)
    n = int(rng.integers(8, 24))
    canvas.update_field(rng.uniform(-1, 1, (n, n, n)).astype(np.float32))
    canvas.native.show()
    qtbot.waitExposed(canvas.native)

    def want():
        w, h = canvas.view3d.size
        return 2.6 * n * max(1.0, h / w)
    for size in ((900, 400), (420, 700)):               # wide, then narrow and tall
        canvas.native.resize(*size)
        qtbot.waitUntil(lambda: canvas.view3d.camera.distance == pytest.approx(want()), timeout=3000)
    assert canvas.view3d.camera.distance > 2.6 * n       # the narrow view: farther, the whole cube shows
    canvas.camera_touched = True                        # the user turned or zoomed it: left alone
    d = canvas.view3d.camera.distance
    canvas.native.resize(900, 400)
    qtbot.wait(200)
    assert canvas.view3d.camera.distance == d
    canvas.reset_camera()                               # Reset view fits it again
    assert canvas.view3d.camera.distance == pytest.approx(want()) and not canvas.camera_touched


def test_steps_per_pass_is_a_live_option_of_kernel_e_and_cpu_threads(form, rng):
    """Issue 38: the temporal-blocking k is in the form's time-stepping group, enabled only for the
    variants that read it, applied live (no Reset) and undoable."""
    sim, controls, edits, _bar, stack = form
    assert "steps_per_pass" in dict(cp.GROUPS)["Time stepping"]
    for v in ("E", "reference", "cpu-threads", "B", "reference"):
        controls.set_value("variant", v)                 # as chosen in the form
        assert controls.widgets["steps_per_pass"].isEnabled() == (v in ("E", "cpu-threads")), v
    k = str(rng.choice(["2", "3", "4"]))
    before = stack.count()
    controls.set_value("steps_per_pass", k)
    assert sim.params.steps_per_pass == k and "steps_per_pass" not in edits.pending     # live
    assert stack.count() == before + 1
    stack.undo()
    assert sim.params.steps_per_pass == "auto"
