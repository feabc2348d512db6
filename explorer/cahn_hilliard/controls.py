"""Parameter form and run buttons of the Cahn–Hilliard workspace (Qt only, no model logic)."""
from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QAbstractSpinBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox,
                             QHBoxLayout, QLabel, QPushButton, QScrollArea, QSpinBox, QStyle,
                             QVBoxLayout, QWidget)

from kernels.cahn_hilliard.multigpu import VIRTUAL_ENV, offered_gpus
from kernels.cahn_hilliard.params import (BLOCK_LAYOUTS, BOUNDARIES, EXCHANGES, GPU_VARIANTS, INTEGRATORS, LIVE,
                                          MAX_GPUS, MAX_THREADS, NOISE_SOURCES, STEPS_PER_PASS, TILES, VARIANT_NAMES,
                                          VARIANTS, CHParams, variant_runs, variant_title)
from kernels.cahn_hilliard.temporal import auto_rule

from .. import undo
from ..widgets import fit_combos

# halo exchange between GPUs: combo text and the tooltip of each entry
EXCHANGE_LABELS = {"p2p": "p2p (peer-to-peer)", "host": "host (staged, paper 001)",
                   "nccl": "nccl (NCCL send/recv)"}
EXCHANGE_TIPS = {
    "p2p": "cudaMemcpyPeerAsync straight into the neighbour GPU's halo rows, over NVLink or PCIe "
           "(peer access enabled where the GPUs allow it; otherwise the driver stages the copy)",
    "host": "Staged through pinned host memory as in paper 001: device → pinned host buffer → "
            "neighbour device, two cudaMemcpyAsync legs ordered by events",
    "nccl": "NCCL: one ncclSend/ncclRecv group per pass (cupy.cuda.nccl); needs distinct CUDA GPUs",
}
MULTI_GPU_GROUP = "Multi-GPU  (slabs + halo exchange, paper 001)"

# name: (label, kind, options, tooltip)
FLOAT = "float"
INT = "int"
CHOICE = "choice"

