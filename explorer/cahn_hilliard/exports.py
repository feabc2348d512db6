"""Files of the Cahn–Hilliard workspace: the field (.npz), the view (PNG, exact pixels per cell in
2D), the diagnostic plots (PNG/SVG), movies of the running field (MP4/GIF) and the figure targets
of the main window's *Export figure*.

:class:`FieldExports` is a part that owns the movie being recorded; it is given what it draws
(the canvas, the colour bar, the plots) and reads the run through ``snapshot()`` (a callable
returning φ, the parameters, t and the step count, taken under the worker's lock).  It never
changes the run: :meth:`FieldExports.load` returns the field and parameters of a file and the
workspace rebuilds from them.  Every write goes through ``explorer.export`` (checked path,
temporary file, rename); a failure is one message in ``message_bar``.
"""
from __future__ import annotations

from typing import Callable

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QFileDialog, QInputDialog

from kernels.cahn_hilliard import io as ch_io

from ..colorbar import with_colorbar
from ..export import (ExportImageDialog, Figure, MovieRecorder, array_to_qimage, guarded, qimage_to_array,
                      save_figure, save_image, write_file)

FIELD_FILTER = "Field files (*.npz *.npy)"


def ask_path(parent, title: str, filt: str, save: bool = True, default: str = "") -> str | None:
    """A file dialog's answer, or None when cancelled."""
    fn = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
    path, _ = fn(parent, title, default, filt)
    return path or None


