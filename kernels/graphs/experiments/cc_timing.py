"""Paper 001's clustering-coefficient timings (§5.7, Figs. 14–15), re-run.

The paper times its implementations of C = 3t/p (Alg. 12: t = 2 × triangles, p = Σ d(d − 1)) on
Watts–Strogatz graphs (k = 50, p = 0.1, V = 20 000 … 200 000, C ≈ 0.53) and Barabási–Albert graphs
(k ≈ 50, V = 10 000 … 100 000, C ≈ 0.01), every point the mean of 30 runs, and reports the log–log
slopes of time against V.  Our implementations, by the paper's names:

* ``cpu``          single core: sparse (A·A)∘A row sums in row blocks (paper: single-threaded C);
* ``cpu-threads``  the same row blocks taken by a thread pool (paper: pThreads / TBB, Alg. 13–17);
* ``gpu-arc``      one CUDA thread per arc, arcs in storage order (paper: GPU kernel 1);
* ``gpu-sorted``   one thread per arc, arcs sorted by their end vertex's degree (paper: kernel 2);
                   both run their CUDA source on the CPU without a GPU (the host device of
                   :mod:`kernels.gpu`; host times, sizes above about 30 s a run refused);
* ``multi-arc``    kernel 1 over ``gpus`` GPUs, graph replicated, arcs handed out in work blocks
                   (paper: 2 GPUs kernel 1; :mod:`..algorithms.clustering_multi`; virtual GPUs on the CPU);
* ``multi-sorted`` kernel 2 the same way (paper: 2 GPUs kernel 2);
* ``networkx``     ``networkx.transitivity``, the reference peer (slow: small sizes only).

Each method counts the same integers t and p, so every row carries them and the sweep checks that
all methods agree exactly on every graph.  Times cover the count only: the graph is generated and
laid out (CSR, device copies) before the clock starts, and each method but networkx runs once
untimed first (CUDA compilation; first-call costs: a cold first CPU count measured 4× slower).
``run_cc_sweep`` yields rows as they finish, for live plots.
"""
from __future__ import annotations

# Imports inside functions: networkx (reference triangle counts), where used; slow, and `--help` loads this.
import os
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from ...errors import InvalidParameter
from ...experiments import Claim, Experiment
from ..data import generators as G
from ..algorithms.clustering import GPUClustering, cpu_counts
from ..algorithms.clustering_multi import MultiGPUClustering
from ..data.stats import loglog_slope
from ...devices import gpu_count, MAX_GPUS
from ..data.graph import to_networkx
from ..algorithms.clustering import HOST_STEP_S, host_work
from ..cuda import HOST_COSTS, HOST_LIMIT_S

FAMILIES = {"ws": "Watts–Strogatz k = 50, p = 0.1", "ba": "Barabási–Albert k ≈ 50 (m = 25)"}
#: paper 001 §5.7's size ranges (the spacing inside them is ours: ten even steps)
PAPER_SIZES = {"ws": tuple(range(20_000, 200_001, 20_000)), "ba": tuple(range(10_000, 100_001, 10_000))}
#: sizes for a quick run on a CPU-only machine (minutes on a laptop)
QUICK_SIZES = {"ws": (2000, 4000, 8000, 16000), "ba": (2000, 4000, 8000)}
#: paper 001's clustering levels
PAPER_LEVELS = {"ws": 0.53, "ba": 0.01}
#: paper 001 Figs. 14 (WS) and 15 (BA): log–log slopes of time vs V, by the paper's implementation
PAPER_SLOPES = {
    "ws": {"single core": 1.03, "pThreads": 1.04, "TBB": 1.05, "GPU kernel 1": 1.03, "GPU kernel 2": 1.11,
           "2 GPUs kernel 1": 0.82, "2 GPUs kernel 2": 1.01, "Cell": 0.99},
    "ba": {"single core": 1.37, "pThreads": 1.56, "TBB": 1.67, "GPU kernel 1": 1.45, "GPU kernel 2": 1.43,
           "2 GPUs kernel 1": 1.40, "2 GPUs kernel 2": 1.40, "Cell": 1.23},
}
CLUSTERING_METHODS = ("cpu", "cpu-threads", "gpu-arc", "gpu-sorted", "multi-arc", "multi-sorted", "networkx")
GPU_METHODS = ("gpu-arc", "gpu-sorted")
#: the per-arc kernels over several GPUs (virtual GPUs on the CPU backend: they run anywhere)
MULTI_METHODS = ("multi-arc", "multi-sorted")
#: the paper's implementation each of ours stands for (its slope is compared with ours)
PAPER_NAME = {"cpu": "single core", "cpu-threads": "pThreads", "gpu-arc": "GPU kernel 1",
              "gpu-sorted": "GPU kernel 2", "multi-arc": "2 GPUs kernel 1", "multi-sorted": "2 GPUs kernel 2"}
