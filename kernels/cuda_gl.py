"""CUDA–OpenGL interop: let CuPy write straight into an OpenGL buffer object or texture.

GL is touched only through a buffer or texture id handed in by the caller (this
module never imports Qt or VisPy and makes no GL calls).  CuPy 14 has no GL
interop of its own, so the CUDA runtime calls come from ``cuda.bindings.runtime``:

* :class:`GLBuffer` (2D frames through a pixel-unpack buffer):
  ``cudaGraphicsGLRegisterBuffer`` once, then per frame ``cudaGraphicsMapResources``
  → ``cudaGraphicsResourceGetMappedPointer`` (wrapped in ``cupy.cuda.UnownedMemory``)
  → write → ``cudaGraphicsUnmapResources``;
* :class:`GLTexture` (the 3D volume, no buffer in between): ``cudaGraphicsGLRegisterImage``
  of the texture once, then per frame map → ``cudaGraphicsSubResourceGetMappedArray``
  (level 0) → a device-to-array copy (``cudaMemcpy3DAsync``; 2D textures
  ``cudaMemcpy2DToArrayAsync``) → unmap.

The caller's GL context must be current for register/map/unmap.
"""
from __future__ import annotations

# Imports inside functions: CuPy and cuda-python stay optional (the interop runtime is looked up when
# asked for).
from contextlib import contextmanager


def _runtime():
    try:
        from cuda.bindings import runtime as cudart  # cuda-bindings ≥ 12.8
    except ImportError:  # older cuda-python layout
        from cuda import cudart  # type: ignore
    return cudart


def interop_available() -> tuple[bool, str]:
    """(True, "") when CuPy, a CUDA device and cuda.bindings are present, else (False, why)."""
    try:
        import cupy  # noqa: F401
        _runtime()
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device"
    except Exception as exc:  # ImportError or CUDA errors
        return False, f"{exc.__class__.__name__}: {exc}"
    return True, ""


def _check(result, what: str):
    """cuda.bindings calls return (err, *values); raise on error, return the values."""
    cudart = _runtime()
    err, *vals = result if isinstance(result, tuple) else (result,)
    if int(err) != int(cudart.cudaError_t.cudaSuccess):
        _, name = cudart.cudaGetErrorName(err)
        raise RuntimeError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
    if not vals:
        return None
    return vals[0] if len(vals) == 1 else tuple(vals)


class GLBuffer:
    """A GL buffer object (by id) registered with CUDA for writing from CuPy."""

    def __init__(self, gl_buffer_id: int, nbytes: int, write_only: bool = True):
        cudart = _runtime()
        flags = (cudart.cudaGraphicsRegisterFlags.cudaGraphicsRegisterFlagsWriteDiscard
                 if write_only else cudart.cudaGraphicsRegisterFlags.cudaGraphicsRegisterFlagsNone)
        self.gl_buffer_id = int(gl_buffer_id)
        self.nbytes = int(nbytes)
        self._res = _check(cudart.cudaGraphicsGLRegisterBuffer(self.gl_buffer_id, int(flags)),
                           "cudaGraphicsGLRegisterBuffer")
        self._mapped = False

    @contextmanager
    def mapped(self, shape, dtype="float32", stream=None):
        """Map the buffer and yield a CuPy array viewing it (valid only inside the block)."""
        import cupy as cp
        cudart = _runtime()
        st = stream if stream is not None else cp.cuda.get_current_stream()
        sptr = int(st.ptr)
        _check(cudart.cudaGraphicsMapResources(1, self._res, sptr), "cudaGraphicsMapResources")
        self._mapped = True
        try:
            ptr, size = _check(cudart.cudaGraphicsResourceGetMappedPointer(self._res),
                               "cudaGraphicsResourceGetMappedPointer")
            need = int(cp.dtype(dtype).itemsize) * int(_prod(shape))
            if need > int(size):
                raise ValueError(f"GL buffer holds {int(size)} bytes, {need} needed for {shape} {dtype}")
            mem = cp.cuda.UnownedMemory(int(ptr), int(size), self)
            yield cp.ndarray(shape, dtype=dtype, memptr=cp.cuda.MemoryPointer(mem, 0))
        finally:
            _check(cudart.cudaGraphicsUnmapResources(1, self._res, sptr), "cudaGraphicsUnmapResources")
            self._mapped = False

    def write(self, array, stream=None) -> None:
        """Copy a CuPy array (any shape; its bytes) into the buffer on the device."""
        with self.mapped(array.shape, array.dtype, stream) as view:
            view[...] = array

    def release(self) -> None:
        if self._res is not None:
            _check(_runtime().cudaGraphicsUnregisterResource(self._res), "cudaGraphicsUnregisterResource")
            self._res = None

    def __del__(self):  # best effort; the GL context may already be gone
        try:
            self.release()
        except Exception:
            pass


