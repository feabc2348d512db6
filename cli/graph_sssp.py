"""``graph-sssp``: paper 004 ch. 3's SSSP experiments headless (issue 21).

* ``table``    — Table 3.1: four directed topologies × the SSSP methods and the CPU Dijkstra
  (:func:`kernels.graphs.experiments.sssp_table.run_table`);
* ``scaling``  — Figs. 3.10 / 3.12 / 3.13: time vs |V|, |E| or w_max on random digraphs
  (:func:`~kernels.graphs.experiments.sssp_table.run_scaling`; Fig. 3.11 = the speed-ups over the CPU);
* ``overhead`` — Fig. 3.14: the path-recording overhead, recorded paths checked;
* ``limits``   — the largest |V| each GPU method fits by paper 004's element counts.

The methods come from the registry (default: those of ``sssp_table.TABLE_METHODS`` that run natively on
this backend: on the CPU, cpu-dijkstra).  Without a GPU the GPU methods run their CUDA source on
the CPU when named (``--methods``; the JSON says ``"emulated": true``); a run estimated above
about 30 s is refused before any work, naming the limit.  Every value, the graph sizes (and their memory) and ``--csv``
are checked before any work; rows stream with a progress line each; Ctrl+C exits 130 with the
finished rows beside ``--csv`` (``NAME.partial.csv``).  Exit status 1 when a method's costs differ
from scipy's Dijkstra.
"""
from __future__ import annotations

import re
import sys
import time

from .common import (CSV_EXTS, UsageError, check_output, collect_rows, num_type, number, parse_list,
                     print_result, raise_failed, threads_type, write_outputs)
from kernels.graphs.data import digraphs as D
from kernels.graphs.experiments import sssp_table as T
from kernels.errors import InvalidParameter, GridTooLarge
from kernels import backend as bk

NAME = "graph-sssp"
USES_BACKEND = True
EXPERIMENTS = ("table", "scaling", "overhead", "limits")
#: values of each figure when --values is not given (|V|, |E| or w_max)
FIGURE_VALUES = {"3.10": (1024, 4096, 16384), "3.12": (8192, 32768), "3.13": (16, 4096)}
SCALED_SOURCES = 1024                 # scaling / overhead: sources timed by default
#: options of some experiments only: flag → (argparse dest, experiments)
ONLY = {"--topologies": ("topologies", ("table",)), "--n": ("n", ("table",)), "--arcs": ("arcs", ("table",)),
        "--w-max": ("w_max", ("table",)), "--figure": ("figure", ("scaling",)), "--values": ("values", ("scaling",)),
        "--sizes": ("sizes", ("overhead",)), "--check-paths": ("check_paths", ("overhead",)),
        "--memory": ("memory", ("limits",)), "--arcs-per-vertex": ("arcs_per_vertex", ("limits",)),
        "--methods": ("methods", ("table", "scaling")), "--threads": ("threads", ("table", "scaling")),
        "--max-sources": ("max_sources", ("table", "scaling", "overhead"))}


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Paper 004's SSSP experiments: Table 3.1, Figs. 3.10–3.14, limits",
                       description="Re-run paper 004 ch. 3: Table 3.1 (table), the scaling figures (scaling), the "
                                   "path-recording overhead (overhead) and the memory limits (limits).  Without a GPU "
                                   "the GPU methods run their CUDA source on the CPU (small sizes); cpu-dijkstra runs "
                                   "anywhere.")
    p.add_argument("experiment", choices=EXPERIMENTS, help="table, scaling, overhead or limits")
    p.add_argument("--methods", default=None,
                   help=f"comma list of {', '.join(T.LABELS)} (default: those of {', '.join(T.TABLE_METHODS)} that run "
                        "natively on this backend; without a GPU the GPU methods run their CUDA source on the CPU)")
    p.add_argument("--topologies", default=None, help=f"table: comma list of {', '.join(T.TOPOLOGIES)} (default all)")
    p.add_argument("--n", default=None, type=num_type(int, minimum=2, maximum=2**31 - 1), help=f"table: vertices |V| (default {D.TABLE31['n']}, the thesis's)")
    p.add_argument("--arcs", default=None, type=num_type(int, minimum=0), help=f"table: arcs |E| of random / powerlaw (default {D.TABLE31['arcs']})")
    p.add_argument("--w-max", default=None, type=num_type(int, minimum=1, maximum=2**24), help=f"table: largest weight of random / powerlaw (default "
                                                 f"{D.TABLE31['w_max']})")
    p.add_argument("--figure", default=None, choices=tuple(T.FIGURES),
                   help="scaling: " + "; ".join(f"{k} = {v}" for k, v in T.FIGURES.items()) + " (default 3.10)")
    p.add_argument("--values", default=None, help="scaling: comma list of the figure's x values (|V|, |E| or w_max; "
                   "default " + "; ".join(f"{k}: {','.join(map(str, v))}" for k, v in FIGURE_VALUES.items()) + ")")
    p.add_argument("--sizes", default=None, help="overhead: comma list of |V| (|E| = 4|V|; default 1024,4096,16384)")
    p.add_argument("--max-sources", default=None, metavar="K | METHOD[/TOPOLOGY]:K,…",
                   help="time the first K sources only and scale by |V|/K (rows marked ~): one K, or per method "
                        "(and topology), e.g. sssp-harish:16,cpu-dijkstra/complete:256 (default: table "
                        + ", ".join(f"{m}/{t}:{k}" for (m, t), k in T.DEFAULT_MAX_SOURCES.items())
                        + f"; scaling and overhead {SCALED_SOURCES})")
    p.add_argument("--threads", default=None, type=threads_type(), help="CPU threads of cpu-dijkstra (default: all cores)")
    p.add_argument("--check-paths", default=None, type=num_type(int, minimum=0, maximum=1_000_000), help="overhead: recorded paths checked per graph (default 64)")
    p.add_argument("--memory", default=None, metavar="BYTES",
                   help="limits: GPU memory, e.g. 512M (paper 004's 8800 GTS, the default), 80G, or this-gpu")
    p.add_argument("--arcs-per-vertex", default=None, type=num_type(float, above=0, maximum=1e6), help="limits: |E| / |V| (default 4)")
    p.add_argument("--seed", default=1, type=num_type(int, minimum=0), help="graph seed (default 1)")
    p.add_argument("--csv", metavar="FILE", help="write one row per point")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _ints(flag, text, lo, hi) -> list[int]:
    return sorted({number(flag, v, int, minimum=lo, maximum=hi) for v in parse_list(flag, text)})


