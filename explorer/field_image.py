"""Field → RGB image with a named colormap (no GL, no Qt).

The implementation lives in the compute library (:mod:`kernels.field_png`) so that the headless
``ch --export`` needs neither Qt nor VisPy; this module keeps the GUI's import path.
"""
from __future__ import annotations

from kernels.field_png import COLORMAPS, check_colormap, colorize, colormap_table, png_bytes, save_field_png

__all__ = ["COLORMAPS", "check_colormap", "colorize", "colormap_table", "png_bytes", "save_field_png"]
