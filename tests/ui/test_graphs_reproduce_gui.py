"""Graphs workspace, "Reproduce" tab: α-model parameter fields, connectivity reading, clustering."""
import json
import math

import numpy as np
import pytest

from kernels.graphs.data import generators as G
from kernels.graphs.experiments import reproduce as rp


def sweep(qtbot, panel, sizes="200, 400", inst=1, types=("alpha-ring", "alpha"), method="cpu-sampled"):
    panel.ed_sizes.setText(sizes)
    panel.sp_inst.setValue(inst)
    panel.cb_method.setCurrentText(method)
    for t, ck in panel.ck_types.items():
        ck.setChecked(t in types)
    with qtbot.waitSignal(panel.finished, timeout=60000):
        assert panel.run()
    return list(panel.rows)


def scatter_points(plot):
    """Number of finite points drawn as symbols (per-instance scatter) in a PlotItem."""
    total = 0
    for it in plot.listDataItems():
        if it.opts.get("symbol") is not None:
            _x, y = it.getData()
            total += 0 if y is None else int(np.isfinite(y).sum())
    return total


@pytest.fixture
def panel(graphs_ws):
    return graphs_ws.reproduce


def test_defaults_and_defaults_button(panel):
    for t, k in (("alpha-ring", 1), ("alpha", 2)):
        assert panel.sp_alpha[t].value() == pytest.approx(G.ALPHA_SETS[k]["alpha"])
        assert float(panel.ed_p[t].text()) == pytest.approx(G.ALPHA_SETS[k]["p"])
    assert panel.alpha_overrides() == {t: {"alpha": G.ALPHA_SETS[k]["alpha"], "p": G.ALPHA_SETS[k]["p"]}
                                       for t, k in (("alpha-ring", 1), ("alpha", 2))}
    assert panel.connectivity() == "redraw" and panel.ck_clust.isChecked()
    assert "not guaranteed by the algorithm" in panel.cb_conn.toolTip()
    assert "paper 000 does not give" in panel.sp_alpha["alpha"].toolTip().lower()
    panel.sp_alpha["alpha"].setValue(7.5)
    panel.ed_p["alpha-ring"].setText("0.25")
    panel.ed_p["alpha"].setText("abc")
    panel.bt_defaults.click()
    assert panel.sp_alpha["alpha"].value() == pytest.approx(G.ALPHA_SETS[2]["alpha"])
    assert float(panel.ed_p["alpha-ring"].text()) == pytest.approx(G.ALPHA_SETS[1]["p"])
    assert float(panel.ed_p["alpha"].text()) == pytest.approx(G.ALPHA_SETS[2]["p"])


@pytest.mark.parametrize("bad", ["abc", "2", "-1e-3", "nan", ""])
def test_bad_p_says_so_and_starts_nothing(panel, graphs_ws, bad):
    panel.ed_sizes.setText("200, 400")
    panel.ed_p["alpha"].setText(bad)
    assert not panel.run()
    assert panel.job is None and panel.bt_run.isEnabled()
    assert "p of set (2)" in graphs_ws.message_bar.text() and "[0, 1]" in graphs_ws.message_bar.text()
    assert "p of set (2)" in panel.lbl.text()


def test_alpha_p_overrides_reach_the_sweep(qtbot, panel):
    base = sweep(qtbot, panel, types=("alpha-ring",))
    assert panel.sweep_params["params"]["alpha-ring"] == {"alpha": 0.0, "p": G.ALPHA_SETS[1]["p"]}
    # p = 1 on the ring set: every new link is random, so the ring's long paths collapse
    panel.ed_p["alpha-ring"].setText("1")
    panel.sp_alpha["alpha-ring"].setValue(2.5)
    rows = sweep(qtbot, panel, types=("alpha-ring",))
    assert panel.sweep_params["params"]["alpha-ring"] == {"alpha": 2.5, "p": 1.0}
    assert [(r.type, r.n) for r in rows] == [(r.type, r.n) for r in base]
    assert rows[-1].mean_path_length < 0.5 * base[-1].mean_path_length
    assert rp.alpha_params("alpha-ring", panel.sweep_params["params"]["alpha-ring"])["ring"] is True
    # scientific notation is accepted
    panel.ed_p["alpha-ring"].setText("1e-10")
    assert panel.alpha_overrides()["alpha-ring"]["p"] == pytest.approx(1e-10)


def test_largest_component_reading(qtbot, panel):
    # α = 0, tiny p without a ring: separate caves, so the largest component is a fraction of N
    panel.sp_alpha["alpha"].setValue(0.0)
    panel.ed_p["alpha"].setText("1e-4")
    panel.cb_conn.setCurrentText("largest component")
    assert panel.connectivity() == "giant"
    rows = sweep(qtbot, panel, types=("alpha",), inst=2)
    assert len(rows) == 4 and panel.sweep_params["connectivity"] == "giant"
    fr = [r.giant_fraction for r in rows]
    assert all(0 < f <= 1 for f in fr) and min(fr) < 1
    assert all(r.regenerated == 0 for r in rows)
    text = panel.lbl.text()
    assert "Largest component" in text and f"{100 * np.mean(fr):.1f} %" in text
    # the paper's reading does not report it
    panel.cb_conn.setCurrentText("redraw disconnected (paper)")
    sweep(qtbot, panel, types=("alpha",), inst=1)
    assert "Largest component" not in panel.lbl.text()


