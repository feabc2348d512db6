"""The Cahn–Hilliard *Reproduce* tab: paper 001's Fig. 10 (time per 1024 steps against field length N on
one core, on CPU threads, on one GPU and on every GPU) and paper 000's layouts (16×16/12×12 shared tile
vs the tuned one, strips vs rectangles), timed off the GUI thread and plotted live on log–log axes, with
the paper's claims checked underneath (compute in kernels.cahn_hilliard.fig10; the run / cancel / export
cycle is a composed explorer.sweep_runner.SweepRunner).
"""
from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGridLayout,
                             QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QVBoxLayout,
                             QWidget)

from kernels.cahn_hilliard import fig10
from kernels.cahn_hilliard.params import GPU_VARIANTS, MAX_THREADS
from kernels.errors import InvalidParameter

from ..sweep_runner import SweepRunner, forwards_to_runner
from ..log_axis import log_axes
from ..lazy_panel import LazyPanel, lazy_dock

EXPERIMENT_LABELS = {"devices": "Fig. 10: one core, threads, GPU (paper 001)",
                     "layouts": "Layouts: tiles, strips vs rectangles (paper 000)"}
#: the method each experiment's speed-ups are taken against
BASE = {"devices": "single", "layouts": "A rectangles"}
PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127)]
METHOD_TIPS = {
    "single": "Compiled C++ stencil (variant cpu-threads) on one thread: paper 001's single-core version",
    "threads": "The same C++ with OpenMP, one band of rows per thread: paper 001's pThreads version",
    "numpy": "The NumPy array reference on one core (the app's CPU baseline; not in the paper)",
    "gpu": "One GPU running the chosen CUDA kernel (C: one thread per cell with texture reads, paper 001 Alg. 6)",
    "multi-gpu": "Every GPU: slabs with halo exchange (paper 001 §4.6)",
    "A rectangles": "Kernel A (global memory) in 16×16 blocks (3D: 32×4×2): paper 000's rectangles",
    "A strips": "Kernel A in strips of 256 consecutive cells of a row: paper 000's strips",
    "C rectangles": "Kernel C (texture reads) in 16×16 blocks: rectangles",
    "C strips": "Kernel C in strips of 256 cells",
    "B paper tile": "Kernel B with paper 000 Listing 7's tile: 16×16 threads load, the inner 12×12 write",
    "B tuned": "Kernel B with the tuned layout (2D: 64×64 register sweep; 3D: z-march)",
    "D paper tile": "Kernel D (texture into shared memory) with the paper's 16×16/12×12 tile",
    "D tuned": "Kernel D with the tuned layout",
}


def parse_sizes(text: str) -> list[int]:
    try:
        return [int(s) for s in str(text).replace(";", ",").split(",") if s.strip()]
    except ValueError:
        raise InvalidParameter(f"field lengths N must be whole numbers separated by commas (got {text!r})") from None


