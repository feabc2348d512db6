"""The Occupancy workspace: NVIDIA-style occupancy calculator, the app's own kernels (the *My kernels*
tab, :mod:`.kernels_tab`), the papers' choosers.

Views only: every number comes from ``kernels.occupancy`` (calculator, per-CC tables, paper 000 /
003 / 004 models) and, on a GPU, ``kernels.occupancy.gpu`` (real kernels, the driver's answer).
Other systems' kernels are reached through the launch registry alone (:mod:`kernels.launches`).
"""
from __future__ import annotations

import csv

import numpy as np
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QColor, QFont
from PyQt6.QtWidgets import (QComboBox, QFileDialog, QFormLayout,
                             QGroupBox, QHBoxLayout, QHeaderView, QLabel, QMainWindow, QPushButton,
                             QSpinBox, QTableWidget, QTabWidget, QVBoxLayout, QWidget)

from kernels import launches
from kernels.errors import ExplorerError
from kernels.gpu.occupancy import kernel_resources
from kernels.occupancy import choosers
from kernels.occupancy.calculator import LABELS, RESOURCES, curve, default_axis, max_potential_block_size, occupancy
from kernels.occupancy.gpu import device_spec
from kernels.occupancy.specs import get_spec, known_ccs

from .. import undo
from ..export import Figure, guarded, save_figure, write_file
from ..theme import LECTURE_PT
from ..widgets import MessageBar, add_dock, fit_combos
from ..workspace_api import Workspace
from .case_study import CaseStudyWidget
from .charts import AXES, OccupancyCharts
from .kernels_tab import DEVICE, FittedTable, KernelsTab, plural, table_item

LIMITER_BG = QColor("#ffe08a")
#: the charts' minimum height (px), and in lecture mode, where the table's rows take more
CHARTS_H, LECTURE_CHARTS_H = 240, 200


