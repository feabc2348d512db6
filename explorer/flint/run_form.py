"""The run controls of the Flint workspace as one part, :class:`FlintRunForm`: dt, t end, integrator,
runtime, precision, members (ensemble / line / ring), N, coupling D, a ring's initial state, the
varied parameter and its spread, and the recorded states.

The form owns its widgets and their state.  It speaks :class:`kernels.flint.run.FlintRun` (the CLI's
run specification, paper 004 ch. 5): :meth:`FlintRunForm.flint_run` builds the run the controls
describe for the bound model, :meth:`FlintRunForm.set_run` shows a run (a session's
``FlintRun.from_dict``).  Every user edit of a control is announced once, as
``edited(key, old, new)`` with the keys of :meth:`FlintRunForm.controls` (the workspace hooks undo
there); :meth:`FlintRunForm.set_value` sets one back.  In SBML reference mode
(:meth:`FlintRunForm.set_sbml_mode`) the Flint-only controls are disabled, dt is the output interval
and the runtime box names the reference simulator.
"""
from __future__ import annotations

import contextlib

import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from kernels.errors import InvalidParameter
from kernels.flint.model import select_states
from kernels.flint.run import FlintRun, Vary
from kernels.flint.schemes import FIXED_METHODS
from kernels.flint.runtimes import RUNTIMES
from kernels.flint.runtimes.auto import AUTO, AUTO_HELP
from kernels.flint.sbml.reference import LABEL as SBML_LABEL
from kernels.flint.sbml.reference import TOOLTIP as SBML_TOOLTIP

from .. import undo
from .worker import HOST_THREADS, INIT_ONE_WAY, INIT_UNIFORM, RUNTIME_TOOLTIP

INIT_TOOLTIP = ("Initial state of a ring.\n"
                "uniform (stimulus): every cell at the model's resting state; the stimulus excites the first "
                "5 cells and two wavefronts run round both ways and annihilate.\n"
                "one-way wave (re-entry): a line is stimulated at one end until a whole pulse has formed "
                "(front, plateau, refractory tail); that pulse is laid on the ring, the refractory tail "
                "behind the front acting as a one-way block, and the stimulus is switched off.  The wave "
                "circulates (sustained re-entry) if the ring is longer than the wavelength: for LR-1991 "
                "about 108 cells at D = 0.15/ms, 54 at D = 0.1 (conduction fails below ≈ 0.09).")

TOOLTIPS = {
    "dt": "Integration time step dt, ms (the models' time unit); the output is recorded every "
          "0.1 ms for runs of more than 2 000 steps",
    "t_end": "End time of the run, ms; the run takes t end / dt steps",
    "integrator": "Method (--method): the fixed-step integrator, explicit Euler (1st order) or classic "
                  "Runge–Kutta 4.  SBML reference mode runs lsoda",
    "runtime": RUNTIME_TOOLTIP,
    "dtype": "Arithmetic precision of the state and the bytecode: float64 or float32",
    "members": "ensemble: N independent copies of the cell (optionally with a parameter varied); "
               "line / ring: N cells coupled by diffusion of V (cable)",
    "n": "Number of ensemble members or cells in the line/ring (1 to 1 000 000)",
    "D": "Diffusive coupling between neighbouring cells of a line/ring, 1/ms (D·(V[i−1] − 2V[i] + V[i+1]))",
    "init": INIT_TOOLTIP,
    "vary": "Ensemble only: a parameter spread evenly over the members (± spread around its value)",
    "spread": "Relative spread of the varied parameter, a fraction (0.3: from 0.7× to 1.3× its value)",
    "record": "State to record and plot.  Several (one member/cell only): a comma list or a pattern, "
              "e.g. 'S_RG_F, S_RG_E' or 'S_*'",
}
#: the labels of the rows (SBML reference mode renames dt and t end)
LABELS = {"dt": "dt (ms)", "t_end": "t end (ms)", "integrator": "Method", "runtime": "Engine",
          "dtype": "Precision", "members": "Members", "n": "N (members / cells)", "D": "Coupling D (1/ms)",
          "init": "Initial state", "vary": "Vary parameter", "spread": "± spread", "record": "Record"}
