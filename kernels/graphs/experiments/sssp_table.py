"""Paper 004 ch. 3's experiments, re-run: Table 3.1, the scaling figures 3.10–3.13, the memory
limits and the path-recording overhead of Fig. 3.14.

* **Table 3.1** — four directed topologies at |V| = 4677 (:func:`..data.digraphs.thesis_graph`: random
  and power law with |E| = 16 384 arcs and weights 1 … 4096, ring and complete with unit weights)
  for Harish's SSSP method, the task-parallel method without and with shared memory (N = 32,
  B = 4) and the CPU Dijkstra (threads).  The ring and the complete graph are vertex-transitive
  (every source sees the same graph), so a method can be timed on the first k sources and scaled
  by |V| / k — ``max_sources``; such rows say ``scaled``.
* **Figs. 3.10–3.13** — random graphs (``random_digraph``): time vs |V| with |E| = 4|V| and
  w_max = |V| (3.10; Fig. 3.11 is the speed-up over the CPU, :func:`speedups`), vs |E| at
  |V| = 4096 (3.12) and vs w_max at |V| = 4096, |E| = 16 384 (3.13).
* **Memory** — the largest |V| each method fits by the thesis's element counts (§3.4.2:
  (3N+1)|V| + 2|E| against Harish's 4|V| + 2|E|; 4-byte elements): on its 512 MB GPU that is
  1.2 M vs 11 M vertices for |E| = 4|V| (the thesis: fails at 1.2 M, runs to 10.7 M).
* **Fig. 3.14** — path recording: the recording kernel's time over the cost computation's
  (thesis: 3.0–7.7 %), with recorded paths checked (each step an arc, the weights summing to the
  cost).

Every row is checked against scipy's Dijkstra on the first sources (``agrees``: equal costs;
integer weights make float32 exact).  Qt-free; rows are yielded as they finish.
"""
from __future__ import annotations

# Imports inside functions: SciPy, where used; slow to import, and `main.py --help` loads this module.
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from ...errors import InvalidParameter
from ...experiments import Claim, Experiment
from ..data import digraphs as D
from ..apsp import apsp
from ..apsp.core import REGISTRY
from ..apsp.paths import backtrack, is_shortest_path
from ..apsp.sssp import PAPER_N, paper_elements

TOPOLOGIES = D.TOPOLOGIES
TABLE_METHODS = ("sssp-harish", "sssp", "sssp-staged", "cpu-dijkstra")
LABELS = {"sssp-harish": "SSSP-based (Harish)", "sssp": "Proposed w/o shared memory",
          "sssp-staged": "Proposed (shared memory)", "cpu-dijkstra": "Dijkstra, CPU threads",
          "sssp-path": "Proposed + path recording"}
GPU_METHODS = ("sssp-harish", "sssp", "sssp-staged", "sssp-path")
#: paper 004 Table 3.1 (seconds; GeForce 8800 GTS, Xeon 5440 with 4 threads)
PAPER_TABLE = {
    "sssp-harish": {"random": 4.39, "powerlaw": 6.37, "ring": 687.0, "complete": 5730.0},
    "sssp": {"random": 0.884, "powerlaw": 1.73, "ring": 53.7, "complete": 175.0},
    "sssp-staged": {"random": 0.669, "powerlaw": 0.942, "ring": 58.2, "complete": 77.3},
    "cpu-dijkstra": {"random": 0.835, "powerlaw": 0.437, "ring": 0.0962, "complete": 158.0},
}
#: paper 004 Fig. 3.14: path-recording overhead range on random graphs
PAPER_PATH_OVERHEAD = (0.030, 0.077)
#: paper 004's GPU memory (8800 GTS, 512 MB) and its memory limits in |V| (|E| = 4|V|)
PAPER_GPU_BYTES = 512 * 2**20
PAPER_LIMITS = {"sssp-harish": 10.7e6, "sssp-staged": 1.2e6}
FIGURES = {"3.10": "time vs |V| (|E| = 4|V|, w_max = |V|)", "3.12": "time vs |E| (|V| = 4096)",
           "3.13": "time vs w_max (|V| = 4096, |E| = 16 384)"}


