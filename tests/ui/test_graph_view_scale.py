"""Issue 32, the view: every vertex and every edge of a 200 000-vertex graph is drawn (no density
image instead), vertices take the colours of their values, the value under the mouse is right, the
level of detail draws a subset while the camera moves and all edges when it stops, and picking
is exact at 200 000 vertices.  Real OpenGL (Mesa llvmpipe) under Xvfb."""
from __future__ import annotations

import numpy as np
import pytest

N_BIG = 200_000


@pytest.fixture
def graph_canvas(qtbot):
    from PyQt6.QtWidgets import QWidget

    from explorer.app import create_app
    from explorer.graphs.canvas import GraphCanvas
    create_app()
    host = QWidget()
    host.resize(640, 480)
    gc = GraphCanvas(parent=host)
    gc.native.resize(640, 480)
    qtbot.addWidget(host)
    host.show()
    qtbot.waitExposed(gc.native)
    yield gc
    gc.scene.release()


def spatial_graph(rng, n, k=8.0):
    """A random geometric graph (the project's generator, generator positions): short edges over
    the whole square, m ≈ k n / 2."""
    from kernels.graphs.data import generators as G
    g = G.spatial(n, k=k, seed=int(rng.integers(1 << 30)))
    return g.positions, g.edges


def brute_nearest(pos, x, y):
    d = (pos[:, 0].astype(np.float64) - x) ** 2 + (pos[:, 1].astype(np.float64) - y) ** 2
    return int(np.argmin(d)), float(np.sqrt(d.min()))


def test_200k_vertices_draw_every_edge_and_vertex(graph_canvas, qtbot, rng):
    gc = graph_canvas
    pos, edges = spatial_graph(rng, N_BIG)
    gc.set_graph(pos, edges)
    assert gc.mode == "graph" and gc.nodes.visible and gc.edges.visible and not gc.density.visible
    assert gc.scene.edge_indices == 2 * len(edges) and gc.scene.edges_drawn == len(edges)
    assert gc.shown_text().startswith("all ") and "edges" in gc.shown_text()
    assert gc.upload_path == "host"
    (x0, y0), (x1, y1) = gc.screen_of(int(np.argmin(pos.sum(1)))), gc.screen_of(int(np.argmax(pos.sum(1))))
    box = np.s_[int(min(y0, y1)) + 2:int(max(y0, y1)) - 2, int(min(x0, x1)) + 2:int(max(x0, x1)) - 2]

    def covered():
        return (gc.render()[box][..., :3].astype(int) < 245).any(axis=2).mean()
    assert covered() > 0.95
    # the edges alone (vertices hidden) cover most of the graph's square: every edge is drawn
    gc.nodes.visible = False
    assert covered() > 0.6
    gc.nodes.visible = True
    # the GL index buffer holds every edge once (in the level-of-detail order)
    from support.gl_buffers import read_gl_buffer
    idx = read_gl_buffer(gc.canvas, gc.scene.index_buffer, np.uint32).reshape(-1, 2)
    assert len(idx) == len(edges)
    got = np.sort(idx[:, 0].astype(np.int64) * N_BIG + idx[:, 1])
    np.testing.assert_array_equal(got, np.sort(edges[:, 0].astype(np.int64) * N_BIG + edges[:, 1]))
    xy = read_gl_buffer(gc.canvas, gc.scene.position_buffer, np.float32).reshape(-1, 2)
    np.testing.assert_array_equal(xy, pos)
    # the density image is only an overlay
    gc.set_graph(pos, edges)
    gc.set_density_overlay(True)
    assert gc.density.visible and gc.nodes.visible and gc.edges.visible
    qx, qy = gc.screen_of(int(rng.integers(N_BIG)))
    x, y, count = gc.density_at((qx, qy))
    assert count >= 1
    gc.set_density_overlay(False)
    assert gc.density_at((qx, qy)) is None


