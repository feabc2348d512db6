"""The Flint workspace: pick a cell model, edit parameters, integrate on NumPy / IS / TS, watch traces.

Views only: models, the compiler and the runtimes are ``kernels.flint`` (paper 004, Okuyama 2013,
ch. 5).  The workspace composes parts that own their state (napari's ``QtViewer`` composing
``QtDims``, ``QtLayerList`` and the canvas is the model):

* :class:`~.params_table.ParameterTable` — the parameters and the values typed into them;
* :class:`~.stimulus.StimulusEditor` — the ``stim_*`` parameters, through the table;
* :class:`~.run_form.FlintRunForm` — the run controls, as a :class:`kernels.flint.run.FlintRun`;
* :class:`~.sbml_panel.SbmlPanel` — SBML reference mode (files only the reference simulator reads);
* :class:`~.sbml_file.SbmlFileRuns` — the adaptive methods of a model read from an SBML file;
* :class:`~.run_controls.RunControls` — Run / Pause / Stop, progress, the running worker;
* :class:`~.trace_view.TraceView` — the recorded traces, heatmap, readout and traces export;
* :class:`~.compiler_panel.CompilerPanel` — DAG levels, bytecode listing, optimisation effects.

The workspace itself loads models, wires the parts, and keeps presets and sessions.  Undo of every
parameter edit hooks in at the parts (the table and the form, ``explorer.undo``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QAbstractButton, QComboBox, QFileDialog, QFormLayout, QPushButton, QSplitter, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError, InvalidParameter
from kernels.flint import Network, shipped_models
from kernels.flint.loaders import read_model
from kernels.flint.adaptive_run import EnsembleRun
from kernels.flint.run import FlintRun

from .. import recent, undo
from ..export import Figure, guarded, save_figure
from ..widgets import MessageBar
from ..workspace_api import Workspace
from .compiler_panel import CompilerPanel
from .params_table import ParameterTable
from .run_controls import RunControls
from .run_form import FlintRunForm
from .sbml_file import SbmlFileRuns
from .sbml_panel import SbmlPanel, open_sbml, refusal_text, sbml_worker
from .stimulus import StimulusEditor
from .trace_view import MODEL_TIME, TraceView
from .traces import check_recording
from .worker import EnsembleWorker, FlintWorker, SbmlWorker

MODEL_SUFFIXES = (".flint", ".xml", ".sbml", ".cellml")
#: tooltips of the buttons Qt builds inside tables and tab bars (it gives them none)
INTERNAL_BUTTON_TIPS = {"qt_tableview_cornerbutton": "Select the whole table",
                        "ScrollLeftButton": "Scroll the tabs left", "ScrollRightButton": "Scroll the tabs right"}
COMPILER_TAB_TIP = ("The Flint compiler refuses this model; it runs on the SBML reference simulator, which does "
                    "not compile to bytecode.")


class FlintWorkspace(Workspace, QWidget):
    status_changed = pyqtSignal(dict)
    CAPABILITIES = frozenset({"open_field", "export_image", "export_plots", "toggle_run", "apply_preset", "figures",
                              "sessions", "open_files", "user_presets"})
    MENU_TEXT = {"toggle_run": "&Run / pause model", "export_plots": "Export &traces (CSV/NPZ)…"}
    FILE_TYPES = {s: "model" for s in MODEL_SUFFIXES}
    message_bar = property(lambda self: self.message)     # the Workspace contract's name for its MessageBar

    def __init__(self, backend, parent=None, **options):
        super().__init__(parent)
        self.backend = backend
        self.model = None
        self.files_read: list[str] = []     # the files the loaded model's reading opened
        self.preset = None
        self.cfg: dict = {}
        self.last_result = None             # the finished run's result (SBML runs: with the event firings)
        lay = QVBoxLayout(self)
        split = QSplitter(self)
        lay.addWidget(split)
        # ---- controls
        left = QWidget()
        ll = QVBoxLayout(left)
        top = QFormLayout()
        self.cb_model = QComboBox(left)
        # one entry a shipped model (its native .flint); the SBML/CellML copies open with "Open model file…"
        for name, path in shipped_models().items():
            if path.suffix == ".flint":
                self.cb_model.addItem(name, str(path))
        self.cb_model.setToolTip("Shipped models (resources/models). The same models as SBML (.xml) and "
                                 "CellML (.cellml) files open with “Open model file…” or by dropping them here.")
        self.bt_open = QPushButton("Open model file…", left)
        self.bt_open.setToolTip("Open an SBML (.xml/.sbml), CellML (.cellml) or native Flint (.flint) model file; "
                                "it joins the model list when it loads")
        self.bt_open.clicked.connect(lambda: self.open_field())
        top.addRow("Model", self.cb_model)
        top.addRow("", self.bt_open)
        ll.addLayout(top)
        self.sbml_panel = SbmlPanel(left)
        self.sbml_file = SbmlFileRuns()
        ll.addWidget(self.sbml_panel)
        self.table = ParameterTable(left)
        self.table.edited.connect(self._param_edited)
        ll.addWidget(self.table, 1)
        self.stim = StimulusEditor(self.set_parameter, left)
        ll.addWidget(self.stim)
        self.form = FlintRunForm(backend.is_gpu, left)
        self.form.shape_changed.connect(self._show_listing)
        self.form.changed.connect(self._emit_status)          # the caption names dt, N, runtime …
        ll.addWidget(self.form)
        self.runbar = RunControls(left)
        self.runbar.run_clicked.connect(self.run)
        self.runbar.rate.connect(self._emit_status)
        self.runbar.paused_changed.connect(lambda _p: self._emit_status())
        self.runbar.finished.connect(self._on_done)
        ll.addWidget(self.runbar)
        split.addWidget(left)
        # ---- views
        right = QWidget()
        rl = QVBoxLayout(right)
        self.message = MessageBar(self)
        rl.addWidget(self.message)
        self.table.refused.connect(self.message.show_message)
        self.view = self.tabs = TraceView()
        self.view.cursor.connect(lambda text: self.status_changed.emit({"cursor": text}))
        self.compiler = CompilerPanel(message=self.message.show_message)
        self.view.addTab(self.compiler, "Compiler")
        rl.addWidget(self.view)
        split.addWidget(right)
        split.setSizes([360, 900])
        # the parts' widgets that other modules' tests and the main window reach for
        self.plot, self.heat, self.heat_view, self.heat_bar = (self.view.plot, self.view.heat, self.view.heat_view,
                                                               self.view.heat_bar)
        self.listing, self.progress, self.lb_rate = self.compiler.listing, self.runbar.progress, self.runbar.lb_rate
        f = self.form
        self.sp_dt, self.sp_tend, self.sp_n, self.sp_D, self.sp_spread = f.sp_dt, f.sp_tend, f.sp_n, f.sp_D, f.sp_spread
        for b in self.findChildren(QAbstractButton):
            if not b.toolTip() and b.objectName() in INTERNAL_BUTTON_TIPS:
                b.setToolTip(INTERNAL_BUTTON_TIPS[b.objectName()])
        self.cb_model.currentIndexChanged.connect(self._on_model_chosen)
        self._loaded_index = -1           # the model-list entry that is loaded
        if self.cb_model.count() and self.load(self.cb_model.currentData()):
            self._loaded_index = self.cb_model.currentIndex()

    # ------------------------------------------------------------------ the parts' state, read through
    worker = property(lambda self: self.runbar.worker, doc="The running worker, or None.")
    curves = property(lambda self: self.view.curves)
    times = property(lambda self: self.view.times, doc="Output times of the last run.")
    samples = property(lambda self: self.view.samples, doc="Recorded values (points, variables, members/cells).")
    record_names = property(lambda self: self.view.record_names)
    sbml = property(lambda self: self.sbml_panel.ref, doc="The SbmlReference in SBML reference mode, else None.")
    sbml_params = property(lambda self: self.sbml_panel.edits())

    def in_sbml_mode(self) -> bool:
        return self.sbml_panel.active()

    def one_way(self) -> bool:
        return self.form.one_way()

    def flint_run(self) -> FlintRun:
        """The run the controls describe (:meth:`FlintRunForm.flint_run`)."""
        return self.form.flint_run()

    # ------------------------------------------------------------------ model
    def _on_model_chosen(self, i: int) -> None:
        """A model picked in the list: load it, or go back to the loaded one (with the message)."""
        if self.load(self.cb_model.itemData(i)):
            self._loaded_index = i
        elif self._loaded_index >= 0:
            self.cb_model.blockSignals(True)
            self.cb_model.setCurrentIndex(self._loaded_index)
            self.cb_model.blockSignals(False)

    def load(self, path) -> bool:
        """Load a model file (or enter SBML reference mode for an SBML file only the reference
        simulator reads); False after a message when it cannot be read (nothing changes)."""
        try:
            loaded = read_model(path)
        except ExplorerError as exc:
            if Path(str(path)).suffix.lower() not in (".xml", ".sbml"):
                self.message.show_message(str(exc))
                return False
            ref, ensemble_why, ref_why = open_sbml(path)
            if ref is None:
                self.message.show_message(refusal_text(path, str(exc), ensemble_why, ref_why))
                return False
            self._enter_sbml(ref, str(exc), ensemble_why)
            return True
        with undo.suspended(self):
            self._show_flint_mode(True)
            self.model = m = loaded.model
            self._set_time_unit(m.time_units)
            #: the files the model's reading opened: the model file, then the files it names (comp, imports)
            self.files_read = list(loaded.files_read)
            self.table.show_parameters(m.name, m.params, m.units)
            self.form.bind_model(m)
            self.form.offer_adaptive(self.sbml_file.bind(path, m))
            self.stim.bind(m)
        self._show_listing()
        read = f"; files read: {', '.join(self.files_read)}" if len(self.files_read) > 1 else ""
        more = ("; from SBML: the Method box offers the adaptive methods too (rodas4 for stiff models)"
                if self.sbml_file.active() else "")
        self.message.show_message(f"loaded {m.name}: {m.n_states} states, {len(m.params)} parameters, "
                                  f"{len(m.assigns)} functions{read}{more}", "info")
        self._emit_status()
        return True

    def _enter_sbml(self, ref, why: str, ensemble_why: str | None) -> None:
        """Show an SBML model the fixed-step compiler refuses (``why``), to be run on the adaptive ensemble
        engines (``ensemble_why`` None) or on the SBML reference simulator."""
        with undo.suspended(self):
            self.model = None
            self.sbml_file.bind(None, None)
            self.sbml_panel.enter(ref, why, ensemble_why)
            values, roles, fixed = self.sbml_panel.parameters()
            self.table.show_parameters(ref.name, values, roles, "role", fixed)
            self.form.set_sbml_mode(ref.recordable, ref.default_record()[0] if ref.recordable else "",
                                    ensemble=self.sbml_panel.ensemble(), varied=self.sbml_panel.varied,
                                    stiff_only=self.sbml_panel.stiff_only)
            self.stim.bind(None)
            self._show_flint_mode(False)
            self._set_time_unit(ref.system.time_units)
        self.listing.setPlainText(self.sbml_panel.listing_text())
        self._tag_sbml_item()
        self.message.show_message(self.sbml_panel.loaded_text(), "info")
        self._emit_status()

    def _show_flint_mode(self, on: bool) -> None:
        """The Compiler tab of the Flint runtimes (on) or of SBML reference mode."""
        if on and self.sbml_panel.active():
            self.sbml_panel.leave()
            self.form.set_sbml_mode(None)
        k = self.view.indexOf(self.compiler)
        if not on and self.view.currentIndex() == k:
            self.view.setCurrentWidget(self.plot)
        self.view.setTabEnabled(k, on)
        self.view.setTabToolTip(k, "" if on else COMPILER_TAB_TIP)

    def _set_time_unit(self, unit: str) -> None:
        """The time axes and the dt / t end labels in the model's time unit ("" when it declares none)."""
        self.view.set_time_unit(unit or MODEL_TIME)
        self.form.set_time_unit(unit)

    def _tag_sbml_item(self) -> None:
        """Name SBML reference mode in the model list entry of the loaded file."""
        ref, i = self.sbml, self.cb_model.currentIndex()
        if ref is None or i < 0 or self.cb_model.currentData() != str(ref.path):
            return
        tag = "SBML events" if self.sbml_panel.ensemble() else "SBML reference"
        if tag not in self.cb_model.itemText(i):
            self.cb_model.setItemText(i, f"{self.cb_model.itemText(i)} — {tag}")
            where = ("the adaptive ensemble engines" if self.sbml_panel.ensemble()
                     else f"the SBML reference simulator ({self.sbml_panel.ensemble_why})")
            self.cb_model.setItemData(i, f"{ref.path}: runs on {where}", Qt.ItemDataRole.ToolTipRole)

    def open_field(self, path: str | None = None) -> bool:
        """Open a model file (.flint, SBML, CellML); it joins the model list only when it loads."""
        dialog = not path
        if dialog:
            path, _ = QFileDialog.getOpenFileName(self, "Open model", "", "Models (*.flint *.xml *.sbml *.cellml)")
            if not path:
                return False
        if not self.load(path):
            return False
        i = self.cb_model.findData(str(path))
        self.cb_model.blockSignals(True)
        if i < 0:
            self.cb_model.addItem(Path(path).name, str(path))
            i = self.cb_model.count() - 1
        self.cb_model.setCurrentIndex(i)
        self.cb_model.blockSignals(False)
        self._loaded_index = i
        self._tag_sbml_item()
        if dialog:
            recent.file_opened(path)
        return True

    def open_file(self, path: str) -> None:
        """A model file dropped on the window or picked in Open Recent; :class:`ExplorerError` (and
        nothing changes) when it cannot be read."""
        if Path(path).suffix.lower() not in self.FILE_TYPES:
            raise InvalidParameter(f"{Path(path).name}: the Flint workspace opens "
                                   f"{', '.join(MODEL_SUFFIXES)} model files")
        if not self.open_field(str(path)):
            raise InvalidParameter(self.message.text() or f"cannot read {path}")

    # ------------------------------------------------------------------ parameters
    def _param_edited(self, name: str, _old: float, value: float) -> None:
        """An accepted edit in the parameter table: the model (or the SBML run) uses it from now on."""
        if self.sbml_panel.active():
            self.sbml_panel.set_parameter(name, value)
            return
        if self.model is not None and name in self.model.params:
            self.model.params[name] = value
            self.stim.refresh(self.model)
            self._show_listing()

    def set_parameter(self, name: str, value: float) -> None:
        """Set a parameter as if typed in the table (:class:`InvalidParameter` for an unknown or fixed one)."""
        self.table.set_value(name, value)

    def _config(self) -> dict:
        """The worker's run: ``run`` (:meth:`flint_run`, checked, what FlintWorker integrates with
        ``run.simulation()``) and, for the views, its model, N, steps and recorded state indices."""
        run = self.form.flint_run()
        n, rec = run.n, run.record_index
        if len(rec) > 1 and n > 1:
            raise InvalidParameter(f"{len(rec)} recorded states need N = 1 (one member or cell); "
                                   "with N > 1 record one state")
        check_recording(run.steps // run.every + 1, len(rec), n)
        return {"run": run, "model": run.model, "n": n, "steps": run.steps, "record": rec,
                "blowup_hint": self.form.stiff_hint()}

    def _show_listing(self, *_a) -> None:
        """Recompile for the Compiler tab (≤ 4 members, on its worker thread; not for an adaptive method)."""
        if self.model is None or self.form.runs_adaptive():
            return
        try:
            run = self._config()["run"]
        except ExplorerError as exc:
            self.listing.setPlainText(f"cannot compile: {exc}")
            return
        net, k = run.network, min(run.n, 4)
        self.compiler.request(run.model, k, {p: v[:4] for p, v in run.member_params().items()},
                              Network(net.kind, k, net.state, net.D) if net else None)

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        """Start a run of the controls' FlintRun (or of the SBML reference model); pause/resume a running one."""
        if self.runbar.is_running():
            self.runbar.pause()
            return
        try:
            if self.model is None and not self.sbml_panel.active():
                raise InvalidParameter("no model loaded")
            if self.form.runs_adaptive():       # an SBML model with events, or an SBML file's adaptive method
                cfg, worker = (sbml_worker(self.sbml_panel.ref, self.sbml_panel.edits(), self.form, self)
                               if self.sbml_panel.active() else self.sbml_file.worker(self.form, self.model, self))
                names, units, total = cfg["record"], {}, cfg["steps"] + 1
                # output points i0 … (a later chunk from i0 replaces points sent before)
                worker.chunk.connect(lambda i0, t, y: self.view.append(t, y, at=i0))
            else:
                cfg = self._config()
                worker, units, total = FlintWorker(cfg, self), cfg["model"].units, cfg["steps"]
                names = [list(cfg["model"].states)[i] for i in cfg["record"]]
                worker.note.connect(lambda msg: self.message.show_message(msg, "info"))
                worker.chunk.connect(self.view.append)
        except ExplorerError as exc:
            self.message.show_message(str(exc))
            return
        self.cfg = cfg
        if self.message.level == "error":           # an earlier run's failure: this run starts afresh
            self.message.hide()
        self.view.begin(names, cfg["n"], units)
        worker.failed.connect(self.message.show_message)
        self.runbar.start(worker, total, cfg.get("unit", "steps"))
        self.view.set_live(True)

    def toggle_run(self) -> None:
        self.run()

    def pause(self) -> None:
        self.runbar.pause()

    def stop(self) -> None:
        self.runbar.stop()

    def is_running(self) -> bool:
        return self.runbar.is_running()

    def busy(self) -> bool:
        """A run is in progress (the mode bar marks it; quitting asks first)."""
        return self.runbar.is_running()

    def _on_done(self, w) -> None:
        self.view.set_live(False)
        self._mark_events(w)
        block = w.sim.info()["block_size"] if w.sim is not None else None
        if block is not None:                       # a runtime that tunes its block size (ts)
            self.runbar.note(f", {w.sim.runtime.upper()} block {block}", append=True)
        res = getattr(w, "result", None)
        if isinstance(w, EnsembleWorker) and res is not None and res.method and w.cfg["run"].method == "auto":
            self.runbar.note(f", method auto ran {res.method}", append=True)      # the engine's own pick
        if res is not None and not res.complete:
            self.runbar.note(f"stopped at t = {res.times[-1] if len(res.times) else 0:g}")
        self._emit_status()

    def _mark_events(self, w) -> None:
        """The event firings of a finished SBML run (member 0) as markers on the time axis, and one line
        saying how many (or that the engine does not report them)."""
        res = self.last_result = getattr(w, "result", None)
        if isinstance(w, EnsembleWorker) and res is not None and w.cfg["run"].core.events:
            if res.reports_events:
                self.view.set_events(res.event_times(0))
                self.runbar.note(f", {len(res.event_times(0))} event firings marked (member 0)", append=True)
            else:
                self.runbar.note(f", engine {w.cfg['run'].engine} does not report event firings: none marked",
                                 append=True)
        elif isinstance(w, SbmlWorker) and w.events is not None:
            self.view.set_events(sorted(t for _m, t, _e in w.events))

    def _emit_status(self, rate: float | None = None) -> None:
        d = {"info": self.caption(), "running": self.runbar.is_running() and not self.runbar.paused()}
        if rate is not None:
            d["steps_per_s"] = rate
        self.status_changed.emit(d)

    def shutdown(self) -> None:
        self.compiler.shutdown()
        self.runbar.wait(10000)

    # ------------------------------------------------------------------ text, lecture mode
    def caption(self) -> str:
        lead = f"{self.preset['name']}: " if self.preset else ""
        c = self.form.controls()
        if self.sbml_panel.active():
            return self.sbml_panel.caption(lead, c["dt"], c["method"], c["engine"])
        if self.model is None:
            return "Flint model runner — paper 004 ch. 5"
        if self.form.runs_adaptive():
            return self.sbml_file.caption(lead, self.model.name, c)
        ring = f"{c['members']}{' (one-way wave)' if self.one_way() else ''}"
        return (f"{lead}{self.model.name}, {c['n']} × {ring}, {c['method']} dt {c['dt']:g} on {c['engine']} "
                "— paper 004 ch. 5 (Flint)")

    def set_lecture_mode(self, on: bool) -> None:
        """Essential controls only (the parameter table is too cramped at lecture sizes); black plots
        with white axes and large fonts, thick traces."""
        self.form.set_lecture(on)
        self.table.setVisible(not on)
        self.view.set_lecture(on)

    # ------------------------------------------------------------------ exports
    def _written(self, what: str, fn):
        out = guarded(self.message.show_message, what, fn)
        if out is not None:
            self.message.show_message(f"wrote {out}", "info")
        return out

    def export_plots(self, path: str | None = None):
        """The recorded traces as CSV (one column per variable and cell) or NPZ; the path written."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export traces", "traces.csv", "CSV (*.csv);;NumPy (*.npz)")
            if not path:
                return None
        return self._written(f"write {path}", lambda: self.view.write_traces(path))

    def export_image(self, path: str | None = None):
        """The plot of the current tab (traces, heatmap or DAG levels) as PNG (twice the screen size)
        or SVG; the path written."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export figure", "flint.png", "PNG (*.png);;SVG (*.svg)")
            if not path:
                return None
        figs = self.figure_targets()
        cur = self.view.currentWidget()
        fig = next((f for f in figs if f.widget is cur or f.widget is getattr(cur, "levels", None)), figs[0])
        return self._written(f"write {path}", lambda: save_figure(fig, path, scale=2.0, footer=""))

    def figure_targets(self) -> list[Figure]:
        """Views for Export figure / Copy figure / Record movie (main window)."""
        return self.view.figures() + [Figure("DAG levels (compiler)", widget=self.compiler.levels)]

    # ------------------------------------------------------------------ presets and sessions
    def apply_preset(self, preset: dict) -> None:
        """params: model (shipped, by name) or model_path, dt, t_end, integrator, runtime, members
        (ensemble|line|ring), n, D, init, vary, spread, record, set (parameter overrides), run (bool);
        params_cpu overrides on NumPy."""
        prm = dict(preset.get("params", {}))
        if not self.backend.is_gpu:
            prm.update(preset.get("params_cpu", {}))
        self.runbar.wait(10000)
        self.preset = preset
        if "model" in prm:
            i = self.cb_model.findText(prm["model"])
            if i < 0:
                raise InvalidParameter(f"preset model {prm['model']!r} is not shipped")
            self.cb_model.setCurrentIndex(i)
            self.load(self.cb_model.currentData())
        elif "model_path" in prm:                   # a user preset of a model file
            self.open_file(prm["model_path"])
        self.form.set_controls(prm)
        for k, v in prm.get("set", {}).items():
            self.set_parameter(k, v)
        if prm.get("run", True):
            self.run()

    def preset_params(self) -> dict:
        """The current model (a shipped one by name, else its file), the controls and the editable
        parameter values as a preset's ``params``; applying it does not start a run."""
        path = self.cb_model.currentData()
        shipped = path in {str(p) for p in shipped_models().values()}
        prm = {"model": self.cb_model.currentText()} if shipped else {"model_path": path}
        prm.update(self.form.controls())
        prm["set"] = {k: v for k, v in self.table.values().items() if self.table.editable(k)}
        prm["run"] = False
        return prm

    def session_state(self) -> dict:
        """The model, the parameter values (in SBML reference mode: the edits), the controls, the run
        as a :class:`~kernels.flint.run.FlintRun` dict (None where the controls make none)."""
        try:
            if self.model is not None and self.form.runs_adaptive():
                run = self.sbml_file.run_dict(self.form, self.model)
            elif self.model is not None:
                run = self.form.flint_run().to_dict()
            elif self.sbml_panel.ensemble() and not self.form.reference():
                run = self.sbml_panel.ensemble_config(self.form, self.form.value("record"))["run"].to_dict()
            else:
                run = None
        except ExplorerError:
            run = None
        return {"model": self.cb_model.currentText(), "model_path": self.cb_model.currentData(),
                "params": dict(self.model.params) if self.model else self.sbml_panel.edits(),
                "controls": self.form.controls(), "record_names": list(self.record_names), "run": run,
                "event_times": [float(t) for t in self.view.event_times],
                "preset": None if self.preset is None else {k: self.preset.get(k) for k in ("name", "paper")}}

    def session_data(self) -> dict:
        return {"t": self.times.copy(), "traces": self.samples.copy()}

    def restore_session(self, state: dict, data: dict) -> None:
        """A session of :meth:`session_state` (or an older one with only ``run``: the form shows
        ``FlintRun.from_dict``); the traces saved with it are shown."""
        t, y = np.asarray(data.get("t", np.zeros(0))), np.asarray(data.get("traces", np.zeros((0, 1, 0))))
        if y.ndim != 3 or t.ndim != 1 or len(t) != len(y):          # checked before anything changes
            raise InvalidParameter(f"the session's traces have shape {y.shape} for {t.shape} times")
        i = self.cb_model.findText(state.get("model", ""))
        if i >= 0:
            self.cb_model.setCurrentIndex(i)
            self.load(self.cb_model.currentData())
        elif state.get("model_path"):
            self.open_field(state["model_path"])
        run = state.get("run") if isinstance(state.get("run"), dict) else None
        params = state.get("params", run.get("params", {}) if run else {})
        for k, v in params.items():
            if k in self.table.names():
                self.set_parameter(k, v)
        if state.get("controls"):
            self.form.restore_controls(state["controls"])      # old keys too; engines not here: auto
        elif run and run.get("kind") == "ensemble":
            self.form.set_run(EnsembleRun.from_dict(run))
        elif run and self.model is not None:
            self.form.set_run(FlintRun.from_dict(self.model, run))
        units = self.model.units if self.model is not None else None
        self.view.restore(t, y, list(state.get("record_names", [])), units)
        self.view.set_events(state.get("event_times", []))
