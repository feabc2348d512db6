"""Read a VisPy gloo buffer back from OpenGL (tests: what the GPU really holds)."""
import ctypes

import numpy as np


def read_gl_buffer(canvas, buffer, dtype) -> np.ndarray:
    """The bytes of gloo ``buffer`` as GL stores them, viewed as ``dtype`` (1D)."""
    from OpenGL import GL
    canvas.set_current()
    ctx = canvas.context
    ctx.flush_commands()
    handle = ctx.shared.parser._objects[buffer.id].handle
    nbytes = int(buffer.nbytes)
    out = np.empty(nbytes, np.uint8)
    GL.glBindBuffer(GL.GL_COPY_READ_BUFFER, handle)
    GL.glGetBufferSubData(GL.GL_COPY_READ_BUFFER, 0, nbytes, out.ctypes.data_as(ctypes.c_void_p))
    GL.glBindBuffer(GL.GL_COPY_READ_BUFFER, 0)
    return out.view(dtype)
