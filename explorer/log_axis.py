"""A log-scale pyqtgraph axis whose labels stay legible on short plots.

pyqtgraph labels every 1…9 multiple of a decade when a log axis spans less than a few decades,
because then it has no major level and its only level is always drawn: on a plot 100 px high
that is a pile of overlapping labels.  ``LogAxis`` gives the axis a labelled major level of
1·10ᵏ (plus 2· and 5·10ᵏ when it spans fewer than two decades) and puts the other multiples in
an unlabelled-when-crowded minor level; labels read 2, 50, 0.01 … (``1e+06`` style far out).
"""
from __future__ import annotations

import math

import pyqtgraph as pg


def log_ticks(lo: float, hi: float) -> list[tuple[float, list[float]]]:
    """Tick levels in log10 units for the view ``lo … hi`` (log10 units): [(1, major), (None, minor)]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    steps = (1, 2, 5) if hi - lo < 2 else (1,)
    major, minor = [], []
    for k in range(math.floor(lo), math.ceil(hi) + 1):
        for m in range(1, 10):
            v = k + math.log10(m)
            if lo <= v <= hi:
                (major if m in steps else minor).append(v)
    return [(1.0, major), (None, minor)]


def tick_label(v: float) -> str:
    """10**v written shortly: 2, 50, 0.01, 1e+06."""
    x = 10.0 ** v
    return f"{x:.4g}" if 1e-3 <= x < 1e5 else f"{x:.0e}"


class LogAxis(pg.AxisItem):
    """``pg.AxisItem`` with :func:`log_ticks` levels and :func:`tick_label` strings in log mode;
    the minor level is labelled only while its labels fill less than a fifth of the axis."""

    def __init__(self, orientation, **kw):
        super().__init__(orientation, **kw)
        self.setStyle(textFillLimits=[(0, 0.8), (2, 0.2)])

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        return log_ticks(minVal, maxVal)

    def logTickStrings(self, values, scale, spacing):
        return [tick_label(v) for v in values]


def log_axes() -> dict:
    """``axisItems`` for ``addPlot``: LogAxis on the left and bottom (they act only in log mode)."""
    return {"left": LogAxis("left"), "bottom": LogAxis("bottom")}
