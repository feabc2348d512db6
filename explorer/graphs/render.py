"""The graph view without a window: the same :class:`~explorer.graphs.scene.GraphScene` as the GUI,
drawn into an offscreen ``vispy.scene.SceneCanvas``, with a colour bar for the values; saved as
PNG (atomically, through :mod:`kernels.fileio`) or as SVG (vector; refused above a size).

**Getting a GL context.**  :func:`render_view` (and so :func:`save_view`) calls
:func:`use_headless_app`, which keeps a VisPy app backend already chosen (``vispy.use(app=…)``,
e.g. the GUI's PyQt6), else picks ``egl`` when there is no ``$DISPLAY`` (the GPU machine:
``source .gpukit/setup.sh`` first) and PyQt6 when there is one (Xvfb, as ``run.sh`` starts it);
the native application (a QApplication) is made through VisPy when the backend needs one.  A
caller that wants another backend chooses it with ``vispy.use(app=…)`` before the first call.

**SVG.**  Every edge is a path segment and every vertex a circle, so the file grows with the
graph: above :data:`SVG_MAX_VERTICES` vertices or :data:`SVG_MAX_EDGES` edges ``save_view`` raises
:class:`~kernels.errors.InvalidParameter` naming the limit (use PNG there).  The SVG uses the same
camera fit, point size, edge alpha rule and colormap as the PNG.
"""
from __future__ import annotations

import html
import os

import numpy as np

from kernels.errors import InvalidParameter
from kernels.field_png import png_bytes
from kernels.fileio import check_output_path, write_bytes, write_text

from .scene import edge_alpha, edge_rgb, fit_rect, point_diameter, to_host, value_colors
from .visuals import colormap_lut
import vispy.app
from vispy.app import _default_app
from vispy import scene
from .scene import GraphScene
from vispy.visuals.transforms import STTransform

SVG_MAX_VERTICES = 20_000
SVG_MAX_EDGES = 100_000
SUFFIXES = (".png", ".svg")
BAR_PX = 140           # width of the colour bar column (gradient, ticks, label)


def use_headless_app() -> str:
    """Choose a VisPy app backend that can draw without a window; returns its name (see the
    module docstring for the rule)."""
    current = vispy.app.use_app(call_reuse=False) if _app_chosen() else None
    if current is not None:
        return current.backend_name
    name = "egl" if not os.environ.get("DISPLAY") else "pyqt6"
    return vispy.app.use_app(name).backend_name


def _app_chosen() -> bool:
    return _default_app.default_app is not None


def _native_app() -> None:
    """Choose the app backend (:func:`use_headless_app`) and make its native application if it
    needs one (a QApplication under PyQt6; made through VisPy, so this module imports no Qt)."""
    use_headless_app()
    vispy.app.use_app().create()


def _ticks(lo: float, hi: float) -> list[tuple[float, str]]:
    """(fraction along the bar, text) for the low end, the middle and the high end."""
    return [(f, f"{lo + f * (hi - lo):.3g}") for f in (0.0, 0.5, 1.0)]


def render_view(pos, edges, *, values=None, label=None, size=(1600, 1000), lecture=False, path=None,
                selected=(), cmap="viridis", clim=None, colorbar=True, density=False,
                interop=True) -> np.ndarray:
    """The view of a graph as an (h, w, 4) uint8 image, drawn offscreen by a GraphScene.

    ``pos`` (n, 2), ``edges`` (m, 2), ``values`` (n,) — numpy or CuPy; ``path``: vertices of a
    highlighted path; ``selected``: vertices drawn with a red outline; ``colorbar`` (with values):
    a colour bar with ``label`` on the right, :data:`BAR_PX` wide; ``density``: the density
    overlay.  The app backend must be set (:func:`use_headless_app`)."""

    _native_app()
    w, h = int(size[0]), int(size[1])
    bar = colorbar and values is not None
    canvas = scene.SceneCanvas(show=False, size=(w, h), bgcolor="black" if lecture else "white")
    try:
        view = None
        if bar:
            grid = canvas.central_widget.add_grid(spacing=0)
            view = grid.add_view(row=0, col=0)
            spacer = grid.add_widget(row=0, col=1)
            spacer.width_min = spacer.width_max = BAR_PX
        gs = GraphScene(canvas, interop=interop, view=view)
        gs.set_graph(pos, edges)
        gs.set_lecture(lecture)
        if values is not None:
            gs.set_values(values, label=label or "value", cmap=cmap, clim=clim)
        if density:
            gs.set_density_overlay(True)
        if path is not None and len(path) >= 2:
            gs.set_path(path)
        if len(selected):
            gs.set_selected(selected)
        if bar:
            _colorbar_visuals(canvas, gs, w, h)
        img = canvas.render()
        gs.release()
        return img
    finally:
        canvas.close()


