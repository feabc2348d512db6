"""Everything that draws a graph, for the GUI canvas and the headless renderer alike (VisPy, no Qt).

:class:`GraphScene` puts into a ``vispy.scene.SceneCanvas`` (a Qt one, or an offscreen/EGL one):

* **every edge** as a GL line from one index buffer into **one shared position buffer**, and
  **every vertex** as a round GL point from the same buffer, coloured in the shader from a
  per-vertex value buffer through a colormap texture and the colour limits (NaN / ±inf grey) —
  see :mod:`explorer.graphs.visuals` for the buffers and their sizes;
* the highlighted path (a thick line strip), the selected vertices (bigger, red outline) and,
  as an optional overlay, the density of vertex positions (256² bins, ``ln(1 + vertices per bin)``).

**Uploads.**  With CuPy arrays and the CUDA–GL interop runtime, :meth:`set_graph`,
:meth:`set_positions` and :meth:`set_values` copy the arrays device-to-device into the registered GL
buffers (no host round trip); otherwise from host memory.  :attr:`upload_path` says which.

**Edge alpha (density rule).**  With k edges drawn, a mean edge length of L pixels on screen
(mean data length of up to 100 000 sampled edges × the camera's pixels per data unit) and a
canvas of A pixels, the edges' ink is k·L pixels; the edge alpha is
``clip(EDGE_INK · A / (k · L), ALPHA_MIN, alpha_max)`` with EDGE_INK = 2: a sparse graph keeps
opaque-ish edges, a dense one fades so that overlaps build up a density instead of a solid blot.

**Level of detail.**  Above :attr:`GraphScene.lod_edges` edges (the frame budget in edges), a
camera change draws the first ``lod_edges`` edges of the index buffer — a fixed random subset
(the buffer holds the edges in a seeded random order) — and a timer :attr:`settle_s` after the
last change draws all of them again.  :meth:`shown_text` says which.

**Picking** uses :class:`kernels.graphs.data.spatial.SpatialIndex` (a uniform grid) over a host copy of
the positions, made when first needed after each position change.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional: it is imported only for device-resident positions.
import numpy as np
from vispy import scene
from vispy.scene.visuals import create_visual_node
from vispy.visuals.transforms import STTransform

from .visuals import (NO_VALUE, DeviceBufferWriter, EdgesVisual, NodesVisual, PrefixIndexBuffer, allocate,
                      colormap_lut)
from vispy import gloo, app
from vispy.gloo import gl
from kernels import cuda_gl
from kernels.graphs.data.spatial import SpatialIndex

Edges = create_visual_node(EdgesVisual)
Nodes = create_visual_node(NodesVisual)

EDGE_INK = 2.0           # screen areas of edge ink at which the edge alpha reaches 1
ALPHA_MIN = 0.03         # 8 bits of alpha: 7/255, the faintest edge still drawn
LENGTH_SAMPLE = 100_000  # edges sampled for the mean edge length
DENSITY_BINS = 256
LOD_SEED = 20261127      # the fixed edge order (any seed; fixed so the subset is stable)


def point_diameter(width: int, height: int, n: int, lecture: bool = False) -> float:
    """Vertex diameter in pixels on a width × height canvas: clip(0.5 √(width·height / n), 2, 9),
    × 1.6 in lecture mode (a few vertices get big dots, a million stay apart)."""
    s = float(np.clip(0.5 * np.sqrt(width * height / max(n, 1)), 2.0, 9.0))
    return s * (1.6 if lecture else 1.0)


def edge_alpha(drawn: int, mean_length_px: float, width: int, height: int, lecture: bool = False) -> float:
    """The density rule of the module docstring: clip(EDGE_INK · area / (drawn · L), ALPHA_MIN, max)."""
    ink = drawn * mean_length_px
    a_max = 0.85 if lecture else 0.6
    return float(np.clip(EDGE_INK * width * height / ink, ALPHA_MIN, a_max)) if ink > 0 else a_max


def fit_rect(bounds_xy) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1): the positions' bounds ((x0, x1), (y0, y1)) with a 5 % margin (what the
    camera shows after :meth:`GraphScene.fit`, centred at aspect 1)."""
    (x0, x1), (y0, y1) = bounds_xy
    pad = 0.05 * max(x1 - x0, y1 - y0) + 1e-6
    return x0 - pad, x1 + pad, y0 - pad, y1 + pad


