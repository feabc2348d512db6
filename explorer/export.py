"""Figure and movie export shared by every workspace: PNG at a chosen size and DPI, SVG for
vector widgets (plots, tables), an optional caption/parameter footer, copy to clipboard, and
recording a running view to MP4/GIF through imageio.

A workspace lists what it can export with ``figure_targets() -> list[Figure]``: a
:class:`Figure` wraps either a VisPy canvas (``render(scale) -> RGBA array``: raster only) or a
Qt widget (pyqtgraph plots, tables: drawn through QPainter, so larger sizes are re-drawn, not
resampled, and SVG keeps vectors).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from PyQt6.QtCore import QRect, QRectF, QSize, Qt, QTimer
from PyQt6.QtGui import QColor, QFont, QImage, QPainter
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                             QLineEdit, QProgressDialog, QSpinBox, QWidget)

FOOTER_FONT_PX = 13


@dataclass
class Figure:
    """One exportable view: ``widget`` (painted by Qt) or ``render`` (a VisPy canvas)."""

    name: str
    widget: QWidget | None = None
    render: Callable[[float], np.ndarray] | None = None   # scale -> RGBA uint8 (h, w, 4)
    size: Callable[[], tuple[int, int]] | None = None     # on-screen (w, h) of a rendered view

    @property
    def vector(self) -> bool:
        return self.widget is not None

    def screen_size(self) -> tuple[int, int]:
        if self.widget is not None:
            return max(1, self.widget.width()), max(1, self.widget.height())
        if self.size is not None:
            w, h = self.size()
            return max(1, int(w)), max(1, int(h))
        a = self.render(1.0)
        return a.shape[1], a.shape[0]


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
        w, h = fig.screen_size()
        img = QImage(max(1, round(w * scale)), max(1, round(h * scale)), QImage.Format.Format_ARGB32)
        img.fill(QColor("white"))
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.scale(img.width() / w, img.height() / h)
        fig.widget.render(p)
        p.end()
        return img
    return array_to_qimage(fig.render(scale))


def _footer_height(text: str, width: int, scale: float) -> int:
    lines = max(1, len(text.splitlines()))
    return int(round((FOOTER_FONT_PX * 1.45 * lines + 10) * scale))


def _draw_footer(p: QPainter, rect: QRectF, text: str, scale: float) -> None:
    p.fillRect(rect, QColor("white"))
    f = QFont()
    f.setPixelSize(max(8, int(round(FOOTER_FONT_PX * scale))))
    p.setFont(f)
    p.setPen(QColor("#222222"))
    pad = 6 * scale
    p.drawText(rect.adjusted(pad, pad / 2, -pad, -pad / 2),
               int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextWordWrap), text)


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


def save_figure(fig: Figure, path, width: int | None = None, scale: float | None = None, dpi: int = 150,
                footer: str = "") -> Path:
    """Write ``fig`` to ``path``: ``.svg`` (vector, widget figures only) or PNG/JPEG (raster,
    ``width`` pixels wide or ``scale`` × the screen size, ``dpi`` stored in the file)."""
    path = Path(path)
    if path.suffix.lower() == ".svg":
        if not fig.vector:
            raise ValueError(f"{fig.name} is a rendered (OpenGL) view: export it as PNG")
        save_svg(fig.widget, path, footer=footer, title=fig.name)
        return path
    if path.suffix.lower() not in (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp"):
        path = path.with_name(path.name + ".png")
    img = render_figure(fig, width=width, scale=scale, footer=footer)
    dpm = int(round(dpi / 0.0254))
    img.setDotsPerMeterX(dpm)
    img.setDotsPerMeterY(dpm)
    if not img.save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def save_svg(widget: QWidget, path, footer: str = "", title: str = "") -> Path:
    """A widget (pyqtgraph plot, table …) as SVG through Qt's own generator (pyqtgraph 0.14's
    SVGExporter fails on Qt 6.11's path syntax), with an optional text footer."""
    from PyQt6.QtSvg import QSvgGenerator
    w, h = max(1, widget.width()), max(1, widget.height())
    fh = _footer_height(footer, w, 1.0) if footer else 0
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(QSize(w, h + fh))
    gen.setViewBox(QRect(0, 0, w, h + fh))
    gen.setTitle(title or "figure")
    gen.setDescription(footer or "")
    p = QPainter(gen)
    try:
        widget.render(p)
        if footer:
            _draw_footer(p, QRectF(0, h, w, fh), footer, 1.0)
    finally:
        p.end()
    return Path(path)


def copy_to_clipboard(fig: Figure, scale: float = 2.0, footer: str = "") -> QImage:
    from PyQt6.QtWidgets import QApplication
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


class ExportFigureDialog(QDialog):
    """Choose a view, format, size (pixels) and DPI, and whether to add the caption footer."""

    def __init__(self, figures: list[Figure], footer: str = "", parent=None):
        super().__init__(parent)
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
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        form.addRow(bb)
        self.target.currentIndexChanged.connect(self._on_target)
        self.fmt.currentIndexChanged.connect(self._update)
        self.width.valueChanged.connect(self._update)
        self.dpi.valueChanged.connect(self._update)
        self._on_target()

    def figure(self) -> Figure:
        return self.figures[self.target.currentIndex()]

    def _on_target(self, *_):
        fig = self.figure()
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
    with a non-modal progress dialog whose Stop button ends the recording."""

    def __init__(self, path, frames: int, fps: int, parent=None):
        import imageio.v2 as iio
        self.path = str(path)
        self.frames = int(frames)
        self.count = 0
        kw = {"fps": fps}
        if self.path.lower().endswith(".mp4"):
            kw.update(codec="libx264", quality=8, macro_block_size=2)
        else:
            kw = {"duration": 1.0 / fps, "loop": 0}
        self.writer = iio.get_writer(self.path, **kw)
        self.progress = QProgressDialog(f"Recording {Path(self.path).name}…", "Stop", 0, self.frames, parent)
        self.progress.setWindowTitle("Export movie")
        self.progress.setWindowModality(Qt.WindowModality.NonModal)
        self.progress.setMinimumDuration(0)
        self.progress.setValue(0)
        self.shape = None

    def add(self, rgba: np.ndarray) -> bool:
        """Add one frame; returns False when finished (or cancelled)."""
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
        self.writer.append_data(np.ascontiguousarray(img))
        self.count += 1
        self.progress.setValue(self.count)
        return self.count < self.frames and not self.progress.wasCanceled()

    def close(self):
        self.writer.close()
        self.progress.close()


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
            self.finished(self.rec)
