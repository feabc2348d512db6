"""The Floyd–Warshall family in the APSP registry: papers 002 and 004 (ch. 4), and ours.

Each version is an :class:`FWVersion` registered under its name (family ``"fw"``); its ``help``
names the paper and section.  Paper 002 ("A Study in CUDA Usage"): ``fw-v1`` sequential CPU
(compiled C), ``fw-v2`` one GPU thread, ``fw-v3`` one launch per k on an occupancy-sized grid,
``fw-v4`` one launch with the paper's flag-array grid barrier (``fw-v4-coop``: cooperative-groups
``grid.sync()``), ``fw-v5`` V4 plus D(i,k) in a register.  Paper 004 ch. 4: ``fw`` plain FW
(Fig. 4.1), ``fw-blocked`` iterative three-phase blocked FW, ``fw-recursive`` R-Kleene with
min-plus products, ``fw-mm`` the matrix-multiplication-based BFW (l sub-blocks per block),
``fw-2level`` two-level blocking, ``fw-tuned`` the MM-based BFW with t and l chosen by timing the
real kernels (:mod:`.fw_tune`).  Ours: ``fw-fast``, three phases with register-tiled min-plus
products (integer weights: int32 / DPX).  Versions with a CPU implementation (``cpu = True``)
also run without a GPU: V1 in C, the others in NumPy (:mod:`.fw_cpu`).

The dense-matrix entry point is :func:`kernels.graphs.apsp.fw_core.floyd_warshall`; a graph goes
through :func:`dense_matrix`.  Kernels: :mod:`.fw_gpu`.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InvalidParameter
from . import fw_cpu as cpu_impl
from . import fw_gpu
from ..cuda import HOST_LIMIT_S
from .core import APSPMethod, APSPResult, float_to_hops
from .fw_core import NO_PATH_INT, bytes_needed, solve
from ..data.graph import CSR
from .fw_tune import time_blocked_tiles, tune_mm, tune_fast
from .core import REGISTRY
from ...backend import current

FW_TILES = fw_gpu.BLOCKED_TILES


def dense_matrix(csr: CSR, pad_to: int = 1, weighted: bool = True) -> np.ndarray:
    """float32 adjacency matrix: 0 diagonal, w (or 1) per arc, inf elsewhere; padded with inf."""
    n = csr.n
    npad = -(-n // pad_to) * pad_to
    d = np.full((npad, npad), np.inf, dtype=np.float32)
    w = csr.weights if (weighted and csr.weights is not None) else np.float32(1.0)
    d[csr.sources(), csr.indices] = w
    np.fill_diagonal(d[:n, :n], 0.0)
    return d


def fw_cpu(d: np.ndarray) -> np.ndarray:
    """Plain Floyd–Warshall of a dense float matrix (NumPy; a copy)."""
    d = np.array(d, dtype=np.float32)
    cpu_impl.fw_plain(d, None)
    return d


def device_spec(backend) -> dict:
    """Peak bandwidth B_g (bytes/s) and peak simple ops O_g (ops/s) of the GPU (paper 004 Table 4.1)."""
    p = backend.props or {}
    sms = int(p.get("multiProcessorCount", 132))
    clock = float(p.get("clockRate", 1_755_000)) * 1e3
    mem_clock = float(p.get("memoryClockRate", 2_619_000)) * 1e3
    bus = int(p.get("memoryBusWidth", 5120))
    cc = backend.compute_capability or (9, 0)
    cores = {(7, 0): 64, (8, 0): 64}.get(tuple(cc), 128)
    return dict(B=2.0 * mem_clock * bus / 8.0, O=sms * cores * clock)


def fw_traffic_ratio(n: int, t: int, elem: int = 4) -> float:
    """N_b / N_c of paper 004 (Eqs. 4.1, 4.2): bytes moved per operation for tile t."""
    nb = (4.0 * n ** 3 / t - 2.0 * n ** 2) * elem
    nc = 2.0 * n * (n ** 2 - 2 * t + 1)
    return nb / nc


def tile_by_model(n: int, backend=None, tiles=FW_TILES) -> int:
    """Paper 004's rule: the smallest tile whose traffic per op is below the GPU's B_g / O_g
    (else the largest tile offered)."""
    spec = device_spec(backend) if backend is not None else dict(B=3.35e12, O=2.97e13)
    ratio = spec["B"] / spec["O"]
    for t in sorted(tiles):
        if fw_traffic_ratio(max(n, t), t) < ratio:
            return t
    return max(tiles)


def fw_blocked_device(d, npad: int, tile: int):
    """Blocked FW of a padded float32 device matrix in place (benchmarks); launches."""
    return fw_gpu.run_blocked(fw_gpu.device(current()), d, None, npad, tile)


def fw_naive_device(d, n: int):
    """Plain FW, one launch per k, of a float32 device matrix in place (benchmarks); launches."""
    return fw_gpu.run_naive(fw_gpu.device(current()), d, None, n)


def autotune_tile(n: int, backend, tiles=FW_TILES) -> int:
    """Time one blocked FW per tile on a random dense matrix of size min(n, 1024); keep the fastest."""
    return time_blocked_tiles(n, backend, tiles)


class FWVersion(APSPMethod):
    """One Floyd–Warshall version (family ``fw``).  Subclasses set the class attributes and
    implement ``solve_gpu`` / ``solve_cpu`` (in place on the padded working matrix; they return
    ``(launches, params)``).  Options common to all: ``pred`` (keep predecessors, default True on
    graphs) and ``arith`` (``auto`` | ``float32`` | ``int32`` | ``dpx``)."""

    family: ClassVar[str] = "fw"
    dense = True
    cpu = False
    host = True                           # every version's CUDA kernels also run on the host device
    negative_weights = True               # Floyd–Warshall handles weights < 0 (negative cycles are reported)
    label: ClassVar[str] = ""            # short name in tables and plots
    paper: ClassVar[str] = ""            # "002", "004" or "ours"
    ariths: ClassVar[tuple[str, ...]] = ("float32", "int32")
    max_n: ClassVar[int | None] = None
    options_allowed: ClassVar[dict] = {}  # option → default
    #: host device (CUDA source run on the CPU): seconds per min-plus update (n³ of them), the size
    #: guard's cost model — 1.5 × what ``benchmarks/fw.py --sections host`` measured at n = 512 on this
    #: project's 2-core machine (shared, loaded); a machine with more cores runs faster
    host_s_per_update: ClassVar[float] = 2e-8

    def __init__(self, pred: bool | None = None, arith: str = "auto", emulate=False, **options):
        unknown = set(options) - set(self.options_allowed)
        if unknown:
            ok = ", ".join(("emulate", *self.options_allowed))
            raise InvalidParameter(f"{self.name}: unknown option(s) {', '.join(sorted(unknown))} (options: {ok})")
        super().__init__(**{**self.options_allowed, **options})
        self.pred, self.arith = self.default_pred(options) if pred is None else bool(pred), arith
        if emulate not in (False, True, 0, 1, "0", "1"):
            raise InvalidParameter(f"emulate must be 0 or 1 (got {emulate!r})")
        #: run the CUDA kernels on the host device even where a CPU implementation exists
        self.emulate = emulate in (True, 1, "1")
        if self.emulate and not (self.gpu and self.host):
            raise InvalidParameter(f"{self.name} has no CUDA kernels to run on the CPU (emulate=1)")
        self.validate()

    # ----------------------------------------------------------------- where it runs
    def placement(self, backend) -> str | None:
        """``"gpu"`` (the CUDA kernels on the GPU backend), ``"cpu"`` (the CPU implementation),
        ``"host"`` (the CUDA kernels on the host device: no GPU, and no CPU implementation or
        ``emulate=1``), or None (cannot run here)."""
        if backend is not None and backend.is_gpu and self.gpu:
            return "gpu"
        if self.cpu and not self.emulate:
            return "cpu"
        return "host" if (self.gpu and self.host) else None

    @classmethod
    def host_limit(cls) -> int:
        """The largest n the host device runs within :data:`HOST_LIMIT_S` (the Graphs systems' limit)
        by :attr:`host_s_per_update` (a multiple of 64, at most :attr:`max_n`)."""
        n = int((HOST_LIMIT_S / cls.host_s_per_update) ** (1 / 3)) // 64 * 64
        return max(64, min(n, cls.max_n or n))

    def check_host(self, n: int) -> None:
        """Refuse (InvalidParameter), before any work, a host-device run above :meth:`host_limit`."""
        limit = self.host_limit()
        if n > limit:
            est = self.host_s_per_update * float(n) ** 3
            raise InvalidParameter(f"{self.name} runs its CUDA source on the CPU here (no GPU): n = {n} would take "
                                   f"about {est:.0f} s; the limit is {HOST_LIMIT_S:.0f} s — n ≤ {limit} "
                                   "(or use a GPU)")

    def default_pred(self, options: dict) -> bool:
        """Keep predecessors unless asked not to (``pred=None``)."""
        return True

    def validate(self) -> None:
        """InvalidParameter for an option value out of range, before any work."""

    # ----------------------------------------------------------------- contract
    def pad(self, n: int, gpu: bool) -> int:
        """The matrix is padded to a multiple of this."""
        return 1

    @classmethod
    def scratch_bytes(cls, npad: int, pred: bool) -> int:
        """Device bytes beyond the matrices (scratch blocks)."""
        return 0

    def check(self, n: int, arith: str, gpu: bool) -> None:
        if arith not in self.ariths:
            raise InvalidParameter(f"{self.name} has no {arith} kernels: use {', '.join(self.ariths)}")
        if self.max_n is not None and n > self.max_n:
            raise InvalidParameter(f"{self.name} is for teaching, n ≤ {self.max_n} (got n = {n}); paper 002 "
                                   "does not time it either")

    @classmethod
    def device_bytes(cls, n: int) -> int:
        npad = -(-n // 128) * 128
        return bytes_needed(npad, True, cls.scratch_bytes(npad, True)) + n * n * 4

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        raise NotImplementedError

    def solve_cpu(self, d, p, n, arith, cancel):
        raise NotImplementedError

    # ----------------------------------------------------------------- graphs
    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None) -> APSPResult:
        m = dense_matrix(csr, weighted=weighted)
        res = solve(self, m, backend, self.arith, self.pred, progress, cancel)
        d = res.dist
        if d.dtype == np.int32:
            big = d == NO_PATH_INT
            fin = d[~big]
            d = d.astype(np.float32 if (fin.size == 0 or np.abs(fin).max() < 2 ** 24) else np.float64)
            d[big] = np.inf
        out = d if weighted else float_to_hops(d, csr, dtype)
        return APSPResult(out, self.name, res.seconds, res.kernel_seconds, res.launches, weighted,
                          res.params.get("tile"), res.pred, params=dict(res.params, arith=res.arith))


def gpu_device(backend):
    return fw_gpu.device(backend)


def _tile(value, allowed, what="tile") -> int:
    try:
        t = int(value)
    except (TypeError, ValueError):
        raise InvalidParameter(f"{what} must be one of {allowed} (got {value!r})") from None
    if t not in allowed:
        raise InvalidParameter(f"{what} must be one of {allowed} (got {t})")
    return t


# ------------------------------------------------------------------------- paper 002
class FWV1(FWVersion):
    name = "fw-v1"
    label = "V1"
    paper = "002"
    help = "Paper 002 §III-A (V1, Listing 3): sequential Floyd–Warshall on one CPU thread, compiled C"
    gpu, cpu = False, True

    def solve_cpu(self, d, p, n, arith, cancel):
        return cpu_impl.fw_v1(d, p, cancel), {}


class _Paper002GPU(FWVersion):
    """Paper 002's GPU versions: no CPU implementation (without a GPU their CUDA source runs on the
    host device)."""
    paper = "002"


class FWV2(_Paper002GPU):
    name = "fw-v2"
    host_s_per_update = 8e-9
    label = "V2"
    help = ("Paper 002 §III-B (V2, Listing 4): the same triple loop in one GPU thread — a teaching step, "
            "not timed in the paper (n ≤ 1024)")
    max_n = 1024

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        return fw_gpu.run_v2(gpu_device(backend), d, p, n, cancel), {"grid": 1, "block": 1}


class FWV3(_Paper002GPU):
    name = "fw-v3"
    host_s_per_update = 1.4e-8
    label = "V3"
    help = ("Paper 002 §III-C (V3, Listing 5): one launch per k, 1-D grid of the size "
            "cudaOccupancyMaxPotentialBlockSize gives, a contiguous run of ⌈n²/threads⌉ cells per thread")

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        dev = gpu_device(backend)
        launches = fw_gpu.run_v3(dev, d, p, n, cancel)
        k = fw_gpu.kernel(dev, "fw_paper002.cu", f"fw_v3<{fw_gpu.ctype(d.dtype)},{fw_gpu.BOOL[p is not None]}>")
        grid, block = fw_gpu.v3_launch_config(dev, k)
        return launches, {"grid": grid, "block": block, "work": fw_gpu.work_split(n, grid, block)}


class FWV4(_Paper002GPU):
    name = "fw-v4"
    host_s_per_update = 1.4e-8
    label = "V4"
    help = ("Paper 002 §III-D (V4, Listing 6): one launch, the k loop inside, the paper's per-block flag-array "
            "grid barrier (grid = the co-resident blocks)")
    version, coop = 4, False

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        dev = gpu_device(backend)
        launches = fw_gpu.run_v45(dev, d, p, n, self.version, self.coop, cancel)
        file = "fw_coop.cu" if self.coop else "fw_paper002.cu"
        k = fw_gpu.kernel(dev, file, f"fw_v{self.version}<{fw_gpu.ctype(d.dtype)},{fw_gpu.BOOL[p is not None]},"
                             f"{fw_gpu.BOOL[self.coop]}>")
        grid, block = fw_gpu.resident_config(dev, k)
        return launches, {"grid": grid, "block": block, "work": fw_gpu.work_split(n, grid, block),
                          "barrier": "grid.sync()" if self.coop else "flags"}


class FWV4Coop(FWV4):
    name = "fw-v4-coop"
    host_s_per_update = 1e-8
    label = "V4 coop"
    help = ("Paper 002 §III-D's single launch with a cooperative-groups grid.sync() barrier instead of the "
            "flag array (cooperative launch)")
    coop = True


class FWV5(FWV4):
    name = "fw-v5"
    host_s_per_update = 1.5e-8
    label = "V5"
    help = "Paper 002 §III-E (V5, Listing 7): V4 with D(i,k) kept in a register, flag-array barrier"
    version = 5


# ------------------------------------------------------------------------- paper 004 ch. 4
class FWPlain(FWVersion):
    name = "fw"
    host_s_per_update = 4e-8
    label = "plain"
    paper = "004"
    help = ("Paper 004 Fig. 4.1: plain Floyd–Warshall, one kernel launch per k over the dense matrix "
            "(coalesced grid-stride; CPU: NumPy, one vectorised k step at a time)")
    cpu = True

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        return fw_gpu.run_naive(gpu_device(backend), d, p, n, cancel), {}

    def solve_cpu(self, d, p, n, arith, cancel):
        return cpu_impl.fw_plain(d, p, cancel), {}


class FWBlocked(FWVersion):
    name = "fw-blocked"
    host_s_per_update = 3.5e-8
    label = "BFW"
    paper = "004"
    help = ("Paper 004 §4.2.1 (Figs. 4.2–4.3): iterative three-phase blocked Floyd–Warshall, tile 32 or 64 by "
            "the traffic model (tile=model) or by timing (tile=auto), 32 with predecessors; CPU: NumPy min-plus "
            "over tiles")
    cpu = True
    options_allowed = {"tile": "model"}

    def default_pred(self, options):
        return options.get("tile") in (None, "model", "auto", 32, "32")    # predecessor tiles: t = 32 only

    def validate(self):
        if self.options["tile"] not in ("model", "auto"):
            t = _tile(self.options["tile"], FW_TILES)
            if self.pred and t != 32:
                raise InvalidParameter("fw-blocked keeps predecessors at tile 32 only (pred=False for tile 64)")

    def tile(self, n: int, backend=None, pred: bool | None = None) -> int:
        t = self.options["tile"]
        if self.pred if pred is None else pred:
            return 32                              # predecessor tiles fit shared memory at t = 32
        if t == "model":
            return tile_by_model(n, backend)
        if t == "auto":
            return autotune_tile(n, backend) if backend is not None and backend.is_gpu else 64
        return _tile(t, FW_TILES)

    def pad(self, n, gpu):
        return 64                                  # a multiple of either tile

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        t = self.tile(n, backend, p is not None)
        return fw_gpu.run_blocked(gpu_device(backend), d, p, n, t, cancel), {"tile": t}

    def solve_cpu(self, d, p, n, arith, cancel):
        t = self.tile(n, None, p is not None)
        return cpu_impl.fw_blocked(d, p, t, cancel), {"tile": t}


class _ThesisBFW(FWVersion):
    paper = "004"
    cpu = True
    ariths = ("float32", "int32", "dpx")
    method = "mm"
    options_allowed = {"tile": 32, "l": 1}
    #: the most sub-blocks per thread block (l)
    MAX_L = 1 << 16

    def t(self) -> int:
        return _tile(self.options["tile"], fw_gpu.THESIS_TILES)

    def validate(self):
        self.t()
        if self.options.get("l", 1) != "auto":
            self.l(64, None, "int32")

    def pad(self, n, gpu):
        return 64 if gpu else self.t()

    def l(self, n: int, backend, arith: str, pred: bool = False) -> int:
        """l as given, or ``auto``: timed on this GPU for this tile (:func:`.fw_tune.tune_mm`)."""
        l = self.options["l"]
        if l == "auto":
            if backend is None or not backend.is_gpu or self.method != "mm":
                return 1
            return tune_mm(backend, n, arith, pred, tiles=(self.t(),))["l"]
        try:
            l = int(l)
        except (TypeError, ValueError):
            raise InvalidParameter(f"l must be a whole number ≥ 1 or auto (got {l!r})") from None
        if l < 1:
            raise InvalidParameter(f"l must be ≥ 1 (got {l})")
        if l > self.MAX_L:                  # a kernel argument (int32); more sub-blocks than any matrix has
            raise InvalidParameter(f"l must be ≤ {self.MAX_L} (got {l})")
        return l

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        t = self.t()
        l = min(self.l(n, backend, arith, p is not None), max(1, n // 64))
        launches = fw_gpu.run_thesis(gpu_device(backend), d, p, n, t, l, self.method, arith == "dpx", cancel)
        return launches, {"tile": t, "l": l}

    def solve_cpu(self, d, p, n, arith, cancel):
        t = self.t()
        return cpu_impl.fw_blocked(d, p, t, cancel), {"tile": t}


class FWMM(_ThesisBFW):
    name = "fw-mm"
    host_s_per_update = 2e-8
    label = "MM"
    help = ("Paper 004 §4.3.2: matrix-multiplication-based blocked FW — the non-pivot kernel is Volkov's GEMM "
            "with min-plus, 16×64 sub-blocks, l sub-blocks per thread block (tile t = 16/32/64; l = auto: timed)")


class FWTwoLevel(_ThesisBFW):
    name = "fw-2level"
    host_s_per_update = 4.5e-8
    label = "2L"
    help = ("Paper 004 §4.3.3 (Fig. 4.10): two-level blocking — t′×t′ sub-tiles, t·t′ threads, 2·t·t′ elements "
            "of shared memory per block, l tiles per block (tile t = 16/32/64)")
    method = "2l"


class FWTuned(_ThesisBFW):
    name = "fw-tuned"
    host_s_per_update = 3e-8
    label = "MM auto"
    help = ("Paper 004 §4.4: the MM-based blocked FW with t and l chosen by an auto-tuner that times the real "
            "kernels on this GPU (one K step per candidate); the choice is reported")
    options_allowed = {"tiles": fw_gpu.THESIS_TILES}

    def t(self) -> int:
        return 32

    def validate(self):
        tiles = self.options["tiles"]
        if not isinstance(tiles, (list, tuple)) or not tiles:
            raise InvalidParameter(f"tiles must be a list of {fw_gpu.THESIS_TILES} (got {tiles!r})")
        for t in tiles:
            _tile(t, fw_gpu.THESIS_TILES)

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        choice = tune_mm(backend, n, arith, p is not None, tiles=tuple(self.options["tiles"]))
        t, l = choice["tile"], choice["l"]
        launches = fw_gpu.run_thesis(gpu_device(backend), d, p, n, t, l, "mm", arith == "dpx", cancel)
        return launches, {"tile": t, "l": l, "tuned": choice["table"], "tuning_seconds": choice["seconds"]}


class FWRecursive(FWVersion):
    name = "fw-recursive"
    host_s_per_update = 7e-9
    label = "Rec"
    paper = "004"
    help = ("Paper 004 §4.2.2 (Fig. 4.4; Buluç et al.): recursive blocked FW — quadrants closed recursively, "
            "min-plus products between, the pivot kernel below t_R (t_r = 16/32/64)")
    cpu = True
    ariths = ("float32", "int32", "dpx")
    options_allowed = {"t_r": 32, "cfg": fw_gpu.DEFAULT_GEMM}

    def t_r(self) -> int:
        return _tile(self.options["t_r"], fw_gpu.THESIS_TILES, "t_r")

    def validate(self):
        self.t_r()
        if self.options["cfg"] not in fw_gpu.GEMM_CONFIGS:
            raise InvalidParameter(f"cfg must be one of {', '.join(fw_gpu.GEMM_CONFIGS)} (got {self.options['cfg']!r})")

    def pad(self, n, gpu):
        return self.t_r()

    @classmethod
    def scratch_bytes(cls, npad, pred):
        h = npad // 2 + 64
        return h * h * 4 * (2 if pred else 1)

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        cfg = self.options["cfg"]
        if cfg not in fw_gpu.GEMM_CONFIGS:
            raise InvalidParameter(f"cfg must be one of {', '.join(fw_gpu.GEMM_CONFIGS)} (got {cfg!r})")
        launches = fw_gpu.run_recursive(gpu_device(backend), d, p, n, self.t_r(), cfg, arith == "dpx", cancel)
        return launches, {"t_r": self.t_r(), "cfg": cfg}

    def solve_cpu(self, d, p, n, arith, cancel):
        return cpu_impl.fw_recursive(d, p, self.t_r(), cancel), {"t_r": self.t_r()}


# ------------------------------------------------------------------------- ours
class FWFast(FWVersion):
    name = "fw-fast"
    host_s_per_update = 5e-9
    label = "fast"
    paper = "ours"
    help = ("Ours, beyond papers 002/004: three-phase blocked FW whose panel and non-pivot phases are "
            "register-tiled min-plus GEMMs (tile 64, or 128 with look-ahead from n = 8192; int32/DPX for integer "
            "weights); opt-in persistent=1 (one cooperative kernel, look-ahead inside) or graph=1 (the launches as "
            "one CUDA graph), both bit-identical; CPU: NumPy blocked")
    cpu = True
    ariths = ("float32", "int32", "dpx")
    options_allowed = {"tile": "size", "cfg": fw_gpu.DEFAULT_GEMM, "lookahead": "size", "persistent": 0, "graph": 0}
    #: measured on the H100 (benchmarks/RESULTS.md): below this n tile 64 without look-ahead is
    #: fastest, from it on tile 128 with look-ahead (less matrix traffic per update)
    BIG_N = 8192

    def t(self, n: int = 0) -> int:
        tile = self.options["tile"]
        if tile in ("size", "auto"):
            return 128 if n >= self.BIG_N else 64
        return _tile(tile, fw_gpu.FAST_TILES)

    #: the values of the lookahead option: size (from BIG_N on), or off / on
    LOOKAHEAD_VALUES = ("size", 0, 1, "0", "1", False, True, "false", "true", "no", "yes", "off", "on")

    def validate(self):
        self.t()
        look = self.options["lookahead"]
        if isinstance(look, list) or look not in self.LOOKAHEAD_VALUES or isinstance(look, float):
            raise InvalidParameter(f"lookahead must be size, 0 or 1 (got {look!r})")
        if self.options["cfg"] not in ("auto", *fw_gpu.GEMM_CONFIGS):
            raise InvalidParameter(f"cfg must be auto or one of {', '.join(fw_gpu.GEMM_CONFIGS)} "
                                   f"(got {self.options['cfg']!r})")
        per, graph = self.switch("persistent"), self.switch("graph")      # both validated
        if per and graph:
            raise InvalidParameter("persistent=1 is one launch already: graph=1 is for the launch sequence")
        if self.persistent():
            if self.options["tile"] not in ("size", "auto", *fw_gpu.PERSIST_TILES, *map(str, fw_gpu.PERSIST_TILES)):
                raise InvalidParameter(f"persistent=1 runs tile {' or '.join(map(str, fw_gpu.PERSIST_TILES))}")
            tile = self.persist_tile()
            allowed = fw_gpu.PERSIST_CONFIGS if tile == 64 else fw_gpu.PERSIST_128_CONFIGS
            if self.options["cfg"] not in ("auto", *allowed):
                raise InvalidParameter(f"persistent=1 at tile {tile}: cfg must be one of {', '.join(allowed)} "
                                       f"(got {self.options['cfg']!r})")

    def persist_tile(self) -> int:
        """The persistent kernel's pivot tile: 64 unless tile=128 is asked for (size / auto: 64, the
        measured choice is pending — issue 38)."""
        tile = self.options["tile"]
        return 128 if tile in (128, "128") else fw_gpu.PERSIST_TILE

    def lookahead(self, n: int) -> bool:
        look = self.options["lookahead"]
        if look == "size":
            return n >= self.BIG_N
        return not self.off(look)

    @staticmethod
    def off(value) -> bool:
        return value in (False, 0, "0", "false", "no", "off")

    def switch(self, key: str) -> bool:
        """An on/off option (0/1, yes/no, …); InvalidParameter for anything else.  Issue 38's opt-ins:
        ``persistent=1`` — the whole FW as one cooperative kernel, the look-ahead inside it
        (fw_gpu.run_fast_persistent); ``graph=1`` — the launch sequence captured once into a CUDA graph
        and replayed (fw_gpu.run_fast_graph).  Both bit-identical to the launch sequence."""
        v = self.options[key]
        if isinstance(v, (list, float)) or v not in self.LOOKAHEAD_VALUES[1:]:
            raise InvalidParameter(f"{key} must be 0 or 1 (got {v!r})")
        return not self.off(v)

    def persistent(self) -> bool:
        return self.switch("persistent")

    def pad(self, n, gpu):
        return 128 if gpu else self.t(n)

    def solve_gpu(self, backend, d, p, n, arith, cancel):
        if self.persistent():
            cfg = self.options["cfg"]
            cfg = fw_gpu.DEFAULT_GEMM if cfg == "auto" else cfg
            tile = fw_gpu.persist_tile(self.persist_tile(), p is not None)
            launches = fw_gpu.run_fast_persistent(gpu_device(backend), d, p, n, cfg, arith == "dpx", cancel, tile)
            return launches, {"tile": tile, "cfg": "pred 64x64/4x4" if p is not None else cfg,
                              "lookahead": True, "persistent": True}
        tile, cfg, extra = self.t(n), self.options["cfg"], {}
        if self.options["tile"] == "auto" or cfg == "auto":
            choice = tune_fast(backend, n, arith, p is not None)
            tile = choice["tile"] if self.options["tile"] == "auto" else tile
            cfg = choice["cfg"] if cfg == "auto" else cfg
            extra = {"tuned": choice["table"], "tuning_seconds": choice["seconds"]}
        look = self.lookahead(n)
        graph = self.switch("graph")
        run = fw_gpu.run_fast_graph if graph else fw_gpu.run_fast
        launches = run(gpu_device(backend), d, p, n, tile, cfg, arith == "dpx", look, cancel)
        if graph:
            extra["graph"] = True
        return launches, {"tile": tile, "cfg": "pred 64x64/4x4" if p is not None else cfg, "lookahead": look,
                          **extra}

    def solve_cpu(self, d, p, n, arith, cancel):
        return cpu_impl.fw_blocked(d, p, self.t(n), cancel), {"tile": self.t(n)}


def versions(cpu: bool | None = None) -> list[str]:
    """The FW family's registry names (``cpu=True``: those with a CPU implementation)."""
    return [k for k, c in REGISTRY.items() if getattr(c, "family", "") == "fw" and (cpu is None or c.cpu == cpu)]
