"""Issue 32, the view on the GPU machine (EGL): CuPy positions, edges and values reach the GL
buffers through CUDA–GL interop, the buffers hold exactly what the host path uploads, and the
rendered images are the same."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def egl_canvas(size=(640, 480)):
    try:
        from vispy import app, scene
        app.use_app("egl")
        return scene.SceneCanvas(size=size, show=False, bgcolor="white")
    except Exception as exc:  # no EGL device / no vispy
        pytest.skip(f"no headless EGL OpenGL context: {exc}")


def draw_graph(pos, edges, values, interop):
    from explorer.graphs.scene import GraphScene
    canvas = egl_canvas()
    gs = GraphScene(canvas, interop=interop)
    gs.set_graph(pos, edges)
    gs.set_values(values, label="value")
    return canvas, gs


def buffers(canvas, gs):
    from support.gl_buffers import read_gl_buffer
    return (read_gl_buffer(canvas, gs.position_buffer, np.float32),
            read_gl_buffer(canvas, gs.index_buffer, np.uint32),
            read_gl_buffer(canvas, gs.value_buffer, np.float32))


def run_view(pos, edges, values, moved, interop, wrap=lambda a: a):
    """Draw a graph on a fresh EGL canvas, then a layout step to ``moved``; returns what the GL
    buffers held and the images after each, the upload path and the interop writes.  One canvas
    at a time (``wrap``: cp.asarray for the device path)."""
    canvas, gs = draw_graph(wrap(pos), wrap(edges), wrap(values), interop)
    first = canvas.render()
    held = buffers(canvas, gs)
    writes = gs.device_writes
    gs.set_positions(wrap(moved))
    second = canvas.render()
    moved_held = buffers(canvas, gs)[0]
    out = dict(path=gs.upload_path, writes=(writes, gs.device_writes), images=(first, second), held=held,
               moved_held=moved_held, color_range=gs.color_range)
    gs.release()
    canvas.close()
    return out


def assert_same_image(a, b):
    """The edge alpha comes from a mean edge length computed on each backend: equal up to rounding."""
    diff = np.abs(a.astype(int) - b.astype(int))
    assert diff.max() <= 2 and (diff > 0).mean() < 0.01, (diff.max(), (diff > 0).mean())


def test_interop_upload_equals_host_upload(rng):
    import cupy as cp

    from kernels.graphs.data import generators as G
    g = G.spatial(30_000, k=6.0, seed=int(rng.integers(1 << 30)))
    vals = rng.uniform(-3, 5, g.n)
    vals[rng.integers(g.n, size=100)] = np.nan
    moved = g.positions * np.float32(0.5) + rng.normal(0, 0.01, g.positions.shape).astype(np.float32)
    host = run_view(g.positions, g.edges, vals, moved, interop=False)
    assert host["path"] == "host" and host["writes"] == (0, 0)
    dev = run_view(g.positions, g.edges, vals, moved, interop=True, wrap=cp.asarray)
    assert dev["path"] == "CUDA–GL interop", dev["path"]
    assert dev["writes"] == (3, 4)                  # positions, edge indices, values; then positions
    for a, b in zip(dev["held"], host["held"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(dev["moved_held"], moved.reshape(-1))
    np.testing.assert_array_equal(host["moved_held"], moved.reshape(-1))
    assert dev["color_range"] == pytest.approx(host["color_range"])
    assert (host["images"][0][..., :3] < 245).any(axis=2).mean() > 0.2      # something was drawn
    for a, b in zip(dev["images"], host["images"]):
        assert_same_image(a, b)


def test_render_view_headless_on_egl(rng, tmp_path):
    """The CLI's path: save_view without a QApplication, on EGL, with a colour bar."""
    egl_canvas().close()                           # skips without EGL
    from explorer.graphs import render
    from kernels.graphs.data import generators as G
    g = G.spatial(5000, k=6.0, seed=int(rng.integers(1 << 30)))
    vals = rng.uniform(0, 1, g.n)
    out = render.save_view(tmp_path / "v.png", g.positions, g.edges, values=vals, label="x", size=(500, 300))
    data = open(out, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    img = render.render_view(g.positions, g.edges, values=vals, label="x", size=(500, 300))
    assert img.shape == (300, 500, 4) and (img[..., :3] < 245).any(axis=2).mean() > 0.1