SPEC = {
    "m": ("Mobility m", FLOAT, dict(lo=1e-4, hi=1e3, dec=4, step=0.1),
          "Mobility m (dimensionless): rate constant of dφ/dt = m ∇²μ. Live."),
    "b": ("Bulk b", FLOAT, dict(lo=0.0, hi=1e3, dec=4, step=0.1),
          "Coefficient b of the −(b/2)φ² term of the double-well free energy (≥ 0). "
          "Equilibrium phases sit at φ = ±√(b/u). Live."),
    "u": ("Bulk u", FLOAT, dict(lo=0.0, hi=1e3, dec=4, step=0.1),
          "Coefficient u of the +(u/4)φ⁴ term of the double-well free energy (≥ 0). Live."),
    "K": ("Gradient K", FLOAT, dict(lo=1e-4, hi=1e3, dec=4, step=0.1),
          "Gradient-energy coefficient K of (K/2)|∇φ|²: sets the interface width ~ √(K/b) "
          "in units of dx. Live."),
    "dt": ("Time step dt", FLOAT, dict(lo=1e-6, hi=100.0, dec=5, step=0.001),
           "Time step dt (simulation time units). Explicit Euler/RK2 are stable only for "
           "dt ≤ dt_max shown on the right; the spectral integrator is semi-implicit. Live."),
    "integrator": ("Integrator", CHOICE, dict(items=[(i, {"euler": "Euler (explicit)",
                                                           "rk2": "RK2 midpoint (explicit, paper 000)",
                                                           "spectral": "Spectral semi-implicit (periodic or mirror)"}[i])
                                                      for i in INTEGRATORS]),
                   "Time integrator. Euler and RK2 are explicit finite-difference steppers "
                   "(13-point stencil); spectral is a linearly stabilised Fourier stepper. Live."),
    "variant": ("Kernel variant", CHOICE, dict(items=[(v, VARIANT_NAMES[v]) for v in VARIANTS]),
                "Implementation of the stencil update: the array reference; cpu-threads, the same "
                "stencil as compiled C++ on every CPU core with OpenMP (paper 001 §4, CPU backend "
                "only; the first use compiles it); or one of the CUDA kernels A–E of paper 000 §3.1 "
                "(GPU backend only). Live."),
    "threads": ("CPU threads", INT, dict(lo=0, hi=MAX_THREADS, step=1, special="all cores"),
                "Threads of the cpu-threads variant (OpenMP, each a band of rows as paper 001's "
                "pThreads version): 0 = every core, 1 = paper 001's single-core run. The result does "
                "not depend on it. Live."),
    "block_layout": ("Thread layout", CHOICE, dict(items=[(b, {"rectangles": "rectangles (16×16)",
                                                                "strips": "strips (256 × 1)"}[b])
                                                           for b in BLOCK_LAYOUTS]),
                     "How kernels A and C (one thread per cell) group cells into thread blocks, paper 000 "
                     "§3.1.4 Fig. 4: rectangles of 16×16 cells (3D: 32×4×2) or strips of 256 consecutive "
                     "cells of one row. Same result either way. Live."),
    "tile": ("Shared tile", CHOICE, dict(items=[(t, {"auto": "auto (tuned)",
                                                     "paper": "paper: 16×16 threads, 12×12 write",
                                                     "sweep": "sweep (2D, 64×64 + registers)",
                                                     "march": "march (planes in shared memory)"}[t])
                                                for t in TILES]),
             "Shared-memory layout of kernels B and D: auto = the tuned default (2D sweep, 3D march); "
             "paper = paper 000 Listing 7's block of 16×16 threads that loads a 16×16 tile and writes its "
             "inner 12×12 cells (3D: a 16×8×8 tile); sweep = a 68×68 tile swept by columns in registers "
             "(2D only); march = the block marches along y (2D) / z (3D) keeping planes in shared memory. "
             "Same result either way. Live."),
    "steps_per_pass": ("Steps per pass", CHOICE,
                       dict(items=[(k, "auto" if k == "auto" else f"{k} step{'s' if k != '1' else ''}")
                                   for k in STEPS_PER_PASS]),
                       "Temporal blocking of kernel E and cpu-threads (issue 38): k RK2 steps fused into one "
                       "pass over the field, each block (CPU: each thread's band of rows) holding a halo 4·k "
                       "cells wide, so the field is read and written once per k steps. The result is "
                       "bit-identical to k single steps. " + auto_rule() + "; k is lowered where the grid "
                       "(periodic / mirror: every side ≥ 4k) or the GPU's shared memory cannot hold the halo. A "
                       "step count not divisible by k runs the rest as single steps. Live."),
    "gpus": ("GPUs", INT, dict(lo=1, hi=MAX_GPUS, step=1),
             "GPUs to split the field over (paper 001 §4.6): contiguous slabs of rows (2D) or z planes "
             "(3D), one per GPU, each swapping halo rows of the stencil's width (2 cells; 4 for the "
             "fused kernel E) with its neighbours after every kernel pass. The result is bit-identical "
             "to one GPU. The spectral integrator runs on one GPU. Live."),
    "exchange": ("Halo exchange", CHOICE, dict(items=[(e, EXCHANGE_LABELS[e]) for e in EXCHANGES]),
                 "How neighbouring GPUs swap their halo rows after every pass: peer-to-peer, staged "
                 "through pinned host memory (paper 001) or NCCL send/recv. The exchange overlaps the "
                 "bulk kernel (paper 001 Alg. 8). Live."),
    "dim": ("Dimension", CHOICE, dict(items=[(2, "2D (square)"), (3, "3D (cube)")]),
            "Spatial dimension of the grid. Needs reset."),
    "size": ("Grid size N", INT, dict(lo=8, hi=32768, step=32),
             "Cells per side (N² cells in 2D, N³ in 3D). Needs reset."),
    "dx": ("Spacing dx", FLOAT, dict(lo=0.01, hi=100.0, dec=3, step=0.1),
           "Lattice spacing dx (length units). Needs reset."),
    "dtype": ("Precision", CHOICE, dict(items=[("float32", "float32 (single)"), ("float64", "float64 (double)")]),
              "Floating-point precision of the field. Needs reset."),
    "boundary": ("Boundary", CHOICE, dict(items=[(b, b) for b in BOUNDARIES]),
                 "periodic: wrap-around; mirror: zero-flux (reflecting) walls; fixed: φ held at the "
                 "boundary value in the ghost cells (paper 000 §3.1.2). Needs reset."),
    "boundary_value": ("Boundary φ", FLOAT, dict(lo=-1.5, hi=1.5, dec=3, step=0.1),
                       "φ in the ghost cells for the 'fixed' boundary (dimensionless). Live."),
    "initial": ("Initial state", CHOICE, dict(items=[("spinodal", "spinodal (50/50 noise)"),
                                                     ("droplets", "droplets (off-critical)"),
                                                     ("file", "from file (File ▸ Open field…)")]),
                "Initial field: spinodal = mean plus uniform random noise (paper 000 Fig. 1a); "
                "droplets = a random binary ±1 mixture, 25/75 by default (Fig. 1b); or a field "
                "loaded from a .npz file. Needs reset."),
    "mean": ("Mean φ₀", FLOAT, dict(lo=-1.5, hi=1.5, dec=3, step=0.05, auto=True),
             "Mean composition φ₀ of the initial field (conserved by the dynamics for periodic and mirror boundaries; for droplets, the fraction of +1 cells is (1+φ₀)/2). "
             "'auto': 0 for spinodal, −0.5 for droplets. Needs reset."),
    "noise": ("Noise", FLOAT, dict(lo=0.0, hi=10.0, dec=3, step=0.01),
              "Amplitude of the uniform random perturbation of the spinodal start: φ = φ₀ ± noise "
              "(the droplet start is binary and ignores it). Needs reset."),
    "seed": ("Seed", INT, dict(lo=0, hi=2 ** 31 - 1, step=1),
             "Random seed of the initial noise (same seed → same field). Needs reset."),
    "noise_source": ("Noise generator", CHOICE,
                     dict(items=[(s, {"marsaglia": "Marsaglia (paper 001)", "xp": "NumPy / CuPy default_rng"}[s])
                                 for s in NOISE_SOURCES]),
                     "Generator of the initial noise: Marsaglia = paper 001's lagged-Fibonacci stream "
                     "(one L = 92 153 table, approach 2; the same field on the CPU and the GPU); "
                     "NumPy / CuPy = the array library's default_rng (PCG64 on the CPU, CuPy's on the GPU: "
                     "fields differ between backends). Needs reset."),
}

