"""Issue 19, the GUI: Graphs above 5 000 vertices, Flint's long runs / failed opens / tooltips,
colour bars on every colour-mapped view, the value under the mouse, quitting with a run in
progress, the mode bar's run marks, and progress for slow Cahn–Hilliard frames."""
from __future__ import annotations

import numpy as np
import pytest
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtWidgets import QAbstractSpinBox, QComboBox, QProgressBar, QPushButton, QTableWidget

from explorer.export import qimage_to_array
from kernels.graphs.algorithms.overlays import OVERLAYS


def _wait_graphs(qtbot, g, timeout=60000):
    qtbot.waitUntil(lambda: g.job is None and g._queued_preset is None and g._then is None, timeout=timeout)


# ------------------------------------------------------------------------------------ Graphs
def test_first_graph_above_5000_vertices_shows_the_whole_ring(main_window, graphs_ws, qtbot):
    g = graphs_ws
    g.set_parameters(generator="ws", n=6000, k=4, p=0.0, seed=1)
    g.generate()
    _wait_graphs(qtbot, g)
    assert g.message_bar.level != "error" or not g.message_bar.isVisible(), g.message_bar.text()
    assert g.graph.n == 6000 and g.canvas.mode == "graph"          # every vertex and edge, no density image
    assert g.canvas.scene.edges_drawn == g.graph.m
    # the camera shows every vertex position …
    rect = g.canvas.view.camera.rect
    lo, hi = g.pos.min(0), g.pos.max(0)
    assert rect.left <= lo[0] and rect.right >= hi[0] and rect.bottom <= lo[1] and rect.top >= hi[1]
    # … and the drawn ring reaches all four sides of the view (not one quarter of it)
    img = g.canvas.render()[..., :3].astype(int)
    ring = (img < 200).any(axis=2)                              # whatever is drawn on the white background
    ys, xs = np.nonzero(ring)
    h, w = ring.shape
    assert xs.min() < 0.3 * w and xs.max() > 0.7 * w and ys.min() < 0.3 * h and ys.max() > 0.7 * h
    # a second, smaller graph goes back to the node view
    g.set_parameters(n=300)
    g.generate()
    _wait_graphs(qtbot, g)
    assert g.canvas.mode == "graph" and g.canvas.nodes.visible


# ------------------------------------------------------------------------------------- Flint
def test_flint_long_run_settings_do_not_overflow_the_progress_bar(main_window, flint_ws, qtbot):
    fl = flint_ws
    fl.form.set_controls({"t_end": 1e6, "dt": 1e-4})       # 1e10 steps: more than a C int
    assert fl.sp_tend.value() == 1e6 and fl.sp_dt.value() == pytest.approx(1e-4)
    fl.run()                                            # raised OverflowError in QProgressBar.setRange
    assert fl.worker is not None and fl.progress.maximum() == 1000
    qtbot.waitUntil(lambda: len(fl.times) > 0, timeout=30000)
    assert fl.message.level != "error", fl.message.text()
    fl.stop()
    qtbot.waitUntil(lambda: fl.worker is None, timeout=30000)
    # a recording that cannot fit in memory is refused before it starts
    fl.form.set_controls({"members": "line", "n": 1_000_000, "t_end": 1e6, "dt": 0.1})
    fl.run()
    assert fl.worker is None and "GiB" in fl.message.text() and fl.message.level == "error"


def test_flint_failed_open_leaves_the_model_list_alone(flint_ws, tmp_path):
    fl = flint_ws
    names = [fl.cb_model.itemText(i) for i in range(fl.cb_model.count())]
    current, model = fl.cb_model.currentText(), fl.model
    for name, text in (("broken.xml", "<sbml><oops"), ("empty.flint", ""), ("missing.cellml", None)):
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        assert fl.open_field(str(path)) is False
        assert [fl.cb_model.itemText(i) for i in range(fl.cb_model.count())] == names
        assert fl.cb_model.currentText() == current and fl.model is model
        assert fl.message.level == "error" and fl.message.text()
    # a good file joins the list once, however often it is opened
    good = fl.cb_model.itemData(0)
    assert fl.open_field(good) and fl.open_field(good)
    assert fl.cb_model.count() == len(names) and fl.cb_model.currentIndex() == 0