MIN_V, MAX_V = 100, 1_000_000         # k = 50: 25M edges at the top (paper 001: ≤ 200 000)


def default_workers() -> int:
    return max(2, os.cpu_count() or 2)


def default_sizes(backend) -> dict:
    """The paper's sizes on a GPU, QUICK_SIZES on the CPU."""
    gpu = backend is not None and backend.is_gpu
    return {f: list((PAPER_SIZES if gpu else QUICK_SIZES)[f]) for f in FAMILIES}


def default_methods(backend) -> list[str]:
    """Both CPU versions, plus both GPU kernels on a GPU and both multi-GPU kernels where there are
    ≥ 2 GPUs (networkx is opt-in: slow)."""
    gpu = backend is not None and backend.is_gpu
    multi = gpu and gpu_count(backend) >= 2
    return ["cpu", "cpu-threads"] + (list(GPU_METHODS) if gpu else []) + (list(MULTI_METHODS) if multi else [])


def default_gpus(backend) -> int:
    """GPUs of the multi-* methods by default: every visible GPU (≥ 2), 2 virtual ones on the CPU."""
    return max(2, gpu_count(backend)) if backend is not None else 2


def make_graph(family: str, n: int, seed: int):
    """The paper's input graphs: WS (k = 50, p = 0.1) or BA with mean degree ≈ 50 (m = 25)."""
    if family == "ws":
        return G.watts_strogatz(n, 50, 0.1, seed)
    if family == "ba":
        return G.barabasi_albert(n, 25, seed)
    raise InvalidParameter(f"unknown graph family {family!r}: use one of {', '.join(FAMILIES)}")


@dataclass
class CCRow:
    """One (family, V, method) point: mean ± std of ``repeats`` timed counts."""

    family: str
    n: int
    m: int
    method: str
    seconds: float
    std: float
    repeats: int
    t: int                 # 2 × triangles
    p: int                 # Σ d(d − 1) = 2 × connected triples
    clustering: float      # 3t / p
    agrees: bool           # t and p equal the first method's on this graph
    gpus: int = 1          # devices the method ran on (multi-*: GPUs, virtual on the CPU backend)

    def to_dict(self) -> dict:
        return asdict(self)


CSV_COLUMNS = tuple(CCRow.__dataclass_fields__)


def _counter(method: str, g, backend, workers: int, gpus: int = 2) -> Callable[[], tuple[int, int]]:
    """A no-argument function returning (t, p) for ``g``, its inputs already laid out."""
    csr = g.csr()
    if method == "cpu":
        return lambda: cpu_counts(csr, 1)
    if method == "cpu-threads":
        return lambda: cpu_counts(csr, workers)
    if method in GPU_METHODS:
        return GPUClustering(csr, backend, "arc" if method == "gpu-arc" else "sorted").counts
    if method in MULTI_METHODS:
        return MultiGPUClustering(csr, backend, "arc" if method == "multi-arc" else "sorted", gpus).counts
    if method == "networkx":
        import networkx as nx

        H = to_networkx(g)
        deg = csr.degrees()
        p = int((deg * (deg - 1)).sum())
        # transitivity = 3t/p, so t = round(transitivity · p / 3): exact for the integers involved
        return lambda: (int(round(nx.transitivity(H) * p / 3)), p)
    raise InvalidParameter(f"unknown clustering method {method!r}: use one of {', '.join(CLUSTERING_METHODS)}")


#: networkx keeps Python dicts per vertex and edge (hundreds of bytes per edge; k = 50 gives 25 V edges)
NETWORKX_MAX_V = 50_000


def emulated(method: str, backend) -> bool:
    """True when ``method`` runs its CUDA source on the host device: a GPU method, or the multi-*
    methods on virtual GPUs, without a GPU."""
    return method in GPU_METHODS + MULTI_METHODS and not (backend is not None and backend.is_gpu)


#: the largest graph :func:`check_host` builds; bigger sizes are extrapolated from it
HOST_SAMPLE_V = 4000