def method_options(method: str, threads: int | None = None) -> dict:
    """The thesis's settings: N = 32 problems per launch for both task-parallel variants."""
    if method in ("sssp", "sssp-staged", "sssp-path"):
        return dict(S=PAPER_N)
    if method == "cpu-dijkstra":
        return dict(threads=threads)
    return {}


def check_methods(methods, backend=None) -> list[str]:
    """The methods, de-duplicated; unknown names refused.  The GPU methods run on any backend
    (their CUDA source on the host device without a GPU: :func:`emulated`)."""
    methods = list(dict.fromkeys(methods))
    if not methods:
        raise InvalidParameter("choose at least one method")
    for m in methods:
        if m not in LABELS:
            raise InvalidParameter(f"unknown method {m!r}: use {', '.join(LABELS)}")
    return methods


def emulated(method: str, backend) -> bool:
    """True when ``method`` runs its CUDA source on the host device (a GPU method, no GPU)."""
    return method in GPU_METHODS and not (backend is not None and backend.is_gpu)


def check_host(points, methods, backend, max_sources=None) -> None:
    """On the host device, refuse (InvalidParameter naming the limit) before any work a GPU method
    whose timed sources on a graph are estimated above the host limit.  ``points``: (topology,
    csr) pairs, built lazily (only when some method is emulated)."""
    host = [m for m in methods if emulated(m, backend)]
    if not host:
        return
    for topology, make in points:
        csr = make()
        for m in host:
            k = source_limit(max_sources, m, topology, csr.n)
            try:
                REGISTRY[m](sources=np.arange(k), **method_options(m)).check_host(csr, backend)
            except InvalidParameter as exc:
                raise InvalidParameter(f"{topology} |V| = {csr.n:,}: {exc}") from None


def check_table_host(topologies, methods, backend, n: int = D.TABLE31["n"], arcs: int = D.TABLE31["arcs"],
                     w_max: int = D.TABLE31["w_max"], seed: int = 1, max_sources=None) -> None:
    """:func:`check_host` for Table 3.1's graphs (run_table's arguments)."""
    check_host([(t, lambda t=t: D.thesis_graph(t, n, arcs, w_max, seed)) for t in topologies], methods, backend,
               max_sources)


def check_scaling_host(figure: str, values, methods, backend, seed: int = 1, max_sources=None) -> None:
    """:func:`check_host` for a figure's random digraphs (run_scaling's arguments; the overhead
    experiment is figure 3.10's graphs with sssp-path)."""
    check_host([("random", lambda v=v: figure_graph(figure, v, seed)) for v in values], methods, backend,
               max_sources)


#: sources timed per (method, topology) by default (the rest scaled by |V| / k): the ring and the
#: complete graph are vertex-transitive, and there the slow methods would take minutes to hours
DEFAULT_MAX_SOURCES = {("sssp-harish", "ring"): 16, ("sssp-harish", "complete"): 16, ("sssp", "ring"): 64,
                       ("sssp", "complete"): 64, ("sssp-staged", "ring"): 64, ("sssp-staged", "complete"): 64,
                       ("cpu-dijkstra", "complete"): 256}


def source_limit(max_sources, method: str, topology: str, n: int) -> int:
    """Sources timed of ``method`` on ``topology`` with |V| = n: ``max_sources`` is None (all), an
    int, or {method: k} / {(method, topology): k}."""
    if max_sources is None:
        return n
    k = max_sources.get((method, topology), max_sources.get(method, n)) if isinstance(max_sources, dict) \
        else max_sources
    return max(1, min(n, int(k)))


def reference_rows(csr, sources: np.ndarray) -> np.ndarray:
    """scipy Dijkstra from ``sources`` along arcs (float32 as the methods store costs)."""
    from scipy.sparse.csgraph import shortest_path
    d = shortest_path(csr.to_scipy(weighted=True), method="D", directed=csr.directed, indices=sources)
    return d.astype(np.float32)


#: rows checked against scipy per graph (the first sources; scipy is single-threaded)
CHECK_ROWS = 256


def timed_run(csr, method: str, backend, k: int, threads=None, ref: np.ndarray | None = None):
    """(seconds scaled to all |V| sources, launches, agrees, result) of ``method`` on the first k
    sources; ``ref``: scipy's rows of the first sources (None: not checked)."""
    sources = None if k >= csr.n else np.arange(k)
    res = apsp(csr, method, backend=backend if method in GPU_METHODS else None,
               sources=sources, **method_options(method, threads))
    agrees = None
    if ref is not None:
        r = min(ref.shape[0], res.dist.shape[0])
        agrees = bool(np.array_equal(res.dist[:r], ref[:r]))
    return res.kernel_seconds * csr.n / k, res.launches, agrees, res


