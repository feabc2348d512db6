"""The Graphs workspace: generator dock, VisPy graph view, distance heatmap and histograms.

Views only: graphs, shortest paths and clustering come from ``kernels.graphs``; generation, layout
and APSP run as :class:`explorer.jobs.FunctionJob` off the GUI thread with a progress bar and a Cancel button.
Click a vertex: colour by hop distance from it; click a second: its shortest path is drawn.
"""
from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout,
                             QHBoxLayout, QLabel, QMainWindow, QProgressBar, QPushButton, QSpinBox,
                             QTabWidget, QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.graphs import generators as gen
from kernels.graphs.apsp import METHODS, apsp, path_between, sentinel
from kernels.graphs.clustering import global_clustering, local_clustering
from kernels.graphs.stats import degree_histogram, path_length_histogram, summary

from ..colorbar import ColorBar, bar_axes, hover, plot_colorbar, set_bar_label
from ..widgets import MessageBar, add_dock, page_of, plot_panel, scrolled
from ..workspace_api import Workspace
from .canvas import AGGREGATE_N, GraphCanvas
from .files import GraphFilesMixin
from ..jobs import FunctionJob

GEN_LABELS = {k: gen.LABELS.get(k, k) for k in gen.GENERATORS}
COLOR_BY = ("degree", "local clustering", "distance from clicked")
LAYOUT_MAX_N = 1500          # force layout only below this


