"""Picking at any size: the vertex nearest to a point, through a uniform grid over the positions.

:class:`SpatialIndex` buckets the n positions into a g × g grid of square cells, g ≈ sqrt(n / 2)
(about two vertices per cell): the vertices are sorted by cell id (row-major) with one
``np.argsort`` and each cell's first index in that order comes from ``np.searchsorted`` (a
counting-sort layout, as in the cell lists of particle codes: Allen & Tildesley, *Computer
Simulation of Liquids*, §5.3.2).  :meth:`~SpatialIndex.nearest` visits only the cells that overlap
the square [x − r, x + r] × [y − r, y + r] — on each grid row they are one contiguous run of the
sorted order — and returns the closest vertex within r, so a query costs O(vertices in those
cells) however large the graph.

Exactness: squared distances are computed in float64 from the float32 positions as
(x_v − x)² + (y_v − y)²; the nearest is the smallest of them, ties going to the smallest vertex
id; a vertex at distance exactly r counts.  The brute-force answer over all vertices, computed the
same way, is identical (tests/test_graph_overlays.py).
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidParameter

#: target vertices per cell (sets the grid size)
PER_CELL = 2.0
#: most cells per side (bounds the offsets array)
MAX_SIDE = 4096


class SpatialIndex:
    """Uniform-grid index over ``pos`` ((n, 2) float32 host array, data units)."""

    def __init__(self, pos):
        self.update(pos)

    def update(self, pos) -> None:
        """Rebuild for new positions (a streaming layout moved them); same contract as ``__init__``."""
        p = np.asarray(pos)
        if p.ndim != 2 or p.shape[1] != 2:
            raise InvalidParameter(f"positions must be an (n, 2) array (got shape {p.shape})")
        p = np.ascontiguousarray(p, dtype=np.float32)
        if p.size and not np.isfinite(p).all():
            raise InvalidParameter("positions must be finite numbers")
        self.pos = p
        self.n = n = p.shape[0]
        if n == 0:
            self.x0 = self.y0 = 0.0
            self.cell, self.side = 1.0, 1
            self.order = np.zeros(0, np.int64)
            self.start = np.zeros(2, np.int64)
            return
        lo = p.min(axis=0).astype(np.float64)
        hi = p.max(axis=0).astype(np.float64)
        extent = float(max(hi[0] - lo[0], hi[1] - lo[1]))
        side = int(min(MAX_SIDE, max(1, math.ceil(math.sqrt(n / PER_CELL)))))
        self.x0, self.y0, self.side = float(lo[0]), float(lo[1]), side
        self.cell = extent / side if extent > 0 else 1.0
        cx = self._cells(p[:, 0].astype(np.float64), self.x0)
        cy = self._cells(p[:, 1].astype(np.float64), self.y0)
        ids = cy * side + cx
        self.order = np.argsort(ids, kind="stable")
        self.start = np.searchsorted(ids[self.order], np.arange(side * side + 1))

    def _cells(self, v, origin):
        """Cell coordinate of values ``v`` along one axis (floor, clipped to the grid; monotone in v)."""
        c = np.floor((np.asarray(v, dtype=np.float64) - origin) / self.cell)
        return np.clip(c, 0, self.side - 1).astype(np.int64)

    def candidates(self, x: float, y: float, radius: float) -> np.ndarray:
        """Vertex ids in the cells that overlap the square of half-width ``radius`` around (x, y)."""
        if self.n == 0:
            return np.zeros(0, np.int64)
        radius = radius * (1 + 1e-9) + 1e-30           # a hair wider than r: rounding never loses a vertex
        cx0, cx1 = (int(c) for c in self._cells([x - radius, x + radius], self.x0))
        cy0, cy1 = (int(c) for c in self._cells([y - radius, y + radius], self.y0))
        if (cx1 - cx0 + 1) * (cy1 - cy0 + 1) >= self.side * self.side // 2:
            return self.order                          # most of the grid: every vertex
        parts = [self.order[self.start[r * self.side + cx0]:self.start[r * self.side + cx1 + 1]]
                 for r in range(cy0, cy1 + 1)]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def nearest(self, x, y, radius) -> int | None:
        """The vertex nearest to (x, y) within ``radius`` (data units; a vertex at exactly
        ``radius`` counts), ties to the smallest id; None when there is none."""
        x, y, radius = float(x), float(y), float(radius)
        if not (math.isfinite(x) and math.isfinite(y)) or not radius >= 0:
            return None
        cand = self.candidates(x, y, radius)
        if cand.size == 0:
            return None
        q = self.pos[cand].astype(np.float64)
        d2 = (q[:, 0] - x) ** 2 + (q[:, 1] - y) ** 2
        ok = d2 <= radius * radius
        if not ok.any():
            return None
        cand, d2 = cand[ok], d2[ok]
        best = d2.min()
        return int(cand[d2 == best].min())
