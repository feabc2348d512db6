"""Files, sessions, figures (and the lecture caption) and the mouse readout of the Graphs workspace: open / save graphs
(GraphML, edge lists), the distance matrix (.npy), the view and plots (PNG/SVG), settings and sessions
(controls, graph, distances, clicked vertices), the figure targets of *Export figure*, the mouse on
the view (click, drag a vertex of the live layout) and what lies under it (vertex and overlay value,
density bin, d(i → j), histogram bar), and presets.  Every
write goes through ``explorer.export`` (checked path, temporary file, rename).  A mixin of
:class:`explorer.graphs.workspace.GraphsWorkspace`."""
from __future__ import annotations

import json

import numpy as np
from PyQt6.QtWidgets import QFileDialog

from kernels.errors import InvalidParameter
from kernels.graphs.apsp import METHODS, sentinel
from kernels.graphs.generators import GENERATORS, LABELS
from kernels.graphs.graph import load_graph, save_graph

from ..colorbar import with_colorbar
from ..widgets import page_of
from ..export import (Figure, array_to_qimage, guarded, qimage_to_array, save_figure, save_image,
                      write_file)


class GraphFilesMixin:
    """Graph files, exports, sessions, figure targets and the status-bar readout."""

    GRAPH_SUFFIXES = (".graphml", ".edgelist", ".edges", ".txt")

    def _report_cursor(self, text: str) -> None:
        if text != getattr(self, "_cursor_text", None):
            self._cursor_text = text
            self.status_changed.emit({"cursor": text})

    def describe_vertex(self, i: int, value: float | None = None) -> str:
        """Vertex id, degree, local clustering and the shown overlay's ``value`` (status bar)."""
        g = self.graph
        parts = [f"vertex {i}", f"degree {int(g.degrees()[i])}"]
        if self.local_cc is not None:
            parts.append(f"clustering {float(self.local_cc[i]):.3g}")
        ov = self._overlay
        if ov is not None and value is not None:
            if not np.isfinite(value):
                parts.append(f"{ov.label}: none (unreachable)" if ov.source is not None else f"{ov.label}: none")
            else:
                parts.append(f"{ov.label}: {int(round(value)) if ov.integer else f'{value:.6g}'}")
        return ", ".join(parts)

    def _on_mouse_move(self, ev):
        """Drag a pressed vertex (live layout), else report what lies under the mouse: the vertex and
        the value of the overlay shown (``canvas.value_at``), or the density bin."""
        if self._drag(ev):
            return
        text = ""
        if self.graph is not None:
            hit = self.canvas.value_at(ev.pos)
            if hit is not None:
                text = self.describe_vertex(hit[0], hit[1])
            else:
                hit = self.canvas.density_at(ev.pos)
                if hit is not None:
                    text = f"x = {hit[0]:.3g}, y = {hit[1]:.3g}: {hit[2]:,} vertices in this bin"
        self._report_cursor(text)

    def _on_mouse_press(self, ev) -> None:
        """A left press on a vertex: a click (on release) or, while the force layout runs or is
        paused, the start of a drag (the camera does not pan meanwhile)."""
        self._camera_touched = True
        if ev.button != 1 or self.graph is None:
            return
        i = self.canvas.pick(ev.pos)
        self._press = None if i is None else [i, False]
        if i is not None and self.layout_panel.can_drag():
            self.canvas.view.camera.interactive = False

    def _on_mouse_release(self, ev) -> None:
        press, self._press = self._press, None
        self.canvas.view.camera.interactive = True
        if press is None or ev.button != 1:
            return
        if press[1]:
            self.layout_panel.drag_end(press[0])
        else:
            self.click_node(press[0])

    def _drag(self, ev) -> bool:
        """Move the pressed vertex with the mouse (the layout follows); True when dragging."""
        if self._press is None or not self.layout_panel.can_drag() or 1 not in (ev.buttons or ()):
            return False
        self._press[1] = True
        self.layout_panel.drag_to(self._press[0], self.canvas.scene.data_of(ev.pos))
        return True

    def _describe_distance(self, x: float, y: float) -> str:
        if self.result is None:
            return ""
        i, j = int(np.floor(y)), int(np.floor(x))
        d = self.result.dist
        if not (0 <= i < d.shape[0] and 0 <= j < d.shape[1]):
            return ""
        v = d[i, j]
        if d.dtype.kind == "u":
            return f"d({i} → {j}) = " + ("unreachable" if v == sentinel(d.dtype) else f"{int(v)} hops")
        return f"d({i} → {j}) = {float(v):.4g}" if np.isfinite(v) else f"d({i} → {j}) = unreachable"

    @staticmethod
    def _describe_bar(plot, x: float, xname: str, yname: str) -> str:
        items = plot.getPlotItem().listDataItems()
        if not items:
            return ""
        xs, ys = items[0].xData, items[0].yData      # step mode: len(xs) = len(ys) + 1
        if xs is None or ys is None or not len(ys):
            return ""
        k = int(np.searchsorted(xs, x, side="right")) - 1
        return f"{xname} {int(xs[k])}: {int(ys[k]):,} {yname}" if 0 <= k < len(ys) else ""

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
        return (f"generator {LABELS.get(prm['kind'], prm['kind'])}, N = {prm['n']}, k = {prm['k']}, p = {prm['p']:g}, "
                f"α = {prm['alpha']:g}, ring {prm['ring']}, weights {self.cb_weights.currentText()}, "
                f"seed {prm['seed']}, APSP {self.cb_method.currentText()}, layout {self.layout_panel.name()}, "
                f"colour by {self.cb_color.currentText()}")

    def figure_targets(self) -> list[Figure]:
        return [Figure("Graph view", render=self._render_view, size=self._view_size),
                Figure("Distance matrix", widget=self.heat), Figure("Degree distribution", widget=self.deg_plot),
                Figure("Path-length distribution", widget=self.path_plot),
                Figure("Reproduce plots (paper 000 Fig. 14)", widget=self.reproduce.plots),
                Figure("Reproduce clustering timings (paper 001 Figs. 14–15)", widget=self.cc_timing.plots),
                Figure("BFS kernel evolution (paper 000 Figs. 10–13)", widget=self.bfs_evolution.plots),
                Figure("BFS block-size sweep (paper 000 Fig. 15)", widget=self.block_sweep.plots),
                Figure("SSSP methods (paper 004 ch. 3)", widget=self.sssp_table.shown()),
                Figure("Floyd–Warshall family timings (papers 002, 004)", widget=self.fw_family.plots)]

    def _view_size(self) -> tuple[int, int]:
        w, h = self.canvas.canvas.size
        return (w + (self.colorbar.image(h).width() if self.colorbar.isVisibleTo(self) else 0)), h

    def _render_view(self, scale: float = 1.0) -> np.ndarray:
        """The graph view at ``scale`` × the screen, with its colour bar when one is shown."""
        img = self.canvas.render()
        if scale != 1.0:
            from skimage.transform import resize
            h, w = img.shape[:2]
            img = resize(img, (int(round(h * scale)), int(round(w * scale))), order=1, preserve_range=True,
                         anti_aliasing=scale < 1).astype(np.uint8)
        return qimage_to_array(with_colorbar(array_to_qimage(np.ascontiguousarray(img)), self.colorbar, scale))

    def _ask(self, title, filt, save=True):
        fn = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
        path, _ = fn(self, title, "", filt)
        return path or None

    def open_field(self, path=None):
        """Import a graph (GraphML or edge list)."""
        path = path or self._ask("Open graph", "Graphs (*.graphml *.edgelist *.txt);;All files (*)", save=False)
        if not path:
            return

        def work(progress, cancelled):
            return self._prepare(load_graph(path), progress, cancelled)

        self._start("Open graph", work, self._show_graph)

    def save_field(self, path=None):
        """Export the graph: .graphml, or an edge list (.edgelist, .edges, .txt); the path written."""
        if self.graph is None:
            return self.message_bar.show_message("Nothing to export yet.", "warning")
        path = path or self._ask("Export graph", "GraphML (*.graphml);;Edge list (*.edgelist)")
        if path:
            g = self.graph
            return self._guard(f"save the graph to {path}", lambda: write_file(
                path, self.GRAPH_SUFFIXES, lambda tmp: save_graph(g, tmp), "graph file"), "Saved graph to {}")

    def export_distances(self, path=None):
        """The all-pairs matrix as a NumPy .npy file; the path written."""
        if self.result is None:
            return self.message_bar.show_message("Compute APSP first.", "warning")
        path = path or self._ask("Export distances", "NumPy (*.npy)")
        if path:
            dist = self.result.dist
            return self._guard(f"save the distances to {path}", lambda: write_file(
                path, (".npy",), lambda tmp: np.save(tmp, dist), "distance file"), "Saved distances to {}")

    def export_image(self, path=None):
        """The graph view as PNG (screen size); the path written."""
        path = path or self._ask("Export view", "PNG (*.png)")
        if path:
            img = self.canvas.render()
            return self._guard(f"export the view to {path}", lambda: save_image(
                array_to_qimage(img), path, suffixes=(".png",)), "Exported view to {}")

    def export_plots(self, path=None):
        """Save the current plot tab as PNG or SVG (the extension decides); the path written."""
        path = path or self._ask("Export plot", "PNG (*.png);;SVG (*.svg)")
        if not path:
            return None
        widget = page_of(self.tabs.currentWidget())
        widget = getattr(widget, "plots", widget)       # a sweep tab: its plot grid
        fig = Figure(self.tabs.tabText(self.tabs.currentIndex()), widget=widget)
        return self._guard(f"export the plot to {path}", lambda: save_figure(
            fig, path, width=max(1200, 2 * widget.width())), "Exported plot to {}")

    def _guard(self, what, fn, ok_text):
        """Run an export: the path written (and ``ok_text`` naming it), or None after a message."""
        out = guarded(lambda m: self.message_bar.show_message(m, "error"), what, fn)
        if out is not None:
            self.message_bar.show_message(ok_text.format(out), "info")
        return out

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

    def apply_preset(self, preset: dict) -> None:
        """Set the generator controls from ``preset["params"]`` (generator, n, k, p, alpha, ring,
        weights, seed, method, color_by, apsp) and generate; ``apsp``: then compute APSP."""
        prm = dict(preset["params"])
        if self.job is not None:               # finish with the running job first
            self._queued_preset = preset
            self.job.cancel()
            return
        if prm.get("generator", self.cb_gen.currentData()) not in GENERATORS:
            raise InvalidParameter(f"unknown generator {prm.get('generator')!r}")
        if "method" in prm and prm["method"] not in METHODS:
            raise InvalidParameter(f"unknown APSP method {prm['method']!r}")
        self.preset = preset
        self.set_parameters(**{k: v for k, v in prm.items() if k in
                               ("generator", "n", "k", "p", "alpha", "ring", "weights", "seed", "method", "layout",
                                "iterations", "color_by", "density")})
        if "tab" in prm:
            self.tabs.setCurrentIndex(int(prm["tab"]))
        self._then = self.compute if prm.get("apsp") else None
        self.generate()

    def session_state(self) -> dict:
        return {"params": self.control_params(),
                "color_by": self.overlay.name(), "selected": [int(i) for i in self.selected],
                "tab": self.tabs.currentIndex(), "has_graph": self.graph is not None,
                "graph_name": self.graph.name if self.graph is not None else "",
                "graph_params": jsonable(self.graph.params) if self.graph is not None else {},
                "apsp_method": self.result.method if self.result is not None else None,
                "apsp_seconds": self.result.seconds if self.result is not None else None,
                "preset": None if self.preset is None else {k: self.preset[k] for k in ("name", "paper")},
                **{key: w.state() for key, w in self._sweeps.items()}}

    def session_data(self) -> dict:
        if self.graph is None:
            return {}
        g = self.graph
        out = {"n": np.array([g.n], np.int64), "edges": g.edges, "positions": self.pos}
        if g.weights is not None:
            out["weights"] = g.weights
        if self.result is not None:
            out["distances"] = self.result.dist
        return out

    def restore_session(self, state: dict, data: dict) -> None:
        """Controls from the state; the graph (and distances) from the data, or regenerated from
        the seed when the session holds none."""
        from kernels.graphs.apsp import APSPResult
        from kernels.graphs.graph import Graph
        prm = dict(self._check_params(state["params"]))
        g = None
        if "edges" in data:
            n = int(np.asarray(data["n"]).ravel()[0])
            edges = np.asarray(data["edges"], np.int32).reshape(-1, 2)
            if len(edges) and (edges.min() < 0 or edges.max() >= n):
                raise InvalidParameter("the session's edge list refers to vertices outside 0…n−1")
            pos = data.get("positions")
            if pos is not None and pos.shape != (n, 2):
                raise InvalidParameter(f"the session's vertex positions have shape {pos.shape}, expected ({n}, 2)")
            g = Graph(n, edges, weights=data.get("weights"), positions=pos,
                      name=state.get("graph_name") or "graph", params=dict(state.get("graph_params") or {}))
        if self.job is not None:
            self.job.cancel()
            self.job.wait(5000)
        self.set_parameters(**prm)
        if isinstance(state.get("color_by"), str):     # older sessions: the list's text
            self.overlay.set_name(state["color_by"])
        for key, w in self._sweeps.items():
            w.restore(state.get(key))
        pre = state.get("preset")
        self.preset = pre if isinstance(pre, dict) and "name" in pre and "paper" in pre else None
        selected = [int(i) for i in state.get("selected", [])]
        dist = data.get("distances")

        def done(payload):
            self._show_graph(payload)
            if dist is not None:
                self._show_apsp(APSPResult(dist=dist, method=state.get("apsp_method") or "session",
                                           seconds=float(state.get("apsp_seconds") or 0.0), kernel_seconds=0.0))
            for i in selected[:2]:
                if 0 <= i < self.graph.n:
                    self.click_node(i)
            if "tab" in state:
                self.tabs.setCurrentIndex(int(state["tab"]))
            self.message_bar.show_message("Session restored", "info")

        if g is not None:
            self._start("Restore session", lambda progress, cancelled: self._prepare(g, progress, cancelled), done)
        elif state.get("has_graph"):
            self._then = None
            self.generate()
        else:
            self.message_bar.show_message("Session restored (no graph was generated in it)", "info")


def jsonable(d: dict) -> dict:
    """Generator parameters as JSON values (numpy scalars → Python)."""
    out = {}
    for k, v in (d or {}).items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, (str, int, float, bool)) or v is None:
            out[str(k)] = v
    return out
