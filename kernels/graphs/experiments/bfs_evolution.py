"""Paper 000 §4.3's kernel evolution (Figs. 10–13) and block-size sweep (Fig. 15), re-run.

Kernel evolution: kernels 1 … 7 (``gpu-bfs-k1`` … ``gpu-bfs-k7``; optionally the project's
``gpu-bfs`` and ``gpu-msbfs`` beside them) time all-pairs hop counts on paper 000's three graph
types over N = 1 000 … 30 000 with several instances per N (the paper: 10).  Times are the GPU
time without the final copy of the matrix (``APSPResult.kernel_seconds``), normalised per size by
Eq. 3 (t / APSP × mean APSP); per kernel and type the log–log slope of the per-N mean is fitted
and set beside the paper's range (type 1: 2.04–2.45, type 2: 1.49–1.94, type 3: 1.51–1.71), and
at the largest N every kernel's time is compared with its parent's (Fig. 10: K2 ← K1, …, K6 ← K5,
K7 ← K5 — the paper discarded K6) and with kernel 1's.  Every kernel must give the first kernel's
hop counts exactly (``agrees``).

``batch`` is the number of BFS sources per launch: 1 is the paper's one source per BFS (one launch
per level per source: on a modern GPU the host round trip per level dominates); a larger batch
runs the same kernels in their multi-source form.

Block-size sweep: one kernel (the paper: kernel 7) on one instance per (type, N), blocks 32 … 512
in steps of 32, each point the mean of ``repeats`` runs (paper: 5), next to the theoretical
occupancy of that kernel at that block size (a calculator passed in by the caller, normally
``kernels.gpu.launch_occupancy``: registers and shared memory of the compiled kernel on this GPU).

Without a GPU every kernel runs its CUDA source on the host device (``kernels.gpu``, "CUDA
source run on the CPU"): the hop counts are the GPU's, the times are the host's (no occupancy);
:func:`check_host` refuses, before any work, sizes above the host limit of about 30 s a run.

Qt-free: the Reproduce tab, the CLI and ``benchmarks/bfs.py`` share it.  Rows are yielded as
they finish (live plots, cancel between points).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from ...errors import InvalidParameter
from ...experiments import Claim, Experiment
from . import reproduce as rp
from ..apsp import apsp
from ..apsp.bfs import PAPER_BLOCK, PARENT, kernel_function
from ..data.stats import loglog_slope, normalised_times, summary
from ..apsp import METHODS
from ..data.generators import ring_lattice

KERNELS = tuple(f"gpu-bfs-k{k}" for k in range(1, 8))
#: beyond the paper, for comparison in the same plot
EXTRA = ("gpu-bfs", "gpu-msbfs")
TYPES = tuple(rp.PAPER_EXPONENTS)                     # "alpha-ring", "alpha", "ba"
TYPE_LABELS = rp.TYPE_LABELS
#: paper 000 Figs. 11–13: range of the fitted log–log slopes over its seven kernels
PAPER_SLOPES = {"alpha-ring": (2.04, 2.45), "alpha": (1.49, 1.94), "ba": (1.51, 1.71)}
#: paper 000 §4.3: its sizes (10 instances each)
PAPER_SIZES = (1000, 5000, 10000, 15000, 20000, 25000, 30000)
#: the parent of each kernel in paper 000's evolution (Fig. 10), by registry name
PARENT_NAME = {f"gpu-bfs-k{k}": f"gpu-bfs-k{p}" for k, p in PARENT.items()}
#: what paper 000's text says each change did to the time, per graph type (Fig. 10's percentages
#: are only in the figure): "faster", "slower" or "≈"
PAPER_EFFECT = {
    "gpu-bfs-k2": {"alpha-ring": "faster", "alpha": "slower", "ba": "slower"},
    "gpu-bfs-k3": {"alpha-ring": "slower", "alpha": "faster", "ba": "faster"},
    "gpu-bfs-k4": {"alpha-ring": "slower", "alpha": "faster", "ba": "faster"},
    "gpu-bfs-k5": {"alpha-ring": "faster", "alpha": "≈", "ba": "slower"},
    "gpu-bfs-k6": {"alpha-ring": "slower", "alpha": "faster", "ba": "faster"},
    "gpu-bfs-k7": {"alpha-ring": "faster", "alpha": "slower", "ba": "faster"},
}
#: paper 000 Fig. 15
SWEEP_BLOCKS = tuple(range(32, 513, 32))
SWEEP_SIZES = (10000, 30000)
SWEEP_REPEATS = 5
#: default sizes on the host device (no GPU): each run well inside the host limit
#: (the seven kernels × 3 types × 2 instances: about half a minute of CPU by the host model)
HOST_SIZES = (60, 120, 240)
HOST_SWEEP_SIZES = (200,)
#: per-type sizes of a quick evolution on the host (the GUI's defaults without a GPU): the seven
#: kernels, two instances each, about a minute of CPU by the host model; type (1)'s long paths
#: (many levels) keep it smallest
HOST_QUICK_SIZES = {"alpha-ring": (60, 120, 240), "alpha": (150, 300, 600), "ba": (150, 300, 600)}


def check_kernels(kernels, backend=None) -> list[str]:
    """The kernels, de-duplicated; unknown names refused.  Every kernel runs on any backend (the
    host device without a GPU)."""
    kernels = list(dict.fromkeys(kernels))
    if not kernels:
        raise InvalidParameter("choose at least one BFS kernel")
    for k in kernels:
        if k not in KERNELS + EXTRA:
            raise InvalidParameter(f"unknown BFS kernel {k!r}: use {', '.join(KERNELS + EXTRA)}")
    return kernels


def emulated(backend) -> bool:
    """True when the kernels run their CUDA source on the host device (no GPU backend)."""
    return not (backend is not None and backend.is_gpu)


def check_host(types, sizes, kernels, backend, batch: int = 1, block: int = PAPER_BLOCK, seed0: int = 1,
               params: dict | None = None) -> None:
    """On the host device, refuse (InvalidParameter naming the limit) before any work a kernel
    whose run on the largest size of a type is estimated above the host limit (from N alone first,
    :func:`reproduce.refuse_by_bound`, before generating a graph); a no-op on a GPU."""
    if not emulated(backend) or not sizes:
        return
    n = max(int(x) for x in sizes)
    types = check_types(types)
    runners = [METHODS[k](**options(k, int(batch), int(block))) for k in check_kernels(kernels, backend)]
    for runner in runners:                                 # from N alone first: no graph generated
        rp.refuse_by_bound(runner, n, f"type {types[0]}, N = {n:,}")
    for t in types:
        csr = rp.graph_type(t, params=(params or {}).get(t))(n, int(seed0)).csr()
        for runner in runners:
            try:
                runner.check_host(csr, backend)
            except InvalidParameter as exc:
                raise InvalidParameter(f"type {t}, N = {n:,}: {exc}") from None


def check_types(types) -> list[str]:
    types = list(dict.fromkeys(types))
    if not types:
        raise InvalidParameter("choose at least one graph type")
    for t in types:
        if t not in TYPES:
            raise InvalidParameter(f"unknown graph type {t!r}: use {', '.join(TYPES)}")
    return types


def options(kernel: str, batch: int, block: int) -> dict:
    """The apsp() options of ``kernel`` for ``batch`` sources per launch and ``block`` threads."""
    if kernel in KERNELS:
        return dict(batch=batch, block=block)
    return dict(block=block)                          # gpu-bfs / gpu-msbfs choose their own batch


@dataclass
class EvoRow:
    """One (type, N, instance, kernel) timing."""

    type: str
    n: int
    instance: int
    seed: int
    m: int
    kernel: str
    batch: int
    block: int
    seconds: float            # GPU time without the copy of the result to the host
    launches: int
    mean_path_length: float
    agrees: bool              # hop counts equal the first kernel's on this instance

    def to_dict(self) -> dict:
        return asdict(self)


def warm_up(kernels, backend, block: int = PAPER_BLOCK) -> None:
    """Compile every kernel and make its first call on a tiny graph (not timed)."""
    g = ring_lattice(64, 4)
    for k in kernels:
        apsp(g, k, backend=backend, **options(k, 4, block))


def run_evolution(types, sizes, kernels=KERNELS, instances: int = 3, backend=None, batch: int = 1,
                  block: int = PAPER_BLOCK, seed0: int = 1, connectivity: str = "redraw",
                  params: dict | None = None, cancel: Callable[[], bool] | None = None) -> Iterator[EvoRow]:
    """Yield an EvoRow per (type, N, instance, kernel); instances are drawn as the Reproduce tab
    draws them (``reproduce.draw``: a disconnected type-2 draw is redrawn)."""
    types = check_types(types)
    kernels = check_kernels(kernels, backend)
    sizes = sorted(int(n) for n in sizes)
    if not sizes or sizes[0] < rp.MIN_N or sizes[-1] > rp.MAX_N:
        raise InvalidParameter(f"sizes must lie between {rp.MIN_N} and {rp.MAX_N}")
    if int(instances) < 1 or int(batch) < 1:
        raise InvalidParameter("instances and sources per launch must be ≥ 1")
    makers = {t: rp.graph_type(t, params=(params or {}).get(t)) for t in types}
    warm_up(kernels, backend, block)
    for t in types:
        for n in sizes:
            seed = seed0
            for i in range(int(instances)):
                if cancel is not None and cancel():
                    return
                drawn = rp.draw(makers[t], n, seed, connectivity, cancel=cancel)
                if drawn is None:
                    return
                g, used, _redraws, _frac = drawn
                seed = used + 1
                csr = g.csr()
                ref, mean = None, float("nan")
                for k in kernels:
                    if cancel is not None and cancel():
                        return
                    res = apsp(csr, k, backend=backend, **options(k, int(batch), block))
                    if ref is None:
                        ref, mean = res.dist, float(summary(res.dist)["mean_path_length"])
                    yield EvoRow(t, n, i, used, g.m, k, int(batch), int(block), float(res.kernel_seconds),
                                 int(res.launches), mean, bool(np.array_equal(res.dist, ref)))


def normalised(rows) -> list[float]:
    """Paper 000 Eq. 3 per (type, N, kernel), in row order."""
    out = [0.0] * len(rows)
    groups: dict = {}
    for i, r in enumerate(rows):
        groups.setdefault((r.type, r.n, r.kernel), []).append(i)
    for idx in groups.values():
        t = normalised_times([rows[i].seconds for i in idx], [rows[i].mean_path_length for i in idx])
        for j, i in enumerate(idx):
            out[i] = float(t[j])
    return out


def mean_times(rows) -> dict[tuple[str, str, int], float]:
    """Mean normalised time per (type, kernel, N)."""
    norm = normalised(rows)
    acc: dict = {}
    for r, t in zip(rows, norm):
        acc.setdefault((r.type, r.kernel, r.n), []).append(t)
    return {k: float(np.mean(v)) for k, v in acc.items()}


def fit_slopes(rows) -> dict[tuple[str, str], float]:
    """Log–log slope of the mean normalised time vs N per (type, kernel) with ≥ 2 sizes."""
    by: dict = {}
    for (t, k, n), s in mean_times(rows).items():
        by.setdefault((t, k), {})[n] = s
    return {key: loglog_slope(sorted(d), [d[n] for n in sorted(d)]) for key, d in by.items()
            if len(d) >= 2 and min(d.values()) > 0}


def percent_changes(rows) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (type, kernel) at the largest N of the type: (% change of the time from the kernel's parent,
    % change from kernel 1) — paper 000 Fig. 10's two numbers (negative = faster)."""
    mt = mean_times(rows)
    out = {}
    for t in {r.type for r in rows}:
        top = max(r.n for r in rows if r.type == t)
        here = {k: s for (tt, k, n), s in mt.items() if tt == t and n == top}
        base = here.get("gpu-bfs-k1")
        for k, s in here.items():
            par = here.get(PARENT_NAME.get(k, ""))
            out[t, k] = (100.0 * (s / par - 1.0) if par else float("nan"),
                         100.0 * (s / base - 1.0) if base and k != "gpu-bfs-k1" else float("nan"))
    return out


