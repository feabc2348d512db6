"""Zero-copy display of a CuPy field in a VisPy Image or Volume (CUDA–OpenGL interop).

2D (``InteropUploader``): per frame, inside the canvas's GL context (a draw callback that runs before
the scene): map a pixel-unpack buffer (PBO) registered with CUDA, copy the
field into it on the device, unmap, and ``glTexSubImage2D`` from the PBO into
the Image visual's float texture.  No byte crosses to the host.  The CUDA side
lives in ``kernels.cuda_gl``; this adapter owns the GL objects.

The Image must use a float texture (``texture_format="auto"``), so raw φ values
are sampled and the contrast limits are applied in the shader.

3D (``VolumeInteropUploader``): the Volume's 3D texture itself is registered with
CUDA and written by a device-to-array copy — no buffer, no host.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional, and PyOpenGL's GL module loads only when CUDA–GL interop
# draws (GPU backend).
import ctypes

import numpy as np

from kernels.cuda_gl import GL_TEXTURE_3D, GLBuffer, GLTexture, interop_available


class HostUploadFallback(Exception):
    """Raised when interop cannot be set up; the caller switches to host upload."""


class _DrawHookUploader:
    """What both uploaders share: the interop check, the hook on the visual's own draw preparation
    (it runs for on-screen paints and for ``canvas.render()`` exports alike, after VisPy queued any
    host upload), the GL id of the visual's texture, and release.  Subclasses write the queued
    frame in :meth:`_on_draw` and free their GL/CUDA objects in :meth:`_release_gl`."""

    def __init__(self, visual, canvas):
        ok, why = interop_available()
        if not ok:
            raise HostUploadFallback(why)
        self.visual = visual
        self.canvas = canvas
        self._frame = None
        self._shape = None
        self.frames = 0
        self._orig_prepare = visual._prepare_draw
        visual._prepare_draw = self._prepare_draw

    @staticmethod
    def _as_float32(field):
        import cupy as cp
        f = field if field.dtype == cp.float32 else field.astype(cp.float32)
        return cp.ascontiguousarray(f)

    def release(self) -> None:
        self._release_gl()
        if getattr(self, "_orig_prepare", None) is not None:
            self.visual._prepare_draw = self._orig_prepare
            self._orig_prepare = None

    def _release_gl(self):
        raise NotImplementedError

    def _on_draw(self, event=None):
        raise NotImplementedError

    def _prepare_draw(self, view):
        result = self._orig_prepare(view)
        self._on_draw()
        return result

    def _texture_handle(self):
        ctx = self.canvas.context
        ctx.flush_commands()  # run VisPy's queued texture creation / resize / host upload first
        ob = ctx.shared.parser._objects.get(self.visual._texture.id)
        h = getattr(ob, "handle", -1)
        return h if isinstance(h, int) and h > 0 else None


class InteropUploader(_DrawHookUploader):
    """Uploads 2D CuPy float32 frames to a VisPy ImageVisual through a CUDA-registered PBO."""

    mode = "CUDA–GL interop (zero-copy)"

    def __init__(self, image_visual, canvas):
        self._pbo = None
        self._buf = None
        self.error = ""
        super().__init__(image_visual, canvas)
        self.image = image_visual

    # -- public -------------------------------------------------------------
    def upload(self, field2d, backend=None) -> None:
        """Queue a device frame (kept by reference: pass a copy if it will change)."""
        f = self._as_float32(field2d)
        if self._shape != f.shape:
            # (re)allocate the texture at the new size once through VisPy
            self.image.set_data(np.zeros(f.shape, np.float32))
            self._release_gl()
            self._shape = f.shape
        self._frame = f
        self.canvas.update()

    # -- GL side ------------------------------------------------------------
    def _release_gl(self):
        if self._buf is not None:
            try:
                self._buf.release()
            except Exception:
                pass
            self._buf = None
        if self._pbo is not None:
            try:
                from OpenGL import GL
                GL.glDeleteBuffers(1, [self._pbo])
            except Exception:
                pass
            self._pbo = None

    def _on_draw(self, event=None):
        frame = self._frame
        if frame is None:
            return
        handle = self._texture_handle()
        if handle is None:
            self.canvas.update()
            return
        from OpenGL import GL
        h, w = frame.shape
        nbytes = frame.nbytes
        if self._pbo is None:
            self._pbo = int(GL.glGenBuffers(1))
            GL.glBindBuffer(GL.GL_PIXEL_UNPACK_BUFFER, self._pbo)
            GL.glBufferData(GL.GL_PIXEL_UNPACK_BUFFER, nbytes, None, GL.GL_STREAM_DRAW)
            GL.glBindBuffer(GL.GL_PIXEL_UNPACK_BUFFER, 0)
            self._buf = GLBuffer(self._pbo, nbytes)
        self._buf.write(frame)  # device → GL buffer, on the GPU
        GL.glBindBuffer(GL.GL_PIXEL_UNPACK_BUFFER, self._pbo)
        GL.glBindTexture(GL.GL_TEXTURE_2D, handle)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 4)
        GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, 0, 0, w, h, GL.GL_RED, GL.GL_FLOAT, ctypes.c_void_p(0))
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
        GL.glBindBuffer(GL.GL_PIXEL_UNPACK_BUFFER, 0)
        self._frame = None
        self.frames += 1


class VolumeInteropUploader(_DrawHookUploader):
    """Uploads 3D CuPy float32 frames into a VisPy Volume's 3D texture with no host copy: the
    texture is registered with CUDA (``cudaGraphicsGLRegisterImage``) and each frame is a
    device-to-array copy into it (``kernels.cuda_gl.GLTexture``), inside the canvas's GL context
    just before the volume draws.  The Volume must use a float texture (``texture_format="auto"``):
    φ is stored raw and the contrast limits are applied in the shader."""

    mode = "CUDA–GL interop (3D texture, zero-copy)"

    def __init__(self, volume_visual, canvas):
        self._tex = None            # the GLTexture registration
        self._handle = None         # the GL texture id it registered
        super().__init__(volume_visual, canvas)
        self.volume = volume_visual

    def upload(self, field3d, backend=None, clim=None) -> None:
        """Queue a device frame (kept by reference: pass a copy if it will change); ``clim`` sets the
        shader's contrast limits (no data moves)."""
        f = self._as_float32(field3d)
        if self._shape != f.shape:
            # (re)allocate the texture at the new size once through VisPy
            self._release_gl()
            self.volume.set_data(np.zeros(f.shape, np.float32), clim=clim)
            self._shape = f.shape
        elif clim is not None:
            self.volume.clim = clim
        self._frame = f
        self.canvas.update()

    def _release_gl(self):
        if self._tex is not None:
            try:
                self._tex.release()
            except Exception:
                pass
            self._tex = self._handle = None

    def _on_draw(self, event=None):
        frame = self._frame
        if frame is None:
            return
        handle = self._texture_handle()
        if handle is None:
            self.canvas.update()
            return
        if self._tex is None or self._handle != handle:
            self._release_gl()
            self._tex = GLTexture(handle, GL_TEXTURE_3D)
            self._handle = handle
        self._tex.write(frame)          # device → the texture's CUDA array, on the GPU
        self._frame = None
        self.frames += 1
