"""``graph``: generate (or load) a graph, all-pairs shortest paths and clustering headless
(papers 000, 001, 002, 004), and its layout and view (:mod:`.graph_view`: ``--layout``,
``--export-positions``, ``--export-view`` with ``--color-by``).  Every APSP method of the registry
(:data:`kernels.graphs.apsp.METHODS`) runs where its class says it can (``available(backend)``;
the CUDA methods without a GPU run their CUDA source on the CPU — the JSON says ``"emulated": true``);
its own options (:mod:`.apsp_options`) go only to the methods that take them.  Vertex ids
(``--sources``, ``--path``) are checked against the graph before any work; outputs
(``--export-graph``, ``--export-distances``, ``--export-paths``, ``--export-positions``,
``--export-view``) are checked before any work and written after the results exist."""
from __future__ import annotations

import argparse
import time

from . import apsp_options as mo
from . import graph_view as gv
from .common import (GRAPH_EXTS, NPY_EXTS, UsageError, check_output, finish, note, num_type, number,
                     print_result, raise_failed, write_outputs)
import numpy as np
from kernels.graphs.apsp import METHODS, api as ap
from kernels.graphs.data.generators import GENERATORS, LABELS
from kernels.graphs.data.graph import MAX_VERTICES, load_graph, save_graph
from kernels.fileio import atomic_write
from kernels import backend as bk
from kernels.graphs.data import generators as gen
from kernels.graphs.algorithms.clustering import check_clustering_host, global_clustering, local_clustering
from kernels.graphs.data.stats import summary
from kernels.errors import ExplorerError

NAME = "graph"
USES_BACKEND = True


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents,
                       help="Graphs: generators, APSP, clustering (papers 000, 001, 002, 004)",
                       description="Generate (or load) a graph, compute all-pairs shortest paths and "
                                   "clustering coefficients headless.",
                       epilog=mo.methods_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--generator", choices=GENERATORS, default="ba",
                   help="; ".join(f"{k} = {LABELS.get(k, k)}" for k in GENERATORS) + " (default ba)")
    p.add_argument("--n", type=num_type(int), default=1000, help="vertices")
    p.add_argument("--k", type=num_type(int), default=None,
                   help="mean degree (ring/ws/alpha/spatial/random/rmat, default 10); BA: edges per new vertex m "
                        "(default 5)")
    p.add_argument("--p", type=num_type(float), default=None,
                   help="rewiring (ws) / edge (er, default 0.01) / α-model probability")
    p.add_argument("--alpha", type=num_type(float), default=1.0, help="α of the Watts α-model")
    p.add_argument("--no-ring", action="store_true", help="α-model without the ring substrate; random: without "
                                                          "the Hamiltonian cycle")
    p.add_argument("--weights", choices=("none", "int", "float"), default="none",
                   help="weighted variant: int = uniform 1…n (paper 004), float = uniform [1, 10)")
    p.add_argument("--seed", type=num_type(int, minimum=0), default=1, help="generator seed (≥ 0)")
    p.add_argument("--load", metavar="GRAPH", help="read a GraphML (.graphml) or edge-list file instead of "
                                                   "generating ('u v' or 'u v weight' lines, ids 0 … n−1)")
    p.add_argument("--max-vertices", type=num_type(int, minimum=2), default=MAX_VERTICES,
                   help=f"largest graph --load accepts (default {MAX_VERTICES:,})")
    p.add_argument("--apsp", choices=tuple(METHODS) + ("none",), default="cpu", metavar="METHOD",
                   help="all-pairs shortest-path method: one of the list below, or none (default cpu)")
    mo.add_options(p)
    p.add_argument("--clustering", choices=("auto", "cpu", "arc", "sorted"), default="auto",
                   help="clustering: cpu, or the CUDA per-arc kernel (arc) or its degree-sorted form (sorted), "
                        "run on the CPU without a GPU (auto: arc on a GPU, else cpu)")
    p.add_argument("--export-graph", metavar="FILE", help="write the graph (.graphml, or an edge list: .edgelist, "
                                                          ".edges, .txt)")
    p.add_argument("--export-distances", metavar="NPY", help="write the distance matrix (.npy; rows × n with "
                                                             "--sources)")
    gv.add_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _save_npy(path, arr):

    with atomic_write(path, "wb") as fh:
        np.save(fh, arr)
    return path


def _checked_method(a, be):
    """(method options, sources) of --apsp, checked before any work; ({}, None) for --apsp none."""
    sources = mo.sources_value(a)
    if a.apsp == "none":
        given = [f for f, (d, _k) in mo.OPTIONS.items() if getattr(a, d) is not None] + \
                (["--fw-option"] if a.fw_option else [])
        if given:
            raise UsageError(f"{given[0]} needs an APSP method (not --apsp none)")
        return {}, None
    cls = METHODS[a.apsp]
    if not cls.available(be):
        cpu = ", ".join(k for k, c in METHODS.items() if c.available(None))
        raise UsageError(f"--apsp {a.apsp} needs a GPU ({be.notice or 'CPU backend selected'}); "
                         f"on the CPU use one of {cpu}")
    kw = mo.method_kwargs(a, a.apsp, sources)
    if a.export_paths and not mo.keeps_predecessors(a.apsp, kw):
        raise UsageError(f"--export-paths: --apsp {a.apsp} keeps no predecessors with these options (the "
                         "Floyd–Warshall versions keep them unless --no-pred, fw-blocked at tile 32; sssp-path)")
    return kw, sources