def _colorbar_visuals(canvas, gs, w: int, h: int) -> None:
    """A gradient strip, three ticks and the label (rotated, beside the strip) in canvas pixels."""
    fg = "white" if gs.lecture else "black"
    top, bottom = 40, h - 40
    x0 = w - BAR_PX + 40
    lut = colormap_lut(gs.cmap)[::-1]                      # row 0 at the top: the high end
    strip = scene.visuals.Image(lut[:, None, :], parent=canvas.scene, interpolation="linear")
    strip.transform = STTransform(scale=(18, (bottom - top) / lut.shape[0]), translate=(x0, top))
    lo, hi = gs.color_range
    for f, text in _ticks(lo, hi):
        y = bottom - f * (bottom - top)
        scene.visuals.Text(text, pos=(x0 + 22, y), color=fg, font_size=9, anchor_x="left", parent=canvas.scene)
    scene.visuals.Text(gs.label or "", pos=(x0 - 14, (top + bottom) / 2), color=fg, font_size=9, rotation=-90,
                       anchor_x="center", anchor_y="center", parent=canvas.scene)


def save_view(filename, pos, edges, /, **kw) -> str:
    """Write the view to ``filename`` (.png: :func:`render_view`'s image; .svg: vector, up to
    :data:`SVG_MAX_VERTICES` vertices and :data:`SVG_MAX_EDGES` edges); returns the path written.
    Keywords as :func:`render_view` (``path`` there is the highlighted path).  The file name and
    the SVG limits are checked before any drawing."""
    p = check_output_path(filename, SUFFIXES, "view")
    if p.suffix.lower() == ".svg":
        check_svg_size(len(pos), len(edges) if edges is not None else 0)
        write_text(p, view_svg(pos, edges, **kw))
    else:
        img = render_view(pos, edges, **kw)
        write_bytes(p, png_bytes(img[..., :3]))
    return str(p)


def check_svg_size(n: int, m: int) -> None:
    """InvalidParameter naming the limit when an SVG of n vertices and m edges would be too big."""
    if n > SVG_MAX_VERTICES or m > SVG_MAX_EDGES:
        raise InvalidParameter(f"SVG export is limited to {SVG_MAX_VERTICES:,} vertices and {SVG_MAX_EDGES:,} edges "
                               f"(this graph: {n:,} vertices, {m:,} edges); export a .png instead")


