"""Files of the Cahn–Hilliard workspace: open / save the field (.npz), export the view (PNG, exact
pixels per cell in 2D), the diagnostic plots (PNG/SVG), movies of the running field (MP4/GIF), and
the figure targets of the main window's *Export figure*.  Every write goes through
``explorer.export`` (checked path, temporary file, rename).  A mixin of
:class:`explorer.cahn_hilliard.workspace.CahnHilliardWorkspace`."""
from __future__ import annotations

from pathlib import Path

from kernels.cahn_hilliard import io as ch_io
from kernels.errors import ExplorerError

from ..colorbar import with_colorbar
from ..export import (ExportImageDialog, Figure, MovieRecorder, array_to_qimage, guarded, qimage_to_array,
                      save_figure, save_image, write_file)
from ..widgets import holding


class FieldExportsMixin:
    """Field files, image / plot / movie exports and figure targets."""

    def save_field(self, path=None):
        """The field and its parameters as .npz (no extension: .npz added); the path written."""
        path = path or self._ask_path("Save field", "Field files (*.npz)", default="field.npz")
        if not path:
            return None
        with holding(self.worker.lock):
            phi = self.sim.field_numpy().copy()
            params, t, steps = self.sim.params, self.sim.t, self.sim.step_count
        out = guarded(self.show_error, f"save the field to {path}", lambda: write_file(
            path, (".npz",), lambda tmp: ch_io.save_field(tmp, phi, params, t=t, steps=steps), "field file"))
        if out is not None:
            self.message_bar.show_message(f"Saved field to {out}", "info")
        return out

    def open_field(self, path=None):
        path = path or self._ask_path("Open field", "Field files (*.npz)", save=False)
        if not path:
            return False
        self.worker.pause()
        try:
            phi, params, _extras = ch_io.load_field(path)
            base = params or self.sim.params
            base = base.with_changes(initial="file", dim=phi.ndim, size=phi.shape[0])
            base, cut = self._fit_gpus(base)
            with holding(self.worker.lock):
                self.sim.reset(base, field0=phi)
        except ExplorerError as exc:
            self.show_error(str(exc))
            return False
        self._after_rebuild()
        self.message_bar.show_message(f"Loaded {Path(path).name}: {'×'.join(map(str, phi.shape))} field "
                                      "(initial condition 'file'; Reset returns to it)"
                                      + (f"; {cut}" if cut else "") + self.notes_tail(), "info")
        return True

    def export_image(self, path=None, scale: float | None = None, crop_to_data: bool | None = None):
        """The field view as PNG at ``scale`` × the screen (2D cropped to the field); the path."""
        if scale is None:
            choice = ExportImageDialog.ask(self.canvas.canvas.size, self.canvas.dim, self)
            if choice is None:
                return None
            scale, crop_to_data = choice
        path = path or self._ask_path("Export image", "PNG image (*.png)", default="cahn_hilliard.png")
        if not path:
            return None
        img = self.canvas.render(scale=scale, crop_to_data=bool(crop_to_data))
        out = guarded(self.show_error, f"export the image to {path}",
                      lambda: save_image(array_to_qimage(img), path, suffixes=(".png",)))
        if out is not None:
            self.message_bar.show_message(f"Exported {img.shape[1]}×{img.shape[0]} image to {out}", "info")
        return out

    def export_plots(self, path=None):
        """The diagnostic plots as PNG (at least 1600 px wide) or SVG; the path written."""
        path = path or self._ask_path("Export plots", "PNG image (*.png);;SVG vector (*.svg)",
                                      default="cahn_hilliard_plots.png")
        if not path:
            return None
        if self._hist is not None:
            self.plots.update_history(self._hist)
        fig = Figure("Diagnostic plots", widget=self.plots.layout_widget)
        out = guarded(self.show_error, f"export the plots to {path}", lambda: save_figure(
            fig, path, width=max(1600, 2 * self.plots.layout_widget.width())))
        if out is not None:
            self.message_bar.show_message(f"Exported plots to {out}", "info")
        return out

    def export_movie(self, path=None, frames: int | None = None, fps: int = 25):
        """Record the next ``frames`` frames of the running field (MP4/GIF); the path."""
        if self.recorder is not None:
            self.message_bar.show_message("A movie is already being recorded.", "warning")
            return None
        if frames is None:
            from PyQt6.QtWidgets import QInputDialog
            frames, ok = QInputDialog.getInt(self, "Export movie", "Frames to record:", 100, 2, 100000)
            if not ok:
                return None
        path = path or self._ask_path("Export movie", "MP4 video (*.mp4);;Animated GIF (*.gif)",
                                      default="cahn_hilliard.mp4")
        if not path:
            return None
        try:
            self.recorder = MovieRecorder(path, frames, fps, self)
        except Exception as exc:  # missing ffmpeg, unwritable path …
            self.show_error(f"Could not record {path}: {exc}")
            return None
        self.recorder.progress.canceled.connect(self._finish_movie)
        self._record_frame()
        if not self.worker.running:
            self.start()
        return self.recorder.path if self.recorder is not None else path

    def _record_frame(self):
        rec = self.recorder
        if rec is None:
            return
        more = rec.add(self.canvas.render(scale=1.0, crop_to_data=True))
        if not more:
            self._finish_movie()

    def _finish_movie(self):
        rec, self.recorder = self.recorder, None
        if rec is None:
            return
        if rec.close():
            self.message_bar.show_message(f"Recorded {rec.count} frames to {rec.path}", "info")
        else:
            self.show_error(f"Could not record {rec.path}: {rec.error}")

    def figure_targets(self) -> list[Figure]:
        def render(scale):
            crop = self.canvas.dim == 2
            if crop:
                r = self.canvas.data_rect()
                on_screen = (r[2] - r[0]) if r is not None else self.canvas.shape[0]
                k = max(1, int(round(on_screen * scale / self.canvas.shape[0])))
                return self.canvas.field_rgba(k)
            return self.canvas.render(scale=scale)

        def size():
            if self.canvas.dim == 2:
                r = self.canvas.data_rect()
                if r is not None:
                    return r[2] - r[0], r[3] - r[1]
            return tuple(self.canvas.canvas.size)

        def render_with_bar(scale):
            img = array_to_qimage(render(scale))
            return qimage_to_array(with_colorbar(img, self.colorbar, scale))

        def size_with_bar():
            w, h = size()
            return w + self.colorbar.image(int(h)).width(), h

        return [Figure("Field view", render=render, size=size),
                Figure("Field view with colour bar", render=render_with_bar, size=size_with_bar),
                Figure("Diagnostic plots", widget=self.plots.layout_widget),
                Figure("Reproduce timings (paper 001 Fig. 10 / paper 000 layouts)", widget=self.fig10.plots)]