class OccupancyWorkspace(Workspace, QMainWindow):
    """Workspace widget: inputs dock on the left; calculator, my kernels and papers as tabs."""

    CAPABILITIES = frozenset({"export_plots", "set_controls_visible", "apply_preset", "figures", "sessions",
                              "user_presets"})

    status_changed = pyqtSignal(dict)

    def __init__(self, backend, parent=None, cc: str | None = None):
        super().__init__(parent)
        self.setWindowFlags(Qt.WindowType.Widget)
        self.backend = backend
        self.result = None
        self.preset: dict | None = None
        self._lecture = False
        self._device_spec = None
        if backend.is_gpu:
            try:
                self._device_spec = device_spec()
            except ExplorerError:
                self._device_spec = None

        # ---------------------------------------------------------------- inputs dock
        dock_w = QWidget()
        form = QFormLayout(dock_w)
        self.cc = QComboBox()
        if self._device_spec is not None:
            self.cc.addItem(f"This GPU — {self._device_spec.examples} (CC {self._device_spec.cc})", DEVICE)
        for c in known_ccs():
            s = get_spec(c)
            self.cc.addItem(f"{c} — {s.arch}", c)
            self.cc.setItemData(self.cc.count() - 1, f"e.g. {s.examples}", Qt.ItemDataRole.ToolTipRole)
        self.cc.setToolTip("Compute capability: selects the per-SM limits (warps, blocks, registers, shared "
                           "memory) and allocation granularities from NVIDIA's tables")
        self.threads = QSpinBox()
        self.threads.setToolTip("Threads per block (blockDim.x·y·z). Warps are allocated whole: a block of "
                                "100 threads takes 4 warps")
        self.regs = QSpinBox()
        self.regs.setToolTip("Registers per thread as the compiler reports them (ptxas -v, "
                             "cudaFuncAttributes::numRegs); allocated per warp in units of 256 (CC ≥ 2) or "
                             "per block (CC 1.x)")
        self.smem_static = QSpinBox()
        self.smem_static.setSuffix(" B")
        self.smem_static.setSingleStep(128)
        self.smem_static.setToolTip("Static shared memory per block (__shared__ arrays), bytes; at most 48 KB")
        self.smem_dyn = QSpinBox()
        self.smem_dyn.setSuffix(" B")
        self.smem_dyn.setSingleStep(1024)
        self.smem_dyn.setToolTip("Dynamic shared memory per block (the third <<<…>>> argument), bytes. "
                                 "From CC 8.0 the driver adds 1 KB per block")
        self.carveout = QSpinBox()
        self.carveout.setRange(-1, 100)
        self.carveout.setValue(-1)
        self.carveout.setSpecialValueText("driver default")
        self.carveout.setSuffix(" %")
        self.carveout.setToolTip("Preferred shared-memory carve-out (cudaFuncAttributePreferredSharedMemory"
                                 "Carveout), percent of the maximum; rounded up to a supported size. "
                                 "CC ≥ 7.0 (and the L1/shared split of 2.x/3.x)")
        self._form = form
        form.addRow("Compute capability", self.cc)
        form.addRow("Threads per block", self.threads)
        form.addRow("Registers per thread", self.regs)
        form.addRow("Static shared memory", self.smem_static)
        form.addRow("Dynamic shared memory", self.smem_dyn)
        form.addRow("Shared-memory carve-out", self.carveout)
        self.suggest = QLabel()
        self.suggest.setWordWrap(True)
        self.suggest.setToolTip("Block-size choosers for the current registers and shared memory: "
                                "cudaOccupancyMaxPotentialBlockSize's rule, and paper 000's maxOccupancy "
                                "(Listing 1, written for CC 1.x)")
        form.addRow(self.suggest)
        bl = QHBoxLayout()
        self.btn_csv = QPushButton("Export table…")
        self.btn_csv.setToolTip("Save the results table and the three curves as CSV")
        self.btn_csv.clicked.connect(lambda: self.export_table())
        self.btn_png = QPushButton("Export charts…")
        self.btn_png.setToolTip("Save the three charts as PNG or SVG")
        self.btn_png.clicked.connect(lambda: self.export_plots())
        bl.addWidget(self.btn_csv)
        bl.addWidget(self.btn_png)
        form.addRow(bl)
        self._export_row = bl
        fit_combos(dock_w)               # "This GPU — <name> (CC x.y)" not clipped
        self.controls_dock = add_dock(self, "Launch configuration", "occ_controls", dock_w, "left")

        # ---------------------------------------------------------------- central tabs
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(4, 4, 4, 0)
        self.message_bar = MessageBar()
        cl.addWidget(self.message_bar)
        self.tabs = QTabWidget()
        cl.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        calc = QWidget()
        v = QVBoxLayout(calc)
        self.summary = QLabel()
        f = QFont()
        f.setPointSize(f.pointSize() + 3)
        f.setBold(True)
        self.summary.setFont(f)
        self._summary_font = QFont(f)
        self.summary.setWordWrap(True)
        v.addWidget(self.summary)
        self.table = FittedTable(0, 2)
        self.table.setHorizontalHeaderLabels(["quantity", "value"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setToolTip("Per-resource block limits; the highlighted rows limit occupancy")
        v.addWidget(self.table)
        self.charts = OccupancyCharts()
        self.charts.report = self._report_cursor
        self.charts.setMinimumHeight(CHARTS_H)
        v.addWidget(self.charts, 1)
        self.tabs.addTab(calc, "Calculator")
        self.kernels_tab = KernelsTab(self._device_spec, getattr(backend, "notice", ""))
        self.kernels_tab.kernel_chosen.connect(self._load_kernel)
        self.kernels_tab.message.connect(self.message_bar.show_message)
        self.measure_plot = self.kernels_tab.measure_plot
        self.tabs.addTab(self.kernels_tab, "My kernels")
        self.tabs.addTab(self._build_papers_tab(), "Papers' choosers")
        self.case_study = CaseStudyWidget(backend)
        self.case_study.report = self._report_cursor
        self.tabs.addTab(self.case_study, "Case study (paper 003)")

        self._apply_cc_ranges(initial=True)
        idx = self.cc.findData(cc) if cc else (0 if self._device_spec is None else self.cc.findData(DEVICE))
        if cc is None and self._device_spec is None:
            idx = self.cc.findData("9.0")
        self.cc.setCurrentIndex(max(idx, 0))
        self.threads.setValue(256)
        self.regs.setValue(32)
        for w in (self.threads, self.regs, self.smem_static, self.smem_dyn, self.carveout):
            w.valueChanged.connect(self.recompute)
        self.cc.currentIndexChanged.connect(self._on_cc)
        self._on_cc()
        for w, key in ((self.cc, "compute capability"), (self.threads, "threads per block"),
                       (self.regs, "registers per thread"), (self.smem_static, "static shared memory"),
                       (self.smem_dyn, "dynamic shared memory"), (self.carveout, "carve-out")):
            undo.track(w, key, label=key)     # Edit ▸ Undo (cc by its index)

    # ------------------------------------------------------------------------ inputs
    def spec(self):
        key = self.cc.currentData()
        return self._device_spec if key == DEVICE else get_spec(key)

    def _apply_cc_ranges(self, initial: bool = False) -> None:
        s = self.spec() if not initial else get_spec("9.0")
        for w, top in ((self.threads, s.max_threads_per_block), (self.regs, s.max_regs_per_thread),
                       (self.smem_static, s.max_smem_per_block), (self.smem_dyn, s.max_smem_per_block_optin)):
            was = w.blockSignals(True)      # keep set_inputs' blocking (one recompute, no undo entries)
            w.setRange(0 if w is not self.threads else 1, top)
            w.blockSignals(was)
        self.threads.setSingleStep(s.warp_size)

    def _on_cc(self, *_):
        self._apply_cc_ranges()
        for w in (self.threads, self.regs, self.smem_static, self.smem_dyn):
            undo.resync(w)       # a clamp to the new CC's limits is no undo step of its own
        self.recompute()

    def _load_kernel(self, r: dict) -> None:
        """A kernel chosen in *My kernels*: its launch block, registers and shared memory as inputs."""
        self.set_inputs(cc=DEVICE, threads=r["block"], regs=r["registers"], smem_static=r["static_smem"],
                        smem_dynamic=r.get("dynamic_smem", 0))
        self.message_bar.show_message(f"Loaded {r['name']} into the calculator", "info")

    def _report_cursor(self, text: str) -> None:
        if text != getattr(self, "_cursor_text", None):
            self._cursor_text = text
            self.status_changed.emit({"cursor": text})

    def set_inputs(self, cc=None, threads=None, regs=None, smem_static=None, smem_dynamic=None, carveout=None):
        """Set several inputs at once (one recompute)."""
        widgets = (self.cc, self.threads, self.regs, self.smem_static, self.smem_dyn, self.carveout)
        for w in widgets:
            w.blockSignals(True)
        try:
            if cc is not None:
                self.cc.setCurrentIndex(self.cc.findData(cc if cc == DEVICE else get_spec(cc).cc))
                self._apply_cc_ranges()
            for w, val in ((self.threads, threads), (self.regs, regs), (self.smem_static, smem_static),
                           (self.smem_dyn, smem_dynamic), (self.carveout, carveout)):
                if val is not None:
                    w.setValue(int(val))
        finally:
            for w in widgets:
                w.blockSignals(False)
        self.recompute()
        undo.resync(self)        # the inputs were set with their signals blocked

    def inputs(self) -> dict:
        c = self.carveout.value()
        return dict(threads_per_block=self.threads.value(), regs_per_thread=self.regs.value(),
                    smem_static=self.smem_static.value(), smem_dynamic=self.smem_dyn.value(),
                    carveout=None if c < 0 else c)

    # ----------------------------------------------------------------------- compute
    def recompute(self, *_):
        spec, inp = self.spec(), self.inputs()
        try:
            self.result = occupancy(spec, **inp)
            if self.message_bar.level == "error":
                self.message_bar.hide()
        except ExplorerError as exc:
            self.result = occupancy(spec, **inp, strict=False)
            self.message_bar.show_message(f"This launch cannot run on CC {spec.cc}: {exc}", "error")
        r = self.result
        self.summary.setText(f"Occupancy {r.occupancy:.0%} — {r.active_warps_per_sm} of {r.max_warps_per_sm} "
                             f"warps, {plural(r.active_blocks_per_sm, 'block')} per SM — limited by "
                             f"{', '.join(LABELS[x] for x in r.limiters) or '—'}")
        self._fill_table(spec, r)
        self._update_charts(spec, inp, r)
        self._update_suggestions(spec, inp)
        self.status_changed.emit({"info": f"occupancy {r.occupancy:.0%} ({r.active_warps_per_sm}/{r.max_warps_per_sm} warps per SM)"})

    def _fill_table(self, spec, r) -> None:
        rows = [("Active blocks per SM", r.active_blocks_per_sm, "", False),
                ("Active warps per SM", f"{r.active_warps_per_sm} of {r.max_warps_per_sm}", "", False),
                ("Active threads per SM", r.active_threads_per_sm, "", False),
                ("Occupancy", f"{r.occupancy:.1%}", "active warps / maximum warps per SM", True)]
        for key in RESOURCES:
            lim = r.limits[key]
            tip = {"warps": f"floor({spec.max_warps_per_sm} warps per SM / {r.warps_per_block} warps per block)",
                   "blocks": "the hardware's maximum resident blocks per SM",
                   "registers": f"{r.regs_per_block} registers allocated per block of {spec.regs_per_sm} per SM",
                   "shared_memory": f"{r.smem_per_block} B allocated per block of {r.smem_per_sm} B per SM"}[key]
            rows.append((f"Blocks limited by {LABELS[key]}", "no limit" if lim is None else lim, tip,
                         key in r.limiters))
        rows += [("Warps per block", r.warps_per_block, "", False),
                 ("Registers allocated per block", r.regs_per_block,
                  f"unit {spec.reg_alloc_unit}, per {spec.reg_alloc_granularity}", False),
                 ("Shared memory allocated per block", f"{r.smem_per_block} B",
                  f"unit {spec.smem_alloc_unit} B, incl. {spec.reserved_smem_per_block} B reserved", False),
                 ("Shared memory per SM (configuration)", f"{r.smem_per_sm} B", "", False)]
        self.table.setRowCount(len(rows))
        self._limiter_rows = []
        for i, (name, val, tip, hi) in enumerate(rows):
            is_lim = name.startswith("Blocks limited") and hi
            bg = LIMITER_BG if is_lim else None
            if is_lim:
                self._limiter_rows.append(i)
            self.table.setItem(i, 0, table_item(name, tip, bold=hi, bg=bg))
            self.table.setItem(i, 1, table_item(val, tip, bold=hi, bg=bg))

    def _update_charts(self, spec, inp, r) -> None:
        cur = {"threads": inp["threads_per_block"], "regs": inp["regs_per_thread"],
               "smem": inp["smem_static"] + inp["smem_dynamic"]}
        for key, _title, _unit in AXES:
            xs = default_axis(spec, key)
            ys = curve(spec, key, xs, inp["threads_per_block"], inp["regs_per_thread"], inp["smem_static"],
                       inp["smem_dynamic"], inp["carveout"])
            self.charts.set_data(key, xs, ys, cur[key], r.occupancy)

    def _update_suggestions(self, spec, inp) -> None:
        b, nb = max_potential_block_size(spec, inp["regs_per_thread"], inp["smem_static"],
                                         inp["smem_dynamic"], carveout=inp["carveout"])
        txt = (f"Best block size (cudaOccupancyMaxPotentialBlockSize): <b>{b}</b> threads, "
               f"{plural(nb, 'block')}/SM"
               if b else "No block size can launch with these registers / shared memory.")
        if spec.major == 1:
            b0 = choosers.max_occupancy_000(spec.cc, inp["regs_per_thread"], 0,
                                            inp["smem_static"] + inp["smem_dynamic"])
            txt += f"<br>Paper 000's maxOccupancy (Listing 1): <b>{b0}</b> threads"
        else:
            txt += "<br>Paper 000's maxOccupancy (Listing 1) is written for CC 1.x; pick a 1.x CC to compare."
        self.suggest.setText(txt)

    # ------------------------------------------------------------------ papers' tab
    def _build_papers_tab(self) -> QWidget:
        w = QWidget()
        v = QVBoxLayout(w)
        g = QGroupBox("Paper 004 (Okuyama 2013) §4.4 vs the thesis's Table 4.5")
        gl = QVBoxLayout(g)
        intro = QLabel("Auto-tuned l of the MM-based blocked Floyd–Warshall (GTX 280, Eqs. 4.4–4.10, "
                       "Y from this calculator)")
        intro.setWordWrap(True)            # a long group title would set a minimum width (lecture fonts)
        gl.addWidget(intro)
        t = QTableWidget(len(choosers.TABLE_4_5_MM), 4)
        t.setHorizontalHeaderLabels(["n", "t = 16 (model / thesis)", "t = 32", "t = 64"])
        t.verticalHeader().setVisible(False)
        self.table45_matches = 0
        for i, (n, row) in enumerate(choosers.TABLE_4_5_MM.items()):
            t.setItem(i, 0, table_item(n))
            for j, tt in enumerate((16, 32, 64)):
                got = choosers.bfw_autotune(n, tt)
                ok = got == row[j]
                self.table45_matches += ok
                t.setItem(i, j + 1, table_item(f"{got} / {row[j]}", bg=None if ok else QColor("#fde7e9")))
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        gl.addWidget(t)
        ys = ", ".join(f"{m} t={tt}: Y={choosers.bfw_warps_per_sm(tt, '1.3', m)}" for m, tt in choosers.TABLE_4_4)
        t44 = QLabel(f"Table 4.4 Y (GT200, from the calculator): {ys}")
        t44.setWordWrap(True)
        gl.addWidget(t44)
        v.addWidget(g, 2)
        m = choosers.paper003_occupancy(28, 28 * 16, 1024)
        lab = QLabel(
            "<b>Paper 003 (Solano-Quinde et al. 2011)</b>: one triangle cell (k = 10, 28 solution points) per "
            f"block on a Tesla T10 → {m['warps_per_block']} warp per block, at most 8 blocks per SM → "
            f"{m['active_warps']} of 32 warps = <b>{m['occupancy']:.0%}</b> occupancy (Eqs. 2–4). Packing "
            "several cells per block raises it — try CC 1.3, 28 vs 224 threads in the calculator.<br>"
            "<b>Paper 000 (Leist et al. 2009)</b>, Listing 1 <i>maxOccupancy</i>: shown in the left dock for "
            "CC 1.x inputs.")
        lab.setWordWrap(True)
        v.addWidget(lab)
        v.addStretch(1)
        return w

    # ------------------------------------------------------------------------ export
    def _ask_path(self, title, filt, default):
        path, _ = QFileDialog.getSaveFileName(self, title, default, filt)
        return path or None

    MENU_TEXT = {"export_plots": "Export &charts…"}

    def extra_actions(self):
        return [("Export results &table (CSV)…", "export_table", "Ctrl+Shift+T",
                 "Save the calculator's results table as CSV")]

    def _written(self, what: str, fn, ok_text: str):
        out = guarded(lambda m: self.message_bar.show_message(m, "error"), what, fn)
        if out is not None:            # the status bar: the message bar would re-lay out the charts
            if self.message_bar.level == "info":
                self.message_bar.hide()
            self.status_changed.emit({"message": ok_text.format(out)})
        return out

    def export_table(self, path=None):
        """The results table, the inputs and the three curves as CSV; the path written."""
        path = path or self._ask_path("Export table", "CSV (*.csv)", "occupancy.csv")
        if not path:
            return None
        r, spec = self.result, self.spec()
        rows = [["section", "quantity", "value"], ["input", "compute capability", spec.cc]]
        rows += [["input", k, "" if val is None else val] for k, val in self.inputs().items()]
        rows += [["result", self.table.item(i, 0).text(), self.table.item(i, 1).text()]
                 for i in range(self.table.rowCount())]
        rows.append(["result", "limiter", r.limiter])
        for key, _t, _u in AXES:
            xs, ys, _pt = self.charts.data(key)
            rows += [[f"curve_{key}", x, f"{y:.4f}"] for x, y in zip(xs, ys)]

        def write(tmp):
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                csv.writer(fh).writerows(rows)
        return self._written(f"write {path}", lambda: write_file(path, (".csv",), write, "CSV file"),
                             "Exported the table and curves to {}")

    def export_plots(self, path=None):
        """The three charts as PNG (at least 1600 px wide) or SVG; the path written."""
        path = path or self._ask_path("Export charts", "PNG image (*.png);;SVG vector (*.svg)", "occupancy.png")
        if not path:
            return None
        w = self.charts.layout_widget
        return self._written(f"write {path}", lambda: save_figure(
            Figure("Occupancy charts", widget=w), path, width=max(1600, 2 * w.width())),
            "Exported the charts to {}")

    # ------------------------------------------------------------------ presets
    PRESET_KEYS = {"cc": "cc", "threads": "threads", "regs": "regs", "smem_static": "smem_static",
                   "smem_dynamic": "smem_dynamic", "carveout": "carveout"}

    def apply_preset(self, preset: dict) -> None:
        """Inputs from ``preset["params"]`` (cc, threads, regs, smem_static, smem_dynamic, carveout;
        tab: the tab to show; kernel: on a GPU, take threads, registers and shared memory from the
        kernel the launch registry provides under that key, compiled for this GPU —
        :func:`kernels.launches.resolve`).  Unset inputs return to 0 / the driver default."""
        prm = dict(preset["params"])
        if prm.get("kernel") and self._device_spec is not None:   # a GPU: the compiled kernel's own resources
            try:
                ln = launches.resolve(prm["kernel"])
                res = kernel_resources(ln.kernel)
                prm.update(cc=DEVICE, threads=ln.block, regs=res["registers"], smem_static=res["static_smem"])
            except (ExplorerError, KeyError, RuntimeError):
                pass                                               # keep the documented values
        cc = prm.get("cc", "9.0")
        if cc == DEVICE and self._device_spec is None:
            cc = "9.0"
        if cc != DEVICE:
            get_spec(cc)                         # unknown CC: raises before anything changes
        self.preset = preset
        self.set_inputs(cc=cc, threads=prm.get("threads", 256), regs=prm.get("regs", 32),
                        smem_static=prm.get("smem_static", 0), smem_dynamic=prm.get("smem_dynamic", 0),
                        carveout=prm.get("carveout", -1))
        self.tabs.setCurrentIndex(int(prm.get("tab", 0)))

    def preset_params(self) -> dict:
        """The inputs as a preset's params (:meth:`apply_preset` restores them; Presets ▸ Save current)."""
        i = self.inputs()
        return {"cc": self.cc.currentData(), "threads": i["threads_per_block"], "regs": i["regs_per_thread"],
                "smem_static": i["smem_static"], "smem_dynamic": i["smem_dynamic"],
                "carveout": -1 if i["carveout"] is None else i["carveout"], "tab": self.tabs.currentIndex()}

    # ----------------------------------------------------- caption / lecture
    def caption(self) -> str:
        lead = f"{self.preset['name']}: " if self.preset else ""
        paper = (f"paper {self.preset['paper']}" if self.preset
                 else "papers 003 (Solano-Quinde et al. 2011), 004 §4.4 (Okuyama 2013)")
        r, spec = self.result, self.spec()
        lim = ", ".join(LABELS[x] for x in r.limiters) or "—"
        return (f"{lead}CUDA occupancy on CC {spec.cc} ({spec.arch}): {r.occupancy:.0%}, "
                f"limited by {lim} — {paper}")

    def parameter_summary(self) -> str:
        i = self.inputs()
        return (f"CC {self.spec().cc}, {i['threads_per_block']} threads/block, {i['regs_per_thread']} registers/thread, "
                f"shared memory {i['smem_static']} B static + {i['smem_dynamic']} B dynamic, carve-out "
                f"{'driver default' if i['carveout'] is None else str(i['carveout']) + ' %'}")

    def set_lecture_mode(self, on: bool) -> None:
        self._lecture = bool(on)
        for w in (self.smem_static, self.carveout):
            self._form.setRowVisible(w, not on)
        # labels above the fields: large fonts must still fit a 1600-px-wide projector
        self._form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows if on
                                    else QFormLayout.RowWrapPolicy.DontWrapRows)
        for b in (self.btn_csv, self.btn_png):
            b.setVisible(not on)
        self.charts.set_lecture(on)
        f = QFont(self._summary_font)
        if on:                             # its own font: three points above the lecture size
            f.setPointSizeF(LECTURE_PT + 3)
        self.summary.setFont(f)
        self.charts.setMinimumHeight(LECTURE_CHARTS_H if on else CHARTS_H)

    # --------------------------------------------------------------- sessions
    def session_state(self) -> dict:
        i = self.inputs()
        return {"inputs": {"cc": self.cc.currentData(), "threads": i["threads_per_block"],
                           "regs": i["regs_per_thread"], "smem_static": i["smem_static"],
                           "smem_dynamic": i["smem_dynamic"], "carveout": -1 if i["carveout"] is None else i["carveout"]},
                "tab": self.tabs.currentIndex(),
                "preset": None if self.preset is None else {k: self.preset[k] for k in ("name", "paper")}}

    def session_data(self) -> dict:
        """The three occupancy curves (x, occupancy %) as they are shown."""
        out = {}
        for key, _t, _u in AXES:
            xs, ys, _pt = self.charts.data(key)
            out[f"curve_{key}"] = np.array([xs, ys], np.float64)
        return out

    def restore_session(self, state: dict, data: dict) -> None:
        inp = dict(state["inputs"])
        cc = inp.get("cc")
        if cc == DEVICE and self._device_spec is None:
            raise ExplorerError("the session used 'This GPU', and no GPU is available here")
        if cc != DEVICE:
            get_spec(cc)
        for k in ("threads", "regs", "smem_static", "smem_dynamic", "carveout"):
            if not isinstance(inp.get(k), int):
                raise ExplorerError(f"the session's {k!r} input is missing or not an integer")
        pre = state.get("preset")
        self.preset = pre if isinstance(pre, dict) and "name" in pre and "paper" in pre else None
        self.set_inputs(cc=cc, threads=inp["threads"], regs=inp["regs"], smem_static=inp["smem_static"],
                        smem_dynamic=inp["smem_dynamic"], carveout=inp["carveout"])
        self.tabs.setCurrentIndex(int(state.get("tab", 0)))
        self.message_bar.show_message("Session restored", "info")

    # ----------------------------------------------------------------- figures
    def figure_targets(self) -> list[Figure]:
        return [Figure("Occupancy charts", widget=self.charts.layout_widget),
                Figure("Results table", widget=self.table),
                Figure("Calculator tab", widget=self.tabs.widget(0)),
                Figure("Measured vs theoretical", widget=self.measure_plot),
                Figure("Papers' choosers", widget=self.tabs.widget(2))]

    # --------------------------------------------------------------- main-window hooks
    def busy(self) -> bool:
        """A case-study run is in progress (the mode bar marks it; quitting asks first)."""
        return self.case_study.busy()

    def set_controls_visible(self, on: bool):
        self.controls_dock.setVisible(bool(on))

    def save_settings(self, s):
        s.setValue("cc", self.cc.currentData())
        for k, val in self.inputs().items():
            s.setValue(k, -1 if val is None else val)

    def restore_settings(self, s):
        try:
            cc = s.value("cc")
            if cc == DEVICE and self._device_spec is None:
                cc = None
            vals = {k: s.value(k) for k in ("threads_per_block", "regs_per_thread", "smem_static",
                                             "smem_dynamic", "carveout")}
            if cc is None and all(v is None for v in vals.values()):
                return
            self.set_inputs(cc=cc, threads=vals["threads_per_block"], regs=vals["regs_per_thread"],
                            smem_static=vals["smem_static"], smem_dynamic=vals["smem_dynamic"],
                            carveout=vals["carveout"])
        except (ExplorerError, TypeError, ValueError):
            pass
