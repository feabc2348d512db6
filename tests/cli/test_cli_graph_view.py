"""``main.py graph`` layout and view options (cli/graph_view.py): positions files, headless views
drawn with the GUI's scene, the SVG limit, and bad input (one ``error:`` line, exit 2, the output
path untouched).  The runs are subprocesses, two at a time (a view run selects VisPy's EGL app,
which must not leak into the test process); the graphs are small."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from support.paths import ROOT

SENTINEL = b"sentinel: must stay byte-for-byte\n"


def cli(*args, backend="cpu"):
    env = dict(os.environ, GSE_BACKEND=backend)
    return subprocess.run([sys.executable, str(ROOT / "main.py"), "graph", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=240)


def many(cmds):
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda c: cli(*c), cmds))


def test_positions_file_and_its_reproducibility(tmp_path, rng):
    seed, n = int(rng.integers(0, 1000)), int(rng.integers(150, 400))
    base = ("--generator", "ws", "--n", n, "--k", 4, "--seed", int(rng.integers(0, 1000)), "--apsp", "none",
            "--layout", "force", "--layout-iterations", 20, "--layout-seed", seed, "--json")
    a, b, other, ring = many([base + ("--export-positions", tmp_path / "a.npy"),
                              base + ("--export-positions", tmp_path / "b.npy"),
                              base[:-2] + (seed + 1, "--json", "--export-positions", tmp_path / "c.npy"),
                              ("--generator", "ring", "--n", 60, "--k", 4, "--apsp", "none", "--export-positions",
                               tmp_path / "r.npy", "--json")])
    for r in (a, b, other, ring):
        assert r.returncode == 0, r.stderr
    out = json.loads(a.stdout)
    assert out["layout"] == out["layout_requested"] == "force" and out["layout_iterations"] == 20
    assert out["layout_seed"] == seed and out["layout_seconds"] > 0
    assert set(out["layout_quality"]) == {"edge_ratio", "neighbourhood_preservation"}
    assert out["export_positions"] == str(tmp_path / "a.npy")
    pa, pb, pc = (np.load(tmp_path / f) for f in ("a.npy", "b.npy", "c.npy"))
    assert pa.shape == (n, 2) and pa.dtype == np.float32 and np.isfinite(pa).all()
    assert np.array_equal(pa, pb)                        # same seed, same positions
    assert not np.array_equal(pa, pc)                    # another seed, other positions
    rj = json.loads(ring.stdout)
    assert rj["layout_requested"] == "auto" and rj["layout"] == "generator"   # auto picks the ring's own
    from kernels.graphs.data.generators import ring_lattice
    assert np.allclose(np.load(tmp_path / "r.npy"), ring_lattice(60, 4).positions)


def test_png_view_drawn_headless(tmp_path, rng):
    import imageio.v3 as iio
    w, h = int(rng.integers(200, 400)), int(rng.integers(120, 300))
    s = int(rng.integers(0, 200))
    png, svg = tmp_path / "v.png", tmp_path / "v.svg"
    r, rs = many([("--generator", "ba", "--n", 200, "--k", 2, "--apsp", "none", "--layout", "circle",
                   "--export-view", png, "--color-by", f"distance:{s}", "--view-size", f"{w}x{h}", "--json"),
                  ("--generator", "ws", "--n", 40, "--k", 4, "--layout", "circle", "--export-view", svg,
                   "--color-by", "eccentricity", "--json")])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["export_view"] == str(png) and out["color_by"] == "distance" and out["color_source"] == s
    assert out["color_label"] == f"hops from vertex {s}" and out["view_size"] == f"{w}x{h}" and out["gl"]
    img = iio.imread(png)
    assert img.shape[:2] == (h, w) and img.shape[2] in (3, 4)
    assert len(np.unique(img.reshape(-1, img.shape[2]), axis=0)) > 8      # a drawing, not a blank frame
    assert rs.returncode == 0, rs.stderr
    so = json.loads(rs.stdout)
    assert so["color_label"] == "eccentricity (hops)" and so["export_view"] == str(svg)
    assert b"<svg" in svg.read_bytes()[:2000]


SMALL = ("--generator", "ba", "--n", 50, "--k", 2, "--apsp", "none")


def early_cases(tmp_path):
    """Refused by the option checks, before the backend, the graph or a GL context: run in-process.
    (arguments, fragment of the error line, the output path that must stay untouched)"""
    png, npy = tmp_path / "v.png", tmp_path / "p.npy"
    return [
        (SMALL + ("--export-view", png, "--color-by", "distance"), "needs a vertex id", png),
        (SMALL + ("--export-view", png, "--color-by", "pagerank"), "use one of degree", png),
        (SMALL + ("--export-view", png, "--color-by", "degree:3"), "takes no vertex", png),
        (SMALL + ("--export-view", png, "--color-by", "eccentricity"), "needs all-pairs shortest paths", png),
        (SMALL + ("--export-view", png, "--view-size", "1600"), "WIDTHxHEIGHT", png),
        (SMALL + ("--export-view", png, "--view-size", "0x100"), "16 … 8192", png),
        (SMALL + ("--export-positions", npy, "--layout", "spring"), "invalid choice: 'spring'", npy),
        (SMALL + ("--export-positions", npy, "--layout", "circle", "--layout-iterations", 5), "iterative", npy),
        (SMALL + ("--export-positions", npy, "--color-by", "degree"), "applies to --export-view", npy),
        (SMALL + ("--export-positions", npy, "--export-view", tmp_path / "v.jpg"), "'.jpg'", npy),
        (SMALL + ("--export-positions", tmp_path / "no" / "p.npy"), "does not exist", npy),
    ]


def late_cases(tmp_path):
    """Refused once the graph exists (still before clustering, APSP or the layout): subprocesses."""
    from explorer.graphs.render import SVG_MAX_VERTICES
    png, npy, svg = tmp_path / "w.png", tmp_path / "q.npy", tmp_path / "big.svg"
    return [
        (SMALL + ("--export-view", png, "--color-by", "distance:50"), "vertex 50 is outside the graph", png),
        (SMALL + ("--export-positions", npy, "--layout", "generator"), "has no generator positions", npy),
        (("--generator", "ring", "--n", SVG_MAX_VERTICES + 1, "--k", 2, "--apsp", "none", "--export-view", svg),
         f"SVG export is limited to {SVG_MAX_VERTICES:,} vertices", svg),
    ]


def check_refused(args, frag, path, status, stderr):
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert status == 2, (args, stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), (args, stderr)
    assert frag in lines[0], (args, lines[0])
    assert path.read_bytes() == SENTINEL, args


def test_bad_options_one_error_line_and_outputs_untouched(tmp_path, capsys):
    from cli import main
    for args, frag, path in early_cases(tmp_path):
        path.write_bytes(SENTINEL)
        status = main(["graph", *map(str, args)])
        check_refused(args, frag, path, status, capsys.readouterr().err)
    assert not (tmp_path / "v.jpg").exists() and not (tmp_path / "no").exists()


def test_bad_graph_inputs_refused_before_work(tmp_path):
    cases = late_cases(tmp_path)
    for _args, _frag, path in cases:
        path.write_bytes(SENTINEL)
    for (args, frag, path), r in zip(cases, many([c[0] for c in cases])):
        check_refused(args, frag, path, r.returncode, r.stderr)


def explorer_modules() -> set[str]:
    out = set()
    for p in (ROOT / "explorer").rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.add(".".join(parts))
    return out


def test_cli_contract_lists_every_explorer_module_but_the_renderer():
    """The import-linter contract names the explorer modules the CLI must not import (import-linter
    has no 'all but'): every module, package __init__s included, matches one of its expressions,
    except the headless renderer, its scene and its visuals."""
    import grimp
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    by_name = {c["name"]: c for c in cfg}
    only = by_name["the CLI imports only the headless renderer of explorer"]
    assert only["as_packages"] is False                  # "explorer.*" must not cover explorer.graphs.render
    graph = grimp.build_graph("explorer", include_external_packages=False)
    forbidden = {m for expr in only["forbidden_modules"] for m in graph.find_matching_modules(expr)}
    allowed = {"explorer", "explorer.graphs", "explorer.graphs.render", "explorer.graphs.scene",
               "explorer.graphs.visuals"}
    headless = by_name["the headless renderer imports no Qt"]["source_modules"]
    assert {m for expr in headless for m in graph.find_matching_modules(expr)} == allowed - {"explorer",
                                                                                              "explorer.graphs"}
    assert {"PyQt6", "pyqtgraph"} <= set(by_name["the CLI imports no Qt"]["forbidden_modules"])
    allowed -= {"explorer", "explorer.graphs"}               # package __init__s: forbidden, never imported
    for m in sorted(explorer_modules()):
        covered = m in forbidden
        assert covered != (m in allowed), f"{m}: {'listed but allowed' if covered else 'missing from the contract'}"


@pytest.mark.parametrize("text", ["800x600", "16x8192", " 1024×768 "])
def test_view_size_parser_accepts(text):
    from cli.graph_view import parse_size
    w, h = parse_size(text)
    assert f"{w}x{h}" == text.strip().replace("×", "x")


@pytest.mark.gpu
def test_gpu_view_through_egl(tmp_path):
    """On the GPU machine: the GPU backend's layout and distance overlay, drawn through EGL."""
    import imageio.v3 as iio
    png, npy = tmp_path / "g.png", tmp_path / "g.npy"
    r = cli("--generator", "ba", "--n", 20000, "--k", 5, "--apsp", "none", "--layout", "force", "--export-positions",
            npy, "--export-view", png, "--color-by", "distance:0", "--view-size", "640x400", "--json", backend="gpu")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["backend"] == "gpu" and out["gl"].startswith("EGL") and out["color_label"] == "hops from vertex 0"
    assert iio.imread(png).shape[:2] == (400, 640) and np.load(npy).shape == (20000, 2)
