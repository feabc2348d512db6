"""``graph-bfs``: paper 000 §4.3's BFS kernel evolution (Figs. 10–13) and block-size sweep (Fig. 15)
headless (issue 21).  Without a GPU every kernel runs its CUDA source on the CPU (the host device
of :mod:`kernels.gpu`): the same hop counts, host times, no occupancy; the JSON says
``"emulated": true`` and sizes above the host limit (about 30 s a run) are refused before any work.

Kernel evolution (:func:`kernels.graphs.experiments.bfs_evolution.run_evolution`): every kernel times all-pairs
hop counts on each (type, N, instance); the log–log slope of time vs N per (type, kernel) is set
beside the paper's range and each kernel's change from its parent and from kernel 1 at the
largest N beside the direction the paper reports.  ``--sweep``: one kernel over block sizes
(:func:`~kernels.graphs.experiments.bfs_evolution.run_block_sweep`), with the theoretical occupancy of each.
Everything is checked before any work (the GPU too); rows stream, one progress line each on
stderr; Ctrl+C exits 130 with the finished rows beside ``--csv`` (``NAME.partial.csv``).  Exit
status 1 when a kernel's hop counts differ from the first kernel's.
"""
from __future__ import annotations

import sys
import time

from .common import (CSV_EXTS, UsageError, check_output, collect_rows, note, num_type, number, parse_list,
                     print_result, raise_failed, write_outputs)
from kernels.graphs.experiments import bfs_evolution as E, reproduce as rp
from kernels.errors import InvalidParameter
from kernels import backend as bk
from kernels.graphs.apsp import check_memory
from kernels.gpu import launch_occupancy

NAME = "graph-bfs"
USES_BACKEND = True
DEFAULT_SIZES = "1000,2000,4000"
#: options of one mode only: flag → (argparse dest, mode)
MODE_ONLY = {"--kernels": ("kernels", "evolution"), "--instances": ("instances", "evolution"),
             "--block": ("block", "evolution"), "--paper-sizes": ("paper_sizes", "evolution"),
             "--kernel": ("kernel", "sweep"), "--blocks": ("blocks", "sweep"), "--repeats": ("repeats", "sweep")}


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Paper 000's BFS kernel evolution and block-size sweep",
                       description="Re-run paper 000 §4.3 on this GPU: kernels 1 … 7 (and the project's gpu-bfs, "
                                   "gpu-msbfs) on the three graph types over N (Figs. 10–13: slopes of time vs N, "
                                   "each kernel against its parent), or with --sweep one kernel over block sizes "
                                   "(Fig. 15, with the theoretical occupancy on a GPU).  Without a GPU the same "
                                   "CUDA source runs on the CPU (small sizes: a run above about 30 s is refused).")
    p.add_argument("--sweep", action="store_true", help="the block-size sweep (Fig. 15) instead of the evolution")
    p.add_argument("--types", default=",".join(E.TYPES),
                   help="comma list of graph types: " + ", ".join(f"{t} = {E.TYPE_LABELS[t]}" for t in E.TYPES))
    p.add_argument("--sizes", default=None,
                   help=f"comma list of N (evolution: at least two, default {DEFAULT_SIZES}; --sweep: default "
                        f"{','.join(map(str, E.SWEEP_SIZES))}; without a GPU {','.join(map(str, E.HOST_SIZES))} and "
                        f"{','.join(map(str, E.HOST_SWEEP_SIZES))})")
    p.add_argument("--paper-sizes", action="store_true", default=None,
                   help=f"the paper's sizes {','.join(map(str, E.PAPER_SIZES))} (hours with --batch 1 on type 1)")
    p.add_argument("--kernels", default=None,
                   help=f"comma list of {', '.join(E.KERNELS + E.EXTRA)} (default: the paper's seven)")
    p.add_argument("--instances", default=None, type=num_type(int, minimum=1, maximum=100_000), help="instances per type and N (default 2; the paper: 10)")
    p.add_argument("--batch", default=1, type=num_type(int, minimum=1), help="BFS sources per launch (default 1 = the paper's one source per BFS; "
                                                "gpu-bfs / gpu-msbfs choose their own)")
    p.add_argument("--block", default=None, type=num_type(int, minimum=32, maximum=1024), help="threads per block of the evolution (multiple of 32; default 256)")
    p.add_argument("--kernel", default=None, help="--sweep: the kernel (default gpu-bfs-k7, the paper's)")
    p.add_argument("--blocks", default=None, metavar="START:STOP:STEP",
                   help="--sweep: block sizes as START:STOP:STEP or a comma list, multiples of 32 (default 32:512:32)")
    p.add_argument("--repeats", default=None, type=num_type(int, minimum=1, maximum=100_000), help=f"--sweep: runs per point (default {E.SWEEP_REPEATS})")
    p.add_argument("--seed", default=1, type=num_type(int, minimum=0), help="seed of the first instance (default 1)")
    p.add_argument("--csv", metavar="FILE", help="write one row per (type, N, instance, kernel) / per block size")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def _blocks(text):
    if text is None:
        return list(E.SWEEP_BLOCKS)
    parts = str(text).split(":")
    if len(parts) == 3:
        lo, hi, step = (number("--blocks", x, int, minimum=1, maximum=1024) for x in parts)
        blocks = list(range(lo, hi + 1, step))
    else:
        blocks = [number("--blocks", x, int, minimum=1, maximum=1024) for x in parse_list("--blocks", text)]
    try:
        return E.check_blocks(blocks)
    except InvalidParameter as exc:
        raise UsageError(f"--blocks: {exc}") from None


