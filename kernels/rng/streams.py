"""The RNG approaches of paper 001 §6 as a registry, on one device or several (§6.5).

=========  ==========================================================================  =============
name       what                                                                         paper Table 1
=========  ==========================================================================  =============
``seq``    one stream, L = 97 (Alg. 26–27; vectorised in batches of 33, bit-identical)  CPU 256.45 s
``threads`` S streams with their own L = 97 tables (approach 1's seeds), split over W   pThreads 66.72 s
           host threads, each thread drawing its block of streams (Alg. 28)
``gpu1``   approach 1 (Alg. 29–30): T threads per GPU, one L = 97 table each            CUDA 1 8.40 s,
                                                                                       2 GPUs 4.33 s
``gpu2``   approach 2 (Alg. 31–32): one L = 92 153 table per GPU, 3 launches per L       CUDA 2 15.44 s,
                                                                                       2 GPUs 8.33 s
=========  ==========================================================================  =============

**Seeds** (paper 001 §6.3–6.5).  ``seq`` seeds its table from the user seed (RANMAR ``ijkl``
convention, :func:`~kernels.rng.ranmar.seed_to_ijkl`).  The multi-stream approaches seed a host
RANMAR generator with the user seed and draw distinct (ij, kl) pairs from it
(:func:`~kernels.rng.gpu.thread_seeds`): approach 1 on G GPUs takes G·T pairs, device g the
pairs g·T … (g+1)·T − 1 ("host generates T×(#GPUs) seeds"); approach 2 takes one pair per
device ("user seed → host RNG → one seed per device").  The pairs are prefix-stable, so

* ``gpu1`` on G GPUs with T threads each gives exactly the streams of ``gpu1`` on one GPU with
  G·T threads, and ``threads`` with S streams gives the first S of them;
* ``gpu2`` on G GPUs gives G streams, device g's equal to the one-GPU stream of table pair g —
  the one-GPU run is the first device's stream.

**Output order** (``generate(count)``): streams one after another, ``count`` split evenly
(``ceil(count / streams)`` per stream, the tail cut), i.e. the rows of a (streams, n) matrix.

On the NumPy backend ``gpu1``/``gpu2`` run *the same CUDA source on the CPU* (the host device of
:mod:`kernels.gpu`: the kernels compiled by the host C++ compiler after a CUDA prelude) on *virtual
GPUs* (:mod:`kernels.devices`): same seeds, same streams, same split and gather — integer
arithmetic only, so the numbers equal the GPU's bit for bit, and equal their NumPy twins
(:class:`RanmarVec` with a table per stream, used when no host compiler is installed).  The host path
refuses counts that would take more than about :data:`EMULATED_SECONDS` s
(:meth:`RNGApproach.check_count`).
"""
from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import numpy as np

from .. import devices as dv
from .. import gpu as layer
from ..errors import BackendUnavailable, InvalidParameter
from ..registry import Registry
from .gpu import T_PAPER, PerThreadGPU, SingleTableGPU, thread_seeds, to_host
from .ranmar import L97, L_BIG, ONE, RanmarVec, fill_tables, seed_to_ijkl, table_for, to_float

#: name → approach class, in registration order (a :class:`kernels.registry.Registry`, read like a dict)
APPROACHES: Registry = Registry("RNG approach")
#: paper 001 Table 1: numbers generated (and discarded) per timing
PAPER_COUNT = 24_000_000_000
#: RANMAR's published check (F. James 1990): seeds 1802, 9373, draws 20 001 … 20 006 × 2^24
TEST_VECTOR = (6533892, 14220222, 7275067, 6172232, 8354498, 10633180)
#: numbers per stream and chunk when a NumPy engine discards (bounds memory)
CHUNK = 1 << 22
MAX_STREAMS = 1 << 22
#: the host path (CUDA source run on the CPU) refuses work it would need longer than this for
EMULATED_SECONDS = 30.0
#: what the host shows for the kernels (GUI / CLI notes)
EMULATED_LABEL = "CUDA source run on the CPU"


def register(cls):
    """Class decorator: add an approach to :data:`APPROACHES` under its ``name`` (an empty or taken
    name is a ValueError)."""
    return APPROACHES.register(cls)


