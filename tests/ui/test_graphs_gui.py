"""Graphs workspace: generate, compute, click-to-highlight, aggregate view, cancel, export."""
import networkx as nx
import numpy as np


def run_job(qtbot, ws, action, timeout=60000):
    with qtbot.waitSignal(ws.job_finished, timeout=timeout) as blocker:
        action()
    return blocker.args[0]


def test_registered_and_generates(graphs_ws, qtbot, main_window):
    ws = graphs_ws
    assert main_window.workspace() is ws
    ws.set_parameters(generator="ws", n=120, k=4, p=0.1, seed=3)
    run_job(qtbot, ws, ws.generate)
    assert ws.graph is not None and ws.graph.n == 120 and ws.canvas.mode == "graph"
    H = nx.Graph(list(map(tuple, ws.graph.edges.tolist())))
    assert f"{nx.transitivity(H):.4f}" in ws.stats.text()
    assert not ws.message_bar.isVisible() or ws.message_bar.level != "error"
    img = ws.canvas.render()
    assert img.std() > 5                                       # something is drawn


def test_controls_a_generator_ignores_are_greyed_out(graphs_ws):
    from kernels.graphs.data.generators import USES
    ws = graphs_ws
    widgets = {"k": ws.sp_k, "p": ws.sp_p, "alpha": ws.sp_alpha, "ring": ws.ck_ring, "seed": ws.sp_seed}
    for kind in USES:
        ws.set_parameters(generator=kind)
        assert {key for key, w in widgets.items() if w.isEnabled()} == set(USES[kind]), kind
        if not ws.sp_p.isEnabled():
            assert "not used by" in ws.sp_p.toolTip()
    ws.set_parameters(generator="ba")
    assert ws.gen_form.form.labelForField(ws.sp_k).text() == "m" and "per new vertex" in ws.sp_k.toolTip()
    ws.set_parameters(generator="alpha")
    assert ws.gen_form.form.labelForField(ws.sp_k).text() == "k" and ws.sp_alpha.isEnabled()


def test_compute_click_and_shortest_path(graphs_ws, qtbot):
    ws = graphs_ws
    ws.set_parameters(generator="spatial", n=150, k=8, seed=5, method="cpu")
    run_job(qtbot, ws, ws.generate)
    run_job(qtbot, ws, ws.compute)
    assert ws.result is not None and "mean shortest path" in ws.stats.text()
    d = ws.result.dist
    reach = np.flatnonzero(d[0] < 255)
    t = int(reach[np.argmax(d[0][reach])])
    # click on the screen position of vertex 0 through the real mouse path
    from PyQt6.QtCore import QPoint, Qt
    x, y = ws.canvas.screen_of(0)
    assert ws.canvas.pick((x, y)) == 0
    qtbot.mouseClick(ws.canvas.native, Qt.MouseButton.LeftButton, pos=QPoint(int(round(x)), int(round(y))))
    qtbot.waitUntil(lambda: ws.selected == [0], timeout=3000)
    assert ws.selected == [0] and ws.cb_color.currentText() == "distance from clicked"
    ws.click_node(t)
    path = ws.highlighted_path
    assert path[0] == 0 and path[-1] == t and len(path) - 1 == d[0, t]
    H = nx.Graph(list(map(tuple, ws.graph.edges.tolist())))
    assert len(path) - 1 == nx.shortest_path_length(H, 0, t)


def test_bad_parameters_show_message_and_keep_running(graphs_ws, qtbot):
    ws = graphs_ws
    ws.set_parameters(generator="ring", n=10, k=12)
    ws.generate()
    assert ws.message_bar.isVisible() and "k must be smaller" in ws.message_bar.text()
    assert ws.job is None
    ws.open_field("/nonexistent/graph.graphml")
    qtbot.waitUntil(lambda: ws.job is None, timeout=10000)
    assert "cannot read" in ws.message_bar.text()