def _sizes(a, sweep: bool, host: bool = False) -> list[int]:
    if a.paper_sizes:
        if a.sizes is not None:
            raise UsageError("--sizes and --paper-sizes exclude each other")
        return list(E.PAPER_SIZES)
    default = (E.HOST_SWEEP_SIZES if sweep else E.HOST_SIZES) if host else (E.SWEEP_SIZES if sweep else None)
    text = a.sizes or (",".join(map(str, default)) if default else DEFAULT_SIZES)
    if not sweep:
        try:
            return rp.parse_sizes(text)
        except InvalidParameter as exc:
            raise UsageError(f"--sizes: {exc}") from None
    sizes = sorted({number("--sizes", v, int, minimum=rp.MIN_N, maximum=rp.MAX_N) for v in parse_list("--sizes", text)})
    return sizes


def run(a) -> int:
    check_output(a.csv, CSV_EXTS, "--csv")
    mode = "sweep" if a.sweep else "evolution"
    for flag, (dest, m) in MODE_ONLY.items():
        if getattr(a, dest) is not None and m != mode:
            raise UsageError(f"{flag} applies to the {m}" + (" (--sweep)" if m == "sweep" else " (without --sweep)"))
    be = bk.select(a.backend)
    sizes = _sizes(a, a.sweep, E.emulated(be))
    batch = number("--batch", a.batch, int, minimum=1)
    seed = number("--seed", a.seed, int, minimum=0)
    if a.sweep:
        blocks, repeats = _blocks(a.blocks), number("--repeats", a.repeats or E.SWEEP_REPEATS, int, minimum=1)
    else:
        instances = number("--instances", a.instances or 2, int, minimum=1)
        block = number("--block", a.block or 256, int, minimum=32, maximum=1024)
        if block % 32:
            raise UsageError(f"--block must be a multiple of 32 (got {block})")
    try:
        types = E.check_types(parse_list("--types", a.types))
        kernel_list = [a.kernel or "gpu-bfs-k7"] if a.sweep else (
            parse_list("--kernels", a.kernels) if a.kernels is not None else list(E.KERNELS))
        if a.sweep and kernel_list[0] not in E.KERNELS + ("gpu-bfs",):
            raise UsageError(f"--kernel: the sweep takes {', '.join(E.KERNELS + ('gpu-bfs',))} (got {kernel_list[0]})")
        kernels = E.check_kernels(kernel_list, be)
        E.check_host(types, sizes, kernels, be, batch, (block if not a.sweep else max(blocks)), seed)
    except InvalidParameter as exc:
        raise UsageError(str(exc)) from None
    for k in kernels:
        check_memory(max(sizes), k, be, 2)
    t0 = time.perf_counter()
    if a.sweep:
        total = len(types) * len(sizes) * len(blocks)
        sweep = E.run_block_sweep(types, sizes, blocks, kernels[0], repeats, batch, be, seed,
                                  occupancy_of=launch_occupancy if be.is_gpu else None)
        to_csv = E.BLOCK_SWEEP.to_csv
    else:
        if batch == 1 and max(sizes) >= 10000 and "alpha-ring" in types and not a.quiet:
            note("--batch 1 runs one launch per level per source: type alpha-ring at N ≥ 10 000 takes hours")
        total = len(types) * len(sizes) * instances * len(kernels)
        sweep = E.run_evolution(types, sizes, kernels, instances, be, batch, block, seed)
        to_csv = E.EVOLUTION.to_csv

    def report(r, done):
        print(f"[{done}/{total}] {row_line(r)}", file=sys.stderr, flush=True)

    rows = collect_rows(sweep, total, "points", a.csv, to_csv, None if a.quiet else report)
    if rows is None:
        return 130
    seconds = time.perf_counter() - t0
    written: dict = {}
    failed = write_outputs(written, [("csv", lambda: (to_csv(rows, a.csv), a.csv)[1])] if a.csv else [])
    out = (sweep_summary(rows) if a.sweep else evolution_summary(rows))
    out.update(backend=be.name, emulated=E.emulated(be), types=types, sizes=sizes, batch=batch, seed=seed,
               seconds=seconds, **written)
    if a.json:
        print_result(out, True)
    else:
        where = " (CUDA source run on the CPU)" if E.emulated(be) else ""
        print(f"paper 000 {'block-size sweep' if a.sweep else 'kernel evolution'}: {len(rows)} points, "
              f"backend {be.name}{where}, {seconds:.1f} s")
        for line in (sweep_lines(rows) if a.sweep else evolution_lines(rows)):
            print(line)
        if "csv" in written:
            print(f"rows written to {written['csv']}")
    raise_failed(failed)
    return 0 if out.get("all_agree", True) else 1


