"""Graphs workspace at scale (issue 32): every vertex and edge drawn (no density-only view), a click
colours by distance with its colour bar, the value under the mouse, the live force layout's pause /
continue / stop within 100 ms and dragging a pinned vertex, Esc during a 2 000 000-vertex generation
within 0.5 s, and the layout and colour-by choices in settings and sessions."""
import time

import numpy as np
import pytest
from PyQt6.QtCore import QPoint, Qt
from scipy.sparse.csgraph import connected_components, shortest_path

from kernels.graphs.data.graph import Graph


def run_job(qtbot, ws, action, timeout=120000):
    with qtbot.waitSignal(ws.job_finished, timeout=timeout) as blocker:
        action()
    return blocker.args[0]


def hops_from(g, s) -> np.ndarray:
    """Hop distances from s by scipy (inf unreachable): the reference for the overlay."""
    csr = Graph(g.n, g.edges).csr()
    return shortest_path(csr.to_scipy(weighted=False), unweighted=True, indices=[s])[0]


def at(xy) -> QPoint:
    return QPoint(int(round(xy[0])), int(round(xy[1])))


@pytest.mark.slow
def test_200k_vertices_draw_every_vertex_and_edge_and_the_distance_under_the_mouse(main_window, graphs_ws, qtbot):
    ws = graphs_ws
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    ws.set_parameters(generator="spatial", n=200_000, k=4, seed=seed, layout="auto")
    run_job(qtbot, ws, ws.generate)
    g = ws.graph
    assert g.n == 200_000 and g.m > 300_000
    sc = ws.canvas.scene
    assert ws.canvas.mode == "graph" and sc.n == g.n and sc.m == g.m
    assert sc.nodes.visible and sc.edges.visible and not sc.density.visible
    assert sc.edges_drawn == g.m and "edges" in ws.canvas.shown_text()
    qtbot.waitUntil(lambda: "edges" in main_window.lbl_display.text(), timeout=3000)
    img = ws.canvas.render()[..., :3].astype(int)
    assert img.std() > 5 and (img.sum(-1) < 600).mean() > 0.2        # ink over much of the view
    # a click on a vertex colours by its distance row; the colour bar names it
    # click a vertex of the giant component (the spatial graph has small components too)
    _nc, label = connected_components(Graph(g.n, g.edges).csr().to_scipy(weighted=False), directed=False)
    giant = np.flatnonzero(label == np.bincount(label).argmax())
    xy = tuple(float(round(c)) for c in ws.canvas.screen_of(int(np.random.default_rng().choice(giant))))
    src = ws.canvas.pick(xy)
    assert src is not None
    qtbot.mouseClick(ws.canvas.native, Qt.MouseButton.LeftButton, pos=at(xy))
    qtbot.waitUntil(lambda: ws.selected == [src], timeout=10000)
    assert ws.overlay.name() == "distance" and ws.colorbar.isVisible()
    assert ws.colorbar.label == f"hops from vertex {src}"
    ref = hops_from(g, src)
    lo, hi = ws.colorbar.range()
    assert lo == 0 and hi == ref[np.isfinite(ref)].max()
    # the value under the mouse: a vertex's screen position, its overlay value in the status bar
    qtbot.wait(200)                 # the colour bar took its place beside the view: the view resized
    w, h = ws.canvas.canvas.size
    reach = np.flatnonzero(np.isfinite(ref) & (ref > 0))
    assert len(reach) >= 1
    for t in np.random.default_rng().choice(reach, min(3, len(reach)), replace=False):
        pos = tuple(float(round(c)) for c in ws.canvas.screen_of(int(t)))
        if not (0 <= pos[0] < w and 0 <= pos[1] < h):
            continue
        hit = ws.canvas.value_at(pos)
        assert hit is not None
        i, v = hit
        sx, sy = ws.canvas.screen_of(i)
        assert np.hypot(sx - pos[0], sy - pos[1]) <= 12          # the vertex under the mouse
        assert v == ref[i] if np.isfinite(ref[i]) else np.isnan(v)
        qtbot.mouseMove(ws.canvas.native, at(pos))
        want = f"vertex {i}, "
        qtbot.waitUntil(lambda: want in main_window.lbl_cursor.text(), timeout=3000)
        assert f"hops from vertex {src}: {int(ref[i])}" in main_window.lbl_cursor.text()


