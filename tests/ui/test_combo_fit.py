"""Combo boxes of Graphs and Occupancy show every entry whole at 1440 × 900 (issue #36: "combos
clip their text"): each visible combo is at least as wide as its longest entry plus the arrow."""
import pytest
from PyQt6.QtWidgets import QComboBox

from explorer.widgets import COMBO_CHROME_PX, COMBO_MAX_PX


@pytest.mark.parametrize("key", ["graphs", "occupancy"])
def test_visible_combos_fit_their_longest_entry(main_window, qtbot, key):
    main_window.resize(1440, 900)
    ws = main_window.show_workspace(key)
    qtbot.waitExposed(ws)
    qtbot.wait(100)
    checked = 0
    for c in ws.findChildren(QComboBox):
        if not c.isVisibleTo(ws) or c.count() == 0 or c.isEditable():
            continue
        fm = c.fontMetrics()
        longest = max(fm.horizontalAdvance(c.itemText(i)) for i in range(c.count()))
        assert c.width() >= min(COMBO_MAX_PX, longest + COMBO_CHROME_PX), (c.toolTip()[:50], c.width(), longest)
        checked += 1
    assert checked >= 1
