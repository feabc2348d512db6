"""The Cahn–Hilliard parameter form's model: turns the :class:`~.controls.ControlPanel`'s edits into
the simulation's parameters.

A part that owns the *pending* edits: a live parameter (``kernels.cahn_hilliard.params.LIVE``)
applies at once, under the worker's lock (``sim.set_params``); any other waits for *Reset*, and the
form marks it ⟳.  Every edit is checked together with the pending ones, so a combination that Reset
would refuse is reported at once and the control shows its value back.  Choosing 3D with a grid
larger than 128 pends a smaller size, with a notice that lasts only while that size is pending.
``changed`` follows every edit (the workspace re-reads the decomposition then).
"""
from __future__ import annotations

from PyQt6.QtCore import QObject, pyqtSignal

from kernels.cahn_hilliard.params import LIVE, stability_limit
from kernels.errors import ExplorerError

from ..widgets import holding


class ParameterEdits(QObject):
    """Pending (needs-Reset) edits of ``sim``'s parameters made in ``controls``."""

    changed = pyqtSignal()

    def __init__(self, sim, controls, message_bar, lock, is_gpu: bool, report_error, parent=None):
        super().__init__(parent)
        self.sim, self.controls, self.message_bar, self.lock = sim, controls, message_bar, lock
        self.is_gpu = bool(is_gpu)
        self.report_error = report_error
        self.pending: dict = {}
        self.banner = ""                    # the "3D: grid size set to …" notice, while it holds
        controls.param_changed.connect(self.apply)

    def effective(self, name: str):
        """The value Reset would use: the pending edit, else the running one."""
        return self.pending.get(name, getattr(self.sim.params, name))

    def params(self):
        """The running parameters with the pending edits (the running ones if they clash)."""
        try:
            return self.sim.params.with_changes(**self.pending)
        except ExplorerError:
            return self.sim.params

    def apply(self, name: str, value) -> None:
        """One edit from the form (see the module docstring)."""
        try:
            # validate against the pending edits too: a combination Reset would refuse fails now
            self.sim.params.with_changes(**{**self.pending, name: value})
            if name in LIVE:
                with holding(self.lock):
                    self.sim.set_params(**{name: value})
            else:
                if value == getattr(self.sim.params, name):
                    self.pending.pop(name, None)
                else:
                    self.pending[name] = value
                if name == "dim" and value == 3 and self.effective("size") > 128:
                    small = 128 if self.is_gpu else 64
                    self.pending["size"] = small
                    self.controls.set_value("size", small, emit=False)
                    self.banner = f"3D: grid size set to {small}³ (change it if you like); press Reset to apply."
                    self.message_bar.show_message(self.banner, "info")
        except ExplorerError as exc:
            self.report_error(str(exc))
            self.controls.set_value(name, self.effective(name), emit=False)
        except Exception as exc:   # e.g. a CUDA/NCCL error building a multi-GPU stepper: never abort the app
            self.report_error(f"could not apply {name} = {value!r}: {exc.__class__.__name__}: {exc}")
            self.controls.set_value(name, self.effective(name), emit=False)
        self.refresh()

    def clear(self) -> None:
        """After a rebuild: nothing pending; the form shows the running parameters."""
        self.pending.clear()
        self.controls.set_params(self.sim.params)
        self.refresh()

    def refresh(self) -> None:
        """The form's feedback: dt limit, ⟳ marks; the 3D size notice while its size is pending."""
        p = self.sim.params
        self.controls.set_dt_limit(p.dt, stability_limit(self.params()), p.integrator)
        self.controls.set_pending(self.pending)
        size = self.pending.get("size")
        if self.banner and (size is None or f"{size}³" not in self.banner):
            if self.message_bar.text() == self.banner:
                self.message_bar.hide()
            self.banner = ""
        self.changed.emit()
