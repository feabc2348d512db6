"""The Graphs workspace's first three plot tabs: the distance-matrix heatmap (block-averaged above
1 024 vertices, with its colour bar), the degree and the path-length histograms.

:class:`GraphPlots` is a part that owns the three plots: :meth:`show_graph` draws the degree
histogram of a new graph and clears the rest, :meth:`show_apsp` the heatmap and path lengths of an
APSP result, :meth:`set_lecture` restyles them.  The mouse over them is read out through
``report(text)`` (the status bar), ``result()`` giving the APSP result shown.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from kernels.graphs.apsp import sentinel
from kernels.graphs.data.stats import degree_histogram, path_length_histogram

from ..colorbar import bar_axes, hover, plot_colorbar, set_bar_label
from ..widgets import plot_panel
from .pointer import describe_bar, describe_distance
from ..theme import style_axis, style_plot

#: the heatmap shows at most this many rows and columns (larger matrices: means of blocks)
HEAT_MAX = 1024


def heat_image(dist: np.ndarray, as_float) -> tuple[np.ndarray, int]:
    """(image, block side b): the matrix as float with NaN for unreachable, block-averaged in b×b
    blocks when it has more than :data:`HEAT_MAX` rows (``as_float()``: the full float matrix)."""
    n = dist.shape[0]
    if n <= HEAT_MAX:
        f, b = as_float(), 1
    else:
        b = -(-n // HEAT_MAX)
        m = (n // b) * b
        sub = dist[:m, :m].astype(np.float32)
        if dist.dtype.kind == "u":
            sub[dist[:m, :m] == sentinel(dist.dtype)] = np.nan
        f = np.nanmean(sub.reshape(m // b, b, m // b, b), axis=(1, 3))
    return np.where(np.isfinite(f), f, np.nan), b


class GraphPlots:
    """Distance heatmap, degree and path-length histograms (``heat``, ``deg_plot``, ``path_plot``)."""

    def __init__(self, result, report):
        self.heat = plot_panel("distance matrix (hops)", "target vertex", "source vertex")
        self.heat_img = pg.ImageItem()
        self.heat_img.setColorMap(pg.colormap.get("viridis"))
        self.heat.addItem(self.heat_img)
        self.heat.invertY(True)
        self.heat_bar = plot_colorbar(self.heat.getPlotItem(), "viridis", "hops")
        hover(self.heat, lambda x, y: describe_distance(result(), x, y), report)
        self.deg_plot = plot_panel("degree distribution", "degree", "vertices")
        hover(self.deg_plot, lambda x, y: describe_bar(self.deg_plot, x, "degree", "vertices"), report)
        self.path_plot = plot_panel("path-length distribution", "hops", "ordered pairs")
        hover(self.path_plot, lambda x, y: describe_bar(self.path_plot, x, "hops", "ordered pairs"), report)
        for pw in (self.heat, self.deg_plot, self.path_plot):     # empty: 0 … 1, not pyqtgraph's ±0.5
            pw.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def tabs(self) -> list:
        """(widget, tab text) of the three plots."""
        return [(self.heat, "Distances"), (self.deg_plot, "Degrees"), (self.path_plot, "Path lengths")]

    def show_graph(self, g) -> None:
        deg = degree_histogram(g.degrees())
        self.deg_plot.clear()
        self.deg_plot.plot(np.arange(deg.size + 1), deg, stepMode="center", fillLevel=0, brush=(60, 110, 170, 150))
        self.deg_plot.enableAutoRange()
        self.path_plot.clear()
        self.heat_img.clear()
        self.heat_bar.setVisible(False)      # shown again with the next APSP

    def show_apsp(self, res) -> None:
        dist = res.dist
        f, b = heat_image(dist, res.as_float)
        top = float(np.nanmax(f)) if np.isfinite(f).any() else 1.0
        self.heat_img.setImage(f.T, autoLevels=False, levels=(0, top))
        self.heat_bar.setLevels((0.0, top if top > 0 else 1.0))
        self.heat_bar.setVisible(True)
        set_bar_label(self.heat_bar, "hops" if dist.dtype.kind == "u" else "path length (weights)")
        # axes in vertex indices even when b×b blocks are averaged
        self.heat_img.setRect(0, 0, f.shape[0] * b, f.shape[1] * b)
        self.heat.setTitle("distance matrix (hops)" if b == 1 else f"distance matrix (hops, mean of {b}×{b} blocks)")
        self.heat.enableAutoRange()
        if dist.dtype.kind == "u":
            h = path_length_histogram(dist)
            self.path_plot.clear()
            self.path_plot.plot(np.arange(h.size + 1), h, stepMode="center", fillLevel=0, brush=(170, 90, 60, 150))
            self.path_plot.enableAutoRange()

    def set_lecture(self, on: bool) -> None:
        for pw in (self.heat, self.deg_plot, self.path_plot):
            pw.setBackground("k" if on else "w")
            style_plot(pw.getPlotItem(), on)
        for ax in bar_axes(self.heat_bar):
            style_axis(ax, on)