GROUPS = [
    ("Model  dφ/dt = m∇²(−bφ + uφ³ − K∇²φ)", ("m", "b", "u", "K")),
    ("Time stepping", ("dt", "integrator", "variant", "threads", "block_layout", "tile", "steps_per_pass")),
    (MULTI_GPU_GROUP, ("gpus", "exchange")),
    ("Grid", ("dim", "size", "dx", "dtype")),
    ("Boundary", ("boundary", "boundary_value")),
    ("Initial condition", ("initial", "mean", "noise", "seed", "noise_source")),
]

WARN_STYLE = "color: #b00020; font-weight: bold;"
PENDING_STYLE = "color: #a15c00; font-weight: bold;"


class ControlPanel(QWidget):
    """Emits ``param_changed(name, value)`` for every edit; the workspace applies it.

    Every parameter and *Steps per frame* is undoable (``explorer.undo``, hooked in here once):
    an edit pushes onto the workspace's stack, consecutive edits of one field merge, and an undo
    sets the control as an edit does (so a needs-Reset parameter is marked ⟳ again).  Values
    shown by :meth:`set_value` with ``emit=False`` / :meth:`set_params` are not edits."""

    param_changed = pyqtSignal(str, object)
    #: a control now shows another value (an edit, or a value shown by the program)
    shown_changed = pyqtSignal(str)
    steps_per_frame_changed = pyqtSignal(int)
    start_pause_clicked = pyqtSignal()
    step_clicked = pyqtSignal()
    reset_clicked = pyqtSignal()

    def __init__(self, backend, parent=None):
        super().__init__(parent)
        self.backend = backend
        #: GPUs the form offers: visible CUDA devices, or GSE_VIRTUAL_GPUS virtual ones on the CPU
        self.offered_gpus = offered_gpus(backend)
        self.widgets: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)

        # run buttons
        st = self.style()
        row = QHBoxLayout()
        self.btn_run = QPushButton(st.standardIcon(QStyle.StandardPixmap.SP_MediaPlay), "Start")
        self.btn_run.setToolTip("Start / pause the simulation (Space)")
        self.btn_step = QPushButton(st.standardIcon(QStyle.StandardPixmap.SP_MediaSkipForward), "Step")
        self.btn_step.setToolTip("Advance one frame of 'steps per frame' steps while paused (.)")
        self.btn_reset = QPushButton(st.standardIcon(QStyle.StandardPixmap.SP_BrowserReload), "Reset")
        self.btn_reset.setToolTip("Rebuild the initial field, applying parameters that need a reset (Ctrl+R)")
        for b in (self.btn_run, self.btn_step, self.btn_reset):
            row.addWidget(b)
        outer.addLayout(row)
        self.btn_run.clicked.connect(self.start_pause_clicked)
        self.btn_step.clicked.connect(self.step_clicked)
        self.btn_reset.clicked.connect(self.reset_clicked)

        spf_row = QFormLayout()
        self.spf = QSpinBox()
        self.spf.setRange(1, 100000)
        self.spf.setValue(10)
        self.spf.setKeyboardTracking(False)
        self.spf.setToolTip("Time steps computed between two displayed frames (also the size of one 'Step')")
        self.spf.valueChanged.connect(self.steps_per_frame_changed)
        undo.track(self.spf, "steps_per_frame", label="steps per frame")
        spf_row.addRow("Steps per frame", self.spf)
        outer.addLayout(spf_row)

        self.pending_label = QLabel("")
        self.pending_label.setWordWrap(True)
        self.pending_label.setStyleSheet(PENDING_STYLE)
        self.pending_label.setVisible(False)
        outer.addWidget(self.pending_label)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        bl = QVBoxLayout(body)
        bl.setContentsMargins(0, 0, 0, 0)
        self.groups: dict[str, QGroupBox] = {}
        for title, names in GROUPS:
            box = QGroupBox(title)
            self.groups[title] = box
            form = QFormLayout(box)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            for name in names:
                w = self._make(name)
                lab = QLabel(SPEC[name][0])
                lab.setToolTip(SPEC[name][3])
                self.labels[name] = lab
                if name == "dt":
                    self.dt_limit = QLabel("≤ —")
                    self.dt_limit.setToolTip("Explicit stability limit dt_max = 2 / (m(2bΛ + KΛ²)), "
                                             "Λ = 4·dim/dx² (Euler and RK2)")
                    self.dt_limit.setMinimumWidth(92)
                    h = QHBoxLayout()
                    h.addWidget(w, 1)
                    h.addWidget(self.dt_limit)
                    form.addRow(lab, h)
                else:
                    form.addRow(lab, w)
            bl.addWidget(box)
        bl.addStretch(1)
        self._sync_multi_gpu()
        self._sync_threads()
        fit_combos(body)                 # no combo clips its entries ("RK2 midpoint (explicit, paper 000")
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        self.setMinimumWidth(370)

    # -------------------------------------------------------------- widgets
    def _make(self, name: str) -> QWidget:
        label, kind, opt, tip = SPEC[name]
        if kind == FLOAT:
            w = QDoubleSpinBox()
            w.setDecimals(opt["dec"])
            lo = opt["lo"] - (10 ** -opt["dec"] if opt.get("auto") else 0)
            w.setRange(lo, opt["hi"])
            w.setSingleStep(opt["step"])
            if opt.get("auto"):
                w.setSpecialValueText("auto")
            w.setKeyboardTracking(False)
            w.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType if name == "dt"
                          else QAbstractSpinBox.StepType.DefaultStepType)
            w.valueChanged.connect(lambda v, n=name: self.param_changed.emit(n, self._read(n)))
        elif kind == INT:
            w = QSpinBox()
            w.setRange(opt["lo"], opt["hi"])
            w.setSingleStep(opt["step"])
            w.setKeyboardTracking(False)
            if opt.get("special"):
                w.setSpecialValueText(opt["special"])
            w.valueChanged.connect(lambda v, n=name: self.param_changed.emit(n, self._read(n)))
        else:
            w = QComboBox()
            w.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            w.setMinimumContentsLength(14)
            for value, text in opt["items"]:
                w.addItem(text, value)
            w.currentIndexChanged.connect(lambda i, n=name: self.param_changed.emit(n, self._read(n)))
            if name == "variant":
                model = w.model()
                gpu = self.backend.is_gpu
                for i, v in enumerate(VARIANTS):
                    w.setItemText(i, variant_title(v, gpu))       # A–E on the CPU: "… (CUDA source run on the CPU)"
                    if not variant_runs(v, gpu):
                        model.item(i).setEnabled(False)
                        w.setItemData(i, "Compiled C++ on host cores: needs the CPU backend (start with "
                                      "--backend cpu); here the field lives on the GPU",
                                      Qt.ItemDataRole.ToolTipRole)
                    elif not gpu and v in GPU_VARIANTS:
                        w.setItemData(i, "No GPU here: this CUDA kernel's source runs on the CPU (host C++ "
                                      "compiler), the reference's numbers to rounding; a grid whose step would "
                                      "take over 30 s is refused, naming the limit", Qt.ItemDataRole.ToolTipRole)
                w.currentIndexChanged.connect(lambda i: self._sync_threads())
            if name == "exchange":
                for i, e in enumerate(EXCHANGES):
                    w.setItemData(i, EXCHANGE_TIPS[e], Qt.ItemDataRole.ToolTipRole)
                if not self.backend.is_gpu:
                    i = EXCHANGES.index("nccl")
                    w.model().item(i).setEnabled(False)
                    w.setItemData(i, EXCHANGE_TIPS["nccl"] + ". Not on the CPU: virtual GPUs exchange "
                                  "through host memory", Qt.ItemDataRole.ToolTipRole)
        if name == "gpus":
            w.setRange(1, self.offered_gpus)
            w.valueChanged.connect(lambda v: self._sync_multi_gpu())
        w.setToolTip(tip)
        self.widgets[name] = w
        # after param_changed: an edit the workspace refuses is shown back first and pushes nothing
        (w.currentIndexChanged if isinstance(w, QComboBox) else w.valueChanged).connect(
            lambda *_a, n=name: self.shown_changed.emit(n))
        undo.track(self, name, get=lambda n=name: self._read(n), set=lambda v, n=name: self.set_value(n, v),
                   changed=self.shown_changed, label=label, needs_reset=name not in LIVE)
        return w

    def _read(self, name: str):
        w = self.widgets[name]
        if isinstance(w, QComboBox):
            return w.currentData()
        if isinstance(w, QDoubleSpinBox):
            if SPEC[name][2].get("auto") and w.value() <= w.minimum():
                return None
            return float(w.value())
        return int(w.value())

    def value(self, name: str):
        return self._read(name)

    def set_value(self, name: str, value, emit: bool = True) -> None:
        """Set a control as if the user had edited it (emits param_changed when emit)."""
        w = self.widgets[name]
        if not emit:
            with undo.suspended(self):
                w.blockSignals(True)
                try:
                    self._show(w, value)
                finally:
                    w.blockSignals(False)
                self.shown_changed.emit(name)      # the undo tracker follows, pushing nothing
            return
        self._show(w, value)

    @staticmethod
    def _show(w, value) -> None:
        if isinstance(w, QComboBox):
            i = w.findData(value)
            if i >= 0:
                w.setCurrentIndex(i)
        elif isinstance(w, QDoubleSpinBox):
            w.setValue(w.minimum() if value is None else float(value))
        else:
            w.setValue(int(value))

    def set_params(self, p: CHParams) -> None:
        """Show ``p`` without emitting changes."""
        for name in SPEC:
            self.set_value(name, getattr(p, name), emit=False)
        self._sync_multi_gpu()
        self._sync_threads()

    #: variant-specific options and the variants they apply to
    VARIANT_OPTIONS = {"threads": ("cpu-threads",), "block_layout": ("A", "C"), "tile": ("B", "D"),
                       "steps_per_pass": ("E", "cpu-threads")}

    def _sync_threads(self) -> None:
        """CPU threads, thread layout, shared tile: enabled only with the variants they apply to."""
        v = self._read("variant")
        for name, variants in self.VARIANT_OPTIONS.items():
            on = v in variants
            self.widgets[name].setEnabled(on)
            self.labels[name].setEnabled(on)

    def _sync_multi_gpu(self) -> None:
        """GPUs: enabled when two or more are offered; exchange: only while GPUs > 1."""
        gpus, exch = self.widgets["gpus"], self.widgets["exchange"]
        if self.offered_gpus < 2:
            if self.backend.is_gpu:
                why = ("Multi-GPU needs two or more CUDA GPUs; this machine has one. (Set "
                       f"{VIRTUAL_ENV}=N and start on the CPU backend to see the decomposition "
                       "on N virtual GPUs.)")
            else:
                why = ("Multi-GPU needs two or more CUDA GPUs (running on CPU/NumPy). Start the app "
                       f"with {VIRTUAL_ENV}=N to demonstrate the slab decomposition and halo "
                       "exchange on N virtual GPUs on the CPU.")
            for name in ("gpus", "exchange"):
                self.widgets[name].setEnabled(False)
                self.widgets[name].setToolTip(why + "\n\n" + SPEC[name][3])
                self.labels[name].setToolTip(why)
            return
        where = (f"{self.offered_gpus} CUDA GPUs offered" if self.backend.is_gpu else
                 f"{self.offered_gpus} virtual GPUs on the CPU ({VIRTUAL_ENV})")
        gpus.setEnabled(True)
        gpus.setToolTip(SPEC["gpus"][3] + f" ({where})")
        multi = gpus.value() > 1
        exch.setEnabled(multi)
        exch.setToolTip(SPEC["exchange"][3] if multi else
                        "Choose 2 or more GPUs to pick the halo exchange.\n\n" + SPEC["exchange"][3])

    # ---------------------------------------------------------------- state
    ESSENTIAL_GROUP = GROUPS[0][0]      # the live model coefficients

    def set_essential(self, on: bool) -> None:
        """Lecture mode: only the run buttons and the model coefficients (all live)."""
        for title, box in self.groups.items():
            box.setVisible(not on or title == self.ESSENTIAL_GROUP)
        self.groups[self.ESSENTIAL_GROUP].setTitle("Model" if on else self.ESSENTIAL_GROUP)
        self.setMinimumWidth(0 if on else 370)

    # ---------------------------------------------------------------- state
    def set_running(self, running: bool) -> None:
        st = self.style()
        self.btn_run.setText("Pause" if running else "Start")
        self.btn_run.setIcon(st.standardIcon(QStyle.StandardPixmap.SP_MediaPause if running
                                             else QStyle.StandardPixmap.SP_MediaPlay))
        self.btn_step.setEnabled(not running)

    def set_pending(self, names) -> None:
        names = list(names)
        for n, lab in self.labels.items():
            lab.setStyleSheet(PENDING_STYLE if n in names else "")
            lab.setText(SPEC[n][0] + (" ⟳" if n in names else ""))
        if names:
            self.pending_label.setText("⟳ Needs reset to apply: " + ", ".join(names)
                                       + "  (press Reset, Ctrl+R)")
            self.btn_reset.setStyleSheet("font-weight: bold; color: #a15c00;")
        else:
            self.btn_reset.setStyleSheet("")
        self.pending_label.setVisible(bool(names))

    def set_dt_limit(self, dt: float, dt_max: float, integrator: str) -> None:
        if integrator == "spectral":
            self.dt_limit.setText(f"(≤ {dt_max:.4g} expl.)")
            self.dt_limit.setStyleSheet("color: gray;")
            self.widgets["dt"].setStyleSheet("")
            return
        self.dt_limit.setText(f"≤ {dt_max:.4g}")
        unstable = dt > dt_max
        self.dt_limit.setStyleSheet(WARN_STYLE if unstable else "color: #2e7d32;")
        self.widgets["dt"].setStyleSheet("QDoubleSpinBox { background: #ffd6d6; }" if unstable else "")
        self.dt_limit.setToolTip(
            ("dt exceeds the explicit stability limit: the run will blow up. " if unstable else "")
            + "Explicit stability limit dt_max = 2 / (m(2bΛ + KΛ²)), Λ = 4·dim/dx²")
