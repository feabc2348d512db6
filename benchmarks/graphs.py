"""Graphs benchmark (run on a CUDA machine), side by side in one run.

1. Unweighted APSP, Barabási–Albert N = 4000, m = 5: ours (paper 000 kernel 7 with all sources
   per launch; kernel 1; paper 004 task-parallel SSSP) vs scipy.sparse.csgraph, the CPU MS-BFS peer
   (benchmarks/peers, bit-parallel, Then et al. VLDB 2015) and networkx.
2. Dense Floyd–Warshall N = 4096 (random float weights): blocked 3-phase (tiles 32, 64, model's
   pick) vs the naive one-launch-per-k kernel (paper 002).
3. Clustering coefficient, Watts–Strogatz N = 20 000, k = 10: per-arc kernel, degree-sorted
   kernel vs our CPU (sparse) vs networkx.transitivity.
4. APSP at N = 30 000 (paper 000's largest): BA m = 5 and α-model set 2.
5. Paper 000 Table II style: CPU Floyd (scipy floyd_warshall, measured at 1k–2k, N³-extrapolated
   above) vs GPU kernel 7 for the three graph types; mean path length vs N with fitted exponents.
6. Paper 001 clustering levels: WS k = 50, p = 0.1 and BA k = 50.

Usage:  python benchmarks/graphs.py [--quick]      (markdown also to $OUT/graphs_bench.md)
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown, timed  # noqa: E402

import numpy as np  # noqa: E402

from kernels.backend import select  # noqa: E402
from kernels.graphs.data import generators as G  # noqa: E402
from kernels.graphs.apsp import apsp  # noqa: E402
from kernels.graphs.apsp.bfs import BFSK7, apsp_bfs_k1  # noqa: E402
from kernels.graphs.apsp.fw import fw_blocked_device, fw_naive_device, tile_by_model  # noqa: E402
from kernels.graphs.algorithms.clustering import GPUClustering, global_clustering  # noqa: E402
from kernels.graphs.data.stats import loglog_slope, summary  # noqa: E402

LINES: list[str] = []


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


def best_of(fn, reps=3, sync=None):
    return min(timed(fn, sync) for _ in range(reps))


def types(k3=100):
    """Paper 000's three families, from the runner the GUI's Reproduce tab uses."""
    from kernels.graphs.experiments import reproduce as rp
    return {rp.TYPE_LABELS[t]: rp.graph_type(t, k3) for t in rp.PAPER_EXPONENTS}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    be = select("gpu")
    sync = be.synchronize
    out(f"# Graphs benchmark — {be.describe()}")
    out()
    # ---------------------------------------------------------------- 1. APSP BA 4000
    g = G.barabasi_albert(4000, 5, 1)
    csr = g.csr()
    out(f"## 1. Unweighted APSP, {g.describe()} (target ≤ 0.05 s)")
    out()
    out("| method | seconds | note |")
    out("|---|---|---|")
    bfs = BFSK7(csr, be)
    buf = be.xp.empty((g.n, g.n), dtype=bfs.dtype)
    bfs.run_batch(0, g.n, buf)
    t_k7 = best_of(lambda: bfs.run_batch(0, g.n, buf), 5, sync)
    r7 = apsp(g, "gpu-bfs", backend=be)
    out(f"| ours: paper 000 kernel 7, all 4000 sources per launch ({bfs.dtype}) | {t_k7:.4f} | device result; "
        f"{r7.seconds:.4f} s incl. copy of the {r7.dist.nbytes >> 20} MiB matrix to the host |")
    rs = apsp(g, "sssp", backend=be)
    rs = apsp(g, "sssp", backend=be)
    out(f"| ours: paper 004 task-parallel SSSP (float32) | {rs.kernel_seconds:.4f} | {rs.seconds:.4f} s incl. copy |")
    r1 = apsp_bfs_k1(csr, be)
    out(f"| ours: paper 000 kernel 1 (one source per BFS, host frontier scan) | {r1.seconds:.3f} | {r1.launches} launches |")
    rc = apsp(g, "cpu")
    out(f"| scipy.sparse.csgraph (BFS, CPU) | {rc.seconds:.3f} | |")
    from benchmarks.peers.msbfs_cpu import msbfs_hops
    msbfs_hops(csr.indptr, csr.indices, g.n, sources=np.arange(64))           # compile, warm
    t_ms = best_of(lambda: msbfs_hops(csr.indptr, csr.indices, g.n), 3)
    hops = msbfs_hops(csr.indptr, csr.indices, g.n)
    big = hops == np.iinfo(hops.dtype).max
    same_ms = bool(np.array_equal(big, rc.dist == np.iinfo(rc.dist.dtype).max)
                   and np.array_equal(hops[~big].astype(np.int64), rc.dist[~big].astype(np.int64)))
    out(f"| MS-BFS bit-parallel (Then et al. VLDB 2015), C++/OpenMP, {os.cpu_count()} cores (CPU) | {t_ms:.3f} | "
        f"equals scipy: {same_ms} |")
    import networkx as nx
    H = nx.Graph(list(map(tuple, g.edges.tolist())))
    t0 = time.perf_counter()
    sub = 1000 if a.quick else g.n
    tot = 0
    for s, row in nx.all_pairs_shortest_path_length(H):
        tot += sum(row.values())
        if s + 1 >= sub:
            break
    t_nx = (time.perf_counter() - t0) * g.n / sub
    out(f"| networkx all_pairs_shortest_path_length | {t_nx:.2f} | {'extrapolated from 1000 sources' if sub < g.n else ''} |")
    same = np.array_equal(r7.dist, rc.dist) and np.array_equal(rs.dist, rc.dist) and np.array_equal(r1.dist, rc.dist)
    out(f"\nAll GPU results equal scipy exactly: **{same}**; mean path {summary(rc.dist)['mean_path_length']:.4f}, "
        f"speed-up kernel 7 vs scipy ×{rc.seconds / t_k7:.0f}, vs the MS-BFS CPU peer ×{t_ms / t_k7:.0f}, "
        f"vs networkx ×{t_nx / t_k7:.0f}.")
    out()
    buf = None                                         # free the device matrix
    # ---------------------------------------------------------------- 2. dense FW 4096
    n = 4096
    rng = np.random.default_rng(0)
    h = rng.uniform(1, 100, (n, n)).astype(np.float32)
    np.fill_diagonal(h, 0)
    cp = be.xp
    out(f"## 2. Dense Floyd–Warshall, N = {n}, float32 (target ≤ 0.05 s; naive torch k-loop 0.475 s)")
    out()
    out("| kernel | seconds |")
    out("|---|---|")
    results = {}
    for t in (32, 64):
        d = cp.asarray(h)
        fw_blocked_device(d, n, t)
        sync()
        times = []
        for _ in range(3):
            d = cp.asarray(h)
            sync()
            t0 = time.perf_counter()
            fw_blocked_device(d, n, t)
            sync()
            times.append(time.perf_counter() - t0)
        results[t] = d.get()
        out(f"| blocked 3-phase, tile {t} (paper 004) | {min(times):.4f} |")
    out(f"| (paper 004 model picks tile {tile_by_model(n, be)}) | |")
    d = cp.asarray(h)
    fw_naive_device(d, 256)
    d = cp.asarray(h)
    sync()
    t0 = time.perf_counter()
    fw_naive_device(d, n)
    sync()
    t_naive = time.perf_counter() - t0
    out(f"| naive one launch per k (paper 002) | {t_naive:.4f} |")
    nv = d.get()
    out(f"\nBlocked equals naive within float32 rounding: tile 32 {np.allclose(results[32], nv, rtol=1e-6)}, "
        f"tile 64 {np.allclose(results[64], nv, rtol=1e-6)} (max abs diff {float(np.abs(results[64] - nv).max()):.3g}).")
    out()
    del d
    # ---------------------------------------------------------------- 3. clustering WS 20000
    g = G.watts_strogatz(20000, 10, 0.1, 1)
    out(f"## 3. Clustering coefficient, {g.describe()} (target ≤ 5 ms; networkx 0.33 s)")
    out()
    out("| method | seconds | C |")
    out("|---|---|---|")
    for v in ("arc", "sorted"):
        gc = GPUClustering(g.csr(), be, v)
        c = gc.run()
        t = best_of(gc.run, 20, sync)
        out(f"| ours GPU, paper 001 {'kernel 1 (one thread per arc)' if v == 'arc' else 'kernel 2 (degree-sorted arcs)'} "
            f"| {t * 1e3:.3f} ms | {c:.6f} |")
    t0 = time.perf_counter()
    c = global_clustering(g)
    out(f"| ours CPU (sparse (A·A)∘A) | {time.perf_counter() - t0:.3f} | {c:.6f} |")
    H = nx.Graph(list(map(tuple, g.edges.tolist())))
    t0 = time.perf_counter()
    c = nx.transitivity(H)
    out(f"| networkx.transitivity | {time.perf_counter() - t0:.3f} | {c:.6f} |")
    gb = G.barabasi_albert(20000, 5, 1)
    for v in ("arc", "sorted"):
        gc = GPUClustering(gb.csr(), be, v)
        gc.run()
        t = best_of(gc.run, 20, sync)
        out(f"| (BA N = 20 000, m = 5) GPU {v} | {t * 1e3:.3f} ms | {gc.run():.6f} |")
    out()
    # ---------------------------------------------------------------- 4. N = 30000
    out("## 4. APSP at N = 30 000 (paper 000's largest)")
    out()
    out("| graph | dtype | seconds (device) | seconds (incl. host copy) | mean path | diameter |")
    out("|---|---|---|---|---|---|")
    for name, make in (("BA m = 5", lambda: G.barabasi_albert(30000, 5, 2)),
                       ("α-model set 2", lambda: G.watts_alpha(30000, seed=2, **G.ALPHA_SETS[2]))):
        g = make()
        r = apsp(g, "gpu-bfs", backend=be)
        s = summary(r.dist)
        out(f"| {name} ({g.m} edges) | {r.dist.dtype} | {r.kernel_seconds:.2f} | {r.seconds:.2f} | "
            f"{s['mean_path_length']:.4f} | {s['diameter']} |")
        del r
    out()
    # ---------------------------------------------------------------- 5. Table II + exponents
    sizes = [1000, 2000, 4000] if a.quick else [1000, 2000, 4000, 8000]
    out("## 5. Paper 000 Table II style (seconds; CPU Floyd = scipy floyd_warshall, measured at 1000, "
        "N³-extrapolated above, marked ~) and mean path length vs N")
    out()
    out("| type | N | CPU Floyd | GPU kernel 7 | speed-up | mean path | diameter |")
    out("|---|---|---|---|---|---|---|")
    from scipy.sparse.csgraph import floyd_warshall
    cpu_ref = {}
    slopes = {}
    for tname, make in types().items():
        Ls = []
        for n in sizes:
            g = make(n, 7)
            if n <= 1000:
                A = g.csr().to_scipy(weighted=False)
                t0 = time.perf_counter()
                floyd_warshall(A, directed=False, unweighted=True)
                tc = time.perf_counter() - t0
                cpu_ref[tname] = (n, tc)
                tcs = f"{tc:.2f}"
            else:
                n0, t0c = cpu_ref[tname]
                tc = t0c * (n / n0) ** 3
                tcs = f"~{tc:.0f}"
            r = apsp(g, "gpu-bfs", backend=be)
            s = summary(r.dist)
            Ls.append(s["mean_path_length"])
            out(f"| {tname} | {n} | {tcs} | {r.kernel_seconds:.3f} | {tc / r.kernel_seconds:.0f}× | "
                f"{s['mean_path_length']:.3f} | {s['diameter']} |")
            del r
        slopes[tname] = loglog_slope(sizes, Ls)
    out()
    out("Fitted exponents of mean path length vs N (paper 000 Fig. 14: 0.995, 0.223, 0.106): " +
        ", ".join(f"{k} **{v:.3f}**" for k, v in slopes.items()))
    out()
    # ---------------------------------------------------------------- 6. paper 001 levels
    out("## 6. Paper 001 clustering levels (GPU per-arc kernel)")
    out()
    for name, g in (("WS N = 20 000, k = 50, p = 0.1 (paper ≈ 0.53)", G.watts_strogatz(20000, 50, 0.1, 3)),
                    ("BA N = 20 000, k = 50 (paper ≈ 0.01)", G.barabasi_albert(20000, 25, 3))):
        gc = GPUClustering(g.csr(), be, "arc")
        c = gc.run()
        t = best_of(gc.run, 5, sync)
        out(f"- {name}: C = {c:.4f} in {t * 1e3:.2f} ms")
    save_markdown("graphs_bench.md", "\n".join(LINES))


if __name__ == "__main__":
    main()
