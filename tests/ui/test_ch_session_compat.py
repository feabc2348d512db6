"""Cahn–Hilliard sessions written by earlier versions (format 1, the layout before
state_dict/load_state_dict: t and steps in the manifest, the field and history columns in
data.npz) still load, through the simulation's own load_state_dict."""
from __future__ import annotations

import numpy as np

from explorer import session as session_mod
from kernels.cahn_hilliard import CahnHilliard, CHParams


def _reference_run(cpu, seed: int, steps: int):
    sim = CahnHilliard(CHParams(size=32, seed=seed).validate(), cpu)
    for _ in range(steps):
        sim.step(3)
    return sim


def test_format_1_session_with_history_loads_bit_for_bit(main_window, ws, backend, tmp_path, rng):
    ref = _reference_run(backend, int(rng.integers(1 << 20)), 6)
    h = ref.history
    state = {"params": ref.params.to_dict(), "pending": {}, "t": ref.t, "steps": ref.step_count,
             "steps_per_frame": 10, "colormap": "magma", "auto_contrast": True, "slice_axis": 2,
             "slice_index": 0, "isosurface": False, "show_slabs": False, "plots_visible": True, "preset": None}
    data = {"phi": ref.field_numpy().copy(),
            **{f"history_{k}": np.asarray(getattr(h, k), np.float64) for k in ("t", "steps", "mean", "energy", "length")},
            "history_index": np.asarray(h.index, np.int64)}
    path = session_mod.save_session(tmp_path / "old.gsession", "cahn_hilliard", state, data, app="old")
    assert main_window.open_session(path), main_window.last_message
    sim = ws.sim
    assert np.array_equal(sim.field_numpy(), ref.field_numpy())
    assert (sim.t, sim.step_count) == (ref.t, ref.step_count)
    assert sim.history.as_dict() == ref.history.as_dict() and sim.history.index == ref.history.index
    assert ws.colormap() == "magma"
    ref.step(3)                                    # and it continues as the original run would
    sim.step(3)
    assert np.array_equal(sim.field_numpy(), ref.field_numpy())


def test_format_1_session_without_history_loads(main_window, ws, backend, tmp_path, rng):
    ref = _reference_run(backend, int(rng.integers(1 << 20)), 2)
    state = {"params": ref.params.to_dict(), "t": ref.t, "steps": ref.step_count}
    path = session_mod.save_session(tmp_path / "older.gsession", "cahn_hilliard", state,
                                    {"phi": ref.field_numpy().copy()}, app="old")
    assert main_window.open_session(path), main_window.last_message
    assert np.array_equal(ws.sim.field_numpy(), ref.field_numpy())
    assert (ws.sim.t, ws.sim.step_count) == (ref.t, ref.step_count)
    assert ws.sim.history.t == [ref.t]              # the history restarts at the loaded state
