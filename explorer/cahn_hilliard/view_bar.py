"""The bar above the Cahn–Hilliard field: colormap, contrast, the slab overlay (multi-GPU), the 3D
slice / isosurface controls and *Reset view*.

A part that owns its widgets and state (no host attributes): it drives the
:class:`~explorer.cahn_hilliard.canvas.FieldCanvas` it is given (slice, isosurface, slab overlay,
camera) and tells the workspace about the choices that concern more than the canvas (the colormap
also colours the colour bar, the contrast also sets its range) through ``colormap_chosen`` and
``contrast_chosen``.  ``sync(decomposition)`` follows a new grid or a new GPU split.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from .. import undo
from .canvas import COLORMAPS, ISO_MAX_SIDE, SLICE_AXES

SLABS_KEY = "Ctrl+G"


class ViewBar(QWidget):
    """Colormap, contrast, slabs, slice and isosurface controls of one :class:`FieldCanvas`.
    The colormap, contrast, isosurface and slab choices are undoable (``explorer.undo``)."""

    colormap_chosen = pyqtSignal(str)
    contrast_chosen = pyqtSignal(bool)      # True: each frame's min–max

    def __init__(self, canvas, offered_gpus: int = 1, parent=None):
        super().__init__(parent)
        self.canvas = canvas
        self.offered_gpus = int(offered_gpus)
        self.gpus = 1                       # GPUs of the shown decomposition
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.cmap_combo = QComboBox()
        self.cmap_combo.addItems(COLORMAPS)
        self.cmap_combo.setToolTip("Colormap of φ")
        self.cmap_combo.currentTextChanged.connect(self.colormap_chosen)
        self.contrast_combo = QComboBox()
        self.contrast_combo.addItem("fixed [−1, 1]", False)
        self.contrast_combo.addItem("auto (min–max)", True)
        self.contrast_combo.setToolTip("Contrast limits: the equilibrium range φ ∈ [−1, 1], or each frame's min–max")
        self.contrast_combo.currentIndexChanged.connect(
            lambda i: self.contrast_chosen.emit(bool(self.contrast_combo.itemData(i))))
        row.addWidget(QLabel("Colormap"))
        row.addWidget(self.cmap_combo)
        self.contrast_label = QLabel("Contrast")
        row.addWidget(self.contrast_label)
        row.addWidget(self.contrast_combo)
        self.slabs_check = QCheckBox("Show slabs")
        self.slabs_check.setToolTip("Draw the boundaries between the GPUs' slabs as dashed lines over "
                                    f"the 2D field ({SLABS_KEY}; Workspace menu)")
        self.slabs_check.toggled.connect(self.canvas.set_show_slabs)
        self.slabs_check.setVisible(self.offered_gpus > 1)
        row.addWidget(self.slabs_check)

        self.view3d_bar = QWidget()
        h = QHBoxLayout(self.view3d_bar)
        h.setContentsMargins(12, 0, 0, 0)
        self.slice_axis = QComboBox()
        self.slice_axis.addItems(list(SLICE_AXES))
        self.slice_axis.setToolTip("Axis normal to the slice plane (φ[z, y, x])")
        self.slice_slider = QSlider(Qt.Orientation.Horizontal)
        self.slice_slider.setMinimumWidth(160)
        self.slice_slider.setToolTip("Slice position (cell index)")
        self.slice_pos = QLabel("0")
        self.slice_pos.setMinimumWidth(32)
        self.iso_check = QCheckBox("Isosurface φ = 0")
        self.iso_check.setChecked(False)
        self.iso_tip = (f"Show the marching-cubes surface φ = 0 instead of the volume rendering "
                        f"(grids up to {ISO_MAX_SIDE}³)")
        self.iso_check.setToolTip(self.iso_tip)
        self.slice_axis.currentTextChanged.connect(lambda a: self.canvas.set_slice(axis=a))
        self.slice_slider.valueChanged.connect(self._on_slice)
        self.iso_check.toggled.connect(self.canvas.set_isosurface)
        for w in (QLabel("Slice"), self.slice_axis, self.slice_slider, self.slice_pos, self.iso_check):
            h.addWidget(w)
        row.addWidget(self.view3d_bar)
        row.addStretch(1)
        self.reset_view_btn = QPushButton("Reset view")
        self.reset_view_btn.setToolTip("Fit the field in the view (it refits by itself after a resize "
                                       "until you zoom or pan)")
        self.reset_view_btn.clicked.connect(lambda: self.canvas.reset_camera())
        row.addWidget(self.reset_view_btn)
        for w, key, label in ((self.cmap_combo, "colormap", "colormap"), (self.contrast_combo, "contrast", "contrast"),
                              (self.iso_check, "isosurface", "isosurface"), (self.slabs_check, "slabs", "show slabs")):
            undo.track(w, key, label=label)

    # ----------------------------------------------------------------- choices
    def colormap(self) -> str:
        return self.cmap_combo.currentText()

    def select_colormap(self, name: str) -> None:
        """Choose ``name`` as the user would (``colormap_chosen`` follows; undoable)."""
        self.cmap_combo.setCurrentText(name)

    def auto_contrast(self) -> bool:
        return bool(self.contrast_combo.currentData())

    def set_auto_contrast(self, auto: bool) -> None:
        self.contrast_combo.setCurrentIndex(1 if auto else 0)

    def show_slabs(self) -> bool:
        return self.slabs_check.isChecked()

    def set_show_slabs(self, on: bool) -> None:
        self.slabs_check.setChecked(bool(on))

    def toggle_slabs(self) -> None:
        """Show / hide the slab boundaries (only where the overlay applies)."""
        if self.slabs_check.isEnabled():
            self.slabs_check.toggle()

    def set_lecture(self, on: bool) -> None:
        """Lecture mode: the contrast choice is hidden."""
        for w in (self.contrast_label, self.contrast_combo):
            w.setVisible(not on)

    # ----------------------------------------------------------------- view state
    def state(self) -> dict:
        """The bar's choices by the keys of sessions and presets."""
        c = self.canvas
        return {"colormap": c.cmap_name, "auto_contrast": bool(c.auto_contrast), "slice_axis": c.slice_axis,
                "slice_index": int(c.slice_index), "isosurface": bool(self.iso_check.isChecked()),
                "show_slabs": self.show_slabs()}

    def apply(self, view: dict) -> None:
        """Apply the slice, isosurface and slab keys of a session / preset ``view`` (colormap and
        contrast are the workspace's: they concern the colour bar too)."""
        if view.get("slice_axis") in SLICE_AXES:
            self.slice_axis.setCurrentText(view["slice_axis"])
        if "slice_index" in view and self.canvas.dim == 3:
            self.slice_slider.setValue(int(view["slice_index"]))
        if "isosurface" in view:
            self.iso_check.setChecked(bool(view["isosurface"]) and self.iso_check.isEnabled())
        if "show_slabs" in view:
            self.set_show_slabs(bool(view["show_slabs"]))

    def sync(self, gpus: int | None = None) -> None:
        """Follow the canvas's grid (2D / 3D, its size) and the run's number of GPUs."""
        if gpus is not None:
            self.gpus = int(gpus)
        dim = self.canvas.dim
        ok = dim == 2 and self.gpus > 1
        self.slabs_check.setEnabled(ok)
        if ok:
            tip = (f"Draw the boundaries between the {self.gpus} GPUs' slabs as dashed lines over the "
                   f"field ({SLABS_KEY}; Workspace menu)")
        elif dim == 3:
            tip = "Slab boundaries are drawn over the 2D view only (3D slabs are z planes)"
        else:
            tip = "The field runs on one GPU: choose 2 or more GPUs in the Multi-GPU group"
        self.slabs_check.setToolTip(tip)
        self.view3d_bar.setVisible(dim == 3)
        if dim == 3:
            n = self.canvas.shape[0]
            self.slice_slider.blockSignals(True)
            self.slice_slider.setRange(0, n - 1)
            self.slice_slider.setValue(self.canvas.slice_index)
            self.slice_slider.blockSignals(False)
            self.slice_pos.setText(str(self.canvas.slice_index))
            self.iso_check.setEnabled(n <= ISO_MAX_SIDE)
            self.iso_check.setToolTip(self.iso_tip if n <= ISO_MAX_SIDE else
                                      f"Isosurface only for grids up to {ISO_MAX_SIDE}³ (this one is {n}³)")

    def _on_slice(self, v: int) -> None:
        self.slice_pos.setText(str(v))
        self.canvas.set_slice(index=v)