def test_values_colour_vertices_and_value_under_the_mouse(graph_canvas, qtbot, rng):
    gc = graph_canvas
    n = 2000
    pos = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    gc.set_graph(pos, np.zeros((0, 2), np.int32))
    vals = rng.uniform(-5, 7, n)
    vals[rng.integers(n, size=50)] = np.nan
    gc.set_values(vals, label="hops from vertex 3")
    fin = vals[np.isfinite(vals)]
    assert gc.color_range == pytest.approx((fin.min(), fin.max()), rel=1e-6)
    assert gc.scene.label == "hops from vertex 3"
    # a vertex with no close neighbour: its pixel has the colormap's colour of its value
    from scipy.spatial import cKDTree
    d, _ = cKDTree(pos).query(pos, k=2)
    order = np.argsort(-d[:, 1])
    img = gc.render()
    for i in order[:5]:
        x, y = gc.screen_of(int(i))
        got = img[int(y), int(x), :3].astype(int)
        want = (gc.scene.vertex_colors([i])[0, :3] * 255).round().astype(int)
        assert np.abs(got - want).max() <= 12, (i, vals[i], got, want)
        hit = gc.value_at((x + 1.0, y - 1.0))
        assert hit is not None and hit[0] == i
        assert (np.isnan(hit[1]) and np.isnan(vals[i])) or hit[1] == pytest.approx(vals[i], rel=1e-6)
    gc.clear_values()
    assert gc.color_range is None
    # a new, smaller graph drops the selection and path of the old one
    gc.set_selected([n - 1])
    gc.set_path([0, n - 1])
    gc.set_graph(pos[:10], np.zeros((0, 2), np.int32))
    assert gc.scene.selected == [] and not gc.scene.path.visible
    assert gc.shown_text() == "10 vertices, no edges"


def test_edge_level_of_detail_while_moving(graph_canvas, qtbot, rng):
    gc = graph_canvas
    pos, edges = spatial_graph(rng, 50_000)
    gc.set_graph(pos, edges)
    m = len(edges)
    gc.scene.lod_edges = m // 4
    seen = []
    gc.on_camera_change = lambda: seen.append(gc.shown_text())
    gc.view.camera.zoom(1.2)
    assert gc.scene.moving and gc.scene.edges_drawn == m // 4
    assert "while moving" in gc.shown_text() and seen
    gc.render()
    qtbot.waitUntil(lambda: not gc.scene.moving, timeout=3000)
    assert gc.scene.edges_drawn == m and gc.shown_text().startswith("all")
    assert seen[-1].startswith("all")


def test_pick_is_exact_at_200k_vertices(graph_canvas, rng):
    gc = graph_canvas
    pos, edges = spatial_graph(rng, N_BIG, k=2.0)
    gc.set_graph(pos, edges)
    ppu = gc.scene.pixels_per_unit()
    hits = misses = 0
    to_canvas = gc.scene.view.scene.node_transform(gc.scene.canvas.scene)
    near = []                                # 4 points 3 px from random vertices: always within reach
    for v in rng.choice(len(pos), 4, replace=False):
        c = to_canvas.map(np.array([[pos[v, 0], pos[v, 1], 0, 1]], np.float32))[0]
        near.append((c[0] / c[3] + 3.0, c[1] / c[3]))
    points = ([(rng.uniform(20, 620), rng.uniform(20, 460)) for _ in range(8)] + near
              + [(3.0, 3.0), (637.0, 240.0)])
    for cx, cy in points:
        x, y = gc.scene.data_of((cx, cy))
        want, dist = brute_nearest(pos, x, y)
        got = gc.pick((cx, cy), radius_px=12)
        if dist * ppu <= 11.9:
            assert got == want
            hits += 1
        elif dist * ppu > 12.1:
            assert got is None
            misses += 1
    assert hits >= 4 and misses >= 2        # the canvas corners lie beyond the graph's square


def read_png(path) -> np.ndarray:
    from PyQt6.QtGui import QImage
    img = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    a = np.frombuffer(img.constBits().asstring(img.sizeInBytes()), np.uint8)
    return a.reshape(img.height(), img.bytesPerLine())[:, : 3 * img.width()].reshape(img.height(), img.width(), 3)


def test_save_view_png_with_colour_bar_and_svg_limit(qtbot, rng, tmp_path):
    from explorer.app import create_app
    from explorer.graphs import render
    from kernels.errors import InvalidParameter
    create_app()
    pos, edges = spatial_graph(rng, 3000, k=4.0)
    vals = rng.uniform(0, 10, len(pos))
    out = render.save_view(tmp_path / "v.png", pos, edges, values=vals, label="degree", size=(700, 420))
    img = read_png(out)
    assert img.shape == (420, 700, 3)
    # the colour bar column: the colormap's high end at the top, its low end at the bottom
    from explorer.graphs.visuals import colormap_lut
    lut = (colormap_lut("viridis")[:, :3] * 255).round()
    x = 700 - render.BAR_PX + 40 + 9
    np.testing.assert_allclose(img[45, x], lut[-1], atol=12)
    np.testing.assert_allclose(img[420 - 45, x], lut[0], atol=12)
    # the graph part holds every drawn vertex colour: the view is not blank
    assert (img[:, : 700 - render.BAR_PX] < 245).any(axis=2).mean() > 0.2
    # SVG: every edge a segment, every vertex a circle, the label; above the limit refused
    svg = render.save_view(tmp_path / "v.svg", pos, edges, values=vals, label="degree", size=(700, 420))
    text = open(svg).read()
    assert text.count("<circle") == len(pos) and text.count("M") == len(edges) and ">degree</text>" in text
    big = np.zeros((render.SVG_MAX_VERTICES + 1, 2), np.float32)
    with pytest.raises(InvalidParameter, match=f"{render.SVG_MAX_VERTICES:,} vertices"):
        render.save_view(tmp_path / "big.svg", big, np.zeros((0, 2), np.int32))
    assert not (tmp_path / "big.svg").exists()
    with pytest.raises(InvalidParameter):
        render.save_view(tmp_path / "v.jpg", pos, edges)