def warm_up(methods, backend) -> None:
    """Compile the kernels / the C++ and make a first call, untimed."""
    csr = D.random_digraph(64, 256, 16, True, 0)
    for m in methods:
        apsp(csr, m, backend=backend if m in GPU_METHODS else None, **method_options(m))


@dataclass
class TableRow:
    """One (topology, method) cell of Table 3.1."""

    topology: str
    n: int
    arcs: int
    method: str
    seconds: float              # all |V| sources (scaled from sources_timed when scaled)
    sources_timed: int
    scaled: bool
    launches: int
    agrees: bool | None         # costs equal scipy's on the timed sources (None: not checked)
    paper_seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def run_table(topologies=TOPOLOGIES, methods=TABLE_METHODS, backend=None, n: int = D.TABLE31["n"],
              arcs: int = D.TABLE31["arcs"], w_max: int = D.TABLE31["w_max"], seed: int = 1,
              max_sources=None, threads: int | None = None, check: bool = True,
              cancel: Callable[[], bool] | None = None) -> Iterator[TableRow]:
    """Yield a TableRow per (topology, method).  ``max_sources``: an int, or {method: k} /
    {(method, topology): k} — time the first k sources only and scale by |V| / k."""
    methods = check_methods(methods, backend)
    for t in topologies:
        if t not in TOPOLOGIES:
            raise InvalidParameter(f"unknown topology {t!r}: use {', '.join(TOPOLOGIES)}")
    check_table_host(topologies, methods, backend, n, arcs, w_max, seed, max_sources)
    warm_up(methods, backend)
    for t in topologies:
        if cancel is not None and cancel():
            return
        csr = D.thesis_graph(t, n, arcs, w_max, seed)
        ref = reference_rows(csr, np.arange(min(csr.n, CHECK_ROWS))) if check else None
        for m in methods:
            if cancel is not None and cancel():
                return
            k = source_limit(max_sources, m, t, csr.n)
            sec, launches, agrees, _res = timed_run(csr, m, backend, k, threads, ref)
            yield TableRow(t, csr.n, csr.arcs, m, float(sec), k, k < csr.n, int(launches), agrees,
                           PAPER_TABLE.get(m, {}).get(t, float("nan")))


@dataclass
class ScaleRow:
    """One point of Figs. 3.10, 3.12 or 3.13."""

    figure: str
    n: int
    arcs: int
    w_max: int
    method: str
    seconds: float
    sources_timed: int
    scaled: bool
    agrees: bool | None

    def to_dict(self) -> dict:
        return asdict(self)


def figure_graph(figure: str, value: int, seed: int):
    """The random digraph of ``figure`` at ``value`` (|V|, |E| or w_max)."""
    value = int(value)
    if figure == "3.10":
        return D.random_digraph(value, 4 * value, value, True, seed)
    if figure == "3.12":
        return D.random_digraph(4096, value, 4096, True, seed)
    if figure == "3.13":
        return D.random_digraph(4096, 16384, value, True, seed)
    raise InvalidParameter(f"unknown figure {figure!r}: use {', '.join(FIGURES)}")


def run_scaling(figure: str, values, methods=TABLE_METHODS, backend=None, seed: int = 1, max_sources=None,
                threads: int | None = None, check: bool = True,
                cancel: Callable[[], bool] | None = None) -> Iterator[ScaleRow]:
    """Yield a ScaleRow per (value, method) of one figure; ``max_sources`` as in run_table."""
    methods = check_methods(methods, backend)
    if figure not in FIGURES:
        raise InvalidParameter(f"unknown figure {figure!r}: use {', '.join(FIGURES)}")
    check_scaling_host(figure, values, methods, backend, seed, max_sources)
    warm_up(methods, backend)
    for v in sorted(int(x) for x in values):
        if cancel is not None and cancel():
            return
        csr = figure_graph(figure, v, seed)
        w_max = int(csr.weights.max()) if csr.weights is not None else 1
        ref = reference_rows(csr, np.arange(min(csr.n, 32))) if check else None
        for m in methods:
            if cancel is not None and cancel():
                return
            k = source_limit(max_sources, m, "random", csr.n)
            sec, _l, agrees, _res = timed_run(csr, m, backend, k, threads, ref)
            yield ScaleRow(figure, csr.n, csr.arcs, w_max, m, float(sec), k, k < csr.n, agrees)