NAN_RGBA = (0.75, 0.75, 0.75, 1.0)    # vertices without a value
PLAIN_RGBA = (0.2, 0.4, 0.7, 1.0)     # vertices when no values are set


def value_colors(values, lo: float, hi: float, cmap: str) -> np.ndarray:
    """(k, 4) RGBA of host ``values`` as the vertex shader colours them: the colormap's entry of
    (v − lo) / (hi − lo) clipped to [0, 1], :data:`NAN_RGBA` for NaN / ±inf, :data:`PLAIN_RGBA`
    when ``values`` is None (then ``lo`` is the count)."""
    if values is None:
        return np.tile(np.asarray(PLAIN_RGBA, np.float32), (int(lo), 1))
    v = np.asarray(values, np.float64).reshape(-1)
    t = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0, 1)
    out = colormap_lut(cmap)[np.round(np.nan_to_num(t) * 255).astype(int)]
    out[~np.isfinite(v)] = NAN_RGBA
    return out


def edge_rgb(lecture: bool) -> tuple[float, float, float]:
    return (0.85, 0.85, 0.9) if lecture else (0.25, 0.25, 0.3)


def is_device_array(a) -> bool:
    """True for a CuPy array (anything with ``__cuda_array_interface__``)."""
    return hasattr(a, "__cuda_array_interface__")


def to_host(a) -> np.ndarray:
    return a.get() if is_device_array(a) else np.asarray(a)


def count_text(k: int) -> str:
    """A count for the status bar: 950, 12 000, 1.2 M, 10 M."""
    if k >= 1_000_000:
        return f"{k / 1e6:.2g} M" if k < 10_000_000 else f"{k / 1e6:.3g} M"
    return f"{k:,}".replace(",", " ")


def _xp(a):
    if is_device_array(a):
        import cupy
        return cupy
    return np


