"""Cahn–Hilliard parameters with defaults, validation and the explicit stability limit.

The papers (000, 001) give no values for m, b, u, K, dx, dt or the noise; the
defaults here (unit coefficients, dx = 1, dt = 0.01, noise ±0.1) reproduce the
paper's pictures: a labyrinth for a 50/50 mixture (mean 0 + uniform noise),
droplets for a 25/75 mixture (a random binary ±1 field with 25 % of cells +1).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace

from ..devices import MAX_GPUS
from ..errors import InvalidParameter
from . import temporal

BOUNDARIES = ("periodic", "mirror", "fixed")
#: initial conditions: pfhub = PFHub benchmark 1's cosine field (kernels.cahn_hilliard.pfhub); file = a loaded field
INITIALS = ("spinodal", "droplets", "pfhub", "file")
#: domain shapes (kernels.cahn_hilliard.domains): the whole box, or PFHub 1c's T inside the box
DOMAINS = ("box", "t-shape")
INTEGRATORS = ("euler", "rk2", "spectral")
VARIANTS = ("reference", "cpu-threads", "A", "B", "C", "D", "E")
#: variants that run on host arrays only (the CPU backend) / that are CUDA kernels (the GPU backend;
#: on the CPU backend the same CUDA source runs on the CPU through kernels.gpu's host device)
CPU_VARIANTS = ("reference", "cpu-threads")
GPU_VARIANTS = ("A", "B", "C", "D", "E")
#: how the CUDA variants are labelled where no GPU runs them
EMULATED_LABEL = "(CUDA source run on the CPU)"
VARIANT_NAMES = {
    "reference": "array reference (NumPy / CuPy roll)",
    "cpu-threads": "cpu-threads: compiled C++, OpenMP (paper 001)",
    "A": "A: global memory",
    "B": "B: shared-memory tile + halo",
    "C": "C: texture reads",
    "D": "D: texture + shared memory",
    "E": "E: fused RK2 (both stages, one pass)",
}
#: thread-to-cell layout of the one-thread-per-cell kernels A and C (paper 000 §3.1.4, Fig. 4)
BLOCK_LAYOUTS = ("rectangles", "strips")
#: layout of the shared-memory kernels B and D: auto (2D sweep, 3D march), paper (2D: paper 000
#: Listing 7's 16×16 threads writing the inner 12×12; 3D: a 16×8×8 tile), sweep (2D), march
TILES = ("auto", "paper", "sweep", "march")
#: sources of the initial noise: paper 001's Marsaglia generator (approach 2, identical on NumPy and
#: CuPy) or the array library's own generator (NumPy PCG64 / CuPy's default_rng: differ between backends)
NOISE_SOURCES = ("marsaglia", "xp")
#: RK2 steps kernel E and cpu-threads fuse into one pass over the field (temporal blocking, kernels.cahn_hilliard.temporal):
#: auto (kernels.cahn_hilliard.temporal.auto_steps_per_pass: by dimension and size) or 1–4
STEPS_PER_PASS = ("auto", "1", "2", "3", "4")
INITIAL_MEAN = {"spinodal": 0.0, "droplets": -0.5}
MAX_CELLS = {2: 32768 ** 2, 3: 1024 ** 3}

# Which parameters can change while a simulation runs, and which need a reset.
LIVE = ("m", "b", "u", "K", "dt", "adaptive", "tolerance", "dt_floor", "dt_ceiling", "integrator", "variant", "threads", "block_layout", "tile", "boundary_value",
        "steps_per_pass",
        "gpus", "exchange")
MAX_THREADS = 1024
EXCHANGES = ("p2p", "host", "nccl")
NEEDS_RESET = ("dim", "size", "size_y", "size_z", "domain", "boundary", "initial", "mean", "noise", "seed",
               "noise_source", "dx", "dtype")


def variant_title(variant: str, gpu: bool) -> str:
    """The display name of ``variant`` on a GPU (``gpu``) or CPU backend: the CUDA kernels A–E say
    :data:`EMULATED_LABEL` where their source runs on the CPU."""
    name = VARIANT_NAMES[variant]
    return name if gpu or variant not in GPU_VARIANTS else f"{name} {EMULATED_LABEL}"


def variant_runs(variant: str, gpu: bool) -> bool:
    """Whether ``variant`` runs on a GPU (``gpu``) or CPU backend: everything runs on the CPU backend
    (A–E as CUDA source on the CPU); cpu-threads needs host arrays, so not on the GPU backend."""
    return not gpu or variant != "cpu-threads"


def _f(default, help: str, units: str = "", choices: tuple | None = None, kind=None):
    """A CHParams field with its description in ``metadata`` (help, units, choices, value type):
    what the CLI's options and tooltips are generated from."""
    return field(default=default, metadata={"help": help, "units": units, "choices": choices,
                                            "type": kind or type(default)})


