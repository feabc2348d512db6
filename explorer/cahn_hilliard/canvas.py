"""VisPy view of the Cahn–Hilliard field (the VisPy adapter of this workspace).

``FieldCanvas`` owns one SceneCanvas (``.native`` goes into the Qt layout) and
shows either a 2D field as an ``Image`` or a 3D field as a ``Volume`` with a
movable slice plane (outlined in the 3D view and shown as an image beside it)
and an optional isosurface φ = 0 (scikit-image marching cubes → ``Mesh``).
"""
from __future__ import annotations

import time

import numpy as np
from vispy import scene
from vispy.color import Colormap, get_colormap

from .upload import make_uploader

COLORMAPS = ("viridis", "coolwarm", "RdBu", "grays", "magma", "fire")
SLICE_AXES = {"z": 0, "y": 1, "x": 2}   # data axis of φ[z, y, x]
ISO_MAX_SIDE = 128


def colormap(name: str):
    if name == "magma":  # not shipped with VisPy: a close 9-point approximation
        return Colormap(["#000004", "#1c1044", "#4f127b", "#812581", "#b5367a",
                         "#e55064", "#fb8761", "#fec287", "#fcfdbf"])
    return get_colormap(name)


def volume_colormap(name: str) -> Colormap:
    """The 2D colormap with an opacity ramp: the φ < 0 phase is clear, φ > 0 dense."""
    base = colormap(name)
    x = np.linspace(0, 1, 64)
    rgba = np.array(base.map(x))
    rgba[:, 3] = np.clip((x - 0.45) / 0.55, 0, 1) ** 1.5 * 0.9
    return Colormap(rgba)


