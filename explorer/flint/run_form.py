"""The run controls of the Flint workspace as one part, :class:`FlintRunForm`: dt, t end, the method
and the engine (the two axes of :mod:`kernels.flint.schemes`: the engine box offers the engines that
can run here, the method box the methods the chosen engine offers), precision, members (ensemble /
line / ring), N, coupling D, a ring's initial state, the varied parameter and its spread, and the
recorded states.

The form owns its widgets and their state.  It speaks :class:`kernels.flint.run.FlintRun` (the CLI's
run specification, paper 004 ch. 5): :meth:`FlintRunForm.flint_run` builds the run the controls
describe for the bound model, :meth:`FlintRunForm.set_run` shows a run (a session's
``FlintRun.from_dict``).  Every user edit of a control is announced once, as
``edited(key, old, new)`` with the keys of :meth:`FlintRunForm.controls` (the workspace hooks undo
there); :meth:`FlintRunForm.set_value` sets one back.  Old keys (``integrator``, ``runtime``; runtime
``cpu`` is engine numpy, the old "sbml (CPU reference)" entry is lsoda on numpy) are taken too.

For an SBML model that the fixed-step compiler refuses (:meth:`FlintRunForm.set_sbml_mode`) the
engines are the adaptive ensemble engines that take the model (``dopri5`` … on ts / is / c / c-is /
numpy, :mod:`kernels.flint.adaptive_run`) and numpy's ``lsoda``, the SBML reference simulator (one
instance); dt is the output interval and the fixed-step-only controls are disabled.

For a model read from an SBML file that the fixed-step compiler takes (:meth:`FlintRunForm.offer_adaptive`)
the Method box offers the fixed-step methods and, after them, the adaptive ones that run here
(:func:`adaptive_methods`: the ensemble methods, an engine's own ``auto``, ``lsoda``); the Engine box
then lists the engines that offer the chosen method (:func:`method_engines`).  An adaptive method runs
the model as an SBML ensemble (:meth:`FlintRunForm.runs_adaptive`), as for a model with events.
"""
from __future__ import annotations

import contextlib

import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from kernels.errors import InvalidParameter
from kernels.flint.model import select_states
from kernels.flint.run import FlintRun, Vary
from kernels.flint.adaptive_run import EnsembleRun, available_engines, engine_offers_auto, ensemble_methods
from kernels.flint.runtimes import runtime_class
from kernels.flint.runtimes.auto import AUTO, AUTO_HELP
from kernels.flint.sbml.reference import LABEL as SBML_LABEL
from kernels.flint.sbml.reference import TOOLTIP as SBML_TOOLTIP
from kernels.flint.schemes import (FIXED_METHODS, METHODS, engine_for_runtime, engine_help, engine_named,
                                   engine_table)

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
    "method": "",                     # method_tooltip(): one line a method offered
    "engine": RUNTIME_TOOLTIP,
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
LABELS = {"dt": "dt (ms)", "t_end": "t end (ms)", "method": "Method", "engine": "Engine",
          "dtype": "Precision", "members": "Members", "n": "N (members / cells)", "D": "Coupling D (1/ms)",
          "init": "Initial state", "vary": "Vary parameter", "spread": "± spread", "record": "Record"}
SBML_LABELS = {"dt": "dt (output interval)", "t_end": "t end (model time)"}
SBML_TIPS = {"dt": "Output interval, in the model's time unit: the reference simulator chooses its own adaptive "
                   "steps",
             "t_end": "End time of the run, in the model's time unit"}
SBML_NOTE = "does not apply to an SBML model with events (adaptive steps, float64, an ensemble)"
REFERENCE_NOTE = "does not apply to the SBML reference simulator (one model instance, adaptive LSODA, float64)"
#: controls that only the fixed-step engines use (disabled for SBML models with events)
FLINT_ONLY = ("dtype", "members", "D", "init")
#: controls of an ensemble, disabled on the SBML reference simulator (lsoda: one instance)
ENSEMBLE_ONLY = ("n", "vary", "spread")
#: old control keys (sessions and presets before the two axes) → the keys now
OLD_KEYS = {"integrator": "method", "runtime": "engine"}
#: controls hidden in lecture mode
NONESSENTIAL = ("dtype", "spread", "vary")
ADAPTIVE_NOTE = ("does not apply to an adaptive method: the model runs from its SBML file (adaptive steps, "
                 "float64, N independent members)")
