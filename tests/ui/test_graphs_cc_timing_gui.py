"""Graphs workspace, "Clustering timings (paper 001)" tab: paper 001 §5.7's timing sweep in the GUI."""
import csv
import json

import numpy as np
import pytest

from kernels.graphs.experiments import cc_timing as cc


@pytest.fixture
def panel(graphs_ws):
    return graphs_ws.cc_timing


def configure(panel, ws="300, 500", ba="300, 500", methods=("cpu", "cpu-threads"), repeats=1,
              families=("ws", "ba")):
    for f, ck in panel.ck_fam.items():
        ck.setChecked(f in families)
    panel.ed_sizes["ws"].setText(ws)
    panel.ed_sizes["ba"].setText(ba)
    for m, ck in panel.ck_methods.items():
        ck.setChecked(m in methods)
    panel.sp_repeats.setValue(repeats)


def test_tab_is_beside_reproduce(graphs_ws, panel):
    i = graphs_ws.show_tab(panel)
    assert graphs_ws.tabs.tabText(i) == "Clustering timings (paper 001)"
    assert graphs_ws.tabs.tabText(i - 1) == "Reproduce (paper 000)"


def test_defaults_on_the_cpu_backend(panel):
    assert panel.ed_sizes["ws"].text() == "2000, 4000, 8000, 16000"
    assert panel.ed_sizes["ba"].text() == "2000, 4000, 8000"
    assert panel.methods() == ["cpu", "cpu-threads"]
    assert not panel.ck_methods["networkx"].isChecked() and "slow" in panel.ck_methods["networkx"].toolTip()
    assert panel.sp_repeats.value() == 5 and "30 runs" in panel.sp_repeats.toolTip()
    assert panel.sp_threads.value() == cc.default_workers()
    assert [ck.text() for ck in panel.ck_fam.values()] == list(cc.FAMILIES.values())
    panel.bt_paper.click()
    assert panel.sizes() == {f: list(cc.PAPER_SIZES[f]) for f in ("ws", "ba")}
    for w in (panel.bt_run, panel.bt_cancel, panel.bt_paper, panel.sp_seed, panel.sp_threads, panel.progress,
              panel.bt_csv, panel.bt_png, *panel.ck_fam.values(), *panel.ed_sizes.values(),
              *panel.ck_methods.values()):
        assert w.toolTip(), w


def test_gpu_methods_run_their_cuda_source_on_the_cpu(qtbot, panel):
    """Issue 33: without a GPU the per-arc kernels stay enabled, labelled, opt-in, and count exactly."""
    from explorer.graphs.emulated import HOST_LABEL
    for m in cc.GPU_METHODS:
        ck = panel.ck_methods[m]
        assert ck.isEnabled() and not ck.isChecked() and HOST_LABEL in ck.text()
        assert "compiled for the CPU" in ck.toolTip()
    panel.restore({"methods": ["cpu", "gpu-arc"]})
    assert panel.methods() == ["cpu", "gpu-arc"]
    configure(panel, ws="200, 300", methods=("cpu", "gpu-arc", "gpu-sorted"), families=("ws",))
    with qtbot.waitSignal(panel.finished, timeout=120000):
        assert panel.run()
    assert len(panel.rows) == 6 and all(r.agrees for r in panel.rows)
    configure(panel, ws="200, 900000", methods=("cpu", "gpu-arc"), families=("ws",))
    assert panel.run() is False and panel.job is None              # above the host limit: refused, named
    assert "limit is 30 s" in panel.lbl.text()


def test_defaults_on_a_gpu_backend(qtbot):
    """A GPU backend (construction only: nothing runs) gets the paper's sizes and both GPU kernels."""
    from types import SimpleNamespace

    from explorer.graphs.cc_timing import ClusteringTimingPanel
    gpu = ClusteringTimingPanel(SimpleNamespace(is_gpu=True))
    qtbot.addWidget(gpu)
    assert gpu.sizes() == {f: list(cc.PAPER_SIZES[f]) for f in ("ws", "ba")}
    assert gpu.methods() == ["cpu", "cpu-threads", "gpu-arc", "gpu-sorted"]
    assert all(ck.isEnabled() for ck in gpu.ck_methods.values())
    assert "CUDA GPU" not in gpu.ck_methods["gpu-arc"].toolTip()


