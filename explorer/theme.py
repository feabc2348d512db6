"""Themes (light, dark, high contrast) and the lecture-mode look of plots.

``apply_theme(name)`` sets the application palette (Fusion style); ``style_plot`` and
``lecture_pen`` give pyqtgraph plots the large fonts and thick lines of lecture mode and put
them back afterwards.  The main window remembers the theme in QSettings (``main/theme``).
"""
from __future__ import annotations

from PyQt6.QtGui import QColor, QFont, QPalette

THEMES = ("light", "dark", "high contrast")

# lecture mode: what a back-row student can read
LECTURE_QSS = ("QWidget { font-size: 17pt; } "
               "#modeBar { font-size: 11pt; } "
               "QStatusBar, QStatusBar QLabel { font-size: 13pt; } "
               "QToolTip { font-size: 14pt; }")
CAPTION_QSS = ("#lectureCaption { background: #000000; color: #ffd60a; font-size: 22pt; font-weight: bold; "
               "padding: 6px 14px; border-bottom: 3px solid #ffd60a; }")
LECTURE_LINE = "#ffd60a"      # curves
LECTURE_ACCENT = "#ff6b6b"    # fits, markers
LECTURE_WIDTH = 4
PLOT_FONT_PT = 15


def palette(name: str) -> QPalette:
    from PyQt6.QtWidgets import QApplication
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
    from PyQt6.QtWidgets import QApplication
    QApplication.instance().setPalette(palette(name))


def set_title(plot, text: str, lecture: bool) -> None:
    """A PlotItem title in lecture size and colour, or back to pyqtgraph's defaults."""
    if lecture:
        plot.setTitle(text, size="16pt", color="#ffffff")
    else:
        plot.titleLabel.opts["color"] = None
        plot.setTitle(text, size="11pt")          # PlotItem's own default title size


def style_plot(plot, lecture: bool) -> None:
    """Fonts, axis colours and title of one pyqtgraph PlotItem for (or after) lecture mode."""
    fg = "w" if lecture else "k"
    font = QFont()
    if lecture:
        font.setPointSize(PLOT_FONT_PT)
    for name in ("left", "bottom"):
        ax = plot.getAxis(name)
        ax.setStyle(tickFont=font if lecture else None)
        ax.setPen(fg)
        ax.setTextPen(fg)
        if lecture:
            ax.labelStyle = {"font-size": f"{PLOT_FONT_PT}pt", "color": "#ffffff"}
        else:
            ax.labelStyle = {}
        ax._updateLabel()
    if plot.titleLabel.text:
        set_title(plot, plot.titleLabel.text, lecture)


def lecture_pen(lecture: bool, normal, color: str = LECTURE_LINE, **kw):
    """The pen of a curve in lecture mode (thick, bright) or its normal pen."""
    import pyqtgraph as pg
    return pg.mkPen(color, width=LECTURE_WIDTH, **kw) if lecture else normal