SBML_LABELS = {"dt": "dt (output interval)", "t_end": "t end (model time)"}
SBML_TIPS = {"dt": "Output interval, in the model's time unit: the reference simulator chooses its own adaptive "
                   "steps",
             "t_end": "End time of the run, in the model's time unit"}
SBML_NOTE = "does not apply to the SBML reference simulator (one model instance, adaptive LSODA, float64)"
#: controls that only the Flint runtimes use (disabled in SBML reference mode)
FLINT_ONLY = ("integrator", "dtype", "members", "n", "D", "vary", "spread", "init")
#: controls hidden in lecture mode
NONESSENTIAL = ("dtype", "spread", "vary")


def gui_runtimes(gpu: bool) -> list[str]:
    """The runtimes the Runtime box offers, from the registry: the GPU ones first when the app runs on
    the GPU, then the CPU ones that can run here (a host compiler found); first, and the default,
    ``auto`` (:func:`kernels.flint.runtimes.auto.choose_runtime`: the choice is said when a run starts)."""
    on_gpu = [k for k, c in RUNTIMES.items() if c.device == "gpu"] if gpu else []
    return [AUTO] + on_gpu + [k for k, c in RUNTIMES.items() if c.device != "gpu" and c.unavailable() is None]


class FlintRunForm(QWidget):
    """The run controls (a QFormLayout).  ``edited(key, old, new)`` after a user's edit of one control;
    ``changed()`` after any change (edits, presets, sessions); ``shape_changed()`` when members or N
    change (the Compiler tab recompiles)."""
    edited = pyqtSignal(str, object, object)
    changed = pyqtSignal()
    shape_changed = pyqtSignal()

    def __init__(self, gpu: bool = False, parent=None):
        super().__init__(parent)
        self.model = None                 # the bound model (kernels.flint.model.Model), or None
        self.sbml = False                 # SBML reference mode
        self._runtime_before = ""
        self._quiet = 0                   # > 0 while the form sets its own widgets (no edited signal)
        form = self.layout_ = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.sp_dt = QDoubleSpinBox(decimals=4, minimum=1e-4, maximum=10.0, value=0.01, singleStep=0.005)
        self.sp_tend = QDoubleSpinBox(decimals=1, minimum=0.1, maximum=1e6, value=400.0)
        self.cb_integ = QComboBox()
        self.cb_integ.addItems(list(FIXED_METHODS))
        self.cb_runtime = QComboBox()
        self.cb_runtime.addItems(gui_runtimes(gpu))
        for i in range(self.cb_runtime.count()):          # each entry: its help line from the registry
            k = self.cb_runtime.itemText(i)
            self.cb_runtime.setItemData(i, AUTO_HELP if k == AUTO else RUNTIMES[k].help,
                                        pg.QtCore.Qt.ItemDataRole.ToolTipRole)
        self.cb_dtype = QComboBox()
        self.cb_dtype.addItems(["float64", "float32"])
        self.cb_net = QComboBox()
        self.cb_net.addItems(["ensemble", "line", "ring"])
        self.sp_n = QSpinBox(minimum=1, maximum=1_000_000, value=1)
        self.sp_D = QDoubleSpinBox(decimals=3, minimum=0.0, maximum=50.0, value=2.0)
        self.cb_init = QComboBox()
        self.cb_init.addItems([INIT_UNIFORM, INIT_ONE_WAY])
        self.cb_vary = QComboBox()
        self.sp_spread = QDoubleSpinBox(decimals=2, minimum=0.0, maximum=1.0, value=0.3, singleStep=0.05)
        self.cb_record = QComboBox()
        self.cb_record.setEditable(True)
        self.cb_record.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        #: key → widget, in the order of the rows
        self.widgets = {"dt": self.sp_dt, "t_end": self.sp_tend, "integrator": self.cb_integ,
                        "runtime": self.cb_runtime, "dtype": self.cb_dtype, "members": self.cb_net, "n": self.sp_n,
                        "D": self.sp_D, "init": self.cb_init, "vary": self.cb_vary, "spread": self.sp_spread,
                        "record": self.cb_record}
        for key, w in self.widgets.items():
            form.addRow(LABELS[key], w)
            w.setToolTip(TOOLTIPS[key])
        self._values = self.controls()
        for key, w in self.widgets.items():        # undo: every control, hooked here once; the boxes
            if w is self.cb_record:                  # by text (their lists change with the model)
                undo.track(w, key, get=w.currentText, set=w.setEditText, changed=w.editTextChanged,
                           label=LABELS[key])
            elif isinstance(w, QComboBox):
                undo.track(w, key, get=w.currentText, set=w.setCurrentText, changed=w.currentTextChanged,
                           label=LABELS[key])
            else:
                undo.track(w, key, label=LABELS[key])
            if isinstance(w, QComboBox):
                sig = w.currentTextChanged if not w.isEditable() else w.editTextChanged
            else:
                sig = w.valueChanged
            sig.connect(lambda *_a, k=key: self._changed(k))
        self.cb_net.currentIndexChanged.connect(self._show_init_row)
        self._show_init_row()

    # ------------------------------------------------------------------ values
    def controls(self) -> dict:
        """The widgets' values by key (numbers for the spin boxes, texts for the boxes)."""
        return {k: (w.value() if not isinstance(w, QComboBox) else w.currentText()) for k, w in self.widgets.items()}

    def value(self, key: str):
        return self.controls()[key]

    @contextlib.contextmanager
    def silent(self):
        """Changes of the controls inside the block are not edits: no ``edited``, no undo entry."""
        self._quiet += 1
        try:
            with undo.suspended(self):
                yield
        finally:
            self._quiet -= 1
            self._values = self.controls()

    def set_value(self, key: str, value) -> None:
        """Set one control (as :meth:`set_controls` does) without announcing it as an edit."""
        with self.silent():
            self.set_controls({key: value})

    def _changed(self, key: str) -> None:
        old, new = self._values.get(key), self.value(key)
        self._values[key] = new
        self.changed.emit()
        if key in ("members", "n"):
            self.shape_changed.emit()
        if not self._quiet and old != new:
            self.edited.emit(key, old, new)

    def set_controls(self, prm: dict) -> None:
        """Set the controls named by the keys of :meth:`controls` (presets, sessions).  A members
        change without "init" starts from rest; "record" may be a list or pattern of states; a text
        not offered raises :class:`InvalidParameter`."""
        for key in ("dt", "t_end", "n", "D", "spread"):
            if key in prm:
                self.widgets[key].setValue(prm[key])
        if "members" in prm and "init" not in prm:
            prm = {**prm, "init": INIT_UNIFORM}
        for key in ("integrator", "runtime", "members", "vary", "record", "dtype", "init"):
            if key not in prm:
                continue
            w = self.widgets[key]
            i = w.findText(str(prm[key]))
            if i < 0 and key == "record" and self.model is not None:    # a list or pattern of states
                select_states(self.model, str(prm[key]))                  # (raises naming a bad entry)
                w.setEditText(str(prm[key]))
                continue
            if i < 0 and key == "init":              # "uniform" / "one-way wave" without the note
                i = w.findText(str(prm[key]), pg.QtCore.Qt.MatchFlag.MatchStartsWith)
            if i < 0:
                raise InvalidParameter(f"{key} {prm[key]!r} is not available here")
            w.setCurrentIndex(i)

    # ------------------------------------------------------------------ the model and the run
    def bind_model(self, model) -> None:
        """Offer the model's states to record and its parameters to vary (the model is kept: its
        current parameter values go into :meth:`flint_run`)."""
        self.model = model
        with self.silent():
            self.cb_record.clear()
            self.cb_vary.clear()
            if model is not None:
                self.cb_record.addItems(list(model.states))
                self.cb_vary.addItems(["(none)"] + list(model.params))

    def one_way(self) -> bool:
        return self.cb_net.currentText() == "ring" and self.cb_init.currentText() == INIT_ONE_WAY

    def flint_run(self) -> FlintRun:
        """The run the controls describe for the bound model (checked; :class:`InvalidParameter` without
        a model): "± spread" becomes :meth:`Vary.around` (linspace over v0·(1 ± spread)) for an
        ensemble of N > 1; output every 0.1 time units for runs of more than 2 000 steps."""
        if self.model is None:
            raise InvalidParameter("no Flint model is loaded")
        m = self.model.copy()
        c = self.controls()
        kind, n, vary = c["members"], c["n"], c["vary"]
        varied = (Vary.around(vary, m.params[vary], c["spread"]),) \
            if kind == "ensemble" and vary in m.params and n > 1 else ()
        dt = c["dt"]
        steps = int(round(c["t_end"] / dt))
        every = max(1, int(round(0.1 / dt))) if steps > 2000 else 1
        names = select_states(m, c["record"] or list(m.states)[0])
        return FlintRun(m, runtime=c["runtime"], integrator=c["integrator"], dtype=c["dtype"], threads=HOST_THREADS, dt=dt,
                        t_end=c["t_end"], members=kind, n=n, coupling=c["D"], vary=varied, record=tuple(names),
                        every=every, protocol="one-way" if kind != "ensemble" and self.one_way() else "uniform")

    def set_run(self, run: FlintRun) -> None:
        """Show ``run``'s controls (its model's parameters are the caller's: the parameter table).
        A runtime not offered here falls back to "cpu"; a vary range lo..hi around v0 = (lo + hi)/2
        becomes "± spread" (hi − lo)/(hi + lo)."""
        ctl = {"dt": run.dt, "t_end": run.t_end, "n": int(run.n), "integrator": run.integrator,
               "runtime": run.runtime if self.cb_runtime.findText(run.runtime) >= 0 else "cpu",
               "members": run.members, "dtype": run.dtype, "D": float(run.coupling),
               "init": INIT_ONE_WAY if run.protocol == "one-way" else INIT_UNIFORM}
        if run.record:
            ctl["record"] = ", ".join(run.record)
        if run.vary:
            v = run.vary[0]
            ctl["vary"] = v.param
            ctl["spread"] = (v.hi - v.lo) / (v.hi + v.lo) if v.hi + v.lo else 0.0
        self.set_controls(ctl)

    # ------------------------------------------------------------------ modes
    def _show_init_row(self, *_a) -> None:
        """The initial-state choice applies to rings only."""
        self.layout_.setRowVisible(self.cb_init, self.cb_net.currentText() == "ring")

    def row_visible(self, key: str) -> bool:
        return self.layout_.isRowVisible(self.widgets[key])

    def set_lecture(self, on: bool) -> None:
        """Lecture mode: the essential controls only."""
        for key in NONESSENTIAL:
            self.layout_.setRowVisible(self.widgets[key], not on)

    def set_sbml_mode(self, recordable: list | None, default_record: str = "") -> None:
        """SBML reference mode with ``recordable`` variables (None: back to the Flint runtimes): the
        Flint-only controls are disabled and say why, dt is the output interval, the runtime box
        names the reference simulator; the previous runtime comes back on leaving."""
        with self.silent():
            self._sbml_mode(recordable, default_record)

    def _sbml_mode(self, recordable, default_record) -> None:
        on = recordable is not None
        rt = self.cb_runtime
        if on:
            self.model = None
            self.cb_record.clear()
            self.cb_record.addItems(list(recordable))
            if default_record:
                self.cb_record.setCurrentText(default_record)
            self.cb_vary.clear()
            self.cb_vary.addItems(["(none)"])
            if not self.sbml:
                self._runtime_before = rt.currentText()
                for i in range(rt.count()):
                    rt.model().item(i).setEnabled(False)
                rt.addItem(SBML_LABEL)
            i = rt.findText(SBML_LABEL)
            rt.setItemData(i, SBML_TOOLTIP, pg.QtCore.Qt.ItemDataRole.ToolTipRole)
            rt.setCurrentIndex(i)
        elif self.sbml:
            i = rt.findText(SBML_LABEL)
            if i >= 0:
                rt.removeItem(i)
            for i in range(rt.count()):
                rt.model().item(i).setEnabled(True)
            rt.setCurrentIndex(max(rt.findText(self._runtime_before), 0))
        self.sbml = on
        rt.setToolTip(SBML_TOOLTIP if on else RUNTIME_TOOLTIP)
        for key in FLINT_ONLY:
            self.widgets[key].setEnabled(not on)
            self.widgets[key].setToolTip(SBML_NOTE if on else TOOLTIPS[key])
        for key in ("dt", "t_end"):
            self.layout_.labelForField(self.widgets[key]).setText((SBML_LABELS if on else LABELS)[key])
            self.widgets[key].setToolTip((SBML_TIPS if on else TOOLTIPS)[key])

    def label(self, key: str) -> str:
        """The text of a control's row label (messages name controls by it)."""
        return self.layout_.labelForField(self.widgets[key]).text()
