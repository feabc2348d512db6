"""Headless EGL canvas helper for GPU-machine tests (no Qt there)."""
import numpy as np


def egl_image_canvas(n: int, cmap: str = "grays"):
    """A SceneCanvas on the EGL backend showing an n×n float Image that fills n×n pixels."""
    import pytest
    try:
        from vispy import app, scene
        app.use_app("egl")
        canvas = scene.SceneCanvas(size=(n, n), show=False, bgcolor="black")
    except Exception as exc:  # no EGL device / no vispy
        pytest.skip(f"no headless EGL OpenGL context: {exc}")
    view = canvas.central_widget.add_view(border_width=0)
    canvas.central_widget.padding = 0
    canvas.central_widget.margin = 0
    view.camera = scene.PanZoomCamera(aspect=1)
    image = scene.visuals.Image(np.zeros((n, n), np.float32), cmap=cmap, clim=(-1, 1),
                                texture_format="auto", interpolation="nearest", parent=view.scene)
    view.camera.set_range(x=(0, n), y=(0, n), margin=0)
    return canvas, view, image