def test_small_sweep_runs_plots_summarises_exports(qtbot, panel, tmp_path):
    configure(panel)
    with qtbot.waitSignal(panel.finished, timeout=120000):
        assert panel.run()
        assert not panel.bt_run.isEnabled() and panel.bt_cancel.isEnabled()
    assert panel.job is None and panel.bt_run.isEnabled() and not panel.bt_cancel.isEnabled()
    rows = panel.rows
    assert len(rows) == 8 and panel.progress.value() == panel.progress.maximum() == 8
    assert all(r.agrees for r in rows)
    assert {(r.family, r.n, r.method) for r in rows} == {(f, n, m) for f in ("ws", "ba") for n in (300, 500)
                                                          for m in ("cpu", "cpu-threads")}
    # the time curves carry the rows' seconds, one curve per (family, method)
    assert set(panel.curves) == {(f, m) for f in ("ws", "ba") for m in ("cpu", "cpu-threads")}
    for (f, m), curve in panel.curves.items():
        x, y = curve.getOriginalDataset()
        mine = sorted((r.n, r.seconds) for r in rows if r.family == f and r.method == m)
        assert list(x) == [n for n, _ in mine]
        np.testing.assert_allclose(y, [s for _, s in mine], rtol=0, atol=0)
    assert panel.p_time.ctrl.logXCheck.isChecked() and panel.p_time.ctrl.logYCheck.isChecked()
    assert panel.p_time.getAxis("left").labelText == "seconds (mean of repeats)"
    assert panel.p_time.getAxis("bottom").labelText == "V (vertices)"
    # clustering plot: each family's points plus the paper's level
    data = {it.name(): it.getOriginalDataset() for it in panel.p_clu.listDataItems()}
    assert set(data["WS paper 0.53"][1]) == {0.53} and set(data["BA paper 0.01"][1]) == {0.01}
    ws_c = {r.n: r.clustering for r in rows if r.family == "ws"}
    np.testing.assert_allclose(data["WS measured"][1], [ws_c[300], ws_c[500]])
    assert panel.p_clu.ctrl.logXCheck.isChecked()
    # summary: the fitted slopes next to the paper's, speed-ups, agreement
    fits = cc.fit_slopes(rows)
    text = panel.lbl.text()
    for f in ("ws", "ba"):
        assert f"cpu {fits[f, 'cpu']:.2f} (paper single core {cc.PAPER_SLOPES[f]['single core']:.2f})" in text
        assert f"cpu-threads {fits[f, 'cpu-threads']:.2f} (paper pThreads {cc.PAPER_SLOPES[f]['pThreads']:.2f})" \
            in text
    best = max(cc.speedups(rows).items(), key=lambda kv: kv[1])
    assert f"{best[1]:.2f}× at V = {best[0][1]:,}" in text
    assert "All methods agree on t and p" in text
    # CSV: the rows, column by column
    assert panel.export_csv(str(tmp_path / "t.csv"))
    with open(tmp_path / "t.csv", newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == list(cc.CSV_COLUMNS) and len(table) == 1 + len(rows)
    for r, line in zip(rows, table[1:]):
        d = dict(zip(table[0], line))
        assert (d["family"], int(d["n"]), d["method"], int(d["t"]), int(d["p"])) == (r.family, r.n, r.method,
                                                                                      r.t, r.p)
        assert float(d["seconds"]) == r.seconds and d["agrees"] == "True"
    # PNG of both plots, twice the screen size
    assert panel.export_plots(str(tmp_path / "t.png"))
    from PyQt6.QtGui import QImage
    img = QImage(str(tmp_path / "t.png"))
    assert not img.isNull() and img.width() == 2 * panel.plots.width() and img.height() == 2 * panel.plots.height()
    assert (tmp_path / "t.png").stat().st_size > 2000


def test_workspace_export_plots_on_this_tab(qtbot, graphs_ws, panel, tmp_path):
    configure(panel, families=("ws",), methods=("cpu",))
    with qtbot.waitSignal(panel.finished, timeout=60000):
        assert panel.run()
    graphs_ws.show_tab(panel)
    graphs_ws.export_plots(str(tmp_path / "w.png"))
    graphs_ws.export_plots(str(tmp_path / "w.svg"))
    assert (tmp_path / "w.png").stat().st_size > 2000
    assert "<svg" in (tmp_path / "w.svg").read_text()


@pytest.mark.parametrize("setup, words", [
    (dict(ws="300, abc"), "whole numbers"),
    (dict(ws="300"), "at least two sizes"),
    (dict(ba="300, 5000000"), "between 100 and 1000000"),
    (dict(ws="20, 300"), "between 100"),
    (dict(families=()), "at least one graph family"),
    (dict(methods=()), "at least one clustering method"),
])
def test_bad_input_says_so_and_starts_nothing(panel, graphs_ws, setup, words):
    configure(panel, **setup)
    assert not panel.run()
    assert panel.job is None and panel.bt_run.isEnabled() and not panel.rows
    assert words in graphs_ws.message_bar.text() and words in panel.lbl.text()


def test_cancel_stops_early(qtbot, panel):
    configure(panel, ws="2000, 4000, 8000, 16000, 32000", ba="2000, 4000, 8000, 16000", repeats=5)
    full = 9 * 2
    with qtbot.waitSignal(panel.finished, timeout=120000):
        assert panel.run()
        qtbot.waitUntil(lambda: len(panel.rows) >= 1, timeout=60000)
        panel.bt_cancel.click()
    assert 1 <= len(panel.rows) < full
    assert panel.job is None and panel.bt_run.isEnabled() and "cancelled" in panel.lbl.text()


def test_state_round_trip_and_junk(panel, backend):
    from explorer.graphs.cc_timing import ClusteringTimingPanel
    panel.ck_fam["ba"].setChecked(False)
    panel.ed_sizes["ws"].setText("1000, 3000")
    panel.ed_sizes["ba"].setText("500, 700, 900")
    for m, ck in panel.ck_methods.items():
        ck.setChecked(m in ("cpu-threads", "networkx"))
    panel.sp_repeats.setValue(7)
    panel.sp_threads.setValue(3)
    panel.sp_seed.setValue(42)
    st = json.loads(json.dumps(panel.state()))
    assert st == {"families": ["ws"], "sizes": {"ws": "1000, 3000", "ba": "500, 700, 900"},
                  "methods": ["cpu-threads", "networkx"], "repeats": 7, "threads": 3, "seed": 42, "gpus": 2}
    other = ClusteringTimingPanel(backend)
    assert other.state() != st
    other.restore(st)
    assert other.state() == st
    # junk is skipped, not fatal
    other.restore({"families": "ws", "sizes": {"ws": 5, "zz": "1"}, "methods": 3, "repeats": "x",
                   "threads": -4, "seed": True})
    other.restore({"repeats": 1000, "threads": None, "seed": 2**40, "sizes": ["a"], "bogus": 1})
    other.restore(None)
    other.restore("junk")
    assert other.state() == st
    # unknown names in a list are skipped; the list says which boxes are ticked
    other.restore({"families": ["ba", "nope"], "methods": ["cpu", "nope"]})
    assert other.families() == ["ba"] and other.methods() == ["cpu"]
    other.deleteLater()


def test_settings_survive_a_restart(main_window, graphs_ws, backend, qtbot):
    from explorer.main_window import MainWindow
    panel = graphs_ws.cc_timing
    panel.ed_sizes["ba"].setText("400, 800")
    panel.ck_methods["networkx"].setChecked(True)
    panel.sp_repeats.setValue(9)
    panel.sp_seed.setValue(5)
    before = panel.state()
    main_window.close()
    again = MainWindow(backend, settings=main_window.settings)
    qtbot.addWidget(again)
    ws2 = again.show_workspace("graphs")
    assert ws2.cc_timing.state() == before
    assert ws2.cc_timing.sp_repeats.value() == 9 and ws2.cc_timing.ed_sizes["ba"].text() == "400, 800"
    again.close()


def test_settings_ignore_junk(graphs_ws, tmp_path):
    from PyQt6.QtCore import QSettings
    s = QSettings(str(tmp_path / "junk.ini"), QSettings.Format.IniFormat)
    s.setValue("cc_timing_json", "{not json")
    before = graphs_ws.cc_timing.state()
    graphs_ws.restore_settings(s)
    s.setValue("cc_timing_json", json.dumps({"sizes": 5, "repeats": "many"}))
    graphs_ws.restore_settings(s)
    assert graphs_ws.cc_timing.state() == before


def test_state_travels_in_sessions(graphs_ws):
    panel = graphs_ws.cc_timing
    panel.sp_repeats.setValue(11)
    panel.ed_sizes["ws"].setText("600, 1200")
    st = graphs_ws.session_state()
    assert st["cc_timing"] == panel.state()
    panel.sp_repeats.setValue(2)
    panel.ed_sizes["ws"].setText("1, 2")
    graphs_ws.restore_session(json.loads(json.dumps(st)), {})
    assert panel.sp_repeats.value() == 11 and panel.ed_sizes["ws"].text() == "600, 1200"


def test_workspace_cancel_and_busy_cover_the_sweep_tabs(qtbot, graphs_ws):
    """Esc (the workspace's Cancel) stops a running sweep tab, and busy() sees it."""
    panel = graphs_ws.cc_timing
    panel.ed_sizes["ws"].setText("300, 400, 500, 600, 700, 800, 900, 1000")
    panel.ck_fam["ba"].setChecked(False)
    for m, ck in panel.ck_methods.items():
        ck.setChecked(m in ("cpu", "networkx"))
    panel.sp_repeats.setValue(3)
    with qtbot.waitSignal(panel.finished, timeout=60000):
        assert panel.run()
        assert graphs_ws.busy()
        qtbot.waitUntil(lambda: len(panel.rows) >= 1, timeout=30000)
        graphs_ws.cancel()
    assert not graphs_ws.busy() and 1 <= len(panel.rows) < 16 and "cancelled" in panel.lbl.text()


def test_two_virtual_gpu_curves_count_like_one_core(panel, qtbot):
    """multi-arc / multi-sorted on 2 virtual GPUs (CPU backend): their own curves, the same t and p."""
    configure(panel, ws="300, 500", ba="300, 500", methods=("cpu", "multi-arc", "multi-sorted"))
    panel.sp_gpus.setValue(2)
    assert "virtual GPUs" in panel.ck_methods["multi-arc"].toolTip() and panel.sp_gpus.toolTip()
    with qtbot.waitSignal(panel.finished, timeout=120_000):
        assert panel.run()
    assert {r.method for r in panel.rows} == {"cpu", "multi-arc", "multi-sorted"}
    assert all(r.agrees for r in panel.rows)
    assert {r.gpus for r in panel.rows if r.method.startswith("multi")} == {2}
    assert {("ws", "multi-arc"), ("ba", "multi-sorted")} <= set(panel.curves)
    assert "2 GPUs kernel 1" in panel.lbl.text()
