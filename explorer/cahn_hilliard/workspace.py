"""The Cahn–Hilliard workspace: parameter dock, VisPy field view, diagnostic plots, exports.

Views only: the simulation is ``kernels.cahn_hilliard.CahnHilliard``, stepped on a
worker thread (:mod:`.worker`); this widget turns user edits into ``set_params`` /
``reset`` calls and draws the frames the worker sends.
"""
from __future__ import annotations

import json
import time
from collections import deque

from pathlib import Path

from PyQt6.QtCore import QByteArray, Qt, QTimer, pyqtSignal
from PyQt6.QtWidgets import QHBoxLayout, QMainWindow, QVBoxLayout, QWidget

from kernels.cahn_hilliard.multigpu import offered_gpus
from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.simulation import CahnHilliard
from kernels.errors import ExplorerError

from .. import recent
from ..colorbar import ColorBar
from ..export import Figure
from ..lazy_panel import LazyPanels, panel_property
from ..rng.panel import add_rng_dock
from ..widgets import MessageBar, add_dock, busy_cursor, holding
from ..workspace_api import Workspace
from . import sessions
from .canvas import COLORMAPS, FieldCanvas, colormap
from .controls import ControlPanel
from .decomposition import DecompositionReport, fit_gpus
from .exports import FieldExports
from .param_edits import ParameterEdits
from .pfhub_tab import add_pfhub_dock
from .plots import DiagnosticsPlots
from .reproduce_tab import add_reproduce_dock
from .sweep_tab import add_sweep_dock
from .view_bar import SLABS_KEY, ViewBar
from .worker import SimulationWorker


