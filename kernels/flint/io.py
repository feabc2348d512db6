"""Trace export: CSV (time + one column per variable and cell) and NPZ, written atomically
(:mod:`kernels.fileio`: an interrupted write leaves any earlier file)."""
from __future__ import annotations

import csv

import numpy as np

from ..fileio import atomic_write


def write_csv(path, times, samples, names, cells=None) -> None:
    """samples: (k, n_vars, n_cells). Columns: t, then name[cell] (just name for one cell)."""
    samples = np.asarray(samples)
    k, nv, nc = samples.shape if samples.ndim == 3 else (0, len(names), 0)
    cells = list(range(nc)) if cells is None else list(cells)
    head = ["t"] + [(n if nc == 1 else f"{n}[{c}]") for n in names for c in cells]
    with atomic_write(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(head)
        for i in range(k):
            w.writerow([repr(float(times[i]))] + [repr(float(samples[i, v, c])) for v in range(nv) for c in range(nc)])


def write_npz(path, times, samples, names, **meta) -> None:
    with atomic_write(path, "wb") as fh:
        np.savez_compressed(fh, t=np.asarray(times), traces=np.asarray(samples), names=np.array(names),
                            **{k: np.asarray(v) for k, v in meta.items()})