@forwards_to_runner
class CHReproduceTab(QWidget):
    """Controls + two live log–log plots (time per 1024 steps vs N; speed-up vs N) + claims + export;
    the run / cancel / export cycle is a composed :class:`explorer.sweep_runner.SweepRunner`
    (``runner``).  ``state()`` / ``restore(dict)`` for the settings."""

    def __init__(self, message=None, pause_live=None, parent=None):
        super().__init__(parent)
        self.message = message
        self.pause_live = pause_live      # pauses a live run before the timings take the cores / the GPU
        self.gpus = fig10.gpu_count()
        self.experiment = "devices"
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message,
                                  row_experiment=self.row_experiment, csv_name="ch_fig10.csv", run_text="Run timings")
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.cb_exp = QComboBox()
        for key, text in EXPERIMENT_LABELS.items():
            self.cb_exp.addItem(text, key)
        self.cb_exp.setToolTip("Which experiment: paper 001 Fig. 10 (devices) or paper 000's thread layouts")
        self.cb_exp.currentIndexChanged.connect(self._sync_experiment)
        form.addRow("experiment", self.cb_exp)
        # methods, one grid per experiment (only the current one is shown)
        self.ck_methods: dict[str, QCheckBox] = {}
        self.method_boxes = {}
        for exp, methods in fig10.EXPERIMENTS.items():
            box = QWidget()
            grid = QGridLayout(box)
            grid.setContentsMargins(0, 0, 0, 0)
            for i, m in enumerate(methods):
                ck = QCheckBox(fig10.LABELS.get(m, m))
                tip = METHOD_TIPS[m]
                if m in fig10.GPU_METHODS and (self.gpus < 1 or (m == "multi-gpu" and self.gpus < 2)):
                    ck.setEnabled(False)
                    tip += (". Needs two or more CUDA GPUs" if m == "multi-gpu" else ". Needs a CUDA GPU") + \
                        f" (this machine has {self.gpus})"
                ck.setChecked(ck.isEnabled())
                ck.setToolTip(tip)
                self.ck_methods[m] = ck
                grid.addWidget(ck, i // 3, i % 3)
            self.method_boxes[exp] = box
            form.addRow("methods" if exp == "devices" else "layouts", box)
        self.method_labels = {exp: form.labelForField(box) for exp, box in self.method_boxes.items()}
        # sizes
        srow = QHBoxLayout()
        self.ed_sizes = QLineEdit(self._default_sizes_text())
        self.ed_sizes.setToolTip("Field lengths N (cells per side), comma-separated whole numbers, "
                                 f"{fig10.SIZE_RANGE[2][0]} … {fig10.SIZE_RANGE[2][1]} in 2D, "
                                 f"{fig10.SIZE_RANGE[3][0]} … {fig10.SIZE_RANGE[3][1]} in 3D")
        self.bt_paper = QPushButton("Paper sizes")
        self.bt_paper.setToolTip("N = " + ", ".join(map(str, fig10.PAPER_SIZES)) + " (2D; the paper's plot "
                                 "reaches 4096; one core needs minutes there, the budget cuts each point short)")
        self.bt_paper.clicked.connect(lambda: self.ed_sizes.setText(", ".join(map(str, fig10.PAPER_SIZES))))
        srow.addWidget(self.ed_sizes, 1)
        srow.addWidget(self.bt_paper)
        form.addRow("field length N", srow)
        # run options
        opts = QHBoxLayout()
        self.cb_dim = QComboBox()
        self.cb_dim.addItem("2D", 2)
        self.cb_dim.addItem("3D", 3)
        self.cb_dim.setToolTip("Dimension of the field (paper 001 Fig. 10 is 2D)")
        self.sp_threads = QSpinBox()
        self.sp_threads.setRange(0, MAX_THREADS)
        self.sp_threads.setSpecialValueText("all cores")
        self.sp_threads.setToolTip("Threads of the threads method (0: every core; paper 001: 4 cores)")
        self.cb_variant = QComboBox()
        self.cb_variant.addItems(list(GPU_VARIANTS))
        self.cb_variant.setCurrentText("C")
        self.cb_variant.setToolTip("CUDA kernel of the gpu and multi-gpu methods (C: one thread per cell with "
                                   "texture reads, as paper 001 Alg. 6; E: our fastest)")
        self.sp_budget = QDoubleSpinBox()
        self.sp_budget.setRange(0.05, 600.0)
        self.sp_budget.setDecimals(2)
        self.sp_budget.setValue(1.0)
        self.sp_budget.setSuffix(" s")
        self.sp_budget.setToolTip("Seconds of timed steps per point (seconds): steps run in doubling chunks until "
                                  "this or 1024 steps; the time per 1024 steps is scaled from the steps timed")
        for text, w in (("dim", self.cb_dim), ("threads", self.sp_threads), ("GPU kernel", self.cb_variant),
                        ("budget", self.sp_budget)):
            lab = QLabel(text)
            lab.setToolTip(w.toolTip())
            opts.addWidget(lab)
            opts.addWidget(w)
        opts.addStretch(1)
        form.addRow("runs", opts)
        lay.addLayout(form)
        self.runner.lay_out(lay, "Time every chosen method at every N, off the GUI thread (the simulation "
                            "pauses)", csv_tip="Save every timed point (method, N, threads, GPUs, steps timed, "
                            "seconds per 1024 steps, device) as CSV", png_tip="Save both plots as one PNG (or SVG) "
                            "image", progress_tip="Finished (N, method) points")
        self.lbl.setToolTip("The paper's claims checked against the timed points")
        self.plots = pg.GraphicsLayoutWidget()
        self.p_time = self.plots.addPlot(row=0, col=0, axisItems=log_axes())
        self.p_up = self.plots.addPlot(row=1, col=0, axisItems=log_axes())
        for p in (self.p_time, self.p_up):
            p.setLogMode(x=True, y=True)
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "field length N (cells per side)")
            p.getAxis("left").enableAutoSIPrefix(False)
        self.p_time.setLabel("left", "seconds per 1024 steps")
        self.p_time.addLegend(offset=(5, 5), labelTextSize="8pt")
        self.p_time.setToolTip("Mean time per 1024 RK2 steps of each method against N, log–log (paper 001 Fig. 10 "
                               "right)")
        self.p_up.setToolTip("Speed-up of each method over the base one (single core; layouts: A rectangles)")
        self.plots.setMinimumHeight(300)
        lay.addWidget(self.plots, 1)
        self._sync_experiment()

    # ------------------------------------------------------------ parameters
    def _default_sizes_text(self) -> str:
        return ", ".join(map(str, fig10.PAPER_SIZES if self.gpus else fig10.QUICK_SIZES))

    def _sync_experiment(self):
        self.experiment = self.cb_exp.currentData()
        for exp, box in self.method_boxes.items():
            box.setVisible(exp == self.experiment)
            self.method_labels[exp].setVisible(exp == self.experiment)
        devices = self.experiment == "devices"
        self.sp_threads.setEnabled(devices)
        self.cb_variant.setEnabled(devices)
        self.p_time.setTitle("time per 1024 steps vs N" + (" (paper 001 Fig. 10)" if devices else
                                                           " (paper 000 layouts)"))
        self.p_up.setTitle(f"speed-up over {fig10.LABELS.get(BASE[self.experiment], BASE[self.experiment])}")
        self.rows = []
        self._redraw()
        self.lbl.setText(self._intro())

    def _intro(self) -> str:
        if self.experiment == "devices":
            return ("Paper 001 Fig. 10: the single core is slowest; pThreads ≈ TBB; GPUs many times faster; "
                    "2 GPUs ≈ 2× one GPU for N ≥ 2048, slower below.")
        return ("Paper 000 §3.1.4: strips and rectangles of width a multiple of 16 perform alike; kernel B's tile "
                "is 16×16 threads writing the inner 12×12.")

    def methods(self) -> list[str]:
        return [m for m in fig10.EXPERIMENTS[self.experiment]
                if self.ck_methods[m].isChecked() and self.ck_methods[m].isEnabled()]

    def state(self) -> dict:
        return {"experiment": self.experiment, "sizes": self.ed_sizes.text(),
                "methods": [m for m, ck in self.ck_methods.items() if ck.isChecked()],
                "dim": self.cb_dim.currentData(), "threads": self.sp_threads.value(),
                "variant": self.cb_variant.currentText(), "budget": self.sp_budget.value()}

    def restore(self, state) -> None:
        """Set the controls from ``state()``'s dict; unknown or malformed entries are skipped."""
        if not isinstance(state, dict):
            return
        if state.get("experiment") in fig10.EXPERIMENTS:
            self.cb_exp.setCurrentIndex(self.cb_exp.findData(state["experiment"]))
        if isinstance(state.get("sizes"), str):
            self.ed_sizes.setText(state["sizes"])
        if isinstance(state.get("methods"), list):
            for m, ck in self.ck_methods.items():
                ck.setChecked(ck.isEnabled() and m in state["methods"])
        if state.get("dim") in (2, 3):
            self.cb_dim.setCurrentIndex(self.cb_dim.findData(state["dim"]))
        v = state.get("threads")
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_THREADS:
            self.sp_threads.setValue(v)
        if state.get("variant") in GPU_VARIANTS:
            self.cb_variant.setCurrentText(state["variant"])
        b = state.get("budget")
        if isinstance(b, (int, float)) and not isinstance(b, bool) and 0.05 <= b <= 600:
            self.sp_budget.setValue(float(b))

    # ---------------------------------------------------------------- running
    def run(self) -> bool:
        """Check the controls and start the timings; False (with a message) on bad input or a running job."""
        if self.job is not None:
            return False
        try:
            dim = self.cb_dim.currentData()
            sizes = fig10.check_sizes(parse_sizes(self.ed_sizes.text()), dim)
            methods = fig10.check_methods(self.methods(), self.gpus)
        except InvalidParameter as exc:
            self.runner.say(str(exc))
            return False
        if self.pause_live is not None:
            self.pause_live()                 # the live run would share the cores / the GPU with the timings
        threads, variant, budget = self.sp_threads.value(), self.cb_variant.currentText(), self.sp_budget.value()
        gpus = max(2, self.gpus)
        self.rows = []
        self._redraw()
        self.lbl.setText("Timing …")
        self.runner.start("Fig. 10 timings", lambda cancelled: fig10.run_fig10(
            sizes, methods, dim=dim, threads=threads, variant=variant, gpus=gpus, budget=budget,
            cancelled=cancelled), len(sizes) * len(methods))
        return True

    def row_experiment(self):
        """Fig. 10 (devices) or the layouts: the chosen experiment."""
        return fig10.EXPERIMENT_OF[self.experiment]

    def _summary(self) -> str:
        if not self.rows:
            return "No points timed."
        found = self.row_experiment().claims(self.rows)
        lines = []
        for claim, holds, why in found:
            verdict = "not measured" if holds is None else ("holds" if holds else "does NOT hold")
            lines.append(f"• {claim}: {verdict} ({why})")
        return "\n".join(lines)

    # --------------------------------------------------------------- plotting
    def _redraw(self):
        self.p_time.clear()
        self.p_up.clear()
        if self.p_time.legend is not None:
            self.p_time.legend.clear()
        if not self.rows:
            return
        base = BASE[self.experiment]
        ups = fig10.speedups(self.rows, base)
        for i, m in enumerate(fig10.EXPERIMENTS[self.experiment]):
            rs = sorted((r for r in self.rows if r.method == m), key=lambda r: r.n)
            if not rs:
                continue
            col = PALETTE[i % len(PALETTE)]
            name = fig10.LABELS.get(m, m)
            if m == "threads":
                name += f" × {rs[-1].threads}"
            elif m == "multi-gpu":
                name += f" × {rs[-1].gpus}"
            self.p_time.plot([r.n for r in rs], [r.per_1024 for r in rs], pen=pg.mkPen(col, width=2), symbol="o",
                             symbolSize=7, symbolBrush=col, name=name)
            pts = sorted((n, s) for (n, mm), s in ups.items() if mm == m)
            if pts:
                self.p_up.plot([n for n, _ in pts], [s for _, s in pts], pen=pg.mkPen(col, width=2), symbol="o",
                               symbolSize=7, symbolBrush=col)

    # ----------------------------------------------------------------- export
    def export_plots(self, path=None):
        """Both plots as one PNG (twice the screen size) or SVG; the path written, or None."""
        return self.runner.export_widget(path, "ch_fig10.png", self.plots, "Cahn–Hilliard timings")

    def shutdown(self):
        if self.job is not None:
            self.job.cancel()
            self.job.thread.wait(30000)


def add_reproduce_dock(ws) -> LazyPanel:
    """The Reproduce tab as a dock of the Cahn–Hilliard workspace, tabbed with Diagnostics and Sweep;
    the :class:`CHReproduceTab` is built the first time the dock shows or it is asked for (:func:`lazy_dock`)."""
    return lazy_dock(ws, "Reproduce", "ch_reproduce",
                     lambda: CHReproduceTab(ws.message_bar.show_message, pause_live=ws.pause))
