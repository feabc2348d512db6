"""Sessions of the Cahn–Hilliard workspace: the parameters, pending edits and view, and (with data)
the field bit for bit, t, the step count and the diagnostics history with its record numbers.
Everything is checked before anything changes.  A mixin of
:class:`explorer.cahn_hilliard.workspace.CahnHilliardWorkspace`."""
from __future__ import annotations

import numpy as np

from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.simulation import HISTORY_FIELDS

from ..widgets import holding


class SessionMixin:
    """session_state / session_data / restore_session for the main window."""

    def session_state(self) -> dict:
        c = self.canvas
        return {"params": self.sim.params.to_dict(), "pending": dict(self.pending),
                "t": float(self.sim.t), "steps": int(self.sim.step_count),
                "steps_per_frame": int(self.worker.steps_per_frame), "colormap": c.cmap_name,
                "auto_contrast": bool(c.auto_contrast), "slice_axis": c.slice_axis,
                "slice_index": int(c.slice_index), "isosurface": bool(self.iso_check.isChecked()),
                "show_slabs": self.show_slabs(),
                "plots_visible": self.plots_visible(),
                "preset": None if self.preset is None else {k: self.preset[k] for k in ("name", "paper")}}

    def session_data(self) -> dict:
        """The run's arrays from the simulation's own :meth:`state_dict` (field, history columns
        ``history_<field>`` and their record numbers ``history_index``)."""
        with holding(self.worker.lock):
            sd = self.sim.state_dict()
        hist = {f"history_{k}": np.asarray(v, np.float64) for k, v in sd["history"].items()}
        hist["history_index"] = np.asarray(sd["history_index"], np.int64)
        return {"phi": sd["phi"], **hist}

    def restore_session(self, state: dict, data: dict) -> None:
        """Parameters, view and (when saved) the run through the simulation's
        :meth:`~kernels.cahn_hilliard.simulation.CahnHilliard.load_state_dict`: the field bit for
        bit, time, step count and traces.  Files of any version of this layout load."""
        p = CHParams.from_dict(state["params"])
        phi = data.get("phi")
        if phi is None and p.initial == "file":
            p = p.with_changes(initial="spinodal")
        p, cut = self._fit_gpus(p)
        pending = dict(state.get("pending") or {})
        p.with_changes(**pending)                   # a combination Reset would refuse: fail now
        run = None
        if phi is not None:                         # checked before anything changes
            history = None
            if "history_t" in data:
                cols = {k: np.asarray(data.get(f"history_{k}", []), np.float64) for k in HISTORY_FIELDS}
                history = {k: c.astype(np.int64).tolist() if k == "steps" else c.tolist() for k, c in cols.items()}
            run = self.sim.check_state_dict({"params": p, "phi": phi, "t": state.get("t", 0.0),
                                             "steps": state.get("steps", 0), "history": history,
                                             "history_index": data.get("history_index")})
        self.worker.pause()
        with holding(self.worker.lock):
            if run is None:
                self.sim.reset(p)
            else:
                self.sim.load_state_dict(run)
        pre = state.get("preset")
        self.preset = pre if isinstance(pre, dict) and "name" in pre and "paper" in pre else None
        self._after_rebuild()
        for name, value in pending.items():
            self.controls.set_value(name, value, emit=True)
        self._apply_view(state)
        if "plots_visible" in state:
            self.set_plots_visible(bool(state["plots_visible"]))
        self.message_bar.show_message("Session restored" + ("" if phi is not None else
                                      " (parameters only: the field was rebuilt from the seed)")
                                      + (f"; {cut}" if cut else "") + self.notes_tail(), "info")
