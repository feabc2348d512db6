"""Sessions of the Cahn–Hilliard workspace, as data: the parameters, pending edits and view, and
(with data) the field bit for bit, t, the step count and the diagnostics history with its record
numbers.

:func:`read_session` checks a saved state and its arrays and returns a :class:`SessionPlan` before
anything changes; the workspace then rebuilds from it.  :func:`run_arrays` turns the simulation's
``state_dict`` into the arrays a session stores.  Files of any version of this layout load.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.simulation import HISTORY_FIELDS

#: view keys of a session (and of presets): the workspace's view bar and run settings
VIEW_KEYS = ("steps_per_frame", "colormap", "auto_contrast", "isosurface", "slice_axis", "slice_index",
             "show_slabs")


@dataclass
class SessionPlan:
    """What a session restores: ``params`` (not yet cut to this machine's GPUs), the ``pending``
    (needs-Reset) edits, the ``run`` to load (``state_dict`` fields; None: rebuild from the seed),
    the named ``preset``, the ``view`` keys and whether the plots were shown."""

    params: CHParams
    pending: dict = field(default_factory=dict)
    run: dict | None = None
    preset: dict | None = None
    view: dict = field(default_factory=dict)
    plots_visible: bool | None = None


def read_session(state: dict, data: dict) -> SessionPlan:
    """Check ``state`` / ``data`` (InvalidParameter, KeyError, TypeError or ValueError when they do
    not hold a session of this workspace) and say what to restore."""
    p = CHParams.from_dict(state["params"])
    phi = data.get("phi")
    if phi is None and p.initial == "file":
        p = p.with_changes(initial="spinodal")
    pending = dict(state.get("pending") or {})
    p.with_changes(**pending)                   # a combination Reset would refuse: fail now
    run = None
    if phi is not None:
        history = None
        if "history_t" in data:
            cols = {k: np.asarray(data.get(f"history_{k}", []), np.float64) for k in HISTORY_FIELDS}
            history = {k: c.astype(np.int64).tolist() if k == "steps" else c.tolist() for k, c in cols.items()}
        run = {"phi": phi, "t": state.get("t", 0.0), "steps": state.get("steps", 0), "history": history,
               "history_index": data.get("history_index")}
    pre = state.get("preset")
    preset = pre if isinstance(pre, dict) and "name" in pre and "paper" in pre else None
    plots = state.get("plots_visible")
    return SessionPlan(p, pending, run, preset, {k: state[k] for k in VIEW_KEYS if k in state},
                       None if plots is None else bool(plots))


def run_arrays(sd: dict) -> dict:
    """The arrays of a session from a ``CahnHilliard.state_dict()``: the field, the history columns
    ``history_<field>`` and their record numbers ``history_index``."""
    hist = {f"history_{k}": np.asarray(v, np.float64) for k, v in sd["history"].items()}
    hist["history_index"] = np.asarray(sd["history_index"], np.int64)
    return {"phi": sd["phi"], **hist}
