"""3D frames without the host (issue 26 §1): the volume's 3D texture registered with CUDA and written by
a device-to-array copy; the slice through the 2D interop; pixels equal the host path's."""
import ctypes

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def _egl():
    try:
        from vispy import app
        app.use_app("egl")
    except Exception as exc:  # no EGL device / no vispy
        pytest.skip(f"no headless EGL OpenGL context: {exc}")


def test_gltexture_3d_roundtrip_is_exact(rng):
    """kernels.cuda_gl.GLTexture writes a random CuPy volume into a GL_R32F 3D texture; glGetTexImage
    reads back the same floats, bit for bit; a wrong shape is refused."""
    _egl()
    import cupy as cp
    from OpenGL import GL
    from vispy import scene

    from OpenGL.raw.GL.VERSION.GL_1_1 import glGetTexImage
    from OpenGL.raw.GL.VERSION.GL_1_2 import glTexImage3D

    from kernels.cuda_gl import GL_TEXTURE_3D, GLTexture
    canvas = scene.SceneCanvas(size=(16, 16), show=False)
    canvas.set_current()
    d, h, w = 24, 20, 36                                  # distinct sides: catches swapped axes
    tex = int(GL.glGenTextures(1))
    GL.glBindTexture(GL.GL_TEXTURE_3D, tex)
    glTexImage3D(GL.GL_TEXTURE_3D, 0, GL.GL_R32F, w, h, d, 0, GL.GL_RED, GL.GL_FLOAT, None)
    GL.glBindTexture(GL.GL_TEXTURE_3D, 0)
    vol = rng.standard_normal((d, h, w)).astype(np.float32)
    reg = GLTexture(tex, GL_TEXTURE_3D)
    reg.write(cp.asarray(vol))
    cp.cuda.Device().synchronize()
    GL.glBindTexture(GL.GL_TEXTURE_3D, tex)
    back = np.full((d, h, w), np.nan, np.float32)
    glGetTexImage(GL.GL_TEXTURE_3D, 0, GL.GL_RED, GL.GL_FLOAT, ctypes.c_void_p(back.ctypes.data))
    GL.glBindTexture(GL.GL_TEXTURE_3D, 0)
    np.testing.assert_array_equal(back, vol)
    with pytest.raises(ValueError, match="texture is"):
        reg.write(cp.zeros((d, w, h), cp.float32))
    reg.release()
    GL.glDeleteTextures(1, [tex])
    canvas.close()


def _field_canvas(backend, interop: bool, n: int):
    from explorer.cahn_hilliard.canvas import FieldCanvas
    fc = FieldCanvas(backend, size=(2 * n + 40, n + 20))
    fc.interop = interop
    return fc


@pytest.mark.parametrize("auto_contrast", [False, True])
def test_field_canvas_3d_interop_pixels_equal_host_path(rng, auto_contrast):
    """The workspace's FieldCanvas on the GPU: volume and slice through interop (status text says so),
    the rendered canvas equal to the same canvas fed through host memory; a new frame replaces the
    old; no host copy is made unless asked (isosurface, exports)."""
    _egl()
    import cupy as cp

    from kernels.backend import make
    be = make("gpu")
    n = 48
    field = cp.asarray(rng.uniform(-1, 1, (n, n, n)).astype(np.float32))
    imgs = {}
    for interop in (True, False):
        fc = _field_canvas(be, interop, n)
        fc.auto_contrast = auto_contrast
        fc.update_field(field)
        for _ in range(3):
            img = fc.canvas.render(alpha=False)
        if interop:
            assert fc.upload_mode.startswith("volume: CUDA–GL interop (3D texture")
            assert "slice: CUDA–GL interop" in fc.upload_mode
            assert fc.volume_uploader.frames >= 1 and fc.uploader.frames >= 1
            assert fc._field_host is None                      # nothing came to the host
            # a second, different frame replaces the first
            fc.update_field(-field)
            img2 = fc.canvas.render(alpha=False)
            assert fc.volume_uploader.frames >= 2
            imgs["interop2"] = img2
        else:
            assert fc.upload_mode.startswith("volume: host")
            fc.update_field(-field)
            imgs["host2"] = fc.canvas.render(alpha=False)
        imgs[interop] = img
        fc.canvas.close()
    assert np.abs(imgs[True].astype(int) - imgs[False].astype(int)).max() <= 2
    assert np.abs(imgs["interop2"].astype(int) - imgs["host2"].astype(int)).max() <= 2
    assert np.abs(imgs["interop2"].astype(int) - imgs[True].astype(int)).max() > 20   # it did change


def _texture(fc, visual, target, shape):
    """The float texture of a VisPy visual, read back from GL."""
    from OpenGL import GL
    from OpenGL.raw.GL.VERSION.GL_1_1 import glGetTexImage
    fc.canvas.set_current()
    ob = fc.canvas.context.shared.parser._objects.get(visual._texture.id)
    back = np.full(shape, np.nan, np.float32)
    GL.glBindTexture(target, ob.handle)
    glGetTexImage(target, 0, GL.GL_RED, GL.GL_FLOAT, ctypes.c_void_p(back.ctypes.data))
    GL.glBindTexture(target, 0)
    return back


def test_textures_hold_the_field_and_its_slice(rng):
    """After interop frames, the volume's 3D texture holds φ and the slice image's texture holds
    φ[slice], bit for bit (the shaders then apply the contrast limits and colormap)."""
    _egl()
    import cupy as cp
    from OpenGL import GL

    from kernels.backend import make
    be = make("gpu")
    n = 32
    fc = _field_canvas(be, True, n)
    vol = rng.uniform(-1, 1, (n, n, n)).astype(np.float32)
    fc.update_field(cp.asarray(vol))
    for axis, idx in (("z", 5), ("y", 17), ("x", 30)):
        fc.set_slice(axis, idx)
        for _ in range(2):
            fc.canvas.render(alpha=False)
        np.testing.assert_array_equal(_texture(fc, fc.volume, GL.GL_TEXTURE_3D, (n, n, n)), vol)
        expect = np.take(vol, idx, axis={"z": 0, "y": 1, "x": 2}[axis])
        np.testing.assert_array_equal(_texture(fc, fc.slice_image, GL.GL_TEXTURE_2D, (n, n)), expect)
    assert fc._field_host is None
    fc.set_isosurface(True)                          # the mesh is built on the host: a copy now
    assert "isosurface: host" in fc.upload_mode and fc._field_host is not None
    fc.canvas.close()
