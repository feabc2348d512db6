"""Occupancy workspace defects of issue 36: the occupancy curves are step functions and are drawn as
steps (on screen and in SVG), counts are pluralised, lecture mode at 1440 × 900 shows every table row
and every chart label, and the case-study tab shows no empty plot before a run and no table row or
column behind a scroll bar."""
from __future__ import annotations

import re

import numpy as np
import pytest
from PyQt6.QtCore import QPoint


def _segments(points):
    """Consecutive (x, y) pairs of a polyline."""
    return list(zip(points[:-1], points[1:]))


def _axis_aligned(points, tol=1e-6):
    return all(abs(a[0] - b[0]) <= tol * max(1.0, abs(a[0])) or abs(a[1] - b[1]) <= tol * max(1.0, abs(a[1]))
               for a, b in _segments(points))


def _path_points(curve_item):
    path = curve_item.curve.getPath()
    return [(path.elementAt(i).x, path.elementAt(i).y) for i in range(path.elementCount())]


@pytest.mark.parametrize("key", ["threads", "regs", "smem"])
def test_curves_are_drawn_as_steps_on_screen(occ_ws, key):
    rng = np.random.default_rng()
    occ_ws.set_inputs(cc=str(rng.choice(["7.5", "8.6", "9.0"])), threads=int(rng.integers(1, 33)) * 32,
                      regs=int(rng.integers(16, 128)), smem_static=0, smem_dynamic=int(rng.integers(0, 40)) * 1024)
    xs, ys, _pt = occ_ws.charts.data(key)
    pts = _path_points(occ_ws.charts.curves[key])
    assert _axis_aligned(pts), "a ramp between samples"
    # a sample's value holds back to the previous sample: (x[i-1], x[i]] has y[i]
    for i in range(1, len(xs)):
        mid = (xs[i - 1] + xs[i]) / 2
        on = [y for (x0, y), (x1, _y) in _segments(pts) if min(x0, x1) <= mid <= max(x0, x1) and x0 != x1]
        assert on and on[0] == pytest.approx(ys[i]), (i, xs[i], ys[i], on)
    # the status-bar readout names the step under the mouse
    i = int(rng.integers(1, len(xs)))
    assert occ_ws.charts.describe(key, "t", "u", (xs[i - 1] + xs[i]) / 2).endswith(f"occupancy {ys[i]:.1f} %")


def test_threads_curve_is_steps_in_svg(occ_ws, tmp_path):
    occ_ws.set_inputs(cc="9.0", threads=256, regs=72, smem_static=0, smem_dynamic=0)
    out = occ_ws.export_plots(str(tmp_path / "occ.svg"))
    svg = open(out, encoding="utf-8").read()
    polylines = []
    for d in re.findall(r'<path[^>]* d="([^"]+)"', svg):
        nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]
        polylines.append(list(zip(nums[0::2], nums[1::2])))
    xs, ys, _pt = occ_ws.charts.data("threads")
    longest = sorted(polylines, key=len)[-3:]              # the three curves: the longest paths
    assert all(len(p) >= len(xs) for p in longest)
    for p in longest:
        assert _axis_aligned(p, tol=1e-3), p[:12]


def test_one_block_per_sm_is_singular(occ_ws):
    occ_ws.set_inputs(cc="9.0", threads=1024, regs=64, smem_static=0, smem_dynamic=0)
    assert occ_ws.result.active_blocks_per_sm == 1
    assert "1 block per SM" in occ_ws.summary.text() and "1 blocks" not in occ_ws.summary.text()
    occ_ws.set_inputs(threads=256, regs=32)
    assert f"{occ_ws.result.active_blocks_per_sm} blocks per SM" in occ_ws.summary.text()
    assert "1 blocks" not in occ_ws.suggest.text()


def test_lecture_mode_shows_every_row_and_label_at_1440x900(main_window, occ_ws, qtbot):
    main_window.resize(1440, 900)
    main_window.showFullScreen = lambda: None              # a 1440 × 900 screen
    main_window.set_lecture_mode(True)
    try:
        qtbot.wait(1200)                                   # the window must not grow while it settles
        assert (main_window.width(), main_window.height()) == (1440, 900)
        t = occ_ws.table
        last = t.rowCount() - 1
        assert t.rowCount() == 12 and not t.verticalScrollBar().isVisible()
        assert t.rowViewportPosition(last) + t.rowHeight(last) <= t.viewport().height()
        assert t.rowHeight(last) >= t.fontMetrics().height()
        page = occ_ws.tabs.currentWidget()
        bottom = t.mapTo(page, QPoint(0, t.height())).y()
        assert bottom <= page.height()
        lw = occ_ws.charts.layout_widget
        assert lw.mapTo(page, QPoint(0, lw.height())).y() <= page.height()
        view = lw.sceneRect()
        for key, plot in occ_ws.charts.plots.items():
            label = plot.getAxis("bottom").label
            r = label.mapRectToScene(label.boundingRect())
            assert view.contains(r), (key, r, view)
    finally:
        main_window.set_lecture_mode(False)


def _case(occ_ws, qtbot, main_window):
    main_window.resize(1440, 900)
    cs = occ_ws.case_study
    occ_ws.tabs.setCurrentWidget(cs)
    qtbot.waitExposed(cs)
    qtbot.wait(200)
    return cs


def _shows_everything(t):
    assert not t.verticalScrollBar().isVisible() and not t.horizontalScrollBar().isVisible()
    assert sum(t.rowHeight(i) for i in range(t.rowCount())) <= t.viewport().height()
    assert sum(t.columnWidth(j) for j in range(t.columnCount())) <= t.viewport().width() + 1


def test_case_study_has_no_empty_plot_and_no_hidden_cells(main_window, occ_ws, qtbot):
    cs = _case(occ_ws, qtbot, main_window)
    assert not cs.view.isVisible()                          # nothing to draw yet: no empty plot
    assert cs.table.rowCount() == 3 and cs.occ_table.rowCount() == 5
    for t in (cs.table, cs.occ_table):
        _shows_everything(t)
    cs.cells.setValue(int(np.random.default_rng().integers(300, 900)))
    cs.new_mesh()
    qtbot.wait(200)
    assert cs.view.isVisible() and cs.view.width() > 200 and cs.view.height() >= 200 and cs.mesh_item.n_drawn > 0
    for t in (cs.table, cs.occ_table):
        _shows_everything(t)
    assert not cs.scroll.verticalScrollBar().isVisible()       # the whole page fits 1440 × 900
