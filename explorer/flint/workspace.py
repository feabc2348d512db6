"""The Flint workspace: pick a cell model, edit parameters, integrate on NumPy / IS / TS, watch traces.

Views only: models, the compiler and the runtimes are ``kernels.flint`` (paper 004, Okuyama 2013,
ch. 5).  A worker thread integrates in chunks; only recorded variables come back; the plot refreshes
on a 50 ms timer (pyqtgraph peak downsampling, clip to view); lines/rings also show a heatmap.

SBML reference mode: an SBML file that the Flint importer refuses (events, algebraic rules, delays,
fast reactions …) but that the SBML reference simulator reads is opened with the runtime
"sbml (CPU reference)" (``kernels.flint.sbml_run``): one instance, LSODA with root-found events, the
output points streamed in chunks; the Flint-only controls and the Compiler tab are disabled.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QThread, QTimer, pyqtSignal
from PyQt6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView,
                             QLabel, QProgressBar, QPushButton, QSpinBox, QSplitter, QTableWidget,
                             QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError, InvalidParameter
from kernels.flint import Network, Simulation, load_model, shipped_models
from kernels.flint.model import select_states
from kernels.flint.io import write_csv, write_npz
from kernels.flint.protocols import no_stimulus, one_way_wave
from kernels.flint.host_c import find_compiler
from kernels.flint.runtimes import RUNTIME_HELP, network_stimulus
from kernels.flint.sbml_run import LABEL as SBML_LABEL
from kernels.flint.sbml_run import TOOLTIP as SBML_TOOLTIP
from kernels.flint.sbml_run import output_times, reference_fallback, run_reference

from ..colorbar import bar_axes, hover, plot_colorbar, set_bar_label
from ..export import Figure, guarded, save_figure, write_file
from ..widgets import MessageBar
from .compiler_panel import CompilerPanel
from .stimulus import StimulusEditor
from .traces import TraceBuffer, check_recording

RUNTIME_TOOLTIP = "<br>".join(f"<b>{k}</b>: {v}" for k, v in RUNTIME_HELP.items())
HOST_THREADS = max(1, (os.cpu_count() or 2) - 1)   # c / c-is: all cores but one (the GUI keeps one)

MAX_TRACES = 64          # traces drawn (members/cells evenly spaced); all cells go to the heatmap
CHUNK_SECONDS = 0.1      # integration time per chunk streamed to the GUI
PROGRESS_SCALE = 1000    # the progress bar counts per mille (a run may take more steps than a C int)
INIT_UNIFORM, INIT_ONE_WAY = "uniform (stimulus)", "one-way wave (re-entry)"
INIT_TOOLTIP = ("Initial state of a ring.\n"
                "uniform (stimulus): every cell at the model's resting state; the stimulus excites the first "
                "5 cells and two wavefronts run round both ways and annihilate.\n"
                "one-way wave (re-entry): a line is stimulated at one end until a whole pulse has formed "
                "(front, plateau, refractory tail); that pulse is laid on the ring, the refractory tail "
                "behind the front acting as a one-way block, and the stimulus is switched off.  The wave "
                "circulates (sustained re-entry) if the ring is longer than the wavelength: for LR-1991 "
                "about 108 cells at D = 0.15/ms, 54 at D = 0.1 (conduction fails below ≈ 0.09).")


class _RunWorker(QThread):
    """A run off the GUI thread: its config, pause/stop flags, progress/failure/finish signals."""
    progress = pyqtSignal(object, float)       # steps (output points) done, per second (a Python int:
                                               # more than a C int holds for long runs)
    failed = pyqtSignal(str)
    done = pyqtSignal()

    def __init__(self, cfg: dict, parent=None):
        super().__init__(parent)
        self.cfg = cfg
        self.paused = False
        self.stopped = False
        self.sim = None

    def run(self):
        try:
            self.work()
        except ExplorerError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:                    # keep the app alive, say what happened
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        self.done.emit()

    def work(self) -> None:                         # the run itself, in the worker thread
        raise NotImplementedError


class FlintWorker(_RunWorker):
    """Builds the Simulation and integrates chunk by chunk; emits (times, samples) per chunk."""
    chunk = pyqtSignal(object, object)
    note = pyqtSignal(str)

    def __init__(self, cfg: dict, parent=None):
        super().__init__(cfg, parent)
        self.y0 = None

    def work(self):
        c = self.cfg
        if c.get("init") == INIT_ONE_WAY:
            net = c["network"]
            self.note.emit(f"preparing the one-way wave: a {2 * net.n_cells}-cell line stimulated at one end…")
            self.y0 = one_way_wave(c["model"], net.n_cells, net.D, state=net.state, dt=c["dt"],
                                   integrator=c["integrator"], runtime=c["runtime"])
            i = self.y0.info
            self.note.emit(f"one-way wave: pulse {i['pulse_cells']} cells (front at cell {i['front']}), "
                           f"line velocity {i['cv_cells_per_ms']:.3f} cells/ms → one revolution ≈ "
                           f"{net.n_cells / i['cv_cells_per_ms']:.0f} ms")
        what = {"ts": "NVRTC", "c": "the host C++ compiler", "c-is": "the host C++ compiler"}.get(c["runtime"])
        if what:                                # compiles take seconds to a minute for the large models
            self.note.emit(f"compiling {c['model'].name} ({c['model'].n_states} states) for runtime "
                           f"{c['runtime']} with {what}… (cached afterwards)")
        self.sim = Simulation(c["model"], runtime=c["runtime"], n=c["n"], member_params=c["member"],
                              network=c["network"], integrator=c["integrator"], dtype=c["dtype"],
                              y0=self.y0, threads=HOST_THREADS)
        if what:
            self.note.emit(f"{c['model'].name}: compiled for runtime {c['runtime']} in "
                           f"{self.sim.compile_seconds:.1f} s")
        total, done, t0, every = c["steps"], 0, time.perf_counter(), c["every"]
        chunk = max(every, min(2000, max(every, total // 50)) // every * every)
        while done < total and not self.stopped:
            if self.paused:
                self.msleep(30)
                continue
            k = min(chunk, total - done)
            t1 = time.perf_counter()
            t, y = self.sim.advance(k, c["dt"], record=c["record"], every=every)
            took = time.perf_counter() - t1
            done += k
            self.chunk.emit(t, y)
            self.progress.emit(done, done / max(time.perf_counter() - t0, 1e-9))
            # about CHUNK_SECONDS of integration per chunk: a long run streams a few chunks a
            # second, not thousands of tiny ones (each a signal and a copy in the GUI thread)
            if k == chunk and took > 0:
                want = chunk * min(4.0, max(0.25, CHUNK_SECONDS / took))
                chunk = max(every, int(want) // every * every)
            self.msleep(1)                      # let the GUI thread take the GIL


class SbmlWorker(_RunWorker):
    """Runs the SBML reference simulator; emits (first index, times, samples) as output points finish."""
    chunk = pyqtSignal(int, object, object)

    def __init__(self, cfg: dict, parent=None):
        super().__init__(cfg, parent)
        self.result = None

    def _control(self) -> bool:
        while self.paused and not self.stopped:
            self.msleep(30)
        return self.stopped

    def work(self):
        c, t0 = self.cfg, time.perf_counter()

        def on_chunk(i0, t, y):
            self.chunk.emit(i0, t, y[:, :, None])
            n = i0 + len(t)
            self.progress.emit(n, n / max(time.perf_counter() - t0, 1e-9))
            self.msleep(1)                          # let the GUI thread take the GIL

        self.result = run_reference(c["sbml"], c["times"], c["record"], params=c["params"],
                                    on_chunk=on_chunk, chunk=c.get("chunk", 200), control=self._control)


class FlintWorkspace(QWidget):
    status_changed = pyqtSignal(dict)
    MENU_TEXT = {"toggle_run": "&Run / pause model", "export_plots": "Export &traces (CSV/NPZ)…"}

    def __init__(self, backend, parent=None, **options):
        super().__init__(parent)
        self.backend = backend
        self.model = None
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
        self.cb_runtime.addItems((["is", "ts"] if backend.is_gpu else []) + ["cpu"]
                                 + (["c", "c-is"] if find_compiler() else []))
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
            model = load_model(path)
        except ExplorerError as exc:
            ref = reference_fallback(path)
            if ref is None:
                self.message.show_message(str(exc))
                return False
            self._enter_sbml(ref, str(exc))
            return True
        self._leave_sbml()
        self.model = model
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
        self.message.show_message(f"loaded {m.name}: {m.n_states} states, {len(m.params)} parameters, "
                                  f"{len(m.assigns)} functions", "info")
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

    def _enter_sbml(self, ref, why: str) -> None:
        """Show an SBML model the Flint compiler refuses, to be run by the SBML reference simulator."""
        was = self.sbml is not None
        self.sbml, self.sbml_params, self.model = ref, {}, None
        s = ref.system
        self.table.blockSignals(True)
        self.table.setHorizontalHeaderLabels(["parameter", "value", "role"])
        self.table.setRowCount(len(ref.params))
        ro = pg.QtCore.Qt.ItemFlag.ItemIsEditable
        for r, (p, v) in enumerate(ref.params.items()):
            it = QTableWidgetItem(p)
            it.setFlags(it.flags() & ~ro)
            self.table.setItem(r, 0, it)
            val = QTableWidgetItem(repr(v))
            role = QTableWidgetItem(ref.roles[p])
            role.setFlags(role.flags() & ~ro)
            if p not in ref.editable:
                val.setFlags(val.flags() & ~ro)
                val.setToolTip(f"{p} is set by its {ref.roles[p][7:]}: not editable")
            self.table.setItem(r, 1, val)
            self.table.setItem(r, 2, role)
        self.table.blockSignals(False)
        self.cb_record.clear()
        self.cb_record.addItems(ref.recordable)
        first = ref.default_record()[0] if ref.recordable else ""
        if first:
            self.cb_record.setCurrentText(first)
        self.cb_vary.clear()
        self.cb_vary.addItems(["(none)"])
        self.stim.bind(None)
        if not was:
            self._runtime_before = self.cb_runtime.currentText()
            for i in range(self.cb_runtime.count()):
                self.cb_runtime.model().item(i).setEnabled(False)
            self.cb_runtime.addItem(SBML_LABEL)
        i = self.cb_runtime.findText(SBML_LABEL)
        self.cb_runtime.setItemData(i, SBML_TOOLTIP, pg.QtCore.Qt.ItemDataRole.ToolTipRole)
        self.cb_runtime.setCurrentIndex(i)
        self.cb_runtime.setToolTip(SBML_TOOLTIP)
        note = "does not apply to the SBML reference simulator (one model instance, adaptive LSODA, float64)"
        for w in self._flint_only():
            w.setEnabled(False)
            w.setToolTip(note)
        for w, text in ((self.sp_dt, "dt (output interval)"), (self.sp_tend, "t end (model time)")):
            lab = self._form.labelForField(w)
            if lab is not None:
                lab.setText(text)
        self.sp_dt.setToolTip("Output interval, in the model's time unit: the reference simulator chooses "
                              "its own adaptive steps")
        self.sp_tend.setToolTip("End time of the run, in the model's time unit")
        k = self.tabs.indexOf(self.compiler)
        if self.tabs.currentIndex() == k:
            self.tabs.setCurrentWidget(self.plot)
        self.tabs.setTabEnabled(k, False)
        self.tabs.setTabToolTip(k, "The Flint compiler refuses this model; it runs on the SBML reference "
                                   "simulator, which does not compile to bytecode.")
        self.listing.setPlainText(f"not compiled: the Flint compiler refuses {ref.name} ({why}); it runs on "
                                  f"the SBML reference simulator.")
        self.plot.setLabel("bottom", "t (model time units)")
        self.heat_view.setLabel("bottom", "t (model time units)")
        self._sbml_why = why
        self._tag_sbml_item()
        self.message.show_message(
            f"loaded {ref.name} in SBML reference mode: {ref.n_states} states, {len(s.events)} events, "
            f"{len(ref.params)} parameters.  The Flint compiler refuses it ({why}), so it runs on the CPU "
            f"reference simulator (LSODA, events by root finding); dt is the output interval.", "info")
        self._emit_status()

    def _tag_sbml_item(self) -> None:
        """Name SBML reference mode in the model list entry of the loaded file."""
        ref, i = self.sbml, self.cb_model.currentIndex()
        if ref is None or i < 0 or self.cb_model.currentData() != str(ref.path):
            return
        if "SBML reference" not in self.cb_model.itemText(i):
            self.cb_model.setItemText(i, f"{self.cb_model.itemText(i)} — SBML reference")
            self.cb_model.setItemData(i, f"{ref.path}: runs on the SBML reference simulator ({self._sbml_why})",
                                      pg.QtCore.Qt.ItemDataRole.ToolTipRole)

    def _leave_sbml(self) -> None:
        if self.sbml is None:
            return
        self.sbml, self.sbml_params = None, {}
        self.table.setHorizontalHeaderLabels(["parameter", "value", "units"])
        i = self.cb_runtime.findText(SBML_LABEL)
        if i >= 0:
            self.cb_runtime.removeItem(i)
        for i in range(self.cb_runtime.count()):
            self.cb_runtime.model().item(i).setEnabled(True)
        j = self.cb_runtime.findText(self._runtime_before)
        self.cb_runtime.setCurrentIndex(max(j, 0))
        self.cb_runtime.setToolTip(RUNTIME_TOOLTIP)
        for w in self._flint_only():
            w.setEnabled(True)
        for w, tip in self._tips.items():
            w.setToolTip(tip)
        for w, text in ((self.sp_dt, "dt (ms)"), (self.sp_tend, "t end (ms)")):
            lab = self._form.labelForField(w)
            if lab is not None:
                lab.setText(text)
        k = self.tabs.indexOf(self.compiler)
        self.tabs.setTabEnabled(k, True)
        self.tabs.setTabToolTip(k, "")
        self.plot.setLabel("bottom", "t (ms)")
        self.heat_view.setLabel("bottom", "t (ms)")

    def in_sbml_mode(self) -> bool:
        return self.sbml is not None

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

    def _sbml_param_edited(self, item) -> None:
        ref = self.sbml
        name = self.table.item(item.row(), 0).text()
        v = self._cell_value(item, name, self.sbml_params.get(name, ref.params[name]))
        if v is None:
            return
        if v == ref.params[name]:
            self.sbml_params.pop(name, None)
        else:
            self.sbml_params[name] = v

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

    def _config(self) -> dict:
        m = self.model.copy()
        kind = self.cb_net.currentText()
        n = self.sp_n.value()
        network = Network(kind, n, "V" if "V" in m.states else list(m.states)[0], self.sp_D.value()) \
            if kind != "ensemble" else None
        if network is not None and n < 2:
            raise InvalidParameter("a line/ring needs at least 2 cells")
        one_way = network is not None and self.one_way()
        member = (no_stimulus(m, n) if one_way else network_stimulus(m, n)) if network is not None else {}
        vary = self.cb_vary.currentText()
        if kind == "ensemble" and vary in m.params and n > 1:
            v0 = m.params[vary]
            member[vary] = v0 * (1 + self.sp_spread.value() * np.linspace(-1, 1, n))
        dt = self.sp_dt.value()
        steps = int(round(self.sp_tend.value() / dt))
        every = max(1, int(round(0.1 / dt))) if steps > 2000 else 1
        names = select_states(m, self.cb_record.currentText() or list(m.states)[0])
        if len(names) > 1 and n > 1:
            raise InvalidParameter(f"{len(names)} recorded states need N = 1 (one member or cell); "
                                   "with N > 1 record one state")
        rec = [list(m.states).index(r) for r in names]
        check_recording(steps // every + 1, len(rec), n)
        return {"model": m, "runtime": self.cb_runtime.currentText(), "n": n, "member": member,
                "network": network, "integrator": self.cb_integ.currentText(), "dtype": self.cb_dtype.currentText(),
                "dt": dt, "steps": steps, "every": every, "record": rec,
                "init": INIT_ONE_WAY if one_way else INIT_UNIFORM}

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
        self.worker.progress.connect(self._on_progress)
        self.worker.failed.connect(lambda msg: self.message.show_message(msg))
        self.worker.note.connect(lambda msg: self.message.show_message(msg, "info"))
        self.worker.done.connect(self._on_done)
        self.worker.start()
        self.timer.start()
        self.bt_run.setText("Running…")

    def _run_sbml(self) -> None:
        ref = self.sbml
        try:
            check_recording(int(self.sp_tend.value() / self.sp_dt.value()) + 1, 1, 1)
            times = output_times(self.sp_tend.value(), self.sp_dt.value())
        except ExplorerError as exc:
            self.message.show_message(str(exc))
            return
        rec = [self.cb_record.currentText() or ref.default_record()[0]]
        cfg = {"sbml": ref, "params": dict(self.sbml_params), "times": times, "record": rec,
               "steps": len(times) - 1, "n": 1, "unit": "output points",
               "chunk": max(1, min(200, len(times) // 50))}
        self.cfg = cfg
        self.record_names = rec
        self.traces.reset(1, 1)
        self.plot.clear()
        self.show_idx = np.array([0])
        self._pens = [pg.mkPen("#1f5fa0", width=1.5)]
        self.curves = [self.plot.plot(pen=self._pens[0])]
        self._style_curves()
        self.plot.setLabel("left", rec[0], units="")
        self.progress.setRange(0, PROGRESS_SCALE)
        self.progress.setValue(0)
        self.worker = SbmlWorker(cfg, self)
        self.worker.chunk.connect(self._on_sbml_chunk)
        self.worker.progress.connect(self._on_progress)
        self.worker.failed.connect(lambda msg: self.message.show_message(msg))
        self.worker.done.connect(self._on_done)
        self.worker.start()
        self.timer.start()
        self.bt_run.setText("Running…")

    def _on_sbml_chunk(self, i0: int, t, y) -> None:
        """Output points i0 … (i0 = 0 again when the finished run replaces a differing preview)."""
        self.traces.append(t, y, at=i0)
        self._dirty = True

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
            self.worker.paused = not self.worker.paused
            self.bt_pause.setText("Resume" if self.worker.paused else "Pause")

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stopped = True
            self.worker.paused = False

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
            if w.sim is not None and w.sim.runtime == "ts":
                self.lb_rate.setText(self.lb_rate.text() + f", TS block {w.sim.block_size}")
            res = getattr(w, "result", None)
            if res is not None and not res.complete:
                self.lb_rate.setText(f"stopped at t = {res.times[-1] if len(res.times) else 0:g}")
        self._emit_status()

    def _make_curves(self, n: int, units: dict | None = None) -> None:
        """Curves for the next run: one per shown member/cell (viridis), or, with several recorded
        states (one member), one per state with a legend."""
        self.plot.clear()
        legend = self.plot.getPlotItem().legend
        if legend is not None:
            legend.clear()
        units = units or {}
        names = self.record_names or [""]
        if len(names) > 1:
            if legend is None:
                self.plot.addLegend(offset=(10, 10))
            self.show_idx = np.array([0])
            self._pens = [pg.mkPen(pg.intColor(j, len(names)), width=1.5) for j in range(len(names))]
            self.curves = [self.plot.plot(pen=pen, name=nm) for pen, nm in zip(self._pens, names)]
            self.plot.setLabel("left", "recorded states", units=units.get(names[0], ""))
        else:
            self.show_idx = np.unique(np.linspace(0, n - 1, min(n, MAX_TRACES)).astype(int))
            cmap = pg.colormap.get("viridis")
            m = max(1, len(self.show_idx) - 1)
            self._pens = [pg.mkPen(cmap.map(i / m, "qcolor"), width=1.5) for i in range(len(self.show_idx))]
            self.curves = [self.plot.plot(pen=pen) for pen in self._pens]
            self.plot.setLabel("left", names[0], units=units.get(names[0], ""))
        self._style_curves()

    def _style_curves(self) -> None:
        """Lecture mode: thick bright traces (one: the lecture yellow; several: the bright end of
        viridis, distinct colours for several states) and a white legend; else the normal pens."""
        from ..theme import LECTURE_LINE, LECTURE_WIDTH
        on, k = self._lecture, len(self.curves)
        several_states = len(self.record_names) > 1
        for i, (c, pen) in enumerate(zip(self.curves, self._pens)):
            if not on:
                c.setPen(pen)
            elif k == 1:
                c.setPen(pg.mkPen(LECTURE_LINE, width=LECTURE_WIDTH))
            elif several_states:
                c.setPen(pg.mkPen(pen.color(), width=LECTURE_WIDTH - 1))
            else:
                col = pg.colormap.get("viridis").map(0.35 + 0.65 * i / (k - 1), "qcolor")
                c.setPen(pg.mkPen(col, width=LECTURE_WIDTH - 1))
        legend = self.plot.getPlotItem().legend
        if legend is not None:
            for _sample, lab in legend.items:
                lab.setText(lab.text, color="w" if on else None, size="14pt" if on else "9pt")

    def _refresh(self, force: bool = False) -> None:
        if not (self._dirty or force) or self.samples.shape[0] == 0:
            return
        self._dirty = False
        if self.samples.shape[1] > 1:                       # several states of one member
            for j, c in enumerate(self.curves):
                c.setData(self.times, self.samples[:, j, 0])
            return
        y = self.samples[:, 0, :]
        for c, i in zip(self.curves, self.show_idx):
            c.setData(self.times, y[:, i])
        if self.samples.shape[2] > 1:
            self.heat.setImage(y, autoLevels=True)
            lo, hi = (float(v) for v in self.heat.getLevels())
            self.heat_bar.setLevels((lo, hi if hi > lo else lo + 1.0))
            name = self.record_names[0] if self.record_names else ""
            unit = self._unit(name)
            set_bar_label(self.heat_bar, f"{name} ({unit})" if unit else name)
            t = np.asarray(self.times, dtype=float)
            if t.size > 1:                    # image x in model time: sample k covers [t_k − Δ, t_k]
                dt_s = (t[-1] - t[0]) / (t.size - 1)
                self.heat.setRect(pg.QtCore.QRectF(t[0] - dt_s, 0.0, t[-1] - t[0] + dt_s, y.shape[1]))

    def _unit(self, name: str) -> str:
        model = self.cfg.get("model") if isinstance(getattr(self, "cfg", None), dict) else None
        units = getattr(model or self.model, "units", None) or {}
        return units.get(name, "")

    def _report_cursor(self, text: str) -> None:
        if text != getattr(self, "_cursor_text", None):
            self._cursor_text = text
            self.status_changed.emit({"cursor": text})

    def _time_unit(self) -> str:
        return "" if self.sbml is not None else " ms"

    def _describe_trace(self, x: float, y: float) -> str:
        """The recorded value nearest the mouse: the sample at that time of the closest trace."""
        t, s = self.times, self.samples
        if not len(t):
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
        if i > 0 and abs(t[i - 1] - x) < abs(t[i] - x):
            i -= 1
        if s.shape[1] > 1:                                   # several states of one member
            vals = [(abs(s[i, j, 0] - y), self.record_names[j], s[i, j, 0], "") for j in range(s.shape[1])]
        else:
            vals = [(abs(s[i, 0, k] - y), self.record_names[0] if self.record_names else "", s[i, 0, k],
                     f" (member/cell {k})" if s.shape[2] > 1 else "") for k in self.show_idx if k < s.shape[2]]
        _d, name, v, where = min(vals, key=lambda r: r[0])
        unit = self._unit(name)
        return f"t = {t[i]:.5g}{self._time_unit()}: {name} = {v:.5g}{' ' + unit if unit else ''}{where}"

    def _describe_heat(self, x: float, y: float) -> str:
        t, s = self.times, self.samples
        if not len(t) or s.shape[2] < 2:
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
        k = int(np.floor(y))
        if not 0 <= k < s.shape[2]:
            return ""
        name = self.record_names[0] if self.record_names else ""
        unit = self._unit(name)
        return f"t = {t[i]:.5g}{self._time_unit()}, cell {k}: {name} = {s[i, 0, k]:.5g}{' ' + unit if unit else ''}"

    def _emit_status(self, rate: float | None = None) -> None:
        d = {"info": self.caption()}
        if rate is not None:
            d["steps_per_s"] = rate
        self.status_changed.emit(d)

    # ------------------------------------------------------------------ export
    def _written(self, what: str, fn, ok_text: str):
        out = guarded(self.message.show_message, what, fn)
        if out is not None:
            self.message.show_message(ok_text.format(out), "info")
        return out

    def export_plots(self, path: str | None = None):
        """The recorded traces as CSV (one column per variable and cell) or NPZ; the path written."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export traces", "traces.csv", "CSV (*.csv);;NumPy (*.npz)")
            if not path:
                return None
        t, y, names = self.times.copy(), self.samples.copy(), list(self.record_names)

        def write(tmp):
            (write_npz if tmp.suffix.lower() == ".npz" else write_csv)(tmp, t, y, names)
        return self._written(f"write {path}", lambda: write_file(path, (".csv", ".npz"), write, "traces file"),
                             "wrote {}")

    def export_image(self, path: str | None = None):
        """The plot of the current tab (traces, heatmap or DAG levels) as PNG (twice the screen size)
        or SVG; the path written."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export figure", "flint.png", "PNG (*.png);;SVG (*.svg)")
            if not path:
                return None
        figs = self.figure_targets()
        cur = self.tabs.currentWidget()
        fig = next((f for f in figs if f.widget is cur or f.widget is getattr(cur, "levels", None)), figs[0])
        return self._written(f"write {path}", lambda: save_figure(fig, path, scale=2.0, footer=""), "wrote {}")

    def figure_targets(self) -> list[Figure]:
        """Views for Export figure / Copy figure / Record movie (main window)."""
        return [Figure("Traces", widget=self.plot), Figure("Heatmap (cells)", widget=self.heat_view),
                Figure("DAG levels (compiler)", widget=self.compiler.levels)]

    def busy(self) -> bool:
        """A run is in progress (the mode bar marks it; quitting asks first)."""
        return self.worker is not None

    def shutdown(self) -> None:
        self.compiler.shutdown()
        if self.worker is not None:
            self.worker.stopped = True
            self.worker.wait(10000)

    # ------------------------------------------------------------------ presets / sessions
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

    def session_state(self) -> dict:
        return {"model": self.cb_model.currentText(), "model_path": self.cb_model.currentData(),
                "params": dict(self.model.params) if self.model else dict(self.sbml_params),
                "controls": {"dt": self.sp_dt.value(), "t_end": self.sp_tend.value(), "n": self.sp_n.value(),
                             "D": self.sp_D.value(), "spread": self.sp_spread.value(),
                             "integrator": self.cb_integ.currentText(), "runtime": self.cb_runtime.currentText(),
                             "members": self.cb_net.currentText(), "vary": self.cb_vary.currentText(),
                             "record": self.cb_record.currentText(), "dtype": self.cb_dtype.currentText(),
                             "init": self.cb_init.currentText()},
                "record_names": list(self.record_names),
                "preset": None if self.preset is None else {k: self.preset.get(k) for k in ("name", "paper")}}

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
        for k, v in state.get("params", {}).items():
            if (self.model is not None and k in self.model.params) or (self.sbml is not None and k in self.sbml.params):
                self.set_parameter(k, v)
        ctl = dict(state.get("controls", {}))
        if ctl.get("runtime") and self.cb_runtime.findText(ctl["runtime"]) < 0:
            ctl["runtime"] = "cpu"
        self._set_controls(ctl)
        self.record_names = list(state.get("record_names", []))
        self.traces.set(t, y)
        if self.samples.ndim == 3 and self.samples.shape[0]:
            self._make_curves(self.samples.shape[2], self.model.units if self.model is not None else None)
            self._refresh(force=True)
