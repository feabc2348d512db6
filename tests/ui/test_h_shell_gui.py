"""The window-level features of issue #36 in the Cahn–Hilliard and Graphs workspaces, driven through
the shortcuts, drops and File ▸ Open Recent: undo of parameter edits (merged, ⟳ marks back on
undo), fields and graphs dropped on the window, reopened from Open Recent, user presets, and the
CH field figure exported at the dialog's width with a whole footer."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QImage
from PyQt6.QtTest import QTest
from PyQt6.QtWidgets import QApplication

from explorer import undo
from kernels.cahn_hilliard import io as ch_io
from kernels.cahn_hilliard.params import CHParams
from shell_support import drop_file

TIMEOUT = 30000


def press(win, key, mods):
    """A shortcut typed on the window, focus off any line edit (which would take Ctrl+Z itself)."""
    win.activateWindow()
    QApplication.processEvents()
    win.mode_bar.setFocus()
    QTest.keyClick(win.windowHandle(), key, mods)


def undo_key(win):
    press(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def redo_key(win):
    press(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)


def drop(win, path):
    """Drag ``path`` over the window and drop it, as a file manager does."""
    return drop_file(win, path)


def type_into(qtbot, spin, text):
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


# -------------------------------------------------------------- Cahn–Hilliard
def test_ch_ctrl_z_undoes_live_and_reset_parameters(main_window, ws, qtbot):
    rng = np.random.default_rng()
    m0, K0 = ws.sim.params.m, ws.sim.params.K
    m1 = round(float(rng.uniform(1.5, 4.0)), 2)
    type_into(qtbot, ws.controls.widgets["m"], f"{m1}")
    ws.controls.widgets["m"].setValue(m1 + 0.5)              # a second edit of the same field: merged
    assert ws.sim.params.m == pytest.approx(m1 + 0.5)
    stack = main_window.edit.stack()
    assert stack is undo.stack_for(ws) and stack.count() == 1 and "Mobility" in stack.text(0)
    undo_key(main_window)
    assert ws.sim.params.m == pytest.approx(m0) and ws.sim.params.K == K0
    redo_key(main_window)
    assert ws.sim.params.m == pytest.approx(m1 + 0.5)
    ws.set_parameter("size", 96)                              # needs Reset: marked ⟳
    assert ws.pending == {"size": 96} and "⟳" in ws.controls.labels["size"].text()
    ws.reset()
    assert ws.sim.params.size == 96 and not ws.pending
    undo_key(main_window)                                     # undoing it pends 64 again, marked ⟳
    assert ws.pending == {"size": 64} and "⟳" in ws.controls.labels["size"].text()
    assert ws.sim.params.size == 96
    main_window.show_workspace("graphs")                      # another workspace: its own stack
    assert main_window.edit.stack() is not stack


def test_ch_field_drop_and_recent_reopen(main_window, ws, qtbot, tmp_path):
    rng = np.random.default_rng()
    n = int(rng.choice([24, 40]))
    phi = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    path = tmp_path / "dropped.npz"
    ch_io.save_field(path, phi, CHParams(size=n, m=2.5), t=0.0, steps=0)
    main_window.show_workspace("graphs")
    drop(main_window, path)                                   # opens in the CH workspace
    assert main_window.workspace() is ws
    assert np.array_equal(ws.sim.field_numpy(), phi) and ws.sim.params.m == 2.5
    assert main_window.recent.files.paths("field") == [str(path.resolve())]
    assert main_window.edit.stack().count() == 0              # opening a file is no parameter edit
    ws.set_parameter("initial", "spinodal")
    ws.set_parameter("size", 64)
    ws.reset()
    assert ws.sim.params.size == 64
    acts = main_window.recent.actions_for("field")
    acts[0].trigger()                                         # File ▸ Open Recent ▸ dropped.npz
    assert np.array_equal(ws.sim.field_numpy(), phi)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a field")
    drop(main_window, bad)
    assert "Could not open bad.npz" in main_window.last_message
    assert np.array_equal(ws.sim.field_numpy(), phi)         # nothing changed


def test_ch_user_preset_round_trip(ws):
    ws.set_parameter("K", 1.75)
    ws.set_parameter("size", 48)
    ws.set_colormap("magma")
    prm = json.loads(json.dumps(ws.preset_params()))
    ws.set_parameter("K", 1.0)
    ws.set_colormap("viridis")
    ws.apply_preset({"name": "mine", "paper": "user", "params": prm})
    assert ws.sim.params.K == 1.75 and ws.sim.params.size == 48 and ws.colormap() == "magma"
    assert not ws.is_running() and not ws.pending


def test_ch_field_figure_has_the_dialog_width_and_a_whole_footer(main_window, ws, qtbot, tmp_path):
    from explorer import export as fx
    figs = ws.figure_targets()
    for name in ("Field view", "Field view with colour bar"):
        fig = next(f for f in figs if f.name == name)
        dlg = fx.ExportFigureDialog(figs, main_window.figure_footer(), main_window)
        dlg.target.setCurrentIndex(figs.index(fig))
        for width in (dlg.width.value(), int(np.random.default_rng().integers(700, 1900))):
            out = main_window.export_figure(tmp_path / f"f{width}.png", target=name, width=width, footer=True)
            img = QImage(str(out))
            assert img.width() == width
            plain = fx.render_figure(fig, width=width)
            foot = np.asarray([[QImage.pixel(img, x, y) & 0xFFFFFF for x in range(0, width, 3)]
                               for y in (plain.height(), img.height() - 1)])
            assert (foot == 0xFFFFFF).all(), "footer text cut at the image edge or the bottom"
            dark = [any(QImage.pixel(img, x, y) & 0xFF < 128 for x in range(0, width, 2))
                    for y in range(plain.height(), img.height())]
            assert sum(dark) > 10                                # the caption is drawn


# -------------------------------------------------------------------- Graphs
def _wait(qtbot, g):
    qtbot.waitUntil(lambda: g.job is None and g._then is None, timeout=TIMEOUT)


def test_graphs_ctrl_z_undoes_generator_controls(main_window, graphs_ws, qtbot):
    g = graphs_ws
    k0, n0 = g.sp_k.value(), g.sp_n.value()
    type_into(qtbot, g.sp_k, str(k0 + 4))
    g.sp_k.setValue(k0 + 6)
    g.gen_form.cb_gen.setCurrentIndex((g.gen_form.cb_gen.currentIndex() + 1) % g.gen_form.cb_gen.count())
    stack = main_window.edit.stack()
    assert stack is undo.stack_for(g) and stack.count() == 2           # k merged, then the generator
    undo_key(main_window)
    undo_key(main_window)
    assert g.sp_k.value() == k0 and g.sp_n.value() == n0 and stack.index() == 0
    redo_key(main_window)
    assert g.sp_k.value() == k0 + 6


def test_graphs_drop_and_recent_reopen(main_window, graphs_ws, qtbot, tmp_path):
    rng = np.random.default_rng()
    n = int(rng.integers(20, 60))
    edges = {(i, (i + 1) % n) for i in range(n)} | {tuple(sorted(rng.choice(n, 2, replace=False))) for _ in range(n)}
    path = tmp_path / "ring.edgelist"
    path.write_text("".join(f"{a} {b}\n" for a, b in sorted(edges) if a != b))
    main_window.show_workspace("cahn_hilliard")
    drop(main_window, path)
    assert main_window.workspace() is graphs_ws
    _wait(qtbot, graphs_ws)
    assert graphs_ws.graph is not None and graphs_ws.graph.n == n
    assert main_window.recent.files.paths("graph") == [str(path.resolve())]
    graphs_ws.set_parameters(generator="ring", n=30, k=2)
    graphs_ws.generate()
    _wait(qtbot, graphs_ws)
    assert graphs_ws.graph.n == 30
    main_window.recent.actions_for("graph")[0].trigger()
    _wait(qtbot, graphs_ws)
    assert graphs_ws.graph.n == n
    bad = tmp_path / "bad.graphml"
    bad.write_text("<graphml><oops")
    drop(main_window, bad)
    _wait(qtbot, graphs_ws)
    assert "Could not open bad.graphml" in main_window.last_message and graphs_ws.graph.n == n


def test_graphs_user_preset_round_trip(graphs_ws, qtbot):
    g = graphs_ws
    g.set_parameters(generator="ws", n=80, k=6, p=0.2, seed=7, color_by="degree")
    prm = json.loads(json.dumps(g.preset_params()))
    g.set_parameters(generator="ring", n=40, k=2)
    g.apply_preset({"name": "mine", "paper": "user", "params": prm})
    _wait(qtbot, g)
    assert g.control_params() == {k: v for k, v in prm.items() if k != "apsp"}
    assert g.graph.n == 80


def test_ch_view_is_fitted_after_grid_and_view_size_changes(main_window, ws, qtbot):
    def fitted():
        x0, y0, x1, y1 = ws.canvas.data_rect()
        w, h = ws.canvas.canvas.size
        ny, nx = ws.canvas.shape
        inside = x0 >= -1 and y0 >= -1 and x1 <= w + 1 and y1 <= h + 1
        fills = max((x1 - x0) / w, (y1 - y0) / h) > 0.9
        return inside and fills and abs((x1 - x0) / (y1 - y0) - nx / ny) < 0.01

    ws.canvas.view.camera.zoom(3.0)                      # the user zooms in …
    assert not fitted()
    ws.set_parameter("size", 96)
    ws.reset()                                           # … a new grid is shown whole
    qtbot.wait(100)
    assert ws.canvas.shape == (96, 96) and fitted()
    ws.apply_preset({"name": "rect", "paper": "test", "params": {"size": 80, "size_y": 40, "run": False}})
    qtbot.wait(100)
    assert ws.canvas.shape == (40, 80) and fitted()       # a rectangle: all of it, not an 40×40 corner
    main_window.resize(main_window.width() - 200, main_window.height() - 100)
    qtbot.wait(300)
    assert fitted()


def test_own_open_dialogs_list_the_file_under_open_recent(main_window, ws, qtbot, tmp_path, monkeypatch):
    rng = np.random.default_rng()
    n = int(rng.choice([16, 32]))
    field = tmp_path / "mine.npz"
    ch_io.save_field(field, rng.uniform(-1, 1, (n, n)).astype(np.float32), CHParams(size=n))
    monkeypatch.setattr(ws.files, "ask_field", lambda: str(field))
    assert ws.open_field() and ws.sim.params.size == n          # File ▸ Open field… (its dialog)
    assert main_window.recent.files.paths("field") == [str(field.resolve())]
    g = main_window.show_workspace("graphs")
    qtbot.waitExposed(g.canvas.native)
    graph = tmp_path / "mine.edgelist"
    graph.write_text("".join(f"{i} {(i + 1) % 12}\n" for i in range(12)))
    monkeypatch.setattr(g.files, "ask_graph", lambda: str(graph))
    g.open_field()                                              # File ▸ Open graph… (its dialog)
    _wait(qtbot, g)
    assert g.graph.n == 12 and main_window.recent.files.paths("graph") == [str(graph.resolve())]
