"""The graph view's GL objects: one vertex-position buffer shared by an edge visual (``GL_LINES``
from an index buffer) and a vertex visual (``GL_POINTS`` coloured by a per-vertex value through a
colormap texture), and the device upload of those buffers (CUDA–GL interop).  VisPy only, no Qt.

Memory on the GPU for n vertices and m edges: positions 8 n bytes, values 4 n bytes, edge indices
8 m bytes (two uint32 per edge) — 1 000 000 vertices and 10 000 000 edges take 92 MB.  Nothing is
expanded per edge on the host (VisPy's ``Line`` with ``connect="segments"`` copies two positions
per edge: 16 m bytes, rebuilt on every position change).

The index buffer holds the edges in a fixed pseudo-random order, so its first 2 k indices are a
uniform random subset of k edges: the level of detail draws that prefix (:class:`PrefixIndexBuffer`)
while the camera moves.

:class:`DeviceBufferWriter` copies CuPy arrays into these GL buffers on the device: each buffer is
registered once with CUDA (``cudaGraphicsGLRegisterBuffer``, :class:`kernels.cuda_gl.GLBuffer`),
then per upload mapped, written by a device-to-device copy and unmapped, inside the canvas's GL
context just before the visuals draw (the same hook as ``explorer.gl_interop`` for textures).
"""
from __future__ import annotations

import numpy as np
from vispy import gloo
from vispy.color import get_colormap
from vispy.visuals import Visual

from kernels import cuda_gl

#: marks a value with no colour (NaN, ±inf) in the value buffer; the shader draws it grey
NO_VALUE = np.float32(3.0e38)

EDGE_VERT = """
attribute vec2 a_position;
void main() {
    gl_Position = $transform(vec4(a_position, 0.0, 1.0));
}
"""
EDGE_FRAG = """
uniform vec4 u_color;
void main() {
    gl_FragColor = u_color;
}
"""

NODE_VERT = """
attribute vec2 a_position;
attribute float a_value;
uniform float u_size;
uniform float u_has_values;
uniform vec2 u_clim;
uniform vec4 u_plain;
uniform vec4 u_nan;
uniform sampler2D u_cmap;
varying vec4 v_color;
void main() {
    gl_Position = $transform(vec4(a_position, 0.0, 1.0));
    gl_PointSize = u_size;
    if (u_has_values < 0.5) {
        v_color = u_plain;
    } else if (a_value > 1.0e38 || a_value < -1.0e38) {
        v_color = u_nan;
    } else {
        float t = clamp((a_value - u_clim.x) / max(u_clim.y - u_clim.x, 1e-30), 0.0, 1.0);
        v_color = texture2D(u_cmap, vec2(0.5 / 256.0 + t * 255.0 / 256.0, 0.5));
    }
}
"""
NODE_FRAG = """
uniform float u_size;
uniform vec4 u_outline;
varying vec4 v_color;
void main() {
    vec2 p = 2.0 * gl_PointCoord - 1.0;
    float r = length(p);
    if (r > 1.0) discard;
    // a one-pixel dark rim on points of 5 px and more (the vertices stay apart on any background)
    float rim = u_size >= 5.0 ? 1.0 - 2.0 / u_size : 2.0;
    gl_FragColor = r > rim ? u_outline : v_color;
}
"""


def colormap_lut(name: str, n: int = 256) -> np.ndarray:
    """(n, 4) float32 RGBA of VisPy colormap ``name`` sampled at n evenly spaced points of [0, 1]."""
    return np.asarray(get_colormap(name).map(np.linspace(0.0, 1.0, n, dtype=np.float32)), np.float32)


class PrefixIndexBuffer(gloo.IndexBuffer):
    """An index buffer whose draws use only its first ``draw_count`` indices (``None``: all).

    ``gloo.Program.draw`` takes the element count from ``size``; this reports the prefix there, so a
    draw covers the first edges of the buffer without any upload."""

    draw_count: int | None = None

    @property
    def size(self):
        full = self._size
        return full if self.draw_count is None else min(int(self.draw_count), full)


def allocate(buffer, nbytes: int, dtype, width: int = 1) -> None:
    """Give a gloo buffer ``nbytes`` of uninitialised GL storage of ``dtype`` (``width`` per item),
    without a host array of that size (the device writer fills it)."""
    buffer.set_data(np.zeros((1, width) if width > 1 else 1, dtype))
    buffer.resize_bytes(int(nbytes))


class _GraphVisualBase(Visual):
    """Shared by the two visuals: the transform, the bounds of the positions and a hook that runs
    before the draw (device uploads; the scene's uniforms)."""

    def __init__(self, vcode, fcode, positions, draw_mode):
        super().__init__(vcode=vcode, fcode=fcode)
        self._draw_mode = draw_mode
        self.shared_program["a_position"] = positions
        self.set_gl_state("translucent", depth_test=False, blend=True)
        self.bounds_xy = ((0.0, 1.0), (0.0, 1.0))
        self.before_draw = None        # callable(visual) -> bool (False: skip this draw)

    def _prepare_transforms(self, view):
        view.view_program.vert["transform"] = view.get_transform()

    def _prepare_draw(self, view):
        if self.before_draw is not None:
            return self.before_draw(self) is not False
        return True

    def _compute_bounds(self, axis, view):
        return self.bounds_xy[axis] if axis < 2 else (0.0, 0.0)


