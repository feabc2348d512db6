"""The "Floyd–Warshall family (papers 002, 004)" tab: time the chosen FW versions over a list of n,
live on log–log axes with each version's share of the GPU's min-plus peak, and lay the runs out as
paper 002's Table II or paper 004's Tables 4.6–4.8 (compute in kernels.graphs.experiments.fw_sweep; the run /
cancel / end cycle is a composed explorer.sweep_runner.SweepRunner)."""
from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QLabel,
                             QLineEdit, QPushButton, QSpinBox, QTableWidget, QTableWidgetItem,
                             QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.graphs.experiments import fw_sweep as fs
from kernels.graphs.apsp.fw import HOST_LIMIT_S
from kernels.graphs.apsp.fw_core import fw_versions

from ..flow_layout import FlowLayout
from ..log_axis import log_axes
from ..sweep_runner import SweepRunner, forwards_to_runner

#: how a version whose CUDA source runs on the host device is labelled (issue 33)
EMULATED = "(CUDA source run on the CPU)"
ARITH_TIPS = {"float32": "float32 weights and sums (rounding: versions agree to float32 precision)",
              "int32": "int32 weights, exact (paper 004 used integer weights 1 … n − 1)",
              "dpx": "int32 through Hopper's fused add-min instruction __viaddmin_s32 (DPX) where a version has it"}
TABLES = ("runs", "Table II (paper 002)", "Table 4.6 (paper 004)", "Tables 4.7–4.8 (paper 004)")
PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207), (0, 0, 128), (128, 0, 0),
           (0, 128, 128), (128, 128, 0)]
SYMBOLS = "osdt+xph"
#: pixels of height the two plots (stacked) keep; the tab scrolls vertically below that
PLOTS_MIN_HEIGHT = 620


def parse_sizes(text: str) -> list[int]:
    try:
        return fs.check_sizes([int(s) for s in str(text).replace(";", ",").split(",") if s.strip()])
    except ValueError:
        raise InvalidParameter(f"sizes n must be whole numbers separated by commas (got {text!r})") from None


