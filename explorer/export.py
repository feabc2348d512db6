"""Figure and movie export shared by every workspace: PNG at a chosen size and DPI, SVG for
vector widgets (plots, tables), an optional caption/parameter footer, copy to clipboard, and
recording a running view to MP4/GIF through imageio.

A workspace lists what it can export with ``figure_targets() -> list[Figure]``: a
:class:`Figure` wraps either a VisPy canvas (``render(scale) -> RGBA array``: raster only) or a
Qt widget (pyqtgraph plots, tables: drawn through QPainter, so larger sizes are re-drawn, not
resampled, and SVG keeps vectors: :mod:`explorer.svg`).

Every file the GUI writes goes through :func:`write_file` (or :class:`MovieRecorder`): the path is
checked first (folder, extension: none gets the format's own, another one is refused), the data go
to a temporary file beside it (``kernels.fileio.atomic_path``) that replaces the path only when
complete, and the path returned is the path written.
"""
from __future__ import annotations

# Imports inside functions: imageio (with its FFmpeg plug-in, slow to import) loads only when a movie is
# recorded.
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from PyQt6.QtCore import QRect, QRectF, Qt, QTimer
from PyQt6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PyQt6.QtWidgets import (QApplication, QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                             QLineEdit, QProgressDialog, QScrollArea, QSpinBox, QWidget)

from kernels.errors import ExplorerError
from kernels.fileio import atomic_path, check_output_path, write_text

from .figure_style import FigureStyle, StyleForm, plot_items, styled
from .svg import FOOTER_FONT_PX, supports_svg, widget_svg

RASTER = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")
FIGURE_SUFFIXES = (".png", ".svg") + RASTER[1:]
MOVIE_SUFFIXES = (".mp4", ".gif")


def output_path(path, suffixes, what: str = "file") -> Path:
    """The path an export writes: ``path`` with ``suffixes[0]`` added when it has no extension;
    :class:`kernels.errors.InvalidParameter` for another extension or a folder that cannot take it."""
    p = Path(os.path.expanduser(str(path)))
    if not p.suffix:
        p = p.with_name(p.name + suffixes[0])
    return check_output_path(p, suffixes, what)


def write_file(path, suffixes, writer: Callable[[Path], object], what: str = "file") -> Path:
    """Check ``path`` (:func:`output_path`), run ``writer(temporary path)`` and rename the result
    onto the path; on any failure an earlier file there is untouched.  Returns the path written."""
    p = output_path(path, suffixes, what)
    with atomic_path(p) as tmp:
        writer(tmp)
    return p


def guarded(report: Callable[[str], object], what: str, fn: Callable[[], object]):
    """``fn()``, or None after ``report("Could not {what}: …")`` when it fails with a bad path or
    an I/O error (nothing else changes: the GUI keeps its state)."""
    try:
        return fn()
    except (ExplorerError, OSError, ValueError, MemoryError) as exc:
        report(f"Could not {what}: {exc}")
        return None


@dataclass
class Figure:
    """One exportable view: ``widget`` (painted by Qt) or ``render`` (a VisPy canvas)."""

    name: str
    widget: QWidget | None = None
    render: Callable[[float], np.ndarray] | None = None   # scale -> RGBA uint8 (h, w, 4)
    size: Callable[[], tuple[int, int]] | None = None     # on-screen (w, h) of a rendered view

    @property
    def vector(self) -> bool:
        """SVG is offered (plots and plain widgets; OpenGL views and mixed panels are PNG only)."""
        return self.widget is not None and supports_svg(self.widget)

    def screen_size(self) -> tuple[int, int]:
        if self.widget is not None:
            settle_layout(self.widget)
            return max(1, self.widget.width()), max(1, self.widget.height())
        if self.size is not None:
            w, h = self.size()
            return max(1, int(w)), max(1, int(h))
        a = self.render(1.0)
        return a.shape[1], a.shape[0]


