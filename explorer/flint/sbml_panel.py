"""SBML reference mode of the Flint workspace as one part, :class:`SbmlPanel`: an SBML file that the
Flint importer refuses (events, algebraic rules, delays, fast reactions …) but that the SBML
reference simulator reads (``kernels.flint.sbml.reference``: one instance, LSODA with root-found
events, output streamed in chunks) is shown by a notice saying so, and run from here.

The panel owns the reference model, why the Flint compiler refused it and the user's parameter
edits; it builds the run (:meth:`SbmlPanel.run_config`) and says in the GUI's words what to change
when the output grid is refused (the GUI's controls, not the CLI's options).
"""
from __future__ import annotations

from PyQt6.QtWidgets import QLabel

from kernels.errors import GridTooLarge, InvalidParameter
from kernels.flint.sbml.reference import MAX_OUTPUT_POINTS, check_output_memory, n_output_points, output_times

from .traces import check_recording

#: what to change when the reference simulator refuses an output grid, in the GUI's words (the kernel's
#: messages name the CLI's ``--every``, which has no control here)
GUI_REMEDY = "raise “dt (output interval)” or lower “t end (model time)”"
TOOLTIP = ("SBML reference mode: the Flint compiler refuses this model, so it runs on the CPU reference "
           "simulator (scipy LSODA, events by root finding).  Open a Flint model or pick a shipped one "
           "to leave it.")


class SbmlPanel(QLabel):
    """A notice shown in SBML reference mode only; ``ref`` is the loaded
    :class:`~kernels.flint.sbml.reference.SbmlReference` (None outside the mode)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ref = None
        self.why = ""
        self._edits: dict[str, float] = {}
        self.setWordWrap(True)
        self.setToolTip(TOOLTIP)
        self.setStyleSheet("QLabel { background: #fff4d6; color: #4a3b00; border: 1px solid #d9b44a; "
                           "border-radius: 3px; padding: 4px; }")
        self.hide()

    def active(self) -> bool:
        return self.ref is not None

    def enter(self, ref, why: str) -> None:
        """Show ``ref`` (refused by the Flint compiler because of ``why``); parameter edits start afresh."""
        self.ref, self.why, self._edits = ref, why, {}
        self.setText(f"<b>SBML reference mode</b>: {ref.name} — the Flint compiler refuses it ({why}); it runs on "
                     f"the CPU reference simulator (LSODA, events by root finding). dt is the output interval.")
        self.show()

    def leave(self) -> None:
        self.ref, self.why, self._edits = None, "", {}
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
        """The worker's run (``explorer.flint.worker.SbmlWorker``): output every ``dt`` to ``t_end``,
        ``record`` (default: the reference's first recordable).  A grid that is too large or does not
        fit in memory raises :class:`InvalidParameter` / :class:`GridTooLarge` naming the GUI controls
        to change (:data:`GUI_REMEDY`)."""
        ref = self.ref
        rec = [record or ref.default_record()[0]]
        try:
            n = n_output_points(t_end, dt)
        except InvalidParameter:
            if t_end / dt < MAX_OUTPUT_POINTS:        # dt longer than t end: the kernel's words fit
                raise
            raise InvalidParameter(f"t end / dt = {t_end / dt:.3g} output intervals: the reference simulator keeps "
                                   f"at most {MAX_OUTPUT_POINTS:,} output points; {GUI_REMEDY}") from None
        check_recording(n, 1, 1)
        try:
            check_output_memory(ref, n, 1)
        except GridTooLarge:
            raise GridTooLarge(f"{n:,} output points of {ref.name} need more host memory than is available "
                               f"(the solver keeps all variables at all output points); {GUI_REMEDY}") from None
        times = output_times(t_end, dt)
        return {"sbml": ref, "params": self.edits(), "times": times, "record": rec, "steps": len(times) - 1,
                "n": 1, "unit": "output points", "chunk": max(1, min(200, len(times) // 50))}

    def caption(self, lead: str, dt: float) -> str:
        return (f"{lead}{self.ref.name}, SBML reference simulator (CPU, LSODA, events), output dt {dt:g} "
                "— paper 004 ch. 5 (Flint)")

    def listing_text(self) -> str:
        """What the Compiler tab says instead of a bytecode listing."""
        return (f"not compiled: the Flint compiler refuses {self.ref.name} ({self.why}); it runs on the SBML "
                "reference simulator.")

    def loaded_text(self) -> str:
        ref = self.ref
        return (f"loaded {ref.name} in SBML reference mode: {ref.n_states} states, {len(ref.system.events)} events, "
                f"{len(ref.params)} parameters.  The Flint compiler refuses it ({self.why}), so it runs on the CPU "
                "reference simulator (LSODA, events by root finding); dt is the output interval.")
