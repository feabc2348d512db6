"""VisPy view of the Cahn–Hilliard field (the VisPy adapter of this workspace).

``FieldCanvas`` owns one SceneCanvas (``.native`` goes into the Qt layout) and
shows either a 2D field as an ``Image`` or a 3D field as a ``Volume`` with a
movable slice plane (outlined in the 3D view and shown as an image beside it)
and an optional isosurface φ = 0 (scikit-image marching cubes → ``Mesh``).

On the GPU backend every view but the isosurface stays on the device: the 2D image and the
3D slice through a CUDA-registered pixel buffer, the volume by a device-to-array copy into its
CUDA-registered 3D texture (``explorer.gl_interop``); the marching-cubes mesh is built on the
host.  ``upload_mode`` says which path each view uses (the status bar shows it).
"""
from __future__ import annotations

import time

import numpy as np
from skimage.measure import marching_cubes
from skimage.transform import resize
from vispy import scene
from vispy.color import Colormap, get_colormap

from .upload import make_uploader, make_volume_uploader

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
        self.current_clim = self.clim  # the limits drawn now (fixed, or the frame's min–max)
        self.dim = None
        self.shape = None
        self.frame = None            # the last frame, on the compute backend
        self._field_host = None      # its host copy, made on demand
        self.iso_enabled = False     # off: volume rendering; on: the φ = 0 surface
        self.slice_axis = "z"
        self.slice_index = 0
        self._iso_time = 0.0
        self.iso_interval = 0.5      # s between isosurface rebuilds while running
        self.view = self.view3d = self.slice_view = None
        self.image = self.volume = self.slice_image = self.iso_mesh = self.plane = self.box = None
        self.uploader = None             # 2D image, or the 3D slice image
        self.volume_uploader = None
        #: False: host uploads even on the GPU backend (tests compare the two paths)
        self.interop = True
        self.slab_rows: list[int] = []   # first rows of the GPUs' slabs after the first (array axis 0)
        self.show_slabs = False          # overlay: dashed lines at those rows (2D only)
        self.slab_lines = None
        self.camera_touched = False      # the user turned / zoomed the 3D view since it was fitted
        ev = self.canvas.events
        ev.mouse_wheel.connect(self._touched)
        ev.mouse_press.connect(self._touched)
        ev.resize.connect(lambda _e: self._refit_3d())

    def _touched(self, _ev=None) -> None:
        self.camera_touched = True

    def _distance_3d(self) -> float:
        """Camera distance that shows the whole cube in the 3D view: 2.6 n in a view at least as
        wide as tall, farther in a narrow one (the horizontal field of view is the smaller)."""
        n = self.shape[0]
        w, h = (max(1.0, float(v)) for v in self.view3d.size)
        return 2.6 * n * max(1.0, h / w)

    def _refit_3d(self) -> None:
        """After a size change of the view: fit the cube again unless the user moved the camera."""
        if self.view3d is not None and not self.camera_touched:
            self.view3d.camera.distance = self._distance_3d()

    # ------------------------------------------------------------- building
    def _clear(self):
        for v in (self.view, self.view3d, self.slice_view):
            if v is not None:
                v.parent = None
        self.view = self.view3d = self.slice_view = None
        self.image = self.volume = self.slice_image = self.iso_mesh = self.plane = self.box = None
        self.slab_lines = None
        for up in (self.uploader, self.volume_uploader):
            if hasattr(up, "release"):
                try:
                    up.release()
                except Exception:       # the GL objects may be gone with the old scene
                    pass
        self.uploader = self.volume_uploader = None

    def _build_2d(self, ny: int, nx: int):
        self.view = self.grid.add_view(row=0, col=0, border_color=None)
        # float texture, contrast applied in the shader: raw φ can be written
        # straight from CUDA (zero-copy uploader) without a host-side rescale
        self.image = scene.visuals.Image(np.zeros((ny, nx), np.float32), cmap=colormap(self.cmap_name),
                                         clim=self.clim, interpolation="nearest", texture_format="auto",
                                         parent=self.view.scene)
        cam = scene.PanZoomCamera(aspect=1)
        cam.flip = (False, True, False)   # row 0 at the top, like a matrix / napari
        self.view.camera = cam
        cam.set_range(x=(0, nx), y=(0, ny), margin=0.02)
        self.uploader = make_uploader(self.image, self.canvas, self.backend, self.interop)
        # slab boundaries: thin dashed lines, white dashes on dark gaps (visible on every colormap)
        self.slab_lines = scene.visuals.Line(np.zeros((2, 2), np.float32), connect="segments", width=1,
                                             parent=self.view.scene)
        self.slab_lines.set_gl_state("translucent", depth_test=False)
        self.slab_lines.order = 10        # over the image
        self._update_slab_lines()

    def _build_3d(self, n: int):
        self.view3d = self.grid.add_view(row=0, col=0)
        self.slice_view = self.grid.add_view(row=0, col=1)
        self.view3d.stretch = (1.6, 1)
        zeros = np.zeros((n, n, n), np.float32)
        # on the GPU a float texture (contrast in the shader) that CUDA writes raw φ into
        fmt = "auto" if self.backend is not None and self.backend.is_gpu else None
        self.volume = scene.visuals.Volume(zeros, clim=self.clim, method="translucent", texture_format=fmt,
                                           cmap=volume_colormap(self.cmap_name), parent=self.view3d.scene)
        self.volume_uploader = make_volume_uploader(self.volume, self.canvas, self.backend, self.interop)
        # domain outline as line segments (a Box visual writes depth with invisible
        # faces and would hide the isosurface inside it)
        c = np.array([[x, y, z] for x in (0, n) for y in (0, n) for z in (0, n)], np.float32)
        edges = [(i, j) for i in range(8) for j in range(i + 1, 8) if np.sum(c[i] != c[j]) == 1]
        self.box = scene.visuals.Line(c[np.array(edges).ravel()], connect="segments",
                                      color=(0.8, 0.8, 0.8, 0.6), parent=self.view3d.scene)
        self.plane = scene.visuals.Line(np.zeros((5, 3)), color=(1.0, 0.75, 0.1, 1.0), width=2,
                                        parent=self.view3d.scene)
        self.view3d.camera = scene.TurntableCamera(fov=40, elevation=25, azimuth=35,
                                                   center=(n / 2, n / 2, n / 2), distance=2.6 * n)
        self.camera_touched = False
        self.view3d.events.resize.connect(lambda _e: self._refit_3d())   # laid out at the first draw
        self._refit_3d()
        self.slice_image = scene.visuals.Image(np.zeros((n, n), np.float32), cmap=colormap(self.cmap_name),
                                               clim=self.clim, interpolation="nearest", texture_format="auto",
                                               parent=self.slice_view.scene)
        self.uploader = make_uploader(self.slice_image, self.canvas, self.backend, self.interop)
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
            self._build_2d(*shape)
        else:
            self.slice_index = shape[0] // 2
            self._build_3d(shape[0])
        self.canvas.update()

    # -------------------------------------------------------------- drawing
    @property
    def field(self) -> np.ndarray | None:
        """Host copy of the last frame (copied from the GPU only when asked for)."""
        if self._field_host is None and self.frame is not None:
            self._field_host = np.ascontiguousarray(self.backend.to_numpy(self.frame), dtype=np.float32)
        return self._field_host

    @property
    def upload_mode(self) -> str:
        """How frames reach each view: the 2D image's path, or in 3D the volume's, the slice's and
        (when shown) the isosurface's."""
        mode = getattr(self.uploader, "mode", "host")
        if self.dim != 3:
            return mode
        text = f"volume: {getattr(self.volume_uploader, 'mode', 'host')} · slice: {mode}"
        if self.iso_enabled:
            text += " · isosurface: host (marching cubes)"
        return text

    def _limits(self, a):
        if not self.auto_contrast:
            return self.clim
        xp = self.backend.xp if type(a).__module__.startswith("cupy") else np
        lo, hi = float(xp.nanmin(a)), float(xp.nanmax(a))
        if not hi > lo:
            hi = lo + 1e-6
        return lo, hi

    def update_field(self, field, force_iso: bool = False) -> None:
        """Show a new frame.  ``field``: array on the compute backend (2D or 3D)."""
        self.configure(field.shape)
        self.frame = field
        if self.dim == 2:
            a = self.uploader.upload(field, self.backend)  # None: stayed on the GPU
            self._field_host = a
            self.current_clim = self._limits(field if a is None else a)
            self.image.clim = self.current_clim
        else:
            self._field_host = None
            lim = self.current_clim = self._limits(field)
            a = self.volume_uploader.upload(field, self.backend, clim=lim)   # None: stayed on the GPU
            if a is not None:
                self._field_host = a
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
        if self.dim != 3 or self.frame is None:
            return
        n = self.shape[0]
        if self._field_host is not None:
            s = self.slice_data()
        else:                                   # the slice taken on the compute backend
            xp = self.backend.xp
            s = xp.ascontiguousarray(xp.take(self.frame, self.slice_index, axis=SLICE_AXES[self.slice_axis]))
        self.uploader.upload(s, self.backend)
        self.slice_image.clim = self.current_clim
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
        want = self.iso_enabled and self.frame is not None and self.shape[0] <= ISO_MAX_SIDE
        a = self.field if want else None         # the mesh is built on the host: a copy only when shown
        if not want or not (a.min() < 0 < a.max()):
            if self.iso_mesh is not None:
                self.iso_mesh.visible = False
            if self.volume is not None:
                self.volume.visible = True
            return
        verts, faces, _n, _v = marching_cubes(a, level=0.0)
        verts = verts[:, ::-1].astype(np.float32)   # (z, y, x) → scene (x, y, z)
        faces = faces.astype(np.uint32)
        if self.iso_mesh is None:
            self.iso_mesh = scene.visuals.Mesh(verts, faces, color=(0.93, 0.62, 0.25, 1.0),
                                               shading="flat", parent=self.view3d.scene)
            # "smooth" fails to compile its vertex shader on Mesa llvmpipe with VisPy 0.17
        else:
            self.iso_mesh.set_data(vertices=verts, faces=faces, color=(0.93, 0.62, 0.25, 1.0))
        self.iso_mesh.visible = True
        # a translucent volume drawn over an opaque mesh hides it: show one or the other
        self.volume.visible = False

    def set_isosurface(self, on: bool) -> None:
        self.iso_enabled = bool(on)
        if self.dim == 3:
            self._update_iso()
            self.canvas.update()

    # ---------------------------------------------------------- slab overlay
    DASH_PER_SIDE = 24     # dash + gap pairs across the field

    def set_slab_rows(self, rows) -> None:
        """Rows (array axis 0) where a new GPU slab begins, the first slab's 0 left out."""
        self.slab_rows = sorted(int(r) for r in rows if int(r) > 0)
        self._update_slab_lines()

    def set_show_slabs(self, on: bool) -> None:
        self.show_slabs = bool(on)
        self._update_slab_lines()

    def slab_overlay_visible(self) -> bool:
        return bool(self.slab_lines is not None and self.slab_lines.visible)

    def _dashes(self, n: float):
        """[(x0, x1, white?)] dashes along a side of length n, alternating white and dark."""
        step = n / (2 * self.DASH_PER_SIDE)
        return [(i * step, (i + 1) * step, i % 2 == 0) for i in range(2 * self.DASH_PER_SIDE)]

    def _update_slab_lines(self) -> None:
        if self.slab_lines is None:
            return
        n, nx = (self.shape[0], self.shape[-1]) if self.shape else (0, 0)
        rows = [r for r in self.slab_rows if 0 < r < n]
        on = self.show_slabs and self.dim == 2 and bool(rows)
        if on:
            # the image's visual coordinates: x = column, y = row (the camera puts row 0 on top),
            # so the boundary above row r is the horizontal line y = r
            pos, col = [], []
            for r in rows:
                for x0, x1, white in self._dashes(nx):
                    pos += [(x0, r), (x1, r)]
                    c = (1.0, 1.0, 1.0, 0.95) if white else (0.0, 0.0, 0.0, 0.55)
                    col += [c, c]
            self.slab_lines.set_data(pos=np.array(pos, np.float32), color=np.array(col, np.float32))
        self.slab_lines.visible = on
        self.canvas.update()

    def _draw_slabs(self, rgba: np.ndarray, cells_px: int) -> np.ndarray:
        """The slab overlay burnt into an exported image (``cells_px`` pixels per cell)."""
        if not (self.show_slabs and self.dim == 2 and self.slab_rows):
            return rgba
        n = self.shape[0]
        t = max(1, int(round(cells_px / 4)))       # line thickness in pixels
        for r in self.slab_rows:
            if not 0 < r < n:
                continue
            y = r * cells_px - t // 2
            for x0, x1, white in self._dashes(self.shape[-1] * cells_px):
                xs = slice(int(round(x0)), int(round(x1)))
                c = np.array((255, 255, 255) if white else (0, 0, 0), np.float64)
                a = 0.95 if white else 0.55
                band = rgba[y:y + t, xs, :3].astype(np.float64)
                rgba[y:y + t, xs, :3] = (a * c + (1 - a) * band + 0.5).astype(np.uint8)
        return rgba

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
        if self.frame is not None:
            lim = self.current_clim = self._limits(self.frame)
            for v in (self.image, self.slice_image):
                if v is not None:
                    v.clim = lim
            if self.volume is not None:
                self.volume.clim = lim
        self.canvas.update()

    def cell_at(self, pos) -> tuple[tuple[int, ...], float] | None:
        """The cell under canvas position ``pos`` (logical pixels) and its φ: in the 2D view, or in
        the 3D view's slice image (index in φ[z, y, x] order); None elsewhere."""
        if self.frame is None or self.shape is None:
            return None
        view, node = (self.view, self.image) if self.dim == 2 else (self.slice_view, self.slice_image)
        if view is None or node is None:
            return None
        q = view.get_transform("canvas", "visual").map([pos[0], pos[1], 0, 1])
        if not (0 <= q[0] / q[3] < view.width and 0 <= q[1] / q[3] < view.height):
            return None
        p = node.get_transform("canvas", "visual").map([pos[0], pos[1], 0, 1])
        col, row = int(np.floor(p[0] / p[3])), int(np.floor(p[1] / p[3]))
        rows, cols = self.shape if self.dim == 2 else self.shape[:2]
        if not (0 <= row < rows and 0 <= col < cols):
            return None
        if self.dim == 2:
            idx = (row, col)
        else:                                  # the slice plane: its two in-plane axes, then the normal
            idx = [row, col]
            idx.insert(SLICE_AXES[self.slice_axis], self.slice_index)
            idx = tuple(idx)
        src = self._field_host if self._field_host is not None else self.frame   # one element from the GPU
        return idx, float(src[idx])

    def reset_camera(self) -> None:
        if not self.shape:
            return
        n, ny, nx = self.shape[0], self.shape[-2], self.shape[-1]
        for v in (self.view, self.slice_view):
            if v is not None:
                v.camera.set_range(x=(0, nx), y=(0, ny), margin=0.02)
        if self.view3d is not None:
            self.view3d.camera.center = (n / 2, n / 2, n / 2)
            self.camera_touched = False
            self._refit_3d()
        self.canvas.update()

    # ---------------------------------------------------------------- export
    def data_rect(self):
        """(x0, y0, x1, y1) of the 2D image in logical canvas pixels, or None."""
        if self.image is None or self.shape is None:
            return None
        ny, nx = self.shape
        tr = self.image.get_transform("visual", "canvas")
        p = tr.map(np.array([[0, 0], [nx, ny]], float))
        xs, ys = p[:, 0] / p[:, 3], p[:, 1] / p[:, 3]
        return min(xs), min(ys), max(xs), max(ys)

    def field_rgba(self, cells_px: int = 1) -> np.ndarray:
        """The 2D field through the current colormap and contrast limits, ``cells_px``
        pixels per cell (pixel-exact: what the view shows with nearest interpolation),
        with the slab boundaries when that overlay is shown."""
        a = self.field
        lo, hi = self._limits(a)
        x = np.clip((a.astype(np.float64) - lo) / (hi - lo), 0.0, 1.0)
        rgba = np.asarray(colormap(self.cmap_name).map(x.ravel()), dtype=np.float64)
        rgba = (np.clip(rgba, 0, 1) * 255 + 0.5).astype(np.uint8).reshape(a.shape + (4,))
        if cells_px > 1:
            rgba = np.repeat(np.repeat(rgba, cells_px, axis=0), cells_px, axis=1)
        return self._draw_slabs(np.ascontiguousarray(rgba), cells_px)

    def render(self, scale: float = 1.0, crop_to_data: bool = False) -> np.ndarray:
        """RGBA uint8 image for export.

        2D with ``crop_to_data``: the field itself at about ``scale`` × its on-screen
        size (integer pixels per cell, exact colours).  Otherwise the whole canvas
        is rendered off-screen at screen resolution and, for ``scale`` > 1,
        resampled (VisPy 0.17's ``render(size=…)`` does not scale ViewBox
        viewports, so a true high-resolution redraw of the 3D scene is not
        available yet).
        """
        if crop_to_data and self.dim == 2 and self.field is not None:
            r = self.data_rect()
            n = self.shape[-1]                 # cells across
            on_screen = (r[2] - r[0]) if r is not None else n
            k = max(1, int(round(on_screen * scale / n)))
            return self.field_rgba(k)
        img = self.canvas.render()
        if scale != 1.0:
            h, w = img.shape[:2]
            img = resize(img, (int(round(h * scale)), int(round(w * scale))), order=1,
                         preserve_range=True, anti_aliasing=scale < 1).astype(np.uint8)
        return np.ascontiguousarray(img)
