"""The window-level features of issue #36, driven through the menus and shortcuts: undo/redo and
the History list, Open Recent, drag and drop, the message log, About, figure styling on export and
user presets (on the Occupancy workspace: small, no canvas)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QImage
from PyQt6.QtWidgets import QApplication, QDockWidget

from explorer import export as fig_export
from explorer import undo
from explorer.figure_style import FigureStyle
from explorer.workspace_api import Workspace
from kernels.errors import ExplorerError
from shell_support import drop_file


def _threads_tracked(ws):
    """The Occupancy workspace tracks its six inputs for undo itself; returns the threads field."""
    for w in (ws.cc, ws.threads, ws.regs, ws.smem_static, ws.smem_dyn, ws.carveout):
        assert undo.is_tracked(w)
    return ws.threads


def _type_into(qtbot, spin, text):
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)


def _shortcut(qtbot, win, key, mods):
    """A key press on the window where no line edit has the focus (it would take Ctrl+Z itself),
    through the window system's path, where Qt matches shortcuts."""
    from PyQt6.QtTest import QTest
    win.activateWindow()
    QApplication.processEvents()
    win.mode_bar.setFocus()
    QTest.keyClick(win.windowHandle(), key, mods)


def test_ctrl_z_undoes_a_parameter_and_merges_consecutive_edits(main_window, occ_ws, qtbot):
    spin = _threads_tracked(occ_ws)
    start = spin.value()
    new = random.choice([96, 128, 160, 192])
    _type_into(qtbot, spin, str(new))
    assert spin.value() == new
    stack = main_window.edit.stack()
    assert stack is undo.stack_for(occ_ws) and stack.count() == 1        # "1", "19", "192": one entry
    assert "threads per block" in stack.text(0)
    _shortcut(qtbot, main_window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert spin.value() == start
    assert f"{start} threads" in occ_ws.summary.text() or str(start) in occ_ws.parameter_summary()
    _shortcut(qtbot, main_window, Qt.Key.Key_Z,
              Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert spin.value() == new
    # the History list shows the entries of this workspace's stack
    main_window.edit.act_history.trigger()
    assert main_window.edit.dock.isVisible()
    assert main_window.edit.view.model().rowCount() == stack.count() + 1     # + "<start>"


def test_undo_stacks_are_per_workspace(main_window, occ_ws, qtbot):
    _threads_tracked(occ_ws)
    occ_ws.threads.setValue(occ_ws.threads.value() + 32)
    occ_stack = main_window.edit.stack()
    assert occ_stack.canUndo()
    main_window.show_workspace("cahn_hilliard")
    assert main_window.edit.stack() is not occ_stack
    assert not main_window.edit.act_undo.isEnabled() or main_window.edit.stack().canUndo()


def test_a_preset_is_one_undo_step(main_window, occ_ws, qtbot):
    spin = _threads_tracked(occ_ws)
    before = (spin.value(), occ_ws.regs.value())
    names = [p["name"] for p in main_window.presets]
    assert names, "the Occupancy workspace ships presets"
    which = next(i for i, p in enumerate(main_window.presets)
                 if (p["params"].get("threads", 256), p["params"].get("regs", 32)) != before)
    main_window.apply_preset(which)
    assert (spin.value(), occ_ws.regs.value()) != before
    stack = main_window.edit.stack()
    assert stack.text(stack.index() - 1).startswith("Preset:")
    main_window.edit.act_undo.trigger()
    assert (spin.value(), occ_ws.regs.value()) == before


def test_undo_of_a_field_that_needs_reset_marks_it(qtbot):
    from PyQt6.QtWidgets import QSpinBox, QWidget
    part = QWidget()
    qtbot.addWidget(part)
    spin = QSpinBox(part)
    spin.setRange(0, 1000)
    marked = []
    # a part whose setter blocks signals (so its edit handler does not run) marks through `mark`
    def quiet_set(v):
        spin.blockSignals(True)
        spin.setValue(v)
        spin.blockSignals(False)
    undo.track(spin, "size", get=spin.value, set=quiet_set, changed=spin.valueChanged,
               needs_reset=True, mark=marked.append)
    stack = undo.attach(part)
    a, b = random.sample(range(1, 1000), 2)
    spin.setValue(a)
    spin.setValue(b)
    assert stack.count() == 1                 # consecutive edits of one field merged
    with undo.suspended(part):
        pass
    stack.undo()
    assert spin.value() == 0 and marked == ["size"]
    stack.redo()
    assert spin.value() == b and marked == ["size", "size"]
    spin.setValue(0)                          # back where the entry started: it goes
    assert stack.count() == 0
    with undo.suspended(part):
        spin.setValue(7)                      # not an edit
    assert stack.index() == stack.count()


def _session(main_window, tmp_path, name="occ.gsession"):
    main_window.show_workspace("occupancy")
    return Path(main_window.save_session(str(tmp_path / name)))


def test_recent_files_reopen_and_drop_missing_ones(main_window, occ_ws, qtbot, tmp_path):
    path = _session(main_window, tmp_path)
    threads = occ_ws.threads.value()
    occ_ws.threads.setValue(threads + 64)
    acts = main_window.recent.actions_for("session")
    assert [a.data() for a in acts] == [str(path.resolve())]
    acts[0].trigger()                                    # File ▸ Open Recent ▸ occ.gsession
    assert occ_ws.threads.value() == threads
    gone = _session(main_window, tmp_path, "gone.gsession")
    gone.unlink()
    main_window.recent.menu.aboutToShow.emit()           # opening the menu prunes
    assert str(gone.resolve()) not in main_window.recent.files.paths("session")
    assert "gone.gsession" in main_window.last_message
    # at most 10 a kind
    for i in range(12):
        p = tmp_path / f"s{i}.gsession"
        p.write_bytes(path.read_bytes())
        main_window.recent.add("session", p)
    assert len(main_window.recent.files.paths("session")) == 10


def _drop(win, path):
    """Drag ``path`` over the window and drop it, as a file manager does."""
    return drop_file(win, path)


def test_dropped_files_open_in_their_workspace(main_window, occ_ws, qtbot, tmp_path, monkeypatch):
    cls = type(occ_ws)

    def open_file(self, path):                           # a workspace that reads ".launch" files
        text = Path(path).read_text().strip()
        if not text.isdigit():
            raise ExplorerError(f"{Path(path).name}: not a thread count")
        self.set_inputs(threads=int(text))
    monkeypatch.setattr(cls, "CAPABILITIES", cls.CAPABILITIES | {"open_files"})
    monkeypatch.setattr(cls, "FILE_TYPES", {".launch": "launch"})
    monkeypatch.setattr(cls, "open_file", open_file)
    main_window.show_workspace("cahn_hilliard")
    n = random.choice([64, 96, 512])
    good = tmp_path / "a.launch"
    good.write_text(str(n))
    _drop(main_window, good)
    assert main_window.workspace() is occ_ws and occ_ws.threads.value() == n
    assert main_window.recent.files.paths("launch") == [str(good.resolve())]
    bad = tmp_path / "b.launch"
    bad.write_text("many")
    _drop(main_window, bad)
    assert occ_ws.threads.value() == n and "Could not open b.launch" in main_window.last_message
    other = tmp_path / "c.unknownsuffix"
    other.write_text("x")
    _drop(main_window, other)
    assert occ_ws.threads.value() == n and "no workspace opens .unknownsuffix" in main_window.last_message
    # a dropped session opens too
    sess = _session(main_window, tmp_path)
    occ_ws.threads.setValue(n + 32)
    _drop(main_window, sess)
    assert occ_ws.threads.value() == n


def test_message_log_records_every_message_with_its_time(main_window, occ_ws, qtbot):
    main_window.act_log.trigger()                         # View ▸ Message log
    assert main_window.log_dock.isVisible()
    token = f"tok{random.randrange(10**6)}"
    main_window.notify(f"notice {token}", "warning")
    occ_ws.message_bar.show_message(f"bar {token}", "error")
    main_window.statusBar().showMessage(f"status {token}", 1000)
    text = main_window.log.text()
    assert f"WARNING [occupancy] notice {token}" in text
    assert f"ERROR   [occupancy] bar {token}" in text
    assert f"status {token}" in text
    assert text.count(f"notice {token}") == 1             # message bar + status bar: logged once
    view = main_window.log_dock.widget()
    view.btn_copy.click()
    assert f"bar {token}" in QApplication.clipboard().text()
    assert ":" in QApplication.clipboard().text().split()[0]          # a time stamp leads each line
    view.btn_clear.click()
    assert main_window.log.entries == [] and view.view.toPlainText() == ""


def test_about_lists_every_version_and_copies_them(main_window, qtbot):
    import numpy
    import PyQt6.QtCore
    dlg = main_window.show_about()
    qtbot.addWidget(dlg)
    text = dlg.text.toPlainText()
    for name in ("GPU Science Explorer", "Python", "PyQt6", "Qt", "VisPy", "pyqtgraph", "NumPy", "SciPy",
                 "CuPy", "CUDA driver", "CUDA runtime", "GPU", "Settings", "Cache"):
        assert f"\n{name} " in "\n" + text, name
    assert numpy.__version__ in text and PyQt6.QtCore.PYQT_VERSION_STR in text
    dlg.btn_copy.click()
    assert QApplication.clipboard().text() == text


def _plot_figure(occ_ws):
    return next(f for f in occ_ws.figure_targets() if f.name == "Occupancy charts")


def test_styled_export_changes_the_image_and_not_the_screen(main_window, occ_ws, qtbot, tmp_path):
    fig = _plot_figure(occ_ws)
    main_window.export_figure(str(tmp_path / "warm.png"), target=fig.name, width=800)   # lays the tab out
    screen0 = fig_export.qimage_to_array(fig.widget.grab().toImage())
    plain = main_window.export_figure(str(tmp_path / "plain.png"), target=fig.name, width=800)
    style = FigureStyle(font_scale=2.0, line_width=6.0, legend="hidden", x_range=(0.0, 512.0),
                        title=f"styled {random.randrange(1000)}")
    styled = main_window.export_figure(str(tmp_path / "styled.png"), target=fig.name, width=800, style=style)
    a = fig_export.qimage_to_array(QImage(str(plain)))
    b = fig_export.qimage_to_array(QImage(str(styled)))
    assert a.shape == b.shape, "the figure keeps its size"
    assert (a != b).any(axis=-1).mean() > 0.01
    screen1 = fig_export.qimage_to_array(fig.widget.grab().toImage())
    assert screen0.shape == screen1.shape and (screen0 != screen1).any(axis=-1).mean() < 0.005   # put back


def test_export_dialog_style_is_remembered_per_figure(main_window, occ_ws, qtbot):
    fig = _plot_figure(occ_ws)
    style = FigureStyle(font_scale=1.5, line_width=3.0, legend="bottom left", y_range=(0.0, 100.0), title="T")
    main_window.set_figure_style(fig, style)
    dlg = fig_export.ExportFigureDialog(occ_ws.figure_targets(), "", main_window, styles=main_window.figure_style)
    qtbot.addWidget(dlg)
    dlg.target.setCurrentText(fig.name)
    assert dlg.style() == style                                   # restored from the settings
    dlg.style_form.x_range.setText("5, 1")
    with pytest.raises(ValueError):
        dlg.style()
    dlg.target.setCurrentText("Results table")                    # a table: no plot style
    assert dlg.style() is None


def test_user_preset_save_apply_export_import(main_window, occ_ws, qtbot, tmp_path):
    assert occ_ws.supports("user_presets")
    main_window.show_workspace("occupancy")
    n = random.choice([64, 96, 288])
    occ_ws.threads.setValue(n)
    name = f"mine {random.randrange(1000)}"
    assert main_window.user_presets.save_current(name) is not None
    assert name in [p["name"] for p in main_window.presets]
    texts = [a.text() for a in main_window.m_presets.actions()]
    assert any(name in t for t in texts) and "&Save current as preset…" in texts
    occ_ws.threads.setValue(n + 32)
    assert main_window.apply_preset(name) and occ_ws.threads.value() == n
    out = main_window.user_presets.export_file(tmp_path / "mine.json")
    assert main_window.user_presets.delete(name)
    assert name not in [p["name"] for p in main_window.presets]
    assert main_window.user_presets.import_file(out) == [name]
    occ_ws.threads.setValue(n + 64)
    assert main_window.apply_preset(name) and occ_ws.threads.value() == n
    bad = tmp_path / "bad.json"
    bad.write_text('{"presets": [{"name": 1}]}')
    assert main_window.user_presets.import_file(bad) == []
    assert "Could not import" in main_window.last_message


def test_dock_buttons_have_tooltips(main_window, occ_ws):
    from PyQt6.QtWidgets import QAbstractButton
    buttons = [b for d in occ_ws.findChildren(QDockWidget) + main_window.findChildren(QDockWidget)
               for b in d.findChildren(QAbstractButton) if b.objectName().startswith("qt_dockwidget_")]
    assert buttons and all(b.toolTip() for b in buttons)
    corners = [b for b in occ_ws.findChildren(QAbstractButton) if b.objectName() == "qt_tableview_cornerbutton"]
    assert all(b.toolTip() for b in corners)


def test_every_workspace_keeps_the_default_open_file_contract():
    assert Workspace.FILE_TYPES == {}
    with pytest.raises(NotImplementedError):
        Workspace().open_file("x")