def check_host(family: str, n: int, seed: int = 1) -> None:
    """Refuse (InvalidParameter naming the limit) a per-arc kernel run on the host device whose
    cost model exceeds the host limit at V = n.  The work is measured on a graph of at most
    HOST_SAMPLE_V vertices and scaled to n: linearly for WS (fixed degrees), by n·log n for BA
    (Σ d² of a scale-free graph grows about so)."""
    n0 = min(int(n), HOST_SAMPLE_V)
    work = np.asarray(host_work(make_graph(family, n0, seed).csr()), dtype=np.float64)
    scale = n / n0 * (np.log(n) / np.log(n0) if family == "ba" else 1.0)
    work[1:] *= scale
    sec = float(np.dot(HOST_COSTS[:2] + (HOST_STEP_S,), work))
    if sec > HOST_LIMIT_S:
        top = int(n0 * HOST_LIMIT_S / float(np.dot(HOST_COSTS[:2] + (HOST_STEP_S,), work / scale)))
        raise InvalidParameter(
            f"{family} V = {n:,}: the clustering kernel runs its CUDA source on the CPU here (no GPU) and would "
            f"take about {sec:.0f} s; the limit is {HOST_LIMIT_S:.0f} s (about V = {max(top, MIN_V):,}) — use "
            "cpu / cpu-threads, smaller sizes or a GPU")


def check_methods(methods, backend, sizes: dict | None = None, seed: int = 1) -> list[str]:
    """The methods, refused before any work when unknown, a GPU method on the host device above
    the host limit at the largest size of a family (graph from ``seed``), or networkx above
    NETWORKX_MAX_V vertices (``sizes``: {family: V list})."""
    methods = list(dict.fromkeys(methods))
    if not methods:
        raise InvalidParameter("choose at least one clustering method")
    for m in methods:
        if m not in CLUSTERING_METHODS:
            raise InvalidParameter(f"unknown clustering method {m!r}: use one of {', '.join(CLUSTERING_METHODS)}")
    if any(emulated(m, backend) for m in methods):
        for fam, ns in (sizes or {}).items():
            if len(ns):
                check_host(fam, max(ns), seed)
    top = max((max(ns) for ns in (sizes or {}).values() if len(ns)), default=0)
    if "networkx" in methods and top > NETWORKX_MAX_V:
        raise InvalidParameter(f"networkx would need too much memory above {NETWORKX_MAX_V:,} vertices "
                               f"(largest V is {top:,}): leave it out or use smaller sizes")
    return methods


def check_gpus(gpus) -> int:
    """The device count of the multi-* methods: an integer 1 … MAX_GPUS."""
    if isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer)) or not 1 <= gpus <= MAX_GPUS:
        raise InvalidParameter(f"gpus must be an integer from 1 to {MAX_GPUS} (got {gpus!r})")
    return int(gpus)


def check_sizes(sizes: dict) -> dict:
    """{family: sorted sizes}, each family with ≥ 2 sizes in MIN_V … MAX_V (k = 50 needs V > 50)."""
    out = {}
    for fam, ns in sizes.items():
        if fam not in FAMILIES:
            raise InvalidParameter(f"unknown graph family {fam!r}: use one of {', '.join(FAMILIES)}")
        ns = sorted({int(n) for n in ns})
        if len(ns) < 2:
            raise InvalidParameter(f"{fam}: give at least two sizes V to fit a slope")
        if ns[0] < MIN_V or ns[-1] > MAX_V:
            raise InvalidParameter(f"{fam}: sizes must lie between {MIN_V} and {MAX_V} vertices "
                                   f"(got {ns[0]} … {ns[-1]})")
        out[fam] = ns
    if not out:
        raise InvalidParameter("choose at least one graph family (ws, ba)")
    return out


def run_cc_sweep(sizes: dict, methods=("cpu",), repeats: int | dict = 5, backend=None, seed: int = 1,
                 workers: int | None = None, cancel: Callable[[], bool] | None = None,
                 gpus: int = 2) -> Iterator[CCRow]:
    """Yield a CCRow per (family, V, method): ``sizes`` maps a family ("ws", "ba") to its V values;
    ``gpus``: devices of the multi-* methods.

    One graph per (family, V) from ``seed``, shared by every method; each method is timed
    ``repeats`` times per point (an int, or {method: int}; paper 001: the mean of 30 runs), after
    one untimed run on its first graph (not networkx: slow)."""
    sizes = check_sizes(sizes)
    methods = check_methods(methods, backend, sizes, seed)
    reps = {m: int(repeats.get(m, 1) if isinstance(repeats, dict) else repeats) for m in methods}
    if min(reps.values()) < 1:
        raise InvalidParameter(f"repeats must be ≥ 1 (got {repeats})")
    workers = int(workers or default_workers())
    if workers < 1:
        raise InvalidParameter(f"workers must be ≥ 1 (got {workers})")
    gpus = check_gpus(gpus)
    warm = {"networkx"}
    for fam, ns in sizes.items():
        for n in ns:
            if cancel is not None and cancel():
                return
            yield from point_rows(fam, n, methods, reps, backend, seed, workers, warm, cancel, gpus)


