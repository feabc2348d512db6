"""Re-running paper 000's APSP experiment and paper 001's clustering levels.

Paper 000 §4 / Fig. 14 / Table II: three graph types (Watts α-model with a ring
substrate, α-model without it, Barabási–Albert with k = 100), several instances
per N, all-pairs shortest paths on the CPU and the GPU; the mean shortest path
grows as N^0.995, N^0.223 and N^0.106.  GPU times are normalised per instance by
Eq. 3 (t_i / APSP_i × mean APSP).  Paper 001 §5.7: clustering of Watts–Strogatz
(k = 50, p = 0.1, C ≈ 0.53) and Barabási–Albert (k ≈ 50, C ≈ 0.01).

``run_sweep`` is a generator of finished rows, so the GUI can plot them live and
cancel between instances; the benchmark script uses the same code.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from ...errors import InvalidParameter
from ...experiments import Claim, Experiment
from ..data import generators as G
from ..apsp import apsp
from ..algorithms.clustering import global_clustering, sampled_clustering
from ..cuda import HOST_LIMIT_S, HostRunnable
from ..data.graph import CSR, components, largest_component
from ..data.stats import loglog_slope, normalised_times, sampled_summary, summary
from ..apsp import check_memory, METHODS

#: paper 000 Fig. 14's fitted exponents of mean shortest path vs N
PAPER_EXPONENTS = {"alpha-ring": 0.995, "alpha": 0.223, "ba": 0.106}
TYPE_LABELS = {"alpha-ring": "(1) α-model, ring substrate", "alpha": "(2) α-model, no substrate",
               "ba": "(3) Barabási–Albert k = 100"}
#: paper 001 §5.7's clustering levels
PAPER_CLUSTERING = {"ws": 0.53, "ba": 0.01}


#: how a disconnected draw is handled: paper 000 checks type (2)'s connectivity "through graph
#: analysis after they were generated" — read as *redraw* (default) or as *analyse the largest
#: connected component* (an alternative reading, for exploring)
CONNECTIVITY = ("redraw", "giant")


def alpha_params(t: str, overrides: dict | None = None) -> dict:
    """Generator parameters of α-model type ``t`` ("alpha-ring" = set 1, "alpha" = set 2):
    ``generators.ALPHA_SETS`` with ``overrides`` ({"alpha": …, "p": …, "k": …}) applied."""
    base = dict(G.ALPHA_SETS[1 if t == "alpha-ring" else 2])
    for key, v in (overrides or {}).items():
        if key not in ("alpha", "p", "k"):
            raise InvalidParameter(f"unknown α-model parameter {key!r}: use alpha, p or k")
        base[key] = v
    if not 0.0 <= float(base["p"]) <= 1.0:
        raise InvalidParameter(f"p must lie in [0, 1] (got {base['p']})")
    if float(base["alpha"]) < 0:
        raise InvalidParameter(f"alpha must be ≥ 0 (got {base['alpha']})")
    return base


def graph_type(name: str, k3: int = 100, params: dict | None = None) -> Callable:
    """maker(n, seed, cancel=None) -> Graph for one of paper 000's three instance families; ``params``
    overrides the α-model sets' α / p / k (ignored for "ba")."""
    if name in ("alpha-ring", "alpha"):
        kw = alpha_params(name, params)
        return lambda n, s, cancel=None: G.watts_alpha(n, seed=s, cancel=cancel, **kw)
    if name == "ba":
        return lambda n, s, cancel=None: G.barabasi_albert(n, max(1, k3 // 2), s, cancel=cancel)
    raise InvalidParameter(f"unknown graph type {name!r}: use {', '.join(PAPER_EXPONENTS)}")


def check_instances(types, sizes, params: dict | None = None) -> None:
    """Every (type, N) of a sweep checked before its first instance runs: each generator is
    started with a cancel that fires at its first poll, so its own parameter checks run
    (InvalidParameter naming the type and N, e.g. BA's m < N) and no graph is built."""
    for t in types:
        make = graph_type(t, params=(params or {}).get(t))
        for n in sorted({int(x) for x in sizes}):
            try:
                make(n, 0, cancel=lambda: True)
            except InterruptedError:
                pass
            except InvalidParameter as exc:
                raise InvalidParameter(f"type {t}, N = {n}: {exc}") from None


@dataclass
class SweepRow:
    """One finished instance."""

    type: str
    n: int
    instance: int
    seed: int
    m: int
    mean_path_length: float
    diameter: int
    method: str
    seconds: float
    regenerated: int = 0      # disconnected draws skipped (paper: connectivity checked)
    clustering: float = float("nan")   # global clustering 3t/p (nan: not measured)
    giant_fraction: float = 1.0        # vertices in the analysed component / N
    ref_method: str = ""               # CPU reference timed on the same graph ("" = none)
    ref_seconds: float = float("nan")
    ref_agrees: bool | None = None     # its mean path equals the method's (None: not comparable)

    def to_dict(self) -> dict:
        return asdict(self)


#: CPU references for Table II's CPU-vs-GPU columns: scipy's BFS APSP (the fast CPU route) or
#: scipy's Floyd–Warshall (the paper's CPU algorithm, O(N³): N ≤ FLOYD_MAX_N)
REFERENCES = ("cpu", "cpu-floyd")
FLOYD_MAX_N = 5000


def check_reference(reference, sizes) -> str | None:
    """The reference, refused when unknown or when Floyd's O(N³) would take too long."""
    if not reference:
        return None
    if reference not in REFERENCES:
        raise InvalidParameter(f"unknown CPU reference {reference!r}: use {' or '.join(REFERENCES)}")
    if reference == "cpu-floyd" and max(sizes) > FLOYD_MAX_N:
        raise InvalidParameter(f"cpu-floyd is O(N³): sizes up to {FLOYD_MAX_N} (got {max(sizes)}; paper 000's "
                               "CPU Floyd took 34–90 hours at N = 30 000); use the cpu reference (BFS) above")
    return reference


def check_memory_for(sizes, method: str, backend, reference: str | None = None) -> None:
    """GridTooLarge before any work when the largest N's distance matrix (method and reference)
    cannot fit; cpu-sampled keeps no matrix."""
    if method != "cpu-sampled":
        check_memory(max(sizes), method, backend, 2)
    if reference:
        check_memory(max(sizes), "fw" if reference == "cpu-floyd" else "cpu", backend, 8)


def emulated(method: str, backend) -> bool:
    """True when ``method`` runs its CUDA source on the host device (no GPU backend)."""
    cls = METHODS.get(method, None)
    return bool(cls is not None and cls.emulated(backend))


def host_bound_graph(n: int) -> CSR:
    """``n`` vertices and no arcs: a host-device estimate on it (the fewest BFS levels, no arc
    visits) is a lower bound of the estimate on every graph of ``n`` vertices, since each term of the
    cost model (launches, threads, arc visits) grows with the levels and the arcs."""
    return CSR(int(n), np.zeros(int(n) + 1, dtype=np.int32), np.zeros(0, dtype=np.int32))


def refuse_by_bound(runner, n: int, where: str) -> None:
    """Refuse at once (InvalidParameter, prefixed ``where``) a host-run ``runner`` (a
    :class:`HostRunnable`; others pass) whose estimate on :func:`host_bound_graph` — the lower bound on
    every graph of ``n`` vertices — is already above the host limit: no graph is generated for that."""
    if not isinstance(runner, HostRunnable):
        return
    bound = host_bound_graph(n)
    sec = runner.host_seconds(bound)
    if sec > HOST_LIMIT_S:
        raise InvalidParameter(
            f"{where}: {runner.name} runs its CUDA source on the CPU here (no GPU): {runner.rows(bound):,} sources "
            f"on |V| = {n:,} would take more than {sec:.0f} s whatever the graph's arcs; the limit is "
            f"{HOST_LIMIT_S:.0f} s (smaller sizes, or a GPU)")


def check_host(types, sizes, method: str, backend, params: dict | None = None, seed0: int = 1) -> None:
    """On the host device, refuse (InvalidParameter naming the limit) before any work a method whose
    run on the largest N of a type is estimated above the host limit (about 30 s).

    A size whose lower bound (:func:`host_bound_graph`: N alone, whatever the arcs) is already above
    the limit is refused at once, without generating a graph; the others are estimated on the first
    instance of each type, so what passes is the same as with the full estimate."""
    if not emulated(method, backend):
        return
    n = max(int(x) for x in sizes)
    runner = METHODS[method]()
    if types:
        refuse_by_bound(runner, n, f"type {types[0]}, N = {n:,}")
    for t in types:
        csr = graph_type(t, params=(params or {}).get(t))(n, int(seed0)).csr()
        try:
            runner.check_host(csr, backend)
        except InvalidParameter as exc:
            raise InvalidParameter(f"type {t}, N = {n:,}: {exc}") from None


def reference_apsp(g, reference: str) -> tuple[float, float]:
    """(seconds, mean shortest path) of ``g`` by the CPU reference."""
    t0 = time.perf_counter()
    if reference == "cpu-floyd":
        from scipy.sparse.csgraph import floyd_warshall
        d = floyd_warshall(g.csr().to_scipy(weighted=False), directed=False, unweighted=True)
    else:
        d = apsp(g, "cpu").dist
    secs = time.perf_counter() - t0
    return secs, float(summary(d)["mean_path_length"])           # float (inf) or hop matrices alike


#: estimate the mean path from this many random BFS sources (method "cpu-sampled")
SAMPLED_SOURCES = 64


#: the sweep sizes the GUI and CLI accept (paper 000: 1 000 … 30 000)
MIN_N, MAX_N = 20, 60000


def parse_sizes(text: str) -> list[int]:
    """Sweep sizes typed as "1000, 5000; 10000": sorted, unique, at least two (an exponent needs two
    points), each MIN_N … MAX_N; InvalidParameter otherwise."""
    try:
        sizes = sorted({int(s) for s in str(text).replace(";", ",").split(",") if s.strip()})
    except ValueError:
        raise InvalidParameter(f"sizes must be whole numbers (integers) separated by commas (got {text!r})") from None
    if len(sizes) < 2:
        raise InvalidParameter("give at least two sizes N to fit an exponent")
    if sizes[0] < MIN_N or sizes[-1] > MAX_N:
        raise InvalidParameter(f"sizes must lie between {MIN_N} and {MAX_N} vertices "
                               f"(got {sizes[0]} … {sizes[-1]})")
    return sizes


def draw(make: Callable, n: int, seed: int, connectivity: str = "redraw", max_redraws: int = 10,
         first=None, step: int = 1, cancel: Callable[[], bool] | None = None):
    """One instance as the sweep analyses it: ``make(n, seed)`` (or ``first``, already made from
    ``seed``).  ``"redraw"``: while the draw is disconnected, draw again from ``seed + step``, at most
    ``max_redraws`` times (paper 000 checks type (2)'s connectivity after generation; the last draw
    is kept either way); ``"giant"``: keep the largest component.  Returns ``(graph, seed used,
    redraws, fraction of N analysed)``, or None when ``cancel()`` turns true between draws."""
    g = first if first is not None else make(n, seed)
    redraws = 0
    if connectivity == "giant":
        sub, frac = largest_component(g)
        return sub, seed, 0, frac
    while redraws < max_redraws and components(g)[0] > 1:
        if cancel is not None and cancel():
            return None
        redraws += 1
        seed += step
        g = make(n, seed)
    return g, seed, redraws, 1.0


def run_sweep(types, sizes, instances: int = 3, method: str = "cpu", backend=None, seed0: int = 1,
              max_redraws: int = 10, cancel: Callable[[], bool] | None = None,
              sources: int = SAMPLED_SOURCES, params: dict | None = None,
              connectivity: str = "redraw", clustering: bool = True,
              reference: str | None = None) -> Iterator[SweepRow]:
    """Yield a SweepRow per (type, N, instance).

    ``connectivity="redraw"``: disconnected draws are redrawn with the next seed, up to
    ``max_redraws`` (paper 000 checks the connectivity of set (2) after generation);
    ``"giant"``: the largest connected component is analysed instead (``giant_fraction``).
    ``method="cpu-sampled"`` estimates the mean path from ``sources`` random BFS sources
    (stats.sampled_summary) and the clustering from random wedges: paper 000's full N range (to
    30 000) in seconds on a laptop; its diameter is a lower bound.  ``params`` maps a type to its
    α-model overrides (see ``alpha_params``); ``clustering=False`` skips the clustering.
    ``reference`` ("cpu" or "cpu-floyd") also times a CPU APSP of every instance (Table II's CPU
    column) and checks that its mean path equals the method's (not with cpu-sampled)."""
    sizes = sorted(int(n) for n in sizes)
    if not sizes or sizes[0] < MIN_N:
        raise InvalidParameter(f"sizes must be integers ≥ {MIN_N}")
    if instances < 1:
        raise InvalidParameter("instances must be ≥ 1")
    if method == "cpu-sampled" and int(sources) < 2:
        raise InvalidParameter(f"sampled mean path needs ≥ 2 sources (got {sources})")
    if connectivity not in CONNECTIVITY:
        raise InvalidParameter(f"connectivity must be one of {', '.join(CONNECTIVITY)} (got {connectivity!r})")
    reference = check_reference(reference, sizes)
    makers = {t: graph_type(t, params=(params or {}).get(t)) for t in types}   # refuse bad input first
    check_instances(types, sizes, params)
    for t in types:
        make = makers[t]
        for n in sizes:
            seed = seed0
            for i in range(instances):
                if cancel is not None and cancel():
                    return
                drawn = draw(make, n, seed, connectivity, max_redraws, cancel=cancel)
                if drawn is None:
                    return
                g, used, redraws, frac = drawn
                seed = used + 1
                t0 = time.perf_counter()
                if method == "cpu-sampled":
                    s = sampled_summary(g, sources, seed=seed)
                    secs = time.perf_counter() - t0
                else:
                    res = apsp(g, method, backend=backend)
                    secs = getattr(res, "kernel_seconds", None) or (time.perf_counter() - t0)
                    s = summary(res.dist)
                c = float("nan")
                if clustering:
                    c = (sampled_clustering(g, seed=seed) if method == "cpu-sampled"
                         else global_clustering(g, backend=backend))
                row = SweepRow(t, n, i, seed - 1, g.m, float(s["mean_path_length"]), int(s["diameter"]),
                               method, float(secs), redraws, float(c), float(frac))
                if reference:
                    row.ref_method = reference
                    row.ref_seconds, ref_mean = reference_apsp(g, reference)
                    if method != "cpu-sampled":
                        row.ref_agrees = bool(np.isclose(ref_mean, row.mean_path_length, rtol=1e-9, atol=0))
                yield row


def fit_exponents(rows) -> dict[str, float]:
    """Log–log slope of the per-N mean of mean path length, per type (≥ 2 sizes needed)."""
    out = {}
    for t in sorted({r.type for r in rows}):
        by_n = {}
        for r in rows:
            if r.type == t:
                by_n.setdefault(r.n, []).append(r.mean_path_length)
        if len(by_n) >= 2:
            ns = sorted(by_n)
            out[t] = loglog_slope(ns, [np.mean(by_n[n]) for n in ns])
    return out


def normalised(rows) -> list[float]:
    """Paper 000 Eq. 3 normalised times, in row order (per type and N)."""
    out = [0.0] * len(rows)
    groups = {}
    for i, r in enumerate(rows):
        groups.setdefault((r.type, r.n), []).append(i)
    for idx in groups.values():
        t = normalised_times([rows[i].seconds for i in idx], [rows[i].mean_path_length for i in idx])
        for j, i in enumerate(idx):
            out[i] = float(t[j])
    return out


def clustering_levels(n_ws: int = 20000, n_ba: int = 10000, k: int = 50, seed: int = 3, backend=None) -> dict:
    """Paper 001's two clustering levels with timings: {name: (C, seconds)}."""
    res = {}
    for name, make in (("ws", lambda: G.watts_strogatz(n_ws, k, 0.1, seed)),
                       ("ba", lambda: G.barabasi_albert(n_ba, k // 2, seed))):
        g = make()
        t0 = time.perf_counter()
        c = global_clustering(g, backend=backend)
        res[name] = (float(c), time.perf_counter() - t0)
    return res


CSV_COLUMNS = ("type", "n", "instance", "seed", "m", "mean_path_length", "diameter", "method", "seconds",
               "normalised_seconds", "regenerated", "clustering", "giant_fraction", "ref_method", "ref_seconds",
               "ref_agrees")


def speedups(rows) -> dict[tuple[str, int], float]:
    """Mean CPU-reference time over mean method time per (type, N) (Table II's speed-up row)."""
    groups: dict[tuple[str, int], list] = {}
    for r in rows:
        if r.ref_method and np.isfinite(r.ref_seconds) and r.seconds > 0:
            groups.setdefault((r.type, r.n), []).append((r.ref_seconds, r.seconds))
    return {k: float(np.mean([a for a, _ in v]) / np.mean([b for _, b in v])) for k, v in groups.items()}


def mean_clustering(rows) -> dict[str, float]:
    """Mean measured clustering per type (types without a measurement left out)."""
    out = {}
    for t in sorted({r.type for r in rows}):
        c = [r.clustering for r in rows if r.type == t and np.isfinite(r.clustering)]
        if c:
            out[t] = float(np.mean(c))
    return out


class Fig14(Experiment):
    """Paper 000 Fig. 14 / Table II: the mean shortest path of three graph types against N
    (:func:`run_sweep`), its fitted exponents checked against the paper's."""

    name = "paper000-fig14"
    title = "Paper 000 Fig. 14 / Table II: mean shortest path vs N (three graph types)"
    columns = CSV_COLUMNS
    row_type = SweepRow
    split = ("types", "sizes")
    #: how far a fitted exponent may lie from the paper's for its claim to hold
    TOLERANCE = 0.10

    def rows(self, types, sizes, **settings) -> Iterator[SweepRow]:
        return run_sweep(types, sizes, **settings)

    def table(self, rows):
        for r, t in zip(rows, normalised(rows)):
            yield [r.type, r.n, r.instance, r.seed, r.m, f"{r.mean_path_length:.6f}", r.diameter,
                   r.method, f"{r.seconds:.6g}", f"{t:.6g}", r.regenerated, f"{r.clustering:.6f}",
                   f"{r.giant_fraction:.6f}", r.ref_method,
                   f"{r.ref_seconds:.6g}" if r.ref_method else "",
                   "" if r.ref_agrees is None else r.ref_agrees]

    def order_key(self, row):
        order = list(TYPE_LABELS)
        return (order.index(row.type) if row.type in order else len(order), row.n, row.instance)

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        fits = fit_exponents(rows)
        out = []
        for t, paper in PAPER_EXPONENTS.items():
            text = f"{TYPE_LABELS[t]}: mean shortest path grows as N^{paper} (± {self.TOLERANCE})"
            if t not in fits:
                out.append(Claim(text, None, "needs ≥ 2 sizes of this type"))
                continue
            ns = sorted({r.n for r in rows if r.type == t})
            out.append(Claim(text, abs(fits[t] - paper) <= self.TOLERANCE,
                             f"fitted N^{fits[t]:.3f} over N = {ns[0]:,} … {ns[-1]:,}"))
        text = "the exponent falls from type (1) to (2) to (3)"
        if len(fits) == len(PAPER_EXPONENTS):
            f = [fits[t] for t in PAPER_EXPONENTS]
            out.append(Claim(text, f[0] > f[1] > f[2], ", ".join(f"{v:.3f}" for v in f)))
        else:
            out.append(Claim(text, None, "needs all three types"))
        checked = [r for r in rows if r.ref_agrees is not None]
        if checked:
            bad = [r for r in checked if not r.ref_agrees]
            out.append(Claim("the GPU method's mean path equals the CPU reference's on every instance",
                             not bad, f"{len(checked) - len(bad)} of {len(checked)} instances agree"))
        return out


#: the experiment (the CLI's, the GUI tab's and the sweep task's)
FIG14 = Fig14()