def settle_layout(widget: QWidget) -> None:
    """Lay out ``widget`` and its ancestors now: a widget never shown (a tab not opened yet) has
    its layout's size only after this, and an export must measure what it will draw (rendering
    it must not change that size).  Scrolled pages (:func:`explorer.widgets.scrolled`) get their
    area's viewport size, which a never-shown area gives them only on its first resize event."""
    chain = []
    w = widget
    while w is not None:
        chain.append(w)
        w = w.parentWidget()
    for _ in range(2):                  # the pages' sizes feed the layouts inside them: twice settles
        QApplication.sendPostedEvents()
        for a in reversed(chain):
            a.ensurePolished()
            if a.layout() is not None:
                a.layout().activate()
            if isinstance(a, QScrollArea) and a.widgetResizable():
                a.setWidgetResizable(True)      # Qt sizes the page now, as its first resize event would


def _first_paint(widget: QWidget) -> None:
    """Paint ``widget`` once off screen before it is measured and drawn: pyqtgraph sizes its axes
    (tick labels, a colour bar's scale) when it paints, so a widget not painted since its data
    changed (a tab not opened yet) would be exported with the axes of before."""
    settle_layout(widget)
    img = QImage(max(1, widget.width()), max(1, widget.height()), QImage.Format.Format_ARGB32)
    p = QPainter(img)
    QWidget.render(widget, p)
    p.end()


def array_to_qimage(a: np.ndarray) -> QImage:
    a = np.ascontiguousarray(a)
    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, axis=2)
    h, w, c = a.shape
    if c == 3:
        a = np.ascontiguousarray(np.concatenate([a, np.full((h, w, 1), 255, np.uint8)], axis=2))
    img = QImage(a.data, w, h, 4 * w, QImage.Format.Format_RGBA8888)
    return img.copy()       # own the pixels (a goes out of scope)


def qimage_to_array(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGBA8888)
    w, h = img.width(), img.height()
    ptr = img.constBits()
    ptr.setsize(img.sizeInBytes())
    return np.frombuffer(ptr, np.uint8).reshape(h, img.bytesPerLine())[:, : 4 * w].reshape(h, w, 4).copy()


def figure_image(fig: Figure, scale: float = 1.0) -> QImage:
    """The figure as an image at ``scale`` × its on-screen size."""
    if fig.widget is not None:
        _first_paint(fig.widget)
        w, h = fig.screen_size()
        img = QImage(max(1, round(w * scale)), max(1, round(h * scale)), QImage.Format.Format_ARGB32)
        img.fill(QColor("white"))
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.scale(img.width() / w, img.height() / h)
        # QWidget's render, through the scaled painter: a QGraphicsView's own render() would fit
        # the scene to the device rectangle again (at 2×: the top-left quarter, magnified)
        QWidget.render(fig.widget, p)
        p.end()
        return img
    return array_to_qimage(fig.render(scale))


_FOOTER_FLAGS = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap)


def _footer_font(scale: float) -> QFont:
    f = QFont()
    f.setPixelSize(max(8, int(round(FOOTER_FONT_PX * scale))))
    return f


def _footer_height(text: str, width: int, scale: float) -> int:
    """The strip's height for ``text`` wrapped at ``width`` as :func:`_draw_footer` draws it (a
    long caption wraps to more lines than it has: counting its lines clipped both ends)."""
    pad = 6 * scale
    fm = QFontMetrics(_footer_font(scale))
    r = fm.boundingRect(QRect(0, 0, max(1, int(width - 2 * pad)), 1_000_000), _FOOTER_FLAGS, text)
    return int(math.ceil(r.height() + 2 * pad))


def _draw_footer(p: QPainter, rect: QRectF, text: str, scale: float) -> None:
    p.fillRect(rect, QColor("white"))
    p.setFont(_footer_font(scale))
    p.setPen(QColor("#222222"))
    pad = 6 * scale
    p.drawText(rect.adjusted(pad, pad, -pad, -pad), _FOOTER_FLAGS, text)


def with_footer(img: QImage, text: str, scale: float = 1.0) -> QImage:
    """``img`` with a white strip below holding ``text`` (caption, parameters)."""
    if not text:
        return img
    fh = _footer_height(text, img.width(), scale)
    out = QImage(img.width(), img.height() + fh, QImage.Format.Format_ARGB32)
    out.fill(QColor("white"))
    p = QPainter(out)
    p.drawImage(0, 0, img)
    _draw_footer(p, QRectF(0, img.height(), img.width(), fh), text, scale)
    p.end()
    return out


