"""Files of the Graphs workspace: open / save graphs (GraphML, edge lists), the distance matrix
(.npy), the view (PNG) and the plots (PNG/SVG), and the figure targets of *Export figure*.

:class:`GraphFiles` is a part: it is given the view (canvas and colour bar), the plot tabs, a
``message_bar`` for notices and ``model()`` — a callable returning what is shown (an object with
``graph`` and ``result``).  It never changes what is shown: :meth:`GraphFiles.load` reads a graph
and the workspace shows it.  Every write goes through ``explorer.export`` (checked path, temporary
file, rename); a failure is one message.
"""
from __future__ import annotations

# Imports inside functions: scikit-image (slow to import) loads only when an exported image is resized.
import numpy as np
from PyQt6.QtWidgets import QFileDialog

from kernels.graphs.data.graph import load_graph, save_graph

from ..colorbar import with_colorbar
from ..export import (Figure, array_to_qimage, guarded, qimage_to_array, save_figure, save_image,
                      write_file)
from ..lazy_panel import content_of

#: suffixes of the graph files read and written (GraphML or an edge list)
GRAPH_SUFFIXES = (".graphml", ".edgelist", ".edges", ".txt")
OPEN_FILTER = "Graphs (*.graphml *.edgelist *.edges *.txt);;All files (*)"


class GraphFiles:
    """Graph files, exports and figure targets of one graph view."""

    def __init__(self, parent, canvas, colorbar, tabs, message_bar, model):
        self.widget, self.canvas, self.colorbar, self.tabs = parent, canvas, colorbar, tabs
        self.message_bar, self.model = message_bar, model

    def ask(self, title: str, filt: str, save: bool = True) -> str | None:
        fn = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
        path, _ = fn(self.widget, title, "", filt)
        return path or None

    def _guard(self, what, fn, ok_text):
        """Run an export: the path written (and ``ok_text`` naming it), or None after a message."""
        out = guarded(lambda m: self.message_bar.show_message(m, "error"), what, fn)
        if out is not None:
            self.message_bar.show_message(ok_text.format(out), "info")
        return out

    # ------------------------------------------------------------------ graphs
    def ask_graph(self) -> str | None:
        return self.ask("Open graph", OPEN_FILTER, save=False)

    @staticmethod
    def load(path):
        """The graph in ``path`` (GraphML or an edge list); ExplorerError when it is not one."""
        return load_graph(path)

    def save_graph(self, path=None):
        """Export the graph: .graphml, or an edge list (.edgelist, .edges, .txt); the path written."""
        g = self.model().graph
        if g is None:
            return self.message_bar.show_message("Nothing to export yet.", "warning")
        path = path or self.ask("Export graph", "GraphML (*.graphml);;Edge list (*.edgelist)")
        if path:
            return self._guard(f"save the graph to {path}", lambda: write_file(
                path, GRAPH_SUFFIXES, lambda tmp: save_graph(g, tmp), "graph file"), "Saved graph to {}")

    def export_distances(self, path=None):
        """The all-pairs matrix as a NumPy .npy file; the path written."""
        res = self.model().result
        if res is None:
            return self.message_bar.show_message("Compute APSP first.", "warning")
        path = path or self.ask("Export distances", "NumPy (*.npy)")
        if path:
            dist = res.dist
            return self._guard(f"save the distances to {path}", lambda: write_file(
                path, (".npy",), lambda tmp: np.save(tmp, dist), "distance file"), "Saved distances to {}")

    # ------------------------------------------------------------------ images
    def export_image(self, path=None):
        """The graph view as PNG (screen size); the path written."""
        path = path or self.ask("Export view", "PNG (*.png)")
        if path:
            img = self.canvas.render()
            return self._guard(f"export the view to {path}", lambda: save_image(
                array_to_qimage(img), path, suffixes=(".png",)), "Exported view to {}")

    def export_plots(self, path=None):
        """Save the current plot tab as PNG or SVG (the extension decides); the path written."""
        path = path or self.ask("Export plot", "PNG (*.png);;SVG (*.svg)")
        if not path:
            return None
        widget = content_of(self.tabs.currentWidget(), build=True)    # an experiment tab not opened yet: built
        widget = getattr(widget, "plots", widget)       # a sweep tab: its plot grid
        fig = Figure(self.tabs.tabText(self.tabs.currentIndex()), widget=widget)
        return self._guard(f"export the plot to {path}", lambda: save_figure(
            fig, path, width=max(1200, 2 * widget.width())), "Exported plot to {}")

    def view_size(self) -> tuple[int, int]:
        """On-screen size of the view with its colour bar when one is shown."""
        w, h = self.canvas.canvas.size
        return (w + (self.colorbar.image(h).width() if self.colorbar.isVisibleTo(self.widget) else 0)), h

    def render_view(self, scale: float = 1.0) -> np.ndarray:
        """The graph view at ``scale`` × the screen, with its colour bar when one is shown."""
        img = self.canvas.render()
        if scale != 1.0:
            from skimage.transform import resize
            h, w = img.shape[:2]
            img = resize(img, (int(round(h * scale)), int(round(w * scale))), order=1, preserve_range=True,
                         anti_aliasing=scale < 1).astype(np.uint8)
        return qimage_to_array(with_colorbar(array_to_qimage(np.ascontiguousarray(img)), self.colorbar, scale))

    def figure_targets(self, plots) -> list[Figure]:
        """The view, then ``plots`` ((name, widget) pairs) as figures."""
        return [Figure("Graph view", render=self.render_view, size=self.view_size),
                *(Figure(name, widget=w) for name, w in plots)]