def _hex(rgb) -> str:
    r, g, b = (int(round(float(c) * 255)) for c in rgb[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def view_svg(pos, edges, *, values=None, label=None, size=(1600, 1000), lecture=False, path=None, selected=(),
             cmap="viridis", clim=None, colorbar=True, density=False, interop=True) -> str:
    """The view as SVG text (``density`` and ``interop`` are ignored: no raster layer)."""
    pos = np.asarray(to_host(pos), np.float64).reshape(-1, 2)
    e = np.asarray(to_host(edges) if edges is not None else np.zeros((0, 2)), np.int64).reshape(-1, 2)
    n, m = len(pos), len(e)
    check_svg_size(n, m)
    w, h = int(size[0]), int(size[1])
    bar = colorbar and values is not None
    vw = w - BAR_PX if bar else w
    bounds = ((pos[:, 0].min(), pos[:, 0].max()), (pos[:, 1].min(), pos[:, 1].max())) if n else ((0, 1), (0, 1))
    x0, x1, y0, y1 = fit_rect(bounds)
    s = min(vw / (x1 - x0), h / (y1 - y0))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    sx = vw / 2 + (pos[:, 0] - cx) * s
    sy = h / 2 - (pos[:, 1] - cy) * s                     # SVG y points down
    bg = "black" if lecture else "white"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">',
           f'<rect width="{w}" height="{h}" fill="{bg}"/>']
    if m:
        mean_len = float(np.hypot(sx[e[:, 0]] - sx[e[:, 1]], sy[e[:, 0]] - sy[e[:, 1]]).mean())
        a = edge_alpha(m, mean_len, w, h, lecture)
        d = " ".join(f"M{sx[u]:.1f} {sy[u]:.1f}L{sx[v]:.1f} {sy[v]:.1f}" for u, v in e)
        out.append(f'<path d="{d}" stroke="{_hex(edge_rgb(lecture))}" stroke-opacity="{a:.3f}" '
                   f'stroke-width="1" fill="none"/>')
    if path is not None and len(path) >= 2:
        pts = " ".join(f"{sx[i]:.1f},{sy[i]:.1f}" for i in path)
        out.append(f'<polyline points="{pts}" stroke="{"#ff5959" if lecture else "#d91a1a"}" '
                   f'stroke-width="{8 if lecture else 4}" fill="none" stroke-linejoin="round"/>')
    colors, lo, hi = _vertex_colors(values, n, cmap, clim)
    r = point_diameter(w, h, n, lecture) / 2
    outline = "#e6e6e6" if lecture else "#1a1a1a"
    out.append(f'<g stroke="{outline}" stroke-opacity="{0.8 if lecture else 0.6}" '
               f'stroke-width="{1 if r >= 2.5 else 0}">')
    out += [f'<circle cx="{sx[i]:.1f}" cy="{sy[i]:.1f}" r="{r:.2f}" fill="{colors[i]}"/>' for i in range(n)]
    out.append("</g>")
    big = 8 * (1.6 if lecture else 1.0)
    out += [f'<circle cx="{sx[i]:.1f}" cy="{sy[i]:.1f}" r="{big:.1f}" fill="{colors[i]}" stroke="#d91a1a" '
            f'stroke-width="2"/>' for i in selected]
    if bar:
        out += _svg_colorbar(w, h, cmap, lo, hi, label or "value", "white" if lecture else "black")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _vertex_colors(values, n, cmap, clim):
    """Hex fill of each vertex as the shader colours it, and the colour range."""
    if values is None:
        return [_hex(c) for c in value_colors(None, n, 0, cmap)], None, None
    v = np.asarray(to_host(values), np.float64).reshape(-1)
    fin = np.isfinite(v)
    lo, hi = (clim if clim is not None else ((v[fin].min(), v[fin].max()) if fin.any() else (0.0, 1.0)))
    return [_hex(c) for c in value_colors(v, lo, hi, cmap)], float(lo), float(hi)


def _svg_colorbar(w, h, cmap, lo, hi, label, fg) -> list[str]:
    top, bottom = 40, h - 40
    x0 = w - BAR_PX + 40
    lut = colormap_lut(cmap)
    stops = "".join(f'<stop offset="{k / 16:.4f}" stop-color="{_hex(lut[round(k * 255 / 16)])}"/>'
                    for k in range(17))
    out = [f'<defs><linearGradient id="cbar" x1="0" y1="1" x2="0" y2="0">{stops}</linearGradient></defs>',
           f'<rect x="{x0}" y="{top}" width="18" height="{bottom - top}" fill="url(#cbar)"/>']
    for f, text in _ticks(lo, hi):
        y = bottom - f * (bottom - top)
        out.append(f'<text x="{x0 + 22}" y="{y + 4:.1f}" font-family="sans-serif" font-size="12" '
                   f'fill="{fg}">{html.escape(text)}</text>')
    yc = (top + bottom) / 2
    out.append(f'<text x="{x0 - 8}" y="{yc:.1f}" font-family="sans-serif" font-size="12" fill="{fg}" '
               f'text-anchor="middle" transform="rotate(-90 {x0 - 8} {yc:.1f})">{html.escape(label)}</text>')
    return out
