"""The app's own GPU kernels, across compute systems: compile them all, and time one over block sizes.

This module sits *above* the compute systems, so that none of them needs to import another: each system
records the kernels it compiles in :mod:`kernels.launches` and builds its own
:class:`~kernels.launches.SweepCase`; :mod:`kernels.occupancy.gpu` only reads the registry.

Importing it registers the app's providers in :mod:`kernels.launches` (the main window imports it,
so that the Occupancy workspace reaches other systems' kernels through the registry alone): the
compiler of the CH and RNG kernels, the sweep cases of :data:`SWEEP_CASES` and the occupancy
presets' Floyd–Warshall kernels (``"fw-mm t=64"``, …, :data:`kernels.graphs.apsp.fw_gpu.PRESET_KERNELS`).

Needs CuPy and a CUDA device (at call time; importing it needs neither).  It imports Cahn–Hilliard,
the RNG, Graphs and the occupancy tools inside functions or as lazy registry entries: the main window
imports it at start-up, which then imports no compute system and compiles nothing.
"""
from __future__ import annotations

from functools import partial
from typing import Callable

# Imports inside functions: keep the app's start fast and CuPy optional (the main window imports this
# module at start-up; Cahn–Hilliard, the RNG, Graphs and the occupancy tools load when a kernel is
# compiled or timed).
from . import gpu, launches
from .backend import select
from .launches import Launch, SweepCase
from .registry import Registry


#: kernels a block-size sweep can time: name → SweepCase factory taking a problem size, each owned by
#: its system and named lazily ("module:function": imported at the first sweep, not at start-up)
SWEEP_CASES: Registry[Callable[[int], SweepCase]] = Registry("sweep kernel")
SWEEP_CASES.register("kernels.cahn_hilliard.cuda_stepper:block_sweep_case",
                     name="ch_point")           # Cahn–Hilliard variant A stage kernel on a size² grid
SWEEP_CASES.register("kernels.rng.gpu:block_sweep_case",
                     name="rng_per_thread")     # Marsaglia table-per-thread generator, size streams
SWEEP_KERNELS = tuple(SWEEP_CASES)


def sweep_case(kind: str, size: int) -> SweepCase:
    """The :class:`~kernels.launches.SweepCase` of sweep kernel ``kind`` at problem size ``size``."""
    return SWEEP_CASES.get(kind)(int(size))


def compile_app_kernels(size: int = 64) -> None:
    """Run a few steps of every Cahn–Hilliard GPU variant and draw from each Marsaglia GPU
    generator, so that their kernels are compiled (and recorded in :mod:`kernels.launches`)."""
    from .cahn_hilliard import CahnHilliard, CHParams
    be = select("gpu")                  # BackendUnavailable without CuPy and a device
    from .rng import gpu as rng_gpu
    for dim in (2, 3):
        for variant in ("A", "B", "C", "D", "E"):
            p = CHParams(dim=dim, size=size if dim == 2 else 32, variant=variant, integrator="rk2")
            try:
                CahnHilliard(p.validate(), be).step(2)
            except Exception:  # noqa: BLE001 - a variant that cannot run here is skipped
                continue
    rng_gpu.PerThreadGPU(n_threads=256, seed=1).generate(4)
    rng_gpu.SingleTableGPU(seed=1).generate(1024)
    be.xp.cuda.Device().synchronize()


def fw_preset_launch(key: str) -> Launch:
    """One of paper 004 Table 4.4's non-pivot kernels as compiled for this GPU, with the threads per
    block the thesis launches it with (the occupancy presets)."""
    from .graphs.apsp import fw_gpu
    file, name, threads = fw_gpu.PRESET_KERNELS[key]
    return Launch(f"Graphs {name}", fw_gpu.kernel(gpu.device("cuda"), file, name), threads, 0, "graphs")


#: the occupancy presets' kernels (kernels.graphs.apsp.fw_gpu.PRESET_KERNELS's keys)
FW_PRESETS = tuple(f"{kind} t={t}" for kind in ("fw-mm", "fw-2level") for t in (16, 32, 64))


def register() -> None:
    """Register the app's providers in :mod:`kernels.launches` (done on import; idempotent)."""
    launches.provide_compiler("cahn_hilliard+rng", compile_app_kernels)
    for name in SWEEP_CASES:
        launches.provide_sweep(name, partial(sweep_case, name))
    for key in FW_PRESETS:
        launches.provide(key, partial(fw_preset_launch, key))


def block_size_sweep(kind: str = "ch_point", size: int = 4096, blocks=None, repeats: int = 20) -> list[dict]:
    """Time the app kernel ``kind`` (one of :data:`SWEEP_KERNELS`) at every block size, with the
    theoretical occupancy beside each (:func:`kernels.occupancy.gpu.block_size_sweep`)."""
    from .occupancy.gpu import block_size_sweep as sweep
    return sweep(sweep_case(kind, size), blocks, repeats)


register()
