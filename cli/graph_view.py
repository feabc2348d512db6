"""The ``graph`` command's layout and view options (issue 32).

* ``--layout {auto,generator,circle,spectral,force}`` places the vertices
  (:func:`kernels.graphs.layout.compute_layout`; ``--layout-iterations`` for the iterative ones,
  ``--layout-seed`` for reproducible positions); ``--export-positions FILE.npy`` writes them as an
  (n, 2) float32 array.  The JSON output reports the layout used (what ``auto`` picked), its
  seconds and its quality (:func:`kernels.graphs.layout.layout_quality`).
* ``--export-view FILE.png|.svg`` draws the view exactly as the Graphs workspace does — the same
  scene (:mod:`explorer.graphs.render`, VisPy without Qt) in an offscreen OpenGL context
  (:mod:`.headless_gl`) — coloured by ``--color-by`` (an overlay of
  :data:`kernels.graphs.algorithms.overlays.OVERLAYS`; ``distance:V`` = distance from vertex V), at
  ``--view-size WxH`` pixels.

Every option is checked before any work: the names, the sizes, the output paths, an offscreen GL
context for ``--export-view``; once the graph exists (still before clustering, APSP or the
layout) the vertex of ``distance:V``, the SVG vertex limit and the APSP rows ``eccentricity`` needs.
"""
from __future__ import annotations

# Imports inside functions: VisPy, headless GL, explorer.graphs.render load only to draw (`--help` fast).
import time
from dataclasses import dataclass

from .common import NPY_EXTS, UsageError, check_output, num_type
import numpy as np
from kernels.graphs.layout import LAYOUTS, auto_layout_name, compute_layout, layout_quality
from kernels.graphs.algorithms.overlays import OVERLAYS, overlay_values
from kernels.fileio import atomic_write

#: --export-view's formats
VIEW_EXTS = (".png", ".svg")
#: --view-size default and bounds (pixels per side)
DEFAULT_SIZE = (1600, 1000)
MIN_SIDE, MAX_SIDE = 16, 8192


@dataclass
class ViewRequest:
    """What the layout and view options ask for, checked."""

    layout: str | None = None          # None: no layout wanted
    iterations: int | None = None
    seed: int = 0
    positions: str | None = None       # --export-positions
    view: str | None = None            # --export-view
    color_by: str | None = None        # overlay name
    source: int | None = None          # distance:V
    size: tuple[int, int] = DEFAULT_SIZE
    gl: str = ""                       # the offscreen GL context (--export-view)


def add_options(p) -> None:
    p.add_argument("--layout", choices=tuple(LAYOUTS), default=None,
                   help="place the vertices: " + "; ".join(f"{k} = {c.help}" for k, c in LAYOUTS.items())
                        + " (default auto when positions or a view are exported)")
    p.add_argument("--layout-iterations", type=num_type(int, minimum=0), default=None, metavar="N",
                   help="iterations of an iterative layout (force, or auto when it picks force; default: the "
                        "layout's own)")
    p.add_argument("--layout-seed", type=num_type(int, minimum=0), default=0, metavar="SEED",
                   help="seed of the layout's start positions (same seed, same positions; default 0)")
    p.add_argument("--export-positions", metavar="NPY", help="write the vertex positions (.npy, n × 2 float32)")
    p.add_argument("--export-view", metavar="FILE",
                   help="draw the graph view as the GUI does (offscreen OpenGL, no window) to .png or .svg "
                        "(SVG: vector, up to a vertex limit)")
    names = [f"{k}:V" if c.needs_source else k for k, c in OVERLAYS.items()]
    p.add_argument("--color-by", default=None, metavar="OVERLAY",
                   help="colour the vertices of --export-view by " + ", ".join(names) + " ("
                        + "; ".join(f"{k}: {c.help}" for k, c in OVERLAYS.items()) + "); V = a vertex id")
    p.add_argument("--view-size", default=None, metavar="WxH",
                   help=f"--export-view's size in pixels (default {DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}; "
                        f"{MIN_SIDE} … {MAX_SIDE} per side)")


