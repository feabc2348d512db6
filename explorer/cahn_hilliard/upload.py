"""Moves a 2D field from the compute backend into the VisPy image texture.

``HostUploader`` copies through host memory (``backend.to_numpy`` then
``Image.set_data``).  ``make_uploader`` is the single place where a CUDA–OpenGL
zero-copy uploader (register the texture with CUDA, copy device→texture) can be
chosen later without touching the canvas or the workspace.
"""
from __future__ import annotations

import numpy as np


class HostUploader:
    """Upload through host memory: works for every backend."""

    mode = "host"

    def __init__(self, image_visual):
        self.image = image_visual
        self.last = None   # the host copy last shown (for tests/exports)

    def upload(self, field2d, backend) -> np.ndarray:
        a = backend.to_numpy(field2d)
        if a.dtype != np.float32:
            a = a.astype(np.float32)
        self.image.set_data(a)
        self.last = a
        return a


def make_uploader(image_visual, canvas, backend):
    """The best available uploader: CUDA–GL zero-copy on the GPU backend when the
    interop runtime is present (``explorer.gl_interop``), else a host copy."""
    if backend is not None and backend.is_gpu:
        from ..gl_interop import HostUploadFallback, InteropUploader
        try:
            return InteropUploader(image_visual, canvas)
        except HostUploadFallback as exc:
            up = HostUploader(image_visual)
            up.mode = f"host (no CUDA–GL interop: {exc})"
            return up
    return HostUploader(image_visual)
