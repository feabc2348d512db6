"""``graph-reproduce``: re-run paper 000's mean-shortest-path sweep (Fig. 14 / Table II) headless.

Values are parsed in :func:`run` so that bad input gives one ``error:`` line; ``--csv`` is checked
before the sweep starts.  Ctrl+C stops the sweep with exit status 130 and writes the finished rows
beside ``--csv`` (``NAME.partial.csv``), never over a complete earlier file.  ``--scheduler`` spreads
the instances over Dask (:func:`kernels.sweep.graph_tasks.reproduce_sweep`); without it the sweep runs
here as before.  The rows are put back into the serial order either way."""
from __future__ import annotations

# Imports inside functions: kernels.sweep loads only for a sweep (it loads every system's tasks; `--help` stays fast).
import sys
import time

from .common import (CSV_EXTS, UsageError, check_output, collect_rows, note, num_type, number, parse_list,
                     print_result,
                     raise_failed, write_outputs)
from .scheduler import add_scheduler, backend_choice, scheduler_value, workers_value
import math
import numpy as np
from kernels.graphs.apsp import METHODS, method_names
from kernels.graphs.experiments.reproduce import CONNECTIVITY, PAPER_EXPONENTS, SAMPLED_SOURCES
from kernels import backend as bk
from kernels.errors import InvalidParameter
from kernels.graphs.experiments import reproduce as rp

NAME = "graph-reproduce"
USES_BACKEND = True

PAPER_000_SIZES = "1000,5000,10000,15000,20000,25000,30000"     # paper 000 Table II


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Re-run paper 000's mean-shortest-path sweep (Fig. 14 / Table II)",
                       description="Re-run paper 000's APSP experiment headless: for each graph type, size N "
                                   "and instance, generate the graph, compute the mean shortest path (and "
                                   "the clustering), then fit the exponent of mean path vs N and compare it "
                                   "with the paper's (0.995, 0.223, 0.106).  One progress line per finished "
                                   "instance goes to stderr.")
    p.add_argument("--types", default=",".join(PAPER_EXPONENTS),
                   help="comma list of graph types: alpha-ring = (1) α-model on a ring substrate, "
                        "alpha = (2) α-model without it, ba = (3) Barabási–Albert k = 100 (default: all three)")
    p.add_argument("--sizes", default=PAPER_000_SIZES,
                   help=f"comma list of N, at least two, each 20 … 60000 (default: paper 000's {PAPER_000_SIZES})")
    p.add_argument("--instances", default=3, type=num_type(int, minimum=1, maximum=100_000), help="instances per type and N (default 3)")
    p.add_argument("--method", default=None,
                   help=f"mean-path method: {', '.join(tuple(METHODS) + ('cpu-sampled',))} (default: gpu-bfs on a "
                        f"GPU, else cpu-sampled = mean path from --sources random BFS sources); without a GPU the "
                        f"CUDA methods run their CUDA source on the CPU (small sizes)")
    p.add_argument("--sources", default=SAMPLED_SOURCES, type=num_type(int, minimum=1, maximum=10**9),
                   help=f"BFS sources per instance for cpu-sampled (default {SAMPLED_SOURCES})")
    p.add_argument("--seed", default=1, type=num_type(int, minimum=0), help="seed of each (type, N)'s first instance (default 1)")
    p.add_argument("--max-redraws", default=10, type=num_type(int, minimum=0, maximum=100_000),
                   help="disconnected draws redrawn per instance (connectivity redraw; default 10)")
    for s in (1, 2):
        p.add_argument(f"--alpha{s}", default=None, type=num_type(float), help=f"α of α-model set {s} (type {'alpha-ring' if s == 1 else 'alpha'})")
        p.add_argument(f"--p{s}", default=None, type=num_type(float), help=f"random-link probability p of α-model set {s}, in [0, 1]")
        p.add_argument(f"--k{s}", default=None, type=num_type(int, minimum=1), help=f"mean degree k of α-model set {s}")
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
    add_scheduler(p, None, "instances")