class _StandInDeviceArray(np.ndarray):
    """A host array that the scene takes for a CuPy array (it has ``__cuda_array_interface__``)."""

    @property
    def __cuda_array_interface__(self):
        return {}

    def get(self):
        return np.asarray(self).copy()


def _stand_in_cupy():
    import types

    def wrap(f):
        def g(*a, **k):
            r = f(*[np.asarray(x) if isinstance(x, _StandInDeviceArray) else x for x in a], **k)
            return r.view(_StandInDeviceArray) if isinstance(r, np.ndarray) else r
        return g
    cp = types.ModuleType("cupy")
    for name in ("ascontiguousarray", "asarray", "where", "isfinite", "min", "max", "sqrt"):
        setattr(cp, name, wrap(getattr(np, name)))
    cp.uint32, cp.float32 = np.uint32, np.float32
    return cp


class _StandInGLBuffer:
    """kernels.cuda_gl.GLBuffer without CUDA: writes the array's bytes with glBufferSubData."""

    def __init__(self, handle, nbytes):
        self.handle, self.nbytes = handle, nbytes

    def write(self, array):
        import ctypes

        from OpenGL import GL
        a = np.ascontiguousarray(np.asarray(array))
        assert a.nbytes <= self.nbytes
        GL.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, self.handle)
        GL.glBufferSubData(GL.GL_COPY_WRITE_BUFFER, 0, a.nbytes, a.ctypes.data_as(ctypes.c_void_p))
        GL.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, 0)

    def release(self):
        pass


def test_device_upload_path_fills_the_buffers_the_host_path_fills(graph_canvas, qtbot, rng, monkeypatch):
    """The interop code path (queue, buffer creation, registration by GL id, write before the draw)
    with CUDA stood in for: the GL buffers hold what the host path puts there, and the picture is the
    same.  The real CUDA–GL copy is tests/graphs/test_graph_render_gpu.py's (GPU machine)."""
    import sys

    import kernels.cuda_gl as cuda_gl
    from explorer.graphs.canvas import GraphCanvas
    from support.gl_buffers import read_gl_buffer
    monkeypatch.setitem(sys.modules, "cupy", _stand_in_cupy())
    monkeypatch.setattr(cuda_gl, "interop_available", lambda: (True, ""))
    monkeypatch.setattr(cuda_gl, "GLBuffer", _StandInGLBuffer)
    pos, edges = spatial_graph(rng, 20_000, k=6.0)
    vals = rng.uniform(-3, 5, len(pos))
    vals[rng.integers(len(pos), size=50)] = np.nan
    moved = pos * np.float32(0.5) + rng.normal(0, 0.01, pos.shape).astype(np.float32)
    seen = []
    for device in (False, True):
        gc = graph_canvas if not device else GraphCanvas(parent=graph_canvas.native.parent())
        if device:
            gc.native.resize(640, 480)
            gc.native.show()
            qtbot.waitExposed(gc.native)
        dev = (lambda a: np.asarray(a).view(_StandInDeviceArray)) if device else (lambda a: a)
        gc.set_graph(dev(pos), dev(edges))
        gc.set_values(dev(vals), label="v")
        img = gc.render()
        held = [read_gl_buffer(gc.canvas, b, t) for b, t in ((gc.scene.position_buffer, np.float32),
                                                             (gc.scene.index_buffer, np.uint32),
                                                             (gc.scene.value_buffer, np.float32))]
        writes = gc.scene.device_writes
        gc.set_selected([0, 5])
        gc.set_path([0, 1, 2])
        gc.set_positions(dev(moved))            # selection and path follow the moved vertices
        img2 = gc.render()
        held.append(read_gl_buffer(gc.canvas, gc.scene.position_buffer, np.float32))
        seen.append((gc.upload_path, (writes, gc.scene.device_writes), img, img2, held))
    (p0, w0, a0, b0, h0), (p1, w1, a1, b1, h1) = seen
    assert p0 == "host" and w0 == (0, 0)
    assert p1 == "CUDA–GL interop" and w1 == (3, 4)
    for x, y in zip(h0, h1):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(h1[3], moved.reshape(-1))
    np.testing.assert_array_equal(a0, a1)
    np.testing.assert_array_equal(b0, b1)
