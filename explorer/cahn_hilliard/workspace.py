"""The Cahn–Hilliard workspace: parameter dock, VisPy field view, diagnostic plots, exports.

Views only: the simulation is ``kernels.cahn_hilliard.CahnHilliard``, stepped on a
worker thread (:mod:`.worker`); this widget turns user edits into ``set_params`` /
``reset`` calls and draws the frames the worker sends.
"""
from __future__ import annotations

import json
import time
from collections import deque

from PyQt6.QtCore import QByteArray, Qt, QTimer, pyqtSignal
from PyQt6.QtWidgets import QFileDialog, QHBoxLayout, QMainWindow, QVBoxLayout, QWidget

from kernels.cahn_hilliard.multigpu import VIRTUAL_ENV, offered_gpus
from kernels.cahn_hilliard.params import LIVE, CHParams, stability_limit
from kernels.cahn_hilliard.simulation import CahnHilliard
from kernels.errors import ExplorerError

from ..colorbar import ColorBar
from ..export import MovieRecorder
from ..widgets import MessageBar, add_dock, busy_cursor, holding
from ..workspace_api import Workspace
from .canvas import COLORMAPS, SLICE_AXES, FieldCanvas, colormap
from .controls import ControlPanel
from .exports import FieldExportsMixin
from .plots import DiagnosticsPlots
from .sessions import SessionMixin
from .view_bar import ViewBarMixin
from .worker import SimulationWorker