def run(a) -> int:


    check_output(a.csv, CSV_EXTS, "--csv")
    types = parse_list("--types", a.types)
    bad = [t for t in types if t not in rp.PAPER_EXPONENTS]
    if bad:
        raise UsageError(f"unknown graph type {bad[0]!r}: use {', '.join(rp.PAPER_EXPONENTS)}")
    try:
        sizes = rp.parse_sizes(a.sizes)
    except InvalidParameter as exc:
        raise UsageError(f"--sizes: {exc}") from None
    instances = number("--instances", a.instances, int, minimum=1)
    sources = number("--sources", a.sources, int, minimum=1)
    seed0 = number("--seed", a.seed, int, minimum=0)
    max_redraws = number("--max-redraws", a.max_redraws, int, minimum=0)
    if a.connectivity not in rp.CONNECTIVITY:
        raise UsageError(f"--connectivity must be {' or '.join(rp.CONNECTIVITY)} (got {a.connectivity!r})")
    # α-model overrides: only the keys given; checked (alpha_params) before any work
    params, used = {}, {}
    for s, t in ((1, "alpha-ring"), (2, "alpha")):
        ov = {key: number(f"--{key}{s}", getattr(a, f"{key}{s}"), int if key == "k" else float)
              for key in ("alpha", "p", "k") if getattr(a, f"{key}{s}") is not None}
        try:
            kw = rp.alpha_params(t, ov)
        except InvalidParameter as exc:
            raise UsageError(f"α-model set {s}: {exc}") from None
        if "k" in ov and not 1 <= ov["k"] < sizes[0]:
            raise UsageError(f"--k{s} must lie in 1 … {sizes[0] - 1} (below the smallest N; got {ov['k']})")
        if ov:
            params[t] = ov
            if t not in types and not a.quiet:
                note(f"--{'/--'.join(f'{k}{s}' for k in ov)} ignored: type {t} is not in --types")
        if t in types:
            used[t] = kw
    scheduler = scheduler_value(a)
    workers = workers_value(a, scheduler)
    remote = scheduler not in (None, "local", "none")        # the workers are checked, not this machine
    be = bk.select(a.backend)
    method = a.method or ("gpu-bfs" if be.is_gpu or (remote and backend_choice(a) == "gpu") else "cpu-sampled")
    if method not in tuple(METHODS) + ("cpu-sampled",):
        raise UsageError(f"unknown --method {method!r}: use {', '.join(tuple(METHODS) + ('cpu-sampled',))}")
    if method in METHODS and not METHODS[method].available(be) and not remote:
        raise UsageError(f"--method {method} needs a GPU ({be.notice or 'CPU backend selected'}); "
                         f"use cpu-sampled or one of {', '.join(method_names(gpu=False))}")
    try:
        reference = rp.check_reference(a.reference, sizes)
    except InvalidParameter as exc:
        raise UsageError(f"--reference: {exc}") from None
    try:
        rp.check_instances(types, sizes, params)                 # every (type, N) before the first runs
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None
    if not remote:
        rp.check_memory_for(sizes, method, be, reference)       # the largest N must fit, before any work
        try:
            rp.check_host(types, sizes, method, be, params, seed0)   # the host device's time limit
        except InvalidParameter as exc:
            raise UsageError(str(exc)) from None
    total = len(types) * len(sizes) * instances
    t0 = time.perf_counter()
    kw = dict(seed0=seed0, max_redraws=max_redraws, sources=sources, params=params, connectivity=a.connectivity,
              clustering=not a.no_clustering, reference=reference)
    if scheduler is None:
        sweep = rp.run_sweep(types, sizes, instances, method=method, backend=be, **kw)
    else:
        from kernels.sweep.graph_tasks import reproduce_sweep
        sweep = reproduce_sweep(types, sizes, instances, method=method, backend=backend_choice(a),
                                scheduler=scheduler, workers=workers, **kw)

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
            note(f"{r.type} N = {r.n} reached --max-redraws {max_redraws}; the last draw may "
                 "be disconnected (mean path over reachable pairs)")

    rows = collect_rows(sweep, total, "instances", a.csv, rp.FIG14.to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    order = {t: i for i, t in enumerate(types)}                  # Dask: completion order → the serial order
    rows.sort(key=lambda r: (order[r.type], r.n, r.instance))
    be.synchronize()
    seconds = time.perf_counter() - t0
    written: dict = {}
    failed = write_outputs(written, [("csv", lambda: (rp.FIG14.to_csv(rows, a.csv), a.csv)[1])] if a.csv else [])
    fits = {t: float(v) for t, v in rp.fit_exponents(rows).items()}
    cl = rp.mean_clustering(rows)
    if a.json:
        out = dict(backend=be.name, emulated=not remote and rp.emulated(method, be), types=types, sizes=sizes, instances=instances, method=method,
                   connectivity=a.connectivity, seed=seed0, max_redraws=max_redraws,
                   sources=sources if method == "cpu-sampled" else None, params=used,
                   exponents=fits, paper_exponents={t: rp.PAPER_EXPONENTS[t] for t in types},
                   clustering=cl, reference=reference,
                   speedups={f"{t}/{n}": x for (t, n), x in rp.speedups(rows).items()},
                   rows=[r.to_dict() for r in rows], seconds=seconds)
        out.update(written)
        print_result(out, True)
        raise_failed(failed)
        return 0
    ups = rp.speedups(rows)
    where = " (CUDA source run on the CPU)" if not remote and rp.emulated(method, be) else ""
    print(f"paper 000 sweep: {total} instances, method {method}{where}, backend {be.name}, "
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
    if "csv" in written:
        print(f"rows written to {written['csv']}")
    raise_failed(failed)
    return 0
