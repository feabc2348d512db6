"""SBML models with events in the Flint workspace as one part, :class:`SbmlPanel`: an SBML file that the
fixed-step importer refuses (events, algebraic rules, delays, fast reactions …) opens one way,
whatever it is (a suite case such as 00987 or BIOMD0000000127), :func:`open_sbml`:

* when the ODE core takes it (:func:`kernels.flint.adaptive_run.ensemble_refusal` is None) it runs as
  an ensemble on the adaptive engines (``dopri5`` on ts / is / c / c-is / numpy,
  :class:`~kernels.flint.adaptive_run.EnsembleRun`), traces streaming, the events' firings marked;
* else on the SBML reference simulator (``kernels.flint.sbml.reference``: one instance, LSODA with
  root-found events, output streamed in chunks), the notice saying why;
* else it does not open, and one message says why each engine refuses it.

The panel owns the reference model, why the Flint compiler refused it and the user's parameter
edits; it builds the run (:meth:`SbmlPanel.run_config`) and says in the GUI's words what to change
when the output grid is refused (the GUI's controls, not the CLI's options).  The runs are built by
module functions (:func:`sbml_worker`: :func:`reference_config` or :func:`ensemble_config`), which
:mod:`explorer.flint.sbml_file` uses too for an SBML file that the fixed-step compiler takes, on an
adaptive method.
"""
from __future__ import annotations

import html
from pathlib import Path

from PyQt6.QtWidgets import QLabel

from kernels.errors import ExplorerError, GridTooLarge, InvalidParameter
from kernels.flint.adaptive_run import ensemble_refusal, lower
from kernels.flint.sbml.reference import (MAX_OUTPUT_POINTS, check_output_memory, load_reference, n_output_points,
                                         output_times)

from .traces import check_recording
from .worker import EnsembleWorker, SbmlWorker

#: what to change when the reference simulator refuses an output grid, in the GUI's words (the kernel's
#: messages name the CLI's ``--every``, which has no control here)
GUI_REMEDY = "raise “dt (output interval)” or lower “t end (model time)”"
TOOLTIP = ("An SBML model with events: the fixed-step compiler refuses it, so it runs on the adaptive ensemble "
           "engines (dopri5, events by root finding) or on the CPU reference simulator (lsoda).  Open a Flint "
           "model or pick a shipped one to leave it.")


def open_sbml(path) -> tuple:
    """(reference, why the ensemble engines refuse it or None, why the reference simulator refuses it
    or "") of an SBML file the fixed-step importer refused; reference is None when it refuses too."""
    try:
        ref, ref_why = load_reference(path), ""
    except (ExplorerError, OSError, ImportError) as exc:
        ref, ref_why = None, str(exc)
    why = ensemble_refusal(path)
    if why is not None and ensemble_refusal(path, full=True) is None:     # a DAE / delays: Rodas4 takes it
        why = None
    return ref, why, ref_why


