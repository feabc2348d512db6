"""The Flint workspace: pick a cell model, edit parameters, integrate on NumPy / IS / TS, watch traces.

Views only: models, the compiler and the runtimes are ``kernels.flint`` (paper 004, Okuyama 2013,
ch. 5).  A worker thread integrates in chunks; only recorded variables come back; the plot refreshes
on a 50 ms timer (pyqtgraph peak downsampling, clip to view); lines/rings also show a heatmap.

Parts: the run threads (:mod:`.worker`), SBML reference mode for SBML files only the reference
simulator reads (:mod:`.sbml_mode`), the traces, heatmap, readout and exports (:mod:`.views`), the
recorded data (:mod:`.traces`), presets and sessions (:mod:`.sessions`), the stimulus editor and the
Compiler tab.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QTimer, pyqtSignal
from PyQt6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView,
                             QLabel, QProgressBar, QPushButton, QSpinBox, QSplitter, QTableWidget,
                             QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError, InvalidParameter
from kernels.flint import Network, shipped_models
from kernels.flint.loaders import read_model
from kernels.flint.model import select_states
from kernels.flint.run import FlintRun, Vary
from kernels.flint.runtimes import RUNTIMES
from kernels.flint.runtimes.auto import AUTO, AUTO_HELP
from kernels.flint.sbml.reference import reference_fallback

from ..colorbar import bar_axes, hover, plot_colorbar
from ..widgets import MessageBar
from ..workspace_api import Workspace
from .compiler_panel import CompilerPanel
from .stimulus import StimulusEditor
from .traces import TraceBuffer, check_recording
from .views import TraceViewsMixin
from .sbml_mode import SbmlModeMixin
from .sessions import FlintSessionsMixin
from .worker import INIT_ONE_WAY, INIT_UNIFORM, PROGRESS_SCALE, RUNTIME_TOOLTIP, FlintWorker


INIT_TOOLTIP = ("Initial state of a ring.\n"
                "uniform (stimulus): every cell at the model's resting state; the stimulus excites the first "
                "5 cells and two wavefronts run round both ways and annihilate.\n"
                "one-way wave (re-entry): a line is stimulated at one end until a whole pulse has formed "
                "(front, plateau, refractory tail); that pulse is laid on the ring, the refractory tail "
                "behind the front acting as a one-way block, and the stimulus is switched off.  The wave "
                "circulates (sustained re-entry) if the ring is longer than the wavelength: for LR-1991 "
                "about 108 cells at D = 0.15/ms, 54 at D = 0.1 (conduction fails below ≈ 0.09).")


def gui_runtimes(gpu: bool) -> list[str]:
    """The runtimes the Runtime box offers, from the registry: the GPU ones first when the app runs on
    the GPU, then the CPU ones that can run here (a host compiler found); first, and the default,
    ``auto`` (:func:`kernels.flint.runtimes.auto.choose_runtime`: the choice is said when a run starts)."""
    on_gpu = [k for k, c in RUNTIMES.items() if c.device == "gpu"] if gpu else []
    return [AUTO] + on_gpu + [k for k, c in RUNTIMES.items() if c.device != "gpu" and c.unavailable() is None]


class FlintWorkspace(FlintSessionsMixin, SbmlModeMixin, TraceViewsMixin, Workspace, QWidget):
    status_changed = pyqtSignal(dict)
    CAPABILITIES = frozenset({"open_field", "export_image", "export_plots", "toggle_run", "apply_preset", "figures",
                              "sessions"})
    message_bar = property(lambda self: self.message)     # the Workspace contract's name for its MessageBar
    MENU_TEXT = {"toggle_run": "&Run / pause model", "export_plots": "Export &traces (CSV/NPZ)…"}

    def __init__(self, backend, parent=None, **options):
        super().__init__(parent)
        self.backend = backend
        self.model = None
        self.files_read: list[str] = []     # the files the loaded model's reading opened
        self.sbml = None                 # SbmlReference in SBML reference mode, else None
        self.sbml_params: dict = {}      # parameter edits in that mode (applied to a copy of the system)
        self._runtime_before = ""
        self.preset = None
        self.worker = None
        self.traces = TraceBuffer()
        self.record_names: list[str] = []
        self._lecture = False
        self._dirty = False
        lay = QHBoxLayout(self)
        split = QSplitter(self)
        lay.addWidget(split)
        # ---- controls
        left = QWidget()
        form = QFormLayout(left)
        self.cb_model = QComboBox()
        # one entry a shipped model (its native .flint); the SBML/CellML copies open with "Open model file…"
        for name, path in shipped_models().items():
            if path.suffix == ".flint":
                self.cb_model.addItem(name, str(path))
        self.cb_model.setToolTip("Shipped models (resources/models). The same models as SBML (.xml) and "
                                 "CellML (.cellml) files open with “Open model file…”.")
        self.bt_open = QPushButton("Open model file…")
        self.bt_open.clicked.connect(self.open_field)
        form.addRow("Model", self.cb_model)
        form.addRow("", self.bt_open)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["parameter", "value", "units"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        form.addRow(self.table)
        self.stim = StimulusEditor(self.set_parameter)
        form.addRow(self.stim)
        self.sp_dt = QDoubleSpinBox(decimals=4, minimum=1e-4, maximum=10.0, value=0.01, singleStep=0.005)
        self.sp_tend = QDoubleSpinBox(decimals=1, minimum=0.1, maximum=1e6, value=400.0)
        self.cb_integ = QComboBox()
        self.cb_integ.addItems(["euler", "rk4"])
        self.cb_runtime = QComboBox()
        self.cb_runtime.addItems(gui_runtimes(backend.is_gpu))
        for i in range(self.cb_runtime.count()):          # each entry: its help line from the registry
            k = self.cb_runtime.itemText(i)
            self.cb_runtime.setItemData(i, AUTO_HELP if k == AUTO else RUNTIMES[k].help,
                                        pg.QtCore.Qt.ItemDataRole.ToolTipRole)
        self.cb_runtime.setToolTip(RUNTIME_TOOLTIP)
        self.cb_dtype = QComboBox()
        self.cb_dtype.addItems(["float64", "float32"])
        self.cb_net = QComboBox()
        self.cb_net.addItems(["ensemble", "line", "ring"])
        self.sp_n = QSpinBox(minimum=1, maximum=1_000_000, value=1)
        self.sp_D = QDoubleSpinBox(decimals=3, minimum=0.0, maximum=50.0, value=2.0)
        self.cb_init = QComboBox()
        self.cb_init.addItems([INIT_UNIFORM, INIT_ONE_WAY])
        self.cb_init.setToolTip(INIT_TOOLTIP)
        self.cb_vary = QComboBox()
        self.sp_spread = QDoubleSpinBox(decimals=2, minimum=0.0, maximum=1.0, value=0.3, singleStep=0.05)
        self.cb_record = QComboBox()
        self.cb_record.setEditable(True)
        self.cb_record.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.cb_record.setToolTip("State to record and plot.  Several (one member/cell only): a comma list "
                                  "or a pattern, e.g. 'S_RG_F, S_RG_E' or 'S_*'")
        for lab, w in (("dt (ms)", self.sp_dt), ("t end (ms)", self.sp_tend), ("Integrator", self.cb_integ),
                       ("Runtime", self.cb_runtime), ("Precision", self.cb_dtype), ("Members", self.cb_net),
                       ("N (members / cells)", self.sp_n), ("Coupling D (1/ms)", self.sp_D),
                       ("Initial state", self.cb_init),
                       ("Vary parameter", self.cb_vary), ("± spread", self.sp_spread), ("Record", self.cb_record)):
            form.addRow(lab, w)
        self._form = form
        self.cb_net.currentIndexChanged.connect(self._show_init_row)
        self._show_init_row()
        self._nonessential = [self.cb_dtype, self.sp_spread, self.cb_vary]
        row = QHBoxLayout()
        self.bt_run, self.bt_pause, self.bt_stop = QPushButton("Run"), QPushButton("Pause"), QPushButton("Stop")
        for b in (self.bt_run, self.bt_pause, self.bt_stop):
            row.addWidget(b)
        self.bt_run.clicked.connect(self.run)
        self.bt_pause.clicked.connect(self.pause)
        self.bt_stop.clicked.connect(self.stop)
        form.addRow(row)
        self.progress = QProgressBar()
        self.lb_rate = QLabel("")
        self.lb_rate.setWordWrap(True)
        form.addRow(self.progress)
        form.addRow(self.lb_rate)
        self._set_tooltips()
        split.addWidget(left)
        # ---- views
        right = QWidget()
        rl = QVBoxLayout(right)
        self.message = MessageBar(self)
        rl.addWidget(self.message)
        self.tabs = QTabWidget()
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "t (ms)")
        self.plot.getPlotItem().setDownsampling(auto=True, mode="peak")
        self.plot.getPlotItem().setClipToView(True)
        self.tabs.addTab(self.plot, "Traces")
        self.heat_view = pg.PlotWidget(background="w")
        self.heat = pg.ImageItem()
        self.heat.setColorMap(pg.colormap.get("viridis"))
        self.heat_view.addItem(self.heat)
        self.heat_view.setLabel("bottom", "t (ms)")
        self.heat_view.setLabel("left", "cell")
        self.heat_bar = plot_colorbar(self.heat_view.getPlotItem(), "viridis")
        hover(self.plot, self._describe_trace, self._report_cursor)
        hover(self.heat_view, self._describe_heat, self._report_cursor)
        self.tabs.addTab(self.heat_view, "Heatmap (cells)")
        self.compiler = CompilerPanel(message=self.message.show_message)
        self.listing = self.compiler.listing
        self.tabs.addTab(self.compiler, "Compiler")
        rl.addWidget(self.tabs)
        split.addWidget(right)
        split.setSizes([360, 900])
        self.curves: list = []
        self._pens: list = []            # the curves' normal pens (lecture mode swaps them)
        self.timer = QTimer(self)
        self.timer.setInterval(50)
        self.timer.timeout.connect(self._refresh)
        self.cb_model.currentIndexChanged.connect(self._on_model_chosen)
        self.table.itemChanged.connect(self._param_edited)
        for w in (self.cb_net, self.sp_n):
            (w.currentIndexChanged if isinstance(w, QComboBox) else w.valueChanged).connect(self._show_listing)
        self._loaded_index = -1           # the model-list entry that is loaded
        if self.cb_model.count() and self.load(self.cb_model.currentData()):
            self._loaded_index = self.cb_model.currentIndex()

    TOOLTIPS = {
        "bt_open": "Open an SBML (.xml/.sbml), CellML (.cellml) or native Flint (.flint) model file; it joins "
                   "the model list when it loads",
        "table": "The model's parameters: double-click a value to edit it (units in the third column)",
        "sp_dt": "Integration time step dt, ms (the models' time unit); the output is recorded every "
                 "0.1 ms for runs of more than 2 000 steps",
        "sp_tend": "End time of the run, ms; the run takes t end / dt steps",
        "cb_integ": "Fixed-step integrator: explicit Euler (1st order) or classic Runge–Kutta 4",
        "cb_dtype": "Arithmetic precision of the state and the bytecode: float64 or float32",
        "cb_net": "ensemble: N independent copies of the cell (optionally with a parameter varied); "
                  "line / ring: N cells coupled by diffusion of V (cable)",
        "sp_n": "Number of ensemble members or cells in the line/ring (1 to 1 000 000)",
        "sp_D": "Diffusive coupling between neighbouring cells of a line/ring, 1/ms (D·(V[i−1] − 2V[i] + V[i+1]))",
        "cb_vary": "Ensemble only: a parameter spread evenly over the members (± spread around its value)",
        "sp_spread": "Relative spread of the varied parameter, a fraction (0.3: from 0.7× to 1.3× its value)",
        "bt_run": "Compile the model for the runtime and integrate it, streaming the traces (Space)",
        "bt_pause": "Pause or resume the run",
        "bt_stop": "Stop the run, keeping the traces so far",
        "progress": "Progress of the run (steps or output points done)",
        "lb_rate": "Integration speed (steps or output points per second) and the time left",
    }

    def _set_tooltips(self) -> None:
        """Every control explains itself, with its units; kept to restore after SBML reference mode."""
        for name, tip in self.TOOLTIPS.items():
            getattr(self, name).setToolTip(tip)
        self._tips = {w: w.toolTip() for w in (*self._flint_only(), self.sp_dt, self.sp_tend)}

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
            ref = reference_fallback(path)
            if ref is None:
                self.message.show_message(str(exc))
                return False
            self._enter_sbml(ref, str(exc))
            return True
        self._leave_sbml()
        self.model = loaded.model
        #: the files the model's reading opened: the model file, then the files it names (comp, imports)
        self.files_read = list(loaded.files_read)
        m = self.model
        self.table.blockSignals(True)
        self.table.setRowCount(len(m.params))
        for r, (p, v) in enumerate(m.params.items()):
            it = QTableWidgetItem(p)
            it.setFlags(it.flags() & ~pg.QtCore.Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(r, 0, it)
            self.table.setItem(r, 1, QTableWidgetItem(repr(v)))
            u = QTableWidgetItem(m.units.get(p, ""))
            u.setFlags(u.flags() & ~pg.QtCore.Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(r, 2, u)
        self.table.blockSignals(False)
        self.cb_record.clear()
        self.cb_record.addItems(list(m.states))
        self.cb_vary.clear()
        self.cb_vary.addItems(["(none)"] + list(m.params))
        self.stim.bind(m)
        self._show_listing()
        read = f"; files read: {', '.join(self.files_read)}" if len(self.files_read) > 1 else ""
        self.message.show_message(f"loaded {m.name}: {m.n_states} states, {len(m.params)} parameters, "
                                  f"{len(m.assigns)} functions{read}", "info")
        self._emit_status()
        return True

    # ------------------------------------------------------------------ SBML reference mode
    def _flint_only(self) -> list:
        return [self.cb_integ, self.cb_dtype, self.cb_net, self.sp_n, self.sp_D, self.cb_vary, self.sp_spread,
                self.stim, self.cb_init]

    def _show_init_row(self, *_a) -> None:
        """The initial-state choice applies to rings only."""
        self._form.setRowVisible(self.cb_init, self.cb_net.currentText() == "ring")

    def one_way(self) -> bool:
        return self.cb_net.currentText() == "ring" and self.cb_init.currentText() == INIT_ONE_WAY

    def open_field(self, path: str | None = None) -> bool:
        """Open a model file (.flint, SBML, CellML); it joins the model list only when it loads."""
        if not path:
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
        return True

    def _cell_value(self, item, name: str, old: float) -> float | None:
        """The finite number typed into a parameter cell, or None after saying so and restoring ``old``."""
        try:
            v = float(item.text())
            if not np.isfinite(v):
                raise ValueError
        except ValueError:
            self.message.show_message(f"{name}: {item.text()!r} is not a number; kept {old!r}")
            self.table.blockSignals(True)
            item.setText(repr(old))
            self.table.blockSignals(False)
            return None
        return v

    def _param_edited(self, item) -> None:
        if item.column() == 1 and self.sbml is not None:
            self._sbml_param_edited(item)
            return
        if item.column() != 1 or self.model is None:
            return
        name = self.table.item(item.row(), 0).text()
        v = self._cell_value(item, name, self.model.params[name])
        if v is None:
            return
        self.model.params[name] = v
        self.stim.refresh(self.model)
        self._show_listing()

    def set_parameter(self, name: str, value: float) -> None:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).text() == name:
                it = self.table.item(r, 1)
                if not it.flags() & pg.QtCore.Qt.ItemFlag.ItemIsEditable:
                    raise InvalidParameter(f"{name!r} is not editable ({self.table.item(r, 2).text()})")
                it.setText(repr(float(value)))
                return
        owner = self.sbml.name if self.sbml is not None else self.model.name if self.model else "the model"
        raise InvalidParameter(f"{name!r} is not a parameter of {owner}")

    def flint_run(self) -> FlintRun:
        """The run the controls describe (a :class:`kernels.flint.run.FlintRun`, checked): "± spread"
        becomes ``Vary.around`` (linspace over v0·(1 ± spread)) for an ensemble of N > 1."""
        m = self.model.copy()
        kind = self.cb_net.currentText()
        n = self.sp_n.value()
        vary = self.cb_vary.currentText()
        varied = (Vary.around(vary, m.params[vary], self.sp_spread.value()),) \
            if kind == "ensemble" and vary in m.params and n > 1 else ()
        dt = self.sp_dt.value()
        steps = int(round(self.sp_tend.value() / dt))
        every = max(1, int(round(0.1 / dt))) if steps > 2000 else 1
        names = select_states(m, self.cb_record.currentText() or list(m.states)[0])
        return FlintRun(m, runtime=self.cb_runtime.currentText(), integrator=self.cb_integ.currentText(),
                        dtype=self.cb_dtype.currentText(), dt=dt, t_end=self.sp_tend.value(), members=kind, n=n,
                        coupling=self.sp_D.value(), vary=varied, record=tuple(names), every=every,
                        protocol="one-way" if kind != "ensemble" and self.one_way() else "uniform")

    def _config(self) -> dict:
        """The worker's run: :meth:`flint_run` and what follows from it."""
        run = self.flint_run()
        n, rec = run.n, run.record_index
        if len(rec) > 1 and n > 1:
            raise InvalidParameter(f"{len(rec)} recorded states need N = 1 (one member or cell); "
                                   "with N > 1 record one state")
        check_recording(run.steps // run.every + 1, len(rec), n)
        return {"model": run.model, "runtime": run.runtime, "n": n, "member": run.member_params(),
                "network": run.network, "integrator": run.integrator, "dtype": run.dtype,
                "dt": run.dt, "steps": run.steps, "every": run.every, "record": rec,
                "init": INIT_ONE_WAY if run.protocol == "one-way" else INIT_UNIFORM, "run": run}

    def _show_listing(self, *_a) -> None:
        """Recompile for the Compiler tab (≤ 4 members, on its worker thread)."""
        if self.model is None:
            return
        try:
            c = self._config()
        except ExplorerError as exc:
            self.listing.setPlainText(f"cannot compile: {exc}")
            return
        net = c["network"]
        self.compiler.request(c["model"], min(c["n"], 4), {k: v[:4] for k, v in c["member"].items()},
                              Network(net.kind, min(c["n"], 4), net.state, net.D) if net else None)

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        if self.worker is not None:
            self.pause()
            return
        if self.sbml is not None:
            self._run_sbml()
            return
        if self.model is None:
            self.message.show_message("no model loaded")
            return
        try:
            cfg = self._config()
        except ExplorerError as exc:
            self.message.show_message(str(exc))
            return
        self.cfg = cfg
        self.record_names = [list(cfg["model"].states)[i] for i in cfg["record"]]
        self.traces.reset(len(cfg["record"]), cfg["n"])
        self._make_curves(cfg["n"], cfg["model"].units)
        self.progress.setRange(0, PROGRESS_SCALE)
        self.progress.setValue(0)
        self.worker = FlintWorker(cfg, self)
        self.worker.chunk.connect(self._on_chunk)
        self.worker.steps.connect(self._on_progress)
        self.worker.failed.connect(lambda msg: self.message.show_message(msg))
        self.worker.note.connect(lambda msg: self.message.show_message(msg, "info"))
        self.worker.finished.connect(self._on_done)
        self.worker.start()
        self.timer.start()
        self.bt_run.setText("Running…")

    @property
    def times(self) -> np.ndarray:
        """Output times of the last run (a view of the trace buffer)."""
        return self.traces.times

    @property
    def samples(self) -> np.ndarray:
        """Recorded values (points, variables, members/cells) of the last run."""
        return self.traces.samples

    def toggle_run(self) -> None:
        self.run()

    def pause(self) -> None:
        if self.worker is not None:
            self.bt_pause.setText("Resume" if self.worker.toggle_pause() else "Pause")

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def is_running(self) -> bool:
        return self.worker is not None

    def _on_chunk(self, t, y) -> None:
        if len(t):
            self.traces.append(t, y)
            self._dirty = True

    def _on_progress(self, done: int, rate: float) -> None:
        total = self.cfg["steps"] + (1 if self.sbml is not None else 0)
        self.progress.setValue(int(PROGRESS_SCALE * min(1.0, done / max(total, 1))))
        left = (total - done) / rate if rate > 0 else 0
        self.lb_rate.setText(f"{rate:,.0f} {self.cfg.get('unit', 'steps')}/s, ETA {left:.1f} s")
        self._emit_status(rate)

    def _on_done(self) -> None:
        w = self.worker
        self.worker = None
        self.timer.stop()
        self._refresh(force=True)
        self.bt_run.setText("Run")
        self.bt_pause.setText("Pause")
        if w is not None:
            w.wait(5000)
            block = w.sim.info()["block_size"] if w.sim is not None else None
            if block is not None:                       # a runtime that tunes its block size (ts)
                self.lb_rate.setText(self.lb_rate.text() + f", {w.sim.runtime.upper()} block {block}")
            res = getattr(w, "result", None)
            if res is not None and not res.complete:
                self.lb_rate.setText(f"stopped at t = {res.times[-1] if len(res.times) else 0:g}")
        self._emit_status()

    def _emit_status(self, rate: float | None = None) -> None:
        d = {"info": self.caption()}
        if rate is not None:
            d["steps_per_s"] = rate
        self.status_changed.emit(d)

    # ------------------------------------------------------------------ export
    def busy(self) -> bool:
        """A run is in progress (the mode bar marks it; quitting asks first)."""
        return self.worker is not None

    def shutdown(self) -> None:
        self.compiler.shutdown()
        if self.worker is not None:
            self.worker.cancel()
            self.worker.wait(10000)

    def caption(self) -> str:
        lead = f"{self.preset['name']}: " if self.preset else ""
        if self.sbml is not None:
            return (f"{lead}{self.sbml.name}, SBML reference simulator (CPU, LSODA, events), output dt "
                    f"{self.sp_dt.value():g} — paper 004 ch. 5 (Flint)")
        if self.model is None:
            return "Flint model runner — paper 004 ch. 5"
        ring = f"{self.cb_net.currentText()}{' (one-way wave)' if self.one_way() else ''}"
        return (f"{lead}{self.model.name}, {self.sp_n.value()} × {ring}, "
                f"{self.cb_integ.currentText()} dt {self.sp_dt.value():g} on {self.cb_runtime.currentText()} "
                f"— paper 004 ch. 5 (Flint)")

    def set_lecture_mode(self, on: bool) -> None:
        """Essential controls only; black plots with white axes and large fonts, thick traces."""
        from ..theme import style_axis, style_plot
        self._lecture = bool(on)
        for w in (*self._nonessential, self.table):    # the parameter table: too cramped at lecture sizes
            self._form.setRowVisible(w, not on)
        for pw in (self.plot, self.heat_view):
            pw.setBackground("k" if on else "w")
            style_plot(pw.getPlotItem(), on)
        for ax in bar_axes(self.heat_bar):
            style_axis(ax, on)
        self._style_curves()
