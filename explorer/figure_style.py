"""Figure styling before export: font scale, line width, legend position (or hidden), axis ranges
and title, applied to the pyqtgraph plots of a figure for the time of the export only
(:func:`styled`: everything is put back afterwards, the screen never keeps the export's look).

The export dialog (:class:`explorer.export.ExportFigureDialog`) edits a :class:`FigureStyle`;
the window remembers it per figure (workspace and figure name) in the settings
(:func:`load_style` / :func:`save_style`), so the next export of that figure starts from it.
A figure without pyqtgraph plots (an OpenGL view, a table) is exported unstyled.
"""
from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, fields

from PyQt6.QtCore import QRectF
from PyQt6.QtGui import QFont, QResizeEvent
from PyQt6.QtWidgets import (QApplication, QComboBox, QDoubleSpinBox, QFormLayout, QGraphicsWidget, QGroupBox,
                             QLineEdit, QWidget)
import pyqtgraph as pg

LEGEND_POSITIONS = {       # name → (item anchor, parent anchor, offset)
    "auto": None,
    "top right": ((1, 0), (1, 0), (-10, 10)),
    "top left": ((0, 0), (0, 0), (10, 10)),
    "bottom right": ((1, 1), (1, 1), (-10, -10)),
    "bottom left": ((0, 1), (0, 1), (10, -10)),
    "hidden": None,
}


@dataclass
class FigureStyle:
    """How a figure is drawn when exported; the defaults change nothing."""

    font_scale: float = 1.0                    # × the on-screen tick, label, title and legend fonts
    line_width: float = 0.0                    # curve pen width in px; 0 keeps each curve's own
    legend: str = "auto"                       # a key of LEGEND_POSITIONS
    x_range: tuple[float, float] | None = None  # None: as on screen
    y_range: tuple[float, float] | None = None
    title: str = ""                            # "" keeps the plot's own title

    def is_default(self) -> bool:
        return self == FigureStyle()

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "FigureStyle":
        """A style from :meth:`to_dict`; unknown keys and bad values fall back to the defaults."""
        out = cls()
        if not isinstance(d, dict):
            return out
        names = {f.name for f in fields(cls)}
        for k, v in d.items():
            if k not in names:
                continue
            try:
                if k in ("font_scale", "line_width"):
                    v = float(v)
                    if not (0 <= v <= 20):
                        continue
                elif k in ("x_range", "y_range"):
                    v = None if v is None else (float(v[0]), float(v[1]))
                    if v is not None and not v[0] < v[1]:
                        continue
                elif k == "legend":
                    if v not in LEGEND_POSITIONS:
                        continue
                else:
                    v = str(v)
            except (TypeError, ValueError, IndexError):
                continue
            setattr(out, k, v)
        return out


def settings_key(workspace: str, figure: str) -> str:
    return f"figure_style/{workspace}/{figure}".replace(" ", "_")


def load_style(settings, workspace: str, figure: str) -> FigureStyle:
    """The style last used for this figure (defaults when none or unreadable)."""
    raw = settings.value(settings_key(workspace, figure), "")
    try:
        return FigureStyle.from_dict(json.loads(raw)) if raw else FigureStyle()
    except (TypeError, ValueError):
        return FigureStyle()


def save_style(settings, workspace: str, figure: str, style: FigureStyle) -> None:
    settings.setValue(settings_key(workspace, figure), json.dumps(style.to_dict()))


def plot_items(widget) -> list:
    """The pyqtgraph PlotItems drawn by ``widget`` (a PlotWidget, a GraphicsLayoutWidget, or a
    widget holding them)."""
    if widget is None:
        return []
    views = [widget] if isinstance(widget, pg.GraphicsView) else []
    views += widget.findChildren(pg.GraphicsView) if isinstance(widget, QWidget) else []
    out = []
    for v in views:
        scene = v.scene()
        if scene is None:
            continue
        for it in scene.items():
            if isinstance(it, pg.PlotItem) and it not in out:
                out.append(it)
    return out


