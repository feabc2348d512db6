"""Sessions of the Cahn–Hilliard workspace: the parameters, pending edits and view, and (with data)
the field bit for bit, t, the step count and the diagnostics history with its record numbers.
Everything is checked before anything changes.  A mixin of
:class:`explorer.cahn_hilliard.workspace.CahnHilliardWorkspace`."""
from __future__ import annotations

import numpy as np

from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.simulation import HISTORY_FIELDS, History
from kernels.errors import ExplorerError

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
        with holding(self.worker.lock):
            phi = self.sim.field_numpy().copy()
            h = self.sim.history
            hist = {f"history_{k}": np.asarray(v, np.float64) for k, v in h.as_dict().items()}
            hist["history_index"] = np.asarray(h.index, np.int64)
        return {"phi": phi, **hist}

    def restore_session(self, state: dict, data: dict) -> None:
        """Parameters, view and (when saved) the field bit for bit, time and traces."""
        p = CHParams.from_dict(state["params"])
        phi = data.get("phi")
        if phi is not None:
            if phi.ndim != p.dim or phi.shape != p.shape:
                raise ExplorerError(f"the saved field has shape {phi.shape}, the parameters say {p.shape}")
            if phi.dtype != np.dtype(p.dtype):
                raise ExplorerError(f"the saved field is {phi.dtype}, the parameters say {p.dtype}")
        elif p.initial == "file":
            p = p.with_changes(initial="spinodal")
        p, cut = self._fit_gpus(p)
        pending = dict(state.get("pending") or {})
        p.with_changes(**pending)                   # a combination Reset would refuse: fail now
        hist = None
        if phi is not None and "history_t" in data:  # checked before anything changes
            hist = History(capacity=self.sim.history.capacity, log_bits=self.sim.history.log_bits)
            cols = {k: np.asarray(data.get(f"history_{k}", []), np.float64) for k in HISTORY_FIELDS}
            hist.load({k: c.astype(np.int64).tolist() if k == "steps" else c.tolist() for k, c in cols.items()},
                      data.get("history_index"))
        self.worker.pause()
        with holding(self.worker.lock):
            if p.initial == "file":
                self.sim.reset(p, field0=phi)
            else:
                self.sim.reset(p)
                if phi is not None:
                    self.sim.set_field(phi)
            if phi is not None:
                self.sim.t = float(state.get("t", 0.0))
                self.sim.step_count = int(state.get("steps", 0))
                if hist is not None:
                    self.sim.history.load(hist.as_dict(), hist.index)
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