def test_flint_every_control_has_a_tooltip_with_its_units(flint_ws):
    fl = flint_ws
    left = fl.cb_model.parentWidget()
    controls = [w for cls in (QAbstractSpinBox, QComboBox, QPushButton, QTableWidget, QProgressBar)
                for w in left.findChildren(cls)]
    assert len(controls) >= 20
    missing = [type(w).__name__ for w in controls if not w.toolTip().strip()]
    assert not missing, missing
    for w, unit in ((fl.sp_dt, "ms"), (fl.sp_tend, "ms"), (fl.sp_D, "1/ms"), (fl.sp_spread, "fraction")):
        assert unit in w.toolTip(), (w.toolTip(), unit)
    spins = fl.stim.spins
    assert "µA/cm²" in spins["stim_amplitude"].toolTip()
    assert all("ms" in spins[k].toolTip() for k in ("stim_start", "stim_duration", "stim_period"))


# ------------------------------------------------------------------------------- colour bars
def test_colour_bars_follow_every_colour_mapped_view(main_window, ws, qtbot):
    # Cahn–Hilliard 2D: φ's limits, fixed and automatic
    assert ws.colorbar.isVisible() and ws.colorbar.label == "φ" and ws.colorbar.range() == (-1.0, 1.0)
    ws.set_auto_contrast(True)
    phi = ws.sim.field_numpy()
    assert ws.colorbar.range() == pytest.approx((phi.min(), phi.max()), rel=1e-5)
    ws.set_colormap("magma")
    assert np.allclose(ws.colorbar.lut[-1, :3], [0xfc / 255, 0xfd / 255, 0xbf / 255], atol=0.02)
    # Graphs: node colours and the distance matrix
    g = main_window.show_workspace("graphs")
    main_window.apply_preset("scale-free hubs")
    _wait_graphs(qtbot, g)
    g.cb_color.setCurrentText("degree")
    deg = g.graph.degrees()
    assert g.colorbar.isVisible() and g.colorbar.range() == (deg.min(), deg.max()) and g.colorbar.label == OVERLAYS["degree"].label
    g.click_node(5)
    assert g.colorbar.label == "hops from vertex 5" and g.colorbar.range()[0] == 0
    lo, hi = g.heat_bar.levels()
    assert (lo, hi) == (0, g._apsp_summary["diameter"]) and g.heat_bar.isVisible()
    # Flint: the heatmap of a line
    fl = main_window.show_workspace("flint")
    fl.form.set_controls({"members": "line", "n": 8, "t_end": 20.0, "dt": 0.01})
    fl.run()
    qtbot.waitUntil(lambda: fl.worker is None, timeout=30000)
    y = fl.samples[:, 0, :]
    assert fl.heat_bar.levels() == pytest.approx((y.min(), y.max()))
    # Occupancy: the case-study mesh
    occ = main_window.show_workspace("occupancy")
    occ.case_study.new_mesh(seed=1)
    assert occ.case_study.mesh_bar.levels() == pytest.approx(occ.case_study.mesh_item.levels)


def test_cahn_hilliard_3d_view_has_its_colour_bar(main_window, ws, qtbot):
    ws.set_parameter("dim", 3)
    ws.set_parameter("size", 16)
    assert ws.reset()
    assert ws.canvas.dim == 3 and ws.colorbar.isVisible() and ws.colorbar.range() == ws.canvas.current_clim


# ------------------------------------------------------------------------ value under the mouse
def _move(qtbot, widget, x, y):
    qtbot.mouseMove(widget, QPoint(int(round(x)), int(round(y))))
    qtbot.wait(30)