def effect_word(pct: float, tol: float = 2.0) -> str:
    """"faster" / "slower" / "≈" for a % change (within ± tol %: ≈)."""
    if not np.isfinite(pct):
        return ""
    return "≈" if abs(pct) <= tol else ("faster" if pct < 0 else "slower")


EVO_COLUMNS = tuple(EvoRow.__dataclass_fields__) + ("normalised_seconds",)


# ------------------------------------------------------------------ Fig. 15: block-size sweep
@dataclass
class BlockRow:
    """One (type, N, block) point of the sweep: mean ± std of ``repeats`` runs of one instance."""

    type: str
    n: int
    kernel: str
    block: int
    seconds: float
    std: float
    repeats: int
    normalised: float          # seconds / the instance's mean path (paper Fig. 15 plots Eq. 3 times)
    registers: int
    occupancy: float           # theoretical, 0–1
    limiter: str

    def to_dict(self) -> dict:
        return asdict(self)


#: (kernel, threads per block, dynamic smem) -> (occupancy 0–1, registers per thread, limiter);
#: :func:`kernels.gpu.launch_occupancy` is one (CUDA only: the host device has no occupancy)
OccupancyOf = Callable[[object, int, int], tuple]


def _no_occupancy(kernel, block: int, dynamic_smem: int = 0) -> tuple[float, int, str]:
    """Registers from the compiled kernel, occupancy unknown (no calculator given)."""
    return float("nan"), int(getattr(kernel, "num_regs", 0)), ""