def point_rows(family: str, n: int, methods, reps: dict, backend=None, seed: int = 1, workers: int = 1,
               warm: set | None = None, cancel: Callable[[], bool] | None = None, gpus: int = 2) -> Iterator[CCRow]:
    """The rows of one (family, V) point of ``run_cc_sweep``: one graph from ``seed``, each method
    timed ``reps[method]`` times on it; a method not yet in ``warm`` (a set the caller keeps across
    points; updated here) runs once untimed first.  ``agrees``: (t, p) equal the first method's."""
    sync = backend.synchronize if backend is not None and backend.is_gpu else (lambda: None)
    warm = {"networkx"} if warm is None else warm
    g = make_graph(family, n, seed)
    ref = None
    for method in methods:
        if cancel is not None and cancel():
            return
        count = _counter(method, g, backend, workers, gpus)
        used = len(count.__self__.devices) if method in MULTI_METHODS else 1
        if method not in warm:
            count()                                        # untimed: compilation, first call
            warm.add(method)
        times = []
        for _ in range(reps[method]):
            sync()
            t0 = time.perf_counter()
            t, p = count()
            sync()
            times.append(time.perf_counter() - t0)
        ref = ref or (t, p)
        yield CCRow(family, n, g.m, method, float(np.mean(times)), float(np.std(times)), reps[method],
                    t, p, 3.0 * t / p if p > 0 else 0.0, (t, p) == ref, used)


def fit_slopes(rows) -> dict[tuple[str, str], float]:
    """Log–log slope of mean time vs V per (family, method) with ≥ 2 sizes (paper 001 Figs. 14–15)."""
    groups: dict[tuple[str, str], dict[int, float]] = {}
    for r in rows:
        groups.setdefault((r.family, r.method), {})[r.n] = r.seconds
    return {key: loglog_slope(list(d), list(d.values())) for key, d in groups.items()
            if len(d) >= 2 and min(d.values()) > 0}


def speedups(rows, base: str = "cpu") -> dict[tuple[str, int, str], float]:
    """Time of ``base`` over each other method's, per (family, V, method), where both ran."""
    t = {(r.family, r.n, r.method): r.seconds for r in rows}
    return {(f, n, m): t[(f, n, base)] / s for (f, n, m), s in t.items()
            if m != base and (f, n, base) in t and s > 0}


class Timings(Experiment):
    """Paper 001 §5.7, Figs. 14–15: every clustering method timed against V on Watts–Strogatz and
    Barabási–Albert graphs (:func:`run_cc_sweep`); clustering levels and slopes checked."""

    name = "paper001-cc-timing"
    title = "Paper 001 Figs. 14–15: clustering coefficient timings vs V"
    columns = CSV_COLUMNS
    row_type = CCRow

    def points(self, **settings) -> list[dict]:
        """One point per family (``sizes`` narrowed to it: a family needs ≥ 2 sizes for its slope); the
        ``graph-clustering`` sweep task splits finer, per (family, V), through :func:`point_rows`."""
        sizes = settings.get("sizes") or {}
        return [{**settings, "sizes": {f: list(ns)}} for f, ns in sizes.items()]
    #: how far a measured clustering level / a fitted slope may lie from the paper's
    LEVEL_TOLERANCE = 0.05
    SLOPE_TOLERANCE = 0.25

    def rows(self, sizes: dict, **settings) -> Iterator[CCRow]:
        return run_cc_sweep(sizes, **settings)

    def order_key(self, row):
        fo, mo = list(FAMILIES), list(CLUSTERING_METHODS)
        return (fo.index(row.family) if row.family in fo else 9, row.n,
                mo.index(row.method) if row.method in mo else 99)

    def problem(self, row) -> str | None:
        return None if row.agrees else (f"{row.family} V = {row.n:,}: {row.method} counted t = {row.t}, "
                                        f"p = {row.p}, unlike the first method")

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        out = []
        for fam, level in PAPER_LEVELS.items():
            c = [r.clustering for r in rows if r.family == fam]
            text = f"{FAMILIES[fam]}: clustering ≈ {level} (± {self.LEVEL_TOLERANCE})"
            out.append(Claim(text, None, "not run") if not c else
                       Claim(text, bool(np.all(np.abs(np.asarray(c) - level) <= self.LEVEL_TOLERANCE)),
                             f"measured {min(c):.3f} … {max(c):.3f}"))
        fits = fit_slopes(rows)
        for (fam, method), slope in sorted(fits.items()):
            paper = PAPER_SLOPES[fam].get(PAPER_NAME.get(method, ""))
            if paper is None:
                continue
            out.append(Claim(f"{FAMILIES[fam]}: {PAPER_NAME[method]} time grows as V^{paper} "
                             f"(± {self.SLOPE_TOLERANCE})", abs(slope - paper) <= self.SLOPE_TOLERANCE,
                             f"{method}: V^{slope:.2f}"))
        return out


TIMINGS = Timings()
