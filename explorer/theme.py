"""Themes (light, dark, high contrast) and the lecture-mode look of plots.

``apply_theme(name)`` sets the application palette (Fusion style); :class:`LectureLook` puts the
whole application into the lecture look (high-contrast palette, large fonts) and back; ``style_plot``
and ``lecture_pen`` give pyqtgraph plots the large fonts and thick lines of lecture mode and put
them back afterwards.  The main window remembers the theme in QSettings (``main/theme``).

No style sheet is set on the window for lecture mode: a style sheet on a parent makes Qt polish
every child with a palette of its own, which then no longer follows the application palette (after
leaving lecture mode labels and dock titles stayed high-contrast, and the Light theme could not
recover them).  Fonts and the palette are set on the application instead, and restored exactly.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QColor, QFont, QPalette
from PyQt6.QtWidgets import QApplication, QToolTip
import pyqtgraph as pg

THEMES = ("light", "dark", "high contrast")

# lecture mode: what a back-row student can read (point sizes)
LECTURE_PT = 17               # every widget
LECTURE_MODEBAR_PT = 11       # the mode bar's captions (fixed width)
LECTURE_STATUS_PT = 13        # the status bar (many fields on one line)
LECTURE_TOOLTIP_PT = 14
CAPTION_QSS = ("#lectureCaption { background: #000000; color: #ffd60a; font-size: 22pt; font-weight: bold; "
               "padding: 6px 14px; border-bottom: 3px solid #ffd60a; }")
LECTURE_LINE = "#ffd60a"      # curves
LECTURE_ACCENT = "#ff6b6b"    # fits, markers
LECTURE_WIDTH = 4
PLOT_FONT_PT = 15


def palette(name: str) -> QPalette:
    pal = QApplication.style().standardPalette()
    if name == "light":
        return pal
    R = QPalette.ColorRole
    if name == "dark":
        colours = {R.Window: "#2b2d31", R.WindowText: "#e6e6e6", R.Base: "#1e1f22", R.AlternateBase: "#2b2d31",
                   R.ToolTipBase: "#3a3d42", R.ToolTipText: "#f0f0f0", R.Text: "#e6e6e6", R.Button: "#3a3d42",
                   R.ButtonText: "#e6e6e6", R.BrightText: "#ff6b6b", R.Highlight: "#3d7bd9",
                   R.HighlightedText: "#ffffff", R.Link: "#7ab4ff", R.PlaceholderText: "#8a8a8a"}
    elif name == "high contrast":
        colours = {R.Window: "#000000", R.WindowText: "#ffffff", R.Base: "#000000", R.AlternateBase: "#1a1a1a",
                   R.ToolTipBase: "#000000", R.ToolTipText: "#ffff00", R.Text: "#ffffff", R.Button: "#000000",
                   R.ButtonText: "#ffffff", R.BrightText: "#ffff00", R.Highlight: "#ffd60a",
                   R.HighlightedText: "#000000", R.Link: "#00e5ff", R.PlaceholderText: "#c0c0c0"}
    else:
        raise ValueError(f"unknown theme {name!r} (one of {', '.join(THEMES)})")
    for role, c in colours.items():
        pal.setColor(role, QColor(c))
    for role in (R.WindowText, R.Text, R.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#808080"))
    return pal


def apply_theme(name: str) -> None:
    QApplication.instance().setPalette(palette(name))


class LectureLook:
    """The lecture look of the application: ``enter(smaller)`` sets the high-contrast palette and
    the lecture font on the application (``smaller``: {widget: point size} for the few widgets that
    must stay smaller, e.g. the mode bar); ``leave(theme)`` restores the fonts exactly and applies
    ``theme``.  Widgets with fonts of their own adapt through their workspace's
    ``set_lecture_mode``."""

    def __init__(self):
        self._saved = None

    @property
    def active(self) -> bool:
        return self._saved is not None

    def enter(self, smaller: dict | None = None) -> None:
        if self._saved is not None:
            return
        app = QApplication.instance()
        smaller = smaller or {}
        self._saved = (QFont(app.font()), QFont(QToolTip.font()),
                       {w: (QFont(w.font()), w.testAttribute(Qt.WidgetAttribute.WA_SetFont), w.styleSheet())
                        for w in smaller})
        apply_theme("high contrast")
        f = QFont(app.font())
        f.setPointSizeF(LECTURE_PT)
        app.setFont(f)
        tf = QFont(QToolTip.font())
        tf.setPointSizeF(LECTURE_TOOLTIP_PT)
        QToolTip.setFont(tf)
        for w, pt in smaller.items():
            if w.styleSheet():             # styled widgets (the mode bar): a rule of their own sheet
                w.setStyleSheet(w.styleSheet() + f" * {{ font-size: {pt:g}pt; }}")
            else:
                g = QFont(w.font())
                g.setPointSizeF(pt)
                w.setFont(g)

    def leave(self, theme: str) -> None:
        if self._saved is None:
            return
        app_font, tip_font, widgets = self._saved
        self._saved = None
        apply_theme(theme)                 # palette first: restyled widgets polish with it
        QToolTip.setFont(tip_font)
        QApplication.instance().setFont(app_font)
        for w, (font, explicit, sheet) in widgets.items():
            if sheet:
                w.setStyleSheet(sheet)
            else:
                w.setFont(font if explicit else QFont())  # QFont(): inherit again


def set_title(plot, text: str, lecture: bool) -> None:
    """A PlotItem title in lecture size and colour, or back to pyqtgraph's defaults."""
    if lecture:
        plot.setTitle(text, size="16pt", color="#ffffff")
    else:
        plot.titleLabel.opts["color"] = None
        plot.setTitle(text, size="11pt")          # PlotItem's own default title size


def style_axis(ax, lecture: bool) -> None:
    """Pens, tick font and label style of one pyqtgraph AxisItem for (or after) lecture mode."""
    fg = "w" if lecture else "k"
    font = QFont()
    if lecture:
        font.setPointSize(PLOT_FONT_PT)
    ax.setStyle(tickFont=font if lecture else None)
    ax.setPen(fg)
    ax.setTextPen(fg)
    if lecture:
        ax.labelStyle = {"font-size": f"{PLOT_FONT_PT}pt", "color": "#ffffff"}
    else:                              # setTextPen put back the colour: as pyqtgraph builds it
        ax.labelStyle.pop("font-size", None)
    ax._updateLabel()


def style_plot(plot, lecture: bool) -> None:
    """Fonts, axis colours and title of one pyqtgraph PlotItem for (or after) lecture mode."""
    for name in ("left", "bottom"):
        style_axis(plot.getAxis(name), lecture)
    if plot.titleLabel.text:
        set_title(plot, plot.titleLabel.text, lecture)


def lecture_pen(lecture: bool, normal, color: str = LECTURE_LINE, **kw):
    """The pen of a curve in lecture mode (thick, bright) or its normal pen."""
    return pg.mkPen(color, width=LECTURE_WIDTH, **kw) if lecture else normal