#: the methods a fixed-step blow-up suggests, where offered (Rosenbrock; the engines' own stiffness test)
STIFF_METHODS = ("rodas4", AUTO)
#: the units of the methods' steps, after their lines in the Method box's tooltip
FIXED_UNITS = "step dt in ms (an SBML file: its time unit)"
ADAPTIVE_UNITS = "its own steps; dt is the output interval, in model time units"
AUTO_METHOD_HELP = "the engine's own pick per run: dopri5, or rodas4 when the model is stiff"


def method_tooltip(methods: list[str]) -> str:
    """The Method box's tooltip: one line a method offered (the registry's help, then its units)."""
    lines = [f"<b>{m}</b>: {AUTO_METHOD_HELP if m == AUTO else METHODS[m].help}; "
             f"{FIXED_UNITS if m in FIXED_METHODS else ADAPTIVE_UNITS}" for m in methods]
    return "Method (--method): the integrator<br>" + "<br>".join(lines)


def _cpu_or_any(gpu: bool) -> str | None:
    return None if gpu else "cpu"


def adaptive_methods(gpu: bool) -> list[str]:
    """The Method box of a model from an SBML file that the fixed-step compiler takes: the fixed-step
    methods, the ensemble methods some engine runs here, ``auto`` where an engine here has its own, and
    ``lsoda`` (the SBML reference simulator, on numpy)."""
    ms = [m for m in ensemble_methods() if available_engines(m, _cpu_or_any(gpu))]
    return list(FIXED_METHODS) + ms + ([AUTO] if method_engines(AUTO, gpu) else []) + ["lsoda"]


def method_engines(method: str, gpu: bool) -> list[str]:
    """The engines that offer ``method`` here (for :func:`adaptive_methods`): a fixed-step method's
    (:func:`gui_engines`), an ensemble method's (auto first: :func:`~kernels.flint.adaptive_run.default_engine`
    picks), those with an own method ``auto``, numpy for ``lsoda``."""
    if method in FIXED_METHODS:
        return [e for e in gui_engines(gpu) if method in fixed_methods(e)]
    if method == "lsoda":
        return ["numpy"]
    here = [e for m in ensemble_methods() for e in available_engines(m, _cpu_or_any(gpu))]
    if method == AUTO:
        return [e for e in dict.fromkeys(here) if engine_offers_auto(e)]
    return [AUTO] + available_engines(method, _cpu_or_any(gpu))


def gui_engines(gpu: bool) -> list[str]:
    """The engines of fixed-step runs the Engine box offers, from the registries
    (:func:`kernels.flint.schemes.engine_table`): the GPU ones first when the app runs on the GPU, then
    the CPU ones that can run here (a host compiler found); first, and the default, ``auto``
    (:func:`kernels.flint.runtimes.auto.choose_runtime`: the choice is said when a run starts)."""
    engines = [engine_named(e) for e, ms in engine_table("flint").items() if set(ms) & set(FIXED_METHODS)]
    on_gpu = [e.name for e in engines if e.device == "gpu"] if gpu else []
    return [AUTO] + on_gpu + [e.name for e in engines if e.device != "gpu"
                              and runtime_class(e.runtime).unavailable() is None]


def fixed_methods(engine: str) -> list[str]:
    """The fixed-step methods ``engine`` offers (auto: every one)."""
    if engine == AUTO:
        return list(FIXED_METHODS)
    return [m for m in engine_table("flint").get(engine, FIXED_METHODS) if m in FIXED_METHODS]


