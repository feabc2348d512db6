"""The Cahn–Hilliard workspace's view bar above the field: colormap, contrast, the slab overlay
(multi-GPU) and the 3D slice / isosurface controls, kept in step with the canvas.  A mixin of
:class:`explorer.cahn_hilliard.workspace.CahnHilliardWorkspace` (it uses ``canvas``,
``offered_gpus``, ``decomposition`` and the colormap / contrast slots there)."""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from .canvas import COLORMAPS, ISO_MAX_SIDE, SLICE_AXES


class ViewBarMixin:
    def _build_view_bar(self):
        row = QHBoxLayout()
        row.setSpacing(6)
        self.cmap_combo = QComboBox()
        self.cmap_combo.addItems(COLORMAPS)
        self.cmap_combo.setToolTip("Colormap of φ")
        self.cmap_combo.currentTextChanged.connect(self.set_colormap)
        self.contrast_combo = QComboBox()
        self.contrast_combo.addItem("fixed [−1, 1]", False)
        self.contrast_combo.addItem("auto (min–max)", True)
        self.contrast_combo.setToolTip("Contrast limits: the equilibrium range φ ∈ [−1, 1], or each frame's min–max")
        self.contrast_combo.currentIndexChanged.connect(self._on_contrast)
        row.addWidget(QLabel("Colormap"))
        row.addWidget(self.cmap_combo)
        self.contrast_label = QLabel("Contrast")
        row.addWidget(self.contrast_label)
        row.addWidget(self.contrast_combo)
        self.slabs_check = QCheckBox("Show slabs")
        self.slabs_check.setToolTip("Draw the boundaries between the GPUs' slabs as dashed lines over "
                                    f"the 2D field ({self.SLABS_KEY}; Workspace menu)")
        self.slabs_check.toggled.connect(self._on_show_slabs)
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
        self.iso_check.setToolTip(f"Show the marching-cubes surface φ = 0 instead of the volume rendering "
                                  f"(grids up to {ISO_MAX_SIDE}³)")
        self.slice_axis.currentTextChanged.connect(lambda a: self.canvas.set_slice(axis=a))
        self.slice_slider.valueChanged.connect(self._on_slice)
        self.iso_check.toggled.connect(self.canvas.set_isosurface)
        for w in (QLabel("Slice"), self.slice_axis, self.slice_slider, self.slice_pos, self.iso_check):
            h.addWidget(w)
        row.addWidget(self.view3d_bar)
        row.addStretch(1)
        self.reset_view_btn = QPushButton("Reset view")
        self.reset_view_btn.setToolTip("Fit the field in the view")
        self.reset_view_btn.clicked.connect(lambda: self.canvas.reset_camera())
        row.addWidget(self.reset_view_btn)
        return row

    SLABS_KEY = "Ctrl+G"

    def _on_show_slabs(self, on: bool):
        self.canvas.set_show_slabs(on)

    def show_slabs(self) -> bool:
        return self.slabs_check.isChecked()

    def set_show_slabs(self, on: bool):
        self.slabs_check.setChecked(bool(on))

    def toggle_slabs(self):
        """Workspace ▸ Show / hide slab boundaries (only where the overlay applies)."""
        if self.slabs_check.isEnabled():
            self.slabs_check.toggle()

    def extra_actions(self):
        """Workspace menu entries (text, method, shortcut, tip): the slab overlay, where GPUs are offered."""
        if self.offered_gpus < 2:
            return []
        return [("Show / hide &slab boundaries", "toggle_slabs", self.SLABS_KEY,
                 "Dashed lines where the field is split between GPUs (2D view)")]

    def _sync_slabs_check(self):
        d = self.decomposition
        ok = self.canvas.dim == 2 and d["gpus"] > 1
        self.slabs_check.setEnabled(ok)
        if ok:
            tip = (f"Draw the boundaries between the {d['gpus']} GPUs' slabs as dashed lines over the "
                   f"field ({self.SLABS_KEY}; Workspace menu)")
        elif self.canvas.dim == 3:
            tip = "Slab boundaries are drawn over the 2D view only (3D slabs are z planes)"
        else:
            tip = "The field runs on one GPU: choose 2 or more GPUs in the Multi-GPU group"
        self.slabs_check.setToolTip(tip)

    def _on_slice(self, v: int):
        self.slice_pos.setText(str(v))
        self.canvas.set_slice(index=v)

    def _sync_view_bar(self):
        is3d = self.canvas.dim == 3
        self._sync_slabs_check()
        self.view3d_bar.setVisible(is3d)
        if is3d:
            n = self.canvas.shape[0]
            self.slice_slider.blockSignals(True)
            self.slice_slider.setRange(0, n - 1)
            self.slice_slider.setValue(self.canvas.slice_index)
            self.slice_slider.blockSignals(False)
            self.slice_pos.setText(str(self.canvas.slice_index))
            self.iso_check.setEnabled(n <= ISO_MAX_SIDE)
            if n > ISO_MAX_SIDE:
                self.iso_check.setToolTip(f"Isosurface only for grids up to {ISO_MAX_SIDE}³ (this one is {n}³)")
