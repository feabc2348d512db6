"""``graph-clustering``: re-run paper 001's clustering-coefficient timings (Figs. 14–15) headless.

Values are parsed in :func:`run` so that bad input gives one ``error:`` line; ``--csv`` is checked
before the sweep.  Exit status 0 when every method counts the same triangles and triples, 1 when
they disagree, 2 on bad input, 130 on Ctrl+C (finished rows beside ``--csv``, ``NAME.partial.csv``).
``--scheduler`` spreads the (family, V) points over Dask (:func:`kernels.sweep.graph_tasks.clustering_sweep`;
``--workers``: its worker processes, ``--threads`` still the cpu-threads count)."""
from __future__ import annotations

# Imports inside functions: kernels.sweep loads only for a sweep (it loads every system's tasks; `--help` stays fast).
import sys
import time

from .common import (CSV_EXTS, UsageError, check_output, collect_rows, num_type, number, parse_list,
                     print_result, raise_failed, threads_type, write_outputs)
from .scheduler import add_scheduler, backend_choice, scheduler_value, workers_value
from kernels.graphs.experiments import cc_timing as cc
from kernels import backend as bk
from kernels.errors import InvalidParameter

NAME = "graph-clustering"
USES_BACKEND = True

def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Re-run paper 001's clustering-coefficient timings (Figs. 14–15)",
                       description="Time each clustering-coefficient implementation against graph size V on "
                                   "paper 001's Watts–Strogatz (k = 50, p = 0.1) and Barabási–Albert (k ≈ 50) "
                                   "graphs, check that all give the same triangle and triple counts, and fit "
                                   "the log–log slopes of time vs V next to the paper's.  One progress line per "
                                   "point goes to stderr.")
    p.add_argument("--families", default=",".join(cc.FAMILIES), help="comma list: ws, ba (default both)")
    for f in cc.FAMILIES:
        p.add_argument(f"--{f}-sizes", default=None,
                       help=f"comma list of V for {cc.FAMILIES[f]}, at least two, each {cc.MIN_V} … {cc.MAX_V} "
                            f"(default: the paper's {cc.PAPER_SIZES[f][0]}…{cc.PAPER_SIZES[f][-1]} on a GPU, "
                            f"{','.join(map(str, cc.QUICK_SIZES[f]))} on the CPU)")
    p.add_argument("--methods", default=None,
                   help=f"comma list of {', '.join(cc.CLUSTERING_METHODS)} (default: cpu,cpu-threads and, on a GPU, "
                        "gpu-arc,gpu-sorted; with ≥ 2 GPUs or --gpus N ≥ 2 also multi-arc,multi-sorted). "
                        "Without a GPU gpu-arc / gpu-sorted run their CUDA source on the CPU (small sizes)")
    p.add_argument("--gpus", default=None, type=num_type(int, minimum=1, maximum=64),
                   help="GPUs of the multi-arc / multi-sorted methods (paper 001 §5.5: graph replicated, arcs in "
                        "work blocks; default: every visible GPU; on the CPU backend N virtual GPUs, default 2)")
    p.add_argument("--repeats", default=5, type=num_type(int, minimum=1, maximum=100_000), help="timed runs per point, after one untimed (default 5; paper 30)")
    p.add_argument("--threads", default=None, type=threads_type(), help="threads of cpu-threads (default: all cores)")
    p.add_argument("--seed", default=1, type=num_type(int, minimum=0), help="generator seed (default 1)")
    p.add_argument("--csv", metavar="FILE", help="write one row per (family, V, method)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")
    add_scheduler(p, None, "points")


def run(a) -> int:
    check_output(a.csv, CSV_EXTS, "--csv")
    be = bk.select(a.backend)
    families = parse_list("--families", a.families)
    defaults = cc.default_sizes(be)
    sizes = {}
    for f in families:
        text = getattr(a, f"{f}_sizes", None) if f in cc.FAMILIES else None
        sizes[f] = (defaults.get(f, []) if text is None else
                    [number(f"--{f}-sizes", v, int, above=0) for v in parse_list(f"--{f}-sizes", text)])
    gpus = cc.default_gpus(be) if a.gpus is None else number("--gpus", a.gpus, int, minimum=1, maximum=64)
    methods = cc.default_methods(be) if a.methods is None else parse_list("--methods", a.methods)
    if a.methods is None and a.gpus is not None and gpus >= 2:
        methods += [m for m in cc.MULTI_METHODS if m not in methods]
    repeats = number("--repeats", a.repeats, int, above=0)
    threads = cc.default_workers() if a.threads is None else number("--threads", a.threads, int, above=0)
    seed = number("--seed", a.seed, int, minimum=0)
    scheduler = scheduler_value(a)
    workers = workers_value(a, scheduler)
    remote = scheduler not in (None, "local", "none")        # GPU methods: the workers are checked instead
    try:
        sizes = cc.check_sizes(sizes)
        if not remote:
            methods = cc.check_methods(methods, be, sizes, seed)
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None
    total = sum(len(v) for v in sizes.values()) * len(methods)
    t0 = time.perf_counter()
    if scheduler is None:
        sweep = cc.run_cc_sweep(sizes, methods, repeats, backend=be, seed=seed, workers=threads, gpus=gpus)
    else:
        from kernels.sweep.graph_tasks import clustering_sweep
        sweep = clustering_sweep(sizes, methods, repeats, backend=backend_choice(a), seed=seed, threads=threads,
                                 gpus=gpus, scheduler=scheduler, workers=workers)

    def report(r, done):
        flag = "" if r.agrees else "  DISAGREES with the first method"
        print(f"[{done}/{total}] {r.family} V = {r.n} {r.method}: {r.seconds * 1e3:.3f} ± "
              f"{r.std * 1e3:.3f} ms, C = {r.clustering:.6f}{flag}", file=sys.stderr, flush=True)

    rows = collect_rows(sweep, total, "points", a.csv, cc.TIMINGS.to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    fo, mo = {f: i for i, f in enumerate(sizes)}, {m: i for i, m in enumerate(methods)}
    rows.sort(key=lambda r: (fo[r.family], r.n, mo[r.method]))   # Dask: completion order → the serial order
    seconds = time.perf_counter() - t0
    written: dict = {}
    failed = write_outputs(written, [("csv", lambda: (cc.TIMINGS.to_csv(rows, a.csv), a.csv)[1])] if a.csv else [])
    slopes = cc.fit_slopes(rows)
    agree = all(r.agrees for r in rows)
    if a.json:
        out = dict(backend=be.name, emulated=any(cc.emulated(m, be) for m in methods), sizes=sizes, methods=methods, repeats=repeats, threads=threads, seed=seed, gpus=gpus,
                   slopes={f"{f}/{m}": s for (f, m), s in slopes.items()},
                   paper_slopes={f: {m: cc.PAPER_SLOPES[f][cc.PAPER_NAME[m]] for m in methods if m in cc.PAPER_NAME}
                                 for f in sizes},
                   all_methods_agree=agree, rows=[r.to_dict() for r in rows], seconds=seconds)
        out.update(written)
        print_result(out, True)
        raise_failed(failed)
        return 0 if agree else 1
    host = [m for m in methods if cc.emulated(m, be)]
    where = f" ({', '.join(host)}: CUDA source run on the CPU)" if host else ""
    print(f"paper 001 clustering timings: {total} points, {repeats} timed runs each, backend {be.name}{where}, "
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
    if "csv" in written:
        print(f"rows written to {written['csv']}")
    raise_failed(failed)
    return 0 if agree else 1