def test_live_force_layout_pause_continue_stop_within_100_ms_and_drag(graphs_ws, qtbot):
    ws = graphs_ws
    lp = ws.layout_panel
    ws.set_parameters(generator="ba", n=2000, k=3, seed=int(np.random.default_rng().integers(1, 1000)),
                      layout="force", iterations=1_000_000)
    run_job(qtbot, ws, ws.generate)
    lay = lp.layout_obj
    assert lay is not None and lp.state == "running"
    qtbot.waitUntil(lambda: lay.iteration > 20, timeout=10000)
    p0 = ws.canvas.pos.copy()
    qtbot.waitUntil(lambda: not np.array_equal(ws.canvas.pos, p0), timeout=5000)   # the view follows

    def settle_time(t0, watch=0.4):
        """Seconds from t0 to the last change of the iteration count within ``watch`` seconds (the
        GUI thread only looks: a frame painted meanwhile would count against the worker)."""
        last_it, last_t = lay.iteration, time.perf_counter()
        while time.perf_counter() - t0 < watch:
            time.sleep(0.001)
            if lay.iteration != last_it:
                last_it, last_t = lay.iteration, time.perf_counter()
        return last_t - t0

    t0 = time.perf_counter()
    lp.pause()
    assert settle_time(t0) < 0.1 and lp.is_paused() and lp.bt_pause.text() == "Continue"
    # drag a vertex while paused: it is pinned where the mouse goes and the view shows it there
    a = tuple(float(round(c)) for c in ws.canvas.screen_of(int(np.argmax(ws.graph.degrees()))))
    i = ws.canvas.pick(a)
    assert i is not None
    w, h = ws.canvas.canvas.size
    b = (min(w - 5, a[0] + 40), min(h - 5, a[1] + 30))
    qtbot.mousePress(ws.canvas.native, Qt.MouseButton.LeftButton, pos=at(a))
    qtbot.mouseMove(ws.canvas.native, at(b))
    target = np.array(ws.canvas.scene.data_of(b))
    tol = 1e-4 * (1 + np.abs(target).max())
    qtbot.waitUntil(lambda: np.allclose(lay.positions_host()[i], target, rtol=0, atol=tol), timeout=3000)
    qtbot.mouseRelease(ws.canvas.native, Qt.MouseButton.LeftButton, pos=at(b))
    assert np.allclose(ws.canvas.pos[i], target, rtol=0, atol=tol) and ws.selected == []   # a drag is no click
    it = lay.iteration
    t0 = time.perf_counter()
    lp.resume()
    while lay.iteration == it and time.perf_counter() - t0 < 1.0:
        time.sleep(0.001)
    assert time.perf_counter() - t0 < 0.1 and lp.bt_pause.text() == "Pause"
    job = lp.job
    t0 = time.perf_counter()
    lp.cancel()
    assert job.wait(100), "the layout's worker ran on for more than 100 ms after Stop"
    ended = [time.perf_counter()]
    qtbot.waitUntil(lambda: job.is_cancelled() and not job.is_running(), timeout=2000)
    assert ended[0] - t0 < 0.1 and lp.state == "stopped" and lp.job is None
    assert np.array_equal(ws.pos, lay.positions_host())                 # sessions keep where it stopped


def test_esc_stops_a_2m_vertex_generation_within_half_a_second(main_window, graphs_ws, qtbot):
    ws = graphs_ws
    ws.set_parameters(generator="ws", n=2_000_000, k=4, p=0.1, seed=int(np.random.default_rng().integers(1, 99)))
    ws.generate()
    job = ws.job
    assert job is not None
    got = []
    job.cancelled.connect(lambda: got.append(time.perf_counter()))
    qtbot.wait(300)
    assert ws.job is job and ws.graph is None                 # still generating
    esc = [a for a in main_window.m_workspace.actions() if a.shortcut().toString() == "Esc"]
    t0 = time.perf_counter()
    esc[0].trigger()
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    assert got[0] - t0 < 0.5, f"{got[0] - t0:.2f} s from Esc to the job's cancelled signal"
    qtbot.waitUntil(lambda: ws.job is None, timeout=5000)
    assert ws.graph is None and "cancelled" in ws.message_bar.text()


def test_layout_and_colour_by_in_settings_and_sessions(graphs_ws, tmp_path):
    from PyQt6.QtCore import QSettings
    from kernels.graphs.layout import LAYOUTS
    from kernels.graphs.algorithms.overlays import OVERLAYS
    ws = graphs_ws
    rng = np.random.default_rng()
    lay, col = str(rng.choice(list(LAYOUTS))), str(rng.choice(["degree", "clustering", "component"]))
    ws.set_parameters(layout=lay, color_by=col, iterations=int(rng.integers(1, 900)))
    prm = ws.control_params()
    assert prm["layout"] == lay and prm["color_by"] == col and ws.layout_panel.name() == lay
    s = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    ws.save_settings(s)
    ws.set_parameters(layout="auto", color_by="degree", iterations=500)
    ws.restore_settings(s)
    assert ws.control_params() == prm
    # an older session: no layout, the colour-by list's old text
    old = {k: v for k, v in prm.items() if k not in ("layout", "iterations", "color_by", "density")}
    ws.set_parameters(**ws._check_params(old))
    ws.set_parameters(color_by="local clustering")
    assert ws.overlay.name() == "clustering" and ws.layout_panel.name() == lay
    for key in OVERLAYS:                                     # each entry says what it is
        i = ws.cb_color.findData(key)
        assert i >= 0 and OVERLAYS[key].help in ws.cb_color.itemData(i, Qt.ItemDataRole.ToolTipRole)
    for i, key in enumerate(LAYOUTS):
        assert ws.layout_panel.cb_layout.itemData(i, Qt.ItemDataRole.ToolTipRole) == LAYOUTS[key].help


@pytest.mark.parametrize("kind", ["component", "degree"])
def test_every_overlay_has_its_colour_bar_label(graphs_ws, qtbot, kind):
    from kernels.graphs.algorithms.overlays import OVERLAYS
    ws = graphs_ws
    ws.set_parameters(generator="er", n=3000, p=0.0004, seed=int(np.random.default_rng().integers(1, 99)),
                      layout="circle", color_by=kind)
    run_job(qtbot, ws, ws.generate)
    assert ws.colorbar.isVisible() and ws.colorbar.label == OVERLAYS[kind].label
    ws.set_parameters(color_by="eccentricity")               # no APSP yet: greyed out in the list
    i = ws.cb_color.findData("eccentricity")
    assert not ws.cb_color.model().item(i).isEnabled()
