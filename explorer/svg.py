"""SVG of a view: pyqtgraph plots through pyqtgraph's SVG exporter (curves in data coordinates,
clipped to their axes), other Qt widgets (tables, labels) through Qt's ``QSvgGenerator``; fonts
named so that third-party renderers (resvg, cairosvg, Inkscape, browsers) keep the text; an
optional caption footer.

Why not ``QSvgGenerator`` for plots: Qt writes pyqtgraph's curves as paths in data coordinates
under a non-uniform group transform with ``vector-effect="non-scaling-stroke"`` (a SVG Tiny 1.2
feature that resvg and others ignore: strokes come out smeared) and drops the clip to the axes, so
curves ran past their axes and points sat at the wrong height.  pyqtgraph's exporter bakes the
transforms into the coordinates and adds the clip paths; its coordinate parser does not know the
closing ``Z`` that Qt 6.11 writes, which :func:`_patch_pyqtgraph` teaches it (as a line back to the
start of the sub-path, which is what ``Z`` draws).  Qt names the default font "Sans Serif", a
fontconfig alias other renderers do not know (resvg dropped every label): :func:`portable_fonts`
names the real family Qt used plus the CSS generic family.
"""
from __future__ import annotations

import html
import importlib
import re

from PyQt6.QtCore import QBuffer, QByteArray, QIODevice, QRect, QSize
from PyQt6.QtGui import QFont, QFontInfo, QFontMetricsF, QPainter
from PyQt6.QtSvg import QSvgGenerator
from PyQt6.QtWidgets import QWidget
import pyqtgraph as pg
import pyqtgraph.exporters as ex

GENERIC = ("serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui")
FOOTER_FONT_PX = 13
_patched = False


def _patch_pyqtgraph() -> None:
    """Let pyqtgraph's SVG exporter read the ``Z`` (close path) Qt 6.11 writes in path data."""
    global _patched
    if _patched:
        return
    mod = importlib.import_module("pyqtgraph.exporters.SVGExporter")
    original = mod.correctCoordinates

    def correct(node, defs, item, options):
        for path in node.getElementsByTagName("path"):
            out, start = [], None
            for tok in path.getAttribute("d").split():
                if tok in ("Z", "z"):
                    if start is not None:
                        out.append("L" + start)
                    continue
                if tok[0] == "M":
                    start = tok[1:]
                out.append(tok)
            path.setAttribute("d", " ".join(out))
        return original(node, defs, item, options)

    mod.correctCoordinates = correct
    _patched = True


def is_plot(widget: QWidget) -> bool:
    return isinstance(widget, pg.GraphicsView)


def supports_svg(widget: QWidget) -> bool:
    """A pyqtgraph view, or a plain Qt widget holding none (a table, labels); a panel that mixes
    widgets with a plot inside exports as PNG only."""
    return is_plot(widget) or not widget.findChildren(pg.GraphicsView)


def _family(name: str) -> str:
    """The family Qt really draws for ``name`` (fontconfig resolves aliases like "Sans Serif")."""
    return QFontInfo(QFont(name)).family()


def portable_fonts(svg: str) -> str:
    """Every ``font-family`` names the family Qt drew with and ends with a CSS generic family."""
    cache: dict[str, str] = {}

    def fix(m):
        value = html.unescape(m.group(2))
        if value not in cache:
            names = [n.strip().strip("'\"") for n in value.split(",") if n.strip()]
            fams = []
            for n in names:
                real = n if n.lower() in GENERIC else _family(n)
                for f in (real, n):
                    if f and f not in fams and f.lower() not in ("sans serif", "sans", "serif") + GENERIC:
                        fams.append(f)
            generic = next((n.lower() for n in names if n.lower() in GENERIC), "sans-serif")
            cache[value] = ", ".join([f"'{f}'" for f in fams] + [generic])
        return f'{m.group(1)}="{html.escape(cache[value], quote=True)}"'

    return re.sub(r'(font-family)\s*=\s*"([^"]*)"', fix, svg)


def _size_attrs(svg: str, w: float, h: float) -> str:
    """The root element sized in pixels with a matching viewBox (Qt writes millimetres, which
    some renderers refuse; pyqtgraph writes no size at all)."""
    m = re.search(r"<svg\b[^>]*>", svg)
    tag = m.group(0)
    new = re.sub(r'\s(width|height|viewBox)\s*="[^"]*"', "", tag)
    new = new[:-1].rstrip() + f' width="{w:g}" height="{h:g}" viewBox="0 0 {w:g} {h:g}">'
    return svg[:m.start()] + new + svg[m.end():]


def _wrap(text: str, width: float, fm: QFontMetricsF) -> list[str]:
    lines = []
    for para in text.splitlines() or [""]:
        words, cur = para.split(), ""
        for wd in words:
            t = f"{cur} {wd}".strip()
            if cur and fm.horizontalAdvance(t) > width:
                lines.append(cur)
                cur = wd
            else:
                cur = t
        lines.append(cur)
    return lines


def footer_svg(text: str, y0: float, width: float) -> tuple[str, float]:
    """SVG elements of a caption footer below ``y0`` (white strip, wrapped lines) and its height."""
    f = QFont()
    f.setPixelSize(FOOTER_FONT_PX)
    fm = QFontMetricsF(f)
    pad = 6.0
    lines = _wrap(text, width - 2 * pad, fm)
    step = FOOTER_FONT_PX * 1.45
    h = step * len(lines) + 2 * pad
    fam = f"'{_family(f.family())}', sans-serif"
    out = [f'<rect x="0" y="{y0:g}" width="{width:g}" height="{h:g}" fill="#ffffff" stroke="none"/>']
    for i, line in enumerate(lines):
        y = y0 + pad + fm.ascent() + i * step
        out.append(f'<text x="{pad:g}" y="{y:.1f}" font-family="{html.escape(fam, quote=True)}" '
                   f'font-size="{FOOTER_FONT_PX}" fill="#222222" stroke="none">{html.escape(line)}</text>')
    return "\n".join(out), h


def _qt_svg(widget: QWidget, w: int, h: int, title: str) -> str:
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(w, h))
    gen.setViewBox(QRect(0, 0, w, h))
    gen.setTitle(title or "figure")
    p = QPainter(gen)
    try:
        QWidget.render(widget, p)
    finally:
        p.end()
    return bytes(data).decode("utf-8")


def _plot_svg(view) -> str:
    _patch_pyqtgraph()
    return bytes(ex.SVGExporter(view.scene()).export(toBytes=True)).decode("utf-8")


def widget_svg(widget: QWidget, footer: str = "", title: str = "") -> str:
    """The SVG text of ``widget`` (see :func:`supports_svg`), with an optional footer."""
    if not supports_svg(widget):
        raise ValueError("this view mixes widgets with a plot: export it as PNG (or export the plot itself)")
    w, h = max(1, widget.width()), max(1, widget.height())
    svg = _plot_svg(widget) if is_plot(widget) else _qt_svg(widget, w, h, title)
    svg = portable_fonts(svg)
    total = h
    if footer:
        part, fh = footer_svg(footer, h, w)
        total = h + fh
        i = svg.rindex("</svg>")
        svg = svg[:i] + part + "\n" + svg[i:]
    return _size_attrs(svg, w, total)
