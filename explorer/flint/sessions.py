"""Presets and sessions of the Flint workspace (:class:`FlintSessionsMixin`): a preset sets the
model, the run controls and parameter overrides (and may start the run); a session saves the model,
parameters, controls, the run as a :class:`~kernels.flint.run.FlintRun` dict and the recorded
traces, and restores them (older sessions with only a run dict too)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from kernels.errors import ExplorerError, InvalidParameter
from kernels.flint.model import select_states

from .worker import INIT_ONE_WAY, INIT_UNIFORM


class FlintSessionsMixin:
    """Presets and sessions of :class:`~explorer.flint.workspace.FlintWorkspace`."""

    def apply_preset(self, preset: dict) -> None:
        """params: model, dt, t_end, integrator, runtime, members (ensemble|line|ring), n, D, vary,
        spread, record, set (parameter overrides), run (bool); params_cpu overrides on NumPy."""
        prm = dict(preset.get("params", {}))
        if not self.backend.is_gpu:
            prm.update(preset.get("params_cpu", {}))
        self.stop()
        if self.worker is not None:
            self.worker.wait(10000)
            self._on_done()
        self.preset = preset
        if "model" in prm:
            i = self.cb_model.findText(prm["model"])
            if i < 0:
                raise InvalidParameter(f"preset model {prm['model']!r} is not shipped")
            self.cb_model.setCurrentIndex(i)
            self.load(self.cb_model.currentData())
        self._set_controls(prm)
        for k, v in prm.get("set", {}).items():
            self.set_parameter(k, v)
        if prm.get("run", True):
            self.run()

    def _set_controls(self, prm: dict) -> None:
        for key, w in (("dt", self.sp_dt), ("t_end", self.sp_tend), ("n", self.sp_n), ("D", self.sp_D),
                       ("spread", self.sp_spread)):
            if key in prm:
                w.setValue(prm[key])
        if "members" in prm and "init" not in prm:
            prm = {**prm, "init": INIT_UNIFORM}           # a preset without it starts from rest
        for key, w in (("integrator", self.cb_integ), ("runtime", self.cb_runtime), ("members", self.cb_net),
                       ("vary", self.cb_vary), ("record", self.cb_record), ("dtype", self.cb_dtype),
                       ("init", self.cb_init)):
            if key in prm:
                i = w.findText(str(prm[key]))
                if i < 0 and key == "record" and self.model is not None:   # a list or pattern of states
                    select_states(self.model, str(prm[key]))                 # (raises naming a bad entry)
                    w.setEditText(str(prm[key]))
                    continue
                if i < 0 and key == "init":              # "uniform" / "one-way wave" without the note
                    i = w.findText(str(prm[key]), pg.QtCore.Qt.MatchFlag.MatchStartsWith)
                if i < 0:
                    raise InvalidParameter(f"{key} {prm[key]!r} is not available here")
                w.setCurrentIndex(i)

    def session_state(self) -> dict:
        return {"model": self.cb_model.currentText(), "model_path": self.cb_model.currentData(),
                "params": dict(self.model.params) if self.model else dict(self.sbml_params),
                "controls": {"dt": self.sp_dt.value(), "t_end": self.sp_tend.value(), "n": self.sp_n.value(),
                             "D": self.sp_D.value(), "spread": self.sp_spread.value(),
                             "integrator": self.cb_integ.currentText(), "runtime": self.cb_runtime.currentText(),
                             "members": self.cb_net.currentText(), "vary": self.cb_vary.currentText(),
                             "record": self.cb_record.currentText(), "dtype": self.cb_dtype.currentText(),
                             "init": self.cb_init.currentText()},
                "record_names": list(self.record_names), "run": self._run_dict(),
                "preset": None if self.preset is None else {k: self.preset.get(k) for k in ("name", "paper")}}

    def _run_dict(self) -> dict | None:
        """The session's FlintRun (None in SBML reference mode, or while the controls do not make a run)."""
        if self.model is None or self.sbml is not None:
            return None
        try:
            return self.flint_run().to_dict()
        except ExplorerError:
            return None

    @staticmethod
    def controls_from_run(run: dict) -> dict:
        """The widgets' values of a saved FlintRun (a session that has "run" but no "controls")."""
        ctl = {k: run[k] for k in ("dt", "t_end", "n", "integrator", "runtime", "members", "dtype") if k in run}
        if "coupling" in run:
            ctl["D"] = run["coupling"]
        if run.get("record"):
            ctl["record"] = ", ".join(run["record"])
        ctl["init"] = INIT_ONE_WAY if run.get("protocol") == "one-way" else INIT_UNIFORM
        vary = list(run.get("vary") or [])
        if vary:                                   # lo..hi around v0 = (lo + hi) / 2 → "± spread"
            lo, hi = float(vary[0]["lo"]), float(vary[0]["hi"])
            ctl["vary"] = vary[0]["param"]
            ctl["spread"] = (hi - lo) / (hi + lo) if hi + lo else 0.0
        return ctl

    def session_data(self) -> dict:
        return {"t": np.asarray(self.times), "traces": np.asarray(self.samples)}

    def restore_session(self, state: dict, data: dict) -> None:
        t, y = np.asarray(data.get("t", np.zeros(0))), np.asarray(data.get("traces", np.zeros((0, 1, 0))))
        if y.ndim != 3 or t.ndim != 1 or len(t) != len(y):          # checked before anything changes
            raise InvalidParameter(f"the session's traces have shape {y.shape} for {t.shape} times")
        i = self.cb_model.findText(state.get("model", ""))
        if i >= 0:
            self.cb_model.setCurrentIndex(i)
            self.load(self.cb_model.currentData())
        elif state.get("model_path"):
            self.open_field(state["model_path"])
        if "params" not in state and isinstance(state.get("run"), dict):
            state = {**state, "params": state["run"].get("params", {})}
        for k, v in state.get("params", {}).items():
            if (self.model is not None and k in self.model.params) or (self.sbml is not None and k in self.sbml.params):
                self.set_parameter(k, v)
        ctl = dict(state.get("controls") or (self.controls_from_run(state["run"]) if isinstance(state.get("run"), dict)
                                             else {}))
        if ctl.get("runtime") and self.cb_runtime.findText(ctl["runtime"]) < 0:
            ctl["runtime"] = "cpu"
        self._set_controls(ctl)
        self.record_names = list(state.get("record_names", []))
        self.traces.set(t, y)
        if self.samples.ndim == 3 and self.samples.shape[0]:
            self._make_curves(self.samples.shape[2], self.model.units if self.model is not None else None)
            self._refresh(force=True)
