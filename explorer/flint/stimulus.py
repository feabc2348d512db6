"""Stimulus protocol editor: amplitude, start, duration, period bound to a model's ``stim_*`` parameters.

A view only: it reads and writes the parameters through the workspace (``set_parameter``), so the
parameter table, the compiled program and the next run see the same values.
"""
from __future__ import annotations

from PyQt6.QtWidgets import QDoubleSpinBox, QFormLayout, QGroupBox

STIM_PARAMS = (("stim_amplitude", "Amplitude (µA/cm²)", -1e4, 1e4, 2,
                "Stimulus current density, µA/cm² (the shipped cardiac models use negative values: an "
                "inward, depolarising current)"),
               ("stim_start", "Start (ms)", 0.0, 1e7, 3, "Time of the first pulse, ms"),
               ("stim_duration", "Duration (ms)", 0.0, 1e7, 3, "Length of each pulse, ms"),
               ("stim_period", "Period (ms)", 1e-3, 1e7, 3, "Time from one pulse to the next, ms"))


class StimulusEditor(QGroupBox):
    """Four spin boxes; enabled only when the model has all of ``stim_amplitude``, ``stim_start``,
    ``stim_duration``, ``stim_period``."""

    def __init__(self, set_parameter, parent=None):
        super().__init__("Stimulus protocol", parent)
        self._set_parameter = set_parameter
        self._updating = False
        form = QFormLayout(self)
        self.spins: dict[str, QDoubleSpinBox] = {}
        for name, label, lo, hi, dec, tip in STIM_PARAMS:
            sp = QDoubleSpinBox(decimals=dec, minimum=lo, maximum=hi)
            sp.setToolTip(f"{tip} (model parameter {name})")
            sp.setKeyboardTracking(False)
            sp.valueChanged.connect(lambda v, n=name: self._edited(n, v))
            self.spins[name] = sp
            form.addRow(label, sp)
        self.bind(None)

    def bind(self, model) -> None:
        names = [p[0] for p in STIM_PARAMS]
        ok = model is not None and all(n in model.params for n in names)
        self.setEnabled(ok)
        if ok:
            self.setToolTip("pulses of the amplitude for the duration, every period from the start")
            self.refresh(model)
        else:
            missing = [n for n in names if model is None or n not in model.params]
            self.setToolTip("this model has no stimulus protocol parameters (missing: " + ", ".join(missing) + ")")

    def refresh(self, model) -> None:
        """Show the model's current values (after a table edit or a preset)."""
        if model is None or not self.isEnabled():
            return
        self._updating = True
        try:
            for name, sp in self.spins.items():
                sp.setValue(float(model.params[name]))
        finally:
            self._updating = False

    def _edited(self, name: str, value: float) -> None:
        if not self._updating:
            self._set_parameter(name, value)
