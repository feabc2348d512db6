"""Occupancy workspace, "Case study (paper 003)" tab: the unstructured-grid solver of paper 003 run the
paper's original way (one cell per block) and its occupancy-improved way (several cells per block,
fused cell+edge stage), against the NumPy reference; mesh view, times and speed-ups, and the two
versions' occupancy side by side (the paper's Tesla T10 and the GPU here).

The computation lives in :mod:`kernels.occupancy.unstructured`; runs happen off the GUI thread
(:class:`explorer.jobs.FunctionJob`).
"""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QPointF, QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QBrush, QColor, QPainter, QPen, QPicture, QPolygonF
from PyQt6.QtWidgets import (QAbstractItemView, QComboBox, QFormLayout, QFrame, QGroupBox, QHBoxLayout, QHeaderView,
                             QLabel, QPushButton, QScrollArea, QSizePolicy, QSpinBox, QSplitter, QTableWidgetItem,
                             QVBoxLayout, QWidget)

from kernels.errors import ExplorerError
from kernels.occupancy import unstructured as U
from kernels.occupancy.gpu import device_spec

from ..colorbar import hover, plot_colorbar
from ..jobs import FunctionJob
from .kernels_tab import FittedTable, plural

VERSION_LABELS = {"cpu": "CPU reference (NumPy)", "original": "GPU1 — original (1 cell/block)",
                  "improved": "GPU2 — occupancy-improved"}


class MeshItem(pg.GraphicsObject):
    """Filled triangles coloured by a value per cell (drawn once into a QPicture)."""

    def __init__(self):
        super().__init__()
        self.picture = QPicture()
        self._rect = QRectF(0, 0, 1, 1)
        self.n_drawn = 0
        self.cmap = pg.colormap.get("viridis")

    def set_mesh(self, vertices: np.ndarray, cells: np.ndarray, values: np.ndarray | None = None,
                 edges: bool | None = None) -> None:
        n = len(cells)
        if values is None:
            values = np.zeros(n)
        v = np.asarray(values, dtype=np.float64)
        lo, hi = float(np.nanmin(v)), float(np.nanmax(v))
        level = np.clip(((v - lo) / (hi - lo) if hi > lo else np.zeros(n)) * 255, 0, 255).astype(np.int32)
        lut = self.cmap.getLookupTable(0.0, 1.0, 256)
        pic = QPicture()
        p = QPainter(pic)
        draw_edges = n <= 3000 if edges is None else edges
        p.setPen(QPen(QColor(40, 40, 40, 120), 0) if draw_edges else QPen(Qt.PenStyle.NoPen))
        tri = vertices[cells]                                        # (n, 3, 2)
        self.triangles, self.values = tri, v
        for lev in np.unique(level):                                  # one brush per colour
            c = lut[lev]
            p.setBrush(QBrush(QColor(int(c[0]), int(c[1]), int(c[2]))))
            for t in tri[level == lev]:
                p.drawPolygon(QPolygonF([QPointF(float(x), float(y)) for x, y in t]))
        p.end()
        self.prepareGeometryChange()
        self.picture = pic
        self._rect = QRectF(pic.boundingRect())
        self.n_drawn = n
        self.levels = (lo, hi)
        self.update()

    def cell_at(self, x: float, y: float) -> tuple[int, float] | None:
        """(cell, value) of the triangle holding the point (x, y), or None."""
        tri = getattr(self, "triangles", None)
        if tri is None or not len(tri):
            return None
        a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
        p = np.array([x, y])

        def cross(o, u, w):
            return (u[:, 0] - o[:, 0]) * (w[..., 1] - o[:, 1]) - (u[:, 1] - o[:, 1]) * (w[..., 0] - o[:, 0])
        d1, d2, d3 = cross(a, b, p), cross(b, c, p), cross(c, a, p)
        inside = ((d1 >= 0) & (d2 >= 0) & (d3 >= 0)) | ((d1 <= 0) & (d2 <= 0) & (d3 <= 0))
        hit = np.flatnonzero(inside)
        return (int(hit[0]), float(self.values[hit[0]])) if len(hit) else None

    def paint(self, p, *args):
        self.picture.play(p)

    def boundingRect(self):
        return self._rect


