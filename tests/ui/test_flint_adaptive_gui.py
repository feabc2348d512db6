"""Flint workspace, a model read from an SBML file that the fixed-step compiler takes (issue 34): the
Method box offers the fixed-step methods and the library's adaptive ones (dopri5, rodas4, auto, lsoda);
an adaptive method runs the file as an SBML ensemble (Robertson's stiff kinetics on rodas4 equals SciPy's
LSODA), euler brings the fixed-step path back, a fixed-step blow-up suggests the stiff methods, and a
session keeps the method."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from support.paths import ROOT

ROBERTSON = ROOT / "resources" / "models" / "robertson.xml"
K = {"k1": 0.04, "k2": 3e7, "k3": 1e4}          # the file's rate constants


def items(box) -> list[str]:
    return [box.itemText(i) for i in range(box.count())]


def _wait_done(qtbot, ws, timeout=30000):
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=timeout)


def _lsoda(k: dict, times) -> np.ndarray:
    """Robertson (Hairer & Wanner II §IV.1) by SciPy's LSODA: (times, [A, B, C])."""
    def f(_t, y):
        a, b, c = y
        return [-k["k1"] * a + k["k3"] * b * c, k["k1"] * a - k["k2"] * b * b - k["k3"] * b * c, k["k2"] * b * b]
    return solve_ivp(f, (0, times[-1]), [1, 0, 0], method="LSODA", t_eval=times, rtol=1e-10, atol=1e-14).y.T


@pytest.fixture
def robertson(flint_ws):
    assert flint_ws.open_field(str(ROBERTSON))
    assert not flint_ws.in_sbml_mode() and flint_ws.model is not None     # the fixed-step compiler took it
    return flint_ws


def test_method_box_offers_the_library_methods(robertson):
    from kernels.flint.adaptive_run import available_engines, engine_offers_auto, ensemble_methods
    form = robertson.form
    here = [m for m in ensemble_methods() if available_engines(m, "cpu")]
    own_auto = [e for m in here for e in available_engines(m, "cpu") if engine_offers_auto(e)]
    assert items(form.cb_method) == ["euler", "rk4"] + here + (["auto"] if own_auto else []) + ["lsoda"]
    assert "rodas4" in here and "adaptive methods" in robertson.message.text()
    tip = form.cb_method.toolTip()
    assert all(f"<b>{m}</b>" in tip for m in items(form.cb_method)) and "output interval" in tip and " ms" in tip
    form.cb_method.setCurrentText("rodas4")                 # as the user picks it: the engines of rodas4
    assert items(form.cb_engine) == ["auto"] + available_engines("rodas4", "cpu") and form.runs_adaptive()
    assert not form.cb_dtype.isEnabled() and form.label("dt") == "dt (output interval)"
    form.cb_method.setCurrentText("lsoda")
    assert items(form.cb_engine) == ["numpy"] and form.reference() and not form.sp_n.isEnabled()
    if own_auto:
        form.cb_method.setCurrentText("auto")
        assert items(form.cb_engine) == list(dict.fromkeys(own_auto))
    # a native Flint model: the fixed-step methods alone, no stiff hint
    robertson.cb_model.setCurrentIndex(robertson.cb_model.findText("luo_rudy_1991.flint"))
    assert items(form.cb_method) == ["euler", "rk4"] and not form.runs_adaptive() and form.stiff_hint() == ""
    assert form.cb_dtype.isEnabled() and form.sp_n.isEnabled() and form.label("dt") == "dt (ms)"


def test_robertson_on_rodas4_equals_lsoda_then_euler_is_back(robertson, qtbot):
    """rodas4 on numpy, 3 members with k1 spread and a random k3 edit: the streamed traces of B equal
    LSODA of the same equations within 1e-4 relative (+1e-10 absolute); euler then runs the fixed-step
    path and equals explicit Euler by hand."""
    ws, rng = robertson, np.random.default_rng()
    k3, spread = float(1e4 * rng.uniform(0.5, 2.0)), float(rng.uniform(0.1, 0.6))
    ws.set_parameter("k3", k3)
    ws.form.set_controls({"method": "rodas4", "engine": "numpy", "t_end": 40.0, "dt": 0.4, "n": 3,
                          "vary": "k1", "spread": spread, "record": "B"})
    spread = ws.form.sp_spread.value()                  # as the box shows it (two decimals)
    ws.run()
    assert ws.is_running()
    _wait_done(qtbot, ws)
    run = ws.cfg["run"]
    assert (run.method, run.engine, run.n) == ("rodas4", "numpy", 3) and dict(run.params) == {"k3": k3}
    assert ws.samples.shape == (101, 1, 3) and ws.times[-1] == pytest.approx(40.0)
    assert "rodas4 on numpy" in ws.caption() and "NaN" not in ws.message.text()
    for m, k1 in enumerate(0.04 * np.linspace(1 - spread, 1 + spread, 3)):
        b = _lsoda({**K, "k1": k1, "k3": k3}, ws.times)[:, 1]
        assert np.all(np.abs(ws.samples[:, 0, m] - b) <= 1e-10 + 1e-4 * np.abs(b)), m
    # euler: the fixed-step path again (engines of euler, FlintRun on FlintWorker)
    ws.form.cb_method.setCurrentText("euler")
    assert not ws.form.runs_adaptive() and ws.form.cb_dtype.isEnabled()
    assert ws.form.label("dt") == "dt (model time)"       # robertson.xml declares no time unit
    ws.form.set_controls({"engine": "numpy", "n": 1, "t_end": 0.1, "dt": 1e-4, "record": "A, B, C"})
    ws.run()
    _wait_done(qtbot, ws)
    assert ws.cfg["run"].integrator == "euler" and ws.samples.shape == (1000, 3, 1)   # t = dt … t end
    assert ws.times[-1] == pytest.approx(0.1)
    k, y = {**K, "k3": k3}, np.array([1.0, 0.0, 0.0])
    for _ in range(1000):
        a, b, c = y
        y = y + 1e-4 * np.array([-k["k1"] * a + k["k3"] * b * c, k["k1"] * a - k["k2"] * b * b - k["k3"] * b * c,
                                 k["k2"] * b * b])
    np.testing.assert_allclose(ws.samples[-1, :, 0], y, rtol=1e-9, atol=1e-15)


