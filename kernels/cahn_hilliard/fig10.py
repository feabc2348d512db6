"""Paper 001's finite-differencing comparison (§4.9, Fig. 10), re-run on the Cahn–Hilliard stepper.

The paper times the same finite-differencing step on one CPU core, with pThreads and TBB on four
cores, on the CellBE, on one GPU and on two GPUs, as the mean computation time per **1024 time
steps** against the field length N (its N values are only in the plot).  Its claims: the single
core is slowest; pThreads ≈ TBB (TBB slightly slower); the GPUs run "many times faster than the
CPU"; two GPUs are ≈ 2× one GPU for N ≥ 2048 and slower than one GPU below that (halos through
host memory).  Our methods, by the paper's names:

* ``single``     single core — compiled C++ (variant ``cpu-threads``) with one thread;
* ``threads``    pThreads — the same C++, OpenMP row bands on ``threads`` cores;
* ``numpy``      the NumPy array reference (one core; not in the paper, the app's CPU baseline);
* ``gpu``        one GPU — a CUDA kernel variant (default C: one thread per cell, texture reads,
  the paper's Alg. 6);
* ``multi-gpu``  slabs + halo exchange over every GPU (paper 001 §4.6; ``exchange`` host = the
  paper's staging through host memory).

Each point: the run is built (compile, first step untimed), then steps are timed in doubling
chunks until ``budget`` seconds or 1024 steps have passed; the time per 1024 steps is the measured
mean per step × 1024 (``steps`` says how many were timed, so a large N on one core need not take
minutes).  RK2, float32, spinodal start.  ``run_fig10`` yields rows as they finish (live plots,
cancel between points); the benchmark ``benchmarks/ch_fig10.py`` and the GUI's Reproduce tab use it.
"""
from __future__ import annotations

# Imports inside functions: CuPy, so that it stays optional (the GPU count is asked only when Fig. 10 runs).
import platform
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

# CuPy is imported only to count GPUs (it stays optional)
from .. import backend as bk
from ..errors import InvalidParameter
from ..experiments import Claim, Experiment
from .params import CHParams, GPU_VARIANTS
from .simulation import CahnHilliard

DEVICE_RUNS = ("single", "threads", "numpy", "gpu", "multi-gpu")
#: paper 000's layouts (§3.1.4 Fig. 4, Listing 7), each a GPU method: name → CHParams changes
LAYOUTS = {
    "A rectangles": dict(variant="A", block_layout="rectangles"),
    "A strips": dict(variant="A", block_layout="strips"),
    "C rectangles": dict(variant="C", block_layout="rectangles"),
    "C strips": dict(variant="C", block_layout="strips"),
    "B paper tile": dict(variant="B", tile="paper"),
    "B tuned": dict(variant="B", tile="auto"),
    "D paper tile": dict(variant="D", tile="paper"),
    "D tuned": dict(variant="D", tile="auto"),
}
#: the experiments of the Reproduce view: name → its methods
EXPERIMENTS = {"devices": DEVICE_RUNS, "layouts": tuple(LAYOUTS)}
GPU_METHODS = ("gpu", "multi-gpu", *LAYOUTS)
LABELS = {"single": "single core (C++, 1 thread)", "threads": "threads (C++, OpenMP)",
          "numpy": "NumPy reference", "gpu": "1 GPU", "multi-gpu": "multi-GPU"}
#: the paper's device each method stands for
PAPER_NAME = {"single": "single core", "threads": "pThreads", "gpu": "GPU", "multi-gpu": "2 GPUs"}
#: field lengths N: the paper's range on a GPU (powers of two, its plot reaches 4096), a quick set on a CPU
PAPER_SIZES = (256, 512, 1024, 2048, 4096)
QUICK_SIZES = (64, 128, 256, 512)
STEPS = 1024                     # the paper's unit: time per 1024 steps
#: allowed field lengths per dimension
SIZE_RANGE = {2: (16, 16384), 3: (16, 512)}
CSV_COLUMNS = ("method", "n", "dim", "threads", "gpus", "variant", "steps", "seconds", "per_1024", "device")