def render_figure(fig: Figure, width: int | None = None, scale: float | None = None,
                  footer: str = "") -> QImage:
    """The image that :func:`save_figure` writes (``width`` in pixels wins over ``scale``)."""
    w0, h0 = fig.screen_size()
    s = (width / w0) if width else (scale or 1.0)
    img = figure_image(fig, s)
    if width and img.width() != width:   # e.g. whole pixels per cell: fit the width asked for
        img = img.scaled(int(width), max(1, round(img.height() * width / img.width())),
                         Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
    return with_footer(img, footer, s)


def save_image(img: QImage, path, dpi: int | None = None, suffixes=RASTER) -> Path:
    """Write a QImage (format from the extension; ``dpi`` stored in the file); the path written."""
    if dpi:
        dpm = int(round(dpi / 0.0254))
        img.setDotsPerMeterX(dpm)
        img.setDotsPerMeterY(dpm)

    def write(tmp):
        if not img.save(str(tmp)):
            raise OSError(f"Qt could not write the image {Path(path).name}")
    return write_file(path, suffixes, write, "image")


def save_figure(fig: Figure, path, width: int | None = None, scale: float | None = None, dpi: int = 150,
                footer: str = "", style: FigureStyle | None = None) -> Path:
    """Write ``fig`` to ``path``: ``.svg`` (vector, widget figures only) or PNG/JPEG/TIFF/BMP
    (raster, ``width`` pixels wide or ``scale`` × the screen size, ``dpi`` stored in the file).
    ``style``: fonts, line widths, legend, ranges and title of its pyqtgraph plots for this file
    only (:mod:`explorer.figure_style`).  No extension: PNG; another extension:
    :class:`kernels.errors.InvalidParameter`."""
    p = output_path(path, FIGURE_SUFFIXES, "figure")
    if p.suffix.lower() == ".svg" and not fig.vector:
        raise ValueError(f"{fig.name} is a rendered (OpenGL) view or holds one: export it as PNG")
    with styled(fig.widget, style):
        if p.suffix.lower() == ".svg":
            return save_svg(fig.widget, p, footer=footer, title=fig.name)
        return save_image(render_figure(fig, width=width, scale=scale, footer=footer), p, dpi)


def save_svg(widget: QWidget, path, footer: str = "", title: str = "") -> Path:
    """A widget (pyqtgraph plot, table …) as SVG (:func:`explorer.svg.widget_svg`), with an
    optional text footer; written atomically.  Returns the path written."""
    p = output_path(path, (".svg",), "SVG file")
    return write_text(p, widget_svg(widget, footer=footer, title=title))


def copy_to_clipboard(fig: Figure, scale: float = 2.0, footer: str = "") -> QImage:
    img = render_figure(fig, scale=scale, footer=footer)
    QApplication.clipboard().setImage(img)
    return img


def is_blank(path_or_img) -> bool:
    """True when an image is one flat colour (used by tests and as an export sanity check)."""
    img = QImage(str(path_or_img)) if not isinstance(path_or_img, QImage) else path_or_img
    if img.isNull():
        return True
    a = qimage_to_array(img)[..., :3]
    return bool((a == a[0, 0]).all())


class ExportImageDialog(QDialog):
    """Resolution (1–8 × the canvas, ``scale``) and, for 2D fields, cropping to the field (``crop``)
    of a view exported as an image."""

    def __init__(self, canvas_size, dim, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export image")
        form = QFormLayout(self)
        self.scale = QSpinBox()
        self.scale.setRange(1, 8)
        self.scale.setValue(2)
        self.scale.setSuffix(" ×")
        self.size_label = QLabel()
        w, h = canvas_size
        upd = lambda v: self.size_label.setText(f"{w * v} × {h * v} px (before cropping)")
        self.scale.valueChanged.connect(upd)
        upd(2)
        self.crop = QCheckBox("Crop to the field (2D)")
        self.crop.setChecked(dim == 2)
        self.crop.setEnabled(dim == 2)
        form.addRow("Resolution", self.scale)
        form.addRow("", self.size_label)
        form.addRow("", self.crop)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        form.addRow(bb)

    @classmethod
    def ask(cls, canvas_size, dim, parent=None) -> tuple[int, bool] | None:
        """(scale, crop) chosen by the user, or None when the dialog is cancelled."""
        dlg = cls(canvas_size, dim, parent)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return None
        return dlg.scale.value(), dlg.crop.isChecked()


class ExportFigureDialog(QDialog):
    """Choose a view, format, size (pixels) and DPI, whether to add the caption footer, and the
    plots' style (:class:`explorer.figure_style.StyleForm`, enabled for figures with pyqtgraph
    plots; ``styles(figure) -> FigureStyle`` gives each figure's remembered one)."""

    def __init__(self, figures: list[Figure], footer: str = "", parent=None, styles=None):
        super().__init__(parent)
        self._styles = styles
        self.setWindowTitle("Export figure")
        self.figures = figures
        form = QFormLayout(self)
        self.target = QComboBox()
        self.target.addItems([f.name for f in figures])
        self.target.setToolTip("Which view or plot of this workspace to export")
        self.fmt = QComboBox()
        self.fmt.addItem("PNG (raster)", "png")
        self.fmt.addItem("SVG (vector)", "svg")
        self.fmt.setToolTip("SVG keeps plots and tables as vectors; OpenGL views are PNG only")
        self.width = QSpinBox()
        self.width.setRange(64, 16384)
        self.width.setSingleStep(100)
        self.width.setSuffix(" px")
        self.width.setToolTip("Width of the image; the height follows the view's aspect ratio")
        self.dpi = QSpinBox()
        self.dpi.setRange(50, 1200)
        self.dpi.setValue(300)
        self.dpi.setToolTip("Resolution stored in the PNG: sets its printed size (width / DPI inches)")
        self.size_label = QLabel()
        self.footer_check = QCheckBox("Add caption / parameter footer")
        self.footer_text = QLineEdit(footer)
        self.footer_text.setCursorPosition(0)          # a long caption shows its start, not its end
        self.footer_text.setToolTip("Text printed under the figure (the caption and parameters by default)")
        self.footer_check.toggled.connect(self.footer_text.setEnabled)
        self.footer_check.setChecked(True)
        form.addRow("View", self.target)
        form.addRow("Format", self.fmt)
        form.addRow("Width", self.width)
        form.addRow("DPI", self.dpi)
        form.addRow("", self.size_label)
        form.addRow(self.footer_check)
        form.addRow(self.footer_text)
        self.style_form = StyleForm(self)
        form.addRow(self.style_form)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        bb.accepted.connect(self._accept)
        bb.rejected.connect(self.reject)
        self.error = QLabel()
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        form.addRow(self.error)
        form.addRow(bb)
        self.target.currentIndexChanged.connect(self._on_target)
        self.fmt.currentIndexChanged.connect(self._update)
        self.width.valueChanged.connect(self._update)
        self.dpi.valueChanged.connect(self._update)
        self._on_target()

    def figure(self) -> Figure:
        return self.figures[self.target.currentIndex()]

    def style(self) -> FigureStyle | None:
        """The style for the chosen figure (None when it has no pyqtgraph plot)."""
        return self.style_form.style() if self.style_form.isEnabled() else None

    def _accept(self) -> None:
        try:
            self.style()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()

    def _on_target(self, *_):
        fig = self.figure()
        has_plots = bool(plot_items(fig.widget))
        self.style_form.setEnabled(has_plots)
        self.style_form.set_style(self._styles(fig) if (self._styles and has_plots) else FigureStyle())
        w, _h = fig.screen_size()
        self.width.setValue(min(16384, 2 * w))
        item = self.fmt.model().item(1)
        item.setEnabled(fig.vector)
        if not fig.vector:
            self.fmt.setCurrentIndex(0)
        self._update()

    def _update(self, *_):
        fig = self.figure()
        w0, h0 = fig.screen_size()
        svg = self.fmt.currentData() == "svg"
        self.width.setEnabled(not svg)
        self.dpi.setEnabled(not svg)
        w = self.width.value()
        h = round(h0 * w / w0)
        d = self.dpi.value()
        self.size_label.setText("vector: scales to any size" if svg else
                                f"{w} × {h} px = {w / d * 2.54:.1f} × {h / d * 2.54:.1f} cm at {d} DPI")


class MovieRecorder:
    """Appends frames (RGB(A) uint8 arrays) to an imageio MP4/GIF writer for ``frames`` frames,
    with a non-modal progress dialog whose Stop button ends the recording.  The movie is written
    to a temporary file beside ``path`` and renamed onto it by :meth:`close` (a recording that
    fails leaves an earlier file at ``path`` as it was); ``path`` without an extension gets .mp4."""

    def __init__(self, path, frames: int, fps: int, parent=None):
        import imageio.v2 as iio
        target = output_path(path, MOVIE_SUFFIXES, "movie")
        self.path = str(target)
        self.frames = int(frames)
        self.count = 0
        kw = {"fps": fps}
        if self.path.lower().endswith(".mp4"):
            kw.update(codec="libx264", quality=8, macro_block_size=2)
        else:
            kw = {"duration": 1.0 / fps, "loop": 0}
        self._atomic = atomic_path(target)
        tmp = self._atomic.__enter__()
        try:
            self.writer = iio.get_writer(str(tmp), **kw)
        except BaseException as exc:
            self._atomic.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self.progress = QProgressDialog(f"Recording {target.name}…", "Stop", 0, self.frames, parent)
        self.progress.setWindowTitle("Export movie")
        self.progress.setWindowModality(Qt.WindowModality.NonModal)
        self.progress.setMinimumDuration(0)
        self.progress.setValue(0)
        self.shape = None
        self.error = ""

    def add(self, rgba: np.ndarray) -> bool:
        """Add one frame; returns False when finished (or cancelled, or the writer failed)."""
        img = rgba[..., :3]
        if self.shape is None:
            h, w = img.shape[:2]
            self.shape = (h - h % 2, w - w % 2)
        img = img[: self.shape[0], : self.shape[1]]
        if img.shape[:2] != self.shape:  # canvas resized while recording: pad
            pad = np.zeros(self.shape + (3,), np.uint8)
            hh, ww = min(img.shape[0], self.shape[0]), min(img.shape[1], self.shape[1])
            pad[:hh, :ww] = img[:hh, :ww]
            img = pad
        try:
            self.writer.append_data(np.ascontiguousarray(img))
        except (OSError, RuntimeError, ValueError) as exc:       # disk full, ffmpeg gone …
            self.error = f"{type(exc).__name__}: {exc}"
            return False
        self.count += 1
        self.progress.setValue(self.count)
        return self.count < self.frames and not self.progress.wasCanceled()

    def close(self) -> bool:
        """Finish the file and put it in place (True), or discard it after a failure (False:
        :attr:`error` says why)."""
        if self._atomic is None:
            return not self.error
        atomic, self._atomic = self._atomic, None
        try:
            self.writer.close()
            if self.error or self.count == 0:
                raise OSError(self.error or "no frame was recorded")
        except (OSError, RuntimeError, ValueError) as exc:
            self.error = self.error or f"{type(exc).__name__}: {exc}"
            atomic.__exit__(type(exc), exc, exc.__traceback__)
        else:
            try:
                atomic.__exit__(None, None, None)
            except OSError as exc:
                self.error = str(exc)
        self.progress.close()
        return not self.error


class ScreenRecorder:
    """Records a :class:`Figure` on a timer (for views without a frame clock of their own):
    ``fps`` grabs per second into a :class:`MovieRecorder`; ``finished(recorder)`` at the end."""

    def __init__(self, fig: Figure, path, frames: int, fps: int = 10, parent=None, finished=None):
        self.fig = fig
        self.rec = MovieRecorder(path, frames, fps, parent)
        self.finished = finished
        self.timer = QTimer(parent)
        self.timer.setInterval(int(1000 / fps))
        self.timer.timeout.connect(self._grab)
        self.rec.progress.canceled.connect(self.stop)
        self.timer.start()
        self._grab()

    @property
    def active(self) -> bool:
        return self.timer.isActive()

    def _grab(self):
        if not self.rec.add(qimage_to_array(figure_image(self.fig, 1.0))):
            self.stop()

    def stop(self):
        if not self.timer.isActive():
            return
        self.timer.stop()
        self.rec.close()
        if self.finished is not None:
            self.finished(self.rec)       # rec.error says whether it was written