def test_clustering_plot_and_checkbox(qtbot, panel, tmp_path):
    rows = sweep(qtbot, panel, types=("alpha-ring", "alpha"), inst=2)
    assert all(math.isfinite(r.clustering) and 0 <= r.clustering <= 1 for r in rows)
    assert scatter_points(panel.p_clu) == len(rows)
    assert len([it for it in panel.p_clu.listDataItems() if it.opts.get("symbol") is None]) == 2   # mean lines
    mc = rp.mean_clustering(rows)
    assert "Mean clustering" in panel.lbl.text() and f"(2) {mc['alpha']:.3f}" in panel.lbl.text()
    assert "slightly lower clustering" in panel.p_clu.toolTip()
    assert panel.p_clu.ctrl.logXCheck.isChecked() and not panel.p_clu.ctrl.logYCheck.isChecked()
    assert panel.export_csv(str(tmp_path / "c.csv"))
    head, first = (tmp_path / "c.csv").read_text().splitlines()[:2]
    cols = head.split(",")
    assert cols[-5:-3] == ["clustering", "giant_fraction"] and first.split(",")[cols.index("clustering")] != "nan"
    panel.ck_clust.setChecked(False)
    rows = sweep(qtbot, panel, types=("alpha-ring", "alpha"), inst=1)
    assert rows and all(math.isnan(r.clustering) for r in rows)
    assert scatter_points(panel.p_clu) == 0 and not panel.p_clu.listDataItems()
    assert scatter_points(panel.p_len) == len(rows)
    assert "Mean clustering" not in panel.lbl.text()


def test_export_plots_has_three_rows(qtbot, panel, tmp_path):
    sweep(qtbot, panel, types=("alpha",))
    assert panel.export_plots(str(tmp_path / "p.png"))
    from PyQt6.QtGui import QImage
    img = QImage(str(tmp_path / "p.png"))
    assert img.height() == 2 * panel.plots.height() and img.width() == 2 * panel.plots.width()
    assert panel.plots.ci.getItem(2, 0) is panel.p_clu


def test_state_round_trip(panel, backend):
    from explorer.graphs.reproduce import ReproducePanel
    panel.ed_sizes.setText("300, 600")
    panel.sp_inst.setValue(4)
    panel.cb_method.setCurrentText("cpu-sampled")
    panel.ck_types["ba"].setChecked(False)
    panel.sp_alpha["alpha-ring"].setValue(1.5)
    panel.ed_p["alpha"].setText("1e-10")
    panel.cb_conn.setCurrentText("largest component")
    panel.ck_clust.setChecked(False)
    st = json.loads(json.dumps(panel.state()))          # survives JSON (QSettings)
    other = ReproducePanel(backend)
    assert other.state() != st
    other.restore(st)
    assert other.state() == st
    assert other.alpha_overrides() == panel.alpha_overrides()
    assert other.connectivity() == "giant" and not other.ck_clust.isChecked()
    # junk is skipped, not fatal
    other.restore({"instances": "x", "method": "nope", "alpha": {"alpha": "bad"}, "connectivity": 3})
    other.restore(None)
    assert other.state() == st
    other.deleteLater()


def test_graphs_settings_survive_a_restart(main_window, graphs_ws, backend, qtbot):
    """Generator controls and the Reproduce tab come back in a new window (QSettings)."""
    from explorer.main_window import MainWindow
    graphs_ws.set_parameters(generator="ws", n=321, k=6, p=0.25, seed=17)
    panel = graphs_ws.reproduce
    panel.ed_sizes.setText("250, 500")
    panel.ed_p["alpha"].setText("3e-9")
    panel.cb_conn.setCurrentText("largest component")
    before = (graphs_ws.session_state()["params"], panel.state())
    main_window.close()
    again = MainWindow(backend, settings=main_window.settings)
    qtbot.addWidget(again)
    ws2 = again.show_workspace("graphs")
    assert (ws2.session_state()["params"], ws2.reproduce.state()) == before
    assert ws2.reproduce.alpha_overrides()["alpha"]["p"] == pytest.approx(3e-9)
    again.close()


def test_graphs_settings_ignore_junk(graphs_ws, tmp_path):
    from PyQt6.QtCore import QSettings
    s = QSettings(str(tmp_path / "junk.ini"), QSettings.Format.IniFormat)
    s.setValue("params_json", "{not json")
    s.setValue("reproduce_json", json.dumps({"sizes": 5}))
    before = (graphs_ws.session_state()["params"], graphs_ws.reproduce.state())
    graphs_ws.restore_settings(s)
    assert (graphs_ws.session_state()["params"], graphs_ws.reproduce.state()) == before