class SbmlPanel(QLabel):
    """A notice shown in SBML reference mode only; ``ref`` is the loaded
    :class:`~kernels.flint.sbml.reference.SbmlReference` (None outside the mode)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ref = None
        self.why = ""
        self.ensemble_why = None          # why the ensemble engines refuse the model (None: they take it)
        self.varied: list[str] = []       # the constant parameters an ensemble can vary
        self.stiff_only = False           # only Rodas4 / auto take it (algebraic rules, fast reactions, delays)
        self._edits: dict[str, float] = {}
        self.setWordWrap(True)
        self.setToolTip(TOOLTIP)
        self.setStyleSheet("QLabel { background: #fff4d6; color: #4a3b00; border: 1px solid #d9b44a; "
                           "border-radius: 3px; padding: 4px; }")
        self.hide()

    def active(self) -> bool:
        return self.ref is not None

    def enter(self, ref, why: str, ensemble_why: str | None = "") -> None:
        """Show ``ref`` (refused by the fixed-step compiler because of ``why``; ``ensemble_why`` None when
        the ensemble engines take it, else why not); parameter edits start afresh."""
        self.ref, self.why, self.ensemble_why, self._edits = ref, why, ensemble_why, {}
        self.varied = []
        why, ensemble_why = html.escape(why), html.escape(ensemble_why) if ensemble_why else ensemble_why  # rich text
        self.stiff_only = False
        if ensemble_why is None:
            self.stiff_only = ensemble_refusal(ref.path) is not None
            self.varied = [p for p in lower(ref.path, [], self.stiff_only).param_ids if p in ref.editable]
            self.setText(f"<b>SBML model with events</b>: {ref.name} runs as an ensemble on the adaptive engines "
                         f"(events by root finding, marked on the time axis); lsoda on numpy is the reference "
                         f"simulator. dt is the output interval. (Not on the fixed-step engines: {why}.)")
        else:
            self.setText(f"<b>SBML reference mode</b>: {ref.name} — the ensemble engines refuse it "
                         f"({ensemble_why or why}); it runs on the CPU reference simulator (LSODA, events by root "
                         f"finding). dt is the output interval. (Not on the fixed-step engines: {why}.)")
        self.show()

    def ensemble(self) -> bool:
        """The ensemble engines take the model."""
        return self.ref is not None and self.ensemble_why is None

    def leave(self) -> None:
        self.ref, self.why, self.ensemble_why, self.varied, self._edits = None, "", None, [], {}
        self.setText("")
        self.hide()

    # ------------------------------------------------------------------ parameters
    def parameters(self) -> tuple[dict, dict, dict]:
        """(values, roles, {name: why not editable}) of the reference model's parameters."""
        ref = self.ref
        fixed = {p: f"{p} is set by its {ref.roles[p][7:]}: not editable" for p in ref.params if p not in ref.editable}
        return dict(ref.params), dict(ref.roles), fixed

    def set_parameter(self, name: str, value: float) -> None:
        """An edit of the next run (a value equal to the file's is no edit)."""
        if name not in self.ref.params:
            raise InvalidParameter(f"{name!r} is not a parameter of {self.ref.name}")
        if value == self.ref.params[name]:
            self._edits.pop(name, None)
        else:
            self._edits[name] = float(value)

    def edits(self) -> dict[str, float]:
        """The parameters the user changed (applied to a copy of the system at each run)."""
        return dict(self._edits)

    # ------------------------------------------------------------------ runs
    def run_config(self, t_end: float, dt: float, record: str) -> dict:
        """The SBML reference simulator's run of this model (:func:`reference_config`)."""
        return reference_config(self.ref, self.edits(), t_end, dt, record)

    def ensemble_config(self, form, record: str) -> dict:
        """The adaptive ensemble run of this model (:func:`ensemble_config`)."""
        return ensemble_config(self.ref, self.edits(), form, record)

    def caption(self, lead: str, dt: float, method: str = "lsoda", engine: str = "numpy") -> str:
        return run_caption(lead, self.ref.name, dt, method, engine, events=True)

    def listing_text(self) -> str:
        """What the Compiler tab says instead of a bytecode listing."""
        where = ("the adaptive ensemble engines" if self.ensemble() else "the SBML reference simulator")
        return f"not compiled for fixed steps: the Flint compiler refuses {self.ref.name} ({self.why}); it runs on {where}."

    def loaded_text(self) -> str:
        """The one status message of a loaded SBML model with events: where it runs and why."""
        ref = self.ref
        head = (f"loaded {ref.name}: {ref.n_states} states, {len(ref.system.events)} events, {len(ref.params)} "
                "parameters.")
        if self.ensemble():
            return (f"{head}  It runs as an ensemble on the adaptive engines (method dopri5; the Engine box lists "
                    f"those that run here), traces streaming, events marked on the time axis; lsoda on numpy is "
                    f"the reference simulator.  (The fixed-step compiler refuses it: {self.why}.)")
        return (f"{head}  It runs on the CPU reference simulator (LSODA, events by root finding): the ensemble "
                f"engines refuse it ({self.ensemble_why}); dt is the output interval.")