class GraphScene:
    """The graph drawing inside ``scene_canvas`` (see the module docstring for the rules)."""

    #: edges drawn while the camera moves (the frame budget, in edges) on a GPU; all when it stops
    LOD_EDGES = 2_000_000
    #: the same on software OpenGL (Mesa llvmpipe draws about 5 M lines a second)
    LOD_EDGES_SOFTWARE = 200_000
    #: seconds after the last camera change before all edges are drawn again
    settle_s = 0.2

    def __init__(self, scene_canvas, interop: bool = True, view=None):
        self.canvas = scene_canvas
        self.view = view if view is not None else scene_canvas.central_widget.add_view()
        self.view.camera = scene.PanZoomCamera(aspect=1)
        self.interop = bool(interop)
        self._writer = DeviceBufferWriter()
        self._interop_failed = False
        self._pos_buf = gloo.VertexBuffer(np.zeros((1, 2), np.float32))
        self._val_buf = gloo.VertexBuffer(np.zeros(1, np.float32))
        self._idx_buf = PrefixIndexBuffer(np.zeros(2, np.uint32))
        self.edges = Edges(self._pos_buf, self._idx_buf, parent=self.view.scene)
        self.nodes = Nodes(self._pos_buf, self._val_buf, PLAIN_RGBA, NAN_RGBA, parent=self.view.scene)
        self.edges.before_draw = self._before_draw
        self.nodes.before_draw = self._before_draw
        self.path = scene.visuals.Line(pos=np.zeros((2, 2), np.float32), connect="strip",
                                       color=(0.85, 0.1, 0.1, 1.0), width=4, parent=self.view.scene)
        self.selected_markers = scene.visuals.Markers(pos=np.zeros((1, 2), np.float32), parent=self.view.scene)
        self.density = scene.visuals.Image(np.zeros((1, 1), np.float32), cmap="viridis", parent=self.view.scene)
        # the highlighted path above the vertices (on a dense graph it is otherwise hidden under them)
        for vis, order in ((self.density, -3), (self.edges, -2), (self.nodes, -1), (self.path, 0),
                           (self.selected_markers, 1)):
            vis.order = order
        self.edges.visible = self.nodes.visible = False
        self.path.visible = self.selected_markers.visible = self.density.visible = False
        self.n = self.m = 0
        self.mode = "empty"
        self.lecture = False
        self.upload_path = "host"
        self.color_range: tuple[float, float] | None = None
        self.label: str | None = None
        self.cmap = "viridis"
        self.selected: list[int] = []
        self.path_vertices: list[int] = []
        self.density_counts = None      # (256, 256) vertices per bin [y, x] while the overlay is on
        self._density_edges = None
        self.density_on = False
        self.moving = False
        self._timer = None
        self._lod_edges = None          # set explicitly, or None: by the GL renderer
        self.gl_renderer = None         # GL_RENDERER, read at the first draw
        self._pos = None                # the positions as given (numpy or cupy, not copied)
        self._pos_host = None           # host copy, made when needed
        self._values = None             # float32 values as given (numpy or cupy), NaN = none
        self._values_host = None
        self._index = None              # SpatialIndex over _pos_host
        self._index_stale = True
        self._mean_len = None           # mean edge length in data units (None: to be measured)
        self._edges_sample = None       # (≤ LENGTH_SAMPLE, 2) edge indices on the positions' backend
        self.on_camera_change = None    # callable(): the camera moved or the edges shown changed
        self.view.camera.transform.changed.connect(self._on_camera)
        self._quiet = False

    # ------------------------------------------------------------------ data
    def set_graph(self, pos, edges) -> None:
        """Show a graph: ``pos`` (n, 2) float positions and ``edges`` (m, 2) vertex pairs, numpy or
        CuPy.  Uploads both once, clears values, selection and path, fits the camera."""
        pos = _xp(pos).ascontiguousarray(pos, dtype=np.float32).reshape(-1, 2)
        n = int(pos.shape[0])
        m = int(len(edges)) if edges is not None else 0
        self.n, self.m = n, m
        self.mode = "graph" if n else "empty"
        self.selected, self.path_vertices = [], []
        self.selected_markers.visible = self.path.visible = False
        self._set_pos_buffer(pos, resize=True)
        self._set_edges(edges, pos)
        self.clear_values()
        if self.density_on:
            self._update_density()
        self.edges.visible = m > 0
        self.nodes.visible = n > 0
        self.fit()
        self.canvas.update()

    def set_positions(self, pos) -> None:
        """New positions for the same vertices (a streaming layout): one buffer write, numpy or
        CuPy (device-to-device by interop)."""
        pos = _xp(pos).ascontiguousarray(pos, dtype=np.float32).reshape(-1, 2)
        if pos.shape[0] != self.n:
            raise ValueError(f"set_positions: {pos.shape[0]} positions for {self.n} vertices")
        self._set_pos_buffer(pos, resize=False)
        if self.density_on:
            self._update_density()
        if len(self.path_vertices) >= 2:
            self.set_path(self.path_vertices)
        if self.selected:
            self.set_selected(self.selected)
        self.canvas.update()

    def _device_path(self, a) -> bool:
        if not (self.interop and is_device_array(a)) or self._interop_failed:
            return False
        ok, why = cuda_gl.interop_available()
        if not ok:
            self.upload_path = f"host (no CUDA–GL interop: {why})"
        return ok

    def _upload(self, buffer, a, dtype, width, resize: bool) -> None:
        """Write array ``a`` into ``buffer``: queued for the device writer, or from the host."""
        if self._device_path(a):
            if resize or buffer.nbytes != a.nbytes:
                self._writer.drop(buffer)
                allocate(buffer, a.nbytes, dtype, width)
            self._writer.queue(buffer, a)
            self.upload_path = "CUDA–GL interop"
        else:
            if not self.upload_path.startswith("host"):
                self.upload_path = "host"
            self._writer.drop(buffer)
            buffer.set_data(to_host(a))

    def _set_pos_buffer(self, pos, resize: bool) -> None:
        self._pos = pos
        self._pos_host = None
        self._index_stale = True
        self._mean_len = None
        self._upload(self._pos_buf, pos if self.n else np.zeros((1, 2), np.float32), np.float32, 2, resize)
        if self.n:
            lo, hi = pos.min(axis=0), pos.max(axis=0)
            lo, hi = to_host(lo), to_host(hi)
            self.edges.bounds_xy = self.nodes.bounds_xy = ((float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1])))

    def _set_edges(self, edges, pos) -> None:
        """The index buffer: the edges in a fixed random order (so a prefix is a random subset)."""
        m = self.m
        if not m:
            self._writer.drop(self._idx_buf)
            self._idx_buf.set_data(np.zeros(2, np.uint32))
            self._idx_buf.draw_count = 0
            self._edges_sample = None
            return
        perm = np.random.default_rng(LOD_SEED).permutation(m)
        xp = _xp(edges)
        e = xp.asarray(edges)
        if xp is not np:
            perm = xp.asarray(perm)
        ordered = xp.ascontiguousarray(e[perm].astype(xp.uint32, copy=False)).reshape(-1)
        self._upload(self._idx_buf, ordered, np.uint32, 1, resize=True)
        self._idx_buf.draw_count = None
        k = min(m, LENGTH_SAMPLE)
        sample = ordered[: 2 * k].reshape(k, 2)           # the order is random: a random sample
        self._edges_sample = sample if is_device_array(pos) == is_device_array(sample) else (
            _xp(pos).asarray(to_host(sample)))

    def set_values(self, values, *, label, cmap: str = "viridis", clim=None) -> None:
        """Colour the vertices by ``values`` (n,) (numpy or CuPy; NaN / ±inf grey) through
        ``cmap`` between ``clim`` (default: the finite values' min and max)."""
        xp = _xp(values)
        v = xp.asarray(values, dtype=xp.float32).reshape(-1)
        if v.shape[0] != self.n:
            raise ValueError(f"set_values: {v.shape[0]} values for {self.n} vertices")
        fin = xp.isfinite(v)
        if clim is None:
            if bool(fin.any()):
                lo, hi = float(xp.min(v[fin])), float(xp.max(v[fin]))
            else:
                lo, hi = 0.0, 1.0
        else:
            lo, hi = float(clim[0]), float(clim[1])
        self.color_range = (lo, hi)
        self.label = label
        self.cmap = cmap
        self._values = v
        self._values_host = None
        self._upload(self._val_buf, xp.where(fin, v, NO_VALUE).astype(xp.float32), np.float32, 1,
                     resize=False)
        prog = self.nodes.shared_program
        self.nodes.set_cmap(cmap)
        prog["u_has_values"] = 1.0
        prog["u_clim"] = (lo, hi if hi > lo else lo + 1.0)
        if self.selected:
            self.set_selected(self.selected)
        self.canvas.update()

    def clear_values(self) -> None:
        """One plain colour for every vertex; no colour range."""
        self._values = self._values_host = None
        self.color_range = self.label = None
        self._writer.drop(self._val_buf)
        allocate(self._val_buf, 4 * max(self.n, 1), np.float32)   # sized like the positions, unused
        self.nodes.shared_program["u_has_values"] = 0.0
        if self.selected:
            self.set_selected(self.selected)
        self.canvas.update()

    def values_host(self) -> np.ndarray | None:
        if self._values_host is None and self._values is not None:
            self._values_host = to_host(self._values)
        return self._values_host

    def positions_host(self) -> np.ndarray:
        if self._pos_host is None:
            self._pos_host = to_host(self._pos) if self.n else np.zeros((0, 2), np.float32)
        return self._pos_host

    def positions_of(self, idx) -> np.ndarray:
        """Host (k, 2) positions of vertices ``idx``, gathered on the positions' backend first (a
        streaming layout on the GPU copies k positions per step, not n)."""
        if self._pos_host is not None or not is_device_array(self._pos):
            return self.positions_host()[np.asarray(idx, dtype=np.int64)]
        return to_host(self._pos[_xp(self._pos).asarray(np.asarray(idx, dtype=np.int64))])

    def vertex_colors(self, idx) -> np.ndarray:
        """(len(idx), 4) RGBA of vertices ``idx`` as the shader colours them."""
        idx = np.asarray(idx, dtype=np.int64)
        if self._values is None:
            return value_colors(None, len(idx), 0, self.cmap)
        return value_colors(self.values_host()[idx], *self.color_range, self.cmap)

    # ------------------------------------------------------------------ overlays
    def set_selected(self, vertices) -> None:
        """Draw ``vertices`` bigger, with a red outline, over the others."""
        self.selected = [int(i) for i in vertices]
        if not self.selected or not self.n:
            self.selected_markers.visible = False
            self.canvas.update()
            return
        idx = np.asarray(self.selected)
        big = 1.6 if self.lecture else 1.0
        self.selected_markers.set_data(self.positions_of(idx), face_color=self.vertex_colors(idx),
                                       edge_color=(0.85, 0.1, 0.1, 1.0), size=16.0 * big, edge_width=2.0)
        self.selected_markers.visible = True
        self.canvas.update()

    def set_path(self, vertices) -> None:
        """The highlighted path: a thick line strip through ``vertices`` (fewer than two: none)."""
        self.path_vertices = [int(i) for i in vertices]
        if len(self.path_vertices) >= 2:
            self.path.set_data(pos=self.positions_of(self.path_vertices))
            self.path.visible = True
        else:
            self.path.visible = False
        self.canvas.update()

    def set_density_overlay(self, on: bool) -> None:
        """Show the density of vertex positions (ln(1 + vertices per bin), 256² bins) under the graph."""
        self.density_on = bool(on)
        if self.density_on:
            self._update_density()
        else:
            self.density.visible = False
            self.density_counts = self._density_edges = None
        self.canvas.update()

    def _update_density(self) -> None:
        p = self.positions_host()
        if not len(p):
            self.density.visible = False
            return
        H, xe, ye = np.histogram2d(p[:, 0], p[:, 1], bins=DENSITY_BINS)
        self.density_counts, self._density_edges = H.T, (xe, ye)
        img = np.log1p(H.T).astype(np.float32)
        self.density.set_data(img)
        self.density.clim = (0, max(1e-6, float(img.max())))
        self.density.transform = STTransform(scale=((xe[-1] - xe[0]) / DENSITY_BINS, (ye[-1] - ye[0]) / DENSITY_BINS),
                                             translate=(xe[0], ye[0]))
        self.density.visible = True

    def density_at(self, canvas_xy) -> tuple[float, float, int] | None:
        """(x, y, vertices in the bin) under canvas position ``canvas_xy`` while the density
        overlay is on, else None."""
        if not self.density_on or self.density_counts is None:
            return None
        x, y = self.data_of(canvas_xy)
        xe, ye = self._density_edges
        i, j = np.searchsorted(ye, y) - 1, np.searchsorted(xe, x) - 1
        if not (0 <= i < self.density_counts.shape[0] and 0 <= j < self.density_counts.shape[1]):
            return None
        return float(x), float(y), int(self.density_counts[i, j])

    def set_lecture(self, on: bool) -> None:
        """Lecture look: black background, brighter edges, bigger points, a thicker path."""
        self.lecture = bool(on)
        self.canvas.bgcolor = "black" if on else "white"
        self.path.set_data(color=(1.0, 0.35, 0.35, 1.0) if on else (0.85, 0.1, 0.1, 1.0), width=8 if on else 4)
        self.nodes.shared_program["u_outline"] = (0.9, 0.9, 0.9, 0.8) if on else (0.1, 0.1, 0.1, 0.6)
        if self.selected:
            self.set_selected(self.selected)
        self.canvas.update()

    # ------------------------------------------------------------------ camera and drawing
    def fit(self) -> None:
        """Camera on every vertex with a 5 % margin."""
        if not self.n:
            return
        x0, x1, y0, y1 = fit_rect(self.nodes.bounds_xy)
        self._quiet = True
        try:
            self.view.camera.set_range(x=(x0, x1), y=(y0, y1), z=(-1, 1), margin=0)
        finally:
            self._quiet = False

    def _on_camera(self, event=None) -> None:
        if self._quiet or self.m <= self.lod_edges:
            if self.on_camera_change is not None:
                self.on_camera_change()
            return
        self.set_moving(True)
        if self._timer is None:
            self._timer = app.Timer(interval=self.settle_s, connect=self.camera_stopped, iterations=1,
                                    start=False, app=self.canvas.app)
        self._timer.stop()
        self._timer.start()
        if self.on_camera_change is not None:
            self.on_camera_change()

    def camera_stopped(self, event=None) -> None:
        """Draw every edge again (the camera has not changed for :attr:`settle_s`)."""
        if self._timer is not None:
            self._timer.stop()
        self.set_moving(False)
        if self.on_camera_change is not None:
            self.on_camera_change()

    @property
    def lod_edges(self) -> int:
        """Edges drawn while the camera moves: :attr:`LOD_EDGES`, or :attr:`LOD_EDGES_SOFTWARE` on a
        software renderer (llvmpipe, softpipe, swrast), unless set."""
        if self._lod_edges is not None:
            return self._lod_edges
        soft = any(w in (self.gl_renderer or "").lower() for w in ("llvmpipe", "softpipe", "swrast", "software"))
        return self.LOD_EDGES_SOFTWARE if soft else self.LOD_EDGES

    @lod_edges.setter
    def lod_edges(self, k: int | None) -> None:
        self._lod_edges = None if k is None else int(k)

    def set_moving(self, on: bool) -> None:
        """Draw the level-of-detail subset (the first :attr:`lod_edges` edges of the index buffer)
        while ``on`` and the graph has more edges than that; all edges otherwise.  Camera changes
        call it; the benchmark and tests may too."""
        self.moving = bool(on) and self.m > self.lod_edges
        self._idx_buf.draw_count = 2 * self.lod_edges if self.moving else (None if self.m else 0)
        self.canvas.update()

    @property
    def edges_drawn(self) -> int:
        """Edges the next frame draws."""
        c = self._idx_buf.draw_count
        return self.m if c is None else min(self.m, c // 2)

    @property
    def position_buffer(self):
        """The gloo vertex buffer of the positions ((n, 2) float32), shared by edges and vertices."""
        return self._pos_buf

    @property
    def value_buffer(self):
        """The gloo vertex buffer of the values ((n,) float32, NaN/inf as NO_VALUE)."""
        return self._val_buf

    @property
    def index_buffer(self):
        """The gloo index buffer of the edges (2 m uint32, in the level-of-detail order)."""
        return self._idx_buf

    @property
    def device_writes(self) -> int:
        """Buffers written from CuPy arrays through CUDA–GL interop so far."""
        return self._writer.writes

    @property
    def edge_indices(self) -> int:
        """Indices held in the edge index buffer (2 per edge)."""
        return int(self._idx_buf.nbytes // 4) if self.m else 0

    def shown_text(self) -> str:
        """What the view shows, for the status bar: "all 10 M edges", "1.2 M of 10 M edges while moving"."""
        if not self.m:
            return f"{count_text(self.n)} vertices, no edges" if self.n else "no graph"
        k = self.edges_drawn
        if k < self.m:
            return f"{count_text(k)} of {count_text(self.m)} edges while moving"
        return f"all {count_text(self.m)} edges"

    def pixels_per_unit(self) -> float:
        tr = self.view.scene.node_transform(self.canvas.scene)
        a = tr.map(np.array([[0, 0, 0, 1], [1, 0, 0, 1]], np.float32))
        a = a[:, :2] / a[:, 3:4]
        return float(np.hypot(*(a[1] - a[0])))

    def mean_edge_length(self) -> float:
        """Mean data-space length of up to :data:`LENGTH_SAMPLE` edges (a random sample)."""
        if self._mean_len is None:
            s = self._edges_sample
            if s is None or not len(s):
                self._mean_len = 0.0
            else:
                xp = _xp(self._pos)
                d = self._pos[s[:, 0]] - self._pos[s[:, 1]]
                self._mean_len = float(xp.sqrt((d * d).sum(axis=1)).mean())
        return self._mean_len

    def point_size(self) -> float:
        """Vertex diameter in physical pixels (:func:`point_diameter`)."""
        w, h = self.canvas.size
        return point_diameter(w, h, self.n, self.lecture) * float(self.canvas.pixel_scale)

    def edge_alpha(self) -> float:
        """The edge alpha of the next frame (:func:`edge_alpha`)."""
        w, h = self.canvas.size
        return edge_alpha(self.edges_drawn, self.mean_edge_length() * self.pixels_per_unit(), w, h, self.lecture)

    def _before_draw(self, visual) -> bool:
        if self.gl_renderer is None:
            self.gl_renderer = str(gl.glGetParameter(gl.GL_RENDERER))
        if self._writer.pending():
            for buffer, array in self._writer.flush(self.canvas):
                buffer.set_data(to_host(array))           # interop failed: from the host, from now on
                self.upload_path = f"host (CUDA–GL interop failed: {self._writer.error})"
                self._interop_failed = True
            self.canvas.context.flush_commands()
        if visual is self.edges:
            visual.shared_program["u_color"] = (*edge_rgb(self.lecture), self.edge_alpha())
        else:
            visual.shared_program["u_size"] = self.point_size()
        return True

    # ------------------------------------------------------------------ picking
    def data_of(self, canvas_xy) -> tuple[float, float]:
        tr = self.canvas.scene.node_transform(self.view.scene)
        p = tr.map(np.array([[canvas_xy[0], canvas_xy[1], 0, 1]], np.float32))[0]
        w = p[3] if p.size > 3 and p[3] else 1.0
        return float(p[0] / w), float(p[1] / w)

    def screen_of(self, i: int) -> tuple[float, float]:
        """Canvas pixel position of vertex ``i``."""
        tr = self.view.scene.node_transform(self.canvas.scene)
        x, y = tr.map(np.array([[*self.positions_of([i])[0], 0, 1]], np.float32))[0][:2]
        return float(x), float(y)

    def spatial_index(self):
        """The :class:`kernels.graphs.data.spatial.SpatialIndex` over the current positions."""
        if self._index is None:
            self._index = SpatialIndex(self.positions_host())
        elif self._index_stale:
            self._index.update(self.positions_host())
        self._index_stale = False
        return self._index

    def pick(self, canvas_xy, radius_px: float = 12.0) -> int | None:
        """The vertex nearest to ``canvas_xy`` within ``radius_px`` pixels, or None."""
        if not self.n:
            return None
        x, y = self.data_of(canvas_xy)
        i = self.spatial_index().nearest(x, y, radius_px / max(self.pixels_per_unit(), 1e-30))
        return None if i is None else int(i)

    def value_at(self, canvas_xy) -> tuple[int, float] | None:
        """(vertex, value) under ``canvas_xy`` (the vertex within 12 px), or None; the value is
        NaN when no values are set or the vertex has none."""
        i = self.pick(canvas_xy)
        if i is None:
            return None
        v = self.values_host()
        return i, (float(v[i]) if v is not None else float("nan"))

    def release(self) -> None:
        """Free the CUDA registrations (before the canvas closes)."""
        if self._timer is not None:
            self._timer.stop()
        self._writer.release()