class EdgesVisual(_GraphVisualBase):
    """Every edge as a GL line between two entries of the shared position buffer, one colour with
    an alpha set per frame by the scene (the density rule of :class:`GraphScene`)."""

    def __init__(self, positions, indices: PrefixIndexBuffer):
        super().__init__(EDGE_VERT, EDGE_FRAG, positions, "lines")
        self._index_buffer = indices
        self.shared_program["u_color"] = (0.3, 0.3, 0.35, 0.3)


class NodesVisual(_GraphVisualBase):
    """Every vertex as a round GL point of ``size`` pixels, coloured by its value in the value buffer
    through a 256-entry colormap texture and the ``clim`` uniforms, grey where the value is
    :data:`NO_VALUE`, or one plain colour when no values are set."""

    def __init__(self, positions, values, plain_rgba=(0.2, 0.4, 0.7, 1.0), nan_rgba=(0.75, 0.75, 0.75, 1.0)):
        super().__init__(NODE_VERT, NODE_FRAG, positions, "points")
        self.shared_program["a_value"] = values
        self._cmap_tex = gloo.Texture2D(np.zeros((1, 256, 4), np.float32), interpolation="linear",
                                        wrapping="clamp_to_edge", internalformat="rgba8")
        self.shared_program["u_cmap"] = self._cmap_tex
        self.shared_program["u_has_values"] = 0.0
        self.shared_program["u_clim"] = (0.0, 1.0)
        self.shared_program["u_plain"] = plain_rgba
        self.shared_program["u_nan"] = nan_rgba
        self.shared_program["u_outline"] = (0.1, 0.1, 0.1, 0.6)
        self.shared_program["u_size"] = 5.0
        self.cmap_name = None
        self.set_cmap("viridis")

    def set_cmap(self, name: str) -> None:
        if name != self.cmap_name:
            self._cmap_tex.set_data(colormap_lut(name)[None, :, :])
            self.cmap_name = name


class DeviceBufferWriter:
    """Queues CuPy arrays for GL buffers and writes them on the device inside the GL context.

    ``queue(buffer, array)`` keeps the array by reference until the next draw; ``flush(canvas)``
    (called from a visual's draw preparation, the context current) makes VisPy create/size the
    buffers, registers each GL buffer with CUDA once (again when its id or size changes) and copies
    the array in.  ``error`` holds the reason when a write failed (the caller then uploads from the
    host)."""

    def __init__(self):
        self._pending: dict[int, tuple[object, object]] = {}
        self._registered: dict[int, tuple[int, int, object]] = {}
        self.writes = 0
        self.error = ""

    def queue(self, buffer, array) -> None:
        self._pending[id(buffer)] = (buffer, array)

    def pending(self) -> bool:
        return bool(self._pending)

    def drop(self, buffer) -> None:
        """Forget a queued write and the registration of ``buffer`` (before VisPy re-sizes it)."""
        self._pending.pop(id(buffer), None)
        reg = self._registered.pop(id(buffer), None)
        if reg is not None:
            _release(reg[2])

    def flush(self, canvas) -> list:
        """Write every queued array; returns the (buffer, array) pairs that failed (host fallback)."""
        if not self._pending:
            return []
        ctx = canvas.context
        for buffer, _ in self._pending.values():
            ctx.glir.associate(buffer.glir)  # a buffer no draw has used yet: its queue joins the context's
        ctx.flush_commands()               # VisPy's queued buffer creation and SIZE first
        failed = []
        for key, (buffer, array) in list(self._pending.items()):
            try:
                self._write(ctx, key, buffer, array)
            except Exception as exc:       # a driver without interop for this context: host path
                self.error = f"{exc.__class__.__name__}: {exc}"
                failed.append((buffer, array))
        self._pending.clear()
        return failed

    def _write(self, ctx, key, buffer, array) -> None:
        ob = ctx.shared.parser._objects.get(buffer.id)
        handle = getattr(ob, "handle", -1)
        if not (isinstance(handle, int) and handle > 0):
            raise RuntimeError("the GL buffer was not created")
        nbytes = int(buffer.nbytes)
        reg = self._registered.get(key)
        if reg is None or reg[0] != handle or reg[1] != nbytes:
            if reg is not None:
                _release(reg[2])
            reg = (handle, nbytes, cuda_gl.GLBuffer(handle, nbytes))
            self._registered[key] = reg
        reg[2].write(array)
        self.writes += 1

    def release(self) -> None:
        for reg in self._registered.values():
            _release(reg[2])
        self._registered.clear()
        self._pending.clear()


def _release(glbuffer) -> None:
    try:
        glbuffer.release()
    except Exception:      # the GL context may be gone with the canvas
        pass
