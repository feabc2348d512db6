"""VisPy view of a graph: edges as line segments, nodes as markers, a highlighted path; node picking.

Above ``AGGREGATE_N`` vertices the view switches to an aggregate: a 2D density image of the
vertex positions (no edges), so a 1e5-vertex graph draws instantly.
"""
from __future__ import annotations

import numpy as np
from vispy import scene
from vispy.color import get_colormap

AGGREGATE_N = 5000


class GraphCanvas:
    def __init__(self, parent=None):
        self.canvas = scene.SceneCanvas(keys=None, show=False, bgcolor="white", parent=parent)
        self.native = self.canvas.native
        self.view = self.canvas.central_widget.add_view()
        self.view.camera = scene.PanZoomCamera(aspect=1)
        self.edges = scene.visuals.Line(parent=self.view.scene, connect="segments", color=(0.4, 0.4, 0.45, 0.35))
        self.path = scene.visuals.Line(parent=self.view.scene, connect="strip", color=(0.85, 0.1, 0.1, 1.0), width=4)
        # visuals start with a point / a pixel of data: VisPy computes the camera's range over every
        # visual, shown or not, and an empty Markers has no bounds (a first graph above
        # AGGREGATE_N vertices, drawn as the density only, failed with "'NoneType' object is
        # not subscriptable" and left the camera where it was: a quarter of the ring on screen)
        self.nodes = scene.visuals.Markers(pos=np.zeros((1, 2), np.float32), parent=self.view.scene)
        self.nodes.visible = False
        self.density = scene.visuals.Image(np.zeros((1, 1), np.float32), parent=self.view.scene, cmap="viridis")
        self.density.visible = False
        # draw order (lower first): edges, then the highlighted path, then the nodes on top
        self.edges.order = -2
        self.path.order = -1
        self.nodes.order = 0
        self.pos = np.zeros((0, 2), np.float32)
        self.mode = "empty"
        self.color_range = None      # (lo, hi) of the values the nodes are coloured by, or None
        self.density_counts = None   # aggregate view: vertices per bin (256 × 256, [y, x])
        self._density_edges = None
        self.lecture = False
        self.on_pick = None
        self.canvas.events.mouse_press.connect(self._on_press)

    def set_graph(self, pos: np.ndarray, edges: np.ndarray, colors: np.ndarray | None = None):
        self.pos = np.asarray(pos, dtype=np.float32)
        n = len(self.pos)
        self.set_path([])
        if n > AGGREGATE_N:
            self.mode = "aggregate"
            self.edges.visible = self.nodes.visible = False
            H, xe, ye = np.histogram2d(self.pos[:, 0], self.pos[:, 1], bins=256)
            self.density_counts, self._density_edges = H.T, (xe, ye)
            img = np.log1p(H.T).astype(np.float32)
            self.density.set_data(img)
            self.density.clim = (0, max(1e-6, float(img.max())))
            from vispy.visuals.transforms import STTransform
            self.density.transform = STTransform(scale=((xe[-1] - xe[0]) / 256, (ye[-1] - ye[0]) / 256),
                                                 translate=(xe[0], ye[0]))
            self.density.visible = True
        else:
            self.mode = "graph"
            self.density.visible = False
            self.edges.visible = self.nodes.visible = True
            seg = self.pos[np.asarray(edges, dtype=np.int64).ravel()] if len(edges) else np.zeros((0, 2), np.float32)
            self.edges.set_data(pos=seg if len(seg) else np.concatenate([self.pos[:1], self.pos[:1]]))
            self.set_colors(colors)
        if n:
            lo, hi = self.pos.min(0), self.pos.max(0)
            pad = 0.05 * float(max(hi - lo)) + 1e-6
            self.view.camera.set_range(x=(lo[0] - pad, hi[0] + pad), y=(lo[1] - pad, hi[1] + pad), z=(-1, 1),
                                       margin=0)
        self.canvas.update()

    def set_lecture(self, on: bool) -> None:
        """Lecture mode: black background, brighter edges, larger nodes and a thicker path."""
        self.lecture = bool(on)
        self.canvas.bgcolor = "black" if on else "white"
        self.edges.set_data(color=(0.85, 0.85, 0.9, 0.55) if on else (0.4, 0.4, 0.45, 0.35), width=2 if on else 1)
        self.path.set_data(color=(1.0, 0.35, 0.35, 1.0) if on else (0.85, 0.1, 0.1, 1.0), width=8 if on else 4)
        self.canvas.update()

    def set_colors(self, values: np.ndarray | None, cmap: str = "viridis", selected=()):
        if self.mode != "graph":
            return
        n = len(self.pos)
        if values is None:
            face = np.tile(np.array([[0.2, 0.4, 0.7, 1.0]], np.float32), (n, 1))
            self.color_range = None
        else:
            v = np.asarray(values, dtype=np.float64)
            fin = np.isfinite(v)
            lo, hi = (v[fin].min(), v[fin].max()) if fin.any() else (0.0, 1.0)
            self.color_range = (float(lo), float(hi))
            t = np.where(fin, (v - lo) / (hi - lo if hi > lo else 1.0), 0.0)
            face = get_colormap(cmap).map(t.astype(np.float32)).astype(np.float32)
            face[~fin] = (0.75, 0.75, 0.75, 1.0)
        big = 1.6 if self.lecture else 1.0
        size = np.full(n, (9.0 if n <= 500 else 5.0) * big, np.float32)
        edge = np.tile(np.array([[0.9, 0.9, 0.9, 0.8] if self.lecture else [0.1, 0.1, 0.1, 0.6]], np.float32), (n, 1))
        for i in selected:
            size[i] = 16.0 * big
            edge[i] = (0.85, 0.1, 0.1, 1.0)
        self.nodes.set_data(self.pos, face_color=face, edge_color=edge, size=size, edge_width=1.0)
        self.canvas.update()

    def set_path(self, nodes: list[int]):
        if len(nodes) >= 2:
            self.path.set_data(pos=self.pos[np.asarray(nodes)])
            self.path.visible = True
        else:                      # an empty Line breaks VisPy's bounds: keep two points, hidden
            p0 = self.pos[:1] if len(self.pos) else np.zeros((1, 2), np.float32)
            self.path.set_data(pos=np.concatenate([p0, p0]))
            self.path.visible = False
        self.canvas.update()

    # -------------------------------------------------------------- picking
    def screen_of(self, i: int) -> tuple[float, float]:
        """Canvas pixel position of vertex i (for tests and tooltips)."""
        tr = self.view.scene.node_transform(self.canvas.scene)
        x, y = tr.map(np.array([[*self.pos[i], 0, 1]], np.float32))[0][:2]
        return float(x), float(y)

    def pick(self, xy, radius_px: float = 12.0) -> int | None:
        if self.mode != "graph" or not len(self.pos):
            return None
        tr = self.canvas.scene.node_transform(self.view.scene)
        p = tr.map(np.array([[xy[0], xy[1], 0, 1]], np.float32))[0]
        p = p[:2] / (p[3] if p.size > 3 and p[3] else 1.0)
        d = np.linalg.norm(self.pos - p, axis=1)
        i = int(np.argmin(d))
        sx, sy = self.screen_of(i)
        return i if np.hypot(sx - xy[0], sy - xy[1]) <= radius_px else None

    def density_at(self, xy) -> tuple[float, float, int] | None:
        """Aggregate view: (x, y, vertices in the bin) under canvas position ``xy``, or None."""
        if self.mode != "aggregate" or self.density_counts is None:
            return None
        tr = self.canvas.scene.node_transform(self.view.scene)
        p = tr.map(np.array([[xy[0], xy[1], 0, 1]], np.float32))[0]
        x, y = p[0] / (p[3] or 1.0), p[1] / (p[3] or 1.0)
        xe, ye = self._density_edges
        i, j = np.searchsorted(ye, y) - 1, np.searchsorted(xe, x) - 1
        if not (0 <= i < self.density_counts.shape[0] and 0 <= j < self.density_counts.shape[1]):
            return None
        return float(x), float(y), int(self.density_counts[i, j])

    def _on_press(self, ev):
        if ev.button != 1 or self.on_pick is None:
            return
        i = self.pick(ev.pos)
        if i is not None:
            self.on_pick(i)

    def render(self) -> np.ndarray:
        return self.canvas.render()
