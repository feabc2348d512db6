"""A scalar field as a colour-mapped PNG: colormap table, colouring and the PNG writer (no Qt, no VisPy).

Used by the headless ``ch --export`` and (re-exported by ``explorer/field_image.py``) by the GUI.
The colormaps are the Cahn–Hilliard view's (:data:`COLORMAPS`), each given by 33 evenly spaced
RGB control points and interpolated linearly; the points are samples of VisPy's maps of the same
names (``magma``: the view's 9-point approximation), so the picture matches the screen to within a
few levels of 255.  The PNG (8-bit RGB, filter 0, one zlib stream: PNG specification §11–12) is
written through :func:`kernels.fileio.atomic_write`, so a failed write leaves any earlier file.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

from .errors import InvalidParameter
from .fileio import atomic_write

_HEX = {
    "viridis": "440154 470d60 48186a 482374 472d7b 453681 424086 3f4989 3b528b 375a8d 33638d 2f6a8e 2c728e "
               "297a8e 26818e 23898e 21908c 1f988b 1f9f88 21a685 28ae80 31b57b 3ebc74 4cc26c 5dc963 6ece58 "
               "82d34c 96d83f abdc32 c0df24 d5e21a eae51a fde725",
    "coolwarm": "6080eb 6989ee 7192f1 7a9af5 82a3f8 8bacfb 93b3fc 9ab9fb a2bffa aac5f9 b2cbf8 b9d0f6 c1d2f0 "
                "c8d5eb cfd7e6 d7dae1 dedddc e2d8d3 e6d3ca ebcfc0 efcab7 f3c5ae f4bea5 f4b69c f4ae92 f3a589 "
                "f39d7f f19476 ed896d e87e65 e4735c e06953 db5e4b",
    "RdBu": "c0553a c35e45 c66850 c8715b cb7a66 cd8471 d08d7c d39687 d5a092 d8a99d dbb2a8 ddbcb3 e0c5be "
            "e3cfc9 e5d8d5 e8e1e0 ebebeb e0e4e5 d5dddf cad6da c0cfd4 b5c9cf aac2c9 a0bbc4 95b4be 8aadb8 "
            "7fa7b3 75a0ad 6a99a8 5f92a2 558b9c 4a8597 3f7e91",
    "grays": "000000 080808 101010 181818 202020 282828 303030 383838 404040 484848 505050 585858 606060 "
             "686868 707070 787878 808080 878787 8f8f8f 979797 9f9f9f a7a7a7 afafaf b7b7b7 bfbfbf c7c7c7 "
             "cfcfcf d7d7d7 dfdfdf e7e7e7 efefef f7f7f7 ffffff",
    "magma": "000004 070414 0e0824 150c34 1c1044 291152 361160 42126d 4f127b 5c177d 681c7e 752080 812581 "
             "8e297f 9b2e7e a8327c b5367a c13d75 cd436f d94a6a e55064 eb5e63 f06c63 f67962 fb8761 fc966b "
             "fda574 fdb37e fec287 fed195 fde0a3 fdeeb1 fcfdbf",
    "fire": "ffffff ffffef ffffe0 ffffd1 ffffc3 fffeb6 fffda8 fffc9c fffb8f fff984 fff779 fff56e fff264 "
            "ffee5a ffea51 ffe548 ffdf40 ffd938 ffd231 ffca2a ffc124 ffb71e ffac19 ffa014 ff9310 ff850c "
            "ff7609 ff6606 ff5404 ff4102 ff2d01 ff1700 ff0000",
}

#: colormap names, in the order the Cahn–Hilliard view lists them
COLORMAPS = tuple(_HEX)

#: side of the largest image written (pixels): a larger one is refused before any work
MAX_SIDE = 32768 * 4


def colormap_table(name: str) -> np.ndarray:
    """The (33, 3) float RGB control points of colormap ``name`` (0 … 1); unknown names are refused."""
    if name not in _HEX:
        raise InvalidParameter(f"unknown colormap {name!r}: use one of {', '.join(COLORMAPS)}")
    rgb = [[int(h[i:i + 2], 16) / 255.0 for i in (0, 2, 4)] for h in _HEX[name].split()]
    return np.array(rgb, dtype=np.float64)


def check_colormap(name: str) -> str:
    """``name`` if it is a known colormap, else InvalidParameter listing them (for checks before work)."""
    colormap_table(name)
    return name


def colorize(field2d, cmap: str = "viridis", clim: tuple[float, float] | None = (-1.0, 1.0)) -> np.ndarray:
    """Map a 2D field to an (H, W, 3) uint8 image; row 0 is the top of the picture.

    Values are scaled linearly from ``clim`` (default φ ∈ [−1, 1]; ``None``: the field's own range)
    to [0, 1] and clipped; NaN maps to the low end."""
    table = colormap_table(cmap)
    f = np.asarray(field2d, dtype=np.float64)
    if f.ndim != 2:
        raise InvalidParameter(f"colorize needs a 2D field, got shape {f.shape}")
    lo, hi = clim if clim is not None else (float(np.nanmin(f)), float(np.nanmax(f)))
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        lo, hi = (lo, lo + 1.0) if np.isfinite(lo) else (0.0, 1.0)
    x = np.nan_to_num(np.clip((f - lo) / (hi - lo), 0.0, 1.0), nan=0.0)
    pts = np.linspace(0.0, 1.0, table.shape[0])
    rgb = np.stack([np.interp(x, pts, table[:, k]) for k in range(3)], axis=-1)
    return (rgb * 255 + 0.5).astype(np.uint8)


def png_bytes(img: np.ndarray) -> bytes:
    """An (H, W, 3) or (H, W) uint8 image as PNG file bytes (8-bit RGB or grey, no interlace)."""
    a = np.ascontiguousarray(img, dtype=np.uint8)
    if a.ndim == 2:
        colour = 0
    elif a.ndim == 3 and a.shape[2] == 3:
        colour = 2
    else:
        raise InvalidParameter(f"a PNG image must be (H, W) or (H, W, 3), got shape {a.shape}")
    h, w = a.shape[:2]
    if not (0 < h <= MAX_SIDE and 0 < w <= MAX_SIDE):
        raise InvalidParameter(f"a {w} × {h} image is outside 1 … {MAX_SIDE} pixels a side")
    rows = a.reshape(h, -1)
    raw = np.empty((h, rows.shape[1] + 1), dtype=np.uint8)
    raw[:, 0] = 0                                   # filter type 0 (None) on every scanline
    raw[:, 1:] = rows

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    head = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
            + chunk(b"IEND", b""))


def save_field_png(path, field, cmap: str = "viridis", clim=(-1.0, 1.0), scale: int = 1) -> tuple[int, int]:
    """Write a field (2D, or the middle z-slice of 3D) as PNG at ``path`` (atomically); returns
    (width, height).  ``scale`` > 1 repeats every cell as a scale × scale block of pixels."""
    f = np.asarray(field)
    if np.iscomplexobj(f):
        raise InvalidParameter("the field is complex; only real fields can be drawn")
    if f.ndim == 3:
        f = f[f.shape[0] // 2]
    scale = int(scale)
    if scale < 1:
        raise InvalidParameter(f"scale must be ≥ 1 (got {scale})")
    img = colorize(f, cmap, clim)
    if scale > 1:
        img = np.repeat(np.repeat(img, scale, axis=0), scale, axis=1)
    data = png_bytes(img)
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return img.shape[1], img.shape[0]