def _relayout(widget) -> None:
    """Lay the plots of ``widget`` out in their views again: a layout that grew for larger fonts
    does not shrink by itself (its views re-fit it only on a resize)."""
    views = [widget] if isinstance(widget, pg.GraphicsView) else []
    views += widget.findChildren(pg.GraphicsView) if isinstance(widget, QWidget) else []
    for v in views:
        scene = v.scene()
        for it in (scene.items() if scene is not None else []):
            if isinstance(it, pg.GraphicsWidget):
                it.updateGeometry()                # drop the size hints cached at the larger fonts
                lay = QGraphicsWidget.layout(it)
                if lay is not None:
                    lay.invalidate()
        QApplication.sendPostedEvents()
        if v.centralWidget is not None:
            v.centralWidget.setGeometry(QRectF(0, 0, v.width(), v.height()))
        QApplication.sendEvent(v, QResizeEvent(v.size(), v.size()))


def _scaled_font(font, scale):
    f = QFont(font)
    if f.pixelSize() > 0:
        f.setPixelSize(max(1, round(f.pixelSize() * scale)))
    else:
        f.setPointSizeF(max(1.0, f.pointSizeF() * scale))
    return f


@contextlib.contextmanager
def styled(widget, style: FigureStyle | None):
    """Within the block, ``widget``'s pyqtgraph plots are drawn with ``style``; restored after."""
    if style is None or style.is_default():
        yield
        return
    undo = []
    try:
        if widget is not None:            # larger fonts must not grow the widget: the figure keeps its size
            mn, mx = widget.minimumSize(), widget.maximumSize()
            undo.append(lambda: (widget.setMinimumSize(mn), widget.setMaximumSize(mx)))
            widget.setFixedSize(widget.size())
        undo.append(lambda: _relayout(widget))      # runs last: the layouts shrink back to the view
        for pi in plot_items(widget):
            _apply(pi, style, undo)
        yield
    finally:
        for fn in reversed(undo):
            try:
                fn()
            except RuntimeError:         # an item deleted meanwhile
                pass


def _apply(pi, style: FigureStyle, undo: list) -> None:
    vb = pi.getViewBox()
    if style.x_range is not None or style.y_range is not None:
        rng, auto = vb.viewRange(), list(vb.state["autoRange"])
        undo.append(lambda: (vb.setRange(xRange=rng[0], yRange=rng[1], padding=0),
                             vb.enableAutoRange(x=auto[0], y=auto[1])))
        if style.x_range is not None:
            vb.setXRange(*style.x_range, padding=0)
        if style.y_range is not None:
            vb.setYRange(*style.y_range, padding=0)
    if style.title:
        tl = pi.titleLabel
        old, opts0, shown = tl.text, dict(tl.opts), tl.isVisible()
        row_h, max_h = pi.layout.rowMinimumHeight(0), tl.maximumHeight()

        def back():
            tl.opts = dict(opts0)
            if shown:
                pi.setTitle(old)
            else:
                pi.setTitle(None)
            pi.layout.setRowFixedHeight(0, row_h)
            tl.setMaximumHeight(max_h)
        undo.append(back)
        pi.setTitle(style.title)
    if style.line_width > 0:
        for item in pi.listDataItems():
            if isinstance(item, pg.PlotDataItem) and item.opts.get("pen") is not None:
                pen0 = item.opts["pen"]
                pen = pg.mkPen(pen0)
                pen.setWidthF(style.line_width)
                undo.append(lambda it=item, p=pen0: it.setPen(p))
                item.setPen(pen)
    if style.font_scale != 1.0:
        s = style.font_scale
        for name in ("left", "bottom", "right", "top"):
            ax = pi.getAxis(name)
            if ax is None or not ax.isVisible():
                continue
            tick_font = ax.style.get("tickFont")
            label_font = ax.label.font()
            base = tick_font if tick_font is not None else QFont()
            tw, th = ax.textWidth, ax.textHeight      # the axis only grows its text space by itself

            def back(a=ax, tf=tick_font, lf=label_font, tw=tw, th=th):
                a.label.setFont(lf)
                a.textWidth, a.textHeight = tw, th
                a.setStyle(tickFont=tf)                # re-sizes the axis from the text space
            undo.append(back)
            ax.setStyle(tickFont=_scaled_font(base, s))
            ax.label.setFont(_scaled_font(label_font, s))
        tl = pi.titleLabel
        if tl.isVisible() and tl.text:
            _scale_label(tl, s, undo)
    legend = pi.legend
    if legend is not None and style.legend != "auto":
        visible = legend.isVisible()
        if style.legend == "hidden":
            undo.append(lambda: legend.setVisible(visible))
            legend.setVisible(False)
        else:
            pos = legend.pos()
            undo.append(lambda: legend.setPos(pos))
            item_anchor, parent_anchor, offset = LEGEND_POSITIONS[style.legend]
            legend.anchor(item_anchor, parent_anchor, offset)
    if legend is not None and style.font_scale != 1.0:
        for _sample, label in legend.items:
            _scale_label(label, style.font_scale, undo)