def test_reproduce_state_travels_in_sessions(graphs_ws):
    panel = graphs_ws.reproduce
    panel.sp_alpha["alpha"].setValue(6.5)
    panel.ed_p["alpha"].setText("1e-10")
    st = graphs_ws.session_state()
    assert st["reproduce"] == panel.state()
    panel.sp_alpha["alpha"].setValue(2.0)
    graphs_ws.restore_session(json.loads(json.dumps(st)), {})
    assert panel.sp_alpha["alpha"].value() == pytest.approx(6.5)


def test_cpu_reference_plotted_with_speedups(qtbot, panel, tmp_path):
    panel.cb_ref.setCurrentIndex(panel.cb_ref.findData("cpu-floyd"))
    rows = sweep(qtbot, panel, sizes="150, 300", inst=2, types=("alpha-ring", "ba"), method="cpu")
    assert len(rows) == 8 and all(r.ref_method == "cpu-floyd" and r.ref_agrees for r in rows)
    text = panel.lbl.text()
    assert "Speed-up over cpu-floyd" in text and "agree with cpu-floyd" in text
    ups = rp.speedups(rows)
    assert f"{ups[('ba', 300)]:.3g}×" in text
    dashed = [it for it in panel.p_time.listDataItems()
              if it.opts["pen"] is not None and pg_style(it) == "dash"]
    assert len(dashed) == 2                                             # one mean reference curve per type
    for it in dashed:
        x, y = it.getOriginalDataset()
        t = "ba" if any(np.isclose(y, np.mean([r.ref_seconds for r in rows if (r.type, r.n) == ("ba", 150)])))\
            else "alpha-ring"
        want = [np.mean([r.ref_seconds for r in rows if (r.type, r.n) == (t, n)]) for n in (150, 300)]
        np.testing.assert_allclose(y, want)
    panel.export_csv(str(tmp_path / "s.csv"))
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0].endswith("ref_method,ref_seconds,ref_agrees") and all(ln.endswith(",True") for ln in lines[1:])
    assert panel.state()["reference"] == "cpu-floyd"


def pg_style(item) -> str:
    from PyQt6.QtCore import Qt
    pen = item.opts["pen"]
    style = pen.style() if hasattr(pen, "style") else None
    return "dash" if style == Qt.PenStyle.DashLine else "other"


def test_floyd_reference_refused_above_its_limit(panel, graphs_ws):
    panel.cb_ref.setCurrentIndex(panel.cb_ref.findData("cpu-floyd"))
    panel.ed_sizes.setText(f"200, {rp.FLOYD_MAX_N + 1}")
    assert not panel.run() and panel.job is None
    assert "O(N³)" in graphs_ws.message_bar.text()
    panel.cb_ref.setCurrentIndex(panel.cb_ref.findData(""))
    panel.restore({"reference": "bogus"})
    assert panel.cb_ref.currentData() == ""


def test_sweep_too_big_for_memory_is_refused_before_work(panel, graphs_ws, monkeypatch):
    import kernels.backend as kb
    monkeypatch.setattr(kb, "host_available_memory", lambda: 50 * 2 ** 20)     # 50 MiB free
    panel.ed_sizes.setText("200, 8000")                   # 8000² uint16 = 122 MiB
    panel.cb_method.setCurrentText("cpu")
    assert not panel.run() and panel.job is None
    assert "GiB" in graphs_ws.message_bar.text() and "8000" in graphs_ws.message_bar.text()
    from kernels.graphs.experiments import reproduce as rp_
    rp_.check_memory_for([200, 8000], "cpu-sampled", panel.backend)   # no matrix kept: allowed


def test_cuda_methods_run_on_the_cpu_host_labelled(qtbot, panel):
    """Issue 33: without a GPU the list offers the CUDA methods, labelled, and they give the exact
    mean path (the cpu method's); a size above the host limit is refused, naming it."""
    from explorer.graphs.emulated import HOST_LABEL
    i = panel.cb_method.findData("gpu-bfs")
    assert i >= 0 and HOST_LABEL in panel.cb_method.itemText(i)
    assert panel.cb_method.itemText(panel.cb_method.findData("cpu")) == "cpu"
    ref = sweep(qtbot, panel, sizes="60, 90", types=("ba",), method="cpu")
    panel.cb_method.setCurrentIndex(panel.cb_method.findData("gpu-msbfs"))
    panel.ed_sizes.setText("60, 90")
    with qtbot.waitSignal(panel.finished, timeout=60000):
        assert panel.run()
    assert [r.mean_path_length for r in panel.rows] == [r.mean_path_length for r in ref]
    assert panel.state()["method"] == "gpu-msbfs"
    panel.cb_method.setCurrentIndex(panel.cb_method.findData("gpu-bfs-k1") if panel.cb_method.findData("gpu-bfs-k1")
                                    >= 0 else panel.cb_method.findData("sssp"))
    panel.ed_sizes.setText("1000, 40000")
    assert not panel.run() and "limit is 30 s" in panel.lbl.text() and panel.job is None
