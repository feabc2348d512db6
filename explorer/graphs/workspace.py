"""The Graphs workspace: generator dock, VisPy graph view, distance heatmap and histograms.

Views only: graphs, layouts, overlays, shortest paths and clustering come from ``kernels.graphs``;
generation, layout and APSP run as :class:`explorer.jobs.FunctionJob` off the GUI thread with a
progress bar and a Cancel button (Esc); the force layout streams live (:mod:`.layout_panel`).
Every vertex and edge is drawn at any size (:mod:`.canvas`).  Click a vertex: colour by its
distance row (one BFS / SSSP, :mod:`kernels.graphs.overlays`); click a second: the shortest path from
that row's predecessors.  Drag a vertex while the force layout runs or is paused: it is pinned there.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout,
                             QHBoxLayout, QLabel, QMainWindow, QProgressBar, QPushButton, QSpinBox,
                             QTabWidget, QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.graphs import generators as gen
from kernels.graphs.apsp import METHODS, apsp, sentinel
from kernels.graphs.overlays import overlay_values
from kernels.graphs.stats import degree_histogram, path_length_histogram, summary

from ..colorbar import ColorBar, bar_axes, hover, plot_colorbar, set_bar_label
from ..widgets import ElidedLabel, MessageBar, add_dock, busy_cursor, page_of, plot_panel, scrolled
from ..workspace_api import Workspace
from .canvas import GraphCanvas
from .files import GraphFilesMixin
from .layout_panel import LayoutPanel
from .lecture_docks import LectureDocks, shrinkable_combos
from .overlay_panel import COLOR_BY, OverlayPanel  # noqa: F401  (COLOR_BY: the colour-by texts)
from .prepare import prepare_graph, run_abandonable
from ..jobs import FunctionJob

GEN_LABELS = {k: gen.LABELS.get(k, k) for k in gen.GENERATORS}


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
        self._src_row = None                # OverlayValues of the distance from the clicked vertex
        self._overlay = None                # the OverlayValues shown
        self._press = None                  # (vertex, moved) of a left press on a vertex
        self._camera_touched = False        # the user moved the camera since the graph was shown
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
        self.canvas.on_pick = None          # clicks and drags: _on_mouse_press / _on_mouse_release
        self.canvas.on_camera_change = self._report_shown
        self.colorbar = ColorBar()
        self.colorbar.hide()
        row = QHBoxLayout()
        row.setSpacing(2)
        row.addWidget(self.canvas.native, 1)
        row.addWidget(self.colorbar)
        cl.addLayout(row, 1)
        ev = self.canvas.canvas.events
        ev.mouse_move.connect(self._on_mouse_move)
        ev.mouse_press.connect(self._on_mouse_press)
        ev.mouse_release.connect(self._on_mouse_release)
        ev.mouse_wheel.connect(lambda _e: setattr(self, "_camera_touched", True))
        # one line, cut with "…" (the whole text in its tooltip): a wrapped hint took the view's
        # height, and its width held the view narrow in lecture mode
        self.info = ElidedLabel("Generate a graph to start.")
        cl.addWidget(self.info)
        self.setCentralWidget(central)
        self._build_controls(n)
        self._build_plots()
        self.lecture_docks = LectureDocks(self, self.controls, self.plots)

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
        self.sp_n = tip(QSpinBox(), "Number of vertices N (every vertex and edge is drawn at any size)")
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
        self.overlay = OverlayPanel()
        self.cb_color = self.overlay.cb_color
        self.overlay.changed.connect(self._recolor)
        self.layout_panel = LayoutPanel(self.backend, message=self.message_bar.show_message)
        self.layout_panel.positions.connect(self._on_positions)
        self.layout_panel.state_changed.connect(self._on_layout_state)
        for label, wid in (("generator", self.cb_gen), ("N", self.sp_n), ("k / m", self.sp_k), ("p", self.sp_p),
                           ("α", self.sp_alpha), ("", self.ck_ring), ("weights", self.cb_weights),
                           ("seed", self.sp_seed), ("APSP", self.cb_method)):
            form.addRow(label, wid)
        form.addRow(self.overlay)
        form.addRow(self.layout_panel)
        self._form = form
        self._tips = {w: w.toolTip() for w in (self.sp_k, self.sp_p, self.sp_alpha, self.ck_ring, self.sp_seed)}
        self.cb_gen.currentIndexChanged.connect(lambda _i: self._update_generator_controls())
        self._update_generator_controls()
        self._nonessential = (self.sp_alpha, self.ck_ring, self.cb_weights, self.sp_seed, self.cb_method,
                              self.layout_panel.sp_iter)
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
        self.stats.setMinimumWidth(1)
        self.stats.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.stats)
        shrinkable_combos(w)
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
        """The controls by ``set_parameters``' names (sessions and settings store this)."""
        prm = self._params()
        return {"generator": prm["kind"], "n": prm["n"], "k": prm["k"], "p": prm["p"], "alpha": prm["alpha"],
                "ring": prm["ring"], "weights": self.cb_weights.currentText(), "seed": prm["seed"],
                "method": self.cb_method.currentText(), "layout": self.layout_panel.name(),
                "iterations": self.layout_panel.sp_iter.value(), "color_by": self.overlay.name(),
                "density": self.overlay.density()}

    @staticmethod
    def _check_params(prm) -> dict:
        """A stored ``control_params`` dict, or InvalidParameter when it names an unknown generator or
        APSP method."""
        if not isinstance(prm, dict) or prm.get("generator") not in GEN_LABELS or prm.get("method", "cpu") not in METHODS:
            raise InvalidParameter("the session names an unknown generator or APSP method")
        return prm

    def set_parameters(self, **kw):
        """Set controls by name (generator, n, k, p, alpha, ring, weights, seed, method, layout,
        iterations, color_by, density); an unknown layout or colour-by (a newer session) is skipped."""
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
        if isinstance(kw.get("layout"), str):
            self.layout_panel.set_name(kw["layout"])
        if isinstance(kw.get("iterations"), int):
            self.layout_panel.sp_iter.setValue(kw["iterations"])
        if isinstance(kw.get("color_by"), str):
            self.overlay.set_name(kw["color_by"])
        if "density" in kw:
            self.overlay.ck_density.setChecked(bool(kw["density"]))

    def _jobs(self) -> list:
        """The running jobs: the workspace's own, the live layout's and the sweep tabs'."""
        return [j for j in (self.job, self.layout_panel.job, *(w.job for w in self._sweeps.values()))
                if j is not None]

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
        """Stop every running computation of the workspace (Esc): the live layout, the sweep tabs'."""
        self.layout_panel.cancel()
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
            # the generators poll ``cancelled``; run_abandonable ends the job at once even inside a chunk
            g = run_abandonable(lambda: gen.generate(
                prm["kind"], prm["n"], k=prm["k"], p=prm["p"], alpha=prm["alpha"], ring=prm["ring"],
                seed=prm["seed"], cancel=cancelled), cancelled)
            if weights != "none":
                g = gen.with_weights(g, weights, seed=prm["seed"])
            progress(0.3)
            return self._prepare(g, progress, cancelled)

        self._start("Generate", work, self._show_graph)

    def _prepare(self, g, progress, cancelled):
        """Layout start positions + local clustering (worker thread; :func:`.prepare.prepare_graph`)."""
        return prepare_graph(g, self.layout_panel, self.backend, progress, cancelled)

    def _show_graph(self, payload):
        g, pos, lc, gc = payload.graph, payload.pos, payload.local_cc, payload.global_cc
        self.layout_panel.forget()
        self.graph, self.pos, self.local_cc = g, pos, lc
        self.result, self.selected, self.highlighted_path, self._src_row = None, [], [], None
        self.overlay.set_apsp_available(False)
        self.global_cc = gc
        self.canvas.set_graph(pos, g.edges)
        self.canvas.set_path([])
        self._camera_touched = False
        self._recolor()
        if payload.layout is not None:
            self.layout_panel.stream(payload.layout)
        deg = degree_histogram(g.degrees())
        self.deg_plot.clear()
        self.deg_plot.plot(np.arange(deg.size + 1), deg, stepMode="center", fillLevel=0, brush=(60, 110, 170, 150))
        self.path_plot.clear()
        self.heat_img.clear()
        self.heat_bar.setVisible(False)      # shown again with the next APSP
        lay = self.layout_panel.resolved(g).name
        self.info.setText(f"{g.describe()}, layout {lay}. Click a vertex, then another for the shortest path.")
        self.stats.setText(f"global clustering {gc:.4f}\naverage clustering {float(lc.mean()):.4f}")
        self.message_bar.hide() if self.message_bar.level == "error" else None
        self.status_changed.emit({"info": f"graph: N = {g.n:,}, m = {g.m:,}"})
        self._report_shown()

    def _report_shown(self) -> None:
        """The status bar's display field: what the view draws ("all 3 M edges", "… while moving")."""
        if self.graph is not None:
            self.status_changed.emit({"display": self.canvas.shown_text()})

    def _on_positions(self, pos) -> None:
        """New positions from the live layout."""
        if self.graph is not None and len(pos) == self.graph.n:
            self.canvas.set_positions(pos)
            if not self._camera_touched:     # follow the unfolding graph until the user pans or zooms
                self.canvas.scene.fit()
            if self.highlighted_path:
                self.canvas.set_path(self.highlighted_path)

    def _on_layout_state(self, state: str) -> None:
        lay = self.layout_panel.layout_obj
        if lay is not None and state != "running":
            with self.layout_panel.lock:
                self.pos = lay.positions_host()
        if lay is not None and state in ("paused", "done", "stopped"):
            self.info.setText(f"force layout {state} after {lay.iteration} iterations"
                              + (" (drag a vertex to move it, Continue to go on)" if state == "paused" else ""))

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
        self.overlay.set_apsp_available(True)
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

    # ------------------------------------------------------------------ interaction
    def click_node(self, i: int, reset: bool = False):
        """First click: source (colour by its distance row); second: target (the shortest path from
        the row's predecessors)."""
        if self.graph is None:
            return
        i = int(i)
        if reset or len(self.selected) != 1:
            try:
                with busy_cursor():
                    self._src_row = overlay_values(self.graph, "distance", source=i, backend=self.backend)
            except InvalidParameter as exc:
                self.message_bar.show_message(str(exc), "error")
                return
            self.selected = [i]
            self.highlighted_path = []
            self.canvas.set_path([])
            if not reset:
                self.overlay.set_name("distance")
            self.info.setText(f"source {i}: click another vertex for the shortest path "
                              f"(distance row on the {self._src_row.backend.upper()} in "
                              f"{1e3 * self._src_row.seconds:.1f} ms)")
        else:
            s, t = self.selected[0], i
            self.selected = [s, t]
            self.highlighted_path = self._src_row.path_to(t)
            self.canvas.set_path(self.highlighted_path)
            if self.highlighted_path:
                d = float(self._src_row.values[t])
                length = "" if self._src_row.integer else f", length {d:.6g}"
                self.info.setText(f"shortest path {s} → {t}: {len(self.highlighted_path) - 1} hops{length}")
            else:
                self.info.setText(f"{t} is not reachable from {s}")
        self._recolor()

    @property
    def shown_overlay(self):
        """The OverlayValues the vertices are coloured by (None: one plain colour)."""
        return self._overlay

    def _recolor(self):
        """Colour the vertices by the chosen overlay (its colour bar beside the view), or one colour
        while the overlay lacks its input (no vertex clicked yet, no APSP)."""
        if self.graph is None or self.canvas.mode != "graph":
            return
        cls = self.overlay.overlay()
        ov = None
        try:
            if cls.needs_source:
                ov = self._src_row
            elif not (cls.needs_apsp and self.result is None):
                ov = overlay_values(self.graph, cls.name, apsp=self.result, backend=self.backend,
                                    local_cc=self.local_cc)
        except InvalidParameter as exc:
            self.message_bar.show_message(str(exc), "error")
        self._overlay = ov
        if ov is None:
            self.canvas.clear_values()
        else:
            self.canvas.set_values(ov.values, label=ov.label, cmap=cls.cmap)
        self.canvas.set_selected(self.selected)
        self.canvas.set_density_overlay(self.overlay.density())
        rng = self.canvas.color_range
        self.colorbar.setVisible(rng is not None)
        if rng is not None:
            self.colorbar.set_colormap(cls.cmap)
            self.colorbar.set_range(*rng)
            self.colorbar.set_label(ov.label)

    # ------------------------------------------------------------------ menus / files
    MENU_TEXT = {"toggle_run": "&Compute APSP", "reset": "&Generate graph", "step_once": None,
                 "open_field": "&Open graph…", "save_field": "&Save graph…",
                 "export_image": "&Export view…"}

    def extra_actions(self):
        """Graph-specific menu entries: (text, method, shortcut, tip)."""
        return [("Export &distances (.npy)…", "export_distances", "Ctrl+D",
                 "Save the all-pairs hop/weight matrix as a NumPy file"),
                ("&Cancel running job", "cancel", "Esc", "Stop the running generation / APSP")]

    # ----------------------------------------------------- caption / lecture
    def set_lecture_mode(self, on: bool) -> None:
        from ..theme import style_axis, style_plot
        self._lecture = bool(on)
        for w in self._nonessential:
            form = self._form if self._form.indexOf(w) >= 0 else w.parentWidget().layout()
            form.setRowVisible(w, not on)
        self.canvas.set_lecture(on)
        for pw in (self.heat, self.deg_plot, self.path_plot):
            pw.setBackground("k" if on else "w")
            style_plot(pw.getPlotItem(), on)
        for ax in bar_axes(self.heat_bar):
            style_axis(ax, on)
        self.bt_apsp.setText("APSP" if on else "Compute APSP")     # the row fits the lecture dock
        (self.lecture_docks.enter if on else self.lecture_docks.leave)()
        self._recolor()

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
        self.layout_panel.shutdown()
        for job in self._jobs():
            job.cancel()
            job.wait(10000)
