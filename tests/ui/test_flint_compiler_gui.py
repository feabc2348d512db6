"""Flint workspace: the Compiler tab (DAG levels, listing, optimisation table) and the stimulus editor."""
from __future__ import annotations

import csv


def _settled(qtbot, ws, timeout=30000):
    qtbot.waitUntil(lambda: not ws.compiler.busy() and ws.compiler.prog is not None, timeout=timeout)


def _table(ws):
    t = ws.compiler.table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def _col(ws, name):
    t = ws.compiler.table
    heads = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    return heads.index(name)


def test_compiler_panel_options_table_listing(flint_ws, qtbot, tmp_path):
    ws = flint_ws
    panel = ws.compiler
    assert ws.tabs.tabText(ws.tabs.indexOf(panel)) == "Compiler"
    _settled(qtbot, ws)
    txt = ws.listing.toPlainText()
    for op in ("CONST", "STATE", "ASSIGN", "END"):
        assert op in txt
    # DAG levels chart: one bar a level, heights = functions per level
    heights = list(panel.bars.opts["height"])
    assert heights == panel.prog.level_counts and len(heights) >= 3
    rows = _table(ws)
    assert [r[0] for r in rows] == ["cse", "fold", "nary", "merge", "reorder", "remap", "unify", "redundant", "sum"]
    merge_row = rows[3]
    assert "⇒" in merge_row[_col(ws, "phases")]                 # merge changes the number of phases
    lanes_before = rows[0][_col(ws, "lanes per phase")]
    phases_before = panel.prog.stats()["phases"]
    # switch merge off: every other row is now computed without merge
    panel.set_option("merge", False)
    _settled(qtbot, ws)
    qtbot.waitUntil(lambda: not panel.prog.options.merge, timeout=30000)
    rows2 = _table(ws)
    assert panel.prog.stats()["phases"] > phases_before
    assert rows2[0][_col(ws, "phases")] != rows[0][_col(ws, "phases")]
    assert rows2[3] == merge_row                                  # merge's own off ⇒ on is unchanged
    # redundant off: lanes equal essential threads, divergent warps appear
    panel.set_option("merge", True)
    panel.set_option("redundant", False)
    _settled(qtbot, ws)
    qtbot.waitUntil(lambda: panel.prog.options.merge and not panel.prog.options.redundant, timeout=30000)
    st = panel.prog.stats()
    assert st["expr_lanes_per_phase"] == st["expr_threads_per_phase"]
    assert _table(ws)[0][_col(ws, "lanes per phase")] != lanes_before
    assert "divergent warps" in ws.listing.toPlainText()
    panel.set_option("redundant", True)
    _settled(qtbot, ws)
    # exports
    panel.export_table(str(tmp_path / "opt.csv"))
    with open(tmp_path / "opt.csv", encoding="utf-8") as fh:
        got = list(csv.reader(fh))
    assert got[0][0] == "option" and len(got) == 10 and got[8][0] == "redundant"
    panel.export_chart(str(tmp_path / "levels.png"))
    panel.export_chart(str(tmp_path / "levels.svg"))
    assert (tmp_path / "levels.png").stat().st_size > 1000
    assert "<svg" in (tmp_path / "levels.svg").read_text()


def test_stimulus_editor(flint_ws, qtbot, tmp_path):
    ws = flint_ws
    ed = ws.stim
    assert ed.isEnabled()
    assert ed.spins["stim_period"].value() == ws.model.params["stim_period"]
    ed.spins["stim_period"].setValue(500.0)
    ed.spins["stim_start"].setValue(2.0)
    r = [ws.table.item(i, 0).text() for i in range(ws.table.rowCount())].index("stim_period")
    assert float(ws.table.item(r, 1).text()) == 500.0 and ws.model.params["stim_period"] == 500.0
    # a table edit shows in the editor
    ws.set_parameter("stim_duration", 1.5)
    assert ed.spins["stim_duration"].value() == 1.5
    # the next run uses the protocol
    ws.form.set_controls({"t_end": 5.0, "dt": 0.01})
    ws.run()
    assert ws.cfg["model"].params["stim_period"] == 500.0 and ws.cfg["model"].params["stim_start"] == 2.0
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=60000)
    V = ws.samples[:, 0, 0]
    assert V.max() > -60.0                                        # stimulated from 2 ms: depolarised by 5 ms
    # a model without stim_* parameters: editor disabled, tooltip says why
    m = tmp_path / "nostim.flint"
    m.write_text("model nostim\nstate x = 1\nparam k = 0.5\node x = -k*x\n")
    ws.open_field(str(m))
    assert not ed.isEnabled() and "stim_period" in ed.toolTip()


def test_bytecode_listing_is_not_clipped(flint_ws, qtbot):
    """Issue 36: every bytecode line fits the listing's width (no part hidden to the right); only
    the long summary lines above it wrap."""
    ws = flint_ws
    _settled(qtbot, ws)
    ws.tabs.setCurrentWidget(ws.compiler)
    lst = ws.listing
    qtbot.waitUntil(lambda: lst.isVisible() and lst.viewport().width() > 0, timeout=5000)
    code = ws.compiler.prog.listing().splitlines()
    fm = lst.fontMetrics()
    widest = max(fm.horizontalAdvance(line) for line in code)
    assert lst.viewport().width() >= widest, (lst.viewport().width(), widest)
    assert lst.horizontalScrollBar().maximum() == 0
    assert lst.font().fixedPitch() or fm.horizontalAdvance("i") == fm.horizontalAdvance("M")