#: GL texture targets (GL enums; this module makes no GL calls)
GL_TEXTURE_2D = 0x0DE1
GL_TEXTURE_3D = 0x806F


class GLTexture:
    """A GL texture (by id and target) registered with CUDA; :meth:`write` copies a CuPy array into
    its level 0 on the device.  The texture must already have storage of the array's size and a
    one-channel format of the array's element size (e.g. ``GL_R32F`` for float32)."""

    def __init__(self, gl_texture_id: int, target: int = GL_TEXTURE_3D, write_only: bool = True):
        cudart = _runtime()
        flags = (cudart.cudaGraphicsRegisterFlags.cudaGraphicsRegisterFlagsWriteDiscard
                 if write_only else cudart.cudaGraphicsRegisterFlags.cudaGraphicsRegisterFlagsNone)
        self.gl_texture_id = int(gl_texture_id)
        self.target = int(target)
        self._res = _check(cudart.cudaGraphicsGLRegisterImage(self.gl_texture_id, self.target, int(flags)),
                           "cudaGraphicsGLRegisterImage")

    def write(self, array, stream=None) -> None:
        """Copy a C-contiguous CuPy array, (z, y, x) for a 3D texture or (y, x) for a 2D one, into the
        texture (x fastest, as GL stores it); ValueError when the shapes differ."""
        import cupy as cp
        cudart = _runtime()
        if not array.flags.c_contiguous:
            array = cp.ascontiguousarray(array)
        st = stream if stream is not None else cp.cuda.get_current_stream()
        sptr = int(st.ptr)
        _check(cudart.cudaGraphicsMapResources(1, self._res, sptr), "cudaGraphicsMapResources")
        try:
            arr = _check(cudart.cudaGraphicsSubResourceGetMappedArray(self._res, 0, 0),
                         "cudaGraphicsSubResourceGetMappedArray")
            _desc, ext, _flags = _check(cudart.cudaArrayGetInfo(arr), "cudaArrayGetInfo")
            have = (int(ext.depth) or 1, int(ext.height) or 1, int(ext.width))
            shape = tuple(int(s) for s in array.shape)
            want = shape if len(shape) == 3 else (1,) + shape
            if have != want:
                raise ValueError(f"the texture is {have[2]}×{have[1]}×{have[0]}, the array {shape[::-1]} (x, y, z)")
            d, h, w = want
            row = w * array.itemsize
            kind = cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice
            if len(shape) == 3:
                p = cudart.cudaMemcpy3DParms()
                p.srcPos = cudart.make_cudaPos(0, 0, 0)
                p.dstPos = cudart.make_cudaPos(0, 0, 0)
                p.srcPtr = cudart.make_cudaPitchedPtr(int(array.data.ptr), row, w, h)
                p.dstArray = arr
                p.extent = cudart.make_cudaExtent(w, h, d)      # in elements: the destination is an array
                p.kind = kind
                _check(cudart.cudaMemcpy3DAsync(p, sptr), "cudaMemcpy3DAsync")
            else:
                _check(cudart.cudaMemcpy2DToArrayAsync(arr, 0, 0, int(array.data.ptr), row, row, h, kind, sptr),
                       "cudaMemcpy2DToArrayAsync")
        finally:
            _check(cudart.cudaGraphicsUnmapResources(1, self._res, sptr), "cudaGraphicsUnmapResources")

    def release(self) -> None:
        if self._res is not None:
            _check(_runtime().cudaGraphicsUnregisterResource(self._res), "cudaGraphicsUnregisterResource")
            self._res = None

    def __del__(self):  # best effort; the GL context may already be gone
        try:
            self.release()
        except Exception:
            pass


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