def reference_config(ref, edits: dict, t_end: float, dt: float, record: str) -> dict:
    """The worker's run (``explorer.flint.worker.SbmlWorker``) of the SBML reference ``ref`` with the
    parameter ``edits``: output every ``dt`` to ``t_end``, ``record`` (default: the reference's first
    recordable).  A grid that is too large or does not fit in memory raises :class:`InvalidParameter` /
    :class:`GridTooLarge` naming the GUI controls to change (:data:`GUI_REMEDY`)."""
    rec = [record or ref.default_record()[0]]
    n = grid_points(t_end, dt)
    check_recording(n, 1, 1)
    try:
        check_output_memory(ref, n, 1)
    except GridTooLarge:
        raise GridTooLarge(f"{n:,} output points of {ref.name} need more host memory than is available "
                           f"(the solver keeps all variables at all output points); {GUI_REMEDY}") from None
    times = output_times(t_end, dt)
    return {"sbml": ref, "params": dict(edits), "times": times, "record": rec, "steps": len(times) - 1,
            "n": 1, "unit": "output points", "chunk": max(1, min(200, len(times) // 50))}


def ensemble_config(ref, edits: dict, form, record: str) -> dict:
    """The worker's run (``explorer.flint.worker.EnsembleWorker``): the form's
    :class:`~kernels.flint.adaptive_run.EnsembleRun` of the SBML reference ``ref`` with the parameter
    ``edits``, recording ``record`` (a comma list for one member; one variable for several)."""
    rec = [r.strip() for r in (record or ref.default_record()[0]).split(",") if r.strip()]
    for r in rec:
        if r not in ref.recordable:
            raise InvalidParameter(f"record: {r!r} is not a variable of {ref.name}")
    values = {**ref.params, **edits}
    c = form.controls()
    grid_points(c["t_end"], c["dt"])
    run = form.ensemble_run(ref.path, dict(edits), rec, values)
    if len(rec) > 1 and run.n > 1:
        raise InvalidParameter(f"{len(rec)} recorded variables need N = 1 (one member); with N > 1 record one")
    k = len(run.times())
    check_recording(k, len(rec), run.n)
    return {"run": run, "record": rec, "steps": k - 1, "n": run.n, "unit": "output points"}


def sbml_worker(ref, edits: dict, form, parent=None) -> tuple:
    """(config, worker) of the run the form's method asks for: lsoda on the SBML reference simulator
    (:func:`reference_config`, ``SbmlWorker``), else the adaptive ensemble (:func:`ensemble_config`,
    ``EnsembleWorker``)."""
    c = form.controls()
    if form.reference():
        cfg = reference_config(ref, edits, c["t_end"], c["dt"], c["record"])
        return cfg, SbmlWorker(cfg, parent)
    cfg = ensemble_config(ref, edits, form, c["record"])
    return cfg, EnsembleWorker(cfg, parent)


def run_caption(lead: str, name: str, dt: float, method: str, engine: str, events: bool) -> str:
    """The caption of an SBML run (the status bar)."""
    ev = ", events" if events else ""
    what = (f"SBML reference simulator (CPU, LSODA{ev})" if method == "lsoda" else
            f"{method} on {engine} (adaptive ensemble{ev})")
    return f"{lead}{name}, {what}, output dt {dt:g} — paper 004 ch. 5 (Flint)"


def grid_points(t_end: float, dt: float) -> int:
    """Output points of the grid to ``t_end`` every ``dt``; a grid that is too large is refused naming
    the GUI's controls (:data:`GUI_REMEDY`)."""
    try:
        return n_output_points(t_end, dt)
    except InvalidParameter:
        if t_end / dt < MAX_OUTPUT_POINTS:        # dt longer than t end: the kernel's words fit
            raise
        raise InvalidParameter(f"t end / dt = {t_end / dt:.3g} output intervals: at most {MAX_OUTPUT_POINTS:,} "
                               f"output points are kept; {GUI_REMEDY}") from None


def refusal_text(path, why: str, ensemble_why: str | None, ref_why: str) -> str:
    """The one message of an SBML file no engine opens: why each refuses it."""
    return (f"cannot run {Path(path).name}: the ensemble engines refuse it ({ensemble_why}) and so does the SBML "
            f"reference simulator ({ref_why}); the fixed-step compiler: {why}")