def row_line(r) -> str:
    """One progress line of an EvoRow or a BlockRow."""
    if hasattr(r, "instance"):
        same = "" if r.agrees else "  DIFFERENT hop counts"
        return (f"{r.type} N = {r.n} instance {r.instance + 1} {r.kernel}: {r.seconds * 1e3:.4g} ms, "
                f"{r.launches} launches, mean path {r.mean_path_length:.4f}{same}")
    return (f"{r.type} N = {r.n} {r.kernel} block {r.block}: {r.seconds * 1e3:.4g} ± {r.std * 1e3:.2g} ms, "
            + _occupancy(r))


def _occupancy(r) -> str:
    if r.occupancy != r.occupancy:                  # NaN: the host device has no occupancy
        return "no occupancy (CUDA source run on the CPU)"
    return f"occupancy {100 * r.occupancy:.0f} % ({r.registers} registers, limited by {r.limiter})"


def evolution_summary(rows) -> dict:
    """The JSON of the evolution: rows (with Eq. 3 normalised times), slopes beside the paper's
    range, per-kernel changes at the largest N beside the paper's direction, agreement."""
    norm = E.normalised(rows)
    changes = E.percent_changes(rows)
    return {"mode": "evolution",
            "rows": [dict(r.to_dict(), normalised_seconds=t) for r, t in zip(rows, norm)],
            "slopes": {f"{t}/{k}": s for (t, k), s in E.fit_slopes(rows).items()},
            "paper_slopes": {t: list(v) for t, v in E.PAPER_SLOPES.items()},
            "changes": {f"{t}/{k}": {"vs_parent_pct": p, "vs_k1_pct": q, "ours": E.effect_word(p),
                                     "paper": E.PAPER_EFFECT.get(k, {}).get(t)}
                        for (t, k), (p, q) in changes.items()},
            "all_agree": all(r.agrees for r in rows)}


def evolution_lines(rows) -> list[str]:
    slopes, changes, mt = E.fit_slopes(rows), E.percent_changes(rows), E.mean_times(rows)
    kernels = list(dict.fromkeys(r.kernel for r in rows))
    lines = []
    for t in dict.fromkeys(r.type for r in rows):
        lo, hi = E.PAPER_SLOPES[t]
        top = max(r.n for r in rows if r.type == t)
        lines.append(f"{E.TYPE_LABELS[t]} (paper's slopes {lo}–{hi}; changes at N = {top}):")
        for k in kernels:
            s = slopes.get((t, k))
            p, q = changes.get((t, k), (float("nan"), float("nan")))
            ch = "" if p != p else f", {p:+.1f} % vs parent ({E.effect_word(p)}; paper: " \
                                   f"{E.PAPER_EFFECT.get(k, {}).get(t, '—')})"
            k1 = "" if q != q else f", {q:+.1f} % vs K1"
            lines.append(f"    {k:<11} slope {'—' if s is None else f'{s:.3f}'}, "
                         f"{mt.get((t, k, top), float('nan')) * 1e3:.4g} ms (Eq. 3){ch}{k1}")
    bad = [r for r in rows if not r.agrees]
    lines.append("all kernels give the same hop counts" if not bad else
                 "DIFFERENT hop counts: " + ", ".join(f"{r.kernel} {r.type} N = {r.n}" for r in bad[:10]))
    return lines


def sweep_summary(rows) -> dict:
    return {"mode": "sweep", "rows": [r.to_dict() for r in rows],
            "best_blocks": {f"{t}/{n}": b for (t, n), b in E.best_blocks(rows).items()}}


def sweep_lines(rows) -> list[str]:
    lines = []
    best = E.best_blocks(rows)
    for (t, n), b in best.items():
        mine = [r for r in rows if r.type == t and r.n == n]
        lines.append(f"{E.TYPE_LABELS[t]}, N = {n}: fastest block {b}")
        for r in mine:
            lines.append(f"    block {r.block:>4}: {r.seconds * 1e3:.4g} ± {r.std * 1e3:.2g} ms, {_occupancy(r)}"
                         + ("  <- fastest" if r.block == b else ""))
    return lines