def test_value_under_the_mouse_in_the_status_bar(main_window, ws, qtbot):
    lbl = main_window.lbl_cursor
    # Cahn–Hilliard: the cell and φ there (once the view has been laid out and drawn)
    qtbot.wait(300)
    i, j = 10, 37
    tr = ws.canvas.image.get_transform("visual", "canvas")
    x, y = tr.map([j + 0.5, i + 0.5, 0, 1])[:2]
    _move(qtbot, ws.canvas.native, x, y)
    v = float(ws.sim.field_numpy()[i, j])
    want = f"y = {i}, x = {j}:  φ = {v:.4g}"
    qtbot.waitUntil(lambda: lbl.isVisible() and lbl.text() == want, timeout=3000)
    # Graphs: the vertex under the mouse
    g = main_window.show_workspace("graphs")
    main_window.apply_preset("small world: p = 0.05")
    _wait_graphs(qtbot, g)
    qtbot.wait(100)
    k = 7
    _move(qtbot, g.canvas.native, *g.canvas.screen_of(k))
    qtbot.waitUntil(lambda: lbl.text().startswith(f"vertex {k},"), timeout=3000)
    assert f"degree {int(g.graph.degrees()[k])}" in lbl.text()
    # Occupancy: the chart point under the mouse
    occ = main_window.show_workspace("occupancy")
    qtbot.wait(100)
    p = occ.charts.plots["threads"]
    view = occ.charts.layout_widget
    xs, ys, _pt = occ.charts.data("threads")
    # inside the step (xs[2], xs[3]] that xs[3]'s value holds for, not on its edge (a pixel's rounding
    # there reads the next step)
    sp = view.mapFromScene(p.vb.mapViewToScene(QPointF((xs[2] + xs[3]) / 2, 50.0)))
    _move(qtbot, view.viewport(), sp.x(), sp.y())
    want = f"Threads per block {xs[3]:g} threads/block: occupancy {ys[3]:.1f} %"
    qtbot.waitUntil(lambda: lbl.text() == want, timeout=3000)
    # switching workspace clears a stale readout
    main_window.show_workspace("cahn_hilliard")
    assert not lbl.isVisible()


# ------------------------------------------------------------------------ runs and quitting
def test_mode_bar_marks_running_workspaces_and_quit_asks(main_window, ws, qtbot, monkeypatch):
    asked = []
    monkeypatch.setattr(main_window, "confirm_quit", lambda names: asked.append(names) or False)
    main_window.update_mode_bar()
    assert not main_window.mode_bar_marked("cahn_hilliard")
    ws.start()
    qtbot.waitUntil(lambda: main_window.mode_bar_marked("cahn_hilliard"), timeout=3000)
    main_window.show_workspace("occupancy")              # still marked while another is shown
    main_window.update_mode_bar()
    assert main_window.mode_bar_marked("cahn_hilliard") and not main_window.mode_bar_marked("occupancy")
    main_window.close()                                  # "No": the window stays, the run goes on
    assert asked == [["Cahn–Hilliard"]] and main_window.isVisible() and ws.is_running()
    ws.pause()
    qtbot.waitUntil(lambda: not main_window.mode_bar_marked("cahn_hilliard"), timeout=3000)
    fl = main_window.show_workspace("flint")
    fl.form.set_controls({"t_end": 1e5, "dt": 0.01})
    fl.run()
    main_window.update_mode_bar()
    assert main_window.mode_bar_marked("flint")
    main_window.close()
    assert asked[-1] == ["Flint"] and main_window.isVisible()
    fl.stop()
    qtbot.waitUntil(lambda: fl.worker is None, timeout=30000)
    n = len(asked)
    main_window.close()                                  # nothing runs: no question, it closes
    assert len(asked) == n and not main_window.isVisible()


def test_slow_frames_report_progress_and_a_busy_cursor(main_window, ws, qtbot):
    """A frame longer than the worker's chunk is stepped in chunks (the lock is free between them)
    with progress in the status bar and a busy cursor over the view, then both go away."""
    seen, cursors = [], []
    ws.status_changed.connect(lambda d: seen.append(d["progress"]) if "progress" in d else None)
    ws.worker.progress.connect(lambda done, total: cursors.append((done, total, ws.canvas.native.cursor().shape())))
    ws.worker.chunk_seconds = 1e-9                       # every step is "slow": one step per chunk
    ws.worker.step_seconds = 1.0
    ws.controls.spf.setValue(4)
    start = ws.sim.step_count
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count == start + 4 and bool(seen) and seen[-1] is None, timeout=10000)
    fractions = [p[0] for p in seen if p is not None]
    assert fractions == [0.25, 0.5, 0.75] and "of 4 steps" in [p for p in seen if p][0][1]
    assert [c[2] for c in cursors if c[0] < c[1]] == [Qt.CursorShape.BusyCursor] * 3
    assert ws.canvas.native.cursor().shape() != Qt.CursorShape.BusyCursor
    assert not main_window.progress_bar.isVisible()
    assert ws.sim.history.steps[-1] == start + 4           # one history point for the whole frame
    assert ws.sim.history.steps[-2] == start