def _item(text, tip: str = "") -> QTableWidgetItem:
    it = QTableWidgetItem(str(text))
    it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if tip:
        it.setToolTip(tip)
    return it


class CaseStudyWidget(QWidget):
    """The case-study tab. ``run(version)`` starts a run off the GUI thread; ``run_finished`` /
    ``run_failed`` report it."""

    run_finished = pyqtSignal(dict)
    run_failed = pyqtSignal(str)

    def __init__(self, backend, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.gpu = bool(getattr(backend, "is_gpu", False))
        self.mesh = None
        self.problem = None
        self.results: dict = {}
        self.occ: dict = {}
        self._job = None

        # ---------------------------------------------------------------- controls
        self.cells = QSpinBox()
        self.cells.setRange(100, 4_000_000)
        self.cells.setSingleStep(1000)
        self.cells.setValue(4000)
        self.cells.setToolTip("Triangles in the generated mesh of the unit square (paper 003 gives no size; "
                              "the benchmark spans 2·10³ … 10⁶)")
        self.kind = QComboBox()
        self.kind.addItem("perturbed grid", "perturbed")
        self.kind.addItem("Delaunay (scipy)", "delaunay")
        self.kind.setToolTip("Perturbed grid: squares cut along random diagonals, vertices jittered; Delaunay: "
                             "triangulation of jittered points. Cells are numbered randomly either way")
        self.km1 = QSpinBox()
        self.km1.setRange(1, 10)
        self.km1.setValue(3)
        self.km1.setToolTip("k−1: solution points per face (paper Table 3: 1 … 5); points per cell = "
                            "3(k−1) + inner (Eq. 1)")
        self.inner = QSpinBox()
        self.inner.setRange(0, 16)
        self.inner.setValue(1)
        self.inner.setToolTip("Inner solution points per cell")
        self.params = QSpinBox()
        self.params.setRange(1, 8)
        self.params.setValue(4)
        self.params.setToolTip("#Parameters stored per solution point")
        self.dtype = QComboBox()
        self.dtype.addItem("float64", "float64")
        self.dtype.addItem("float32", "float32")
        self.steps = QSpinBox()
        self.steps.setRange(1, 100_000)
        self.steps.setValue(100)
        self.steps.setToolTip("Iterations of Algorithm 1/2 (cell stage, edge stage, update)")
        form = QFormLayout()
        form.addRow("Triangles", self.cells)
        form.addRow("Mesh", self.kind)
        form.addRow("k−1 (points per face)", self.km1)
        form.addRow("Inner points", self.inner)
        form.addRow("Parameters", self.params)
        form.addRow("Precision", self.dtype)
        form.addRow("Iterations", self.steps)
        self.btn_mesh = QPushButton("New mesh")
        self.btn_mesh.clicked.connect(lambda: self.new_mesh())
        self.btn_cpu = QPushButton("Run CPU reference")
        self.btn_cpu.clicked.connect(lambda: self.run("cpu"))
        self.btn_gpu = QPushButton("Run both GPU versions")
        self.btn_gpu.clicked.connect(lambda: self.run("gpu"))
        self.btn_all = QPushButton("Run all three")
        self.btn_all.clicked.connect(lambda: self.run("all"))
        for b in (self.btn_gpu, self.btn_all):
            b.setEnabled(self.gpu)
            if not self.gpu:
                b.setToolTip("The GPU versions need CuPy and a CUDA GPU")
        btns = QHBoxLayout()
        for b in (self.btn_mesh, self.btn_cpu, self.btn_gpu, self.btn_all):
            btns.addWidget(b)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        gb = QGroupBox("Problem")
        gl = QVBoxLayout(gb)
        gl.addLayout(form)
        gl.addLayout(btns)
        gl.addWidget(self.status)

        # ---------------------------------------------------------------- tables
        self.table = FittedTable(3, 6, min_row=26)
        self.table.setHorizontalHeaderLabels(["version", "ms / iteration", "speed-up vs CPU", "cells / block",
                                              "residual", "max |Δ| vs CPU"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for i, v in enumerate(("cpu", "original", "improved")):
            self.table.setItem(i, 0, _item(VERSION_LABELS[v]))
        self.occ_table = FittedTable(0, 5, min_row=26)
        self.occ_table.setHorizontalHeaderLabels(["kernel (version)", "threads / block", "registers",
                                                  "Tesla T10 (paper)", "here"])
        self.occ_table.verticalHeader().setVisible(False)
        self.occ_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.occ_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.occ_summary = QLabel()
        self.occ_summary.setWordWrap(True)

        # ---------------------------------------------------------------- mesh view
        self.view = pg.PlotWidget()
        self.view.setAspectLocked(True)
        self.view.setBackground("w")
        self.view.setToolTip("Cells coloured by the cell mean of the first parameter")
        self.mesh_item = MeshItem()
        self.view.addItem(self.mesh_item)
        self.mesh_bar = plot_colorbar(self.view.getPlotItem(), "viridis", "cell mean of parameter 1")
        self.report = None               # report(text): the cell under the mouse (status bar)
        hover(self.view, self._describe_cell, lambda t: self.report(t) if self.report is not None else None)
        self.view_title = QLabel()
        self.view_title.setWordWrap(True)     # a long mesh description must not widen the window

        # the problem beside the mesh view (shown once there is a mesh: no empty plot before), the two
        # tables below across the whole width, every row and column shown (no scroll bars)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.addWidget(self.note)
        ll.addWidget(gb)
        ll.addStretch(1)
        # the view takes the height the problem column leaves (its own preferred height would make the
        # page taller than the tab: a scroll bar at 1440 × 900)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.view.setMinimumHeight(200)
        self.view_box = QWidget()
        rl = QVBoxLayout(self.view_box)
        rl.addWidget(self.view_title)
        rl.addWidget(self.view, 1)
        self.view_box.setVisible(False)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.view_box)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        tables = QWidget()
        tl = QVBoxLayout(tables)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(QLabel("<b>Times and speed-ups</b>"))
        tl.addWidget(self.table)
        tl.addWidget(QLabel("<b>Occupancy of both versions</b> (theoretical; cell-stage kernels)"))
        tl.addWidget(self.occ_summary)
        tl.addWidget(self.occ_table)
        for t in (self.table, self.occ_table):
            t.horizontalHeader().setStretchLastSection(True)
        # the page scrolls as a whole where it does not fit (lecture fonts), never inside a table
        page = QWidget()
        pl = QVBoxLayout(page)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.addWidget(split, 1)
        pl.addWidget(tables)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(page)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.scroll)

        self.note.setText(
            "Paper 003 (Solano-Quinde et al. 2011): an unstructured-grid solver whose straightforward GPU "
            "mapping — one cell per thread block, one thread per solution point — runs one warp per block, "
            "so the Tesla T10's 8 blocks per SM give 8 of 32 warps: 25 % occupancy. Packing several cells per "
            "block (and fusing the cell and edge stages) doubles it; the paper reports up to 88× over its CPU "
            "code (Table 3). " + ("" if self.gpu else
                                  "<br><b>No GPU here:</b> the GPU versions need CuPy and a CUDA GPU — the CPU "
                                  "reference, the mesh and the theoretical occupancy work without."))
        for w in (self.km1, self.inner, self.params, self.dtype):
            (w.valueChanged if isinstance(w, QSpinBox) else w.currentIndexChanged).connect(self._invalidate)
        for w in (self.cells, self.kind):
            (w.valueChanged if isinstance(w, QSpinBox) else w.currentIndexChanged).connect(self._invalidate_mesh)
        self.update_occupancy()

    # ------------------------------------------------------------------------ state
    def _config(self) -> dict:
        return {"n_cells": self.cells.value(), "kind": self.kind.currentData(), "k_minus_1": self.km1.value(),
                "inner": self.inner.value(), "n_params": self.params.value(), "dtype": self.dtype.currentData()}

    def _invalidate_mesh(self, *_):
        self.mesh = None
        self._invalidate()

    def _invalidate(self, *_):
        self.problem = None
        self.results = {}
        self._fill_results()
        self.update_occupancy()

    def new_mesh(self, seed=None) -> U.TriMesh:
        c = self._config()
        self.mesh = U.generate_mesh(c["n_cells"], kind=c["kind"], seed=seed)
        self._invalidate()
        self._ensure_problem()
        self.show_solution(self.problem.u0, "initial values")
        return self.mesh

    def _ensure_problem(self) -> U.Problem:
        c = self._config()
        if self.mesh is None:
            self.mesh = U.generate_mesh(c["n_cells"], kind=c["kind"])
        if self.problem is None:
            self.problem = U.make_problem(self.mesh, c["k_minus_1"], c["inner"], c["n_params"],
                                          dtype=np.dtype(c["dtype"]))
        return self.problem

    def show_solution(self, u: np.ndarray, what: str) -> None:
        self.view_box.setVisible(True)
        vals = U.cell_means(u)
        self.mesh_item.set_mesh(self.mesh.vertices, self.mesh.cells, vals)
        self.view.autoRange()
        lo, hi = self.mesh_item.levels
        self.mesh_bar.setLevels((lo, hi if hi > lo else lo + 1e-12))
        self.view_title.setText(f"{self.mesh.describe()} — {what}; cell mean of parameter 1: "
                                f"{lo:.3g} … {hi:.3g} (viridis)")

    def _describe_cell(self, x: float, y: float) -> str:
        hit = self.mesh_item.cell_at(x, y)
        return "" if hit is None else f"cell {hit[0]}: mean of parameter 1 = {hit[1]:.5g}"

    # ------------------------------------------------------------------------ runs
    def busy(self) -> bool:
        return self._job is not None

    def run(self, which: str = "cpu") -> bool:
        """Start ``which`` ("cpu", "original", "improved", "gpu" = both GPU versions, "all") on a
        worker thread; False (with a message) when it cannot start."""
        if self._job is not None:
            return False
        versions = {"gpu": ["original", "improved"], "all": ["cpu", "original", "improved"]}.get(which, [which])
        if any(v != "cpu" for v in versions) and not self.gpu:
            msg = "The GPU versions need CuPy and a CUDA GPU; this session runs on the CPU (NumPy) only."
            self.status.setText(msg)
            self.run_failed.emit(msg)
            return False
        try:
            pb = self._ensure_problem()
        except ExplorerError as exc:
            self.status.setText(str(exc))
            self.run_failed.emit(str(exc))
            return False
        steps = self.steps.value()

        def work():
            out = {}
            for v in versions:
                t0 = time.perf_counter()
                if v == "cpu":
                    u, hist = U.cpu_run(pb, steps)
                    per = (time.perf_counter() - t0) / max(len(hist), 1)
                    out[v] = {"u": u, "hist": hist, "s_per_step": per, "cells_per_block": None}
                else:
                    g = U.GPUSolver(pb, v, "auto")
                    per = g.time_per_step(min(steps, 20))
                    g.reset()
                    u, hist = g.run(steps, check_every=max(1, steps))
                    out[v] = {"u": u, "hist": hist, "s_per_step": per, "cells_per_block": g.cells_per_block,
                              "occupancy": g.occupancy()}
            return out

        self.status.setText(f"Running {', '.join(VERSION_LABELS[v] for v in versions)} for {steps} iterations …")
        for b in (self.btn_cpu, self.btn_gpu, self.btn_all, self.btn_mesh):
            b.setEnabled(False)
        self._job = FunctionJob("the case study", lambda _progress, _cancelled: work())
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self._on_failed)
        self._job.start()
        return True

    def _end_job(self):
        job, self._job = self._job, None
        if job is not None:
            job.wait(5000)
        self.btn_cpu.setEnabled(True)
        self.btn_mesh.setEnabled(True)
        self.btn_gpu.setEnabled(self.gpu)
        self.btn_all.setEnabled(self.gpu)

    def _on_done(self, out: dict):
        self._end_job()
        self.results.update(out)
        last = [v for v in ("improved", "original", "cpu") if v in out][0]
        self.show_solution(out[last]["u"], f"after {self.steps.value()} iterations, {VERSION_LABELS[last]}")
        self._fill_results()
        self.update_occupancy()
        self.status.setText("Done: " + ", ".join(f"{VERSION_LABELS[v]} {r['s_per_step'] * 1e3:.3g} ms/iteration"
                                                 for v, r in out.items()))
        self.run_finished.emit({v: {k: x for k, x in r.items() if k != "u"} for v, r in out.items()})

    def _on_failed(self, msg: str):
        self._end_job()
        self.status.setText(msg)
        self.run_failed.emit(msg)

    def _fill_results(self):
        ref = self.results.get("cpu")
        for i, v in enumerate(("cpu", "original", "improved")):
            r = self.results.get(v)
            cells = ["—"] * 5
            if r is not None:
                cells[0] = f"{r['s_per_step'] * 1e3:.4g}"
                if ref is not None:
                    cells[1] = f"{ref['s_per_step'] / r['s_per_step']:.1f}×"
                cells[2] = str(r["cells_per_block"] or "—") if v != "original" else "1"
                cells[3] = f"{r['hist'][-1]:.3e}" if r["hist"] else "—"
                if ref is not None and ref["u"].shape == r["u"].shape:
                    d = float(np.max(np.abs(r["u"].astype(np.float64) - ref["u"])))
                    cells[4] = f"{d:.1e}"
            for j, t in enumerate(cells):
                self.table.setItem(i, j + 1, _item(t))

    # ------------------------------------------------------------------------ occupancy
    def update_occupancy(self) -> dict:
        """Fill the side-by-side occupancy table: T10 (assumed registers, the paper's packing) and
        the GPU here (the kernels' real registers once they ran) or CC 9.0 assumed on a CPU."""
        c = self._config()
        item = np.dtype(c["dtype"]).itemsize
        real = {}
        for v in ("original", "improved"):
            real.update((self.results.get(v) or {}).get("occupancy") or {})
        t10 = U.case_study_occupancy("1.3", c["k_minus_1"], c["inner"], c["n_params"], item)
        spec, label = None, "CC 9.0 (assumed 32 registers)"
        if self.gpu:
            try:
                spec = device_spec()
                label = f"{spec.examples} (CC {spec.cc})"
            except ExplorerError:
                spec = None
        regs = {k: r["registers"] for k, r in real.items()} or 32
        cpb = (self.results.get("improved") or {}).get("cells_per_block")
        P = U.solution_points(c["k_minus_1"], c["inner"])
        target = spec or "9.0"
        if cpb is None:
            cpb = U.best_cells_per_block(target, P, regs if isinstance(regs, int) else regs.get("celledge_impr", 32),
                                         c["n_params"] * P * item, max_threads=1024)
        here = U.case_study_occupancy(target, c["k_minus_1"], c["inner"], c["n_params"], item, regs=regs,
                                      cells_per_block=cpb)
        rows = []
        for version in ("original", "improved"):
            for name, r10 in t10[version].items():
                rh = here[version][name]
                rows.append((f"{name} ({version})", f"{r10.threads_per_block} / {rh.threads_per_block}",
                             f"{r10.regs_per_thread} / {rh.regs_per_thread}", f"{r10.occupancy:.0%} ({r10.limiter})",
                             f"{rh.occupancy:.0%} ({rh.limiter})"))
        self.occ_table.setRowCount(len(rows))
        self.occ_table.setHorizontalHeaderItem(4, QTableWidgetItem(label))
        for i, row in enumerate(rows):
            for j, t in enumerate(row):
                self.occ_table.setItem(i, j, _item(t, "T10 / here" if j in (1, 2) else ""))
        self.occ = {"t10": t10["occupancy"], "here": here["occupancy"], "label": label,
                    "t10_cells_per_block": t10["cells_per_block"], "cells_per_block": cpb}
        self.occ_summary.setText(
            f"Tesla T10: original {t10['occupancy']['original']:.0%} → improved "
            f"{t10['occupancy']['improved']:.0%} ({t10['cells_per_block']} cells = "
            f"{t10['cells_per_block'] * P} threads per block, the paper's two warps; registers assumed "
            f"{U.T10_ASSUMED_REGS}).  {label}: {here['occupancy']['original']:.0%} → "
            f"{here['occupancy']['improved']:.0%} ({plural(cpb, 'cell')} per block).")
        return self.occ
