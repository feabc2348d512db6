"""Trace export: CSV (time + one column per variable and cell) and NPZ."""
from __future__ import annotations

import csv

import numpy as np


def write_csv(path, times, samples, names, cells=None) -> None:
    """samples: (k, n_vars, n_cells). Columns: t, then name[cell] (just name for one cell)."""
    samples = np.asarray(samples)
    k, nv, nc = samples.shape if samples.ndim == 3 else (0, len(names), 0)
    cells = list(range(nc)) if cells is None else list(cells)
    head = ["t"] + [(n if nc == 1 else f"{n}[{c}]") for n in names for c in cells]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(head)
        for i in range(k):
            w.writerow([repr(float(times[i]))] + [repr(float(samples[i, v, c])) for v in range(nv) for c in range(nc)])


def write_npz(path, times, samples, names, **meta) -> None:
    np.savez_compressed(path, t=np.asarray(times), traces=np.asarray(samples), names=np.array(names),
                        **{k: np.asarray(v) for k, v in meta.items()})
