"""The app's own GPU kernels, across compute systems: compile them all, and time one over block sizes.

This module sits *above* the compute systems (it imports Cahn–Hilliard, the RNG and the
occupancy tools), so that none of them needs to import another: each system records the
kernels it compiles in :mod:`kernels.launches` and builds its own
:class:`~kernels.launches.SweepCase`; :mod:`kernels.occupancy.gpu` only reads the registry.

Needs CuPy and a CUDA device.
"""
from __future__ import annotations

from typing import Callable

from .launches import SweepCase


def _ch_point(size: int) -> SweepCase:
    from .cahn_hilliard.cuda_stepper import block_sweep_case
    return block_sweep_case(size)


def _rng_per_thread(size: int) -> SweepCase:
    from .rng.gpu import block_sweep_case
    return block_sweep_case(size)


#: kernels a block-size sweep can time: name -> SweepCase factory taking a problem size
SWEEP_CASES: dict[str, Callable[[int], SweepCase]] = {
    "ch_point": _ch_point,              # Cahn–Hilliard variant A stage kernel on a size² grid
    "rng_per_thread": _rng_per_thread,  # Marsaglia table-per-thread generator, size streams
}
SWEEP_KERNELS = tuple(SWEEP_CASES)


def compile_app_kernels(size: int = 64) -> None:
    """Run a few steps of every Cahn–Hilliard GPU variant and draw from each Marsaglia GPU
    generator, so that their kernels are compiled (and recorded in :mod:`kernels.launches`)."""
    from .backend import select
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


def block_size_sweep(kind: str = "ch_point", size: int = 4096, blocks=None, repeats: int = 20) -> list[dict]:
    """Time the app kernel ``kind`` (one of :data:`SWEEP_KERNELS`) at every block size, with the
    theoretical occupancy beside each (:func:`kernels.occupancy.gpu.block_size_sweep`)."""
    from .occupancy.gpu import block_size_sweep as sweep
    if kind not in SWEEP_CASES:
        raise ValueError(f"unknown sweep kernel {kind!r}: use {' or '.join(SWEEP_KERNELS)}")
    return sweep(SWEEP_CASES[kind](size), blocks, repeats)