def sbml_engines(gpu: bool, ensemble: bool, stiff_only: bool = False) -> list[str]:
    """The Engine box for an SBML model with events: auto, the ensemble engines that can run here
    (``ensemble``: the model lowers to the ODE core; ``stiff_only``: only as the DAE / delay core that
    Rodas4 runs) and numpy (always: lsoda, the reference)."""
    out = [AUTO]
    if ensemble:
        out += [e for m in ensemble_methods() if not stiff_only or m == "rodas4"
                for e in available_engines(m, None if gpu else "cpu")]
    out.append("numpy")
    return list(dict.fromkeys(out))


def sbml_methods(engine: str, ensemble: bool, stiff_only: bool = False) -> list[str]:
    """The methods ``engine`` offers an SBML model with events: the engine's own auto (Dormand–Prince,
    Rodas4 when stiff) where it has one, the ensemble methods (when the model lowers) and, on numpy or
    auto, lsoda (the SBML reference simulator)."""
    table = engine_table("flint-suite")
    ms = [m for m in ensemble_methods() if ensemble and (engine == AUTO or m in table.get(engine, ()))
          and (not stiff_only or m == "rodas4")]
    if ensemble and engine != AUTO and engine_offers_auto(engine):     # the engine's own pick, first
        ms.insert(0, AUTO)
    if engine in (AUTO, "numpy"):
        ms.append("lsoda")
    return ms


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
        self.gpu = bool(gpu)
        self.sbml = False                 # an SBML model with events (ensemble engines or the reference)
        self.ensemble = False             # … that the ensemble engines take
        self.stiff_only = False           # … as the DAE / delay core only (Rodas4, auto)
        self.adaptive = False             # a model from an SBML file: the adaptive methods offered too
        self._engine_before = ""
        self._quiet = 0                   # > 0 while the form sets its own widgets (no edited signal)
        form = self.layout_ = QFormLayout(self)
        self.time_unit = "ms"             # the loaded model's ("" when it declares none)
        self._adaptive_on = False         # dt is the output interval (adaptive methods, SBML reference)
        form.setContentsMargins(0, 0, 0, 0)
        self.sp_dt = QDoubleSpinBox(decimals=4, minimum=1e-4, maximum=10.0, value=0.01, singleStep=0.005)
        self.sp_tend = QDoubleSpinBox(decimals=1, minimum=0.1, maximum=1e6, value=400.0)
        self.cb_method = QComboBox()
        self.cb_method.addItems(list(FIXED_METHODS))
        self.cb_engine = QComboBox()
        self._fill_engines(gui_engines(gpu), "flint")
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
        self.widgets = {"dt": self.sp_dt, "t_end": self.sp_tend, "engine": self.cb_engine,
                        "method": self.cb_method, "dtype": self.cb_dtype, "members": self.cb_net, "n": self.sp_n,
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
        self.cb_engine.currentTextChanged.connect(self._offer_methods)
        self.cb_method.currentTextChanged.connect(self._method_chosen)
        self._show_init_row()
        self.cb_method.setToolTip(method_tooltip(list(FIXED_METHODS)))

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
        """Set the controls named by the keys of :meth:`controls` (presets, sessions; the old keys
        ``integrator`` / ``runtime`` too).  The engine is set before the method (it decides the methods
        offered).  A members change without "init" starts from rest; "record" may be a list or pattern
        of states; a text not offered raises :class:`InvalidParameter`."""
        prm = upgrade_controls(prm)
        axes = ("method", "engine") if self.adaptive else ("engine", "method")    # the deciding one first
        for key in ("dt", "t_end", "n", "D", "spread"):
            if key in prm:
                self.widgets[key].setValue(prm[key])
        if "members" in prm and "init" not in prm:
            prm = {**prm, "init": INIT_UNIFORM}
        for key in (*axes, "members", "vary", "record", "dtype", "init"):
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

    def restore_controls(self, ctl: dict) -> None:
        """A session's controls (old keys too): the engine and the method after the others, the deciding
        one first; an engine not offered here falls back to auto, a method not offered is left as it is."""
        ctl = upgrade_controls(ctl)
        axes = {k: ctl.pop(k) for k in ("method", "engine") if k in ctl}
        self.set_controls(ctl)
        for key in ("method", "engine") if self.adaptive else ("engine", "method"):
            value = str(axes.get(key, ""))
            if self.widgets[key].findText(value) < 0:
                value = AUTO if key == "engine" else ""
            if self.widgets[key].findText(value) >= 0:
                self.set_controls({key: value})

    # ------------------------------------------------------------------ the two axes
    def _fill_engines(self, engines: list[str], command: str, keep: str = "") -> None:
        """The Engine box's entries, each with its help line (what it is, the methods it offers);
        ``keep``: the engine kept current when offered."""
        helps = engine_help(command if command == "flint" else "flint-suite")
        rt = self.cb_engine
        rt.blockSignals(True)
        rt.clear()
        rt.addItems(engines)
        if keep in engines:
            rt.setCurrentText(keep)
        for i, k in enumerate(engines):
            rt.setItemData(i, AUTO_HELP if k == AUTO and command == "flint" else
                           helps.get(k, "picked: the GPU's ts when there is one, else the host's engines"),
                           pg.QtCore.Qt.ItemDataRole.ToolTipRole)
        rt.blockSignals(False)
        undo.resync(self)                   # the undo trackers remember the box as it is now
        self._offer_methods()

    def _offer_methods(self, *_a) -> None:
        """The Method box offers the methods of the chosen engine (the current one kept when offered)."""
        engine = self.cb_engine.currentText()
        if self.adaptive:                   # the methods decide the engines (_method_chosen)
            ms = adaptive_methods(self.gpu)
        else:
            ms = sbml_methods(engine, self.ensemble, self.stiff_only) if self.sbml else fixed_methods(engine)
        w, cur = self.cb_method, self.cb_method.currentText()
        if [w.itemText(i) for i in range(w.count())] == ms:
            return
        w.blockSignals(True)
        w.clear()
        w.addItems(ms)
        if cur in ms:
            w.setCurrentText(cur)
        w.blockSignals(False)
        undo.resync(self)                   # the undo trackers remember the box as it is now
        w.setToolTip(method_tooltip(ms))
        if w.currentText() != cur:
            self._method_chosen()
            self._changed("method")
        self._show_reference_controls()

    def _method_chosen(self, *_a) -> None:
        """A model from an SBML file: the Engine box offers the chosen method's engines (the current one
        kept when offered), and the fixed-step-only controls follow the method."""
        if self.adaptive:
            m, cur = self.cb_method.currentText(), self.cb_engine.currentText()
            self._fill_engines(method_engines(m, self.gpu), "flint" if m in FIXED_METHODS else "flint-suite", cur)
            if self.cb_engine.currentText() != cur:
                self._changed("engine")
            self._show_adaptive_controls(self.runs_adaptive(), ADAPTIVE_NOTE)
        self._show_reference_controls()

    def offer_adaptive(self, on: bool) -> None:
        """A model read from an SBML file that the fixed-step compiler takes (on): the Method box offers
        :func:`adaptive_methods` too; off: the fixed-step methods of the engine alone."""
        with self.silent():
            if on == self.adaptive:
                return
            self.adaptive = bool(on)
            if on:
                self._offer_methods()
                self._method_chosen()
            else:
                self._fill_engines(gui_engines(self.gpu), "flint", self.cb_engine.currentText())
                self._show_adaptive_controls(False)
                self._show_reference_controls(force=True)

    def runs_adaptive(self) -> bool:
        """The run goes through the SBML paths: a model with events, or an adaptive method chosen for a
        model from an SBML file (:meth:`offer_adaptive`)."""
        return self.sbml or (self.adaptive and self.cb_method.currentText() not in FIXED_METHODS)

    def stiff_hint(self) -> str:
        """What a fixed-step blow-up of a model from an SBML file adds: the stiff methods offered here."""
        ms = [m for m in STIFF_METHODS if self.adaptive and self.cb_method.findText(m) >= 0]
        return f"the model may be stiff: choose method {' or '.join(ms)}" if ms else ""

    def reference(self) -> bool:
        """The SBML reference simulator runs (method lsoda of an SBML model)."""
        return (self.sbml or self.adaptive) and self.cb_method.currentText() == "lsoda"

    def _show_reference_controls(self, force: bool = False) -> None:
        """lsoda runs one instance: N, vary and spread are disabled (and say why) on it."""
        if not (self.sbml or self.adaptive or force):
            return
        on = self.reference()
        for key in ENSEMBLE_ONLY:
            self.widgets[key].setEnabled(not on)
            self.widgets[key].setToolTip(REFERENCE_NOTE if on else TOOLTIPS[key])
        self.cb_engine.setToolTip(SBML_TOOLTIP if on else RUNTIME_TOOLTIP)

    # ------------------------------------------------------------------ the model and the run
    def set_time_unit(self, unit: str) -> None:
        """dt and t end labelled in the model's time unit ``unit`` ("ms" for Flint models; "" for a model
        that declares none: "model time")."""
        self.time_unit = unit
        self._label_times()

    def _label_times(self) -> None:
        u = self.time_unit or "model time"
        for key in ("dt", "t_end"):
            text = (SBML_LABELS if self._adaptive_on else LABELS)[key]
            tip = (SBML_TIPS if self._adaptive_on else TOOLTIPS)[key]
            if u != "ms":
                text = text.replace("(ms)", f"({u})")
                tip = (tip.replace(", ms (the models' time unit)", f", {u}").replace(", ms;", f", {u};")
                       .replace("0.1 ms", f"0.1 {u}"))
            if self.time_unit:
                text = text.replace("(model time)", f"({u})")
                tip = tip.replace("in the model's time unit", f"in {u}")
            self.layout_.labelForField(self.widgets[key]).setText(text)
            self.widgets[key].setToolTip(tip)

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
        if self.runs_adaptive():
            raise InvalidParameter(f"method {self.cb_method.currentText()} runs the model from its SBML file, "
                                   "not as a fixed-step run")
        m = self.model.copy()
        c = self.controls()
        kind, n, vary = c["members"], c["n"], c["vary"]
        varied = (Vary.around(vary, m.params[vary], c["spread"]),) \
            if kind == "ensemble" and vary in m.params and n > 1 else ()
        dt = c["dt"]
        steps = int(round(c["t_end"] / dt))
        every = max(1, int(round(0.1 / dt))) if steps > 2000 else 1
        names = select_states(m, c["record"] or list(m.states)[0])
        return FlintRun(m, runtime=c["engine"], integrator=c["method"], dtype=c["dtype"], threads=HOST_THREADS,
                        dt=dt, t_end=c["t_end"], members=kind, n=n, coupling=c["D"], vary=varied,
                        record=tuple(names), every=every, backend=None if self.gpu else "cpu",
                        protocol="one-way" if kind != "ensemble" and self.one_way() else "uniform")

    def ensemble_run(self, path, params: dict, record: list, values: dict):
        """The :class:`~kernels.flint.adaptive_run.EnsembleRun` the controls describe for the SBML model
        at ``path`` (``params``: the user's edits; ``record``: the variables; "± spread" as for
        :meth:`flint_run`, around the varied parameter's current value in ``values``)."""
        c = self.controls()
        n, vary = c["n"], c["vary"]
        varied = ()
        if vary in values and n > 1:
            varied = (Vary.around(vary, values[vary], c["spread"]),)
        return EnsembleRun(str(path), method=c["method"], engine=c["engine"], n=n, t_end=c["t_end"], dt=c["dt"],
                           params=tuple(params.items()), vary=varied, record=tuple(record),
                           backend=None if self.gpu else "cpu")

    def set_run(self, run) -> None:
        """Show ``run``'s controls (a :class:`FlintRun`, or an ensemble run's dict; its model's parameters
        are the caller's: the parameter table).  An engine not offered here falls back to auto; a vary
        range lo..hi around v0 = (lo + hi)/2 becomes "± spread" (hi − lo)/(hi + lo)."""
        engine = run.engine if self.cb_engine.findText(run.engine) >= 0 else AUTO
        ctl = {"dt": run.dt, "t_end": run.t_end, "n": int(run.n), "engine": engine, "method": run.method}
        if isinstance(run, FlintRun):
            ctl.update({"members": run.members, "dtype": run.dtype, "D": float(run.coupling),
                        "init": INIT_ONE_WAY if run.protocol == "one-way" else INIT_UNIFORM})
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

    def set_sbml_mode(self, recordable: list | None, default_record: str = "", ensemble: bool = False,
                      varied: list | None = None, stiff_only: bool = False) -> None:
        """An SBML model with events, with ``recordable`` variables (None: back to the fixed-step
        engines): ``ensemble`` when the adaptive ensemble engines take it (the Engine box offers them,
        else numpy's lsoda, the reference simulator, alone); ``varied``: the parameters an ensemble can
        vary.  The fixed-step-only controls are disabled and say why, dt is the output interval; the
        previous engine comes back on leaving.  ``stiff_only``: the ensemble engines take it only as the
        DAE / delay core (algebraic rules, fast reactions, delays): Rodas4 and the engines' auto."""
        with self.silent():
            self._sbml_mode(recordable, default_record, ensemble, varied or [], stiff_only)

    def _sbml_mode(self, recordable, default_record, ensemble, varied, stiff_only=False) -> None:
        on = recordable is not None
        if on:
            self.model = None
            self.cb_record.clear()
            self.cb_record.addItems(list(recordable))
            if default_record:
                self.cb_record.setCurrentText(default_record)
            self.cb_vary.clear()
            self.cb_vary.addItems(["(none)"] + (list(varied) if ensemble else []))
            if not self.sbml:
                self._engine_before = self.cb_engine.currentText()
            self.sbml, self.ensemble, self.stiff_only, self.adaptive = True, bool(ensemble), bool(stiff_only), False
            self._fill_engines(sbml_engines(self.gpu, self.ensemble, self.stiff_only), "flint-suite")
            self.cb_engine.setCurrentIndex(0)
            self.cb_method.setCurrentIndex(0)
            if self.cb_net.currentText() != "ensemble":
                self.cb_net.setCurrentText("ensemble")
        elif self.sbml:
            self.sbml, self.ensemble, self.stiff_only = False, False, False
            self._fill_engines(gui_engines(self.gpu), "flint")
            self.cb_engine.setCurrentIndex(max(self.cb_engine.findText(self._engine_before), 0))
            for key in ENSEMBLE_ONLY:
                self.widgets[key].setEnabled(True)
                self.widgets[key].setToolTip(TOOLTIPS[key])
        self.cb_engine.setToolTip(RUNTIME_TOOLTIP)
        self._show_adaptive_controls(on)
        self._show_reference_controls()

    def _show_adaptive_controls(self, on: bool, note: str = SBML_NOTE) -> None:
        """The fixed-step-only controls disabled (saying why: ``note``) and dt the output interval (on)."""
        if on and self.cb_net.currentText() != "ensemble":
            with self.silent():
                self.cb_net.setCurrentText("ensemble")
        for key in FLINT_ONLY:
            self.widgets[key].setEnabled(not on)
            self.widgets[key].setToolTip(note if on else TOOLTIPS[key])
        self._adaptive_on = on
        self._label_times()

    def label(self, key: str) -> str:
        """The text of a control's row label (messages name controls by it)."""
        return self.layout_.labelForField(self.widgets[key]).text()


def upgrade_controls(prm: dict) -> dict:
    """Controls of an older session or preset in today's keys: ``integrator`` → ``method``, ``runtime``
    → ``engine`` (runtime ``cpu`` is engine numpy; the old "sbml (CPU reference)" entry is lsoda on
    numpy)."""
    prm = dict(prm)
    for old, new in OLD_KEYS.items():
        if old in prm:
            prm.setdefault(new, prm.pop(old))
    if prm.get("engine") == SBML_LABEL:
        prm["engine"], prm["method"] = "numpy", "lsoda"
    elif "engine" in prm:
        prm["engine"] = engine_for_runtime(str(prm["engine"]))
    return prm
