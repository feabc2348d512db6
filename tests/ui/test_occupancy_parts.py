"""Occupancy parts alone (CPU backend, Xvfb): the *My kernels* tab (a composed part, no host), and
the workspace's undo / user-preset hooks (issue #36)."""
from __future__ import annotations

import random

import pytest
from PyQt6.QtCore import Qt


def test_kernels_tab_alone_without_gpu_and_chosen_row(qtbot):
    from explorer.occupancy.kernels_tab import KernelsTab, table_item
    tab = KernelsTab(None, "no CUDA here")
    qtbot.addWidget(tab)
    assert "no CUDA here" in tab.kernels_note.text() and "without a GPU" in tab.kernels_note.text()
    assert not any(b.isEnabled() for b in (tab.btn_refresh, tab.btn_compile, tab.btn_measure))
    assert tab.refresh_kernels() == [] and tab.measure_block_sizes() == []
    # rows as refresh_kernels fills them: selecting one emits it (the workspace loads it)
    rng = random.Random()
    tab.kernel_rows = [{"name": f"k{i}", "block": 32 * rng.randint(1, 32), "registers": rng.randint(8, 255),
                        "static_smem": rng.randint(0, 48000)} for i in range(4)]
    tab.kernels.setRowCount(4)
    for i, r in enumerate(tab.kernel_rows):
        tab.kernels.setItem(i, 0, table_item(r["name"]))
    pick = rng.randrange(4)
    with qtbot.waitSignal(tab.kernel_chosen) as sig:
        tab.kernels.selectRow(pick)
    assert sig.args[0] == tab.kernel_rows[pick]


@pytest.fixture
def occ(qtbot, backend):
    from explorer import undo
    from explorer.occupancy.workspace import OccupancyWorkspace
    ws = OccupancyWorkspace(backend)
    qtbot.addWidget(ws)
    return ws, undo.attach(ws)


def test_occupancy_inputs_are_undoable_and_set_inputs_is_not_an_edit(qtbot, occ):
    ws, stack = occ
    ws.set_inputs(cc="8.0", threads=128, regs=40)          # programmatic (signals blocked): no entry
    assert stack.count() == 0
    ws.threads.setFocus()
    ws.threads.selectAll()
    qtbot.keyClicks(ws.threads, "512")                      # typed digit by digit: one merged entry
    assert ws.threads.value() == 512 and stack.count() == 1
    ws.regs.setValue(64)
    ws.cc.setCurrentIndex(ws.cc.findData("7.5"))
    assert stack.count() == 3
    stack.undo()
    assert ws.cc.currentData() == "8.0"
    stack.undo()
    assert ws.regs.value() == 40 and ws.result.regs_per_thread == 40     # recomputed through the handler
    stack.undo()
    assert ws.threads.value() == 128
    stack.redo()
    assert ws.threads.value() == 512


def test_occupancy_preset_params_round_trip(qtbot, occ):
    ws, _stack = occ
    rng = random.Random()
    ccs = ["7.0", "7.5", "8.0", "8.6", "9.0"]
    cc = rng.choice(ccs)
    ws.set_inputs(cc=cc, threads=32 * rng.randint(1, 32), regs=rng.randint(16, 128),
                  smem_static=rng.randint(0, 40000), smem_dynamic=rng.randint(0, 20000),
                  carveout=rng.choice([-1, 25, 50, 100]))
    ws.tabs.setCurrentIndex(rng.randrange(ws.tabs.count()))
    want, inputs, tab = ws.preset_params(), ws.inputs(), ws.tabs.currentIndex()
    assert ws.supports("user_presets")
    ws.set_inputs(cc="9.0", threads=1024, regs=16, smem_static=0, smem_dynamic=0, carveout=-1)
    ws.tabs.setCurrentIndex((tab + 1) % ws.tabs.count())
    ws.apply_preset({"name": "mine", "params": want})
    assert ws.cc.currentData() == cc and ws.inputs() == inputs and ws.tabs.currentIndex() == tab
    assert ws.preset_params() == want


def test_charts_fit_a_1280_window_and_exports_keep_their_aspect(main_window, occ_ws, qtbot, tmp_path):
    """At 1280×860 (the fixture's size) the three charts fit their view (the third was cut off:
    titles made them ≥ 886 px); exporting a never-exported figure twice gives the same image (the
    first export's notice opened the message bar, which shrank the charts for the next ones)."""
    from PyQt6.QtCore import Qt
    from PyQt6.QtGui import QImage
    lw = occ_ws.charts.layout_widget
    need = lw.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
    assert need <= lw.width(), (need, lw.width())
    right = max(p.mapRectToScene(p.boundingRect()).right() for p in occ_ws.charts.plots.values())
    assert right <= lw.width() + 1
    size0 = lw.size()
    rng = __import__("random").Random()
    width = rng.randrange(600, 1400)
    shapes = []
    for i in range(2):
        out = main_window.export_figure(str(tmp_path / f"c{i}.png"), target="Occupancy charts", width=width, dpi=96)
        qtbot.wait(50)
        img = QImage(str(out))
        shapes.append((img.width(), img.height()))
        assert lw.size() == size0                       # the notice did not re-lay out the figure
    assert shapes[0] == shapes[1] and shapes[0][0] == width
    assert "Exported Occupancy charts" in main_window.statusBar().currentMessage()
    occ_ws.export_plots(str(tmp_path / "own.png"))      # the workspace's own button: the same rule
    assert lw.size() == size0