def check_blocks(blocks) -> list[int]:
    blocks = sorted({int(b) for b in blocks})
    if not blocks or blocks[0] < 32 or blocks[-1] > 1024 or any(b % 32 for b in blocks):
        raise InvalidParameter("block sizes must be multiples of 32 in 32 … 1024")
    return blocks


def run_block_sweep(types, sizes=SWEEP_SIZES, blocks=SWEEP_BLOCKS, kernel: str = "gpu-bfs-k7",
                    repeats: int = SWEEP_REPEATS, batch: int = 1, backend=None, seed0: int = 1,
                    cancel: Callable[[], bool] | None = None,
                    occupancy_of: OccupancyOf | None = None) -> Iterator[BlockRow]:
    """Yield a BlockRow per (type, N, block): the same instance timed ``repeats`` times per block.

    ``occupancy_of(kernel, block, dynamic_smem)`` gives each row's theoretical occupancy,
    registers and limiter (pass :func:`kernels.gpu.launch_occupancy`); without it the
    occupancy is NaN and the registers are read from the compiled kernel."""
    types = check_types(types)
    if kernel not in KERNELS + ("gpu-bfs",):
        raise InvalidParameter(f"the sweep takes a BFS kernel of {', '.join(KERNELS + ('gpu-bfs',))} (got {kernel})")
    check_kernels([kernel], backend)
    blocks = check_blocks(blocks)
    if int(repeats) < 1:
        raise InvalidParameter("repeats must be ≥ 1")
    sizes = sorted(int(n) for n in sizes)
    if not sizes or sizes[0] < rp.MIN_N or sizes[-1] > rp.MAX_N:
        raise InvalidParameter(f"sizes must lie between {rp.MIN_N} and {rp.MAX_N}")
    warm_up([kernel], backend)
    for t in types:
        make = rp.graph_type(t)
        for n in sizes:
            if cancel is not None and cancel():
                return
            drawn = rp.draw(make, n, seed0, cancel=cancel)
            if drawn is None:
                return
            csr = drawn[0].csr()
            mean = None
            for b in blocks:
                times = []
                for _ in range(int(repeats)):
                    if cancel is not None and cancel():
                        return
                    res = apsp(csr, kernel, backend=backend, **options(kernel, int(batch), b))
                    times.append(float(res.kernel_seconds))
                    if mean is None:
                        mean = float(summary(res.dist)["mean_path_length"])
                fn = kernel_function(kernel, res.dist.dtype, backend)
                occ, regs, lim = (occupancy_of or _no_occupancy)(fn, b, 0)
                yield BlockRow(t, n, kernel, b, float(np.mean(times)), float(np.std(times)), int(repeats),
                               float(np.mean(times)) / mean if mean else float("nan"), regs, occ, lim)