def _methods(a, be) -> list[str]:
    names = parse_list("--methods", a.methods) if a.methods else [m for m in T.TABLE_METHODS if not T.emulated(m, be)]
    try:
        return T.check_methods(names, be)
    except InvalidParameter as exc:
        raise UsageError(f"--methods: {exc}") from None


def _max_sources(a, default):
    """--max-sources as an int, or {method: k} / {(method, topology): k}."""
    text = a.max_sources
    if text is None:
        return default
    if re.fullmatch(r"\s*[+-]?\d+\s*", text):
        return number("--max-sources", text, int, minimum=1)
    out = {}
    for item in parse_list("--max-sources", text):
        key, sep, k = item.rpartition(":")
        method, _, topo = key.partition("/")
        if not sep or method not in T.LABELS or (topo and topo not in T.TOPOLOGIES):
            raise UsageError(f"--max-sources {item!r}: write K, or METHOD:K / METHOD/TOPOLOGY:K with a method of "
                             f"{', '.join(T.LABELS)} and a topology of {', '.join(T.TOPOLOGIES)}")
        out[(method, topo) if topo else method] = number(f"--max-sources {key}", k, int, minimum=1)
    return out


def _check_digraph(n: int, arcs: int, what: str) -> None:
    """A digraph of n vertices and ``arcs`` arcs fits the host (its CSR and the build's temporaries)."""
    need = 40 * arcs + 16 * n
    if need > 0.5 * bk.host_available_memory():
        raise GridTooLarge(f"{what}: |V| = {n:,}, |E| = {arcs:,} needs about {need / 2**30:.1f} GiB to build; "
                           f"{bk.host_available_memory() / 2**30:.1f} GiB are available")


def _table_graphs(a, topologies):
    """(n, arcs, w_max) of the table, each topology's graph checked (sizes, memory)."""
    n = number("--n", a.n or D.TABLE31["n"], int, minimum=2, maximum=2**31 - 1)
    arcs = number("--arcs", a.arcs or D.TABLE31["arcs"], int, minimum=0)
    w_max = number("--w-max", a.w_max or D.TABLE31["w_max"], int, minimum=1, maximum=2**24)
    for t in topologies:
        m = {"ring": n, "complete": n * (n - 1)}.get(t, arcs)
        if t in ("random", "powerlaw") and arcs > n * (n - 1):
            raise UsageError(f"--arcs must be ≤ n(n−1) = {n * (n - 1):,} (got {arcs:,})")
        if t == "random" and arcs < n:
            raise UsageError(f"--arcs: the random topology's Hamiltonian cycle needs |E| ≥ n = {n:,} (got {arcs:,})")
        if t == "complete" and n > D.COMPLETE_MAX_N:
            raise UsageError(f"--n: a complete digraph above {D.COMPLETE_MAX_N:,} vertices is too large (got {n:,}); "
                             "leave complete out of --topologies")
        _check_digraph(n, m, t)
    return n, arcs, w_max


