"""The Graphs workspace's colour-by controls: the overlay list (``kernels.graphs.algorithms.overlays.OVERLAYS``,
each with its help as tooltip) and the optional density overlay.

A composed widget that owns its state: the workspace reads :meth:`OverlayPanel.name`, listens to
:attr:`OverlayPanel.changed` and tells it whether an APSP result exists
(:meth:`OverlayPanel.set_apsp_available`: overlays flagged ``needs_apsp`` are greyed out without one).
The list shows the names the workspace always used ("local clustering", "distance from clicked"),
so presets and sessions that stored those texts still load.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QWidget

from kernels.graphs.algorithms.overlays import OVERLAYS

#: display names (the texts earlier versions stored in sessions and presets); others: the registry key
DISPLAY = {"degree": "degree", "clustering": "local clustering", "component": "connected component",
           "distance": "distance from clicked", "eccentricity": "eccentricity"}


def display_name(key: str) -> str:
    return DISPLAY.get(key, key)


#: the colour-by texts of the list, in registry order
COLOR_BY = tuple(display_name(k) for k in OVERLAYS)


def registry_combo(registry: dict, tip: str, text=str, item_tip=lambda cls: cls.help) -> QComboBox:
    """A combo box listing a registry of classes: ``text(key)`` shown, the key as item data,
    ``item_tip(cls)`` as each entry's tooltip, ``tip`` as the box's."""
    cb = QComboBox()
    cb.setToolTip(tip)
    for key, cls in registry.items():
        cb.addItem(text(key), key)
        cb.setItemData(cb.count() - 1, item_tip(cls), Qt.ItemDataRole.ToolTipRole)
    return cb


class OverlayPanel(QWidget):
    """Colour-by list and density check box; ``changed`` when either changes."""

    changed = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.cb_color = registry_combo(
            OVERLAYS, "Colour the vertices by a per-vertex quantity computed by the kernels (hover an entry "
            "for what it is); the colour bar beside the view names it", display_name,
            lambda cls: cls.help + (" (run APSP first)" if cls.needs_apsp else
                                    " (click a vertex)" if cls.needs_source else ""))
        self.ck_density = QCheckBox("density overlay")
        self.ck_density.setToolTip("Draw the density of vertex positions (ln(1 + vertices per bin), 256 × 256 "
                                   "bins) under the graph; the status bar then also gives the bin's count")
        form.addRow("colour by", self.cb_color)
        form.addRow("", self.ck_density)
        self.cb_color.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.ck_density.toggled.connect(lambda _on: self.changed.emit())
        self.set_apsp_available(False)

    def name(self) -> str:
        """The chosen overlay's registry key."""
        return self.cb_color.currentData()

    def overlay(self):
        """The chosen overlay's class."""
        return OVERLAYS[self.name()]

    def set_name(self, name: str) -> bool:
        """Choose an overlay by registry key or display text; False when it is neither."""
        i = self.cb_color.findData(name)
        if i < 0:
            i = self.cb_color.findText(name)
        if i < 0:
            return False
        self.cb_color.setCurrentIndex(i)
        return True

    def density(self) -> bool:
        return self.ck_density.isChecked()

    def set_apsp_available(self, on: bool) -> None:
        """Enable the overlays that need an all-pairs result only when one exists."""
        for i in range(self.cb_color.count()):
            if OVERLAYS[self.cb_color.itemData(i)].needs_apsp:
                self.cb_color.model().item(i).setEnabled(bool(on))