@dataclass
class Fig10Row:
    """One timed (method, N) point."""

    method: str
    n: int
    dim: int
    threads: int        # CPU threads (cpu-threads methods), else 0
    gpus: int           # GPUs used (gpu methods), else 0
    variant: str        # the stepper variant that ran
    steps: int          # steps timed
    seconds: float      # their wall time
    per_1024: float     # seconds per 1024 steps (seconds / steps × 1024)
    device: str

    def as_dict(self) -> dict:
        return asdict(self)


def cpu_name() -> str:
    """The host processor's model name (Linux /proc/cpuinfo), else the platform's word for it."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def gpu_count() -> int:
    """CUDA GPUs visible (0 without CuPy / a GPU)."""
    try:
        import cupy as cp
        return int(cp.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device: no GPU methods
        return 0


def default_methods(gpus: int | None = None) -> list[str]:
    gpus = gpu_count() if gpus is None else gpus
    return ["single", "threads", "numpy"] + (["gpu"] if gpus else []) + (["multi-gpu"] if gpus > 1 else [])


def check_sizes(sizes, dim: int = 2) -> list[int]:
    lo, hi = SIZE_RANGE[dim]
    out = sorted({int(n) for n in sizes})
    if not out:
        raise InvalidParameter("give at least one field length N")
    bad = [n for n in out if not lo <= n <= hi]
    if bad:
        raise InvalidParameter(f"field length N must lie in {lo} … {hi} for {dim}D (got {bad[0]})")
    return out


def check_methods(methods, gpus: int | None = None) -> list[str]:
    methods = list(dict.fromkeys(methods))
    unknown = [m for m in methods if m not in DEVICE_RUNS and m not in LAYOUTS]
    if unknown:
        raise InvalidParameter(f"unknown method {unknown[0]!r}: use {', '.join(DEVICE_RUNS + tuple(LAYOUTS))}")
    if not methods:
        raise InvalidParameter("choose at least one method")
    gpus = gpu_count() if gpus is None else gpus
    if gpus < 1 and any(m in GPU_METHODS for m in methods):
        raise InvalidParameter("the GPU methods (gpu, multi-gpu and the layouts) need a CUDA GPU (none found)")
    if "multi-gpu" in methods and gpus < 2:
        raise InvalidParameter(f"multi-gpu needs two or more CUDA GPUs (this machine has {gpus})")
    return methods


def method_params(method: str, n: int, dim: int = 2, threads: int = 0, variant: str = "C",
                  gpus: int = 2, exchange: str = "p2p") -> CHParams:
    """The CHParams a method runs (RK2, float32, spinodal, dt 0.01)."""
    base = CHParams(dim=dim, size=n, integrator="rk2", dtype="float32", dt=0.01)
    if variant not in GPU_VARIANTS:
        raise InvalidParameter(f"GPU variant must be one of {', '.join(GPU_VARIANTS)} (got {variant!r})")
    if method == "single":
        return base.with_changes(variant="cpu-threads", threads=1)
    if method == "threads":
        return base.with_changes(variant="cpu-threads", threads=threads)
    if method == "numpy":
        return base
    if method == "gpu":
        return base.with_changes(variant=variant)
    if method == "multi-gpu":
        return base.with_changes(variant=variant, gpus=gpus, exchange=exchange)
    if method in LAYOUTS:
        return base.with_changes(**LAYOUTS[method])
    raise InvalidParameter(f"unknown method {method!r}")


def time_point(method: str, n: int, dim: int = 2, threads: int = 0, variant: str = "C", gpus: int = 2,
               exchange: str = "p2p", budget: float = 1.0, backends: dict | None = None) -> Fig10Row:
    """Time one (method, N) point (see the module docstring)."""
    p = method_params(method, n, dim, threads, variant, gpus, exchange)
    kind = "gpu" if method in GPU_METHODS else "cpu"
    backends = backends if backends is not None else {}
    if kind not in backends:
        backends[kind] = bk.make(kind)
    be = backends[kind]
    sim = CahnHilliard(p, be)
    st = sim.stepper
    multi = hasattr(st, "advance") and getattr(st, "slabs", None)

    def run(k):
        if multi:
            st.advance(k)
            st.synchronize()
        else:
            sim.phi = st.step(sim.phi, k)
            be.synchronize()

    run(1)                                   # compile / first-call costs, untimed
    done, spent, k = 0, 0.0, 1
    while done < STEPS and spent < budget:
        k = min(k, STEPS - done)
        t0 = time.perf_counter()
        run(k)
        spent += time.perf_counter() - t0
        done += k
        k *= 2
    used_threads = getattr(st, "threads", 0)
    used_gpus = len(st.slabs) if multi else (1 if kind == "gpu" else 0)
    return Fig10Row(method, n, dim, int(used_threads), used_gpus, p.variant, done, spent,
                    spent / done * STEPS, be.device_name if kind == "gpu" else cpu_name())


def run_fig10(sizes, methods, dim: int = 2, threads: int = 0, variant: str = "C", gpus: int = 2,
              exchange: str = "p2p", budget: float = 1.0,
              cancelled: Callable[[], bool] | None = None) -> Iterator[Fig10Row]:
    """Rows for every N (ascending) × method, as they finish; stops between points when
    ``cancelled()`` turns true.  A method that cannot run (no compiler …) raises its error."""
    sizes = check_sizes(sizes, dim)
    methods = check_methods(methods)
    backends: dict = {}
    for n in sizes:
        for m in methods:
            if cancelled is not None and cancelled():
                return
            try:
                row = time_point(m, n, dim, threads, variant, gpus, exchange, budget, backends)
            except MemoryError as exc:
                raise InvalidParameter(f"{LABELS[m]} at N = {n}: out of memory ({exc})") from None
            yield row


def speedups(rows, base: str = "single") -> dict[tuple[int, str], float]:
    """Time of ``base`` over each other method's, per (N, method), where both ran."""
    t = {(r.n, r.method): r.per_1024 for r in rows}
    return {(n, m): t[(n, base)] / s for (n, m), s in t.items() if m != base and (n, base) in t and s > 0}