class CahnHilliardWorkspace(Workspace, QMainWindow):
    """Workspace widget (an inner QMainWindow so controls and plots are dockable), composed of
    parts that own their state: the :class:`ViewBar` over the :class:`FieldCanvas`, the
    :class:`ControlPanel` form, the :class:`DiagnosticsPlots`, the :class:`FieldExports` files and
    the :class:`DecompositionReport`; this class runs the simulation and routes between them."""

    CAPABILITIES = frozenset({"open_field", "save_field", "export_image", "export_plots", "export_movie",
                              "toggle_run", "step_once", "reset", "set_colormap", "set_plots_visible",
                              "set_controls_visible", "apply_preset", "colormaps", "figures", "sessions",
                              "open_files", "user_presets"})
    FILE_TYPES = {".npz": "field", ".npy": "field"}

    status_changed = pyqtSignal(dict)
    colormap_changed = pyqtSignal(str)
    #: the tabbed docks' panels (``side_panels``), each built the first time its dock shows or it is read
    sweep, fig10 = panel_property("sweep", "side_panels"), panel_property("reproduce", "side_panels")
    rng_panel, pfhub = panel_property("rng", "side_panels"), panel_property("pfhub", "side_panels")

    def __init__(self, backend, parent=None, params: CHParams | None = None, steps_per_frame: int = 10):
        super().__init__(parent)
        self.setWindowFlags(Qt.WindowType.Widget)
        self.backend = backend
        self._explicit_params = params is not None
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
        self.view_bar = ViewBar(self.canvas, self.offered_gpus)
        self.view_bar.colormap_chosen.connect(self.set_colormap)
        self.view_bar.contrast_chosen.connect(self._on_contrast)
        cl.addWidget(self.view_bar)
        self.message_bar = MessageBar()
        cl.addWidget(self.message_bar)
        self.decomp = DecompositionReport(self.message_bar)
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
        self.edits = ParameterEdits(self.sim, self.controls, self.message_bar, self.worker.lock,
                                    backend.is_gpu, self.show_error, self)
        self.edits.changed.connect(self._sync_decomposition)
        self.controls.steps_per_frame_changed.connect(self._on_spf)
        self.controls.start_pause_clicked.connect(self.toggle_run)
        self.controls.step_clicked.connect(self.step_once)
        self.controls.reset_clicked.connect(self.reset)
        self.controls_dock = add_dock(self, "Parameters", "ch_controls", self.controls, "left")

        self.plots = DiagnosticsPlots()
        self.plots_dock = add_dock(self, "Diagnostics", "ch_plots", self.plots, "bottom")
        self.files = FieldExports(self, self.canvas, self.colorbar, self.plots, self.message_bar,
                                  snapshot=self._field_snapshot, extra_figures=self._extra_figures)
        self.files.recording_changed.connect(self._on_recording)
        self.plots.setMinimumHeight(200)
        QTimer.singleShot(0, lambda: self.resizeDocks([self.plots_dock], [270], Qt.Orientation.Vertical))
        # beside Diagnostics: Sweep (kernels.sweep on Dask), Reproduce (paper 001 Fig. 10 / paper 000 layouts),
        # paper 001's RNG (Table 1, quality checks), PFHub benchmark 1 — each built when first shown or read
        self.side_panels = LazyPanels({"sweep": add_sweep_dock(self), "reproduce": add_reproduce_dock(self),
                                       "rng": add_rng_dock(self), "pfhub": add_pfhub_dock(self)})

        self._plot_timer = QTimer(self)
        self._plot_timer.setInterval(200)
        self._plot_timer.timeout.connect(self._refresh_plots)
        self._plot_timer.start()

        self.edits.refresh()
        self._show_current()
        # the main window connects status_changed after construction: repeat the last status then
        QTimer.singleShot(0, self._emit_last_status)

    def _emit_last_status(self):
        self.status_changed.emit(dict(self._last_status))

    @property
    def recorder(self):
        """The movie being recorded (None: none)."""
        return self.files.recorder

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
            self.view_bar.sync()
        self._hist = info["history"]
        self._hist_dirty = True
        now = time.perf_counter()
        if "structure" in info:
            self._sk, self._last_sk = info["structure"], now
        # ask the worker for S(k) again after the interval, and never more than a fifth of its time
        interval = max(0.5 if self.canvas.dim == 2 else 2.0, 5 * self.worker.structure_seconds)
        if now - self._last_sk > interval:
            self.worker.want_structure = True
        if self.decomp.notes_changed(self.sim):          # a note from stepping (e.g. CUDA graphs)
            self._sync_decomposition()
        # steps/s only while running (a paused run's last rate is not a rate)
        sps = info["steps_per_s"] if self.worker.running else 0.0
        self._last_status = {"fps": self._fps, "steps_per_s": sps, "running": self.worker.running,
                             "display": self.canvas.upload_mode,
                             "t": info["t"], "steps": info["steps"], "info": self.decomp.text}
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
            if self.files.recorder is not None:
                self.files.record_frame()
        finally:
            self.worker.frame_done()

    def _refresh_plots(self, force: bool = False):
        if self._hist is None or not (force or (self._hist_dirty and self.plots_dock.isVisible())):
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
            self._last_status.update(fps=0.0, steps_per_s=0.0, running=False)
            self.status_changed.emit({"fps": 0.0, "steps_per_s": 0.0, "running": False})
            self._on_progress(1, 1)
        else:
            self.status_changed.emit({"running": True})

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
        return self.worker.running or self.files.recorder is not None

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
        self.plots.clear()
        self.edits.clear()
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
    @property
    def pending(self) -> dict:
        """Edits that wait for Reset: {name: value}."""
        return self.edits.pending

    def set_parameter(self, name: str, value):
        """Programmatic edit, exactly as through the form (used by tests and scripts)."""
        self.controls.set_value(name, value, emit=True)

    def _on_spf(self, n: int):
        self.worker.steps_per_frame = int(n)

    # ------------------------------------------------------------ multi-GPU
    def _fit_gpus(self, p: CHParams) -> tuple[CHParams, str]:
        return fit_gpus(p, self.offered_gpus, self.backend.is_gpu)

    def _sync_decomposition(self) -> None:
        """After a (possible) rebuild of the stepper: the status-bar decomposition, the slab
        overlay and the simulation's notes in the message bar."""
        if not self.decomp.sync(self.sim):
            return
        self.canvas.set_slab_rows(self.decomp.slab_starts())
        self.view_bar.sync(self.decomp.decomposition["gpus"])
        self._last_status["info"] = self.decomp.text
        self.status_changed.emit({"info": self.decomp.text})

    # ------------------------------------------------------------- view API
    def colormaps(self):
        return list(COLORMAPS)

    def colormap(self):
        return self.canvas.cmap_name

    def set_colormap(self, name: str):
        if name not in COLORMAPS:
            return
        if self.view_bar.colormap() != name:     # through the bar's combo: it comes back here
            self.view_bar.select_colormap(name)
            return
        self.canvas.set_colormap(name)
        self.colorbar.set_colormap(colormap(name))
        self.colormap_changed.emit(name)

    def set_auto_contrast(self, auto: bool):
        self.view_bar.set_auto_contrast(auto)

    def _on_contrast(self, auto: bool):
        self.canvas.set_auto_contrast(auto)
        self.colorbar.set_range(*self.canvas.current_clim)

    def show_slabs(self) -> bool:
        return self.view_bar.show_slabs()

    def set_show_slabs(self, on: bool):
        self.view_bar.set_show_slabs(on)

    def toggle_slabs(self):
        """Workspace ▸ Show / hide slab boundaries (only where the overlay applies)."""
        self.view_bar.toggle_slabs()

    def extra_actions(self):
        """Workspace menu entries (text, method, shortcut, tip): the slab overlay, where GPUs are offered."""
        if self.offered_gpus < 2:
            return []
        return [("Show / hide &slab boundaries", "toggle_slabs", SLABS_KEY,
                 "Dashed lines where the field is split between GPUs (2D view)")]

    def plots_visible(self) -> bool:
        return not self.plots_dock.isHidden()

    def set_plots_visible(self, on: bool):
        self.plots_dock.setVisible(bool(on))

    def set_controls_visible(self, on: bool):
        self.controls_dock.setVisible(bool(on))

    # --------------------------------------------------------------- files
    def _field_snapshot(self):
        with holding(self.worker.lock):
            return (self.sim.field_numpy().copy(), self.sim.params, self.sim.t, self.sim.step_count)

    def _extra_figures(self):
        fig10 = self.side_panels.built().get("reproduce")          # a Reproduce tab never opened has none
        return [] if fig10 is None else [Figure("Reproduce timings (paper 001 Fig. 10 / paper 000 layouts)",
                                                widget=fig10.plots)]

    def save_field(self, path=None):
        """The field and its parameters as .npz; the path written (None: cancelled or failed)."""
        return self.files.save_field(path)

    def open_file(self, path: str) -> None:
        """Load a field file (.npz / .npy) as the initial condition 'file', with its parameters
        where it has them; ExplorerError (nothing changed) when it cannot be used."""
        phi, params = self.files.load(path)
        base = (params or self.sim.params).with_changes(initial="file", dim=phi.ndim, size=phi.shape[0])
        base, cut = self._fit_gpus(base)
        self.worker.pause()
        with holding(self.worker.lock):
            self.sim.reset(base, field0=phi)
        self._after_rebuild()
        self.message_bar.show_message(f"Loaded {Path(path).name}: {'×'.join(map(str, phi.shape))} field "
                                      "(initial condition 'file'; Reset returns to it)"
                                      + (f"; {cut}" if cut else "") + self.decomp.notes_tail(self.sim), "info")

    def open_field(self, path=None) -> bool:
        """File ▸ Open field… (a dialog when ``path`` is None); False after a message."""
        asked = path is None
        path = path or self.files.ask_field()
        if not path:
            return False
        try:
            self.open_file(path)
        except ExplorerError as exc:
            self.show_error(str(exc))
            return False
        if asked:
            recent.file_opened(path)
        return True

    def export_image(self, path=None, scale: float | None = None, crop_to_data: bool | None = None):
        return self.files.export_image(path, scale, crop_to_data)

    def export_plots(self, path=None):
        self._refresh_plots(force=True)
        return self.files.export_plots(path)

    def export_movie(self, path=None, frames: int | None = None, fps: int = 25):
        """Record the next ``frames`` frames of the running field (MP4/GIF); the path."""
        return self.files.start_movie(path, frames, fps)

    def _on_recording(self, on: bool):
        if on and not self.worker.running:
            self.start()

    def figure_targets(self):
        return self.files.figure_targets()

    # --------------------------------------------------------------- settings
    def save_settings(self, s):
        s.setValue("params_json", json.dumps(self.sim.params.with_changes(
            initial="spinodal" if self.sim.params.initial == "file" else self.sim.params.initial).to_dict()))
        s.setValue("steps_per_frame", self.worker.steps_per_frame)
        s.setValue("colormap", self.canvas.cmap_name)
        s.setValue("auto_contrast", bool(self.canvas.auto_contrast))
        s.setValue("show_slabs", self.view_bar.show_slabs())
        s.setValue("dock_state", self.saveState())
        self.side_panels.save_settings(s)       # sweep_json, reproduce_json, rng_json, pfhub_json

    def restore_settings(self, s):
        self.side_panels.restore_settings(s)
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
            self.edits.refresh()
            self._show_current()
            if cut:
                self.message_bar.show_message(f"Saved settings: {cut}." + self.decomp.notes_tail(self.sim), "info")

    # ---------------------------------------------------------------- presets
    def apply_preset(self, preset: dict) -> None:
        """Rebuild from defaults + ``preset["params"]`` (CHParams fields and the view keys
        steps_per_frame, colormap, auto_contrast, isosurface, slice_axis, show_slabs, run); more GPUs
        than this machine offers are cut to those it has."""
        prm = dict(preset["params"])
        view = {k: prm.pop(k) for k in (*sessions.VIEW_KEYS, "run") if k in prm}
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

    def preset_params(self) -> dict:
        """The parameters (pending edits included) and the view, as a preset's ``params``: a
        loaded field's run becomes a spinodal start from its seed; the run waits for Start."""
        p = self.edits.params()
        if p.initial == "file":
            p = p.with_changes(initial="spinodal")
        view = self.view_bar.state()
        view.pop("slice_index", None)
        return {**p.to_dict(), "steps_per_frame": int(self.worker.steps_per_frame), **view, "run": False}

    def _apply_view(self, view: dict) -> None:
        if "steps_per_frame" in view:
            self.controls.spf.setValue(int(view["steps_per_frame"]))
        if "colormap" in view:
            self.set_colormap(view["colormap"])
        if "auto_contrast" in view:
            self.set_auto_contrast(bool(view["auto_contrast"]))
        self.view_bar.apply(view)

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
        self.view_bar.set_lecture(on)
        self.controls_dock.setMinimumWidth(0)

    # --------------------------------------------------------------- sessions
    def session_state(self) -> dict:
        return {"params": self.sim.params.to_dict(), "pending": dict(self.pending),
                "t": float(self.sim.t), "steps": int(self.sim.step_count),
                "steps_per_frame": int(self.worker.steps_per_frame), **self.view_bar.state(),
                "plots_visible": self.plots_visible(),
                "preset": None if self.preset is None else {k: self.preset[k] for k in ("name", "paper")}}

    def session_data(self) -> dict:
        with holding(self.worker.lock):
            return sessions.run_arrays(self.sim.state_dict())

    def restore_session(self, state: dict, data: dict) -> None:
        """Parameters, view and (when saved) the run, bit for bit; everything is checked before
        anything changes (:func:`.sessions.read_session`)."""
        plan = sessions.read_session(state, data)
        p, cut = self._fit_gpus(plan.params)
        run = None if plan.run is None else self.sim.check_state_dict({"params": p, **plan.run})
        self.worker.pause()
        with holding(self.worker.lock):
            if run is None:
                self.sim.reset(p)
            else:
                self.sim.load_state_dict(run)
        self.preset = plan.preset
        self._after_rebuild()
        for name, value in plan.pending.items():
            self.controls.set_value(name, value, emit=True)
        self._apply_view(plan.view)
        if plan.plots_visible is not None:
            self.set_plots_visible(plan.plots_visible)
        self.message_bar.show_message("Session restored" + ("" if run is not None else
                                      " (parameters only: the field was rebuilt from the seed)")
                                      + (f"; {cut}" if cut else "") + self.decomp.notes_tail(self.sim), "info")

    def shutdown(self):
        if self.files.recorder is not None:
            self.files.finish_movie()
        self._plot_timer.stop()
        built = self.side_panels.built()             # a tab never built runs nothing
        for part in (getattr(built.get("sweep"), "panel", None), built.get("reproduce"), built.get("pfhub")):
            if part is not None:
                part.shutdown()
        self.worker.stop()