def _figure_values(a, figure) -> list[int]:
    text = a.values or ",".join(map(str, FIGURE_VALUES[figure]))
    if figure == "3.10":
        vals = _ints("--values", text, 2, 2**31 // 4)
        for v in vals:
            _check_digraph(v, 4 * v, "Fig. 3.10")
    elif figure == "3.12":
        vals = _ints("--values", text, 4096, 4096 * 4095)
        _check_digraph(4096, vals[-1], "Fig. 3.12")
    else:
        vals = _ints("--values", text, 1, 2**24)
    return vals


def _memory(text, be) -> int:
    if text is None:
        return T.PAPER_GPU_BYTES
    if text == "this-gpu":
        if not be.is_gpu:
            raise UsageError(f"--memory this-gpu needs a GPU ({be.notice or 'CPU backend selected'}); give a size "
                             "such as 80G")
        return int(be.free_memory())
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?\s*", str(text))
    if not m:
        raise UsageError(f"--memory must be a size such as 512M, 80G or this-gpu (got {text!r})")
    return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))


def run(a) -> int:
    check_output(a.csv, CSV_EXTS, "--csv")
    for flag, (dest, where) in ONLY.items():
        if getattr(a, dest) is not None and a.experiment not in where:
            raise UsageError(f"{flag} does not apply to graph-sssp {a.experiment} (only to {', '.join(where)})")
    seed = number("--seed", a.seed, int, minimum=0)
    be = bk.select(a.backend)
    if a.experiment == "limits":
        return _limits(a, be)
    threads = None if a.threads is None else number("--threads", a.threads, int, minimum=1, maximum=4096)
    if a.experiment == "table":
        topologies = parse_list("--topologies", a.topologies) if a.topologies else list(T.TOPOLOGIES)
        bad = [t for t in topologies if t not in T.TOPOLOGIES]
        if bad:
            raise UsageError(f"--topologies: unknown topology {bad[0]!r}: use {', '.join(T.TOPOLOGIES)}")
        n, arcs, w_max = _table_graphs(a, topologies)
        limit = _max_sources(a, T.DEFAULT_MAX_SOURCES)
        methods = _methods(a, be)
        total = len(topologies) * len(methods)
        sweep = T.run_table(topologies, methods, be, n, arcs, w_max, seed, limit, threads)
    elif a.experiment == "scaling":
        figure = a.figure or "3.10"
        values = _figure_values(a, figure)
        limit = _max_sources(a, SCALED_SOURCES)
        methods = _methods(a, be)
        total = len(values) * len(methods)
        sweep = T.run_scaling(figure, values, methods, be, seed, limit, threads)
    else:
        sizes = _ints("--sizes", a.sizes or "1024,4096,16384", 2, 2**31 // 4)
        _check_digraph(sizes[-1], 4 * sizes[-1], "overhead")
        limit = _max_sources(a, SCALED_SOURCES)
        if isinstance(limit, dict):
            raise UsageError("--max-sources: overhead takes one K (it runs sssp-path only)")
        checks = number("--check-paths", a.check_paths or 64, int, minimum=0, maximum=1_000_000)
        try:
            T.check_methods(["sssp-path"], be)
        except InvalidParameter as exc:
            raise UsageError(f"overhead: {exc}") from None
        total = len(sizes)
        sweep = T.run_path_overhead(sizes, be, seed, limit, checks)
    t0 = time.perf_counter()

    def report(r, done):
        print(f"[{done}/{total}] {row_line(r)}", file=sys.stderr, flush=True)

    rows = collect_rows(sweep, total, "points", a.csv, T.to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    seconds = time.perf_counter() - t0
    written: dict = {}
    failed = write_outputs(written, [("csv", lambda: (T.to_csv(rows, a.csv), a.csv)[1])] if a.csv and rows
                           else [])
    agree = all(getattr(r, "agrees", True) is not False for r in rows) and \
        all(r.paths_valid == r.paths_checked for r in rows if hasattr(r, "paths_valid"))
    out = summary(a.experiment, rows)
    out.update(backend=be.name, emulated=any(T.emulated(r.method, be) for r in rows if hasattr(r, "method"))
               or (a.experiment == "overhead" and T.emulated("sssp-path", be)),
               seed=seed, seconds=seconds, all_agree=agree, **written)
    if a.json:
        print_result(out, True)
    else:
        host = sorted({r.method for r in rows if hasattr(r, "method") and T.emulated(r.method, be)})
        where = f" ({', '.join(host)}: CUDA source run on the CPU)" if host else ""
        print(f"paper 004 SSSP {a.experiment}: {len(rows)} points, backend {be.name}{where}, {seconds:.1f} s "
              "(~ = timed on the first sources, scaled by |V| / k)")
        for line in lines(a.experiment, rows):
            print(line)
        if "csv" in written:
            print(f"rows written to {written['csv']}")
    raise_failed(failed)
    return 0 if agree else 1


def _secs(r) -> str:
    return f"{'~' if r.scaled else ''}{r.seconds:.4g} s"


def row_line(r) -> str:
    """One progress line of a TableRow, ScaleRow or OverheadRow."""
    bad = "  DIFFERS from scipy" if getattr(r, "agrees", None) is False else ""
    if hasattr(r, "topology"):
        return f"{r.topology} |V| = {r.n} |E| = {r.arcs} {r.method}: {_secs(r)} (paper {r.paper_seconds:g} s){bad}"
    if hasattr(r, "figure"):
        return f"Fig. {r.figure} |V| = {r.n} |E| = {r.arcs} w_max = {r.w_max} {r.method}: {_secs(r)}{bad}"
    return (f"|V| = {r.n}: cost {r.cost_seconds:.4g} s, record {r.record_seconds:.4g} s, overhead "
            f"{100 * r.overhead:.1f} %, paths valid {r.paths_valid}/{r.paths_checked}")


def summary(experiment: str, rows) -> dict:
    """The JSON of an experiment: rows, and the speed-ups (table: over Harish's method; scaling,
    Fig. 3.11: over the CPU Dijkstra) or the paper's overhead range."""
    out = {"experiment": experiment, "rows": [r.to_dict() for r in rows]}
    if experiment == "table":
        out["speedups_over_harish"] = {"/".join(k): v for k, v in T.speedups(rows).items()}
    elif experiment == "scaling":
        out["speedups_over_cpu"] = {"/".join(map(str, k)): v for k, v in T.speedups(rows, "cpu-dijkstra").items()}
    else:
        out["paper_overhead"] = list(T.PAPER_PATH_OVERHEAD)
    return out


def lines(experiment: str, rows) -> list[str]:
    if experiment == "table":
        out = []
        for m in dict.fromkeys(r.method for r in rows):
            cells = [f"{r.topology} {_secs(r)} (paper {r.paper_seconds:g})" + ("" if r.agrees is not False else " DIFFERS")
                     for r in rows if r.method == m]
            out.append(f"    {T.LABELS[m]:<28} " + ", ".join(cells))
        ups = T.speedups(rows)
        if ups:
            out.append("speed-up over Harish's method: " + ", ".join(f"{m} on {t} {v:.3g}×" for (t, m), v in ups.items()))
        return out
    if experiment == "scaling":
        out = [f"Fig. {rows[0].figure}: {T.FIGURES[rows[0].figure]}"] if rows else []
        for key in sorted({(r.n, r.arcs, r.w_max) for r in rows}):
            cells = [f"{r.method} {_secs(r)}" + ("" if r.agrees is not False else " DIFFERS")
                     for r in rows if (r.n, r.arcs, r.w_max) == key]
            out.append(f"    |V| = {key[0]}, |E| = {key[1]}, w_max = {key[2]}: " + ", ".join(cells))
        return out
    lo, hi = T.PAPER_PATH_OVERHEAD
    return [f"    {row_line(r)}" for r in rows] + [f"paper 004: overhead {100 * lo:.1f}–{100 * hi:.1f} %"]


def _limits(a, be) -> int:
    if a.csv is not None:
        raise UsageError("--csv does not apply to graph-sssp limits")
    mem = _memory(a.memory, be)
    apv = number("--arcs-per-vertex", a.arcs_per_vertex or 4, float, above=0, maximum=1e6)
    out = {"experiment": "limits", "memory_bytes": mem, "arcs_per_vertex": apv,
           "largest_vertices": {m: T.largest_vertices(m, mem, apv) for m in T.GPU_METHODS},
           "paper_limits": T.PAPER_LIMITS, "paper_memory_bytes": T.PAPER_GPU_BYTES}
    if a.json:
        return print_result(out, True)
    print(f"largest |V| with |E| = {apv:g}·|V| in {mem / 2**20:,.0f} MiB (paper 004's element counts, 4-byte "
          "elements):")
    for m, v in out["largest_vertices"].items():
        paper = T.PAPER_LIMITS.get(m)
        ref = f" (paper 004 on its 512 MB GPU: {paper / 1e6:.1f} M)" if paper else ""
        print(f"    {m:<12} {v:,}{ref}")
    return 0