class Fig10(Experiment):
    """Paper 001 §4.9 Fig. 10: the finite-differencing step's time per 1024 steps against N on each
    device (:func:`run_fig10` over :data:`DEVICE_RUNS`); the paper's claims checked."""

    name = "paper001-fig10"
    title = "Paper 001 Fig. 10: finite differencing per device vs N"
    columns = CSV_COLUMNS
    row_type = Fig10Row
    split = ("sizes",)
    #: the runs (methods of :func:`run_fig10`) this experiment times by default
    runs: tuple = DEVICE_RUNS

    def rows(self, sizes, methods=None, **settings) -> Iterator[Fig10Row]:
        return run_fig10(sizes, self.runs if methods is None else methods, **settings)

    def claims(self, rows) -> list[Claim]:
        """Paper 001's Fig. 10 claims against the rows: (claim, holds — None when not measured, evidence)."""
        t = {(r.n, r.method): r for r in rows}
        ns = sorted({r.n for r in rows})
        out: list = []

        def both(a, b):
            return [n for n in ns if (n, a) in t and (n, b) in t]

        # 1. the single core is the slowest of the paper's devices
        others = [m for m in ("threads", "gpu", "multi-gpu") if any(r.method == m for r in rows)]
        pts = [n for n in ns if (n, "single") in t and any((n, m) in t for m in others)]
        if pts:
            lose = [n for n in pts if any((n, m) in t and t[n, m].per_1024 > t[n, "single"].per_1024 for m in others)]
            out.append(("single core is the slowest device", not lose,
                        "at every N" if not lose else f"something slower at N = {', '.join(map(str, lose))}"))
        else:
            out.append(("single core is the slowest device", None, "needs single and another method"))
        # 2. threads beat one core (paper: 4 cores; the clustering runs give 3.7–3.8×)
        pts = both("single", "threads")
        if pts:
            n = pts[-1]
            s = t[n, "single"].per_1024 / t[n, "threads"].per_1024
            th = t[n, "threads"].threads
            out.append(("threads faster than one core", s > 1.0,
                        f"{s:.2f}× on {th} threads at N = {n} (parallel efficiency {s / max(th, 1):.0%})"))
        else:
            out.append(("threads faster than one core", None, "needs single and threads"))
        # 3. the GPU is many times faster than the CPU (we read "many" as ≥ 10× one core at N ≥ 1024)
        pts = [n for n in both("single", "gpu") if n >= 1024] or both("single", "gpu")
        if pts:
            ups = [t[n, "single"].per_1024 / t[n, "gpu"].per_1024 for n in pts]
            out.append(("GPU many (≥ 10) times faster than one core", min(ups) >= 10.0,
                        f"{min(ups):.0f}–{max(ups):.0f}× at N = {pts[0]}–{pts[-1]}"))
        else:
            out.append(("GPU many (≥ 10) times faster than one core", None, "needs single and gpu"))
        # 4. two GPUs ≈ 2× one for N ≥ 2048, slower than one below
        pts = both("gpu", "multi-gpu")
        if pts:
            big = [n for n in pts if n >= 2048]
            small = [n for n in pts if n < 2048]
            ups = {n: t[n, "gpu"].per_1024 / t[n, "multi-gpu"].per_1024 for n in pts}
            if big:
                ok = all(ups[n] >= 1.6 for n in big)
                out.append(("multi-GPU ≈ 2× one GPU for N ≥ 2048", ok,
                            ", ".join(f"{ups[n]:.2f}× at {n}" for n in big)))
            if small:
                slower = [n for n in small if ups[n] < 1.0]
                out.append(("multi-GPU slower than one GPU for N < 2048", len(slower) == len(small),
                            ", ".join(f"{ups[n]:.2f}× at {n}" for n in small)))
        else:
            out.append(("multi-GPU ≈ 2× one GPU for N ≥ 2048", None, "needs two or more GPUs"))
        return [Claim(*c) for c in out]