class VecEngine:
    """NumPy engine over a block of streams (a table per row), or one stream (1-D table)."""

    def __init__(self, table: np.ndarray, lag: int):
        self.gen = RanmarVec(lag=lag, table=table)
        self.rows = 1 if table.ndim == 1 else table.shape[0]

    def generate(self, n: int, dtype=np.float32) -> np.ndarray:
        return to_float(self.gen.integers24(n), np, dtype).reshape(self.rows, n)

    def discard(self, n: int) -> None:
        per = max(1, CHUNK // self.rows)
        for a in range(0, n, per):
            self.gen.integers24(min(per, n - a))

    def synchronize(self) -> None:
        pass


class DeviceEngine:
    """A CUDA generator (PerThreadGPU / SingleTableGPU) on one device of the GPU layer — the GPU, or
    the host running the same CUDA source; results copied to host memory."""

    def __init__(self, gen, rows: int):
        self.gen, self.rows = gen, int(rows)

    def generate(self, n: int, dtype=np.float32) -> np.ndarray:
        return to_host(self.gen.generate(n, dtype)).reshape(-1, n)

    def discard(self, n: int) -> None:
        self.gen.discard(n)

    def synchronize(self) -> None:
        self.gen.dev.synchronize()


class RNGApproach:
    """One generator approach.  ``RNGApproach(seed, backend, gpus=1, streams=None, workers=None)``
    builds its tables (not timed: :attr:`setup_seconds`); :meth:`generate` / :meth:`discard` draw
    ``count`` numbers over all its streams (see the module doc for the order)."""

    name: ClassVar[str] = ""
    help: ClassVar[str] = ""
    lag: ClassVar[int] = L97
    #: the paper's Table 1 row and seconds on one device / on two GPUs (None: not in the paper)
    paper_row: ClassVar[str] = ""
    paper_seconds: ClassVar[float | None] = None
    paper_multi_seconds: ClassVar[float | None] = None
    paper_multi_row: ClassVar[str] = ""
    #: runs on (real or virtual) GPUs, one engine per device
    on_devices: ClassVar[bool] = False
    #: numbers per second the host path (CUDA source run on the CPU) draws, measured on a 2-core
    #: machine (the size guard's estimate); None: no host path
    emulated_rate: ClassVar[float | None] = None

    def __init__(self, seed: int = 1, backend=None, gpus: int = 1, streams: int | None = None,
                 workers: int | None = None):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InvalidParameter(f"seed must be a non-negative integer (got {seed!r})")
        if not isinstance(gpus, (int, np.integer)) or isinstance(gpus, bool) or not 1 <= gpus <= dv.MAX_GPUS:
            raise InvalidParameter(f"gpus must be an integer from 1 to {dv.MAX_GPUS} (got {gpus!r})")
        if gpus > 1 and not self.on_devices:
            raise InvalidParameter(f"--gpus applies to gpu1 and gpu2; {self.name} runs on the CPU")
        self.seed, self.backend = int(seed), backend
        self.notes: list[str] = []
        self.devices = [0]
        self.gpu = bool(backend is not None and backend.is_gpu and self.on_devices)
        #: the kernels.gpu Device the CUDA kernels run on (None: NumPy engines)
        self.device = None
        if self.on_devices:
            self.devices, notes = dv.resolve_devices(int(gpus), backend, "streams' devices",
                                                     "same seeds and streams, the CUDA source on the host")
            self.notes += notes
            if self.gpu:
                self.device = layer.device("cuda")
            else:
                try:
                    self.device = layer.device("host")
                    self.notes.append(f"{self.name} on the CPU backend: {EMULATED_LABEL} on {len(self.devices)} "
                                      "virtual GPU(s), bit-identical to the GPU")
                except BackendUnavailable as exc:
                    self.notes.append(f"{self.name} on the CPU backend: its NumPy twin (bit-identical to the "
                                      f"CUDA kernel) — the host path is unavailable: {exc}")
        t0 = time.perf_counter()
        self.engines = self._build(streams, workers)
        self.setup_seconds = time.perf_counter() - t0

    # --- to override
    def _build(self, streams, workers) -> list:
        raise NotImplementedError

    def stream_counts(self) -> list[int]:
        """Streams per engine (one engine per device or host thread)."""
        return [e.rows for e in self.engines]

    @property
    def emulated(self) -> bool:
        """The CUDA kernels run on the host (CUDA source run on the CPU)."""
        return bool(self.device is not None and self.device.emulated)

    def limit(self) -> int | None:
        """The most numbers one call may draw on the host path (about :data:`EMULATED_SECONDS`), or
        None (no limit: GPU or NumPy engines)."""
        if not self.emulated or not self.emulated_rate:
            return None
        return int(self.emulated_rate * EMULATED_SECONDS)

    def check_count(self, count: int) -> None:
        """Refuse (InvalidParameter) a draw the host path would need more than about
        :data:`EMULATED_SECONDS` s for, naming the limit."""
        most = self.limit()
        drawn = self.streams * self.per_stream(count)
        if most is not None and drawn > most:
            raise InvalidParameter(f"{self.name} ({EMULATED_LABEL}): at most {most:.3g} numbers per "
                                   f"call (about {EMULATED_SECONDS:.0f} s), asked for {drawn:.3g}; lower the "
                                   "count or run on a GPU")

    # --- common
    @property
    def streams(self) -> int:
        return int(sum(self.stream_counts()))

    def per_stream(self, count: int) -> int:
        return max(1, math.ceil(int(count) / self.streams))

    def _each(self, fn) -> list:
        if self.emulated:      # virtual GPUs of the host path: one after another (each launch uses every core)
            return [fn(e) for e in self.engines]
        if self.on_devices:
            return dv.run_on_devices(self.backend if self.gpu else None, self.devices,
                                     lambda r, d: fn(self.engines[r]))
        return self._pool(fn)

    def _pool(self, fn) -> list:
        if len(self.engines) == 1:
            return [fn(self.engines[0])]
        with ThreadPoolExecutor(len(self.engines)) as pool:
            return list(pool.map(fn, self.engines))

    def generate(self, count: int, dtype=np.float32) -> np.ndarray:
        """The next ``count`` numbers as a host array (streams one after another)."""
        self.check_count(count)
        n = self.per_stream(count)

        def draw(e):
            out = e.generate(n, dtype)
            e.synchronize()
            return out

        parts = self._each(draw)
        return np.concatenate([p.reshape(-1, n) for p in parts]).reshape(-1)[:int(count)]

    def discard(self, count: int) -> None:
        """Draw and drop ``count`` numbers (paper 001 Table 1's measurement)."""
        self.check_count(count)
        n = self.per_stream(count)

        def drop(e):
            e.discard(n)
            e.synchronize()

        self._each(drop)

    def describe(self) -> str:
        where = (f"{len(self.devices)} {'GPU' if self.gpu else 'virtual GPU'}(s)" if self.on_devices
                 else f"{len(self.engines)} host thread(s)")
        if self.emulated:
            where += f" ({EMULATED_LABEL})"
        return f"{self.name}: {self.streams} stream(s), L = {self.lag}, on {where}"


@register
class Sequential(RNGApproach):
    name = "seq"
    help = ("one Marsaglia stream, L = 97 (paper 001 Alg. 26–27), drawn in batches of 33 by NumPy — "
            "bit-identical to the one-number-at-a-time loop")
    paper_row, paper_seconds = "CPU (1 core)", 256.45

    def _build(self, streams, workers):
        if streams not in (None, 1):
            raise InvalidParameter("seq is one stream: leave --streams out")
        return [VecEngine(table_for(*seed_to_ijkl(self.seed), L97), L97)]


def _check_streams(streams, default: int) -> int:
    s = default if streams is None else streams
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 1 <= s <= MAX_STREAMS:
        raise InvalidParameter(f"streams must be an integer from 1 to {MAX_STREAMS} (got {streams!r})")
    return int(s)


@register
class Threads(RNGApproach):
    name = "threads"
    help = ("S streams with their own L = 97 tables, distinct seeds from a host RANMAR generator, split "
            "over W host threads (paper 001 Alg. 28, pThreads); the same streams as gpu1")
    paper_row, paper_seconds = "pThreads (4 cores)", 66.72
    DEFAULT_STREAMS = 4096
    STREAMS_PER_THREAD = 1024

    def _build(self, streams, workers):
        S = _check_streams(streams, self.DEFAULT_STREAMS)
        # NumPy releases the GIL only inside large array operations, so by default each thread takes
        # at least STREAMS_PER_THREAD streams: 32 threads of 128 streams drew 1.6e7 numbers/s on a
        # 32-core host, 5× fewer than 2 threads of 2048 streams on a 2-core machine (benchmarks/RESULTS.md)
        W = int(workers or max(1, min(os.cpu_count() or 1, S // self.STREAMS_PER_THREAD)))
        if W < 1:
            raise InvalidParameter(f"threads must be ≥ 1 (got {workers})")
        W = min(W, S)
        ij, kl = thread_seeds(self.seed, S)
        return [VecEngine(fill_tables(ij[a:b], kl[a:b], L97), L97) for a, b in dv.split_rows(S, W)]


@register
class PerThreadTables(RNGApproach):
    name = "gpu1"
    help = ("CUDA approach 1 (paper 001 Alg. 29–30): T threads per GPU (paper 30 720), one L = 97 table "
            "each, interleaved for coalescing; G GPUs take the seeds g·T … (g+1)·T − 1; on the CPU backend the "
            "same CUDA source run on the CPU")
    paper_row, paper_seconds, paper_multi_seconds = "CUDA 1 (per-thread tables)", 8.40, 4.33
    paper_multi_row = "Multi-GPU 1"
    on_devices = True
    emulated_rate = 1e7               # measured 2.5–3e7 numbers/s (T = 30 720, 2 shared cores)

    def _build(self, streams, workers):
        T = _check_streams(streams, T_PAPER)
        G = len(self.devices)
        ij, kl = thread_seeds(self.seed, G * T)
        if self.device is None:
            return [VecEngine(fill_tables(ij[g * T:(g + 1) * T], kl[g * T:(g + 1) * T], L97), L97)
                    for g in range(G)]

        def build(rank, dev):
            sl = slice(rank * T, (rank + 1) * T)
            return DeviceEngine(PerThreadGPU(T, lag=L97, seeds=(ij[sl], kl[sl]), device=self.device), T)

        if self.emulated:
            return [build(r, d) for r, d in enumerate(self.devices)]
        return dv.run_on_devices(self.backend, self.devices, build)

    @staticmethod
    def vector_draws(device, ij: int, kl: int, lag: int, skip: int, n: int) -> list[int]:
        """Draws ``skip + 1 … skip + n`` (units of 2^-24) of the kernel's stream seeded (ij, kl)."""
        g = PerThreadGPU(1, lag=lag, seeds=(np.array([ij]), np.array([kl])), device=device)
        g.discard(skip)
        return (to_host(g.generate(n, np.float64)).ravel() * ONE).astype(np.int64).tolist()


@register
class SingleTable(RNGApproach):
    name = "gpu2"
    help = ("CUDA approach 2 (paper 001 Alg. 31–32): one L = 92 153 table per GPU, 3 launches of "
            "30 718 / 30 718 / 30 717 threads per L numbers; one table seed per device from the user seed; on the "
            "CPU backend the same CUDA source run on the CPU")
    paper_row, paper_seconds, paper_multi_seconds = "CUDA 2 (single big table)", 15.44, 8.33
    paper_multi_row = "Multi-GPU 2"
    lag = L_BIG
    on_devices = True
    emulated_rate = 5e6               # measured 0.8–2e7 numbers/s (3 launches per L, 2 shared cores)

    def _build(self, streams, workers):
        if streams not in (None, 1):
            raise InvalidParameter("gpu2 is one stream per GPU: leave --streams out")
        G = len(self.devices)
        ij, kl = thread_seeds(self.seed, G)
        tables = [table_for(int(ij[g]), int(kl[g]), L_BIG) for g in range(G)]
        if self.device is None:
            return [VecEngine(t, L_BIG) for t in tables]

        def build(rank, dev):
            return DeviceEngine(SingleTableGPU(lag=L_BIG, table=tables[rank], device=self.device), 1)

        if self.emulated:
            return [build(r, d) for r, d in enumerate(self.devices)]
        return dv.run_on_devices(self.backend, self.devices, build)

    @staticmethod
    def vector_draws(device, ij: int, kl: int, lag: int, skip: int, n: int) -> list[int]:
        """Draws ``skip + 1 … skip + n`` (units of 2^-24) of the kernel's stream seeded (ij, kl)."""
        g = SingleTableGPU(lag=lag, table=table_for(ij, kl, lag), device=device)
        g.discard(skip)
        return (to_host(g.generate(n, np.float64)) * ONE).astype(np.int64).tolist()


def make(name: str, seed: int = 1, backend=None, gpus: int = 1, streams=None, workers=None) -> RNGApproach:
    """The approach ``name`` built for ``seed`` (one error naming the choices when unknown)."""
    cls = APPROACHES.get(name)       # unknown: InvalidParameter naming the choices
    return cls(seed, backend, gpus, streams, workers)


def test_vector(approach: RNGApproach) -> dict:
    """RANMAR's published vector through the approach's own code path (its engine type on its
    backend): a table from seeds (1802, 9373), L = 97, 20 000 draws, then 6 compared."""
    lag = L97
    if approach.device is not None:
        got = type(approach).vector_draws(approach.device, 1802, 9373, lag, 20000, 6)
        path = f"CUDA kernel ({EMULATED_LABEL})" if approach.emulated else "CUDA kernel"
    else:
        e = VecEngine(table_for(1802, 9373, lag), lag)
        e.discard(20000)
        got = (e.generate(6, np.float64).ravel() * ONE).astype(np.int64).tolist()
        path = "NumPy"
    return dict(expected=list(TEST_VECTOR), got=got, passed=got == list(TEST_VECTOR), path=path)


def timed(approach: RNGApproach, count: int, store: bool = False):
    """(seconds, numbers drawn, the array or None) for ``count`` numbers, discarded (Table 1's
    way) or stored; discarding draws ``streams × ceil(count / streams)``."""
    t0 = time.perf_counter()
    out = approach.generate(count) if store else approach.discard(count)
    sec = time.perf_counter() - t0
    drawn = int(count) if store else approach.streams * approach.per_stream(count)
    return sec, drawn, out