class CahnHilliardWorkspace(FieldExportsMixin, SessionMixin, ViewBarMixin, Workspace, QMainWindow):
    """Workspace widget (an inner QMainWindow so controls and plots are dockable)."""

    CAPABILITIES = frozenset({"open_field", "save_field", "export_image", "export_plots", "export_movie",
                              "toggle_run", "step_once", "reset", "set_colormap", "set_plots_visible",
                              "set_controls_visible", "apply_preset", "colormaps", "figures", "sessions"})

    status_changed = pyqtSignal(dict)
    colormap_changed = pyqtSignal(str)

    def __init__(self, backend, parent=None, params: CHParams | None = None, steps_per_frame: int = 10):
        super().__init__(parent)
        self.setWindowFlags(Qt.WindowType.Widget)
        self.backend = backend
        self._explicit_params = params is not None
        self.pending: dict = {}
        self.recorder: MovieRecorder | None = None
        self._hist = None
        self._hist_dirty = False
        self._last_sk = 0.0
        self._sk = None                      # (k, S) from the worker, not yet plotted
        self._fps = 0.0
        self._frame_times = deque(maxlen=120)
        self._frames_shown = 0
        self.last_error = ""
        self.preset: dict | None = None      # the last preset applied (named in the caption)
        self._lecture = False
        self._last_status: dict = {}
        self._seen_stepper = None            # the stepper whose decomposition / notes are shown
        self._seen_notes = 0
        self._notes_msg = ""                 # the message-bar text of the last notes shown
        self.decomposition: dict = {"gpus": 1, "notes": []}
        self.decomposition_text = ""         # status-bar summary, "" on one GPU

        self.offered_gpus = offered_gpus(backend)
        self.sim = CahnHilliard(self._fit_gpus(params or CHParams())[0], backend)
        self.worker = SimulationWorker(self.sim, steps_per_frame)
        self.worker.frame.connect(self._on_frame)
        self.worker.error.connect(self._on_worker_error)
        self.worker.running_changed.connect(self._on_running_changed)
        self.worker.progress.connect(self._on_progress)

        # --- central: toolbar, message bar, canvas
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(4, 4, 4, 0)
        cl.setSpacing(4)
        self.canvas = FieldCanvas(backend)
        cl.addLayout(self._build_view_bar())
        self.message_bar = MessageBar()
        cl.addWidget(self.message_bar)
        self.canvas.native.setMinimumSize(320, 240)
        self.colorbar = ColorBar("φ")
        self.colorbar.setToolTip("Colour scale of φ (fixed [−1, 1] or each frame's min–max: Contrast)")
        self.colorbar.set_colormap(colormap(self.canvas.cmap_name))
        row = QHBoxLayout()
        row.setSpacing(2)
        row.addWidget(self.canvas.native, 1)
        row.addWidget(self.colorbar)
        cl.addLayout(row, 1)
        self.canvas.canvas.events.mouse_move.connect(self._on_mouse_move)
        self.setCentralWidget(central)

        # --- docks
        self.controls = ControlPanel(backend)
        self.controls.set_params(self.sim.params)
        self.controls.spf.setValue(self.worker.steps_per_frame)
        self.controls.param_changed.connect(self._on_param)
        self.controls.steps_per_frame_changed.connect(self._on_spf)
        self.controls.start_pause_clicked.connect(self.toggle_run)
        self.controls.step_clicked.connect(self.step_once)
        self.controls.reset_clicked.connect(self.reset)
        self.controls_dock = add_dock(self, "Parameters", "ch_controls", self.controls, "left")

        self.plots = DiagnosticsPlots()
        self.plots_dock = add_dock(self, "Diagnostics", "ch_plots", self.plots, "bottom")
        self.plots.setMinimumHeight(200)
        QTimer.singleShot(0, lambda: self.resizeDocks([self.plots_dock], [270], Qt.Orientation.Vertical))
        from .sweep_tab import add_sweep_dock
        self.sweep = add_sweep_dock(self)      # the Sweep tab (kernels.sweep on Dask), beside Diagnostics
        from .reproduce_tab import add_reproduce_dock
        self.fig10 = add_reproduce_dock(self)       # Reproduce: paper 001 Fig. 10 / paper 000 layouts timings
        from ..rng.panel import add_rng_dock
        self.rng_panel = add_rng_dock(self)    # paper 001's RNG: Table 1 and quality checks, beside Diagnostics
        from .pfhub_tab import add_pfhub_dock
        self.pfhub = add_pfhub_dock(self)      # PFHub benchmark 1: F(t) on log–log axes, posted curves

        self._plot_timer = QTimer(self)
        self._plot_timer.setInterval(200)
        self._plot_timer.timeout.connect(self._refresh_plots)
        self._plot_timer.start()

        self._refresh_param_feedback()
        self._show_current()
        # the main window connects status_changed after construction: repeat the last status then
        QTimer.singleShot(0, self._emit_last_status)

    def _emit_last_status(self):
        self.status_changed.emit(dict(self._last_status))

    # ------------------------------------------------------------ view bar
    # --------------------------------------------------------------- frames
    def _show_current(self, force_iso: bool = True):
        self.worker.want_structure = True
        with busy_cursor():                 # S(k) of a large grid takes a moment
            field, info = self.worker.snapshot()
        self._display(field, info, force_iso=force_iso)

    def _display(self, field, info, force_iso=False):
        old_shape = self.canvas.shape
        self.canvas.update_field(field, force_iso=force_iso)
        self.colorbar.set_range(*self.canvas.current_clim)
        if self.canvas.shape != old_shape:
            self._sync_view_bar()
        self._hist = info["history"]
        self._hist_dirty = True
        now = time.perf_counter()
        if "structure" in info:
            self._sk, self._last_sk = info["structure"], now
        # ask the worker for S(k) again after the interval, and never more than a fifth of its time
        interval = max(0.5 if self.canvas.dim == 2 else 2.0, 5 * self.worker.structure_seconds)
        if now - self._last_sk > interval:
            self.worker.want_structure = True
        if len(self.sim.notes) != self._seen_notes:      # a note from stepping (e.g. CUDA graphs)
            self._sync_decomposition()
        self._last_status = {"fps": self._fps, "steps_per_s": info["steps_per_s"],
                             "display": self.canvas.upload_mode,
                             "t": info["t"], "steps": info["steps"], "info": self.decomposition_text}
        self.status_changed.emit(dict(self._last_status))

    def _on_frame(self, field, info):
        try:
            now = time.perf_counter()
            ft = self._frame_times
            ft.append(now)
            while len(ft) > 2 and now - ft[0] > 1.0:
                ft.popleft()
            self._fps = (len(ft) - 1) / (ft[-1] - ft[0]) if self.worker.running and len(ft) > 2 else 0.0
            self._display(field, info)
            self._frames_shown += 1
            if self.recorder is not None:
                self._record_frame()
        finally:
            self.worker.frame_done()

    def _refresh_plots(self):
        if not self._hist_dirty or self._hist is None or not self.plots_dock.isVisible():
            return
        self._hist_dirty = False
        self.plots.update_history(self._hist)
        if self._sk is not None:
            self.plots.update_structure(*self._sk)
            self._sk = None

    def _on_mouse_move(self, ev):
        """φ at the cell under the mouse, in the status bar."""
        hit = self.canvas.cell_at(ev.pos)
        if hit is None:
            text = ""
        else:
            idx, v = hit
            names = ("y", "x") if len(idx) == 2 else ("z", "y", "x")
            text = ", ".join(f"{a} = {i}" for a, i in zip(names, idx)) + f":  φ = {v:.4g}"
        if text != getattr(self, "_cursor_text", None):
            self._cursor_text = text
            self.status_changed.emit({"cursor": text})

    def _on_worker_error(self, msg: str):
        self.last_error = msg
        self.message_bar.show_message(msg, "error")

    def _on_running_changed(self, running: bool):
        self.controls.set_running(running)
        if not running:
            self._fps = 0.0
            self._frame_times.clear()
            self.status_changed.emit({"fps": 0.0, "steps_per_s": 0.0})
            self._on_progress(1, 1)

    def _on_progress(self, done: int, total: int):
        """A slow frame advances in chunks: progress in the status bar, a busy cursor on the view."""
        busy = done < total
        self.status_changed.emit({"progress": (done / total, f"frame: {done:,} of {total:,} steps")
                                  if busy else None})
        if busy:
            self.canvas.native.setCursor(Qt.CursorShape.BusyCursor)
        else:
            self.canvas.native.unsetCursor()

    def busy(self) -> bool:
        """A run (or a movie recording) is in progress: the main window marks the mode bar and
        asks before quitting."""
        return self.worker.running or self.recorder is not None

    # ------------------------------------------------------------- run API
    def is_running(self) -> bool:
        return self.worker.running

    def start(self):
        if self.pending:
            self.message_bar.show_message("Some changes need a reset before they apply: "
                                          + ", ".join(self.pending) + ". Running with the current grid.",
                                          "warning")
        elif self.message_bar.level in ("error",):
            self.message_bar.hide()
        self.worker.start()

    def pause(self):
        self.worker.pause()

    def toggle_run(self):
        self.pause() if self.worker.running else self.start()

    def step_once(self):
        """Advance exactly ``steps_per_frame`` steps (only while paused)."""
        self.worker.step_once()

    def _after_rebuild(self):
        """Sync controls, plots and view after the simulation was rebuilt."""
        self.pending.clear()
        self.controls.set_params(self.sim.params)
        self.plots.clear()
        self._refresh_param_feedback()
        self._show_current()

    def reset(self):
        self.worker.pause()
        try:
            params = self.sim.params.with_changes(**self.pending)
            with holding(self.worker.lock):
                self.sim.reset(params)
        except ExplorerError as exc:
            self.show_error(str(exc))
            return False
        if self.message_bar.level != "info":
            self.message_bar.hide()
        self._after_rebuild()                # may show the multi-GPU notes of the new stepper
        return True

    def show_error(self, msg: str):
        self.last_error = msg
        self.message_bar.show_message(msg, "error")

    # -------------------------------------------------------- parameter edits
    def _effective(self, name):
        return self.pending.get(name, getattr(self.sim.params, name))

    def _on_param(self, name: str, value):
        try:
            if name in LIVE:
                # validate against the pending (needs-reset) edits too, so that a
                # combination that Reset would refuse is reported now
                self.sim.params.with_changes(**{**self.pending, name: value})
                with holding(self.worker.lock):
                    self.sim.set_params(**{name: value})
            else:
                self.sim.params.with_changes(**{**self.pending, name: value})  # validate the combination
                if value == getattr(self.sim.params, name):
                    self.pending.pop(name, None)
                else:
                    self.pending[name] = value
                if name == "dim" and value == 3 and self._effective("size") > 128:
                    small = 128 if self.backend.is_gpu else 64
                    self.pending["size"] = small
                    self.controls.set_value("size", small, emit=False)
                    self.message_bar.show_message(f"3D: grid size set to {small}³ (change it if you like); "
                                                  "press Reset to apply.", "info")
        except ExplorerError as exc:
            self.show_error(str(exc))
            self.controls.set_value(name, self._effective(name), emit=False)
        except Exception as exc:   # e.g. a CUDA/NCCL error building a multi-GPU stepper: never abort the app
            self.show_error(f"could not apply {name} = {value!r}: {exc.__class__.__name__}: {exc}")
            self.controls.set_value(name, self._effective(name), emit=False)
        self._refresh_param_feedback()

    def set_parameter(self, name: str, value):
        """Programmatic edit, exactly as through the form (used by tests and scripts)."""
        self.controls.set_value(name, value, emit=True)

    def _on_spf(self, n: int):
        self.worker.steps_per_frame = int(n)

    def _refresh_param_feedback(self):
        try:
            p = self.sim.params.with_changes(**self.pending)
        except ExplorerError:
            p = self.sim.params
        self.controls.set_dt_limit(self.sim.params.dt, stability_limit(p), self.sim.params.integrator)
        self.controls.set_pending(self.pending)
        self._sync_decomposition()

    # ------------------------------------------------------------ multi-GPU
    def _fit_gpus(self, p: CHParams) -> tuple[CHParams, str]:
        """``p`` with at most the GPUs this machine offers (settings, sessions and files from
        another machine), and a note when it had to cut them."""
        if p.gpus <= self.offered_gpus:
            return p, ""
        have = self.offered_gpus
        note = (f"{p.gpus} GPUs were asked for; this machine offers {have}"
                + ("" if have > 1 or self.backend.is_gpu else f" (set {VIRTUAL_ENV}=N for N virtual GPUs)")
                + f": running on {have} GPU{'s' if have > 1 else ''}")
        return p.with_changes(gpus=have), note

    @staticmethod
    def describe_decomposition(d: dict) -> str:
        """Status-bar summary, e.g. "2 GPUs · p2p · slabs of 128/128 rows" ("" on one GPU)."""
        P = d.get("gpus", 1)
        if d.get("threads"):
            return f"cpu-threads · {d['threads']} thread{'s' if d['threads'] != 1 else ''} (OpenMP)"
        if P < 2 or "slab_rows" not in d:
            return ""
        sizes = [y1 - y0 for y0, y1 in d["slab_rows"]]
        unit = "z planes" if d.get("dim", 2) == 3 else "rows"
        if len(sizes) <= 4:
            slabs = f"slabs of {'/'.join(map(str, sizes))} {unit}"
        elif min(sizes) == max(sizes):
            slabs = f"slabs of {sizes[0]} {unit}"
        else:
            slabs = f"slabs of {min(sizes)}–{max(sizes)} {unit}"
        gpus = f"{P} virtual GPUs" if d.get("virtual_gpus") else f"{P} GPUs"
        graphs = " · CUDA graphs" if d.get("cuda_graphs") else ""
        return f"{gpus} · {d.get('exchange', '?')} · {slabs}{graphs}"

    def _sync_decomposition(self) -> None:
        """After a (possible) rebuild of the stepper: the status-bar decomposition, the slab
        overlay and, for a new stepper or new notes, the simulation's notes in the message bar."""
        st = self.sim.stepper
        notes = self.sim.notes
        threads = getattr(st, "threads", None)
        new = (st is not self._seen_stepper or len(notes) != self._seen_notes
               or threads != getattr(self, "_seen_threads", None))
        if not new:
            return
        self._seen_stepper, self._seen_notes, self._seen_threads = st, len(notes), threads
        d = dict(self.sim.decomposition())
        d["dim"] = self.sim.params.dim
        self.decomposition = d
        self.decomposition_text = self.describe_decomposition(d)
        self.canvas.set_slab_rows([y0 for y0, _y1 in d.get("slab_rows", [])][1:])
        self._sync_slabs_check()
        self._last_status["info"] = self.decomposition_text
        self.status_changed.emit({"info": self.decomposition_text})
        if notes:
            p = self.sim.params
            honoured = d["gpus"] == p.gpus and d.get("exchange", p.exchange) == p.exchange
            self._notes_msg = "Multi-GPU: " + "; ".join(notes) + "."
            self.message_bar.show_message(self._notes_msg, "info" if honoured else "warning")
        elif self._notes_msg and self.message_bar.text() == self._notes_msg:
            self.message_bar.hide()             # the old notes no longer apply
            self._notes_msg = ""

    def notes_tail(self) -> str:
        """The simulation's notes, to append to another message shown after a rebuild."""
        notes = self.sim.notes
        if not notes:
            return ""
        self._notes_msg = ""
        return " — Multi-GPU: " + "; ".join(notes) + "."

    # ------------------------------------------------------------- view API
    def colormaps(self):
        return list(COLORMAPS)

    def colormap(self):
        return self.canvas.cmap_name

    def set_colormap(self, name: str):
        if name not in COLORMAPS:
            return
        self.canvas.set_colormap(name)
        self.colorbar.set_colormap(colormap(name))
        if self.cmap_combo.currentText() != name:
            self.cmap_combo.blockSignals(True)
            self.cmap_combo.setCurrentText(name)
            self.cmap_combo.blockSignals(False)
        self.colormap_changed.emit(name)

    def set_auto_contrast(self, auto: bool):
        self.contrast_combo.setCurrentIndex(1 if auto else 0)

    def _on_contrast(self, i: int):
        self.canvas.set_auto_contrast(self.contrast_combo.itemData(i))
        self.colorbar.set_range(*self.canvas.current_clim)

    def plots_visible(self) -> bool:
        return not self.plots_dock.isHidden()

    def set_plots_visible(self, on: bool):
        self.plots_dock.setVisible(bool(on))

    def set_controls_visible(self, on: bool):
        self.controls_dock.setVisible(bool(on))

    # --------------------------------------------------------------- file I/O
    def _ask_path(self, title, filt, save=True, default=""):
        fn = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
        path, _ = fn(self, title, default, filt)
        return path or None

    # ---------------------------------------------------------------- exports
    # --------------------------------------------------------------- settings
    def save_settings(self, s):
        s.setValue("params_json", json.dumps(self.sim.params.with_changes(
            initial="spinodal" if self.sim.params.initial == "file" else self.sim.params.initial).to_dict()))
        s.setValue("steps_per_frame", self.worker.steps_per_frame)
        s.setValue("colormap", self.canvas.cmap_name)
        s.setValue("auto_contrast", bool(self.canvas.auto_contrast))
        s.setValue("show_slabs", self.show_slabs())
        s.setValue("dock_state", self.saveState())
        s.setValue("sweep_json", json.dumps(self.sweep.state()))
        s.setValue("reproduce_json", json.dumps(self.fig10.state()))
        s.setValue("rng_json", json.dumps(self.rng_panel.state()))
        s.setValue("pfhub_json", json.dumps(self.pfhub.state()))

    def restore_settings(self, s):
        try:
            self.sweep.restore(json.loads(s.value("sweep_json") or "{}"))
            self.fig10.restore(json.loads(s.value("reproduce_json") or "{}"))
            self.rng_panel.restore(json.loads(s.value("rng_json") or "{}"))
            self.pfhub.restore(json.loads(s.value("pfhub_json") or "{}"))
        except ValueError:
            pass
        cmap = s.value("colormap")
        if cmap in COLORMAPS:
            self.set_colormap(cmap)
        auto = s.value("auto_contrast")
        if auto is not None:
            self.set_auto_contrast(str(auto).lower() == "true")
        spf = s.value("steps_per_frame")
        if spf is not None:
            self.controls.spf.setValue(int(spf))
        slabs = s.value("show_slabs")
        if slabs is not None:
            self.set_show_slabs(str(slabs).lower() == "true")
        state = s.value("dock_state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        pj = s.value("params_json")
        if pj and not self._explicit_params:
            try:
                p, cut = self._fit_gpus(CHParams.from_dict(json.loads(pj)))
                with holding(self.worker.lock):
                    self.sim.reset(p)
            except (ExplorerError, ValueError, TypeError):
                return
            self.controls.set_params(self.sim.params)
            self._refresh_param_feedback()
            self._show_current()
            if cut:
                self.message_bar.show_message(f"Saved settings: {cut}." + self.notes_tail(), "info")

    # ---------------------------------------------------------------- presets
    VIEW_KEYS = ("steps_per_frame", "colormap", "auto_contrast", "isosurface", "slice_axis", "show_slabs",
                 "run")

    def apply_preset(self, preset: dict) -> None:
        """Rebuild from defaults + ``preset["params"]`` (CHParams fields and the view keys
        steps_per_frame, colormap, auto_contrast, isosurface, slice_axis, show_slabs, run); more GPUs
        than this machine offers are cut to those it has."""
        prm = dict(preset["params"])
        view = {k: prm.pop(k) for k in self.VIEW_KEYS if k in prm}
        p, _cut = self._fit_gpus(CHParams().with_changes(**prm))   # validates before anything changes
        self.worker.pause()
        with holding(self.worker.lock):
            self.sim.reset(p)
        self.preset = preset
        self.message_bar.hide()
        self._after_rebuild()                     # may show the multi-GPU notes of the new stepper
        self._apply_view(view)
        if view.get("run", True):
            self.start()

    def _apply_view(self, view: dict) -> None:
        if "steps_per_frame" in view:
            self.controls.spf.setValue(int(view["steps_per_frame"]))
        if "colormap" in view:
            self.set_colormap(view["colormap"])
        if "auto_contrast" in view:
            self.set_auto_contrast(bool(view["auto_contrast"]))
        if "slice_axis" in view and view["slice_axis"] in SLICE_AXES:
            self.slice_axis.setCurrentText(view["slice_axis"])
        if "slice_index" in view and self.canvas.dim == 3:
            self.slice_slider.setValue(int(view["slice_index"]))
        if "isosurface" in view:
            self.iso_check.setChecked(bool(view["isosurface"]) and self.iso_check.isEnabled())
        if "show_slabs" in view:
            self.set_show_slabs(bool(view["show_slabs"]))

    def load_run(self, state: dict, preset: dict | None = None) -> None:
        """Show a finished run (a CahnHilliard ``state_dict``, e.g. the PFHub tab's) in the view and
        the diagnostics: checked first, then loaded bit for bit; the live run is paused."""
        run = self.sim.check_state_dict(state)
        self.worker.pause()
        with holding(self.worker.lock):
            self.sim.load_state_dict(run)
        self.preset = preset
        self._after_rebuild()

    # ----------------------------------------------------- caption / lecture
    def caption(self) -> str:
        p = self.sim.params
        grid = f"{p.size}{'²' if p.dim == 2 else '³'}" if not p.rectangular else "×".join(map(str, p.shape[::-1]))
        start = {"spinodal": "spinodal decomposition", "droplets": "droplet coarsening",
                 "pfhub": "PFHub benchmark 1", "file": "a loaded field"}[p.initial]
        lead = f"{self.preset['name']}: " if self.preset else ""
        paper = f"paper {self.preset['paper']}" if self.preset else "paper 000 §3.1 (Leist, Playne & Hawick 2009)"
        return (f"{lead}Cahn–Hilliard {start}, {p.dim}D {grid} grid, {p.integrator}, t = {self.sim.t:.4g} "
                f"— {paper}")

    def parameter_summary(self) -> str:
        p = self.sim.params
        return (f"m = {p.m:g}, b = {p.b:g}, u = {p.u:g}, K = {p.K:g}, dx = {p.dx:g}, dt = {p.dt:g}, "
                f"{p.boundary} boundary, initial {p.initial} (mean {p.initial_mean:g}, seed {p.seed}), "
                f"{p.dtype}, step {self.sim.step_count:,}")

    def set_lecture_mode(self, on: bool) -> None:
        """Thick lines and large fonts in the plots; only the run buttons and the live model
        coefficients in the dock."""
        self._lecture = bool(on)
        self.controls.set_essential(on)
        self.plots.set_lecture(on)
        for w in (self.contrast_label, self.contrast_combo):
            w.setVisible(not on)
        self.controls_dock.setMinimumWidth(0)

    # --------------------------------------------------------------- sessions
    # ----------------------------------------------------------------- figures
    def shutdown(self):
        if self.recorder is not None:
            self._finish_movie()
        self._plot_timer.stop()
        self.sweep.panel.shutdown()
        self.fig10.shutdown()
        self.pfhub.shutdown()
        self.worker.stop()