class Layouts(Fig10):
    """Paper 000 §3.1.4 Fig. 4: the GPU kernel's thread-block layouts (:data:`LAYOUTS`) against N."""

    name = "paper000-ch-layouts"
    title = "Paper 000 §3.1.4: Cahn–Hilliard thread-block layouts vs N"
    runs = tuple(LAYOUTS)

    def claims(self, rows) -> list[Claim]:
        """Paper 000 §3.1.4 against the layout rows: strips and rectangles of width a multiple of 16
        perform alike (we read "similar" as within 25 %); and how the paper's 16×16/12×12 tile compares
        with the tuned layout (no paper claim: the evidence only)."""
        t = {(r.n, r.method): r.per_1024 for r in rows}
        ns = sorted({r.n for r in rows})
        out: list = []
        for v in ("A", "C"):
            pts = [n for n in ns if (n, f"{v} strips") in t and (n, f"{v} rectangles") in t]
            claim = f"{v}: strips ≈ rectangles (within 25 %)"
            if not pts:
                out.append((claim, None, "needs both layouts"))
                continue
            ratio = [t[n, f"{v} strips"] / t[n, f"{v} rectangles"] for n in pts]
            out.append((claim, all(0.8 <= q <= 1.25 for q in ratio),
                        "strips/rectangles time " + ", ".join(f"{q:.2f} at {n}" for q, n in zip(ratio, pts))))
        for v in ("B", "D"):
            pts = [n for n in ns if (n, f"{v} paper tile") in t and (n, f"{v} tuned") in t]
            if pts:
                out.append((f"{v}: the tuned tile beats the paper's 16×16/12×12", all(
                    t[n, f"{v} tuned"] < t[n, f"{v} paper tile"] for n in pts),
                    "paper/tuned time " + ", ".join(f"{t[n, f'{v} paper tile'] / t[n, f'{v} tuned']:.2f} at {n}"
                                                    for n in pts)))
        return [Claim(*c) for c in out]


FIG10 = Fig10()
LAYOUT_TIMES = Layouts()
#: the Reproduce view's experiments by key
EXPERIMENT_OF = {"devices": FIG10, "layouts": LAYOUT_TIMES}