def test_large_graphs_draw_every_vertex_and_edge(graphs_ws, qtbot):
    ws = graphs_ws
    ws.set_parameters(generator="ba", n=8000, k=3, seed=1)
    run_job(qtbot, ws, ws.generate)
    assert ws.canvas.mode == "graph" and ws.canvas.nodes.visible and ws.canvas.edges.visible
    assert ws.canvas.scene.edge_indices == 2 * ws.graph.m
    assert ws.canvas.render().std() > 1


def test_cancel_long_apsp(graphs_ws, qtbot):
    ws = graphs_ws
    ws.set_parameters(generator="ba", n=6000, k=3, seed=2, method="cpu")
    run_job(qtbot, ws, ws.generate)
    name = run_job(qtbot, ws, lambda: (ws.compute(), ws.cancel()))
    assert name == "APSP" and ws.result is None
    assert "cancelled" in ws.message_bar.text()


def test_exports(graphs_ws, qtbot, tmp_path):
    ws = graphs_ws
    ws.set_parameters(generator="ba", n=100, k=2, seed=4, method="cpu")
    run_job(qtbot, ws, ws.generate)
    run_job(qtbot, ws, ws.compute)
    ws.save_field(str(tmp_path / "g.graphml"))
    ws.save_field(str(tmp_path / "g.edgelist"))
    ws.export_distances(str(tmp_path / "d.npy"))
    ws.export_image(str(tmp_path / "view.png"))
    ws.export_plots(str(tmp_path / "heat.png"))
    ws.tabs.setCurrentIndex(1)
    ws.export_plots(str(tmp_path / "deg.svg"))
    H = nx.read_graphml(tmp_path / "g.graphml")
    assert H.number_of_edges() == ws.graph.m
    assert np.array_equal(np.load(tmp_path / "d.npy"), ws.result.dist)
    for f in ("g.edgelist", "view.png", "heat.png", "deg.svg"):
        assert (tmp_path / f).stat().st_size > 100, f
    assert "<svg" in (tmp_path / "deg.svg").read_text()[:2000]


def test_menus_and_status_follow_the_workspace(qtbot, main_window, graphs_ws):
    """Switching workspaces renames/hides shared actions and shows only the status fields it reports."""
    texts = {a.data(): a.text() for a, _m in main_window.menus.bound_actions if a.data()}
    assert texts["&Start / Pause"] == "&Compute APSP"
    assert texts["&Open field…"] == "&Open graph…"
    extra = [a.text() for a in main_window.m_workspace.actions()]
    assert any("distances" in t for t in extra) and main_window.m_workspace.menuAction().isVisible()
    assert not main_window.lbl_sps.isVisible() and not main_window.lbl_fps.isVisible()
    main_window.mode_bar.setCurrentRow(0)   # back to Cahn–Hilliard
    texts = {a.data(): a.text() for a, _m in main_window.menus.bound_actions if a.data()}
    assert texts["&Start / Pause"] == "&Start / Pause" and texts["&Open field…"] == "&Open field…"
    assert not main_window.m_workspace.menuAction().isVisible()


def test_reproduce_tab_runs_live_and_exports(qtbot, graphs_ws, tmp_path):
    panel = graphs_ws.reproduce
    panel.ed_sizes.setText("100, 200, 400")
    panel.sp_inst.setValue(2)
    panel.ck_types["alpha"].setChecked(False)
    with qtbot.waitSignal(panel.finished, timeout=60000):
        assert panel.run()
    assert len(panel.rows) == 12
    assert "alpha-ring" in panel.lbl.text() or "α-model" in panel.lbl.text()
    items = [it for it in panel.p_len.listDataItems() if it.name()]
    assert len(items) == 2 and any("paper 0.995" in it.name() for it in items)
    assert panel.export_csv(str(tmp_path / "r.csv"))
    assert (tmp_path / "r.csv").read_text().count("\n") == 13
    assert panel.export_plots(str(tmp_path / "r.png")) and (tmp_path / "r.png").stat().st_size > 2000
    panel.ed_sizes.setText("abc")
    assert not panel.run() and "whole numbers" in graphs_ws.message_bar.text()
