"""CUDA–OpenGL interop: let CuPy write straight into an OpenGL buffer object.

GL is touched only through a buffer id handed in by the caller (this module
never imports Qt or VisPy and makes no GL calls).  CuPy 14 has no GL interop of
its own, so the CUDA runtime calls come from ``cuda.bindings.runtime``:
``cudaGraphicsGLRegisterBuffer`` once, then per frame
``cudaGraphicsMapResources`` → ``cudaGraphicsResourceGetMappedPointer`` (wrapped
in ``cupy.cuda.UnownedMemory``) → write → ``cudaGraphicsUnmapResources``.
The caller's GL context must be current for register/map/unmap.
"""
from __future__ import annotations

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


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
