"""The Graphs workspace: generator dock, VisPy graph view, distance heatmap and histograms.

Views only: graphs, layouts, overlays, shortest paths and clustering come from ``kernels.graphs``;
generation, layout and APSP run as :class:`explorer.jobs.FunctionJob` off the GUI thread with a
progress bar and a Cancel button (Esc); the force layout streams live (:mod:`.layout_panel`).
Every vertex and edge is drawn at any size (:mod:`.canvas`).  Click a vertex: colour by its
distance row (one BFS / SSSP, :mod:`kernels.graphs.algorithms.overlays`); click a second: the shortest path from
that row's predecessors.  Drag a vertex while the force layout runs or is paused: it is pinned there.
"""
from __future__ import annotations

import json

import numpy as np
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QFormLayout, QHBoxLayout, QLabel, QMainWindow, QProgressBar, QPushButton,
                             QTabWidget, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError, InvalidParameter
from kernels.graphs.data import generators as gen
from kernels.graphs.apsp import METHODS, apsp
from kernels.graphs.algorithms.frontier import row_kernel
from kernels.graphs.algorithms.overlays import overlay_values
from kernels.graphs.data.stats import summary

from .. import recent, undo
from ..colorbar import ColorBar
from ..lazy_panel import content_of, panel_property
from ..widgets import ElidedLabel, MessageBar, add_dock, busy_cursor
from ..workspace_api import Workspace
from . import graph_sessions
from .canvas import GraphCanvas
from .files import GRAPH_SUFFIXES, GraphFiles
from .generator_form import GeneratorForm, check_params
from .job_runner import JobRunner
from .graph_plots import GraphPlots
from .layout_panel import LayoutPanel
from .lecture_docks import LectureDocks, shrinkable_combos
from .overlay_panel import OverlayPanel
from .pointer import GraphPointer
from .prepare import prepare_graph, run_abandonable
from .sweep_tabs import DEDICATED, add_sweep_tabs, sweep_figures
from kernels.graphs.apsp import APSPResult


