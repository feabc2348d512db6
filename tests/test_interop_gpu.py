"""CUDA–OpenGL interop: a CuPy field written through a registered PBO reaches the screen."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def test_interop_frame_matches_field(rng):
    import cupy as cp
    from explorer.gl_interop import InteropUploader
    from tests.gl_egl import egl_image_canvas
    n = 96
    canvas, view, image = egl_image_canvas(n)
    up = InteropUploader(image, canvas)
    field = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    up.upload(cp.asarray(field))
    for _ in range(3):
        img = canvas.render(alpha=False)
        if up.frames:
            break
    assert up.frames == 1, "the interop path never wrote the texture"
    gray = img[..., 0].astype(float)
    expect = (np.clip(field, -1, 1) + 1) / 2 * 255
    # scene y points up: image row 0 is drawn at the bottom of the canvas
    np.testing.assert_allclose(gray, np.flipud(expect), atol=2.0)
    # a second, different frame replaces the first (no stale host copy comes back)
    field2 = -field
    up.upload(cp.asarray(field2))
    img = canvas.render(alpha=False)
    np.testing.assert_allclose(img[..., 0].astype(float), np.flipud((field2 + 1) / 2 * 255), atol=2.0)
    up.release()
    canvas.close()