@dataclass(frozen=True)
class CHParams:
    """All inputs of a Cahn–Hilliard run (dimensionless units: lattice spacing dx, time t)."""

    m: float = _f(1.0, "mobility", "lattice units")
    b: float = _f(1.0, "coefficient of −bφ in the bulk chemical potential", "lattice units")
    u: float = _f(1.0, "coefficient of uφ³ in the bulk chemical potential", "lattice units")
    K: float = _f(1.0, "gradient-energy (interface) coefficient", "lattice units")
    dx: float = _f(1.0, "lattice spacing", "length units")
    dt: float = _f(0.01, "time step (explicit Euler/RK2 are stable below dt_max = 2/(m(2bΛ + KΛ²)), "
                         "Λ = 4·dim/dx²)", "time units")
    dim: int = _f(2, "dimensions", choices=(2, 3))
    size: int = _f(256, "cells per side (along x; y and z too unless size_y / size_z are set)", "cells")
    size_y: int = _f(0, "cells along y for a rectangle (0: size, a square/cube)", "cells")
    size_z: int = _f(0, "cells along z in 3D for a box (0: size)", "cells")
    domain: str = _f("box", "domain shape: box (the whole grid) or t-shape (PFHub 1c's T in a 100×120 box at "
                            "dx = 1; cells outside take no part, no flux through the T's edges)", choices=DOMAINS)
    boundary: str = _f("periodic", "boundary condition", choices=BOUNDARIES)
    boundary_value: float = _f(-1.0, "φ held in the ghost cells with the fixed boundary", "φ")
    initial: str = _f("spinodal", "initial condition: spinodal = mean + uniform noise, droplets = a random "
                                  "±1 mixture, pfhub = PFHub benchmark 1's cosine field mapped by c = 0.5 + 0.2φ",
                     choices=INITIALS[:3])
    mean: float | None = _f(None, "initial mean φ (default: 0 for spinodal, −0.5 for droplets)", "φ", kind=float)
    noise: float = _f(0.1, "spinodal noise amplitude (uniform in ±noise)", "φ")
    seed: int = _f(1, "seed of the initial noise's generator")
    noise_source: str = _f("marsaglia", "generator of the initial noise: marsaglia = paper 001's lagged-Fibonacci "
                                        "stream (L = 92 153; the same field on CPU and GPU), xp = NumPy's / CuPy's "
                                        "default_rng (fields differ between the backends)", choices=NOISE_SOURCES)
    integrator: str = _f("rk2", "time integrator: euler, rk2 (midpoint, paper 000) or the semi-implicit "
                                "spectral stepper", choices=INTEGRATORS)
    variant: str = _f("reference", "kernel variant: the array reference, cpu-threads (compiled C++ with OpenMP "
                                   "on host cores, CPU backend) or a CUDA kernel A–E (GPU backend; on the CPU "
                                   "backend the same CUDA source run on the CPU, runs over about 30 s refused)",
                      choices=VARIANTS)
    threads: int = _f(0, "CPU threads of the cpu-threads variant (0: every core; 1: paper 001's single core)",
                      "threads")
    block_layout: str = _f("rectangles", "thread blocks of kernels A and C: rectangles (16×16 cells in 2D, "
                                         "32×4×2 in 3D) or strips (256 consecutive cells of a row), paper 000 "
                                         "Fig. 4", choices=BLOCK_LAYOUTS)
    tile: str = _f("auto", "shared-memory layout of kernels B and D: auto (2D sweep, 3D march), paper (2D: "
                           "16×16 threads writing the inner 12×12, paper 000 Listing 7), sweep (2D only) or "
                           "march", choices=TILES)
    steps_per_pass: str = _f("auto", "RK2 steps kernel E and cpu-threads fuse into one pass over the field "
                                     "(temporal blocking: a halo 4·k wide, the result bit-identical to k single "
                                     f"steps); {temporal.auto_rule()}; a step count not divisible by k runs the "
                                     "rest as single steps", "steps", choices=STEPS_PER_PASS)
    adaptive: bool = _f(False, "adaptive time step (kernels.cahn_hilliard.adaptive): step doubling, each accepted "
                               "step lowers the free energy; dt is then the first step")
    tolerance: float = _f(1e-3, "adaptive step: largest local error allowed per step (RMS over the domain of the "
                                "difference between one step and two half steps)", "φ")
    dt_floor: float = _f(1e-6, "adaptive step: smallest dt (a step that fails there ends the run)", "time units")
    dt_ceiling: float = _f(1e4, "adaptive step: largest dt (explicit integrators: also the stability limit)",
                           "time units")
    dtype: str = _f("float32", "floating-point precision", choices=("float32", "float64"))
    gpus: int = _f(1, "split the field over N GPUs (slabs with halo exchange, paper 001); fewer are used if "
                      "fewer exist; without a GPU, N virtual GPUs on the CPU", "GPUs")
    exchange: str = _f("p2p", "halo exchange between GPUs: p2p (cudaMemcpyPeerAsync), host (staged through "
                              "host memory, as paper 001), nccl", choices=EXCHANGES)

    @property
    def shape(self) -> tuple[int, ...]:
        """Array shape: 2D (ny, nx), 3D (nz, ny, nx); nx = size."""
        ny = self.size_y or self.size
        if self.dim == 2:
            return (ny, self.size)
        return (self.size_z or self.size, ny, self.size)

    @property
    def cells(self) -> int:
        return math.prod(self.shape)

    @property
    def rectangular(self) -> bool:
        """Not a square / cube (some kernel variants need one)."""
        return len(set(self.shape)) > 1

    @property
    def initial_mean(self) -> float:
        if self.mean is not None:
            return float(self.mean)
        return INITIAL_MEAN.get(self.initial, 0.0)

    def validate(self) -> "CHParams":
        """Return self, or raise InvalidParameter naming the bad value and why."""
        def bad(msg):
            raise InvalidParameter(msg)
        for name in ("m", "K", "dx", "dt"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0 and v == v and v != float("inf")):
                bad(f"{name} must be a positive finite number (got {v!r})")
        for name in ("b", "u"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v >= 0 and v != float("inf")):
                bad(f"{name} must be ≥ 0 and finite (got {v!r})")
        if not (isinstance(self.boundary_value, (int, float)) and math.isfinite(self.boundary_value)):
            bad(f"boundary_value must be a finite number (got {self.boundary_value!r})")
        if not stability_limit(self) > 0:
            bad(f"the explicit stability limit dt_max = 2/(m(2bΛ + KΛ²)), Λ = 4·dim/dx², underflows to 0 "
                f"for m = {self.m!r}, K = {self.K!r}, dx = {self.dx!r}: use a larger dx or smaller m, K")
        if self.dim not in (2, 3):
            bad(f"dim must be 2 or 3 (got {self.dim!r})")
        if not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 8:
            bad(f"size must be an integer ≥ 8 cells per side (got {self.size!r})")
        for name in ("size_y", "size_z"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not (v == 0 or v >= 8):
                bad(f"{name} must be 0 (= size) or an integer ≥ 8 cells (got {v!r})")
        if self.size_z and self.dim == 2:
            bad("size_z applies to 3D grids only: leave it 0 in 2D")
        if self.cells > MAX_CELLS[self.dim]:
            bad(f"a {'×'.join(map(str, self.shape))} grid exceeds the supported maximum of "
                f"{MAX_CELLS[self.dim]:,} cells")
        if self.domain not in DOMAINS:
            bad(f"domain must be one of {', '.join(DOMAINS)} (got {self.domain!r})")
        if not isinstance(self.adaptive, bool):
            bad(f"adaptive must be true or false (got {self.adaptive!r})")
        for name in ("tolerance", "dt_floor", "dt_ceiling"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf):
                bad(f"{name} must be a positive finite number (got {v!r})")
        if self.dt_floor > self.dt_ceiling:
            bad(f"dt_floor {self.dt_floor:g} exceeds dt_ceiling {self.dt_ceiling:g}")
        if self.boundary not in BOUNDARIES:
            bad(f"boundary must be one of {', '.join(BOUNDARIES)} (got {self.boundary!r})")
        if self.initial not in INITIALS:
            bad(f"initial must be one of {', '.join(INITIALS)} (got {self.initial!r})")
        if self.integrator not in INTEGRATORS:
            bad(f"integrator must be one of {', '.join(INTEGRATORS)} (got {self.integrator!r})")
        if self.variant not in VARIANTS:
            bad(f"kernel variant must be one of {', '.join(VARIANTS)} (got {self.variant!r})")
        if not isinstance(self.threads, int) or isinstance(self.threads, bool) or \
                not 0 <= self.threads <= MAX_THREADS:
            bad(f"threads must be an integer from 0 (every core) to {MAX_THREADS} (got {self.threads!r})")
        if self.block_layout not in BLOCK_LAYOUTS:
            bad(f"block layout must be one of {', '.join(BLOCK_LAYOUTS)} (got {self.block_layout!r})")
        if self.tile not in TILES:
            bad(f"tile must be one of {', '.join(TILES)} (got {self.tile!r})")
        if str(self.steps_per_pass) not in STEPS_PER_PASS or isinstance(self.steps_per_pass, bool):
            bad(f"steps per pass must be one of {', '.join(STEPS_PER_PASS)} (got {self.steps_per_pass!r})")
        if self.tile == "sweep" and self.dim == 3:
            bad("the sweep tile is 2D only: choose auto, paper or march in 3D")
        if self.integrator == "spectral" and self.boundary == "fixed":
            bad("the semi-implicit spectral stepper needs periodic boundaries (Fourier modes) or mirror ones "
                "(cosine modes)")
        if self.variant == "E" and self.integrator != "rk2":
            bad("kernel E fuses the two RK2 stages: choose the rk2 integrator")
        if not (isinstance(self.noise, (int, float)) and 0 <= self.noise <= 10):
            bad(f"noise amplitude must be in [0, 10] (got {self.noise!r})")
        if self.mean is not None and not (isinstance(self.mean, (int, float)) and -1.5 <= self.mean <= 1.5):
            bad(f"mean φ must be in [−1.5, 1.5] (got {self.mean!r})")
        if self.dtype not in ("float32", "float64"):
            bad(f"dtype must be float32 or float64 (got {self.dtype!r})")
        if not isinstance(self.gpus, int) or not 1 <= self.gpus <= MAX_GPUS:
            bad(f"gpus must be an integer from 1 to {MAX_GPUS} (got {self.gpus!r})")
        if self.exchange not in EXCHANGES:
            bad(f"exchange must be one of {', '.join(EXCHANGES)} (got {self.exchange!r})")
        if self.noise_source not in NOISE_SOURCES:
            bad(f"noise_source must be one of {', '.join(NOISE_SOURCES)} (got {self.noise_source!r})")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 2 ** 63:
            bad(f"seed must be a non-negative integer (got {self.seed!r})")
        return self

    def with_changes(self, **kw) -> "CHParams":
        unknown = set(kw) - {f.name for f in fields(self)}
        if unknown:
            raise InvalidParameter(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        return replace(self, **kw).validate()

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "CHParams":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known}).validate()


def stability_limit(p: CHParams) -> float:
    """Largest stable dt of explicit Euler and RK2 (both: dt·|λ|max ≤ 2 on the real axis).

    Linearising F(φ) = m L(f'(φ) − K Lφ) about the saturated phases φ² = b/u gives
    λ = −m Λ (f'' + K Λ) with f'' = −b + 3uφ² = 2b and Λ ≤ Λmax = 4·dim/dx², the
    largest eigenvalue of the 5-/7-point Laplacian −L.  Hence
    dt_max = 2 / (m (2b Λmax + K Λmax²)).  (Our derivation; the papers give none.)
    """
    dx2 = float(p.dx) * float(p.dx)             # no OverflowError for huge dx (→ inf)
    lam = 4.0 * p.dim / dx2 if dx2 > 0 else math.inf
    fpp = max(2.0 * p.b, -p.b)  # f'' at the saturated phases (0 when b = 0)
    rate = p.m * (fpp * lam + p.K * lam * lam)
    if rate != rate:             # 0 · inf: b = 0 with lam = inf
        rate = math.inf
    return 2.0 / rate if rate > 0 else math.inf