def best_blocks(rows) -> dict[tuple[str, int], int]:
    """The fastest block size per (type, N)."""
    best: dict = {}
    for r in rows:
        key = (r.type, r.n)
        if key not in best or r.seconds < best[key][1]:
            best[key] = (r.block, r.seconds)
    return {k: b for k, (b, _s) in best.items()}


BLOCK_COLUMNS = tuple(BlockRow.__dataclass_fields__)


class Evolution(Experiment):
    """Paper 000 §4.3, Figs. 10–13: the seven BFS kernels' all-pairs times against N
    (:func:`run_evolution`); the fitted slopes and each change's effect checked against the paper."""

    name = "paper000-bfs-evolution"
    title = "Paper 000 Figs. 10–13: the BFS kernel evolution"
    columns = EVO_COLUMNS
    row_type = EvoRow
    split = ("types", "sizes")

    def rows(self, types, sizes, **settings) -> Iterator[EvoRow]:
        return run_evolution(types, sizes, **settings)

    def table(self, rows):
        for r, t in zip(rows, normalised(rows)):
            yield [getattr(r, c) for c in EVO_COLUMNS[:-1]] + [f"{t:.6g}"]

    def problem(self, row) -> str | None:
        return None if row.agrees else f"{row.kernel} at N = {row.n}: hop counts differ from the first kernel's"

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        fits, pct = fit_slopes(rows), percent_changes(rows)
        out = []
        for t, (lo, hi) in PAPER_SLOPES.items():
            got = {k: v for (tt, k), v in fits.items() if tt == t and k in KERNELS}
            text = f"{TYPE_LABELS[t]}: the kernels' time grows as N^{lo} … N^{hi} (Figs. 11–13)"
            if not got:
                out.append(Claim(text, None, "needs ≥ 2 sizes of this type"))
                continue
            out.append(Claim(text, all(lo <= v <= hi for v in got.values()),
                             ", ".join(f"{k[-2:]} {v:.2f}" for k, v in sorted(got.items()))))
        for k, effects in PAPER_EFFECT.items():
            for t, word in effects.items():
                if (t, k) not in pct or not np.isfinite(pct[t, k][0]):
                    continue
                got = effect_word(pct[t, k][0])
                out.append(Claim(f"{TYPE_LABELS[t]}: {k} is {word} than {PARENT_NAME[k]} (Fig. 10)",
                                 got == word, f"{pct[t, k][0]:+.1f} % ({got})"))
        return out


