"""The Flint workspace in the window-level features of issue 36, driven through the shortcuts and
the window: Ctrl+Z / Ctrl+Shift+Z of parameter and run-control edits, a model file dropped on the
window, Open Recent, and a user preset of the current model and controls."""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtTest import QTest

from explorer import undo
from shell_support import drop_file

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def press(qtbot, win, key, mods):
    """A shortcut pressed on the active window (the focus off any line edit, which takes Ctrl+Z itself)."""
    from PyQt6.QtWidgets import QApplication
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=3000)
    win.mode_bar.setFocus()
    QTest.keyClick(win.windowHandle(), key, mods)


def drop(win, path):
    """Drag ``path`` over the window and drop it, as a file manager does."""
    return drop_file(win, path)


def model_file(folder, rng, name="decay.flint"):
    k = round(float(rng.uniform(0.1, 3.0)), 6)
    p = folder / name
    p.write_text(f"model {p.stem}\nstate x = 1\nparam k = {k}\node x = -k*x\n")
    return p, k


def test_ctrl_z_undoes_flint_parameters_and_run_controls(main_window, flint_ws, qtbot, rng):
    ws = flint_ws
    stack = undo.stack_for(ws)
    assert stack is not None and main_window.edit.stack() is stack
    names = ws.table.names()
    g0, s0, t0 = ws.model.params["g_Na"], ws.model.params["stim_start"], ws.form.sp_tend.value()
    g1, g2 = (round(float(v), 3) for v in rng.uniform(5, 30, 2))
    ws.table.item(names.index("g_Na"), 1).setText(repr(g1))      # typed twice: one entry
    ws.table.item(names.index("g_Na"), 1).setText(repr(g2))
    ws.stim.spins["stim_start"].setValue(s0 + 3.0)              # the stimulus editor: through the table
    t1 = round(float(rng.uniform(10, 900)), 1)
    ws.form.sp_tend.setValue(t1)
    assert ws.model.params["g_Na"] == g2 and ws.model.params["stim_start"] == s0 + 3.0
    assert stack.count() == 3 and "g_Na" in stack.text(0) and "t end" in stack.text(2)
    press(qtbot, main_window, Qt.Key.Key_Z, CTRL)
    assert ws.form.sp_tend.value() == t0
    press(qtbot, main_window, Qt.Key.Key_Z, CTRL)
    assert ws.model.params["stim_start"] == s0 and ws.stim.spins["stim_start"].value() == s0
    press(qtbot, main_window, Qt.Key.Key_Z, CTRL)
    assert ws.model.params["g_Na"] == g0 and ws.table.value("g_Na") == g0
    assert ws.table.item(names.index("g_Na"), 1).text() == repr(g0)
    press(qtbot, main_window, Qt.Key.Key_Z, CTRL | SHIFT)
    assert ws.model.params["g_Na"] == g2
    # the next run uses the parameter as undone / redone
    assert ws.flint_run().model.params["g_Na"] == g2


def test_a_dropped_model_file_opens_in_flint_and_is_listed_recent(main_window, qtbot, tmp_path, rng):
    main_window.show_workspace("cahn_hilliard")
    path, k = model_file(tmp_path, rng)
    drop(main_window, path)
    ws = main_window.workspace("flint")
    assert main_window.workspace() is ws and ws.model.name == "decay" and ws.model.params["k"] == k
    assert ws.cb_model.currentText() == "decay.flint"
    assert main_window.recent.files.paths("model") == [str(path.resolve())]
    # a file the Flint reader refuses: one message, the model stays
    bad = tmp_path / "bad.flint"
    bad.write_text("model bad\nstate y = 1\n")
    drop(main_window, bad)
    assert ws.model.name == "decay" and str(bad.resolve()) not in main_window.recent.files.paths("model")
    # an SBML file with an event: SBML reference mode
    from support.sbml_docs import event_sbml
    drop(main_window, event_sbml(tmp_path, 1.0, 2.0))
    assert ws.in_sbml_mode() and len(main_window.recent.files.paths("model")) == 2
    # reopen the first through File ▸ Open Recent: the Flint model is back
    act = next(a for a in main_window.recent.actions_for("model") if a.data() == str(path.resolve()))
    act.trigger()
    assert not ws.in_sbml_mode() and ws.model.name == "decay" and ws.model.params["k"] == k


def test_user_preset_of_a_model_file_restores_model_controls_and_parameters(main_window, flint_ws, tmp_path, rng):
    ws = flint_ws
    path, _k = model_file(tmp_path, rng)
    assert ws.open_field(str(path))
    k1 = round(float(rng.uniform(4, 9)), 4)
    ws.set_parameter("k", k1)
    n = int(rng.integers(2, 20))
    ws.form.set_controls({"n": n, "method": "rk4", "t_end": 12.5})
    main_window.user_presets.directory = tmp_path / "presets"
    preset = main_window.user_presets.save_current("my decay")
    assert preset is not None and preset["params"]["model_path"] == str(path)
    ws.cb_model.setCurrentIndex(0)                               # a shipped model, other controls
    ws.form.set_controls({"n": 1, "method": "euler", "t_end": 400.0})
    ws.apply_preset(preset)
    assert ws.model.name == "decay" and ws.model.params["k"] == k1 and not ws.is_running()
    assert (ws.form.sp_n.value(), ws.form.cb_method.currentText(), ws.form.sp_tend.value()) == (n, "rk4", 12.5)
