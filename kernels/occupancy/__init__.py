"""CUDA occupancy: per-compute-capability limits, the calculator, the papers' block-size choosers.

Papers: ``003`` (Solano-Quinde et al. 2011: occupancy of an unstructured-grid solver, Eqs. 2–4,
Tables 1–3), ``004`` (Okuyama 2013 §4.4: block-size auto-tuning of blocked Floyd–Warshall,
Tables 4.4/4.5) and ``000`` (Leist et al. 2009, Listing 1 ``maxOccupancy``).

* :mod:`.specs` — one data table per CC, 1.0 … 12.0, with sources (:mod:`kernels.gpu.specs`: the GPU
  layer's hardware model, which :func:`kernels.gpu.launch_occupancy` uses too).
* :mod:`.calculator` — :func:`occupancy` (active blocks/warps, occupancy, limiters, per-resource
  limits), the three curves, ``max_potential_block_size`` (:mod:`kernels.gpu.calculator`).
* :mod:`.choosers` — paper 000's ``maxOccupancy``, paper 003's model, paper 004's auto-tuner.
* :mod:`.gpu` — the live GPU: device limits, real kernels' resources, the driver's occupancy,
  the app's own kernels, the ground-truth sweep, measured vs theoretical (needs CuPy).
"""
from .calculator import RESOURCES, OccupancyResult, curve, default_axis, max_potential_block_size, occupancy
from .specs import SPECS, ArchSpec, get_spec, known_ccs

__all__ = ["occupancy", "OccupancyResult", "curve", "default_axis", "max_potential_block_size",
           "RESOURCES", "SPECS", "ArchSpec", "get_spec", "known_ccs"]