class BlockSweep(Experiment):
    """Paper 000 Fig. 15: one kernel's time against the threads per block (:func:`run_block_sweep`)."""

    name = "paper000-fig15"
    title = "Paper 000 Fig. 15: time vs threads per block"
    columns = BLOCK_COLUMNS
    row_type = BlockRow
    split = ("types", "sizes")

    def rows(self, types, sizes=SWEEP_SIZES, **settings) -> Iterator[BlockRow]:
        return run_block_sweep(types, sizes, **settings)

    def claims(self, rows) -> list[Claim]:
        rows = list(rows)
        best = best_blocks(rows)
        text = f"a block of {PAPER_BLOCK} threads is good overall (read: within 10 % of the fastest block)"
        if not best:
            return [Claim(text, None, "no points")]
        t = {(r.type, r.n, r.block): r.seconds for r in rows}
        ratios = {k: t[(*k, PAPER_BLOCK)] / t[(*k, b)] for k, b in best.items() if (*k, PAPER_BLOCK) in t}
        out = [Claim(text, all(v <= 1.10 for v in ratios.values()) if ratios else None,
                     "; ".join(f"{k[0]} N = {k[1]:,}: best {best[k]}, {PAPER_BLOCK} at ×{v:.2f}"
                               for k, v in ratios.items()) or f"block {PAPER_BLOCK} not swept")]
        by_type = {}
        for (ty, _n), b in best.items():
            by_type.setdefault(ty, set()).add(b)
        text = "the fastest block differs by graph type"
        out.append(Claim(text, None if len(by_type) < 2 else len({frozenset(v) for v in by_type.values()}) > 1,
                         "; ".join(f"{ty}: {sorted(v)}" for ty, v in by_type.items())))
        return out


EVOLUTION = Evolution()
BLOCK_SWEEP = BlockSweep()
