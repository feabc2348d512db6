"""Paper 000 Table II and Fig. 14 re-measured at the paper's own sizes (run on a CUDA machine).

For each of the three graph types (``kernels.graphs.experiments.reproduce.graph_type``: α-model with ring
substrate, α-model without, Barabási–Albert k = 100) and N = 1k, 5k, 10k … 30k, ``--instances``
seeded instances are generated (in a process pool: the α-model generator is CPU code) and their
exact all-pairs shortest paths computed on the GPU with paper 000's kernel 7 (all sources per
launch).  Printed per (type, N): the paper's CPU Floyd and GTX 280 kernel-7 seconds, our CPU
Floyd (scipy, measured at 1k, N³-extrapolated above, marked ~), our kernel-7 seconds (mean over
instances; Eq. 3 normalisation keeps the mean), mean shortest path (mean ± std over instances),
diameter and global clustering (GPU per-arc kernel).  Then the fitted exponents of mean path vs N
next to Fig. 14's.  Disconnected draws are redrawn and counted (reproduce.draw, seed + 100 000 per
try; the paper checks type 2's connectivity).

Usage:  python benchmarks/table2.py [--instances 3] [--sizes 1000,5000,…] [--workers 12]
(markdown also to $OUT/table2_bench.md)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

#: paper 000 Table II (seconds): CPU Floyd and GPU kernel 7 (GeForce GTX 280) per type and N
PAPER_SIZES = (1000, 5000, 10000, 15000, 20000, 25000, 30000)
PAPER_TABLE2 = {
    "alpha-ring": ((5, 585, 4602, 15467, 36546, 71462, 123624), (2, 39, 183, 419, 825, 1470, 1938)),
    "alpha": ((10, 1175, 9166, 30243, 70237, 134264, 227808), (1, 4, 11, 20, 33, 51, 73)),
    "ba": ((12, 1506, 12123, 40798, 96695, 188349, 325355), (3, 32, 95, 184, 292, 417, 578)),
}
LINES: list[str] = []


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


def _make(job):
    """Worker: (type, n, seed) -> (type, n, seed, edges) — generation only, no GPU in the pool."""
    from kernels.graphs.experiments import reproduce as rp
    t, n, seed = job
    g = rp.graph_type(t)(n, seed)
    return t, n, seed, g.edges


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--sizes", default=",".join(map(str, PAPER_SIZES)))
    ap.add_argument("--types", default="alpha-ring,alpha,ba")
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--method", default="gpu-bfs", help="APSP method (cpu for a dry run without a GPU)")
    ap.add_argument("--quick", action="store_true", help="a dry run on the CPU: N = 200, 400, one instance")
    a = ap.parse_args()
    if a.quick:
        a.instances, a.sizes, a.types, a.workers, a.method = 1, "200,400", "alpha,ba", 1, "cpu"
    sizes = [int(s) for s in a.sizes.split(",")]
    types = a.types.split(",")

    from scipy.sparse.csgraph import floyd_warshall

    from kernels.backend import select
    from kernels.graphs.experiments import reproduce as rp
    from kernels.graphs.apsp import apsp
    from kernels.graphs.algorithms.clustering import global_clustering
    from kernels.graphs.data.graph import Graph
    from kernels.graphs.data.stats import loglog_slope, summary

    be = select("gpu" if a.method != "cpu" else "cpu")
    out(f"# Paper 000 Table II / Fig. 14 at the paper's sizes — {be.describe()}")
    out()
    out(f"{a.instances} instances per N; kernel 7 seconds are device time (result in GPU memory); "
        "paper columns are the GTX 280 / CPU of 2009.")
    out()
    out("| type | N | paper CPU Floyd | paper GPU k7 | our CPU Floyd | our GPU k7 | mean path | diameter | C | redrawn |")
    out("|---|---|---|---|---|---|---|---|---|---|")
    from kernels.graphs.data import generators as G
    for warm in (G.ring_lattice(600, 2), G.barabasi_albert(600, 5, 1)):    # compile both dtypes first
        apsp(warm, a.method, backend=be)
    t_start = time.perf_counter()
    jobs = [(t, n, 1000 * i + 7) for t in types for n in sizes for i in range(a.instances)]
    fits, clus = {}, {}
    with ProcessPoolExecutor(a.workers) as pool:
        futs = {j: pool.submit(_make, j) for j in jobs}
        for t in types:
            means = []
            cpu_ref = None
            for n in sizes:
                Ls, ks, ds, cs, redrawn = [], [], [], [], 0
                for i in range(a.instances):
                    seed = 1000 * i + 7
                    _, _, _, edges = futs[(t, n, seed)].result()
                    g, _, tries, _ = rp.draw(rp.graph_type(t), n, seed, first=Graph(n, edges), step=100000)
                    redrawn += tries
                    if cpu_ref is None:
                        A = g.csr().to_scipy(weighted=False)
                        t0 = time.perf_counter()
                        floyd_warshall(A, directed=False, unweighted=True)
                        cpu_ref = (n, time.perf_counter() - t0)
                    r = apsp(g, a.method, backend=be)
                    s = summary(r.dist)
                    del r.dist
                    ks.append(r.kernel_seconds or r.seconds)
                    Ls.append(s["mean_path_length"])
                    ds.append(s["diameter"])
                    cs.append(global_clustering(g, backend=be))
                means.append(float(np.mean(Ls)))
                n0, tc0 = cpu_ref
                tc = tc0 * (n / n0) ** 3
                tcs = f"{tc:.2f}" if n == n0 else f"~{tc:.3g}"
                pc, pg_ = ("—", "—")
                if t in PAPER_TABLE2 and n in PAPER_SIZES:
                    j = PAPER_SIZES.index(n)
                    pc, pg_ = str(PAPER_TABLE2[t][0][j]), str(PAPER_TABLE2[t][1][j])
                out(f"| {rp.TYPE_LABELS[t]} | {n} | {pc} | {pg_} | {tcs} | {np.mean(ks):.3f} | "
                    f"{np.mean(Ls):.3f} ± {np.std(Ls):.3f} | {max(ds)} | {np.mean(cs):.3f} | {redrawn} |")
            fits[t] = loglog_slope(sizes, means)
            clus[t] = float(np.mean(cs))
    out()
    out("Fitted exponents of mean path length vs N (paper 000 Fig. 14): " +
        "; ".join(f"{rp.TYPE_LABELS[t]} **{fits[t]:.3f}** (paper {rp.PAPER_EXPONENTS[t]})" for t in types))
    out()
    out(f"Total {time.perf_counter() - t_start:.0f} s.")
    save_markdown("table2_bench.md", "\n".join(LINES))


if __name__ == "__main__":
    main()
