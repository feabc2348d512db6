"""GPU Science Explorer.

    python main.py                      open the desktop app
    python main.py ch [options]         run Cahn–Hilliard headless (batch / export / JSON)
    python main.py graph [options]      generate a graph, APSP + clustering headless
    python main.py graph-reproduce      re-run paper 000's mean-path sweep (exponents vs N)
    python main.py graph-clustering     re-run paper 001's clustering timings (slopes vs V)
    python main.py occupancy [options]  CUDA occupancy calculator (any CC, or this GPU)
    python main.py flint MODEL [opts]   compile + integrate an SBML/CellML/native cell model
    python main.py flint-suite [CASES]  SBML Test Suite conformance (per-tag table, JSON)

Both paths use the same compute library (kernels/).  ``--backend cpu|gpu|auto``
or the GSE_BACKEND environment variable chooses CuPy or NumPy.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def _add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default=None,
                   help="array backend (default: GSE_BACKEND or auto = GPU if available)")


def _ch_parser(sub) -> None:
    from kernels.cahn_hilliard.params import BOUNDARIES, EXCHANGES, INITIALS, INTEGRATORS, VARIANTS, CHParams
    d = CHParams()
    p = sub.add_parser("ch", help="Cahn–Hilliard phase separation (paper 000 §3.1)",
                       description="Run a Cahn–Hilliard simulation headless.")
    _add_backend(p)
    p.add_argument("--dim", type=int, default=d.dim, choices=(2, 3))
    p.add_argument("--size", type=int, default=d.size, help="cells per side")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--dt", type=float, default=d.dt)
    p.add_argument("--m", type=float, default=d.m, help="mobility")
    p.add_argument("--b", type=float, default=d.b, help="coefficient of −bφ")
    p.add_argument("--u", type=float, default=d.u, help="coefficient of uφ³")
    p.add_argument("--K", type=float, default=d.K, help="gradient-energy coefficient")
    p.add_argument("--dx", type=float, default=d.dx)
    p.add_argument("--boundary", choices=BOUNDARIES, default=d.boundary)
    p.add_argument("--boundary-value", type=float, default=d.boundary_value)
    p.add_argument("--initial", choices=INITIALS[:2], default=d.initial)
    p.add_argument("--mean", type=float, default=None, help="initial mean φ (default by --initial)")
    p.add_argument("--noise", type=float, default=d.noise)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--integrator", choices=INTEGRATORS, default=d.integrator)
    p.add_argument("--variant", choices=VARIANTS, default=d.variant, help="kernel variant (A–E need the GPU)")
    p.add_argument("--dtype", choices=("float32", "float64"), default=d.dtype)
    p.add_argument("--gpus", type=int, default=d.gpus,
                   help="split the field over N GPUs (slabs with halo exchange, paper 001); "
                        "fewer are used if fewer exist; without a GPU, N virtual GPUs on the CPU")
    p.add_argument("--exchange", choices=EXCHANGES, default=d.exchange,
                   help="halo exchange between GPUs: p2p (cudaMemcpyPeerAsync), host (staged "
                        "through host memory, as paper 001), nccl")
    p.add_argument("--load", metavar="FIELD.npz", help="start from a saved field")
    p.add_argument("--record-every", type=int, default=100, help="diagnostics every N steps")
    p.add_argument("--export", metavar="PNG", help="write the final field as PNG (3D: middle slice)")
    p.add_argument("--colormap", default="viridis")
    p.add_argument("--save-field", metavar="NPZ", help="write the final field + parameters")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def run_ch(a) -> int:
    from kernels import backend as bk
    from kernels.cahn_hilliard import CahnHilliard, CHParams
    be = bk.select(a.backend)
    params = CHParams(m=a.m, b=a.b, u=a.u, K=a.K, dx=a.dx, dt=a.dt, dim=a.dim, size=a.size,
                      boundary=a.boundary, boundary_value=a.boundary_value, initial=a.initial,
                      mean=a.mean, noise=a.noise, seed=a.seed, integrator=a.integrator,
                      variant=a.variant, dtype=a.dtype, gpus=a.gpus,
                      exchange=a.exchange).validate()
    if a.steps < 0:
        raise _usage("--steps must be ≥ 0")
    field0 = None
    if a.load:
        from kernels.cahn_hilliard.io import load_field
        field0, _saved_params, _meta = load_field(a.load)
        params = params.with_changes(initial="file")
    sim = CahnHilliard(params, be, field0=field0)
    if not a.json:
        for note in ([be.notice] if be.notice else []) + sim.notes:
            print(f"note: {note}", file=sys.stderr)
    t0 = time.perf_counter()
    done = 0
    every = max(1, a.record_every)
    while done < a.steps:
        n = min(every, a.steps - done)
        sim.step(n)
        done += n
    be.synchronize()
    seconds = time.perf_counter() - t0
    out = sim.summary()
    out.update(seconds=seconds, steps_per_second=(done / seconds if seconds > 0 else None),
               size=params.size, dim=params.dim, integrator=params.integrator,
               variant=params.variant, boundary=params.boundary)
    if a.export:
        from explorer.field_image import save_field_png
        save_field_png(a.export, sim.field_numpy(), cmap=a.colormap)
        out["export"] = a.export
    if a.save_field:
        from kernels.cahn_hilliard.io import save_field
        save_field(a.save_field, sim.field_numpy(), sim.params, t=sim.t, steps=sim.step_count)
        out["saved_field"] = a.save_field
    return _print_result(out, a.json)


def _graph_parser(sub) -> None:
    from kernels.graphs.apsp import METHODS
    from kernels.graphs.generators import GENERATORS
    p = sub.add_parser("graph", help="Graphs: generators, APSP, clustering (papers 000, 001, 002, 004)",
                       description="Generate (or load) a graph, compute all-pairs shortest paths and "
                                   "clustering coefficients headless.")
    _add_backend(p)
    p.add_argument("--generator", choices=GENERATORS, default="ba",
                   help="ring lattice, Watts–Strogatz, Erdős–Rényi, Barabási–Albert, spatial, Watts α-model")
    p.add_argument("--n", type=int, default=1000, help="vertices")
    p.add_argument("--k", type=int, default=None,
                   help="mean degree (ring/ws/alpha/spatial, default 10); BA: edges per new vertex m (default 5)")
    p.add_argument("--p", type=float, default=None, help="rewiring (ws) / edge (er, default 0.01) / α-model probability")
    p.add_argument("--alpha", type=float, default=1.0, help="α of the Watts α-model")
    p.add_argument("--no-ring", action="store_true", help="α-model without the ring substrate")
    p.add_argument("--weights", choices=("none", "int", "float"), default="none",
                   help="weighted variant: int = uniform 1…n (paper 004), float = uniform [1, 10)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--load", metavar="GRAPH", help="read a GraphML or edge-list file instead of generating")
    p.add_argument("--apsp", choices=tuple(METHODS) + ("none",), default="cpu", help="all-pairs shortest-path method")
    p.add_argument("--tile", default="model", help="fw-blocked tile: 32, 64, model (paper 004) or auto (timed)")
    p.add_argument("--clustering", choices=("auto", "cpu", "arc", "sorted"), default="auto",
                   help="clustering kernel: cpu, GPU per-arc or degree-sorted (auto: GPU if available)")
    p.add_argument("--export-graph", metavar="FILE", help="write the graph (.graphml or edge list)")
    p.add_argument("--export-distances", metavar="NPY", help="write the distance matrix (.npy)")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def run_graph(a) -> int:
    from kernels import backend as bk
    import importlib
    ap = importlib.import_module("kernels.graphs.apsp")
    from kernels.graphs import generators as gen
    from kernels.graphs.clustering import global_clustering, local_clustering
    from kernels.graphs.graph import load_graph, save_graph
    from kernels.graphs.stats import summary
    be = bk.select(a.backend)
    if a.load:
        g = load_graph(a.load)
    else:
        if a.n < 2:
            raise _usage(f"--n must be ≥ 2 (got {a.n})")
        k = a.k if a.k is not None else (5 if a.generator == "ba" else 10)
        p = a.p if a.p is not None else {"er": 0.01, "alpha": 1e-4}.get(a.generator, 0.1)
        g = gen.generate(a.generator, a.n, k=k, p=p, alpha=a.alpha, ring=not a.no_ring, seed=a.seed)
    if a.weights != "none":
        g = gen.with_weights(g, a.weights, seed=a.seed)
    if a.apsp != "none":
        if a.apsp != "cpu" and not be.is_gpu:
            raise _usage(f"--apsp {a.apsp} needs a GPU ({be.notice or 'CPU backend selected'}); use --apsp cpu")
        ap.check_memory(g.n, a.apsp, be, 4 if g.weighted else 2)
    if a.export_graph:
        save_graph(g, a.export_graph)
    out = dict(backend=be.name, generator=(g.name if a.load else a.generator), n=g.n, m=g.m,
               weighted=g.weighted, seed=a.seed)
    t0 = time.perf_counter()
    variant = a.clustering
    use_gpu_cc = be.is_gpu and variant != "cpu"
    cc_be = be if use_gpu_cc else None
    cc_variant = "arc" if variant in ("auto", "cpu") else variant
    if variant in ("arc", "sorted") and not be.is_gpu:
        raise _usage(f"--clustering {variant} needs a GPU; use cpu")
    out["global_clustering"] = global_clustering(g, cc_be, cc_variant)
    out["average_clustering"] = float(local_clustering(g, cc_be, cc_variant).mean())
    out["clustering_method"] = cc_variant if use_gpu_cc else "cpu"
    out["apsp_method"] = a.apsp
    if a.apsp != "none":
        kw = {}
        if a.apsp == "fw-blocked":
            kw["tile"] = a.tile if a.tile in ("model", "auto") else _int_arg(a.tile, "--tile")
        r = ap.apsp(g, a.apsp, backend=be, **kw)
        s = summary(r.dist)
        out.update(mean_path_length=s["mean_path_length"], diameter=s["diameter"], connected=s["connected"],
                   reachable_fraction=s["reachable_fraction"], apsp_seconds=r.seconds,
                   distance_dtype=str(r.dist.dtype))
        if r.tile:
            out["tile"] = r.tile
        if not s["connected"] and not a.json:
            print("note: the graph is disconnected; mean path and diameter are over reachable pairs",
                  file=sys.stderr)
        if a.export_distances:
            import numpy as np
            np.save(a.export_distances, r.dist)
            out["export_distances"] = a.export_distances
    be.synchronize()
    out["seconds"] = time.perf_counter() - t0
    if a.export_graph:
        out["export_graph"] = a.export_graph
    return _print_result(out, a.json)


PAPER_000_SIZES = "1000,5000,10000,15000,20000,25000,30000"     # paper 000 Table II


def _graph_reproduce_parser(sub) -> None:
    from kernels.graphs.apsp import METHODS
    from kernels.graphs.reproduce import CONNECTIVITY, PAPER_EXPONENTS, SAMPLED_SOURCES
    p = sub.add_parser("graph-reproduce", help="Re-run paper 000's mean-shortest-path sweep (Fig. 14 / Table II)",
                       description="Re-run paper 000's APSP experiment headless: for each graph type, size N "
                                   "and instance, generate the graph, compute the mean shortest path (and "
                                   "the clustering), then fit the exponent of mean path vs N and compare it "
                                   "with the paper's (0.995, 0.223, 0.106).  One progress line per finished "
                                   "instance goes to stderr.")
    _add_backend(p)
    # values are parsed in run_graph_reproduce so that bad input gives one 'error:' line
    p.add_argument("--types", default=",".join(PAPER_EXPONENTS),
                   help="comma list of graph types: alpha-ring = (1) α-model on a ring substrate, "
                        "alpha = (2) α-model without it, ba = (3) Barabási–Albert k = 100 (default: all three)")
    p.add_argument("--sizes", default=PAPER_000_SIZES,
                   help=f"comma list of N, at least two, each 20 … 60000 (default: paper 000's {PAPER_000_SIZES})")
    p.add_argument("--instances", default="3", help="instances per type and N (default 3)")
    p.add_argument("--method", default=None,
                   help=f"mean-path method: {', '.join(tuple(METHODS) + ('cpu-sampled',))} (default: gpu-bfs on a "
                        f"GPU, else cpu-sampled = mean path from --sources random BFS sources)")
    p.add_argument("--sources", default=str(SAMPLED_SOURCES),
                   help=f"BFS sources per instance for cpu-sampled (default {SAMPLED_SOURCES})")
    p.add_argument("--seed", default="1", help="seed of each (type, N)'s first instance (default 1)")
    p.add_argument("--max-redraws", default="10",
                   help="disconnected draws redrawn per instance (connectivity redraw; default 10)")
    for s in (1, 2):
        p.add_argument(f"--alpha{s}", default=None, help=f"α of α-model set {s} (type {'alpha-ring' if s == 1 else 'alpha'})")
        p.add_argument(f"--p{s}", default=None, help=f"random-link probability p of α-model set {s}, in [0, 1]")
        p.add_argument(f"--k{s}", default=None, help=f"mean degree k of α-model set {s}")
    p.add_argument("--connectivity", default="redraw",
                   help=f"{' or '.join(CONNECTIVITY)}: redraw disconnected graphs (default) or analyse "
                        "the largest connected component")
    p.add_argument("--no-clustering", action="store_true", help="skip the clustering coefficient")
    p.add_argument("--reference", default=None,
                   help="also time a CPU APSP of every instance and check its mean path (Table II's CPU "
                        "column): cpu = scipy BFS, cpu-floyd = scipy Floyd–Warshall, the paper's CPU "
                        "algorithm (N ≤ 5000)")
    p.add_argument("--csv", metavar="FILE", help="write one row per instance (with Eq. 3 normalised times)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _parse_list(name: str, text: str) -> list[str]:
    items = [s.strip() for s in str(text).replace(";", ",").split(",") if s.strip()]
    if not items:
        raise _usage(f"{name} is empty")
    return list(dict.fromkeys(items))


def run_graph_reproduce(a) -> int:
    import math

    import numpy as np

    from kernels import backend as bk
    from kernels.errors import InvalidParameter
    from kernels.graphs import reproduce as rp
    from kernels.graphs.apsp import METHODS, method_names
    types = _parse_list("--types", a.types)
    bad = [t for t in types if t not in rp.PAPER_EXPONENTS]
    if bad:
        raise _usage(f"unknown graph type {bad[0]!r}: use {', '.join(rp.PAPER_EXPONENTS)}")
    try:
        sizes = rp.parse_sizes(a.sizes)
    except InvalidParameter as exc:
        raise _usage(f"--sizes: {exc}") from None
    instances = _num("--instances", a.instances, int, positive=False)
    if instances < 1:
        raise _usage(f"--instances must be ≥ 1 (got {instances})")
    sources = _num("--sources", a.sources, int, positive=False)
    seed0 = _num("--seed", a.seed, int, positive=False)
    max_redraws = _num("--max-redraws", a.max_redraws, int, positive=False)
    if max_redraws < 0:
        raise _usage(f"--max-redraws must be ≥ 0 (got {max_redraws})")
    if a.connectivity not in rp.CONNECTIVITY:
        raise _usage(f"--connectivity must be {' or '.join(rp.CONNECTIVITY)} (got {a.connectivity!r})")
    # α-model overrides: only the keys given; checked (alpha_params) before any work
    params, used = {}, {}
    for s, t in ((1, "alpha-ring"), (2, "alpha")):
        ov = {key: _num(f"--{key}{s}", getattr(a, f"{key}{s}"), int if key == "k" else float, positive=False)
              for key in ("alpha", "p", "k") if getattr(a, f"{key}{s}") is not None}
        try:
            kw = rp.alpha_params(t, ov)
        except InvalidParameter as exc:
            raise _usage(f"α-model set {s}: {exc}") from None
        if "k" in ov and not 1 <= ov["k"] < sizes[0]:
            raise _usage(f"--k{s} must lie in 1 … {sizes[0] - 1} (below the smallest N; got {ov['k']})")
        if ov:
            params[t] = ov
            if t not in types and not a.quiet:
                print(f"note: --{'/--'.join(f'{k}{s}' for k in ov)} ignored: type {t} is not in --types",
                      file=sys.stderr)
        if t in types:
            used[t] = kw
    be = bk.select(a.backend)
    method = a.method or ("gpu-bfs" if be.is_gpu else "cpu-sampled")
    if method not in tuple(METHODS) + ("cpu-sampled",):
        raise _usage(f"unknown --method {method!r}: use {', '.join(tuple(METHODS) + ('cpu-sampled',))}")
    if method in method_names(gpu=True) and not be.is_gpu:
        raise _usage(f"--method {method} needs a GPU ({be.notice or 'CPU backend selected'}); "
                     "use cpu or cpu-sampled")
    try:
        reference = rp.check_reference(a.reference, sizes)
    except InvalidParameter as exc:
        raise _usage(f"--reference: {exc}") from None
    rp.check_memory_for(sizes, method, be, reference)           # the largest N must fit, before any work
    total = len(types) * len(sizes) * instances
    t0 = time.perf_counter()
    sweep = rp.run_sweep(types, sizes, instances, method=method, backend=be, seed0=seed0,
                         max_redraws=max_redraws, sources=sources, params=params,
                         connectivity=a.connectivity, clustering=not a.no_clustering, reference=reference)

    def report(r, done):
        c = "" if math.isnan(r.clustering) else f", C = {r.clustering:.4f}"
        extra = f", {r.regenerated} redrawn" if r.regenerated else ""
        if a.connectivity == "giant" and r.giant_fraction < 1:
            extra += f", largest component {r.giant_fraction:.1%}"
        if r.ref_method:
            extra += f", {r.ref_method} {r.ref_seconds:.3g} s" + (" DISAGREES" if r.ref_agrees is False else "")
        print(f"[{done}/{total}] {r.type} N = {r.n} instance {r.instance + 1}: mean path "
              f"{r.mean_path_length:.4f}, diameter {r.diameter}{c}, {r.seconds:.3g} s{extra}",
              file=sys.stderr, flush=True)
        if a.connectivity == "redraw" and max_redraws and r.regenerated >= max_redraws:
            print(f"note: {r.type} N = {r.n} reached --max-redraws {max_redraws}; the last draw may "
                  "be disconnected (mean path over reachable pairs)", file=sys.stderr)

    rows = _collect_rows(sweep, total, "instances", a.csv, rp.rows_to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    be.synchronize()
    seconds = time.perf_counter() - t0
    if a.csv:
        rp.rows_to_csv(rows, a.csv)
    fits = {t: float(v) for t, v in rp.fit_exponents(rows).items()}
    cl = rp.mean_clustering(rows)
    if a.json:
        out = dict(backend=be.name, types=types, sizes=sizes, instances=instances, method=method,
                   connectivity=a.connectivity, seed=seed0, max_redraws=max_redraws,
                   sources=sources if method == "cpu-sampled" else None, params=used,
                   exponents=fits, paper_exponents={t: rp.PAPER_EXPONENTS[t] for t in types},
                   clustering=cl, reference=reference,
                   speedups={f"{t}/{n}": x for (t, n), x in rp.speedups(rows).items()},
                   rows=[r.to_dict() for r in rows], seconds=seconds)
        if a.csv:
            out["csv"] = a.csv
        return _print_result(out, True)
    ups = rp.speedups(rows)
    print(f"paper 000 sweep: {total} instances, method {method}, backend {be.name}, "
          f"connectivity {a.connectivity}, {seconds:.1f} s")
    for t in types:
        mine = [r for r in rows if r.type == t]
        head = f"{rp.TYPE_LABELS[t]}: exponent {fits.get(t, float('nan')):.3f} (paper {rp.PAPER_EXPONENTS[t]})"
        if t in cl:
            head += f", mean clustering {cl[t]:.4f}"
        print(head)
        if t in used:
            print("    " + ", ".join(f"{k} = {v}" for k, v in used[t].items()))
        for n in sizes:
            L = np.array([r.mean_path_length for r in mine if r.n == n])
            secs = np.mean([r.seconds for r in mine if r.n == n])
            sd = f" ± {L.std(ddof=1):.4f}" if L.size > 1 else ""
            ref = ""
            if (t, n) in ups:
                ref = (f"; {reference} {np.mean([r.ref_seconds for r in mine if r.n == n]):.3g} s, "
                       f"speed-up {ups[t, n]:.3g}×")
            print(f"    N = {n:>6}: mean path {L.mean():.4f}{sd}, {secs:.3g} s per instance{ref}")
    if a.csv:
        print(f"rows written to {a.csv}")
    return 0


def _collect_rows(sweep, total: int, unit: str, csv_path, write_csv, report=None):
    """The rows of a streaming sweep, ``report(row, rows so far)`` after each.  Ctrl+C closes the
    sweep, writes the finished rows to ``csv_path`` (if given), prints one error line and returns
    None: the caller exits 130."""
    rows: list = []
    try:
        for r in sweep:
            rows.append(r)
            if report is not None:
                report(r, len(rows))
    except KeyboardInterrupt:
        sweep.close()
        msg = f"interrupted after {len(rows)} of {total} {unit}"
        if csv_path and rows:
            write_csv(rows, csv_path)
            msg += f"; partial CSV written to {csv_path}"
        print(f"error: {msg}", file=sys.stderr)
        return None
    return rows


def _graph_clustering_parser(sub) -> None:
    from kernels.graphs import cc_timing as cc
    p = sub.add_parser("graph-clustering", help="Re-run paper 001's clustering-coefficient timings (Figs. 14–15)",
                       description="Time each clustering-coefficient implementation against graph size V on "
                                   "paper 001's Watts–Strogatz (k = 50, p = 0.1) and Barabási–Albert (k ≈ 50) "
                                   "graphs, check that all give the same triangle and triple counts, and fit "
                                   "the log–log slopes of time vs V next to the paper's.  One progress line per "
                                   "point goes to stderr.")
    _add_backend(p)
    p.add_argument("--families", default=",".join(cc.FAMILIES), help="comma list: ws, ba (default both)")
    for f in cc.FAMILIES:
        p.add_argument(f"--{f}-sizes", default=None,
                       help=f"comma list of V for {cc.FAMILIES[f]}, at least two, each {cc.MIN_V} … {cc.MAX_V} "
                            f"(default: the paper's {cc.PAPER_SIZES[f][0]}…{cc.PAPER_SIZES[f][-1]} on a GPU, "
                            f"{','.join(map(str, cc.QUICK_SIZES[f]))} on the CPU)")
    p.add_argument("--methods", default=None,
                   help=f"comma list of {', '.join(cc.METHODS)} (default: cpu,cpu-threads and, on a GPU, "
                        "gpu-arc,gpu-sorted)")
    p.add_argument("--repeats", default="5", help="timed runs per point, after one untimed (default 5; paper 30)")
    p.add_argument("--threads", default=None, help="threads of cpu-threads (default: all cores)")
    p.add_argument("--seed", default="1", help="generator seed (default 1)")
    p.add_argument("--csv", metavar="FILE", help="write one row per (family, V, method)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def run_graph_clustering(a) -> int:
    from kernels import backend as bk
    from kernels.errors import InvalidParameter
    from kernels.graphs import cc_timing as cc
    be = bk.select(a.backend)
    families = _parse_list("--families", a.families)
    defaults = cc.default_sizes(be)
    sizes = {}
    for f in families:
        text = getattr(a, f"{f}_sizes", None) if f in cc.FAMILIES else None
        sizes[f] = (defaults.get(f, []) if text is None else
                    [_num(f"--{f}-sizes", v, int) for v in _parse_list(f"--{f}-sizes", text)])
    methods = cc.default_methods(be) if a.methods is None else _parse_list("--methods", a.methods)
    repeats = _num("--repeats", a.repeats, int)
    threads = cc.default_workers() if a.threads is None else _num("--threads", a.threads, int)
    seed = _num("--seed", a.seed, int, positive=False)
    try:
        sizes = cc.check_sizes(sizes)
        methods = cc.check_methods(methods, be, sizes)
    except InvalidParameter as exc:
        raise _usage(str(exc)) from None
    total = sum(len(v) for v in sizes.values()) * len(methods)
    t0 = time.perf_counter()
    sweep = cc.run_cc_sweep(sizes, methods, repeats, backend=be, seed=seed, workers=threads)

    def report(r, done):
        flag = "" if r.agrees else "  DISAGREES with the first method"
        print(f"[{done}/{total}] {r.family} V = {r.n} {r.method}: {r.seconds * 1e3:.3f} ± "
              f"{r.std * 1e3:.3f} ms, C = {r.clustering:.6f}{flag}", file=sys.stderr, flush=True)

    rows = _collect_rows(sweep, total, "points", a.csv, cc.rows_to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    seconds = time.perf_counter() - t0
    if a.csv:
        cc.rows_to_csv(rows, a.csv)
    slopes = cc.fit_slopes(rows)
    agree = all(r.agrees for r in rows)
    if a.json:
        out = dict(backend=be.name, sizes=sizes, methods=methods, repeats=repeats, threads=threads, seed=seed,
                   slopes={f"{f}/{m}": s for (f, m), s in slopes.items()},
                   paper_slopes={f: {m: cc.PAPER_SLOPES[f][cc.PAPER_NAME[m]] for m in methods if m in cc.PAPER_NAME}
                                 for f in sizes},
                   all_methods_agree=agree, rows=[r.to_dict() for r in rows], seconds=seconds)
        if a.csv:
            out["csv"] = a.csv
        _print_result(out, True)
        return 0 if agree else 1
    print(f"paper 001 clustering timings: {total} points, {repeats} timed runs each, backend {be.name}, "
          f"{seconds:.1f} s")
    for f, ns in sizes.items():
        print(f"{cc.FAMILIES[f]} (paper C ≈ {cc.PAPER_LEVELS[f]})")
        for m in methods:
            paper = cc.PAPER_SLOPES[f].get(cc.PAPER_NAME.get(m, ""))
            ref = f" (paper {cc.PAPER_NAME[m]}: {paper})" if paper is not None else ""
            mine = {r.n: r for r in rows if r.family == f and r.method == m}
            print(f"    {m:<11} slope {slopes.get((f, m), float('nan')):.3f}{ref}; " +
                  ", ".join(f"V = {n}: {mine[n].seconds * 1e3:.3g} ms" for n in ns if n in mine))
        cs = sorted({r.n: r.clustering for r in rows if r.family == f}.items())
        print("    C: " + ", ".join(f"{c:.4f}" for _n, c in cs))
    print("all methods agree on t and p" if agree else "error: methods disagree (see the rows above)")
    if a.csv:
        print(f"rows written to {a.csv}")
    return 0 if agree else 1


def _int_arg(v, name):
    try:
        return int(v)
    except ValueError:
        raise _usage(f"{name} must be 32, 64, model or auto (got {v})") from None


def _json_safe(v):
    """Strict JSON all the way down: NaN/Inf (e.g. no coarsening fit yet, an unmeasured clustering)
    become null, also inside lists and dicts."""
    import math
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _print_result(out: dict, as_json: bool) -> int:
    """One strict JSON object (--json), else one aligned 'key: value' line per entry; exit 0."""
    if as_json:
        print(json.dumps(_json_safe(out), allow_nan=False))
    else:
        for k, v in out.items():
            print(f"{k:>22}: {v}")
    return 0


class _usage(Exception):
    pass


def _occupancy_parser(sub) -> None:
    p = sub.add_parser("occupancy", help="CUDA occupancy calculator (papers 003, 004, 000)",
                       description="Theoretical occupancy of a kernel launch for a compute capability "
                                   "(1.0 … 12.0, or 'device' for the GPU in this machine).")
    _add_backend(p)
    # numbers are parsed in run_occupancy so that bad input gives one 'error:' line
    p.add_argument("--cc", default=None, help="compute capability, e.g. 9.0, 8.6, 1.3; 'device' = this GPU "
                                              "(default: this GPU if there is one)")
    p.add_argument("--threads", default="256", help="threads per block")
    p.add_argument("--regs", default="32", help="registers per thread")
    p.add_argument("--smem", default="0", help="dynamic shared memory per block (bytes)")
    p.add_argument("--static-smem", default="0", help="static __shared__ memory per block (bytes)")
    p.add_argument("--carveout", default=None, help="preferred shared-memory carve-out in %% (CC ≥ 7.0; "
                                                    "default: the driver's, the largest)")
    p.add_argument("--curves", action="store_true", help="include the three occupancy curves in the JSON")
    p.add_argument("--list-ccs", action="store_true", help="print the per-CC data table and exit")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _int_opt(name: str, v) -> int:
    try:
        return int(str(v).strip())
    except ValueError:
        raise _usage(f"{name} must be an integer, got {v!r}") from None


def run_occupancy(a) -> int:
    from kernels.occupancy import curve, default_axis, get_spec, occupancy
    from kernels.occupancy.specs import table_rows
    if a.list_ccs:
        rows = table_rows()
        if a.json:
            print(json.dumps(rows))
        else:
            for r in rows:
                print(f"{r['cc']:>5} {r['arch']:<22} warps/SM {r['max_warps_per_sm']:3d}  blocks/SM "
                      f"{r['max_blocks_per_sm']:3d}  regs/SM {r['regs_per_sm']:6d}  smem/SM {r['smem_per_sm']:6d}")
        return 0
    if a.cc in (None, "device"):
        from kernels import backend as bk
        be = bk.select(a.backend or ("gpu" if a.cc == "device" else "auto"))
        if not be.is_gpu:
            raise _usage(f"no GPU to take the compute capability from ({be.notice}); give --cc, e.g. --cc 9.0")
        from kernels.occupancy.gpu import device_spec
        spec = device_spec()
    else:
        spec = get_spec(a.cc)
    threads, regs = _int_opt("--threads", a.threads), _int_opt("--regs", a.regs)
    smem, static = _int_opt("--smem", a.smem), _int_opt("--static-smem", a.static_smem)
    carve = None if a.carveout is None else _int_opt("--carveout", a.carveout)
    r = occupancy(spec, threads, regs, static, smem, carveout=carve)
    out = r.as_dict()
    out.update(arch=spec.arch, gpu_examples=spec.examples, occupancy_percent=round(100 * r.occupancy, 2))
    if a.curves:
        out["curves"] = {v: {"x": default_axis(spec, v),
                             "occupancy": curve(spec, v, default_axis(spec, v), threads, regs, static, smem, carve)}
                         for v in ("threads", "regs", "smem")}
    if a.json:
        print(json.dumps(out, allow_nan=False))
        return 0
    print(f"CC {spec.cc} ({spec.arch}): {threads} threads/block, {regs} registers/thread, "
          f"{static} + {smem} B shared memory per block")
    for k in ("warps_per_block", "regs_per_block", "smem_per_block", "smem_per_sm"):
        print(f"{k:>32}: {out[k]}")
    for k, v in r.limits.items():
        mark = "  <- limiter" if k in r.limiters else ""
        print(f"{'blocks limited by ' + k:>32}: {'no limit' if v is None else v}{mark}")
    print(f"{'active blocks per SM':>32}: {r.active_blocks_per_sm}")
    print(f"{'active warps per SM':>32}: {r.active_warps_per_sm} of {r.max_warps_per_sm}")
    print(f"{'occupancy':>32}: {r.occupancy:.1%}")
    for n in r.notes:
        print(f"note: {n}")
    return 0


def _flint_parser(sub) -> None:
    p = sub.add_parser("flint", help="Flint: run an SBML/CellML/native ODE model (paper 004 ch. 5)",
                       description="Compile a cell model to bytecode / CUDA C and integrate it headless.")
    p.add_argument("model", help="model file (.flint, SBML .xml, .cellml) or a shipped model name")
    # numbers/choices are checked in run_flint so that bad input gives one 'error:' line
    p.add_argument("--t-end", default="1000", help="end time (model time units, ms for LR)")
    p.add_argument("--dt", default="0.01", help="time step; with --runtime sbml the output interval (the "
                   "reference simulator chooses its own adaptive steps)")
    p.add_argument("--runtime", default="cpu",
                   help="is (bytecode interpreter, GPU), ts (generated CUDA), cpu (NumPy), c / c-is (the generated C / "
                        "the interpreter on CPU cores, see --threads; needs g++/clang++), or sbml (the SBML "
                        "reference simulator on the CPU: LSODA with root-found events, delays, algebraic rules, "
                        "fast reactions; one model instance, SBML files only)")
    p.add_argument("--integrator", default=None, help="euler (default) or rk4; not with --runtime sbml")
    p.add_argument("--dtype", default=None, help="float64 (default) or float32; sbml: float64 only")
    p.add_argument("--threads", default="1", help="host threads of --runtime c / c-is (OpenMP over cells; "
                   "default 1, the thesis's CPU-1)")
    p.add_argument("--mapping", default=None,
                   help="GPU thread mapping: cell (one thread a member/cell, the default) or expression (the "
                        "thesis's: one launch a phase, one thread a bytecode, warps of 32); sbml: cell only")
    p.add_argument("--ensemble", default="1", help="ensemble size N (one model, N members); sbml: 1 only")
    p.add_argument("--vary", action="append", default=[], metavar="PARAM=LO:HI",
                   help="spread a parameter linearly over the ensemble (repeatable; not with sbml)")
    p.add_argument("--line", default=None, metavar="N", help="N cells in a line, diffusively coupled on V (not sbml)")
    p.add_argument("--ring", default=None, metavar="N", help="N cells in a ring (not sbml)")
    p.add_argument("--coupling", default="1.0", help="coupling coefficient D (1/time) for --line/--ring")
    p.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE", help="change a parameter")
    p.add_argument("--record", action="append", default=None,
                   help="state to record (repeatable, comma lists and patterns such as 'S_RG_*'; default all); sbml: any species, parameter or "
                        "compartment id, @a:S for the amount of species S (default: species and "
                        "non-constant parameters)")
    p.add_argument("--every", default="100", help="sample every N steps (sbml: every N output intervals; "
                   "its samples include t = 0)")
    p.add_argument("--csv", default=None, help="write the recorded traces (member 0 / cell 0 .. all cells) as CSV")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _num(name, v, kind=float, positive=True):
    try:
        x = kind(str(v).strip())
    except ValueError:
        raise _usage(f"{name} must be a number, got {v!r}") from None
    import math
    if not math.isfinite(x) or (positive and x <= 0):
        raise _usage(f"{name} must be {'> 0' if positive else 'finite'}, got {v}")
    return x


def _flint_model_path(name):
    """The file behind a model argument (a path or a shipped model's file name), or None."""
    from pathlib import Path

    from kernels.flint import shipped_models
    p = Path(name)
    if p.exists():
        return p
    return shipped_models().get(str(name)) or shipped_models().get(f"{name}.flint")


def run_flint(a) -> int:
    import numpy as np
    from kernels.errors import ExplorerError
    from kernels.flint import Network, Simulation, load_model
    from kernels.flint.runtimes import INTEGRATORS, RUNTIMES
    if a.runtime not in RUNTIMES + ("sbml",):
        raise _usage(f"--runtime must be {', '.join(RUNTIMES)} or sbml (got {a.runtime!r})")
    if a.runtime == "sbml":
        return _run_flint_sbml(a)
    a.integrator, a.dtype, a.mapping = a.integrator or "euler", a.dtype or "float64", a.mapping or "cell"
    if a.integrator not in INTEGRATORS:
        raise _usage(f"--integrator must be euler or rk4 (got {a.integrator!r})")
    if a.dtype not in ("float64", "float32"):
        raise _usage(f"--dtype must be float64 or float32 (got {a.dtype!r})")
    from kernels.flint.runtimes import MAPPINGS
    if a.mapping not in MAPPINGS:
        raise _usage(f"--mapping must be {' or '.join(MAPPINGS)} (got {a.mapping!r})")
    t_end, dt = _num("--t-end", a.t_end), _num("--dt", a.dt)
    n = _num("--ensemble", a.ensemble, int)
    every = _num("--every", a.every, int)
    try:
        model = load_model(a.model)
    except ExplorerError as exc:
        from kernels.flint.sbml_run import reference_hint
        path = _flint_model_path(a.model)
        hint = reference_hint(path) if path is not None else ""
        if hint:
            raise _usage(f"{exc}{hint}") from None
        raise
    for kv in a.set:
        k, _, v = kv.partition("=")
        if k not in model.params:
            raise _usage(f"--set: {k!r} is not a parameter of {model.name}")
        model.params[k] = _num(f"--set {k}", v, positive=False)
    network = None
    if a.line or a.ring:
        network = Network("line" if a.line else "ring", _num("--line/--ring", a.line or a.ring, int),
                          "V", _num("--coupling", a.coupling, positive=False))
        n = network.n_cells
    from kernels.flint.runtimes import network_stimulus
    member = network_stimulus(model, n) if network is not None else {}
    for kv in a.vary:
        k, _, rng = kv.partition("=")
        lo, _, hi = rng.partition(":")
        member[k] = np.linspace(_num("--vary", lo, positive=False), _num("--vary", hi or lo, positive=False), n)
    states = list(model.states)
    from kernels.errors import InvalidParameter
    from kernels.flint.model import select_states
    try:
        rec = select_states(model, a.record) if a.record else states
    except InvalidParameter as exc:
        raise _usage(f"--{exc}") from None
    steps = int(round(t_end / dt))
    t0 = time.perf_counter()
    sim = Simulation(model, runtime=a.runtime, n=n, member_params=member, network=network,
                     integrator=a.integrator, dtype=a.dtype, mapping=a.mapping,
                     threads=_num("--threads", a.threads, int))
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    times, samples = sim.advance(steps, dt, record=[states.index(r) for r in rec], every=every)
    seconds = time.perf_counter() - t0
    out = {"model": model.name, "n_states": model.n_states, "n_cells": sim.n, "steps": steps, "dt": dt,
           "t_end": steps * dt, "runtime": a.runtime, "mapping": a.mapping, "integrator": a.integrator, "dtype": a.dtype,
           "compile_seconds": round(t_compile, 4), "seconds": round(seconds, 4),
           "steps_per_s": round(steps / seconds, 1) if seconds > 0 else None,
           "block_size": sim.block_size if a.runtime == "ts" else None,
           "threads": sim.threads if a.runtime in ("c", "c-is") else None,
           "variables": {r: {"min": float(samples[:, i].min()) if samples.size else None,
                             "max": float(samples[:, i].max()) if samples.size else None,
                             "final": [float(v) for v in sim.state()[states.index(r)][:8]] if sim.n > 1
                             else float(sim.state()[states.index(r), 0])}
                         for i, r in enumerate(rec)}}
    return _flint_report(a, out, times, samples, rec,
                         f"{model.name}: {model.n_states} states × {sim.n} cells, {steps} {a.integrator} steps "
                         f"on {a.runtime} in {seconds:.3f} s ({out['steps_per_s']} steps/s)")


def _flint_report(a, out: dict, times, samples, rec: list, headline: str) -> int:
    """--csv (recorded traces), then one JSON object (--json) or a headline + min/max/final lines."""
    if a.csv:
        from kernels.flint.io import write_csv
        write_csv(a.csv, times, samples, rec)
        out["csv"] = a.csv
    if a.json:
        print(json.dumps(out))
    else:
        print(headline)
        for r, d in out["variables"].items():
            print(f"  {r}: min {d['min']:.6g}  max {d['max']:.6g}  final {d['final']}")
    return 0


def _run_flint_sbml(a) -> int:
    """--runtime sbml: the SBML reference simulator (kernels/flint/sbml_run.py), one model instance."""
    import numpy as np
    from kernels.flint.sbml_run import load_reference, output_times, run_reference
    why = "(the SBML reference simulator integrates one model instance with LSODA in float64)"
    if a.integrator is not None:
        raise _usage(f"--integrator does not apply to --runtime sbml {why}")
    if a.dtype not in (None, "float64"):
        raise _usage(f"--dtype {a.dtype} does not apply to --runtime sbml {why}")
    if a.mapping not in (None, "cell"):
        raise _usage(f"--mapping {a.mapping} does not apply to --runtime sbml {why}")
    if a.line or a.ring:
        raise _usage(f"--line/--ring do not apply to --runtime sbml {why}")
    if _num("--ensemble", a.ensemble, int) != 1:
        raise _usage(f"--ensemble {a.ensemble} does not apply to --runtime sbml {why}")
    if a.vary:
        raise _usage(f"--vary does not apply to --runtime sbml {why}; use --set")
    t_end, dt = _num("--t-end", a.t_end), _num("--dt", a.dt)
    every = _num("--every", a.every, int)
    path = _flint_model_path(a.model)
    if path is None:
        raise _usage(f"no such model file: {a.model}")
    if path.suffix.lower() in (".flint", ".cellml"):
        raise _usage(f"--runtime sbml needs an SBML file, got {path.name}")
    t0 = time.perf_counter()
    ref = load_reference(path)
    overrides = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        if k not in ref.params:
            raise _usage(f"--set: {k!r} is not a parameter of {ref.name}")
        if k not in ref.editable:
            raise _usage(f"--set: {k!r} is {ref.roles[k]} in {ref.name}; it cannot be set")
        overrides[k] = _num(f"--set {k}", v, positive=False)
    rec = a.record or ref.default_record()
    known = set(ref.recordable) | {"@a:" + x for x in ref.system.species} | {r.id for r in ref.system.reactions}
    for r in rec:
        if r not in known:
            more = " …" if len(ref.recordable) > 12 else ""
            raise _usage(f"--record: {r!r} is not a variable of {ref.name} (species, parameters, compartments; "
                         f"@a:S for amounts: {', '.join(ref.recordable[:12])}{more})")
    times = output_times(t_end, dt, every)
    t_load = time.perf_counter() - t0
    res = run_reference(ref, times, rec, params=overrides)
    steps = int(round(t_end / dt))
    y = res.values
    out = {"model": ref.name, "n_states": res.n_states, "n_cells": 1, "steps": steps, "dt": dt,
           "t_end": steps * dt, "runtime": "sbml", "mapping": None, "integrator": "lsoda", "dtype": "float64",
           "compile_seconds": round(t_load, 4), "seconds": round(res.seconds, 4),
           "steps_per_s": round(steps / res.seconds, 1) if res.seconds > 0 else None, "block_size": None,
           "n_events": len(ref.system.events),
           "variables": {r: {"min": float(np.nanmin(y[:, i])) if y.size else None,
                             "max": float(np.nanmax(y[:, i])) if y.size else None,
                             "final": float(y[-1, i])} for i, r in enumerate(rec)}}
    return _flint_report(a, out, res.times, y[:, :, None], rec,
                         f"{ref.name}: {res.n_states} states, {len(ref.system.events)} events, {steps} output "
                         f"intervals (dt {dt:g}) on the SBML reference simulator in {res.seconds:.3f} s")


def _flint_suite_parser(sub) -> None:
    p = sub.add_parser("flint-suite", help="SBML Test Suite conformance of the Flint SBML simulator",
                       description="Run SBML Test Suite TimeCourse cases, compare with results.csv by the suite's "
                                   "rule, print a per-tag table; exit 0 when no case failed, 1 otherwise.")
    p.add_argument("cases", nargs="*", metavar="CASES", help="case ids or ranges, e.g. 1 42 100-200 (default: all)")
    p.add_argument("--runtime", default="cpu", help="cpu (NumPy/SciPy LSODA), roadrunner (libRoadRunner peer), dopri-cpu (the "
                        "GPU integrator's NumPy twin), is, ts (GPU: adaptive Dormand–Prince, ODE core)")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write every case's outcome as JSON ('-': stdout)")
    p.add_argument("--out-dir", default=None, metavar="DIR", help="write each simulated case as DIR/NNNNN.csv")
    p.add_argument("--workers", default=None, help="worker processes (default: CPU count, at most 8)")
    p.add_argument("--timeout", default="60", help="per-case time limit in seconds")
    p.add_argument("--suite-dir", default=None, metavar="D", help="suite root (default: GSE_SBML_SUITE or "
                                                                    "../shared/sbml-test-suite)")
    p.add_argument("--sample", action="store_true", help="only the fixed CI sample (tests/data/sbml_suite_sample.txt)")


def run_flint_suite(a) -> int:
    import os
    from kernels.flint import suite
    if a.runtime not in ("cpu", "roadrunner", "dopri-cpu", "is", "ts"):
        raise _usage(f"--runtime must be cpu, roadrunner, dopri-cpu, is or ts (got {a.runtime!r})")
    if a.runtime in ("is", "ts") and suite.runtime_unavailable(a.runtime):
        raise _usage(suite.runtime_unavailable(a.runtime))
    workers = _num("--workers", a.workers, int) if a.workers is not None else min(8, os.cpu_count() or 1)
    timeout = _num("--timeout", a.timeout)
    ids = suite.parse_case_ids(a.cases) if a.cases else None
    if a.sample:
        sample = suite.read_sample()
        ids = sample if ids is None else [i for i in ids if i in set(sample)]
    root = suite.suite_dir(a.suite_dir)
    cases = suite.discover(root, ids)
    if not cases:
        raise _usage(f"no TimeCourse cases in {root} match {' '.join(a.cases) or '--sample'}")
    why = suite.runtime_unavailable(a.runtime)
    if why:
        raise _usage(why)
    tty = sys.stderr.isatty()
    last = [0.0]

    def progress(done, total, eta, oc):
        now = time.perf_counter()
        if done < total and now - last[0] < (0.2 if tty else 10):
            return
        last[0] = now
        eta_s = "" if eta is None else f" ETA {int(eta) // 60}m{int(eta) % 60:02d}s"
        line = f"[{done}/{total}] {100 * done / max(total, 1):5.1f}%{eta_s}  last {oc.case} {oc.status}"
        print(("\r" + line.ljust(70)) if tty else line, end="\n" if not tty or done == total else "",
              file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    outcomes = suite.run_cases(cases, a.runtime, workers=workers, timeout=timeout, out_dir=a.out_dir,
                               progress=progress)
    wall = time.perf_counter() - t0
    rep = suite.report(cases, outcomes, a.runtime, wall, str(root))
    if a.json == "-":
        print(json.dumps(rep, allow_nan=False))
    else:
        if a.json:
            suite.write_json(a.json, rep)
        print(suite.format_tag_table(rep["tags"]))
        for o in outcomes:
            if o.status == "failed":
                print(f"failed {o.case}: {o.message}")
        t = rep["totals"]
        print(f"{a.runtime}: {t['total']} cases, {t['passed']} passed, {t['failed']} failed, "
              f"{t['refused']} refused in {wall:.1f} s ({workers} workers)")
    return 1 if rep["totals"]["failed"] else 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gpu-science-explorer", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_backend(ap)
    sub = ap.add_subparsers(dest="workspace", metavar="WORKSPACE")
    _ch_parser(sub)
    _graph_parser(sub)
    _graph_reproduce_parser(sub)
    _graph_clustering_parser(sub)
    _occupancy_parser(sub)
    _flint_parser(sub)
    _flint_suite_parser(sub)
    return ap


COMMANDS = {"ch": run_ch, "graph": run_graph, "graph-reproduce": run_graph_reproduce,
            "graph-clustering": run_graph_clustering,
            "occupancy": run_occupancy, "flint": run_flint,
            "flint-suite": run_flint_suite}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = build_parser()
    a = ap.parse_args(argv)
    if a.workspace is None:
        from explorer.app import run_gui
        return run_gui(a.backend)
    from kernels.errors import ExplorerError
    try:
        return COMMANDS[a.workspace](a)
    except (ExplorerError, _usage, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