def run(a) -> int:
    check_output(a.export_graph, GRAPH_EXTS, "--export-graph")
    check_output(a.export_distances, NPY_EXTS, "--export-distances")
    check_output(a.export_paths, NPY_EXTS, "--export-paths")
    view = gv.check(a)
    for flag, given in (("--export-distances", a.export_distances), ("--export-paths", a.export_paths)):
        if given and a.apsp == "none":
            raise UsageError(f"{flag} needs an APSP method (not --apsp none)")
    be = bk.select(a.backend)
    kw, sources = _checked_method(a, be)
    if a.load:
        g = load_graph(a.load, max_vertices=a.max_vertices)
    else:
        number("--n", a.n, int, minimum=2)
        if a.apsp != "none":                     # the distance matrix from --n alone, before the graph is built
            ap.check_memory(a.n, a.apsp, be, 4 if a.weights != "none" else 2, None if sources is None else len(sources))
        k = a.k if a.k is not None else (5 if a.generator == "ba" else 10)
        p = a.p if a.p is not None else {"er": 0.01, "alpha": 1e-4}.get(a.generator, 0.1)
        g = gen.generate(a.generator, a.n, k=k, p=p, alpha=a.alpha, ring=not a.no_ring, seed=a.seed)
    if a.weights != "none":
        g = gen.with_weights(g, a.weights, seed=a.seed)
    mo.check_vertices(g.n, sources, a.path)
    gv.check_graph(view, g)
    if a.apsp != "none":
        ap.check_memory(g.n, a.apsp, be, 4 if g.weighted else 2, None if sources is None else len(sources))
        if g.weighted:
            ap.check_weights(g.csr(), ap.METHODS[a.apsp])
    use_kernel = a.clustering in ("arc", "sorted") or (a.clustering == "auto" and be.is_gpu)
    if use_kernel and not be.is_gpu:
        check_clustering_host(g.csr())
    out = dict(backend=be.name, generator=(g.name if a.load else a.generator), n=g.n, m=g.m,
               weighted=g.weighted, seed=a.seed)
    t0 = time.perf_counter()
    # APSP first: a CUDA method run on the CPU refuses a size above its time limit before any work
    r = ap.apsp(g, a.apsp, backend=be, **kw) if a.apsp != "none" else None
    cc_variant = "arc" if a.clustering in ("auto", "cpu") else a.clustering
    out["global_clustering"] = global_clustering(g, be, cc_variant, kernel=use_kernel)
    local_cc = local_clustering(g, be, cc_variant, kernel=use_kernel)
    out["average_clustering"] = float(local_cc.mean())
    out["clustering_method"] = cc_variant if use_kernel else "cpu"
    apsp_emulated = a.apsp != "none" and (ap.METHODS[a.apsp].emulated(be) or
                                          bool((r.params or {}).get("emulated")))   # e.g. FW emulate=1
    out["emulated"] = bool(not be.is_gpu and (use_kernel or apsp_emulated))
    out["apsp_method"] = a.apsp
    if r is not None:
        s = summary(r.dist, sources)
        out.update(mean_path_length=s["mean_path_length"], diameter=s["diameter"], connected=s["connected"],
                   reachable_fraction=s["reachable_fraction"], apsp_seconds=r.seconds,
                   distance_dtype=str(r.dist.dtype))
        if sources is not None:
            out["sources"] = len(sources)
        if r.tile:
            out["tile"] = r.tile
        if r.params is not None:
            out["apsp_params"] = r.params
        if r.timings is not None:
            out["apsp_timings"] = r.timings
        if not s["connected"] and not a.json:
            note("the graph is disconnected; mean path and diameter are over reachable pairs" if sources is None
                 else "not every vertex is reachable from the sources; mean path and diameter are over "
                      "reachable pairs")
    if a.path:
        out.update(mo.path_report(g, r, a.path[0], a.path[1], sources))
    be.synchronize()
    out["seconds"] = time.perf_counter() - t0
    pos, overlay = gv.compute(view, g, be, r, local_cc, out)
    outputs = []
    if a.export_graph:
        outputs.append(("export_graph", lambda: (save_graph(g, a.export_graph), a.export_graph)[1]))
    if a.export_distances:
        outputs.append(("export_distances", lambda: _save_npy(a.export_distances, r.dist)))
    if a.export_paths:
        outputs.append(("export_paths", lambda: _save_paths(a.export_paths, r)))
    outputs += gv.outputs(view, g, pos, overlay, out)
    failed = write_outputs(out, outputs)
    if a.path and not a.json:
        print_result({k: v for k, v in out.items() if k not in ("path", "path_length")}, False)
        print(mo.path_lines(a.path[0], a.path[1], out))
        raise_failed(failed)
        return 0
    return finish(out, a.json, failed)


def _save_paths(path, r):
    if r.pred is None:
        raise ExplorerError(f"{r.method} returned no predecessors")
    return _save_npy(path, r.pred)