def _scale_label(label, scale: float, undo: list) -> None:
    """A pyqtgraph LabelItem's text ``scale`` × larger; its text and options put back by ``undo``."""
    text0, opts0 = label.text, dict(label.opts)

    def back(lb=label, t=text0, o=opts0):
        lb.opts = dict(o)
        lb.setText(t)
    undo.append(back)
    size0 = opts0.get("size")
    pt = float(str(size0)[:-2]) if size0 and str(size0).endswith("pt") else 9.0
    label.setText(text0, size=f"{pt * scale:.1f}pt")


def _range_text(r) -> str:
    return "" if r is None else f"{r[0]:g}, {r[1]:g}"


def _parse_range(text: str):
    """"a, b" → (a, b) with a < b; "" → None; ValueError otherwise."""
    text = text.strip()
    if not text:
        return None
    parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
    if len(parts) != 2:
        raise ValueError(f"a range is two numbers 'min, max', not {text!r}")
    a, b = float(parts[0]), float(parts[1])
    if not a < b:
        raise ValueError(f"a range needs min < max, not {text!r}")
    return a, b




class StyleForm(QGroupBox):
    """Font scale, line width, legend, x/y ranges and title of a :class:`FigureStyle`."""

    def __init__(self, parent=None):
        super().__init__("Style (plots)", parent)
        self.setToolTip("How the plot is drawn in the exported file only; remembered for this figure")
        form = QFormLayout(self)
        self.font_scale = QDoubleSpinBox()
        self.font_scale.setRange(0.5, 5.0)
        self.font_scale.setSingleStep(0.25)
        self.font_scale.setValue(1.0)
        self.font_scale.setSuffix(" ×")
        self.font_scale.setToolTip("Tick labels, axis labels, title and legend text, × their size on screen")
        self.line_width = QDoubleSpinBox()
        self.line_width.setRange(0.0, 20.0)
        self.line_width.setSingleStep(0.5)
        self.line_width.setSpecialValueText("as on screen")
        self.line_width.setSuffix(" px")
        self.line_width.setToolTip("Width of every curve's line (as on screen: each curve keeps its own)")
        self.legend = QComboBox()
        self.legend.addItems(list(LEGEND_POSITIONS))
        self.legend.setToolTip("Where the legend goes, or hidden (auto: where it is on screen)")
        self.x_range = QLineEdit()
        self.x_range.setPlaceholderText("as on screen (e.g. 0, 100)")
        self.x_range.setToolTip("x axis range 'min, max' in the axis's units; empty: as on screen")
        self.y_range = QLineEdit()
        self.y_range.setPlaceholderText("as on screen (e.g. -1, 1)")
        self.y_range.setToolTip("y axis range 'min, max' in the axis's units; empty: as on screen")
        self.title = QLineEdit()
        self.title.setPlaceholderText("the plot's own title")
        self.title.setToolTip("Title drawn above the plot; empty keeps the plot's own")
        form.addRow("Font scale", self.font_scale)
        form.addRow("Line width", self.line_width)
        form.addRow("Legend", self.legend)
        form.addRow("x range", self.x_range)
        form.addRow("y range", self.y_range)
        form.addRow("Title", self.title)

    def set_style(self, s: FigureStyle) -> None:
        self.font_scale.setValue(s.font_scale)
        self.line_width.setValue(s.line_width)
        self.legend.setCurrentText(s.legend)
        self.x_range.setText(_range_text(s.x_range))
        self.y_range.setText(_range_text(s.y_range))
        self.title.setText(s.title)

    def style(self) -> FigureStyle:
        """The style shown; ValueError naming a bad range."""
        return FigureStyle(font_scale=self.font_scale.value(), line_width=self.line_width.value(),
                           legend=self.legend.currentText(), x_range=_parse_range(self.x_range.text()),
                           y_range=_parse_range(self.y_range.text()), title=self.title.text().strip())
