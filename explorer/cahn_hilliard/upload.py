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
    """The best available uploader for ``backend`` (host copy for now)."""
    return HostUploader(image_visual)
