"""The adaptive runs of a model read from an SBML file that the fixed-step compiler takes (Robertson's
stiff kinetics, ``resources/models/*.xml``), as one part, :class:`SbmlFileRuns` (issue 34): the Method
box offers the adaptive methods too (:meth:`explorer.flint.run_form.FlintRunForm.offer_adaptive`), and
a run with one of them goes through the paths of an SBML model with events
(:func:`explorer.flint.sbml_panel.sbml_worker`: :class:`~kernels.flint.adaptive_run.EnsembleRun` on
an adaptive engine, or lsoda on the SBML reference simulator), from the same file.

The part owns the file's :class:`~kernels.flint.sbml.reference.SbmlReference` (read at the first
adaptive run) and the parameter values the model had when it was read: the values typed into the
parameter table since then are the run's edits.
"""
from __future__ import annotations

from pathlib import Path

from kernels.errors import ExplorerError, InvalidParameter
from kernels.flint.sbml.reference import load_reference

from .sbml_panel import ensemble_config, run_caption, sbml_worker

SBML_SUFFIXES = (".xml", ".sbml")


class SbmlFileRuns:
    """``bind(path, model)`` after a model is loaded (a path that is not SBML: no adaptive runs)."""

    def __init__(self):
        self.path: Path | None = None
        self._read: dict[str, float] = {}      # the model's parameter values as read from the file
        self._ref = None

    def bind(self, path, model) -> bool:
        """The loaded model and its file; True when it is an SBML file (adaptive methods apply)."""
        sbml = path is not None and Path(str(path)).suffix.lower() in SBML_SUFFIXES
        self.path = Path(str(path)) if sbml else None
        self._read = dict(model.params) if sbml else {}
        self._ref = None
        return sbml

    def active(self) -> bool:
        return self.path is not None

    def reference(self):
        """The file's SBML reference (read once)."""
        if self._ref is None:
            try:
                self._ref = load_reference(self.path)
            except (ExplorerError, OSError, ImportError) as exc:
                raise InvalidParameter(f"the SBML readers of the adaptive methods refuse {self.path.name}: "
                                       f"{exc}") from None
        return self._ref

    def edits(self, model) -> dict[str, float]:
        """The parameters changed since the file was read (:class:`InvalidParameter` for one the SBML
        run cannot set: not a constant parameter of the file)."""
        ref = self.reference()
        out = {p: float(v) for p, v in model.params.items() if v != self._read.get(p)}
        for p in out:
            if p not in ref.editable:
                raise InvalidParameter(f"{p} was edited, but it is not a constant parameter of {self.path.name}: "
                                       f"the adaptive methods cannot set it (reload the model, or use euler / rk4)")
        return out

    def worker(self, form, model, parent=None) -> tuple:
        """(config, worker) of the form's adaptive method for the model's file."""
        try:
            return sbml_worker(self.reference(), self.edits(model), form, parent)
        except (ValueError, KeyError) as exc:          # outside the ensemble engines' ODE core
            raise InvalidParameter(f"the adaptive engines cannot run {self.path.name}: {exc}") from None

    def run_dict(self, form, model) -> dict | None:
        """The form's ensemble run as a session saves it (None for lsoda: the controls say it)."""
        if form.reference():
            return None
        return ensemble_config(self.reference(), self.edits(model), form, form.value("record"))["run"].to_dict()

    def caption(self, lead: str, name: str, c: dict) -> str:
        return run_caption(lead, name, c["dt"], c["method"], c["engine"], events=False)