@forwards_to_runner
class FWFamilyPanel(QWidget):
    """Controls + two live plots (time vs n, % of min-plus peak vs n) + a table view + export; the run /
    cancel / export cycle is a composed :class:`explorer.sweep_runner.SweepRunner` (``runner``).

    ``state()`` / ``restore(dict)`` give the controls as a JSON-able dict (settings, sessions)."""

    EXPERIMENT = fs.TIMINGS

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.message = message
        self.gpu = bool(backend is not None and getattr(backend, "is_gpu", False))
        self.breakdown: dict | None = None
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message, experiment=self.EXPERIMENT,
                                  csv_name="fw_timings.csv", run_text="Run timings")
        lay = QVBoxLayout(self)
        form = QFormLayout()
        # check boxes, option pairs and buttons wrap onto more rows in a narrow dock (issue 32: at
        # 1440 × 900 the tab scrolled sideways and cut off its last button and second plot)
        versions = QWidget()
        grid = FlowLayout(versions)
        grid.setContentsMargins(0, 0, 0, 0)
        self.ck_versions = {}
        be = self.backend if self.gpu else None
        for i, (name, cls) in enumerate(fw_versions().items()):
            tip = cls.help
            if cls.emulated(be):                  # no GPU, no CPU implementation: its CUDA source on the CPU
                ck = QCheckBox(f"{cls.label} ({name}) {EMULATED}")
                tip += (f". Without a GPU its CUDA source is compiled for and run on the CPU (slower than a GPU; "
                        f"n ≤ {cls.host_limit()}, about {HOST_LIMIT_S:.0f} s)")
            else:
                ck = QCheckBox(f"{cls.label} ({name})")
            ck.setEnabled(cls.available(be))
            ck.setToolTip(tip)
            self.ck_versions[name] = ck
            grid.addWidget(ck)
        for name in self.default_versions():
            self.ck_versions[name].setChecked(True)
        form.addRow("versions", versions)
        self.ed_specs = QLineEdit()
        self.ed_specs.setPlaceholderText("more: e.g. fw-mm:tile=16,l=auto, fw-recursive:t_r=64")
        self.ed_specs.setToolTip("Extra versions with options, comma-separated as name:key=value,… — fw-mm / "
                                 "fw-2level: tile 16|32|64, l (≥ 1 or auto); fw-recursive: t_r 16|32|64; fw-fast: "
                                 "tile 64|128, cfg; fw-blocked: tile 32|64")
        form.addRow("specs", self.ed_specs)
        self.ed_sizes = QLineEdit(", ".join(str(n) for n in self.default_sizes()))
        self.ed_sizes.setToolTip(f"Sizes n (vertices), comma-separated whole numbers, {fs.MIN_N} … {fs.MAX_N}. One "
                                 "random graph per n (paper 004: m = 4n arcs, weights 1 … n − 1), shared by every "
                                 "version. Paper 002 used n = 2048; paper 004 n = 128 … 11264")
        form.addRow("sizes n", self.ed_sizes)
        runs = QWidget()
        nums = FlowLayout(runs)
        nums.setContentsMargins(0, 0, 0, 0)
        self.cb_arith = QComboBox()
        for a, tip in ARITH_TIPS.items():
            self.cb_arith.addItem(a)
            self.cb_arith.setItemData(self.cb_arith.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.cb_arith.setToolTip("Element type of the distance matrix (int32 / DPX: exact)")
        self.sp_repeats = QSpinBox(); self.sp_repeats.setRange(1, 100); self.sp_repeats.setValue(3)
        self.sp_repeats.setToolTip("Timed runs per point after one untimed run (paper 002's Table II: 10 runs)")
        self.sp_seed = QSpinBox(); self.sp_seed.setRange(0, 2**31 - 1); self.sp_seed.setValue(1)
        self.sp_seed.setToolTip("Random seed of the graphs")
        self.ck_pred = QCheckBox("predecessors")
        self.ck_pred.setToolTip("Also keep the predecessor matrix (path recording; slower kernels)")
        for text, w in (("arithmetic", self.cb_arith), ("repeats", self.sp_repeats), ("seed", self.sp_seed)):
            pair = QWidget()                      # a label stays with its field when the row wraps
            pl = QHBoxLayout(pair)
            pl.setContentsMargins(0, 0, 0, 0)
            lab = QLabel(text); lab.setToolTip(w.toolTip())
            pl.addWidget(lab)
            pl.addWidget(w)
            nums.addWidget(pair)
        nums.addWidget(self.ck_pred)
        self.ck_emulate = QCheckBox("CUDA kernels on the CPU")
        self.ck_emulate.setToolTip("Run every checked version's CUDA source on the CPU (host device), also the "
                                   "versions that have a CPU implementation — the GPU's algorithm, step for step, "
                                   "without a GPU (specs get emulate=1)")
        self.ck_emulate.setVisible(not self.gpu)
        nums.addWidget(self.ck_emulate)
        form.addRow("runs", runs)
        lay.addLayout(form)
        buttons = QWidget()
        row = FlowLayout(buttons)
        row.setContentsMargins(0, 0, 0, 0)
        self.bt_run.setToolTip("Time every chosen version at every n, off the GUI thread")
        self.bt_cancel.setToolTip("Stop after the run being timed")
        self.bt_t2 = QPushButton("Table II setup")
        self.bt_t2.setToolTip("Paper 002 Table II: V1, V3, V4, V5 at n = 2048, 10 runs each, int32 (without a GPU: "
                              f"n = {fs.HOST_TABLE_II_N}, 3 runs, V3–V5 {EMULATED})")
        self.bt_t2.clicked.connect(self.set_table_ii)
        self.bt_t46 = QPushButton("Table 4.6 setup")
        self.bt_t46.setToolTip("Paper 004 Table 4.6: MM-based and two-level t = 16, 32, 64, recursive t_R = 16, 32, 64, "
                               "n = 128 … 4096 (the CPU: n = 64 … 256)")
        self.bt_t46.clicked.connect(self.set_table_4_6)
        self.bt_t47 = QPushButton("Tables 4.7–4.8")
        self.bt_t47.setToolTip("Paper 004 Tables 4.7–4.8 on this GPU: per-kernel times of the MM-based and two-level "
                               "methods over one run at the largest n, and the non-pivot kernel's share of peak")
        self.bt_t47.setEnabled(self.gpu)
        self.bt_t47.clicked.connect(self.run_breakdown)
        self.bt_csv.setToolTip("Save every timed point (version, n, seconds, runs, % of peak, …) as CSV")
        self.bt_png.setToolTip("Save both plots as one PNG image")
        for b in (self.bt_run, self.bt_cancel, self.bt_t2, self.bt_t46, self.bt_t47, self.bt_csv, self.bt_png):
            row.addWidget(b)
        lay.addWidget(buttons)
        self.progress.setRange(0, 1); self.progress.setValue(0)
        self.progress.setFormat("%v / %m points")
        self.progress.setToolTip("Finished (n, version) points of the sweep")
        lay.addWidget(self.progress)
        peak, formula = fs.peak_updates(backend if self.gpu else None)
        self.lbl.setText("Min-plus peak: " + formula + ". Paper 002 Table II (GTX 960, n = 2048): V1 40.4 s, "
                         "V3 5.63 s, V4 3.21 s, V5 2.68 s.")
        self.lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.lbl.setToolTip("The fastest version per n and its share of peak; paper 002's steps; whether all versions "
                            "computed the same distances")
        lay.addWidget(self.lbl)
        self.plots = pg.GraphicsLayoutWidget()
        self.p_time = self.plots.addPlot(row=0, col=0, title="computation time vs n", axisItems=log_axes())
        self.p_peak = self.plots.addPlot(row=1, col=0, title="share of the min-plus peak (%)" if self.gpu else
                                         "updates per second (n³ / time)", axisItems={"bottom": log_axes()["bottom"]})
        for p, ylab in ((self.p_time, "seconds (mean of repeats)"),
                        (self.p_peak, "% of peak" if self.gpu else "updates / s")):
            p.setLogMode(x=True, y=p is self.p_time or not self.gpu)
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "n (vertices)")
            p.setLabel("left", ylab)
            p.getAxis("left").enableAutoSIPrefix(False)
        self.p_time.setToolTip("Mean computation time of each version against n, log–log (matrix on the device, "
                               "no copies)")
        self.p_peak.setToolTip("n³ updates / time over the min-plus peak (" + formula + ")")
        self.legend = pg.LegendItem(labelTextSize="8pt", verSpacing=-6, colCount=4)
        self.plots.addItem(self.legend, row=2, col=0)
        self.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)          # the two plots one above the other
        self.curves: dict[str, pg.PlotDataItem] = {}
        lay.addWidget(self.plots, 1)
        trow = QHBoxLayout()
        self.cb_table = QComboBox(); self.cb_table.addItems(TABLES)
        self.cb_table.setToolTip("Lay the timed runs out as a list, paper 002's Table II or paper 004's Tables 4.6–4.8 "
                                 "(ours beside the papers' values)")
        self.cb_table.currentIndexChanged.connect(lambda _i: self._fill_table())
        lab = QLabel("table"); lab.setToolTip(self.cb_table.toolTip())
        trow.addWidget(lab)
        trow.addWidget(self.cb_table)
        trow.addStretch(1)
        lay.addLayout(trow)
        self.table = QTableWidget(0, 0)
        self.table.setToolTip("The selected layout; paper values in parentheses")
        self.table.setMaximumHeight(220)
        lay.addWidget(self.table)

    # ------------------------------------------------------------ parameters
    def default_versions(self) -> list[str]:
        return fs.default_specs(self.backend if self.gpu else None)

    def default_sizes(self) -> list[int]:
        return fs.default_sizes(self.backend if self.gpu else None)

    def specs(self) -> list[str]:
        """Checked versions, then the extra specs; InvalidParameter on a malformed one."""
        out = [n for n, ck in self.ck_versions.items() if ck.isChecked() and ck.isEnabled()]
        if not self.gpu and self.ck_emulate.isChecked():
            fam = fw_versions()
            out = [f"{n}:emulate=1" if (fam[n].cpu and fam[n].gpu and fam[n].host) else n for n in out]
        extra = [s.strip() for s in self.ed_specs.text().split(",")]
        merged, cur = [], None
        for part in extra:                       # "fw-mm:tile=16,l=auto" splits at its option commas
            if not part:
                continue
            if ":" in part or part in fw_versions() or cur is None:
                cur = part
                merged.append(cur)
            else:
                merged[-1] = merged[-1] + "," + part
        for s in merged:
            fs.parse_spec(s)
        return out + merged

    def _setup(self, key: str, table: int, sizes=None):
        specs, paper_sizes, reps, arith = fs.table_setup(key, self.backend if self.gpu else None)
        for name, ck in self.ck_versions.items():
            ck.setChecked(ck.isEnabled() and name in specs)
        self.ed_specs.setText(", ".join(s for s in specs if s not in self.ck_versions))
        self.ed_sizes.setText(", ".join(str(n) for n in (sizes or paper_sizes)))
        self.sp_repeats.setValue(reps)
        self.cb_arith.setCurrentText(arith)
        self.cb_table.setCurrentIndex(table)

    def set_table_ii(self):
        self._setup("ii", 1)

    def set_table_4_6(self):
        self._setup("4.6", 2, None if self.gpu else (64, 128, 256))

    def state(self) -> dict:
        return {"versions": [n for n, ck in self.ck_versions.items() if ck.isChecked()], "specs": self.ed_specs.text(),
                "sizes": self.ed_sizes.text(), "arith": self.cb_arith.currentText(),
                "repeats": self.sp_repeats.value(), "seed": self.sp_seed.value(), "pred": self.ck_pred.isChecked(),
                "table": self.cb_table.currentIndex(), "emulate": self.ck_emulate.isChecked()}

    def restore(self, state) -> None:
        """Controls from ``state()``'s dict; unknown or malformed entries are skipped (versions that
        cannot run here stay off)."""
        if not isinstance(state, dict):
            return
        if isinstance(state.get("versions"), list):
            for n, ck in self.ck_versions.items():
                ck.setChecked(ck.isEnabled() and n in state["versions"])
        for key, ed in (("specs", self.ed_specs), ("sizes", self.ed_sizes)):
            if isinstance(state.get(key), str):
                ed.setText(state[key])
        if state.get("arith") in ARITH_TIPS:
            self.cb_arith.setCurrentText(state["arith"])
        for key, sp in (("repeats", self.sp_repeats), ("seed", self.sp_seed)):
            v = state.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and sp.minimum() <= v <= sp.maximum():
                sp.setValue(int(v))
        if isinstance(state.get("pred"), bool):
            self.ck_pred.setChecked(state["pred"])
        if isinstance(state.get("emulate"), bool):
            self.ck_emulate.setChecked(state["emulate"])
        t = state.get("table")
        if isinstance(t, int) and not isinstance(t, bool) and 0 <= t < len(TABLES):
            self.cb_table.setCurrentIndex(t)

    # ---------------------------------------------------------------- running
    def run(self) -> bool:
        if self.job is not None:
            return False
        try:
            sizes = parse_sizes(self.ed_sizes.text())
            specs = fs.check_specs(self.specs(), self.backend if self.gpu else None, sizes)
        except InvalidParameter as exc:
            self.runner.say(str(exc))
            return False
        arith, reps, seed, pred = (self.cb_arith.currentText(), self.sp_repeats.value(), self.sp_seed.value(),
                                   self.ck_pred.isChecked())
        be = self.backend if self.gpu else None
        self.rows = []
        self._redraw()
        self.lbl.setText("Timing …")
        self.runner.start("Floyd–Warshall timings", lambda cancelled: fs.run_sweep(
            specs, sizes, be, arith, reps, seed, pred, cancelled), len(sizes) * len(specs), on_item=self._on_item)
        return True

    def run_breakdown(self) -> bool:
        """Tables 4.7–4.8 at the largest n of the sizes field (GPU)."""
        if self.job is not None or not self.gpu:
            return False
        try:
            n = max(parse_sizes(self.ed_sizes.text()))
        except InvalidParameter as exc:
            self.runner.say(str(exc))
            return False
        self.cb_table.setCurrentIndex(3)
        self.lbl.setText(f"Timing the MM-based and two-level kernels at n = {n} …")
        self.runner.start("Tables 4.7–4.8", lambda cancelled: iter([fs.kernel_breakdown(self.backend, n, "int32")]),
                          1, on_item=self._on_item)
        return True

    def _on_item(self, r):
        """A timed row (the runner's :meth:`SweepRunner.on_row`), or the kernel breakdown (a dict) that
        ends a breakdown run."""
        if isinstance(r, dict):
            self.breakdown = r
            self.lbl.setText(self._summary())
        else:
            self.runner.on_row(r)
        self._fill_table()

    # --------------------------------------------------------------- summary
    def _summary(self) -> str:
        if not self.rows:
            return "Kernel times per thesis Tables 4.7–4.8 below." if self.breakdown else "No points timed."
        return "\n".join(fs.summary_lines(self.rows))

    # --------------------------------------------------------------- plotting
    def _redraw(self):
        for p in (self.p_time, self.p_peak):
            p.clear()
        self.legend.clear()
        self.curves = {}
        specs = list(dict.fromkeys(r.spec for r in self.rows))
        for i, s in enumerate(specs):
            rs = sorted((r for r in self.rows if r.spec == s), key=lambda r: r.n)
            col, sym = PALETTE[i % len(PALETTE)], SYMBOLS[i % len(SYMBOLS)]
            pen = pg.mkPen(col, width=2)
            self.curves[s] = self.p_time.plot([r.n for r in rs], [r.seconds for r in rs], pen=pen, symbol=sym,
                                              symbolSize=7, symbolBrush=col, symbolPen=None)
            y = [r.pct_peak for r in rs] if self.gpu else [r.updates_per_s for r in rs]
            if all(v is not None for v in y):
                self.p_peak.plot([r.n for r in rs], y, pen=pen, symbol=sym, symbolSize=7, symbolBrush=col,
                                 symbolPen=None)
            self.legend.addItem(self.curves[s], rs[0].label)

    def _fill_table(self):
        mode = self.cb_table.currentIndex()
        if mode == 1:
            t2 = fs.table_ii(self.rows)
            head = ["version", "paper (s)", "ours (s)", "our runs"]
            body = [[f"{v['header']} ({k})", f"{v['paper_mean']:.3f}", "" if v["ours_mean"] is None else
                     f"{v['ours_mean']:.4g}", "" if v["ours"] is None else ", ".join(f"{x:.4g}" for x in v["ours"])]
                    for k, v in t2["versions"].items()]
            body += [[f"step {k}", f"−{v['paper_claim']} %", "" if v["ours"] is None else f"−{v['ours']:.1f} %", ""]
                     for k, v in t2["steps"].items()]
        elif mode == 2:
            head = ["n"] + list(fs.THESIS_HEADERS)
            body = [[str(r["n"])] + [("" if o is None else f"{o:.4g}") + ("" if p is None else f" ({p:g})")
                                     for o, p in zip(r["ours_ms"], r["paper_ms"])] for r in fs.table_4_6(self.rows)]
        elif mode == 3:
            br = self.breakdown or {}
            head = ["kernel (ms)"] + list(br)
            keys = ("pivot", "pivot row+column", "non-pivot")
            body = [[k] + [f"{v[k] * 1e3:.3g} ({p:g})" for v, p in zip(br.values(), fs.THESIS_TABLE_4_7[k])]
                    for k in keys] if br else []
            if br:
                body.append(["non-pivot % of peak (thesis IPC)"] + [
                    f"{v['nonpivot_pct_peak']:.1f} % ({p:g})" for v, p in zip(br.values(), fs.THESIS_TABLE_4_8)])
        else:
            head = ["version", "n", "arith", "ms", "± ms", "% peak", "launches", "same", "parameters"]
            body = [[r.label, str(r.n), r.arith, f"{r.seconds * 1e3:.4g}", f"{r.std * 1e3:.2g}",
                     "" if r.pct_peak is None else f"{r.pct_peak:.1f}", str(r.launches), str(r.agrees), r.params]
                    for r in self.rows]
        self.table.clear()
        self.table.setColumnCount(len(head))
        self.table.setRowCount(len(body))
        self.table.setHorizontalHeaderLabels(head)
        for i, line in enumerate(body):
            for j, text in enumerate(line):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    # ----------------------------------------------------------------- export

    def export_plots(self, path=None):
        return self.runner.export_widget(path, "fw_timings.png", self.plots, "Floyd–Warshall family timings")

