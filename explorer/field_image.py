"""Field → RGB image with a named colormap (no GL, no Qt): used by headless export."""
from __future__ import annotations

import numpy as np


def colorize(field2d: np.ndarray, cmap: str = "viridis", clim: tuple[float, float] | None = (-1.0, 1.0)) -> np.ndarray:
    """Map a 2D field to an (H, W, 3) uint8 image; row 0 is the top of the picture."""
    from vispy.color import get_colormap  # pure NumPy part of VisPy: needs no GL context
    f = np.asarray(field2d, dtype=np.float64)
    lo, hi = clim if clim is not None else (float(np.nanmin(f)), float(np.nanmax(f)))
    if hi <= lo:
        hi = lo + 1.0
    x = np.clip((f - lo) / (hi - lo), 0.0, 1.0)
    rgba = get_colormap(cmap).map(x.ravel())
    rgb = (np.asarray(rgba)[:, :3].reshape(f.shape + (3,)) * 255 + 0.5).astype(np.uint8)
    return rgb


def save_field_png(path: str, field: np.ndarray, cmap: str = "viridis", clim=(-1.0, 1.0), scale: int = 1) -> tuple[int, int]:
    """Write a field (2D, or the middle z-slice of 3D) as PNG; returns (width, height)."""
    import imageio.v3 as iio
    f = np.asarray(field)
    if f.ndim == 3:
        f = f[f.shape[0] // 2]
    img = colorize(f, cmap, clim)
    if scale > 1:
        img = np.repeat(np.repeat(img, scale, axis=0), scale, axis=1)
    iio.imwrite(path, img)
    return img.shape[1], img.shape[0]
