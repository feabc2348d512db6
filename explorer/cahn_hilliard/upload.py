"""Moves a field from the compute backend into the VisPy textures: 2D images and slices
(``make_uploader``) and the 3D volume (``make_volume_uploader``).

``HostUploader`` / ``HostVolumeUploader`` copy through host memory (``backend.to_numpy`` then
``set_data``); on the GPU backend the CUDA–OpenGL zero-copy uploaders of
``explorer.gl_interop`` are chosen when the interop runtime is present.  Each uploader's ``mode``
says which path it is (the status bar shows it).
"""
from __future__ import annotations

import numpy as np

from ..gl_interop import HostUploadFallback, InteropUploader, VolumeInteropUploader


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


def make_uploader(image_visual, canvas, backend, interop: bool = True):
    """The best available uploader: CUDA–GL zero-copy on the GPU backend when the
    interop runtime is present (``explorer.gl_interop``) and ``interop``, else a host copy."""
    if backend is not None and backend.is_gpu and interop:
        try:
            return InteropUploader(image_visual, canvas)
        except HostUploadFallback as exc:
            up = HostUploader(image_visual)
            up.mode = f"host (no CUDA–GL interop: {exc})"
            return up
    return HostUploader(image_visual)


class HostVolumeUploader:
    """3D upload through host memory: works for every backend; returns the host copy."""

    mode = "host"

    def __init__(self, volume_visual):
        self.volume = volume_visual

    def upload(self, field3d, backend, clim=None) -> np.ndarray:
        a = np.ascontiguousarray(backend.to_numpy(field3d), dtype=np.float32)
        self.volume.set_data(a, clim=clim)
        return a


def make_volume_uploader(volume_visual, canvas, backend, interop: bool = True):
    """CUDA–GL zero-copy into the volume's 3D texture on the GPU backend (the Volume made with
    ``texture_format="auto"``) when ``interop`` and the runtime allow, else a host copy."""
    if backend is not None and backend.is_gpu and interop:
        try:
            return VolumeInteropUploader(volume_visual, canvas)
        except HostUploadFallback as exc:
            up = HostVolumeUploader(volume_visual)
            up.mode = f"host (no CUDA–GL interop: {exc})"
            return up
    return HostVolumeUploader(volume_visual)
