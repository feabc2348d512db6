"""Quality checks and paper 001's Table 1 re-run for the Marsaglia generators (paper 001 §6.7).

* :func:`check` — histogram, χ² uniformity test (:func:`scipy.stats.chisquare` on equal-width
  bins), lag correlations of one stream, and the correlation *between* streams — the check that
  shows why per-thread streams need distinct seeds: streams that share a seed are identical,
  so their cross-correlation is 1, and pooling them multiplies every bin count by the number of
  streams, which the χ² test rejects (statistic × S).
* :func:`shared_seed` — S streams with one table (the mistake), for the demonstration.
* :func:`table1` — time each approach on ``count`` numbers (discarded, as the paper does) and
  extrapolate to the paper's 24·10⁹, the paper's seconds beside it.
"""
from __future__ import annotations

# Imports inside functions: SciPy's statistics load only when a quality check runs (slow to import).
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from ..errors import InvalidParameter
from . import streams as st
from .ranmar import L97, RanmarVec, seed_to_ijkl, table_for, to_float


def chi2_uniform(x: np.ndarray, bins: int = 64) -> tuple[float, int, float]:
    """Pearson χ² of ``x`` (in [0, 1)) against the uniform law on ``bins`` equal bins:
    (statistic, degrees of freedom, p-value)."""
    from scipy.stats import chisquare          # here, not at import: keeps the GUI's start-up fast
    counts = np.histogram(np.asarray(x, np.float64).ravel(), bins=bins, range=(0.0, 1.0))[0]
    res = chisquare(counts)
    return float(res.statistic), bins - 1, float(res.pvalue)


def lag_correlations(x: np.ndarray, lags=(1, 2, 3, 5, 8, 13, 24, 33, 64, 97)) -> dict[int, float]:
    """Pearson correlation of x[i] with x[i + lag] for each lag (≈ N(0, 1/n) for a good stream)."""
    x = np.asarray(x, np.float64).ravel()
    out = {}
    for k in lags:
        if 0 < k < x.size - 2:
            a, b = x[:-k], x[k:]
            sa, sb = a.std(), b.std()
            out[int(k)] = float(((a - a.mean()) * (b - b.mean())).mean() / (sa * sb)) if sa > 0 and sb > 0 else 1.0
    return out


def cross_correlation(streams: np.ndarray) -> float:
    """Mean Pearson correlation between neighbouring streams (rows), same positions."""
    s = np.asarray(streams, np.float64)
    if s.ndim != 2 or s.shape[0] < 2:
        return 0.0
    c = [np.corrcoef(s[i], s[i + 1])[0, 1] for i in range(s.shape[0] - 1)]
    return float(np.nanmean(c))


@dataclass
class Quality:
    """The checks of one sample: ``streams`` rows of ``n`` numbers."""

    streams: int
    n: int
    hist: list              # counts in ``bins`` equal bins of [0, 1)
    chi2: float
    dof: int
    p_value: float
    lags: dict              # lag → correlation of stream 0
    cross: float            # mean correlation of neighbouring streams
    identical_streams: int  # rows equal to row 0 (other than itself)
    mean: float
    var: float              # 1/12 ≈ 0.0833 for U(0, 1)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def passes(self) -> bool:
        """χ² not rejected at 0.1 % and streams distinct (a crude verdict for a lecture)."""
        return self.p_value > 1e-3 and self.identical_streams == 0 and abs(self.cross) < 0.1


def check(sample: np.ndarray, bins: int = 64) -> Quality:
    """All checks of a (streams, n) sample (1-D: one stream); χ² over every number pooled."""
    s = np.atleast_2d(np.asarray(sample))
    if s.size < 2:
        raise InvalidParameter("need at least two numbers to check")
    chi, dof, p = chi2_uniform(s, bins)
    hist = np.histogram(s.astype(np.float64).ravel(), bins=bins, range=(0.0, 1.0))[0]
    same = int(sum(np.array_equal(s[0], s[i]) for i in range(1, s.shape[0])))
    return Quality(s.shape[0], s.shape[1], hist.tolist(), chi, dof, p, lag_correlations(s[0]),
                   cross_correlation(s), same, float(s.mean()), float(s.var()))


def shared_seed(seed: int, n_streams: int, n: int, dtype=np.float32) -> np.ndarray:
    """(n_streams, n): every stream seeded with the *same* table — the mistake distinct
    per-thread seeds (paper 001 Alg. 29) avoid.  All rows are equal."""
    table = table_for(*seed_to_ijkl(seed), L97)
    g = RanmarVec(lag=L97, table=np.broadcast_to(table, (int(n_streams), L97)))
    return to_float(g.integers24(n), np, dtype)


def distinct_seeds(seed: int, n_streams: int, n: int, dtype=np.float32) -> np.ndarray:
    """(n_streams, n): per-thread streams with distinct seeds (approach 1's seeding)."""
    return st.make("threads", seed, None, streams=int(n_streams), workers=1).generate(
        int(n_streams) * int(n), dtype).reshape(int(n_streams), int(n))


# ------------------------------------------------------------------ Table 1 re-run
@dataclass
class Table1Row:
    approach: str
    gpus: int
    devices: str            # "GPU" / "virtual GPU" / "CPU"
    streams: int
    numbers: int            # drawn in the timed run
    seconds: float
    setup_seconds: float
    rate: float             # numbers / s
    extrapolated: float     # seconds for 24·10⁹ at this rate
    paper_seconds: float | None
    paper_row: str
    test_vector: bool

    def to_dict(self) -> dict:
        return asdict(self)


CSV_COLUMNS = tuple(Table1Row.__dataclass_fields__)


def table1(count: int, approaches=("seq", "threads", "gpu1", "gpu2"), backend=None, gpus=(1,),
           seed: int = 1, streams: dict | None = None, workers: int | None = None, repeats: int = 1,
           cancel: Callable[[], bool] | None = None) -> Iterator[Table1Row]:
    """Yield a :class:`Table1Row` per (approach, GPU count): ``count`` numbers discarded,
    best of ``repeats`` after one untimed warm-up draw; CPU approaches run for ``gpus == 1`` only."""
    count = int(count)
    if count < 1:
        raise InvalidParameter(f"count must be ≥ 1 (got {count})")
    classes = [st.APPROACHES.get(name) for name in approaches]   # unknown: InvalidParameter naming the choices
    for name, cls in zip(approaches, classes):
        done: set[int] = set()
        for g in (gpus if cls.on_devices else (1,)):
            if cancel is not None and cancel():
                return
            a = st.make(name, seed, backend, g, (streams or {}).get(name), workers)
            if len(a.devices) in done:             # fewer GPUs than asked for: the same run again
                continue
            done.add(len(a.devices))
            a.discard(min(count, 100_000))                        # warm-up: compile, first touch
            best = min(st.timed(a, count)[0] for _ in range(max(1, int(repeats))))
            drawn = a.streams * a.per_stream(count)
            paper = cls.paper_multi_seconds if len(a.devices) > 1 else cls.paper_seconds
            if len(a.devices) > 2:
                paper = None
            kind = ("GPU" if a.gpu else "virtual GPU") if cls.on_devices else "CPU"
            if a.emulated:
                kind += f" ({st.EMULATED_LABEL})"
            yield Table1Row(name, len(a.devices), kind, a.streams, drawn, best, a.setup_seconds,
                            drawn / best if best > 0 else float("inf"),
                            st.PAPER_COUNT * best / drawn, paper,
                            cls.paper_multi_row if len(a.devices) > 1 else cls.paper_row,
                            st.test_vector(a)["passed"])
