"""``graph``: generate (or load) a graph, all-pairs shortest paths and clustering headless
(papers 000, 001, 002, 004).  Outputs (``--export-graph``, ``--export-distances``) are checked before
any work and written after the results exist."""
from __future__ import annotations

import time

from .common import (GRAPH_EXTS, NPY_EXTS, UsageError, check_output, finish, note, num_type, number,
                     write_outputs)

NAME = "graph"
USES_BACKEND = True


def add_parser(sub, parents) -> None:
    from kernels.graphs.apsp import METHODS
    from kernels.graphs.generators import GENERATORS
    from kernels.graphs.graph import MAX_VERTICES
    p = sub.add_parser(NAME, parents=parents,
                       help="Graphs: generators, APSP, clustering (papers 000, 001, 002, 004)",
                       description="Generate (or load) a graph, compute all-pairs shortest paths and "
                                   "clustering coefficients headless.")
    p.add_argument("--generator", choices=GENERATORS, default="ba",
                   help="ring lattice, Watts–Strogatz, Erdős–Rényi, Barabási–Albert, spatial, Watts α-model")
    p.add_argument("--n", type=num_type(int), default=1000, help="vertices")
    p.add_argument("--k", type=num_type(int), default=None,
                   help="mean degree (ring/ws/alpha/spatial, default 10); BA: edges per new vertex m (default 5)")
    p.add_argument("--p", type=num_type(float), default=None,
                   help="rewiring (ws) / edge (er, default 0.01) / α-model probability")
    p.add_argument("--alpha", type=num_type(float), default=1.0, help="α of the Watts α-model")
    p.add_argument("--no-ring", action="store_true", help="α-model without the ring substrate")
    p.add_argument("--weights", choices=("none", "int", "float"), default="none",
                   help="weighted variant: int = uniform 1…n (paper 004), float = uniform [1, 10)")
    p.add_argument("--seed", type=num_type(int, minimum=0), default=1, help="generator seed (≥ 0)")
    p.add_argument("--load", metavar="GRAPH", help="read a GraphML (.graphml) or edge-list file instead of "
                                                   "generating ('u v' or 'u v weight' lines, ids 0 … n−1)")
    p.add_argument("--max-vertices", type=num_type(int, minimum=2), default=MAX_VERTICES,
                   help=f"largest graph --load accepts (default {MAX_VERTICES:,})")
    p.add_argument("--apsp", choices=tuple(METHODS) + ("none",), default="cpu", help="all-pairs shortest-path method")
    p.add_argument("--tile", default="model", help="fw-blocked tile: 32, 64, model (paper 004) or auto (timed)")
    p.add_argument("--clustering", choices=("auto", "cpu", "arc", "sorted"), default="auto",
                   help="clustering kernel: cpu, GPU per-arc or degree-sorted (auto: GPU if available)")
    p.add_argument("--export-graph", metavar="FILE", help="write the graph (.graphml, or an edge list: .edgelist, "
                                                          ".edges, .txt)")
    p.add_argument("--export-distances", metavar="NPY", help="write the distance matrix (.npy)")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _tile(v):
    if v in ("model", "auto"):
        return v
    try:
        return int(v)
    except ValueError:
        raise UsageError(f"--tile must be 32, 64, model or auto (got {v})") from None


def _save_npy(path, arr):
    import numpy as np

    from kernels.fileio import atomic_write
    with atomic_write(path, "wb") as fh:
        np.save(fh, arr)
    return path


def run(a) -> int:
    from kernels import backend as bk
    from kernels.graphs import apsp as ap
    from kernels.graphs import generators as gen
    from kernels.graphs.clustering import global_clustering, local_clustering
    from kernels.graphs.graph import load_graph, save_graph
    from kernels.graphs.stats import summary
    check_output(a.export_graph, GRAPH_EXTS, "--export-graph")
    check_output(a.export_distances, NPY_EXTS, "--export-distances")
    if a.export_distances and a.apsp == "none":
        raise UsageError("--export-distances needs an APSP method (not --apsp none)")
    tile = _tile(a.tile) if a.apsp == "fw-blocked" else None
    be = bk.select(a.backend)
    if a.apsp not in ("none", "cpu") and not be.is_gpu:
        raise UsageError(f"--apsp {a.apsp} needs a GPU ({be.notice or 'CPU backend selected'}); use --apsp cpu")
    if a.clustering in ("arc", "sorted") and not be.is_gpu:
        raise UsageError(f"--clustering {a.clustering} needs a GPU; use cpu")
    if a.load:
        g = load_graph(a.load, max_vertices=a.max_vertices)
    else:
        number("--n", a.n, int, minimum=2)
        k = a.k if a.k is not None else (5 if a.generator == "ba" else 10)
        p = a.p if a.p is not None else {"er": 0.01, "alpha": 1e-4}.get(a.generator, 0.1)
        g = gen.generate(a.generator, a.n, k=k, p=p, alpha=a.alpha, ring=not a.no_ring, seed=a.seed)
    if a.weights != "none":
        g = gen.with_weights(g, a.weights, seed=a.seed)
    if a.apsp != "none":
        ap.check_memory(g.n, a.apsp, be, 4 if g.weighted else 2)
        if g.weighted:
            ap.check_weights(g.csr(), ap.METHODS[a.apsp])
    out = dict(backend=be.name, generator=(g.name if a.load else a.generator), n=g.n, m=g.m,
               weighted=g.weighted, seed=a.seed)
    t0 = time.perf_counter()
    use_gpu_cc = be.is_gpu and a.clustering != "cpu"
    cc_be = be if use_gpu_cc else None
    cc_variant = "arc" if a.clustering in ("auto", "cpu") else a.clustering
    out["global_clustering"] = global_clustering(g, cc_be, cc_variant)
    out["average_clustering"] = float(local_clustering(g, cc_be, cc_variant).mean())
    out["clustering_method"] = cc_variant if use_gpu_cc else "cpu"
    out["apsp_method"] = a.apsp
    r = None
    if a.apsp != "none":
        kw = {"tile": tile} if tile is not None else {}
        r = ap.apsp(g, a.apsp, backend=be, **kw)
        s = summary(r.dist)
        out.update(mean_path_length=s["mean_path_length"], diameter=s["diameter"], connected=s["connected"],
                   reachable_fraction=s["reachable_fraction"], apsp_seconds=r.seconds,
                   distance_dtype=str(r.dist.dtype))
        if r.tile:
            out["tile"] = r.tile
        if not s["connected"] and not a.json:
            note("the graph is disconnected; mean path and diameter are over reachable pairs")
    be.synchronize()
    out["seconds"] = time.perf_counter() - t0
    outputs = []
    if a.export_graph:
        outputs.append(("export_graph", lambda: (save_graph(g, a.export_graph), a.export_graph)[1]))
    if a.export_distances:
        outputs.append(("export_distances", lambda: _save_npy(a.export_distances, r.dist)))
    return finish(out, a.json, write_outputs(out, outputs))