class FieldCanvas:
    """CanvasWrapper (VisPy realtime pattern) for 2D images and 3D volumes of φ."""

    def __init__(self, backend, bgcolor="#202124", size=(800, 700)):
        self.backend = backend
        self.canvas = scene.SceneCanvas(keys=None, size=size, bgcolor=bgcolor, show=False)
        self.canvas.unfreeze()
        self.native = self.canvas.native
        self.grid = self.canvas.central_widget.add_grid(spacing=4, margin=4)
        self.cmap_name = "viridis"
        self.auto_contrast = False
        self.clim = (-1.0, 1.0)
        self.dim = None
        self.shape = None
        self.field = None            # host copy of the last frame
        self.iso_enabled = True
        self.slice_axis = "z"
        self.slice_index = 0
        self._iso_time = 0.0
        self.iso_interval = 0.5      # s between isosurface rebuilds while running
        self.view = self.view3d = self.slice_view = None
        self.image = self.volume = self.slice_image = self.iso_mesh = self.plane = self.box = None
        self.uploader = None

    # ------------------------------------------------------------- building
    def _clear(self):
        for v in (self.view, self.view3d, self.slice_view):
            if v is not None:
                v.parent = None
        self.view = self.view3d = self.slice_view = None
        self.image = self.volume = self.slice_image = self.iso_mesh = self.plane = self.box = None
        self.uploader = None

    def _build_2d(self, n: int):
        self.view = self.grid.add_view(row=0, col=0, border_color=None)
        self.image = scene.visuals.Image(np.zeros((n, n), np.float32), cmap=colormap(self.cmap_name),
                                         clim=self.clim, interpolation="nearest", parent=self.view.scene)
        cam = scene.PanZoomCamera(aspect=1)
        cam.flip = (False, True, False)   # row 0 at the top, like a matrix / napari
        self.view.camera = cam
        cam.set_range(x=(0, n), y=(0, n), margin=0.02)
        self.uploader = make_uploader(self.image, self.canvas, self.backend)

    def _build_3d(self, n: int):
        self.view3d = self.grid.add_view(row=0, col=0)
        self.slice_view = self.grid.add_view(row=0, col=1)
        self.view3d.stretch = (1.6, 1)
        zeros = np.zeros((n, n, n), np.float32)
        self.volume = scene.visuals.Volume(zeros, clim=self.clim, method="translucent",
                                           cmap=volume_colormap(self.cmap_name), parent=self.view3d.scene)
        self.box = scene.visuals.Box(n, n, n, color=None, edge_color=(0.8, 0.8, 0.8, 0.6),
                                     parent=self.view3d.scene)
        self.box.transform = scene.STTransform(translate=(n / 2, n / 2, n / 2))
        self.plane = scene.visuals.Line(np.zeros((5, 3)), color=(1.0, 0.75, 0.1, 1.0), width=2,
                                        parent=self.view3d.scene)
        self.view3d.camera = scene.TurntableCamera(fov=40, elevation=25, azimuth=35,
                                                   center=(n / 2, n / 2, n / 2), distance=2.6 * n)
        self.slice_image = scene.visuals.Image(np.zeros((n, n), np.float32), cmap=colormap(self.cmap_name),
                                               clim=self.clim, interpolation="nearest",
                                               parent=self.slice_view.scene)
        cam = scene.PanZoomCamera(aspect=1)
        cam.flip = (False, True, False)
        self.slice_view.camera = cam
        cam.set_range(x=(0, n), y=(0, n), margin=0.02)
        self.slice_index = min(self.slice_index, n - 1) if self.slice_index else n // 2

    def configure(self, shape) -> None:
        """(Re)build the scene for a field of ``shape`` if it changed."""
        shape = tuple(shape)
        if shape == self.shape:
            return
        self._clear()
        self.shape, self.dim = shape, len(shape)
        if self.dim == 2:
            self._build_2d(shape[0])
        else:
            self.slice_index = shape[0] // 2
            self._build_3d(shape[0])
        self.canvas.update()

    # -------------------------------------------------------------- drawing
    def _limits(self, a: np.ndarray):
        if not self.auto_contrast:
            return self.clim
        lo, hi = float(np.nanmin(a)), float(np.nanmax(a))
        if not hi > lo:
            hi = lo + 1e-6
        return lo, hi

    def update_field(self, field, force_iso: bool = False) -> None:
        """Show a new frame.  ``field``: array on the compute backend (2D or 3D)."""
        self.configure(field.shape)
        if self.dim == 2:
            a = self.uploader.upload(field, self.backend)
            self.field = a
            self.image.clim = self._limits(a)
        else:
            a = np.ascontiguousarray(self.backend.to_numpy(field), dtype=np.float32)
            self.field = a
            lim = self._limits(a)
            self.volume.set_data(a, clim=lim)
            self._update_slice()
            now = time.perf_counter()
            if force_iso or now - self._iso_time > self.iso_interval:
                self._update_iso()
                self._iso_time = now
        self.canvas.update()

    def slice_data(self) -> np.ndarray | None:
        if self.field is None or self.dim != 3:
            return None
        return np.take(self.field, self.slice_index, axis=SLICE_AXES[self.slice_axis])

    def _update_slice(self):
        if self.dim != 3 or self.field is None:
            return
        n = self.shape[0]
        s = self.slice_data()
        self.slice_image.set_data(s)
        self.slice_image.clim = self._limits(self.field)
        i = self.slice_index + 0.5
        corners = {"z": [(0, 0, i), (n, 0, i), (n, n, i), (0, n, i)],
                   "y": [(0, i, 0), (n, i, 0), (n, i, n), (0, i, n)],
                   "x": [(i, 0, 0), (i, n, 0), (i, n, n), (i, 0, n)]}[self.slice_axis]
        self.plane.set_data(np.array(corners + corners[:1], np.float32))

    def set_slice(self, axis: str | None = None, index: int | None = None) -> None:
        if axis is not None:
            self.slice_axis = axis
        if index is not None and self.shape:
            self.slice_index = int(np.clip(index, 0, self.shape[0] - 1))
        self._update_slice()
        self.canvas.update()

    def _update_iso(self):
        want = self.iso_enabled and self.field is not None and self.shape[0] <= ISO_MAX_SIDE
        if not want:
            if self.iso_mesh is not None:
                self.iso_mesh.visible = False
            return
        a = self.field
        if not (a.min() < 0 < a.max()):
            if self.iso_mesh is not None:
                self.iso_mesh.visible = False
            return
        from skimage.measure import marching_cubes
        verts, faces, _n, _v = marching_cubes(a, level=0.0)
        verts = verts[:, ::-1].astype(np.float32)   # (z, y, x) → scene (x, y, z)
        if self.iso_mesh is None:
            self.iso_mesh = scene.visuals.Mesh(verts, faces, color=(0.93, 0.62, 0.25, 1.0),
                                               shading="smooth", parent=self.view3d.scene)
        else:
            self.iso_mesh.set_data(vertices=verts, faces=faces, color=(0.93, 0.62, 0.25, 1.0))
        self.iso_mesh.visible = True
        # with the surface shown, the volume becomes a faint context
        self.volume.visible = True

    def set_isosurface(self, on: bool) -> None:
        self.iso_enabled = bool(on)
        if self.dim == 3:
            self._update_iso()
            if self.volume is not None:
                self.volume.visible = True
            self.canvas.update()

    def iso_available(self) -> bool:
        return self.dim == 3 and self.shape[0] <= ISO_MAX_SIDE

    # ------------------------------------------------------------ appearance
    def set_colormap(self, name: str) -> None:
        self.cmap_name = name
        if self.image is not None:
            self.image.cmap = colormap(name)
        if self.slice_image is not None:
            self.slice_image.cmap = colormap(name)
        if self.volume is not None:
            self.volume.cmap = volume_colormap(name)
        self.canvas.update()

    def set_auto_contrast(self, auto: bool) -> None:
        self.auto_contrast = bool(auto)
        if self.field is not None:
            lim = self._limits(self.field)
            for v in (self.image, self.slice_image):
                if v is not None:
                    v.clim = lim
            if self.volume is not None:
                self.volume.clim = lim
        self.canvas.update()

    def reset_camera(self) -> None:
        if not self.shape:
            return
        n = self.shape[0]
        for v in (self.view, self.slice_view):
            if v is not None:
                v.camera.set_range(x=(0, n), y=(0, n), margin=0.02)
        if self.view3d is not None:
            self.view3d.camera.center = (n / 2, n / 2, n / 2)
            self.view3d.camera.distance = 2.6 * n
        self.canvas.update()

    # ---------------------------------------------------------------- export
    def data_rect(self):
        """(x0, y0, x1, y1) of the 2D image in logical canvas pixels, or None."""
        if self.image is None or self.shape is None:
            return None
        n = self.shape[0]
        tr = self.image.get_transform("visual", "canvas")
        p = tr.map(np.array([[0, 0], [n, n]], float))
        xs, ys = p[:, 0] / p[:, 3], p[:, 1] / p[:, 3]
        return min(xs), min(ys), max(xs), max(ys)

    def render(self, scale: float = 1.0, crop_to_data: bool = False) -> np.ndarray:
        """RGBA uint8 image of the canvas rendered off-screen at ``scale`` × its size."""
        w, h = self.canvas.size
        size = (max(1, int(round(w * scale))), max(1, int(round(h * scale))))
        img = self.canvas.render(size=size, alpha=False)
        if crop_to_data and self.dim == 2:
            r = self.data_rect()
            if r is not None:
                sx, sy = img.shape[1] / w, img.shape[0] / h
                x0 = int(np.clip(np.ceil(r[0] * sx), 0, img.shape[1]))
                x1 = int(np.clip(np.floor(r[2] * sx), 0, img.shape[1]))
                y0 = int(np.clip(np.ceil(r[1] * sy), 0, img.shape[0]))
                y1 = int(np.clip(np.floor(r[3] * sy), 0, img.shape[0]))
                if x1 - x0 > 2 and y1 - y0 > 2:
                    img = img[y0:y1, x0:x1]
        return np.ascontiguousarray(img)