def test_fixed_step_blow_up_suggests_the_stiff_methods(robertson, qtbot):
    ws = robertson
    ws.form.set_controls({"method": "euler", "engine": "numpy", "t_end": 5.0, "dt": 0.01, "record": "B"})
    ws.run()
    _wait_done(qtbot, ws)
    text = ws.message.text()
    assert "NaN/Inf" in text and "try a smaller dt" in text and "may be stiff" in text and "rodas4" in text
    ws.form.set_controls({"method": "rodas4", "t_end": 4.0, "dt": 0.4})     # then the stiff method runs
    ws.run()
    _wait_done(qtbot, ws)
    assert "NaN" not in ws.message.text() and np.isfinite(ws.samples).all() and ws.samples.shape == (11, 1, 1)


def test_session_keeps_rodas4(robertson, qtbot):
    ws = robertson
    ws.form.set_controls({"method": "rodas4", "engine": "numpy", "t_end": 4.0, "dt": 0.4, "n": 2,
                          "vary": "k2", "spread": 0.25, "record": "C"})
    ws.run()
    _wait_done(qtbot, ws)
    state, data = json.loads(json.dumps(ws.session_state())), ws.session_data()
    assert state["controls"]["method"] == "rodas4" and state["run"]["kind"] == "ensemble"
    assert state["run"]["method"] == "rodas4" and state["run"]["vary"][0]["param"] == "k2"
    ws.cb_model.setCurrentIndex(ws.cb_model.findText("luo_rudy_1991.flint"))
    assert items(ws.form.cb_method) == ["euler", "rk4"]
    ws.restore_session(state, data)
    f = ws.form
    assert ws.model.name == "robertson" and f.runs_adaptive()
    assert (f.cb_method.currentText(), f.cb_engine.currentText(), f.sp_n.value(), f.cb_vary.currentText()) == \
        ("rodas4", "numpy", 2, "k2")
    np.testing.assert_array_equal(ws.samples, data["traces"])
    # the run of the restored controls is the saved one
    assert ws.session_state()["run"] == state["run"]


def test_method_auto_runs_rodas4_on_robertson(robertson, qtbot):
    """Method auto on an engine with its own pick: Robertson is stiff, so the engine runs Rodas4, and the
    speed line says so."""
    from kernels.flint.adaptive_run import available_engines, engine_offers_auto, ensemble_methods
    own = [e for m in ensemble_methods() for e in available_engines(m, "cpu") if engine_offers_auto(e)]
    if not own:
        pytest.skip("no engine with its own method auto runs here (no host C++ compiler)")
    ws = robertson
    ws.form.set_controls({"method": "auto", "engine": own[0], "t_end": 4.0, "dt": 0.4, "record": "B"})
    ws.run()
    _wait_done(qtbot, ws, timeout=120000)
    assert ws.last_result.method == "rodas4" and "method auto ran rodas4" in ws.lb_rate.text()
    b = _lsoda(K, ws.times)[:, 1]
    assert np.all(np.abs(ws.samples[:, 0, 0] - b) <= 1e-10 + 1e-4 * np.abs(b))


def test_method_and_engine_edits_are_undone(robertson):
    """Undo of the user's picks: the engine, then the method (its engines come back with it)."""
    from explorer import undo
    from kernels.flint.adaptive_run import available_engines
    form = robertson.form
    stack = undo.stack_for(form)
    n, fixed_engines = stack.count(), items(form.cb_engine)
    assert form.cb_engine.currentText() == "auto"
    form.cb_method.setCurrentText("rodas4")                 # engine auto is offered for rodas4 too: kept
    form.cb_engine.setCurrentText(available_engines("rodas4", "cpu")[-1])
    assert stack.count() == n + 2 and form.cb_engine.currentText() != "auto"
    stack.undo()
    assert (form.cb_method.currentText(), form.cb_engine.currentText()) == ("rodas4", "auto")
    stack.undo()
    assert form.cb_method.currentText() == "euler" and not form.runs_adaptive()
    assert items(form.cb_engine) == fixed_engines and form.cb_dtype.isEnabled()
    stack.redo()
    assert form.cb_method.currentText() == "rodas4" and items(form.cb_engine) == ["auto"] + available_engines(
        "rodas4", "cpu")
    # lsoda moves the engine to numpy (not an edit); the next pick of an engine is undone to numpy
    form.cb_method.setCurrentText("lsoda")
    form.cb_method.setCurrentText("rodas4")
    assert form.cb_engine.currentText() == "numpy"
    form.cb_engine.setCurrentText("auto")
    stack.undo()
    assert form.cb_engine.currentText() == "numpy"