class GraphsWorkspace(Workspace, QMainWindow):
    """Composed of parts that own their state: the :class:`GeneratorForm`, the
    :class:`OverlayPanel` and :class:`LayoutPanel` in the controls dock, the :class:`GraphCanvas`
    with its :class:`GraphPointer`, the plot tabs and the :class:`GraphFiles`; this class runs the
    jobs and shows their results."""

    CAPABILITIES = frozenset({"open_field", "save_field", "export_image", "export_plots", "toggle_run", "reset",
                              "set_plots_visible", "set_controls_visible", "apply_preset", "figures", "sessions",
                              "open_files", "user_presets"})
    FILE_TYPES = {s: "graph" for s in (*GRAPH_SUFFIXES, ".gml", ".el")}
    status_changed = pyqtSignal(dict)
    job_finished = pyqtSignal(str)          # job name, for tests and scripts
    #: the dedicated experiment tabs' panels, each built the first time its tab shows or it is read
    reproduce, cc_timing, bfs_evolution, block_sweep, sssp_table, fw_family = (
        panel_property(k, "sweep_tabs") for k in DEDICATED)

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
        self._src_row = None                # OverlayValues of the distance from the clicked vertex
        self._overlay = None                # the OverlayValues shown
        self._apsp_summary = None           # kernels.graphs.data.stats.summary of the shown APSP result
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
        self.pointer = GraphPointer(self.canvas, None, lambda: self, self.click_node, self._report_cursor)
        # one line, cut with "…" (the whole text in its tooltip): a wrapped hint took the view's
        # height, and its width held the view narrow in lecture mode
        self.info = ElidedLabel("Generate a graph to start.")
        cl.addWidget(self.info)
        self.setCentralWidget(central)
        self._build_controls(n)
        self.pointer.layout_panel = self.layout_panel
        self._build_plots()
        self.files = GraphFiles(self, self.canvas, self.colorbar, self.tabs, self.message_bar, lambda: self)
        self.lecture_docks = LectureDocks(self, self.controls, self.plots)

    def _report_cursor(self, text: str) -> None:
        self.status_changed.emit({"cursor": text})

    # ------------------------------------------------------------------ UI
    def _build_controls(self, n):
        w = QWidget()
        form = QFormLayout(w)

        def tip(widget, text):
            widget.setToolTip(text)
            return widget

        self.gen_form = GeneratorForm(self.backend, n)
        f = self.gen_form           # its controls by their old names (scripts and tests use them)
        self.cb_gen, self.sp_n, self.sp_k, self.sp_p, self.sp_alpha, self.ck_ring, self.cb_weights, self.sp_seed, \
            self.cb_method = (f.cb_gen, f.sp_n, f.sp_k, f.sp_p, f.sp_alpha, f.ck_ring, f.cb_weights, f.sp_seed,
                              f.cb_method)
        self.overlay = OverlayPanel()
        self.cb_color = self.overlay.cb_color
        self.overlay.changed.connect(self._recolor)
        self.layout_panel = LayoutPanel(self.backend, message=self.message_bar.show_message)
        self.layout_panel.positions.connect(self._on_positions)
        self.layout_panel.state_changed.connect(self._on_layout_state)
        for wid, key, label in ((self.overlay.cb_color, "color_by", "colour by"),
                                (self.overlay.ck_density, "density", "density overlay"),
                                (self.layout_panel.cb_layout, "layout", "layout"),
                                (self.layout_panel.sp_iter, "iterations", "iterations")):
            undo.track(wid, key, label=label)
        form.addRow(self.gen_form)
        form.addRow(self.overlay)
        form.addRow(self.layout_panel)
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
        self.jobs = JobRunner(self.progress, self.bt_cancel, (self.bt_gen, self.bt_apsp), self.message_bar, self.info,
                              self)
        self.jobs.ended.connect(self._job_ended)
        shrinkable_combos(w)
        self.controls = add_dock(self, "Graph", "graphControls", w, "left", closable=True)

    def _build_plots(self):
        self.tabs = QTabWidget()
        self.graph_plots = gp = GraphPlots(lambda: self.result, self.pointer.report)
        self.heat, self.heat_img, self.heat_bar, self.deg_plot, self.path_plot = (
            gp.heat, gp.heat_img, gp.heat_bar, gp.deg_plot, gp.path_plot)
        for w, text in gp.tabs():
            self.tabs.addTab(w, text)
        #: the experiment tabs by their settings / session key (LazyPanels: built on first show or access)
        self.sweep_tabs = add_sweep_tabs(self.tabs, self.backend, self.message_bar.show_message)
        self.plots = add_dock(self, "Plots", "graphPlots", self.tabs, "right", closable=True)

    def show_tab(self, panel) -> int:
        """Bring the plot tab holding ``panel`` (a plot or a sweep tab's page) to the front; its index."""
        for i in range(self.tabs.count()):
            if content_of(self.tabs.widget(i)) is panel:
                self.tabs.setCurrentIndex(i)
                return i
        raise KeyError("not a tab of the Graphs workspace")

    # ------------------------------------------------------------------ jobs
    def _params(self):
        return self.gen_form.params()

    def control_params(self) -> dict:
        """The controls by ``set_parameters``' names (sessions and settings store this)."""
        return {**self.gen_form.values(), "layout": self.layout_panel.name(),
                "iterations": self.layout_panel.sp_iter.value(), "color_by": self.overlay.name(),
                "density": self.overlay.density()}

    _check_params = staticmethod(check_params)

    def set_parameters(self, **kw):
        """Set controls by name (generator, n, k, p, alpha, ring, weights, seed, method, layout,
        iterations, color_by, density); an unknown layout or colour-by (a newer session) is skipped."""
        self.gen_form.set_values(**kw)
        if isinstance(kw.get("layout"), str):
            self.layout_panel.set_name(kw["layout"])
        if isinstance(kw.get("iterations"), int):
            self.layout_panel.sp_iter.setValue(kw["iterations"])
        if isinstance(kw.get("color_by"), str):
            self.overlay.set_name(kw["color_by"])
        if "density" in kw:
            self.overlay.ck_density.setChecked(bool(kw["density"]))

    def _jobs(self) -> list:
        """The running jobs: the workspace's own, the live layout's and the (built) sweep tabs'."""
        return [j for j in (self.job, self.layout_panel.job, *(w.job for w in self.sweep_tabs.built().values()))
                if j is not None]

    def busy(self) -> bool:
        return bool(self._jobs())

    @property
    def job(self):
        """The running generate / open / APSP job (None: none)."""
        return self.jobs.job

    def _start(self, name, fn, on_done) -> bool:
        return self.jobs.start(name, fn, on_done)

    def _job_ended(self, name: str, ok: bool) -> None:
        then, self._then = self._then, None
        self.job_finished.emit(name)
        if self._queued_preset is not None:
            p, self._queued_preset = self._queued_preset, None
            self.apply_preset(p)
        elif then is not None and ok:
            then()

    def cancel(self):
        """Stop every running computation of the workspace (Esc): the live layout, the sweep tabs'."""
        self.layout_panel.cancel()
        for job in self._jobs():
            job.cancel()

    # ------------------------------------------------------------------ actions
    def generate(self):
        prm = self._params()
        weights = self.gen_form.weights()
        try:                                          # validate before work starts
            if prm["kind"] in ("ring", "ws", "alpha"):
                gen.check_k(prm["n"], prm["k"])
            gen.check_p(prm["p"])
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
        self.pointer.camera_touched = False
        self._recolor()
        if payload.layout is not None:
            self.layout_panel.stream(payload.layout)
        self.graph_plots.show_graph(g)
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
            if not self.pointer.camera_touched:     # follow the unfolding graph until the user pans or zooms
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
        g, method, be = self.graph, self.gen_form.method(), self.backend

        def work(progress, cancelled):
            return apsp(g, method, backend=be, progress=progress, cancel=cancelled)

        self._start("APSP", work, self._show_apsp)

    def _show_apsp(self, res):
        self.result = res
        self.overlay.set_apsp_available(True)
        s = summary(res.dist)
        self._apsp_summary = s
        self.graph_plots.show_apsp(res)
        dist = res.dist
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
                    # the library's frontier kernels (CUDA; without a GPU their source on the CPU)
                    self._src_row = overlay_values(self.graph, "distance", source=i, backend=self.backend,
                                                   kernel=row_kernel(self.graph, self.backend))
            except InvalidParameter as exc:
                self.message_bar.show_message(str(exc), "error")
                return
            self.selected = [i]
            self.highlighted_path = []
            self.canvas.set_path([])
            if not reset:
                with undo.suspended(self.overlay):      # a click, not an edit of the colour-by choice
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
        self._lecture = bool(on)
        self.gen_form.set_lecture(on)
        self.layout_panel.layout().setRowVisible(self.layout_panel.sp_iter, not on)
        self.canvas.set_lecture(on)
        self.graph_plots.set_lecture(on)
        self.bt_apsp.setText("APSP" if on else "Compute APSP")     # the row fits the lecture dock
        (self.lecture_docks.enter if on else self.lecture_docks.leave)()
        self._recolor()

    def caption(self) -> str:
        lead = f"{self.preset['name']}: " if self.preset else ""
        paper = f"paper {self.preset['paper']}" if self.preset else "paper 000 §4 (Leist, Playne & Hawick 2009)"
        if self.graph is None:
            return f"{lead}Graphs — generators, all-pairs shortest paths, clustering — {paper}"
        g = self.graph
        extra = f", mean path {self._apsp_summary['mean_path_length']:.3g}" if self.result is not None \
            and self._apsp_summary else ""
        cc = f", clustering {self.global_cc:.3f}" if np.isfinite(self.global_cc) else ""
        return f"{lead}{g.name}: N = {g.n:,}, m = {g.m:,}{cc}{extra} — {paper}"

    def parameter_summary(self) -> str:
        prm = self._params()
        return (f"generator {gen.LABELS.get(prm['kind'], prm['kind'])}, N = {prm['n']}, k = {prm['k']}, "
                f"p = {prm['p']:g}, α = {prm['alpha']:g}, ring {prm['ring']}, weights {self.gen_form.weights()}, "
                f"seed {prm['seed']}, APSP {self.gen_form.method()}, layout {self.layout_panel.name()}, "
                f"colour by {self.cb_color.currentText()}")

    # --------------------------------------------------------------- files
    def open_file(self, path: str) -> None:
        """Read a graph (GraphML or an edge list) and show it (layout and clustering on a worker
        thread); ExplorerError, with nothing changed, when it cannot be read or a job runs."""
        if self.job is not None:
            raise ExplorerError("a computation is running: wait for it or press Cancel, then open the graph")
        g = self.files.load(path)
        self._start("Open graph", lambda progress, cancelled: self._prepare(g, progress, cancelled), self._show_graph)

    def open_field(self, path=None):
        """File ▸ Open graph… (a dialog when ``path`` is None)."""
        asked = path is None
        path = path or self.files.ask_graph()
        if not path:
            return
        try:
            self.open_file(path)
        except ExplorerError as exc:
            self.message_bar.show_message(str(exc), "error")
            return
        if asked:
            recent.file_opened(path)

    def save_field(self, path=None):
        return self.files.save_graph(path)

    def export_distances(self, path=None):
        return self.files.export_distances(path)

    def export_image(self, path=None):
        return self.files.export_image(path)

    def export_plots(self, path=None):
        return self.files.export_plots(path)

    def figure_targets(self):
        return self.files.figure_targets([
            ("Distance matrix", self.heat), ("Degree distribution", self.deg_plot),
            ("Path-length distribution", self.path_plot), *sweep_figures(self.sweep_tabs.built())])

    # ------------------------------------------------------- settings, presets
    def save_settings(self, s):
        """Generator controls and the sweep tabs, as JSON under this workspace's group."""
        s.setValue("params_json", json.dumps(self.control_params()))
        self.sweep_tabs.save_settings(s)        # a tab never opened: the state restored into it

    def restore_settings(self, s):
        try:
            self.set_parameters(**check_params(json.loads(s.value("params_json") or "null")))
        except (InvalidParameter, TypeError, ValueError):
            pass
        self.sweep_tabs.restore_settings(s)

    PRESET_KEYS = ("generator", "n", "k", "p", "alpha", "ring", "weights", "seed", "method", "layout",
                   "iterations", "color_by", "density")

    def apply_preset(self, preset: dict) -> None:
        """Set the controls from ``preset["params"]`` (:data:`PRESET_KEYS`, ``tab``) and generate;
        ``apsp``: then compute APSP."""
        prm = dict(preset["params"])
        if self.job is not None:               # finish with the running job first
            self._queued_preset = preset
            self.job.cancel()
            return
        if prm.get("generator", self.cb_gen.currentData()) not in gen.GENERATORS:
            raise InvalidParameter(f"unknown generator {prm.get('generator')!r}")
        if "method" in prm and prm["method"] not in METHODS:
            raise InvalidParameter(f"unknown APSP method {prm['method']!r}")
        self.preset = preset
        self.set_parameters(**{k: v for k, v in prm.items() if k in self.PRESET_KEYS})
        if "tab" in prm:
            self.tabs.setCurrentIndex(int(prm["tab"]))
        self._then = self.compute if prm.get("apsp") else None
        self.generate()

    def preset_params(self) -> dict:
        """The controls as a preset's ``params`` (and ``apsp`` when the shown graph has its APSP)."""
        return {**self.control_params(), "apsp": self.result is not None}

    # --------------------------------------------------------------- sessions
    def session_state(self) -> dict:
        return {"params": self.control_params(), "color_by": self.overlay.name(),
                "selected": [int(i) for i in self.selected], "tab": self.tabs.currentIndex(),
                **graph_sessions.graph_state(self.graph, self.result),
                "preset": None if self.preset is None else {k: self.preset[k] for k in ("name", "paper")},
                **self.sweep_tabs.states()}

    def session_data(self) -> dict:
        return graph_sessions.session_data(self.graph, self.pos, self.result)

    def restore_session(self, state: dict, data: dict) -> None:
        """Controls from the state; the graph (and distances) from the data, or regenerated from
        the seed when the session holds none (:func:`.graph_sessions.read_session` checks first)."""
        plan = graph_sessions.read_session(state, data, tuple(self.sweep_tabs))
        if self.job is not None:
            self.job.cancel()
            self.job.wait(5000)
        self.set_parameters(**plan.params)
        if plan.color_by is not None:                  # older sessions: the list's text
            self.overlay.set_name(plan.color_by)
        self.sweep_tabs.restore(plan.sweeps)
        self.preset = plan.preset

        def done(payload):
            self._show_graph(payload)
            if plan.dist is not None:
                self._show_apsp(APSPResult(dist=plan.dist, method=plan.apsp_method, seconds=plan.apsp_seconds,
                                           kernel_seconds=0.0))
            for i in plan.selected[:2]:
                if 0 <= i < self.graph.n:
                    self.click_node(i)
            if plan.tab is not None:
                self.tabs.setCurrentIndex(plan.tab)
            self.message_bar.show_message("Session restored", "info")

        g = plan.graph
        if g is not None:
            self._start("Restore session", lambda progress, cancelled: self._prepare(g, progress, cancelled), done)
        elif plan.has_graph:
            self._then = None
            self.generate()
        else:
            self.message_bar.show_message("Session restored (no graph was generated in it)", "info")

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