def speedups(rows, base: str = "sssp-harish") -> dict[tuple, float]:
    """Time of ``base`` over each other method's at the same graph (Fig. 3.11 uses the CPU as base)."""
    key = (lambda r: (r.topology,)) if rows and isinstance(rows[0], TableRow) else (lambda r: (r.figure, r.n, r.arcs, r.w_max))
    t = {(*key(r), r.method): r.seconds for r in rows}
    return {k: t[(*k[:-1], base)] / s for k, s in t.items() if k[-1] != base and (*k[:-1], base) in t and s > 0}


def largest_vertices(method: str, memory_bytes: int, arcs_per_vertex: float = 4.0, N: int = PAPER_N,
                     element_bytes: int = 4) -> int:
    """The largest |V| whose paper-004 element count (|E| = arcs_per_vertex·|V|) fits ``memory_bytes``."""
    per_vertex = paper_elements(method, 1, 0, N) + 2 * arcs_per_vertex + (
        2 * arcs_per_vertex if method == "sssp-path" else 0)
    return int(memory_bytes // (element_bytes * per_vertex))


@dataclass
class OverheadRow:
    """Fig. 3.14: one random graph's path-recording overhead."""

    n: int
    arcs: int
    cost_seconds: float
    record_seconds: float
    overhead: float             # record / cost
    sources_timed: int
    paths_checked: int
    paths_valid: int

    def to_dict(self) -> dict:
        return asdict(self)


def run_path_overhead(sizes, backend=None, seed: int = 1, max_sources: int | None = None, check_paths: int = 64,
                      cancel: Callable[[], bool] | None = None) -> Iterator[OverheadRow]:
    """Yield an OverheadRow per |V| (|E| = 4|V|, w_max = |V|): ``sssp-path`` on the first
    ``max_sources`` sources (default all), ``check_paths`` random recorded paths validated."""
    check_methods(["sssp-path"], backend)
    check_scaling_host("3.10", sizes, ["sssp-path"], backend, seed, max_sources)
    warm_up(["sssp-path"], backend)
    rng = np.random.default_rng(seed)
    for n in sorted(int(x) for x in sizes):
        if cancel is not None and cancel():
            return
        csr = figure_graph("3.10", n, seed)
        k = n if max_sources is None else max(1, min(n, int(max_sources)))
        res = apsp(csr, "sssp-path", backend=backend, sources=None if k >= n else np.arange(k),
                   **method_options("sssp-path"))
        tm = res.timings
        valid = 0
        pairs = [(int(rng.integers(k)), int(rng.integers(n))) for _ in range(int(check_paths))]
        for i, tgt in pairs:
            path = backtrack(res.pred[i], i, tgt)
            cost = res.dist[i, tgt]
            ok = (not path) if not np.isfinite(cost) else is_shortest_path(csr, path, i, tgt, cost)
            valid += bool(ok)
        yield OverheadRow(n, csr.arcs, tm["cost"], tm["record"], tm["record"] / tm["cost"] if tm["cost"] else
                          float("nan"), k, len(pairs), valid)


class _SSSPExperiment(Experiment):
    """Rows whose ``agrees`` is False computed costs unlike scipy's Dijkstra."""

    def problem(self, row) -> str | None:
        return f"{row.method}: costs differ from scipy's Dijkstra" if getattr(row, "agrees", True) is False else None

    @staticmethod
    def _faster(rows, key, fast: str, slow: str, factor: float, text: str) -> Claim:
        """``fast`` at least ``factor`` × faster than ``slow`` at every point both ran; ``key(row)`` names
        the point (a string)."""
        t = {(key(r), r.method): r.seconds for r in rows}
        pts = [k for k, m in t if m == fast and (k, slow) in t and t[k, fast] > 0]
        if not pts:
            return Claim(text, None, f"needs {fast} and {slow} on the same graphs")
        ratio = {k: t[k, slow] / t[k, fast] for k in pts}
        return Claim(text, all(v >= factor for v in ratio.values()),
                     "; ".join(f"{k}: ×{v:.2f}" for k, v in ratio.items()))


class Table31(_SSSPExperiment):
    """Paper 004 Table 3.1: the SSSP methods on four topologies, |V| = 4677 (:func:`run_table`)."""

    name = "paper004-table3.1"
    title = "Paper 004 Table 3.1: APSP by SSSP on four topologies"
    columns = tuple(TableRow.__dataclass_fields__)
    row_type = TableRow
    split = ("topologies",)

    def rows(self, topologies=TOPOLOGIES, methods=TABLE_METHODS, **settings) -> Iterator[TableRow]:
        return run_table(topologies, methods, **settings)

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        out = []
        for m in ("sssp", "sssp-staged"):
            faster = [t for t in TOPOLOGIES if PAPER_TABLE[m][t] < PAPER_TABLE["sssp-harish"][t]]
            out.append(self._faster([r for r in rows if r.topology in faster], lambda r: r.topology, m,
                                    "sssp-harish", 1.0, f"{LABELS[m]} is faster than {LABELS['sssp-harish']} "
                                                        f"on {', '.join(faster)}"))
        return out


class Scaling(_SSSPExperiment):
    """Paper 004 Figs. 3.10–3.13: time against |V|, |E| or w_max (:func:`run_scaling`)."""

    name = "paper004-sssp-scaling"
    title = "Paper 004 Figs. 3.10–3.13: SSSP time vs |V|, |E|, w_max"
    columns = tuple(ScaleRow.__dataclass_fields__)
    row_type = ScaleRow
    split = ("values",)

    def rows(self, figure: str, values, methods=TABLE_METHODS, **settings) -> Iterator[ScaleRow]:
        return run_scaling(figure, values, methods, **settings)

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        key = lambda r: f"|V| {r.n:,}, |E| {r.arcs:,}, w_max {r.w_max:,}"       # noqa: E731
        return [self._faster(rows, key, "sssp", "sssp-harish", 1.9,
                             "the variant without shared memory is ≥ 1.9× faster than Harish's SSSP"),
                self._faster(rows, key, "sssp-staged", "sssp", 1.2,
                             "shared memory gives ≥ 1.2× over the variant without it (paper: 1.2–1.4×)")]


class PathOverhead(_SSSPExperiment):
    """Paper 004 Fig. 3.14: the overhead of recording paths on random graphs (:func:`run_path_overhead`)."""

    name = "paper004-fig3.14"
    title = "Paper 004 Fig. 3.14: path-recording overhead"
    columns = tuple(OverheadRow.__dataclass_fields__)
    row_type = OverheadRow
    split = ("sizes",)

    def rows(self, sizes, **settings) -> Iterator[OverheadRow]:
        return run_path_overhead(sizes, **settings)

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        lo, hi = PAPER_PATH_OVERHEAD
        text = f"recording paths costs {100 * lo:.1f}–{100 * hi:.1f} % of the cost computation (read: ≤ {100 * hi:.1f} %)"
        if not rows:
            return [Claim(text, None, "no points")]
        ov = [r.overhead for r in rows]
        out = [Claim(text, max(ov) <= hi, f"{100 * min(ov):.1f}–{100 * max(ov):.1f} %")]
        checked = sum(r.paths_checked for r in rows)
        if checked:
            valid = sum(r.paths_valid for r in rows)
            out.append(Claim("every recorded path is a shortest path", valid == checked, f"{valid} of {checked}"))
        return out


TABLE31 = Table31()
SCALING = Scaling()
PATH_OVERHEAD = PathOverhead()
#: the experiment of each row kind (the tab exports whichever it ran)
EXPERIMENT_OF = {TableRow: TABLE31, ScaleRow: SCALING, OverheadRow: PATH_OVERHEAD}


def experiment_for(rows) -> Experiment:
    """The experiment whose rows ``rows`` are (one kind); InvalidParameter for no rows."""
    rows = list(rows)
    if not rows:
        raise InvalidParameter("no rows to write")
    return EXPERIMENT_OF[type(rows[0])]


def to_csv(rows, path) -> None:
    """Rows of any one of the three experiments as CSV (the experiment of their kind writes them)."""
    rows = list(rows)
    experiment_for(rows).to_csv(rows, path)
