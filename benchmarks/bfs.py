"""BFS and SSSP families (paper 000 §4.3, paper 004 ch. 3) side by side, one run on a CUDA machine.

Sections (``--sections a,b,…``; all by default):

* ``apsp30k``   unweighted APSP at N = 30 000 (BA m = 5, α-model set 2): every BFS kernel in its
                multi-source form, compact kernel 7, MS-BFS, task-parallel SSSP vs scipy and
                networkx (these two on a subset of sources, scaled) and the CPU MS-BFS peer;
* ``evolution`` paper 000 Figs. 10–13, the paper's form (one source per BFS) at small N;
* ``multi``     the same evolution with many sources per launch, N up to 30 000;
* ``sweep``     Fig. 15: kernel 7 over blocks 32 … 512 with the theoretical occupancy;
* ``table``     paper 004 Table 3.1 at |V| = 4677 with every method, ring and complete included;
* ``scaling``   Figs. 3.10 / 3.12 / 3.13 (random digraphs) and the memory limits;
* ``overhead``  Fig. 3.14, path recording;
* ``host``      issue 33: every kernel's CUDA source run on the CPU (host device) at a lecture size —
                BFS K1–K7 on 2 000 vertices, MS-BFS, the SSSP family, the clustering kernels — so a
                lecturer knows what runs live without a GPU (runs on any machine: ``--sections host``);
* ``cpupeer``   issue 38: the CPU peers alone, bit-parallel MS-BFS (``benchmarks/peers``) vs scipy at
                N = 30 000 (any machine: ``--sections cpupeer``).

GPU times are ``kernel_seconds``: on the device, synchronised, without the final copy of the
matrix to the host.  Rows marked ~ were timed on the first k sources and scaled by |V| / k.
Usage: ``python benchmarks/bfs.py [--quick] [--sections …]`` (markdown and CSVs also to $OUT).
Host times are wall clock (``perf_counter``) of the whole call, compile excluded (one warm-up).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels.backend import select  # noqa: E402
from kernels.graphs.experiments import bfs_evolution as E  # noqa: E402
from kernels.graphs.experiments import reproduce as rp  # noqa: E402
from kernels.graphs.experiments import sssp_table as T  # noqa: E402
from kernels.graphs.apsp import apsp  # noqa: E402
from kernels.graphs.data.stats import summary  # noqa: E402
from kernels.gpu import launch_occupancy  # noqa: E402

LINES: list[str] = []
SECTIONS = ("apsp30k", "evolution", "multi", "sweep", "table", "scaling", "overhead", "host", "cpupeer")
CPU_SECTIONS = {"host", "cpupeer"}          #: sections that run on any machine


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


def csv_out(name, write, rows):
    d = os.environ.get("OUT")
    if d and rows:
        os.makedirs(d, exist_ok=True)
        write(rows, os.path.join(d, name))


def section_apsp30k(be, quick):
    n = 6000 if quick else 30000
    out(f"## Unweighted APSP at N = {n:,} (target: best kernel ≤ 0.05 s on the device)\n")
    graphs = {"BA m = 5": lambda: rp.G.barabasi_albert(n, 5, 1), "α-model set 2": lambda: rp.graph_type("alpha")(n, 1)}
    methods = [("gpu-msbfs", {}, 3), ("gpu-msbfs", dict(batch=2048), 3), ("gpu-msbfs", dict(batch=8192), 3),
               ("gpu-bfs", {}, 3)] + [(k, dict(batch=4096), 1) for k in E.KERNELS] + [("sssp", {}, 1)]
    for label, make in graphs.items():
        t0 = time.perf_counter()
        g = make()
        csr = g.csr()
        out(f"### {label}: {g.describe()} (generated in {time.perf_counter() - t0:.1f} s)\n")
        out("| method | options | device s | incl. copy s | launches | equal |")
        out("|---|---|---|---|---|---|")
        ref = None
        E.warm_up(E.KERNELS + E.EXTRA, be)
        apsp(rp.G.ring_lattice(64, 4), "sssp", backend=be)                 # compile before timing
        for m, kw, reps in methods:
            best = None
            for _ in range(reps):
                r = apsp(csr, m, backend=be, **kw)
                if best is None or r.kernel_seconds < best.kernel_seconds:
                    best = r
            if ref is None:
                ref = best.dist
                s = summary(ref)
            same = bool(np.array_equal(best.dist, ref))
            out(f"| {m} | {kw or ''} | {best.kernel_seconds:.4f} | {best.seconds:.3f} | {best.launches} | {same} |")
            del r, best
        k = 300 if quick else 600
        src = np.arange(k)
        from scipy.sparse.csgraph import shortest_path
        t0 = time.perf_counter()
        d = shortest_path(csr.to_scipy(weighted=False), method="D", unweighted=True, indices=src)
        t_sp = (time.perf_counter() - t0) * n / k
        same = np.array_equal(d, np.where(ref[src] == np.iinfo(ref.dtype).max, np.inf, ref[src]))
        out(f"| scipy shortest_path (BFS, CPU) | ~ from {k} sources | {t_sp:.1f} | | | {same} |")
        t_ms, same_ms = msbfs_row(csr, ref)
        out(f"| MS-BFS, bit-parallel (Then et al. VLDB 2015), C++/OpenMP, {os.cpu_count()} cores (CPU) | "
            f"all {n:,} sources | {t_ms:.2f} | | | {same_ms} |")
        import networkx as nx
        from kernels.graphs.data.graph import to_networkx
        H = to_networkx(g)
        kn = 30
        t0 = time.perf_counter()
        for s_ in range(kn):
            nx.single_source_shortest_path_length(H, s_)
        out(f"| networkx single_source_shortest_path_length | ~ from {kn} sources | "
            f"{(time.perf_counter() - t0) * n / kn:.0f} | | | |")
        out(f"\nmean path {s['mean_path_length']:.4f}, diameter {s['diameter']}.\n")
        del ref, H


def msbfs_row(csr, ref):
    """(seconds, equal) of the CPU MS-BFS peer (benchmarks/peers) over all sources of ``csr``, best of
    two after a compile-and-warm call on a 64-vertex prefix; ``equal`` against ``ref`` (hop counts,
    the dtype's all-ones value unreachable), the sentinel compared too."""
    from benchmarks.peers.msbfs_cpu import msbfs_hops
    msbfs_hops(csr.indptr, csr.indices, csr.n, sources=np.arange(min(64, csr.n)), directed=csr.directed)
    best, hops = None, None
    for _ in range(2):
        t0 = time.perf_counter()
        hops = msbfs_hops(csr.indptr, csr.indices, csr.n, directed=csr.directed)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    big = hops == np.iinfo(hops.dtype).max
    same = bool(np.array_equal(big, ref == np.iinfo(ref.dtype).max)
                and np.array_equal(hops[~big].astype(np.int64), ref[~big].astype(np.int64)))
    return best, same


def section_cpupeer(_be, quick):
    """Issue 38: the CPU peers alone (any machine): MS-BFS over all sources vs scipy's BFS (timed on
    k sources, scaled by |V| / k), equal on those k sources."""
    from scipy.sparse.csgraph import shortest_path
    from benchmarks.peers.msbfs_cpu import hops_like_scipy, msbfs_hops
    n = 6000 if quick else 30000
    out(f"## CPU APSP peers at N = {n:,} ({os.cpu_count()} cores)\n")
    out("| graph | MS-BFS all sources s | scipy shortest_path s (~ from k) | k | speed-up | equal on k |")
    out("|---|---:|---:|---:|---:|---|")
    for label, make in {"BA m = 5": lambda: rp.G.barabasi_albert(n, 5, 1),
                        "α-model set 2": lambda: rp.graph_type("alpha")(n, 1)}.items():
        csr = make().csr()
        msbfs_hops(csr.indptr, csr.indices, csr.n, sources=np.arange(64))
        t0 = time.perf_counter()
        hops = msbfs_hops(csr.indptr, csr.indices, csr.n)
        t_ms = time.perf_counter() - t0
        k = 200 if quick else 400
        t0 = time.perf_counter()
        d = shortest_path(csr.to_scipy(weighted=False), method="D", unweighted=True, indices=np.arange(k))
        t_sp = (time.perf_counter() - t0) * n / k
        same = np.array_equal(hops_like_scipy(hops[:k]), d)
        out(f"| {label}, {csr.arcs // 2:,} edges | {t_ms:.2f} | ~{t_sp:.1f} | {k} | {t_sp / t_ms:.0f}× | {same} |")
        del hops
    out("")


def evolution_table(rows, title):
    fits, pct = E.fit_slopes(rows), E.percent_changes(rows)
    kernels = [k for k in E.KERNELS + E.EXTRA if any(r.kernel == k for r in rows)]
    types = [t for t in E.TYPES if any(r.type == t for r in rows)]
    out(f"### {title}\n")
    out("| type | N | " + " | ".join(kernels) + " |")
    out("|---|---|" + "---|" * len(kernels))
    mt = E.mean_times(rows)
    for t in types:
        for n in sorted({r.n for r in rows if r.type == t}):
            out(f"| {t} | {n} | " + " | ".join(f"{mt.get((t, k, n), float('nan')):.4g}" for k in kernels) + " |")
    out("\nFitted slope (paper range) and, at the largest N, % change from the parent kernel "
        "(paper's direction) / from kernel 1:\n")
    out("| type | " + " | ".join(kernels) + " |")
    out("|---|" + "---|" * len(kernels))
    for t in types:
        lo, hi = E.PAPER_SLOPES[t]
        out(f"| {t} slope ({lo}–{hi}) | " + " | ".join(f"{fits.get((t, k), float('nan')):.2f}" for k in kernels) + " |")
        cells = []
        for k in kernels:
            a, b = pct.get((t, k), (float("nan"), float("nan")))
            paper = E.PAPER_EFFECT.get(k, {}).get(t, "")
            cells.append(f"{a:+.0f}% ({paper}) / {b:+.0f}%" if np.isfinite(a) else (f"— / {b:+.0f}%" if np.isfinite(b) else "—"))
        out(f"| {t} change | " + " | ".join(cells) + " |")
    bad = [r for r in rows if not r.agrees]
    out(f"\nAll kernels equal the first kernel's hop counts: **{not bad}**.\n")


def section_evolution(be, quick):
    out("## Paper 000 kernel evolution, the paper's form (one source per BFS, block 256)\n")
    sizes = {"alpha-ring": (250, 500, 750), "alpha": (1000, 2000, 3000), "ba": (1000, 2000, 3000)}
    rows = []
    for t, ns in sizes.items():                    # two instances at the first two sizes, one at the third
        rows += list(E.run_evolution([t], ns[:2], E.KERNELS + ("gpu-bfs",), instances=2, backend=be, batch=1))
        if not quick:
            rows += list(E.run_evolution([t], ns[2:], E.KERNELS + ("gpu-bfs",), instances=1, backend=be, batch=1))
    evolution_table(rows, "Eq. 3-normalised seconds (mean of 2 instances; 1 at the largest N)")
    csv_out("bfs_evolution_paper.csv", E.EVOLUTION.to_csv, rows)


def section_multi(be, quick):
    out("## Kernel evolution, multi-source form (4096 sources per launch), N up to 30 000\n")
    sizes = {"alpha-ring": (2000, 4000, 8000), "alpha": (5000, 10000, 20000, 30000),
             "ba": (5000, 10000, 20000, 30000)}
    if quick:
        sizes = {t: v[:2] for t, v in sizes.items()}
    rows = []
    for t, ns in sizes.items():
        rows += list(E.run_evolution([t], ns, E.KERNELS + E.EXTRA, instances=1, backend=be, batch=4096))
    evolution_table(rows, "seconds (one instance per N)")
    csv_out("bfs_evolution_multi.csv", E.EVOLUTION.to_csv, rows)


def section_sweep(be, quick):
    out("## Fig. 15: kernel 7 block-size sweep (all sources per launch; mean of 3 runs) with theoretical occupancy\n")
    rows = []
    for t, n in (("alpha-ring", 2000), ("alpha", 10000), ("ba", 10000)):
        rows += list(E.run_block_sweep([t], [n // 4 if quick else n], E.SWEEP_BLOCKS, "gpu-bfs-k7",
                                       repeats=3, batch=n, backend=be, occupancy_of=launch_occupancy))
    types = [t for t in E.TYPES if any(r.type == t for r in rows)]
    out("| block | " + " | ".join(f"{t} N={next(r.n for r in rows if r.type == t)} s" for t in types)
        + " | registers | occupancy | limiter |")
    out("|---|" + "---|" * (len(types) + 3))
    for b in E.SWEEP_BLOCKS:
        rs = {r.type: r for r in rows if r.block == b}
        any_r = next(iter(rs.values()))
        out(f"| {b} | " + " | ".join(f"{rs[t].seconds:.4f} ± {rs[t].std:.4f}" for t in types)
            + f" | {any_r.registers} | {100 * any_r.occupancy:.0f}% | {any_r.limiter} |")
    out(f"\nFastest block per type: {E.best_blocks(rows)}\n")
    csv_out("bfs_block_sweep.csv", E.BLOCK_SWEEP.to_csv, rows)


def section_table(be, quick):
    out("## Paper 004 Table 3.1 on this GPU (|V| = 4677; seconds; ~ = timed on k sources, scaled by |V|/k)\n")
    lim = {("sssp-harish", "ring"): 16, ("sssp-harish", "complete"): 16, ("sssp", "ring"): 64,
           ("sssp", "complete"): 64, ("sssp-staged", "ring"): 64, ("sssp-staged", "complete"): 64,
           ("cpu-dijkstra", "complete"): 256}
    if quick:
        lim.update({("sssp-harish", "random"): 256, ("sssp-harish", "powerlaw"): 256})
    rows = list(T.run_table(T.TOPOLOGIES, T.TABLE_METHODS, be, max_sources=lim))
    out("| method | " + " | ".join(T.TOPOLOGIES) + " |")
    out("|---|" + "---|" * len(T.TOPOLOGIES))
    for m in T.TABLE_METHODS:
        cells = []
        for t in T.TOPOLOGIES:
            r = next(r for r in rows if r.method == m and r.topology == t)
            cells.append(f"{'~' if r.scaled else ''}{r.seconds:.4g} (paper {r.paper_seconds:g})"
                         + ("" if r.agrees else " **differs**"))
        out(f"| {T.LABELS[m]} | " + " | ".join(cells) + " |")
    out("\nSpeed-up of the staged method over Harish's: "
        + ", ".join(f"{t} {v:.1f}×" for (t, m), v in T.speedups(rows).items() if m == "sssp-staged"))
    out("; launches: " + ", ".join(f"{r.method}/{r.topology} {r.launches}" for r in rows if r.method != "cpu-dijkstra"))
    out("")
    csv_out("sssp_table31.csv", T.to_csv, rows)


def section_scaling(be, quick):
    out("## Paper 004 Figs. 3.10 / 3.12 / 3.13 (random digraphs; seconds; ~ = scaled from 1024 sources)\n")
    specs = {"3.10": (1024, 4096, 16384, 65536, 262144), "3.12": (8192, 16384, 32768, 65536),
             "3.13": (16, 256, 4096, 65536)}
    if quick:
        specs = {"3.10": (1024, 4096, 16384), "3.12": (8192, 32768), "3.13": (16, 4096)}
    allrows = []
    for fig, values in specs.items():
        rows = list(T.run_scaling(fig, values, T.TABLE_METHODS, be, max_sources=1024))
        allrows += rows
        out(f"### Fig. {fig}: {T.FIGURES[fig]}\n")
        out("| |V| | |E| | w_max | " + " | ".join(T.TABLE_METHODS) + " |")
        out("|---|---|---|" + "---|" * len(T.TABLE_METHODS))
        for key in sorted({(r.n, r.arcs, r.w_max) for r in rows}):
            rs = {r.method: r for r in rows if (r.n, r.arcs, r.w_max) == key}
            out(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(
                f"{'~' if rs[m].scaled else ''}{rs[m].seconds:.4g}" + ("" if rs[m].agrees else " **differs**")
                for m in T.TABLE_METHODS) + " |")
        out("")
    free = be.free_memory()
    out("Largest |V| with |E| = 4|V| by paper 004's element counts (4-byte elements): "
        + ", ".join(f"{m}: {T.largest_vertices(m, T.PAPER_GPU_BYTES):,} on 512 MB / "
                    f"{T.largest_vertices(m, free):,} on this GPU's {free / 2**30:.0f} GiB free"
                    for m in ("sssp-harish", "sssp-staged", "sssp-path")) + ".\n")
    csv_out("sssp_scaling.csv", T.to_csv, allrows)


def section_overhead(be, quick):
    out("## Paper 004 Fig. 3.14: path-recording overhead (random digraphs, |E| = 4|V|; 1024 sources)\n")
    rows = list(T.run_path_overhead((1024, 4096, 16384) if quick else (1024, 4096, 16384, 65536), be,
                                    max_sources=1024))
    out("| |V| | cost s | record s | overhead | paths valid |")
    out("|---|---|---|---|---|")
    for r in rows:
        out(f"| {r.n} | {r.cost_seconds:.4f} | {r.record_seconds:.4f} | {100 * r.overhead:.1f} % | "
            f"{r.paths_valid}/{r.paths_checked} |")
    out(f"\n(paper 004: {100 * T.PAPER_PATH_OVERHEAD[0]:.1f}–{100 * T.PAPER_PATH_OVERHEAD[1]:.1f} %)\n")
    csv_out("sssp_path_overhead.csv", T.to_csv, rows)


def _cpu_seconds() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)          # every thread of the process (the host pool too)
    return r.ru_utime + r.ru_stime


def host_row(label, fn):
    """(wall seconds, process CPU seconds, result) of one call of ``fn`` (the caller made one untimed
    call on a tiny input first: compile); the guard's refusal is reported, not raised."""
    from kernels.errors import InvalidParameter
    t0, c0 = time.perf_counter(), _cpu_seconds()
    try:
        res = fn()
    except InvalidParameter as exc:
        out(f"| {label} | refused: {str(exc).split(';')[-1].strip()} | |")
        return None
    return time.perf_counter() - t0, _cpu_seconds() - c0, res


def section_host(_be, quick):
    """Issue 33: host-path (CUDA source on the CPU) times at a lecture size."""
    from kernels.backend import cpu_backend
    from kernels.graphs.data import digraphs as D
    from kernels.graphs.apsp import METHODS
    from kernels.graphs.algorithms.clustering import cpu_counts, kernel_counts
    cpu = cpu_backend()
    n = 500 if quick else 2000
    g = rp.G.barabasi_albert(n, 5, 1)
    tiny = rp.G.barabasi_albert(40, 2, 1)
    ref = apsp(g, "cpu").dist
    out(f"## Host device: CUDA source run on the CPU ({os.cpu_count()} cores), lecture sizes\n")
    out(f"BFS all pairs on BA N = {n:,} (m = 5, {g.m:,} edges); wall and process CPU seconds (the wall time "
        "of an otherwise idle machine is at most the CPU time); model = the host guard's estimate (of CPU s).\n")
    out("| kernel | wall s | CPU s | launches | exact | model s |")
    out("|---|---:|---:|---:|---|---:|")
    for k, kw in [(k, {}) for k in E.KERNELS] + [(k, dict(batch=64)) for k in ("gpu-bfs-k1", "gpu-bfs-k7")] + \
                 [("gpu-bfs", {}), ("gpu-msbfs", {})]:
        apsp(tiny, k, backend=cpu)                                  # compile, first call
        got = host_row(f"{k} {kw or ''}", lambda: apsp(g, k, backend=cpu, **kw))
        if got:
            sec, cpu_s, r = got
            model = METHODS[k](**kw).host_seconds(g.csr())
            out(f"| {k} {kw or ''} | {sec:.2f} | {cpu_s:.2f} | {r.launches:,} | {np.array_equal(r.dist, ref)} | "
                f"{model:.1f} |")
    nd = 300 if quick else 1000
    csr = D.random_digraph(nd, 4 * nd, nd, True, 1)
    dref = apsp(csr, "cpu", weighted=True).dist
    out(f"\nSSSP all pairs on a random digraph |V| = {nd:,}, |E| = {csr.arcs:,}, w_max = {nd} (paper 004 style).\n")
    out("| method | wall s | CPU s | launches | exact | model s |")
    out("|---|---:|---:|---:|---|---:|")
    for m in T.GPU_METHODS:
        apsp(D.random_digraph(40, 160, 40, True, 2), m, backend=cpu)
        got = host_row(m, lambda: apsp(csr, m, backend=cpu))
        if got:
            sec, cpu_s, r = got
            out(f"| {m} | {sec:.2f} | {cpu_s:.2f} | {r.launches:,} | {np.array_equal(r.dist, dref)} | "
                f"{METHODS[m]().host_seconds(csr):.1f} |")
    out("\nClustering per-arc kernels (paper 001 kernels 1 and 2), one launch.\n")
    out("| graph | kernel | wall s | CPU s | exact |")
    out("|---|---|---:|---:|---|")
    for label, gg in (("WS V = 20 000, k = 50", rp.G.watts_strogatz(20000 // (4 if quick else 1), 50, 0.1, 1)),
                      ("BA V = 10 000, m = 25", rp.G.barabasi_albert(10000 // (4 if quick else 1), 25, 1))):
        c = gg.csr()
        want = cpu_counts(c)
        for v in ("arc", "sorted"):
            kernel_counts(tiny.csr(), cpu, v)
            got = host_row(f"{label} {v}", lambda: kernel_counts(c, cpu, v))
            if got:
                out(f"| {label} | {v} | {got[0]:.2f} | {got[1]:.2f} | {got[2] == want} |")
    out("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sections", default=",".join(SECTIONS))
    a = ap.parse_args()
    be = select("cpu") if set(a.sections.split(",")) <= CPU_SECTIONS else select("gpu")
    out(f"# BFS / SSSP families — {be.describe()}, {time.strftime('%Y-%m-%d')}\n")
    for name in a.sections.split(","):
        t0 = time.perf_counter()
        globals()[f"section_{name}"](be, a.quick)
        print(f"[{name}: {time.perf_counter() - t0:.1f} s]", flush=True)
        save_markdown("bfs_bench.md", "\n".join(LINES))


if __name__ == "__main__":
    main()