class FieldExports(QObject):
    """Field files, image / plot / movie exports and figure targets of one field view."""

    #: a movie recording started (True) or ended (False)
    recording_changed = pyqtSignal(bool)

    def __init__(self, parent, canvas, colorbar, plots, message_bar,
                 snapshot: Callable[[], tuple], extra_figures: Callable[[], list] = lambda: []):
        super().__init__(parent)
        self.widget = parent
        self.canvas = canvas
        self.colorbar = colorbar
        self.plots = plots
        self.message_bar = message_bar
        self.snapshot = snapshot
        self.extra_figures = extra_figures
        self.recorder: MovieRecorder | None = None

    def _error(self, msg: str) -> None:
        self.message_bar.show_message(msg, "error")

    # ------------------------------------------------------------ field files
    def save_field(self, path=None):
        """The field and its parameters as .npz (no extension: .npz added); the path written."""
        path = path or ask_path(self.widget, "Save field", FIELD_FILTER, default="field.npz")
        if not path:
            return None
        phi, params, t, steps = self.snapshot()
        out = guarded(self._error, f"save the field to {path}", lambda: write_file(
            path, (".npz",), lambda tmp: ch_io.save_field(tmp, phi, params, t=t, steps=steps), "field file"))
        if out is not None:
            self.message_bar.show_message(f"Saved field to {out}", "info")
        return out

    def ask_field(self) -> str | None:
        """File ▸ Open field…'s dialog: a path, or None."""
        return ask_path(self.widget, "Open field", FIELD_FILTER, save=False)

    @staticmethod
    def load(path) -> tuple:
        """(φ, parameters or None) of a field file (.npz with its parameters, or .npy);
        ExplorerError with a readable message when it is not one."""
        phi, params, _extras = ch_io.load_field(path)
        return phi, params

    # ----------------------------------------------------------------- images
    def export_image(self, path=None, scale: float | None = None, crop_to_data: bool | None = None):
        """The field view as PNG at ``scale`` × the screen (2D cropped to the field); the path."""
        if scale is None:
            choice = ExportImageDialog.ask(self.canvas.canvas.size, self.canvas.dim, self.widget)
            if choice is None:
                return None
            scale, crop_to_data = choice
        path = path or ask_path(self.widget, "Export image", "PNG image (*.png)", default="cahn_hilliard.png")
        if not path:
            return None
        img = self.canvas.render(scale=scale, crop_to_data=bool(crop_to_data))
        out = guarded(self._error, f"export the image to {path}",
                      lambda: save_image(array_to_qimage(img), path, suffixes=(".png",)))
        if out is not None:
            self.message_bar.show_message(f"Exported {img.shape[1]}×{img.shape[0]} image to {out}", "info")
        return out

    def export_plots(self, path=None):
        """The diagnostic plots as PNG (at least 1600 px wide) or SVG; the path written."""
        path = path or ask_path(self.widget, "Export plots", "PNG image (*.png);;SVG vector (*.svg)",
                                default="cahn_hilliard_plots.png")
        if not path:
            return None
        fig = Figure("Diagnostic plots", widget=self.plots.layout_widget)
        out = guarded(self._error, f"export the plots to {path}", lambda: save_figure(
            fig, path, width=max(1600, 2 * self.plots.layout_widget.width())))
        if out is not None:
            self.message_bar.show_message(f"Exported plots to {out}", "info")
        return out

    # ----------------------------------------------------------------- movies
    def start_movie(self, path=None, frames: int | None = None, fps: int = 25):
        """Begin recording the next ``frames`` frames (MP4/GIF); the path, or None (a message says
        why).  The workspace calls :meth:`record_frame` with every frame it shows."""
        if self.recorder is not None:
            self.message_bar.show_message("A movie is already being recorded.", "warning")
            return None
        if frames is None:
            frames, ok = QInputDialog.getInt(self.widget, "Export movie", "Frames to record:", 100, 2, 100000)
            if not ok:
                return None
        path = path or ask_path(self.widget, "Export movie", "MP4 video (*.mp4);;Animated GIF (*.gif)",
                                default="cahn_hilliard.mp4")
        if not path:
            return None
        try:
            self.recorder = MovieRecorder(path, frames, fps, self.widget)
        except Exception as exc:  # missing ffmpeg, unwritable path …
            self._error(f"Could not record {path}: {exc}")
            return None
        self.recorder.progress.canceled.connect(self.finish_movie)
        self.recording_changed.emit(True)
        self.record_frame()
        return self.recorder.path if self.recorder is not None else path

    def record_frame(self) -> None:
        """Add the frame on screen to the movie being recorded (if any)."""
        rec = self.recorder
        if rec is None:
            return
        if not rec.add(self.canvas.render(scale=1.0, crop_to_data=True)):
            self.finish_movie()

    def finish_movie(self) -> None:
        rec, self.recorder = self.recorder, None
        if rec is None:
            return
        if rec.close():
            self.message_bar.show_message(f"Recorded {rec.count} frames to {rec.path}", "info")
        else:
            self._error(f"Could not record {rec.path}: {rec.error}")
        self.recording_changed.emit(False)

    # ---------------------------------------------------------------- figures
    def _render(self, scale: float):
        c = self.canvas
        if c.dim == 2:
            r = c.data_rect()
            on_screen = (r[2] - r[0]) if r is not None else c.shape[-1]
            k = max(1, int(round(on_screen * scale / c.shape[-1])))    # whole pixels per cell
            return c.field_rgba(k)
        return c.render(scale=scale)

    def _size(self) -> tuple[int, int]:
        """On-screen size of the field (2D: the image's rectangle) in logical pixels."""
        c = self.canvas
        if c.dim == 2:
            r = c.data_rect()
            if r is not None:
                return int(round(r[2] - r[0])), int(round(r[3] - r[1]))
        return tuple(c.canvas.size)

    def _render_with_bar(self, scale: float):
        return qimage_to_array(with_colorbar(array_to_qimage(self._render(scale)), self.colorbar, scale))

    def _size_with_bar(self) -> tuple[int, int]:
        w, h = self._size()
        return w + self.colorbar.image(int(h)).width(), h

    def figure_targets(self) -> list[Figure]:
        return [Figure("Field view", render=self._render, size=self._size),
                Figure("Field view with colour bar", render=self._render_with_bar, size=self._size_with_bar),
                Figure("Diagnostic plots", widget=self.plots.layout_widget), *self.extra_figures()]
