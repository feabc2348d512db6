"""Graphs workspace: the "Floyd–Warshall family (papers 002, 004)" tab, the APSP list's tooltips and the
weighted shortest-path highlight from predecessors."""
import csv

import networkx as nx
import numpy as np

from kernels.graphs.experiments import fw_sweep as fs
from kernels.graphs.apsp import METHODS, apsp
from kernels.graphs.apsp.fw_core import fw_versions


def test_tab_registered_with_cpu_defaults(graphs_ws):
    p = graphs_ws.fw_family
    i = graphs_ws.show_tab(p)
    assert graphs_ws.tabs.tabText(i) == "Floyd–Warshall family (papers 002, 004)"
    assert set(p.ck_versions) == set(fw_versions())
    for name, ck in p.ck_versions.items():              # every version runs; GPU-only ones as CUDA source on the CPU
        cls = fw_versions()[name]
        assert ck.isEnabled() and cls.help in ck.toolTip()
        assert ("(CUDA source run on the CPU)" in ck.text()) == (not cls.cpu)
        assert (f"n ≤ {cls.host_limit()}" in ck.toolTip()) == (not cls.cpu)
    assert not p.ck_emulate.isHidden() and p.ck_emulate.toolTip()
    assert p.specs() == ["fw-v1", "fw-blocked", "fw-fast"] and p.ed_sizes.text() == "64, 128, 256"
    assert not p.bt_t47.isEnabled()
    for w in (p.bt_run, p.bt_cancel, p.bt_t2, p.bt_t46, p.bt_csv, p.bt_png, p.ed_specs, p.ed_sizes, p.cb_arith,
              p.sp_repeats, p.progress, p.cb_table, p.table):
        assert w.toolTip(), w


def test_method_list_tooltips_and_cpu_availability(graphs_ws):
    from PyQt6.QtCore import Qt
    cb = graphs_ws.cb_method
    names = [cb.itemText(i) for i in range(cb.count())]
    assert names == list(METHODS)
    for i, m in enumerate(names):
        tip = cb.itemData(i, Qt.ItemDataRole.ToolTipRole)
        assert tip.startswith(METHODS[m].help)
        assert ("CUDA source run on the CPU" in tip) == METHODS[m].emulated(graphs_ws.backend)
        assert cb.model().item(i).isEnabled() == METHODS[m].available(graphs_ws.backend)   # CPU backend
    assert cb.model().item(names.index("fw-v3")).isEnabled()     # its CUDA source on the CPU


def test_sweep_runs_tables_and_exports(qtbot, graphs_ws, tmp_path):
    p = graphs_ws.fw_family
    for name, ck in p.ck_versions.items():
        ck.setChecked(name in ("fw-v1", "fw-blocked"))
    p.ed_specs.setText("fw-mm:tile=16,l=2")
    p.ed_sizes.setText("40, 70")
    p.sp_repeats.setValue(2)
    p.cb_arith.setCurrentText("int32")
    with qtbot.waitSignal(p.finished, timeout=60000):
        assert p.run()
    assert p.job is None and len(p.rows) == 6 and all(r.agrees for r in p.rows)
    assert [r.spec for r in p.rows[:3]] == ["fw-v1", "fw-blocked", "fw-mm:tile=16,l=2"]
    x, y = p.curves["fw-v1"].getOriginalDataset()
    assert list(x) == [40, 70] and list(y) == [r.seconds for r in p.rows if r.spec == "fw-v1"]
    assert "n = 70: fastest" in p.lbl.text() and "same distances" in p.lbl.text()
    p.cb_table.setCurrentIndex(0)
    assert p.table.rowCount() == 6
    p.cb_table.setCurrentIndex(1)                       # Table II layout: the paper's means beside ours
    assert p.table.item(0, 1).text() == f"{np.mean(fs.PAPER_002_TABLE_II['fw-v1']):.3f}"
    assert p.export_csv(str(tmp_path / "fw.csv"))
    with open(tmp_path / "fw.csv", newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == list(fs.CSV_COLUMNS) and len(table) == 7
    assert p.export_plots(str(tmp_path / "fw.png")) and (tmp_path / "fw.png").stat().st_size > 2000


def test_presets_state_and_bad_input(graphs_ws):
    p = graphs_ws.fw_family
    p.set_table_4_6()
    assert p.specs() == list(fs.THESIS_SPECS) and p.cb_table.currentIndex() == 2
    p.set_table_ii()                                    # without a GPU: V3–V5 as CUDA source on the CPU, n = 512
    assert p.specs() == list(fs.PAPER_002_TABLE_II) and p.ed_sizes.text() == str(fs.HOST_TABLE_II_N)
    assert p.sp_repeats.value() == 3
    state = p.state()
    p.ed_sizes.setText("5")
    p.restore(state)
    assert p.ed_sizes.text() == str(fs.HOST_TABLE_II_N)
    p.restore({"versions": ["fw-v5"], "arith": "bogus", "repeats": 10 ** 9, "emulate": True})
    assert p.ck_versions["fw-v5"].isChecked() and p.sp_repeats.value() == 3
    p.ck_versions["fw-blocked"].setChecked(True)
    assert p.specs() == ["fw-v5", "fw-blocked:emulate=1"]
    p.ck_emulate.setChecked(False)
    p.ed_sizes.setText("12, x")
    assert not p.run() and "whole numbers" in p.lbl.text()
    p.ed_sizes.setText("50")
    p.ed_specs.setText("fw-mm:tile=48")
    assert not p.run() and "tile" in p.lbl.text()


def test_weighted_path_highlight_uses_predecessors(graphs_ws, qtbot):
    ws = graphs_ws
    ws.set_parameters(generator="ws", n=80, k=4, p=0.2, seed=4, method="fw-blocked")
    ws.cb_weights.setCurrentText("float")
    with qtbot.waitSignal(ws.job_finished, timeout=60000):
        ws.generate()
    with qtbot.waitSignal(ws.job_finished, timeout=60000):
        ws.compute()
    r = ws.result
    assert r.method == "fw-blocked" and r.pred is not None and r.weighted
    ws.click_node(0)
    t = int(np.argmax(np.where(np.isfinite(r.dist[0]), r.dist[0], -1)))
    ws.click_node(t)
    path = ws.highlighted_path
    H = nx.Graph()
    for (a, b), w in zip(ws.graph.edges.tolist(), ws.graph.weights.tolist()):
        H.add_edge(a, b, weight=w)
    assert path[0] == 0 and path[-1] == t
    assert nx.path_weight(H, path, "weight") == float(np.float32(nx.shortest_path_length(H, 0, t, weight="weight"))) \
        or abs(nx.path_weight(H, path, "weight") - r.dist[0, t]) < 1e-4
    assert "length" in ws.info.text()


def test_gpu_only_version_computes_on_the_cpu_backend(graphs_ws, qtbot, rng):
    """Without a GPU the workspace's APSP runs fw-v4's CUDA source on the CPU; distances equal fw-v1's."""
    ws = graphs_ws
    seed = int(rng.integers(1000))
    ws.set_parameters(generator="ws", n=int(rng.integers(40, 90)), k=4, p=0.2, seed=seed, method="fw-v4")
    ws.cb_weights.setCurrentText("int")
    with qtbot.waitSignal(ws.job_finished, timeout=60000):
        ws.generate()
    with qtbot.waitSignal(ws.job_finished, timeout=120000):
        ws.compute()
    r = ws.result
    assert r.method == "fw-v4" and r.params["emulated"]
    ref = apsp(ws.graph, "fw-v1")
    assert np.array_equal(r.dist, ref.dist)
