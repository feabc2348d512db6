"""``graph-fw``: time Floyd–Warshall versions against n (papers 002 and 004, issue 20) headless.

Specs (``name[:key=value,…]``), sizes, arithmetic and repeats go to
:func:`kernels.graphs.experiments.fw_sweep.run_sweep`; ``--table ii`` / ``--table 4.6`` take their settings
from ``fw_sweep.TABLE_SETUPS`` (explicit options override) and print the paper's layout beside
ours; ``--table 4.7`` measures the per-kernel breakdown of paper 004's Tables 4.7–4.8 (GPU only).
Every spec, size, the arithmetic and ``--csv`` are checked before any work; rows stream (one
progress line each on stderr), so Ctrl+C exits 130 with the finished rows beside ``--csv``
(``NAME.partial.csv``).
"""
from __future__ import annotations

import sys

from .common import (CSV_EXTS, UsageError, check_output, collect_rows, num_type, number, parse_list,
                     print_result, raise_failed, write_outputs)
import json
from kernels.graphs.experiments import fw_sweep as fs
from kernels.graphs.apsp.fw_core import ARITHS, fw_versions
from kernels.errors import InvalidParameter
from kernels.graphs.apsp import check_memory
from kernels import backend as bk

NAME = "graph-fw"
USES_BACKEND = True
TABLES = ("ii", "4.6", "4.7")


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Time Floyd–Warshall versions vs n (papers 002 and 004)",
                       description="Time the chosen Floyd–Warshall versions on one random graph per size n (paper "
                                   "004 §4.5.1: m = 4n arcs, integer weights 1 … n − 1), one untimed run first, then "
                                   "--repeats timed runs of the computation; every row says whether its distances "
                                   "equal the first version's.  Versions: " + ", ".join(fw_versions()) + ".")
    p.add_argument("--versions", nargs="+", default=None, metavar="SPEC",
                   help="versions with options, space-separated: name[:key=value,…], e.g. fw-v1 fw-mm:tile=16,l=auto "
                        "fw-recursive:t_r=64 (default on a GPU: " + " ".join(fs.DEFAULT_SPECS["gpu"]) +
                        "; on the CPU: " + " ".join(fs.DEFAULT_SPECS["cpu"]) + ")")
    p.add_argument("--sizes", default=None,
                   help=f"comma list of n, {fs.MIN_N} … {fs.MAX_N} (default on a GPU: "
                        f"{','.join(map(str, fs.DEFAULT_SIZES['gpu']))}; on the CPU: "
                        f"{','.join(map(str, fs.DEFAULT_SIZES['cpu']))})")
    p.add_argument("--arith", choices=ARITHS, default=None,
                   help="arithmetic: float32 (default), int32 (exact), dpx (int32 through Hopper's fused add-min "
                        "where a version has it) or auto (int32 for these integer weights)")
    p.add_argument("--repeats", type=num_type(int, minimum=1, maximum=10_000), default=None, help="timed runs per point (default 3)")
    p.add_argument("--seed", type=num_type(int, minimum=0), default=1, help="graph seed (the graph of size n uses seed + n; default 1)")
    p.add_argument("--pred", action="store_true", help="also keep the predecessor matrix (path recording)")
    p.add_argument("--table", choices=TABLES, default=None,
                   help="ii: paper 002 Table II (fw-v1 fw-v3 fw-v4 fw-v5 at n = 2048, 10 runs, int32; without a GPU at "
                        f"n = {fs.HOST_TABLE_II_N}, 3 runs, V3–V5 as their CUDA source run on the CPU); 4.6: paper 004 Table 4.6 (MM / two-level / recursive at n = 128 … 4096, 2 runs, "
                        "int32); 4.7: paper 004 Tables 4.7–4.8, the per-kernel times at n = max(--sizes), default "
                        "8192 (GPU only).  Explicit options override the table's")
    p.add_argument("--csv", metavar="FILE", help="write one row per (version, n)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _setup(a, be):
    """(specs, sizes, repeats, arith) from the options, the --table's setup and the defaults; checked."""
    t_specs, t_sizes, t_reps, t_arith = fs.table_setup(a.table, be) if a.table in fs.TABLE_SETUPS else (None,) * 4
    specs = a.versions or list(t_specs or fs.default_specs(be))
    try:
        sizes = fs.check_sizes([number("--sizes", v, int) for v in parse_list("--sizes", a.sizes)]
                               if a.sizes is not None else (t_sizes or fs.default_sizes(be)))
    except InvalidParameter as exc:
        raise UsageError(f"--sizes: {exc}") from None
    try:
        specs = fs.check_specs(specs, be, sizes)
    except InvalidParameter as exc:
        raise UsageError(f"--versions: {exc}") from None
    repeats = number("--repeats", a.repeats if a.repeats is not None else (t_reps or 3), int, minimum=1,
                     maximum=10_000)
    arith = a.arith or t_arith or "float32"
    for s in specs:
        cls = fw_versions()[fs.parse_spec(s)[0]]
        if arith != "auto" and arith not in cls.ariths:
            raise UsageError(f"--arith {arith}: {cls.name} has no {arith} kernels (use {', '.join(cls.ariths)})")
        check_memory(max(sizes), cls.name, be, 4)               # the dense matrices of the largest n
    return specs, sizes, repeats, arith


def _row_line(r) -> str:
    share = "" if r.pct_peak is None else f", {r.pct_peak:.1f} % of peak"
    same = "" if r.agrees else "  OTHER DISTANCES than the first version"
    if r.backend == "host":
        share += ", CUDA source run on the CPU"
    return (f"{r.label:<22} n = {r.n:>6} {r.arith:<7} {r.seconds * 1e3:10.4g} ± {r.std * 1e3:.2g} ms{share}, "
            f"{r.launches} launches{', ' + r.params if r.params else ''}{same}")


def run(a) -> int:
    check_output(a.csv, CSV_EXTS, "--csv")
    seed = number("--seed", a.seed, int, minimum=0)
    be = bk.select(a.backend)
    if a.table == "4.7":
        return _breakdown(a, be)
    specs, sizes, repeats, arith = _setup(a, be)
    total = len(specs) * len(sizes)

    def report(r, done):
        print(f"[{done}/{total}] {_row_line(r)}", file=sys.stderr, flush=True)

    sweep = fs.run_sweep(specs, sizes, be, arith, repeats, seed, a.pred)
    rows = collect_rows(sweep, total, "points", a.csv, fs.TIMINGS.to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    written: dict = {}
    failed = write_outputs(written, [("csv", lambda: (fs.TIMINGS.to_csv(rows, a.csv), a.csv)[1])] if a.csv else [])
    agree = all(r.agrees for r in rows)
    if a.json:
        out = dict(json.loads(fs.rows_to_json(rows, be)), backend=be.name,
                   emulated=any(r.backend == "host" for r in rows), specs=specs, sizes=sizes, arith=arith,
                   repeats=repeats, seed=seed, pred=a.pred, table=a.table, all_agree=agree, **written)
        print_result(out, True)
        raise_failed(failed)
        return 0 if agree else 1
    print(f"Floyd–Warshall timings: {len(specs)} versions × {len(sizes)} sizes, {arith}, {repeats} timed runs, "
          f"backend {be.name}")
    for r in rows:
        print("    " + _row_line(r))
    for line in fs.summary_lines(rows):
        print(line)
    if a.table == "ii":
        _print_table_ii(fs.table_ii(rows))
    elif a.table == "4.6":
        _print_table_4_6(fs.table_4_6(rows), fs.THESIS_HEADERS)
    if "csv" in written:
        print(f"rows written to {written['csv']}")
    raise_failed(failed)
    return 0 if agree else 1


def _ms(v) -> str:
    return "—" if v is None else f"{v:.4g}"


def _print_table_ii(t: dict) -> None:
    at = "" if t["n"] == t["paper_n"] else f"; the paper's at n = {t['paper_n']}"
    print(f"Paper 002 Table II (n = {t['n']}{at}; seconds, mean of the runs):")
    for v, d in t["versions"].items():
        print(f"    {v:<6} {d['header']:<18} ours {_ms(d['ours_mean'])}  paper {d['paper_mean']:.4g}")
    for k, d in t["steps"].items():
        ours = "—" if d["ours"] is None else f"{d['ours']:.1f} %"
        print(f"    {k}: ours {ours} less time, paper claims {d['paper_claim']} % (its table {d['paper_table']:.1f} %)")


def _print_table_4_6(t: list, headers) -> None:
    print("Paper 004 Table 4.6 (ms; ours / GTX 280):")
    print("    " + " " * 8 + "".join(f"{h:>20}" for h in headers))
    for row in t:
        cells = "".join(f"{_ms(o) + ' / ' + _ms(p):>20}" for o, p in zip(row["ours_ms"], row["paper_ms"]))
        print(f"    n = {row['n']:<5}{cells}")


def _breakdown(a, be) -> int:
    """--table 4.7: per-kernel times of the MM-based and two-level versions (paper 004 Tables 4.7–4.8)."""
    if not be.is_gpu:
        raise UsageError(f"--table 4.7 times CUDA kernels: it needs a GPU ({be.notice or 'CPU backend selected'})")
    if a.csv or a.versions or a.repeats is not None or a.pred:
        raise UsageError("--table 4.7 takes --sizes (its largest n) and --arith only (no --csv, --versions, "
                         "--repeats, --pred)")
    n = max(number("--sizes", v, int, minimum=64, maximum=fs.MAX_N) for v in parse_list("--sizes", a.sizes)) \
        if a.sizes is not None else 8192
    arith = a.arith or "int32"
    if arith not in ("float32", "int32"):
        raise UsageError(f"--table 4.7 measures float32 or int32 kernels (got --arith {arith})")
    check_memory(n, "fw-mm", be, 4)
    res = fs.kernel_breakdown(be, n=n, arith=arith)
    if a.json:
        return print_result({"backend": be.name, "n": n, "arith": arith, "kernels": res,
                             "paper_table_4_7": fs.THESIS_TABLE_4_7, "paper_table_4_8": fs.THESIS_TABLE_4_8}, True)
    print(f"Paper 004 Tables 4.7–4.8 on this GPU (n = {n}, {arith}; ms over one run, paper at n = 8192):")
    for i, (key, d) in enumerate(res.items()):
        paper = " / ".join(f"{fs.THESIS_TABLE_4_7[k][i]:g}" for k in fs.THESIS_TABLE_4_7)
        share = "" if d["nonpivot_pct_peak"] is None else f"; non-pivot {d['nonpivot_pct_peak']:.1f} % of peak"
        print(f"    {key:<10} pivot {d['pivot'] * 1e3:.3g}, row+column {d['pivot row+column'] * 1e3:.3g}, "
              f"non-pivot {d['non-pivot'] * 1e3:.4g} ms (paper {paper}; IPC {fs.THESIS_TABLE_4_8[i]}){share}")
    return 0
