"""Marsaglia lagged-Fibonacci random numbers (paper 001 §6).

* :class:`Ranmar` — sequential Marsaglia–Zaman generator, Alg. 26–27, exact
  integer arithmetic in units of 2^-24 (published RANMAR test vector holds).
* :class:`RanmarVec` — vectorised NumPy generator, same stream bit for bit
  (batches of <= L//3+1 draws as in Alg. 31–32).
* :func:`gpu_per_thread` / :class:`PerThreadGPU` — CUDA approach 1
  (Alg. 29–30, a L = 97 table per thread); :func:`per_thread_reference` is
  its NumPy twin.
* :func:`gpu_single_table` / :class:`SingleTableGPU` — CUDA approach 2
  (Alg. 31–32, one L = 92 153 table, 3 launches per L draws), bit-identical
  to the sequential stream.
* :func:`uniform_field` — the project's seeded uniform fields (used by the
  Cahn–Hilliard initial conditions): identical values on NumPy and CuPy.
* :mod:`.streams` — the approaches as a registry (``seq``, ``threads``, ``gpu1``,
  ``gpu2``), on one GPU or several (paper 001 §6.5; virtual GPUs on the CPU);
  :mod:`.quality` — χ², lag and cross-stream correlations, paper 001 Table 1 re-run.

The generators run on a device of the GPU layer (:mod:`kernels.gpu`: the GPU, or the host running
the same CUDA source); CuPy is imported only when the GPU device is asked for, so importing this
package never needs CuPy.
"""
from __future__ import annotations

import math

import numpy as np

from .gpu import (PerThreadGPU, SingleTableGPU, gpu_per_thread, gpu_single_table, per_thread_reference,
                  thread_seeds)
from .ranmar import L97, L_BIG, Ranmar, RanmarVec, fill_table_py, fill_tables, seed_to_ijkl

__all__ = [
    "Ranmar", "RanmarVec", "uniform_field", "gpu_per_thread", "gpu_single_table",
    "per_thread_reference", "thread_seeds", "PerThreadGPU", "SingleTableGPU",
    "seed_to_ijkl", "fill_tables", "fill_table_py", "L97", "L_BIG",
]


def _is_cupy(xp) -> bool:
    return getattr(xp, "__name__", "").split(".")[0] == "cupy"


def uniform_field(shape, seed, xp=np, dtype=np.float32):
    """Array of ``shape`` with uniform deviates in [0, 1) from seed ``seed``.

    The values are the first ``prod(shape)`` numbers (C order) of the
    single Marsaglia stream with an L = 92 153 lag table initialised from
    ``seed`` (RANMAR initialiser, :func:`seed_to_ijkl`).  With ``xp=cupy``
    they are made on the GPU by approach 2 (Alg. 31–32), with NumPy by the
    vectorised CPU path; both are exact integer computations, so the arrays
    are identical (float32/float64) on both backends.
    """
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    n = math.prod(shape)
    if _is_cupy(xp):
        return gpu_single_table(n, seed, dtype).reshape(shape)
    return RanmarVec.from_seed(seed, lag=L_BIG).uniform(n, dtype).reshape(shape)