def parse_color_by(text: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME:V`` → (overlay name, vertex or None); UsageError naming the choices."""
    name, colon, rest = str(text).strip().partition(":")
    cls = OVERLAYS.get(name, None)
    choices = ", ".join(f"{k}:V" if c.needs_source else k for k, c in OVERLAYS.items())
    if cls is None:
        raise UsageError(f"--color-by {text!r}: use one of {choices}")
    if not cls.needs_source:
        if colon:
            raise UsageError(f"--color-by {name} takes no vertex (write --color-by {name})")
        return name, None
    if not rest.strip().isdigit():
        raise UsageError(f"--color-by {name} needs a vertex id: write {name}:V with V in 0 … n−1, e.g. {name}:0")
    return name, int(rest)


def parse_size(text: str) -> tuple[int, int]:
    """``WxH`` (e.g. 1600x1000) → (W, H), each side in MIN_SIDE … MAX_SIDE."""
    parts = str(text).strip().lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(s.strip().isdigit() for s in parts):
        raise UsageError(f"--view-size {text!r}: write WIDTHxHEIGHT in pixels, e.g. 1600x1000")
    w, h = (int(s) for s in parts)
    for side in (w, h):
        if not MIN_SIDE <= side <= MAX_SIDE:
            raise UsageError(f"--view-size {text!r}: each side must be {MIN_SIDE} … {MAX_SIDE} pixels")
    return w, h


def check(a) -> ViewRequest:
    """The options checked before any work (module docstring); an offscreen GL context is made here
    for --export-view, so a machine without one fails before computing anything."""
    req = ViewRequest(seed=a.layout_seed, positions=a.export_positions, view=a.export_view)
    check_output(a.export_positions, NPY_EXTS, "--export-positions")
    check_output(a.export_view, VIEW_EXTS, "--export-view")
    for flag, given in (("--color-by", a.color_by), ("--view-size", a.view_size)):
        if given is not None and not a.export_view:
            raise UsageError(f"{flag} applies to --export-view (give --export-view FILE.png or .svg)")
    if a.color_by is not None:
        req.color_by, req.source = parse_color_by(a.color_by)
    if a.view_size is not None:
        req.size = parse_size(a.view_size)
    wanted = a.layout is not None or a.export_positions or a.export_view
    req.layout = (a.layout or "auto") if wanted else None
    if a.layout_iterations is not None:
        if req.layout is None or not LAYOUTS[req.layout].iterative:
            its = ", ".join(k for k, c in LAYOUTS.items() if c.iterative)
            raise UsageError(f"--layout-iterations applies to the iterative layouts ({its}); "
                             f"--layout is {req.layout or 'not given'}")
        req.iterations = a.layout_iterations
    if req.color_by == "eccentricity":
        if a.apsp == "none":
            raise UsageError("--color-by eccentricity needs all-pairs shortest paths: choose an APSP method "
                             "with --apsp (e.g. cpu), not none")
        if a.sources is not None:
            raise UsageError("--color-by eccentricity needs every row of the APSP result: drop --sources")
    if a.export_view and a.export_view.lower().endswith(".png"):
        from .headless_gl import ensure_offscreen_gl
        req.gl = ensure_offscreen_gl()
    return req


def check_graph(req: ViewRequest, g) -> None:
    """Checks that need the graph, before the heavy work: distance:V inside it, the SVG limits
    (vector output stops being sensible above explorer.graphs.render's SVG_MAX_VERTICES /
    SVG_MAX_EDGES: refused, naming them), and that --layout generator applies."""
    if req.source is not None and not 0 <= req.source < g.n:
        raise UsageError(f"--color-by {req.color_by}:{req.source}: vertex {req.source} is outside the graph "
                         f"(vertices 0 … {g.n - 1})")
    if req.layout is not None and not LAYOUTS[req.layout].available(g):
        raise UsageError(f"--layout {req.layout}: {LAYOUTS[req.layout].why_unavailable(g)}")
    if req.view and req.view.lower().endswith(".svg"):
        # the renderer is imported here, lazily, so that `graph --help` and runs without a view stay fast
        from explorer.graphs.render import check_svg_size
        check_svg_size(g.n, g.m)                   # InvalidParameter naming the vertex and edge limits


def compute(req: ViewRequest, g, be, apsp, local_cc, out: dict):
    """The layout and the overlay (their reports go into ``out``); (positions or None, overlay or None)."""
    if req.layout is None:
        return None, None
    used = auto_layout_name(g) if req.layout == "auto" else req.layout
    t0 = time.perf_counter()
    pos = compute_layout(g, req.layout, backend=be, iterations=req.iterations, seed=req.seed)
    out.update(layout=used, layout_requested=req.layout, layout_seed=req.seed,
               layout_seconds=time.perf_counter() - t0)
    if req.iterations is not None:
        out["layout_iterations"] = req.iterations
    q = layout_quality(g, pos)
    out["layout_quality"] = {"edge_ratio": q["edge_ratio"],
                             "neighbourhood_preservation": q["neighbourhood_preservation"]}
    ov = None
    if req.color_by is not None:
        ov = overlay_values(g, req.color_by, source=req.source, apsp=apsp, backend=be,
                            local_cc=local_cc if req.color_by == "clustering" else None)
        out.update(color_by=req.color_by, color_label=ov.label, overlay_seconds=ov.seconds)
        if req.source is not None:
            out["color_source"] = req.source
    if req.view:
        out.update(view_size=f"{req.size[0]}x{req.size[1]}")
        if req.gl:
            out["gl"] = req.gl
    return pos, ov


def outputs(req: ViewRequest, g, pos, ov, out: dict) -> list:
    """The writers of --export-positions and --export-view for :func:`cli.common.write_outputs`."""
    todo = []
    if req.positions:
        todo.append(("export_positions", lambda: save_positions(req.positions, pos)))
    if req.view:
        todo.append(("export_view", lambda: save_view(req, g, pos, ov, out)))
    return todo


def save_positions(path, pos) -> str:

    with atomic_write(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(pos, dtype=np.float32))
    return str(path)


def save_view(req: ViewRequest, g, pos, ov, out: dict) -> str:
    """Draw the view with the GUI's scene (explorer.graphs.render) and write it."""
    # imported here, lazily: VisPy and the renderer load only when a view is exported
    from explorer.graphs import render
    kw = {}
    if ov is not None:
        kw = dict(values=ov.values, label=ov.label, cmap=OVERLAYS[ov.name].cmap)
        if ov.source is not None:
            kw["selected"] = [ov.source]            # the "clicked" vertex, outlined as in the GUI
    t0 = time.perf_counter()
    path = render.save_view(req.view, pos, g.edges, size=req.size, **kw)
    out["view_seconds"] = time.perf_counter() - t0
    return str(path)
