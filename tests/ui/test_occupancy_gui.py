"""GUI tests of the Occupancy workspace (CPU backend under Xvfb): inputs → results and charts, limiter
highlight, bad input message, kernels tab without a GPU, the papers' tab, exports."""
from __future__ import annotations

import csv

import pytest


def test_registered_and_shown(main_window, occ_ws):
    assert main_window.workspace() is occ_ws
    assert occ_ws.spec().cc == "9.0"          # no GPU: the default is CC 9.0
    assert "Occupancy" in occ_ws.summary.text()


def test_inputs_update_results_and_charts_instantly(qtbot, occ_ws):
    occ_ws.set_inputs(cc="9.0", threads=256, regs=32, smem_static=0, smem_dynamic=0)
    assert occ_ws.result.occupancy == 1.0
    # typing into a spin box recomputes at once (no button)
    occ_ws.regs.setValue(64)
    assert occ_ws.result.active_blocks_per_sm == 4 and occ_ws.result.occupancy == 0.5
    assert occ_ws.result.limiter == "registers"
    assert "50%" in occ_ws.summary.text()
    # the limiter row is highlighted
    rows = {occ_ws.table.item(i, 0).text(): i for i in range(occ_ws.table.rowCount())}
    i_reg, i_smem = rows["Blocks limited by registers"], rows["Blocks limited by shared memory"]
    assert i_reg in occ_ws._limiter_rows and i_smem not in occ_ws._limiter_rows
    assert occ_ws.table.item(i_reg, 1).background().color().name() == "#ffe08a"
    assert occ_ws.table.item(i_reg, 1).text() == "4"
    # charts: current point on each curve at the current occupancy
    for key, x in (("threads", 256), ("regs", 64), ("smem", 0)):
        xs, ys, (px, py) = occ_ws.charts.data(key)
        assert (px, py) == (x, 50.0)
        assert ys[xs.index(x)] == pytest.approx(50.0)
    # more dynamic shared memory: the smem chart's point moves and the limiter changes
    occ_ws.smem_dyn.setValue(100_000)
    assert occ_ws.result.limiter == "shared_memory" and occ_ws.result.active_blocks_per_sm == 2
    assert occ_ws.charts.data("smem")[2] == (100_000.0, 25.0)


def test_cc_change_sets_ranges_and_paper_000_chooser(occ_ws):
    occ_ws.set_inputs(cc="1.3", threads=64, regs=40, smem_static=4408, smem_dynamic=0)
    assert occ_ws.threads.maximum() == 512 and occ_ws.regs.maximum() == 128
    assert occ_ws.result.active_warps_per_sm == 6            # paper 004 Table 4.4, MM t = 64
    assert "maxOccupancy" in occ_ws.suggest.text()
    occ_ws.set_inputs(cc="8.6")
    assert occ_ws.threads.maximum() == 1024 and occ_ws.smem_dyn.maximum() == 99 * 1024


def test_bad_input_shows_the_exact_reason_without_an_exception(occ_ws):
    occ_ws.set_inputs(cc="9.0", threads=1024, regs=72, smem_static=0, smem_dynamic=0)
    assert occ_ws.message_bar.isVisible() and occ_ws.message_bar.level == "error"
    assert "73728 registers per block" in occ_ws.message_bar.text()
    assert occ_ws.result.active_blocks_per_sm == 0 and "0%" in occ_ws.summary.text()
    occ_ws.regs.setValue(32)                    # fixing it clears the message
    assert not occ_ws.message_bar.isVisible()


def test_my_kernels_on_cpu_says_why_it_is_empty(occ_ws):
    assert occ_ws.kernels_tab.kernels.rowCount() == 0
    assert "without a GPU" in occ_ws.kernels_tab.kernels_note.text()
    assert not occ_ws.kernels_tab.btn_refresh.isEnabled() and not occ_ws.kernels_tab.btn_measure.isEnabled()
    assert occ_ws.kernels_tab.refresh_kernels() == []


def test_papers_tab_reproduces_table_4_5(occ_ws):
    assert occ_ws.table45_matches == 30


def test_exports(occ_ws, tmp_path):
    occ_ws.set_inputs(cc="9.0", threads=256, regs=64, smem_static=0, smem_dynamic=16384)
    p = occ_ws.export_table(str(tmp_path / "occ.csv"))
    rows = list(csv.reader(open(p)))
    assert ["result", "limiter", "registers"] in rows
    assert ["result", "Active blocks per SM", "4"] in rows
    assert sum(r[0] == "curve_threads" for r in rows) == 32
    for ext in ("png", "svg"):
        out = occ_ws.export_plots(str(tmp_path / f"occ.{ext}"))
        data = open(out, "rb").read()
        assert len(data) > 2000
        assert data[:4] == b"\x89PNG" if ext == "png" else b"<svg" in data[:2000]
    # a passing notice in the status bar: the message bar would re-lay out the charts
    assert "Exported the charts" in occ_ws.window().statusBar().currentMessage()
    assert not occ_ws.message_bar.isVisible()


def test_settings_roundtrip(occ_ws, tmp_path):
    from PyQt6.QtCore import QSettings
    s = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    occ_ws.set_inputs(cc="8.6", threads=128, regs=40, smem_static=1024, smem_dynamic=2048, carveout=50)
    occ_ws.save_settings(s)
    occ_ws.set_inputs(cc="9.0", threads=512, regs=16, smem_static=0, smem_dynamic=0, carveout=-1)
    occ_ws.restore_settings(s)
    assert occ_ws.spec().cc == "8.6" and occ_ws.inputs() == dict(
        threads_per_block=128, regs_per_thread=40, smem_static=1024, smem_dynamic=2048, carveout=50)
