"""Graphs workspace: the "BFS kernels", "Block sweep" (paper 000) and "SSSP (paper 004)" tabs, the
generator list and the method list (CPU backend: the CUDA kernels run their source on the CPU,
labelled so; sizes above the host limit are refused naming it — issue 33)."""
import csv

import numpy as np
import pytest

from kernels.graphs.data import generators as gen
from kernels.graphs.experiments import sssp_table as T
from kernels.graphs.apsp import METHODS

from explorer.graphs.emulated import HOST_LABEL


def test_tabs_registered_and_remembered(graphs_ws):
    texts = [graphs_ws.tabs.tabText(i) for i in range(graphs_ws.tabs.count())]
    for t in ("BFS kernels (paper 000)", "Block sweep (paper 000)", "SSSP (paper 004)"):
        assert t in texts
    for key in ("bfs_evolution", "block_sweep", "sssp_table"):
        assert key in graphs_ws.sweep_tabs
    p = graphs_ws.bfs_evolution
    p.ed_sizes["ba"].setText("300, 600")
    p.ck_kernel["gpu-msbfs"].setChecked(True)
    p._spins["batch"].setValue(64)
    state = p.state()
    p.ed_sizes["ba"].setText("1, 2")
    p._spins["batch"].setValue(1)
    p.restore(state)
    assert p.ed_sizes["ba"].text() == "300, 600" and p._spins["batch"].value() == 64
    assert p.ck_kernel["gpu-msbfs"].isChecked()
    s = graphs_ws.sssp_table
    s.cb_exp.setCurrentIndex(s.cb_exp.findData("3.12"))
    st = s.state()
    s.cb_exp.setCurrentIndex(0)
    s.restore(st)
    assert s.experiment() == "3.12" and s.ed_values.text() == st["values"]


def test_generators_and_methods_listed(graphs_ws):
    gens = [graphs_ws.cb_gen.itemData(i) for i in range(graphs_ws.cb_gen.count())]
    assert gens == list(gen.GENERATORS)
    cb = graphs_ws.cb_method
    methods = [cb.itemData(i) or cb.itemText(i) for i in range(cb.count())]   # data: the name under a label
    assert methods == list(METHODS)
    for i, m in enumerate(methods):
        assert cb.model().item(i).isEnabled() == METHODS[m].available(graphs_ws.backend)
        assert cb.itemData(i, 3).startswith(METHODS[m].help)                  # tooltip role
    assert all(cb.model().item(i).isEnabled() for i, m in enumerate(methods)
               if m.startswith(("gpu-bfs", "gpu-msbfs", "sssp")))           # CUDA source run on the CPU
    graphs_ws.set_parameters(generator="rmat")
    assert graphs_ws.sp_k.isEnabled() and not graphs_ws.sp_p.isEnabled()


def test_bfs_kernels_run_on_the_cpu_host_and_large_sizes_are_refused(qtbot, graphs_ws):
    p = graphs_ws.bfs_evolution
    for t, ck in p.ck_type.items():
        ck.setChecked(t == "ba")
    p.ed_sizes["ba"].setText("60, 90")
    for k, ck in p.ck_kernel.items():
        ck.setChecked(k in ("gpu-bfs-k1", "gpu-bfs-k6", "gpu-msbfs"))
    p._spins["instances"].setValue(1)
    assert HOST_LABEL in p.ck_kernel["gpu-bfs-k1"].text()
    with qtbot.waitSignal(p.finished, timeout=120000):
        assert p.run()
    assert len(p.rows) == 6 and all(r.agrees for r in p.rows)
    p.ed_sizes["ba"].setText("1000, 30000")
    before = p.state()
    assert p.run() is False and "limit is 30 s" in p.lbl.text()
    assert p.state() == before and p.job is None


def test_sssp_tab_runs_cuda_methods_on_the_cpu_host(qtbot, graphs_ws):
    s = graphs_ws.sssp_table
    ck = s.ck_method["sssp-staged"]
    assert ck.isEnabled() and HOST_LABEL in ck.text() and s.methods() == ["cpu-dijkstra"]   # opt in
    ck.setChecked(True)
    s.cb_exp.setCurrentIndex(s.cb_exp.findData("3.10"))
    s.ed_values.setText("40, 80")
    s.sp_sources.setValue(0)
    with qtbot.waitSignal(s.finished, timeout=60000):
        assert s.run()
    assert {r.method for r in s.rows} == {"cpu-dijkstra", "sssp-staged"} and all(r.agrees for r in s.rows)
    s.cb_exp.setCurrentIndex(s.cb_exp.findData("overhead"))
    s.ed_values.setText("4096, 16384")
    assert s.run() is False and "limit is 30 s" in s.lbl.text() and s.job is None


def test_sssp_figure_runs_on_the_cpu_and_exports(qtbot, graphs_ws, tmp_path):
    s = graphs_ws.sssp_table
    s.cb_exp.setCurrentIndex(s.cb_exp.findData("3.10"))
    s.ed_values.setText("150, 300")
    s.sp_sources.setValue(0)                                   # all sources
    with qtbot.waitSignal(s.finished, timeout=60000):
        assert s.run()
    assert [(r.n, r.method) for r in s.rows] == [(150, "cpu-dijkstra"), (300, "cpu-dijkstra")]
    assert all(r.agrees and not r.scaled for r in s.rows)
    assert "equals scipy" in s.lbl.text()
    x, y = s.plot.listDataItems()[0].getOriginalDataset()
    assert list(x) == [150, 300] and np.allclose(y, [r.seconds for r in s.rows])
    path = s.export_csv(str(tmp_path / "f.csv"))
    with open(path, newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == list(T.ScaleRow.__dataclass_fields__) and len(table) == 3
    s.ed_values.setText("150, x")
    assert s.run() is False and "whole numbers" in s.lbl.text()