class GraphsWorkspace(GraphFilesMixin, Workspace, QMainWindow):
    CAPABILITIES = frozenset({"open_field", "save_field", "export_image", "export_plots", "toggle_run", "reset",
                              "set_plots_visible", "set_controls_visible", "apply_preset", "figures", "sessions"})
    status_changed = pyqtSignal(dict)
    job_finished = pyqtSignal(str)          # job name, for tests and scripts

    def __init__(self, backend, parent=None, n: int = 300):
        super().__init__(parent)
        self.setWindowFlags(Qt.WindowType.Widget)
        self.backend = backend
        self.graph = None
        self.pos = None
        self.result = None                  # APSPResult
        self.local_cc = None
        self.selected: list[int] = []
        self.highlighted_path: list[int] = []
        self.job: FunctionJob | None = None
        self._src_row = None
        self.preset: dict | None = None          # last preset applied (named in the caption)
        self._queued_preset: dict | None = None  # applied when the running job ends
        self._then = None                        # run after the next successful job (preset: APSP)
        self._lecture = False
        self.global_cc = float("nan")

        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(2, 2, 2, 2)
        self.message_bar = MessageBar()
        cl.addWidget(self.message_bar)
        self.canvas = GraphCanvas(parent=central)
        self.canvas.on_pick = self.click_node
        self.colorbar = ColorBar()
        self.colorbar.hide()
        row = QHBoxLayout()
        row.setSpacing(2)
        row.addWidget(self.canvas.native, 1)
        row.addWidget(self.colorbar)
        cl.addLayout(row, 1)
        self.canvas.canvas.events.mouse_move.connect(self._on_mouse_move)
        self.info = QLabel("Generate a graph to start.")
        self.info.setWordWrap(True)          # long descriptions must not widen the window
        cl.addWidget(self.info)
        self.setCentralWidget(central)
        self._build_controls(n)
        self._build_plots()

    # ------------------------------------------------------------------ UI
    def _build_controls(self, n):
        w = QWidget()
        form = QFormLayout(w)

        def tip(widget, text):
            widget.setToolTip(text)
            return widget

        self.cb_gen = tip(QComboBox(), "Graph generator (paper 000 §4.1, paper 001 §5.7)")
        for k, v in GEN_LABELS.items():
            self.cb_gen.addItem(v, k)
        self.sp_n = tip(QSpinBox(), "Number of vertices N. Above 5 000 the view shows aggregates.")
        self.sp_n.setRange(3, 2_000_000)
        self.sp_n.setValue(n)
        self.sp_k = tip(QSpinBox(), "Mean degree k (ring, WS, α-model, spatial); BA: edges per new vertex m")
        self.sp_k.setRange(1, 1000)
        self.sp_k.setValue(4)
        self.sp_p = tip(QDoubleSpinBox(), "Probability: WS rewiring, ER edge, α-model random link")
        self.sp_p.setDecimals(6)
        self.sp_p.setRange(0, 1)
        self.sp_p.setSingleStep(0.01)
        self.sp_p.setValue(0.1)
        self.sp_alpha = tip(QDoubleSpinBox(), "α of Watts' α-model (0: only triangle-closing links)")
        self.sp_alpha.setRange(0, 100)
        self.sp_alpha.setValue(1.0)
        self.ck_ring = tip(QCheckBox("ring substrate"), "α-model on a ring (paper 000 type 1: always connected)")
        self.ck_ring.setChecked(True)
        self.cb_weights = tip(QComboBox(), "Weighted variant for Floyd–Warshall / SSSP")
        self.cb_weights.addItems(["none", "int", "float"])
        self.sp_seed = tip(QSpinBox(), "Random seed: the same seed gives the same graph")
        self.sp_seed.setRange(0, 2 ** 31 - 1)
        self.sp_seed.setValue(1)
        self.cb_method = tip(QComboBox(), "All-pairs shortest paths: hover a method for its paper and section")
        for m, cls in METHODS.items():
            self.cb_method.addItem(m)
            self.cb_method.setItemData(self.cb_method.count() - 1, cls.help, Qt.ItemDataRole.ToolTipRole)
            if not cls.available(self.backend):
                self.cb_method.model().item(self.cb_method.count() - 1).setEnabled(False)
        self.cb_color = tip(QComboBox(), "Node colour")
        self.cb_color.addItems(COLOR_BY)
        self.cb_color.currentTextChanged.connect(lambda _t: self._recolor())
        for label, wid in (("generator", self.cb_gen), ("N", self.sp_n), ("k / m", self.sp_k), ("p", self.sp_p),
                           ("α", self.sp_alpha), ("", self.ck_ring), ("weights", self.cb_weights),
                           ("seed", self.sp_seed), ("APSP", self.cb_method), ("colour by", self.cb_color)):
            form.addRow(label, wid)
        self._form = form
        self._tips = {w: w.toolTip() for w in (self.sp_k, self.sp_p, self.sp_alpha, self.ck_ring, self.sp_seed)}
        self.cb_gen.currentIndexChanged.connect(lambda _i: self._update_generator_controls())
        self._update_generator_controls()
        self._nonessential = (self.sp_alpha, self.ck_ring, self.cb_weights, self.sp_seed, self.cb_method)
        self.bt_gen = tip(QPushButton("Generate"), "Build the graph (Ctrl+R)")
        self.bt_apsp = tip(QPushButton("Compute APSP"), "All-pairs shortest paths with the chosen method (Space)")
        self.bt_cancel = tip(QPushButton("Cancel"), "Stop the running computation")
        self.bt_cancel.setEnabled(False)
        self.bt_gen.clicked.connect(self.generate)
        self.bt_apsp.clicked.connect(self.compute)
        self.bt_cancel.clicked.connect(self.cancel)
        row = QHBoxLayout()
        for b in (self.bt_gen, self.bt_apsp, self.bt_cancel):
            row.addWidget(b)
        form.addRow(row)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        form.addRow(self.progress)
        self.stats = QLabel("")
        self.stats.setWordWrap(True)
        self.stats.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.stats)
        self.controls = add_dock(self, "Graph", "graphControls", w, "left", closable=True)

    def _build_plots(self):
        self.tabs = QTabWidget()
        self.heat = plot_panel("distance matrix (hops)", "target vertex", "source vertex")
        self.heat_img = pg.ImageItem()
        self.heat_img.setColorMap(pg.colormap.get("viridis"))
        self.heat.addItem(self.heat_img)
        self.heat.invertY(True)
        self.heat_bar = plot_colorbar(self.heat.getPlotItem(), "viridis", "hops")
        hover(self.heat, self._describe_distance, self._report_cursor)
        self.deg_plot = plot_panel("degree distribution", "degree", "vertices")
        hover(self.deg_plot, lambda x, y: self._describe_bar(self.deg_plot, x, "degree", "vertices"),
              self._report_cursor)
        self.path_plot = plot_panel("path-length distribution", "hops", "ordered pairs")
        hover(self.path_plot, lambda x, y: self._describe_bar(self.path_plot, x, "hops", "ordered pairs"),
              self._report_cursor)
        self.tabs.addTab(self.heat, "Distances")
        self.tabs.addTab(self.deg_plot, "Degrees")
        self.tabs.addTab(self.path_plot, "Path lengths")
        from .reproduce import ReproducePanel
        self.reproduce = ReproducePanel(self.backend, message=self.message_bar.show_message)
        self.tabs.addTab(scrolled(self.reproduce), "Reproduce (paper 000)")
        from .cc_timing import ClusteringTimingPanel
        self.cc_timing = ClusteringTimingPanel(self.backend, message=self.message_bar.show_message)
        self.tabs.addTab(scrolled(self.cc_timing), "Clustering timings (paper 001)")
        from .bfs_evolution import BFSEvolutionPanel, BlockSweepPanel
        from .fw_family import FWFamilyPanel
        from .sssp_table import SSSPTablePanel
        msg = self.message_bar.show_message
        self.bfs_evolution = BFSEvolutionPanel(self.backend, message=msg)
        self.tabs.addTab(scrolled(self.bfs_evolution), "BFS kernels (paper 000)")
        self.block_sweep = BlockSweepPanel(self.backend, message=msg)
        self.tabs.addTab(scrolled(self.block_sweep), "Block sweep (paper 000)")
        self.sssp_table = SSSPTablePanel(self.backend, message=msg)
        self.tabs.addTab(scrolled(self.sssp_table), "SSSP (paper 004)")
        self.fw_family = FWFamilyPanel(self.backend, message=msg)
        self.tabs.addTab(scrolled(self.fw_family), "Floyd–Warshall family (papers 002, 004)")
        #: the sweep tabs by their settings / session key
        self._sweeps = {"reproduce": self.reproduce, "cc_timing": self.cc_timing, "bfs_evolution": self.bfs_evolution,
                        "block_sweep": self.block_sweep, "sssp_table": self.sssp_table, "fw_family": self.fw_family}
        self.plots = add_dock(self, "Plots", "graphPlots", self.tabs, "right", closable=True)

    def show_tab(self, panel) -> int:
        """Bring the plot tab holding ``panel`` (a plot or a sweep tab's page) to the front; its index."""
        for i in range(self.tabs.count()):
            if page_of(self.tabs.widget(i)) is panel:
                self.tabs.setCurrentIndex(i)
                return i
        raise KeyError("not a tab of the Graphs workspace")

    def _update_generator_controls(self) -> None:
        """Grey out the parameters the chosen generator ignores (``generators.USES``) and name what
        k means for it (BA: edges per new vertex m)."""
        kind = self.cb_gen.currentData()
        uses = gen.USES.get(kind, ())
        label = GEN_LABELS.get(kind, kind)
        for key, w in (("k", self.sp_k), ("p", self.sp_p), ("alpha", self.sp_alpha), ("ring", self.ck_ring),
                       ("seed", self.sp_seed)):
            w.setEnabled(key in uses)
            w.setToolTip(self._tips[w] if key in uses else f"{self._tips[w]}\n(not used by {label})")
        k_label = self._form.labelForField(self.sp_k)
        if k_label is not None:
            k_label.setText("m" if kind == "ba" else "k")
        if kind in gen.K_MEANING:
            self.sp_k.setToolTip(f"{label}: {gen.K_MEANING[kind]}")

    # ------------------------------------------------------------------ jobs
    def _params(self):
        return dict(kind=self.cb_gen.currentData(), n=self.sp_n.value(), k=self.sp_k.value(), p=self.sp_p.value(),
                    alpha=self.sp_alpha.value(), ring=self.ck_ring.isChecked(), seed=self.sp_seed.value())

    def control_params(self) -> dict:
        """The generator controls by ``set_parameters``' names (sessions and settings store this)."""
        prm = self._params()
        return {"generator": prm["kind"], "n": prm["n"], "k": prm["k"], "p": prm["p"], "alpha": prm["alpha"],
                "ring": prm["ring"], "weights": self.cb_weights.currentText(), "seed": prm["seed"],
                "method": self.cb_method.currentText()}

    @staticmethod
    def _check_params(prm) -> dict:
        """A stored ``control_params`` dict, or InvalidParameter when it names an unknown generator or
        APSP method."""
        if not isinstance(prm, dict) or prm.get("generator") not in GEN_LABELS or prm.get("method", "cpu") not in METHODS:
            raise InvalidParameter("the session names an unknown generator or APSP method")
        return prm

    def set_parameters(self, **kw):
        """Set generator controls by name (generator, n, k, p, alpha, ring, weights, seed, method)."""
        if "generator" in kw:
            self.cb_gen.setCurrentIndex(self.cb_gen.findData(kw["generator"]))
        for key, wid in (("n", self.sp_n), ("k", self.sp_k), ("p", self.sp_p), ("alpha", self.sp_alpha),
                         ("seed", self.sp_seed)):
            if key in kw:
                wid.setValue(kw[key])
        if "ring" in kw:
            self.ck_ring.setChecked(bool(kw["ring"]))
        if "weights" in kw:
            self.cb_weights.setCurrentText(kw["weights"])
        if "method" in kw:
            self.cb_method.setCurrentText(kw["method"])

    def _jobs(self) -> list:
        """The running jobs: the workspace's own and the sweep tabs' (Reproduce, Clustering timings)."""
        return [j for j in (self.job, *(w.job for w in self._sweeps.values())) if j is not None]

    def busy(self) -> bool:
        return bool(self._jobs())

    def _start(self, name, fn, on_done):
        if self.job is not None:
            self.message_bar.show_message("A computation is running: wait for it or press Cancel.", "warning")
            return False
        self.job = FunctionJob(name, fn)
        self.job.progress.connect(lambda f: self.progress.setValue(int(1000 * f)))
        self.job.done.connect(lambda r: self._finish(name, on_done, r))
        self.job.failed.connect(lambda msg: self._finish(name, None, msg, failed=True))
        self.job.cancelled.connect(lambda: self._finish(name, None, None, cancelled=True))
        self.progress.setValue(0)
        self.bt_cancel.setEnabled(True)
        self.bt_gen.setEnabled(False)
        self.bt_apsp.setEnabled(False)
        self.info.setText(f"{name} …")
        self.job.start()
        return True

    def _finish(self, name, on_done, payload, failed=False, cancelled=False):
        job, self.job = self.job, None
        if job is not None:
            job.wait(5000)
        self.bt_cancel.setEnabled(False)
        self.bt_gen.setEnabled(True)
        self.bt_apsp.setEnabled(True)
        self.progress.setValue(1000 if not (failed or cancelled) else 0)
        if failed:
            self.message_bar.show_message(payload, "error")
            self.info.setText(f"{name} failed.")
        elif cancelled:
            self.message_bar.show_message(f"{name} cancelled.", "info")
            self.info.setText(f"{name} cancelled.")
        else:
            try:
                on_done(payload)
            except Exception as exc:  # keep the app alive and say what went wrong
                import traceback
                traceback.print_exc()
                self.message_bar.show_message(f"{name}: could not show the result ({exc})", "error")
        then, self._then = self._then, None
        self.job_finished.emit(name)
        if self._queued_preset is not None:
            p, self._queued_preset = self._queued_preset, None
            self.apply_preset(p)
        elif then is not None and not (failed or cancelled):
            then()

    def cancel(self):
        """Stop every running computation of the workspace (Esc), the sweep tabs' included."""
        for job in self._jobs():
            job.cancel()

    # ------------------------------------------------------------------ actions
    def generate(self):
        prm = self._params()
        weights = self.cb_weights.currentText()
        try:                                          # validate before work starts
            if prm["kind"] in ("ring", "ws", "alpha"):
                gen._check_k(prm["n"], prm["k"])
            gen._check_p(prm["p"])
        except InvalidParameter as exc:
            self.message_bar.show_message(str(exc), "error")
            return

        def work(progress, cancelled):
            g = gen.generate(prm["kind"], prm["n"], k=prm["k"], p=prm["p"], alpha=prm["alpha"], ring=prm["ring"],
                             seed=prm["seed"])
            if weights != "none":
                g = gen.with_weights(g, weights, seed=prm["seed"])
            progress(0.3)
            return self._prepare(g, progress, cancelled)

        self._start("Generate", work, self._show_graph)

    def _prepare(self, g, progress, cancelled):
        """Layout + local clustering (worker thread)."""
        pos = g.positions
        if pos is None or g.name.startswith("Watts α") and g.n <= LAYOUT_MAX_N and not g.params.get("ring"):
            if g.n <= LAYOUT_MAX_N:
                import networkx as nx
                from kernels.graphs.graph import to_networkx
                d = nx.spring_layout(to_networkx(g), seed=1, iterations=50)
                pos = np.array([d[i] for i in range(g.n)], np.float32)
            else:
                rng = np.random.default_rng(0)
                pos = rng.uniform(-1, 1, (g.n, 2)).astype(np.float32)
        if cancelled():
            raise InterruptedError
        progress(0.8)
        be = self.backend if self.backend.is_gpu else None
        lc = local_clustering(g, be)
        return g, pos, lc, global_clustering(g, be)

    def _show_graph(self, payload):
        g, pos, lc, gc = payload
        self.graph, self.pos, self.local_cc = g, pos, lc
        self.result, self.selected, self.highlighted_path, self._src_row = None, [], [], None
        self.global_cc = gc
        self.canvas.set_graph(pos, g.edges if g.n <= AGGREGATE_N else np.zeros((0, 2), np.int32))
        self._recolor()
        if self.canvas.mode == "aggregate":                 # the density of vertex positions
            self.colorbar.set_range(*self.canvas.density.clim)
            self.colorbar.set_label("ln(1 + vertices per bin)")
            self.colorbar.show()
        deg = degree_histogram(g.degrees())
        self.deg_plot.clear()
        self.deg_plot.plot(np.arange(deg.size + 1), deg, stepMode="center", fillLevel=0, brush=(60, 110, 170, 150))
        self.path_plot.clear()
        self.heat_img.clear()
        self.heat_bar.setVisible(False)      # shown again with the next APSP
        agg = " — aggregate view (density of vertex positions)" if g.n > AGGREGATE_N else ""
        self.info.setText(f"{g.describe()}{agg}. Click a vertex, then another for the shortest path.")
        self.stats.setText(f"global clustering {gc:.4f}\naverage clustering {float(lc.mean()):.4f}")
        self.message_bar.hide() if self.message_bar.level == "error" else None
        self.status_changed.emit({"info": f"graph: N = {g.n:,}, m = {g.m:,}"})

    def compute(self):
        if self.graph is None:
            self.message_bar.show_message("Generate or open a graph first.", "warning")
            return
        g, method, be = self.graph, self.cb_method.currentText(), self.backend

        def work(progress, cancelled):
            return apsp(g, method, backend=be, progress=progress, cancel=cancelled)

        self._start("APSP", work, self._show_apsp)

    def _show_apsp(self, res):
        self.result = res
        s = summary(res.dist)
        self._apsp_summary = s
        dist = res.dist
        n = dist.shape[0]
        # heatmap: block-averaged above 1024 vertices (aggregate view)
        f = res.as_float() if n <= 1024 else None
        b = 1
        if f is None:
            b = -(-n // 1024)
            m = (n // b) * b
            sub = dist[:m, :m].astype(np.float32)
            if dist.dtype.kind == "u":
                sub[dist[:m, :m] == sentinel(dist.dtype)] = np.nan
            f = np.nanmean(sub.reshape(m // b, b, m // b, b), axis=(1, 3))
        f = np.where(np.isfinite(f), f, np.nan)
        top = float(np.nanmax(f)) if np.isfinite(f).any() else 1.0
        self.heat_img.setImage(f.T, autoLevels=False, levels=(0, top))
        self.heat_bar.setLevels((0.0, top if top > 0 else 1.0))
        self.heat_bar.setVisible(True)
        set_bar_label(self.heat_bar, "hops" if dist.dtype.kind == "u" else "path length (weights)")
        # axes in vertex indices even when b×b blocks are averaged
        self.heat_img.setRect(0, 0, f.shape[0] * b, f.shape[1] * b)
        self.heat.setTitle("distance matrix (hops)" if b == 1 else f"distance matrix (hops, mean of {b}×{b} blocks)")
        if dist.dtype.kind == "u":
            h = path_length_histogram(dist)
            self.path_plot.clear()
            self.path_plot.plot(np.arange(h.size + 1), h, stepMode="center", fillLevel=0, brush=(170, 90, 60, 150))
        mp = s["mean_path_length"]
        conn = "" if s["connected"] else f" (disconnected: {100 * s['reachable_fraction']:.1f} % of pairs reachable)"
        self.stats.setText(f"global clustering {self.global_cc:.4f}\naverage clustering {float(self.local_cc.mean()):.4f}\n"
                           f"mean shortest path {mp:.4f}{conn}\ndiameter {s['diameter']}\n"
                           f"APSP {res.method}: {res.seconds:.3f} s ({dist.dtype})")
        self.info.setText(f"APSP done in {res.seconds:.3f} s ({res.method}).")
        self.status_changed.emit({"info": f"graph: N = {self.graph.n:,}, m = {self.graph.m:,}, "
                                          f"mean path {mp:.3f}, diameter {s['diameter']}"})
        if self.selected:
            self.click_node(self.selected[0], reset=True)

    # ------------------------------------------------------------------ value under the mouse
    # ------------------------------------------------------------------ interaction
    def _row(self, s: int) -> np.ndarray:
        """Hop counts from s: the APSP row when computed, else one BFS (scipy)."""
        if self.result is not None and self.result.dist.dtype.kind == "u":
            return self.result.dist[s]
        from scipy.sparse.csgraph import shortest_path as sp
        from kernels.graphs.graph import Graph
        csr = Graph(self.graph.n, self.graph.edges).csr()
        d = sp(csr.to_scipy(weighted=False), method="D", unweighted=True, indices=[s])[0]
        out = np.full(csr.n, 65535 if csr.n > 255 else 255, np.uint16 if csr.n > 255 else np.uint8)
        out[np.isfinite(d)] = d[np.isfinite(d)]
        return out

    def click_node(self, i: int, reset: bool = False):
        """First click: source (colour by distance); second: target (shortest path drawn)."""
        if self.graph is None:
            return
        if reset or len(self.selected) != 1:
            self.selected = [int(i)]
            self.highlighted_path = []
            self._src_row = self._row(int(i))
            self.canvas.set_path([])
            if not reset:
                self.cb_color.setCurrentText("distance from clicked")
            self.info.setText(f"source {i}: click another vertex for the shortest path")
        else:
            s, t = self.selected[0], int(i)
            self.selected = [s, t]
            self.highlighted_path = path_between(self.graph, s, t, self.result)
            self.canvas.set_path(self.highlighted_path)
            if self.highlighted_path:
                r = self.result
                length = (f", length {float(r.dist[s, t]):.6g} (predecessors of {r.method})"
                          if r is not None and r.pred is not None and r.weighted else "")
                self.info.setText(f"shortest path {s} → {t}: {len(self.highlighted_path) - 1} hops{length}")
            else:
                self.info.setText(f"{t} is not reachable from {s}")
        self._recolor()

    def _recolor(self):
        if self.graph is None or self.canvas.mode != "graph":
            return
        mode = self.cb_color.currentText()
        if mode == "degree":
            v = self.graph.degrees().astype(float)
        elif mode == "local clustering":
            v = self.local_cc
        elif self._src_row is not None:
            row = self._src_row
            v = row.astype(float)
            v[row == sentinel(row.dtype)] = np.nan
        else:
            v = None
        self.canvas.set_colors(v, selected=self.selected)
        rng = self.canvas.color_range
        self.colorbar.setVisible(rng is not None)
        if rng is not None:
            label = f"hops from vertex {self.selected[0]}" if mode == "distance from clicked" and self.selected \
                else mode
            self.colorbar.set_range(*rng)
            self.colorbar.set_label(label)

    # ------------------------------------------------------------------ menus / files
    MENU_TEXT = {"toggle_run": "&Compute APSP", "reset": "&Generate graph", "step_once": None,
                 "open_field": "&Open graph…", "save_field": "&Save graph…",
                 "export_image": "&Export view…"}

    def extra_actions(self):
        """Graph-specific menu entries: (text, method, shortcut, tip)."""
        return [("Export &distances (.npy)…", "export_distances", "Ctrl+D",
                 "Save the all-pairs hop/weight matrix as a NumPy file"),
                ("&Cancel running job", "cancel", "Esc", "Stop the running generation / APSP")]

    # ------------------------------------------------------------------ presets
    def apply_preset(self, preset: dict) -> None:
        """Set the generator controls from ``preset["params"]`` (generator, n, k, p, alpha, ring,
        weights, seed, method, color_by, apsp) and generate; ``apsp``: then compute APSP."""
        prm = dict(preset["params"])
        if self.job is not None:               # finish with the running job first
            self._queued_preset = preset
            self.job.cancel()
            return
        if prm.get("generator", self.cb_gen.currentData()) not in GEN_LABELS:
            raise InvalidParameter(f"unknown generator {prm.get('generator')!r}")
        if "method" in prm and prm["method"] not in METHODS:
            raise InvalidParameter(f"unknown APSP method {prm['method']!r}")
        self.preset = preset
        self.set_parameters(**{k: v for k, v in prm.items() if k in
                               ("generator", "n", "k", "p", "alpha", "ring", "weights", "seed", "method")})
        if "color_by" in prm and prm["color_by"] in COLOR_BY:
            self.cb_color.setCurrentText(prm["color_by"])
        if "tab" in prm:
            self.tabs.setCurrentIndex(int(prm["tab"]))
        self._then = self.compute if prm.get("apsp") else None
        self.generate()

    # ----------------------------------------------------- caption / lecture
    def caption(self) -> str:
        lead = f"{self.preset['name']}: " if self.preset else ""
        paper = f"paper {self.preset['paper']}" if self.preset else "paper 000 §4 (Leist, Playne & Hawick 2009)"
        if self.graph is None:
            return f"{lead}Graphs — generators, all-pairs shortest paths, clustering — {paper}"
        g = self.graph
        extra = ""
        if self.result is not None and getattr(self, "_apsp_summary", None):
            extra = f", mean path {self._apsp_summary['mean_path_length']:.3g}"
        cc = f", clustering {self.global_cc:.3f}" if np.isfinite(self.global_cc) else ""
        return f"{lead}{g.name}: N = {g.n:,}, m = {g.m:,}{cc}{extra} — {paper}"

    def parameter_summary(self) -> str:
        prm = self._params()
        return (f"generator {GEN_LABELS[prm['kind']]}, N = {prm['n']}, k = {prm['k']}, p = {prm['p']:g}, "
                f"α = {prm['alpha']:g}, ring {prm['ring']}, weights {self.cb_weights.currentText()}, "
                f"seed {prm['seed']}, APSP {self.cb_method.currentText()}")

    def set_lecture_mode(self, on: bool) -> None:
        from ..theme import style_axis, style_plot
        self._lecture = bool(on)
        for w in self._nonessential:
            self._form.setRowVisible(w, not on)
        self.canvas.set_lecture(on)
        for pw in (self.heat, self.deg_plot, self.path_plot):
            pw.setBackground("k" if on else "w")
            style_plot(pw.getPlotItem(), on)
        for ax in bar_axes(self.heat_bar):
            style_axis(ax, on)
        self._recolor()

    # --------------------------------------------------------------- settings
    def save_settings(self, s):
        """Generator controls, the Reproduce and Clustering timings tabs, as JSON under this workspace's group."""
        s.setValue("params_json", json.dumps(self.control_params()))
        for key, w in self._sweeps.items():
            s.setValue(f"{key}_json", json.dumps(w.state()))

    def restore_settings(self, s):
        try:
            self.set_parameters(**self._check_params(json.loads(s.value("params_json") or "null")))
        except (InvalidParameter, TypeError, ValueError):
            pass
        for key, w in self._sweeps.items():
            try:
                w.restore(json.loads(s.value(f"{key}_json") or "{}"))
            except (TypeError, ValueError):
                pass

    # --------------------------------------------------------------- sessions
    # ----------------------------------------------------------------- figures
    def toggle_run(self):
        self.compute()

    def reset(self):
        self.generate()

    def plots_visible(self) -> bool:
        return self.plots.isVisible()

    def set_plots_visible(self, on: bool):
        self.plots.setVisible(on)

    def set_controls_visible(self, on: bool):
        self.controls.setVisible(on)

    def shutdown(self):
        for job in self._jobs():
            job.cancel()
            job.wait(10000)
