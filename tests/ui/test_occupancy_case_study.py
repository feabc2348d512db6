"""GUI test of the Occupancy workspace's "Case study (paper 003)" tab on the CPU backend: the mesh view,
a CPU reference run off the GUI thread, the occupancy side by side (T10 25 % → 50 %), and the GPU
buttons explaining that they need a GPU."""
from __future__ import annotations

import numpy as np


def _tab(occ_ws, qtbot):
    cs = occ_ws.case_study
    i = occ_ws.tabs.indexOf(cs)
    assert i >= 0 and occ_ws.tabs.tabText(i) == "Case study (paper 003)"
    occ_ws.tabs.setCurrentIndex(i)
    qtbot.waitExposed(cs.view)
    return cs


def test_case_study_tab_cpu_run(qtbot, occ_ws):
    cs = _tab(occ_ws, qtbot)
    # occupancy side by side before anything ran: the paper's T10 numbers
    assert cs.occ["t10"] == {"original": 0.25, "improved": 0.5}
    assert cs.occ["here"]["improved"] > cs.occ["here"]["original"]
    assert "25%" in cs.occ_summary.text() and "50%" in cs.occ_summary.text()
    texts = [cs.occ_table.item(r, 3).text() for r in range(cs.occ_table.rowCount())]
    assert texts[0].startswith("25%") and any(t.startswith("50%") for t in texts)
    # no GPU: the GPU buttons are off and say why; asking anyway explains
    assert not cs.btn_gpu.isEnabled() and "GPU" in cs.btn_gpu.toolTip()
    assert "need CuPy and a CUDA GPU" in cs.note.text()
    with qtbot.waitSignal(cs.run_failed, timeout=2000) as blocker:
        assert cs.run("gpu") is False
    assert "GPU" in blocker.args[0]
    # a small mesh, drawn
    cs.cells.setValue(600)
    cs.km1.setValue(2)
    cs.steps.setValue(15)
    mesh = cs.new_mesh(seed=4)
    assert cs.mesh_item.n_drawn == mesh.n_cells > 500
    assert "triangles" in cs.view_title.text()
    # the CPU reference runs on a worker thread; the GUI stays responsive
    with qtbot.waitSignal(cs.run_finished, timeout=60_000) as blocker:
        assert cs.run("cpu") is True
        assert cs.busy() and not cs.btn_cpu.isEnabled()
    res = blocker.args[0]
    assert set(res) == {"cpu"} and len(res["cpu"]["hist"]) == 15
    assert not cs.busy() and cs.btn_cpu.isEnabled()
    assert cs.table.item(0, 1).text() != "—" and cs.table.item(0, 2).text() == "1.0×"
    assert cs.table.item(1, 1).text() == "—"
    assert np.isfinite(cs.results["cpu"]["u"]).all()
    assert "after 15 iterations" in cs.view_title.text()
    # changing k−1 invalidates the results and updates the occupancy table
    cs.km1.setValue(5)
    assert cs.results == {} and cs.table.item(0, 1).text() == "—"
    assert cs.occ["t10"]["original"] == 0.25
