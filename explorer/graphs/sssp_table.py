"""The "SSSP (paper 004)" tab: Table 3.1, the scaling figures 3.10 / 3.12 / 3.13 and the path-recording
overhead of Fig. 3.14, re-run off the GUI thread (compute in kernels.graphs.experiments.sssp_table; the run /
cancel / end cycle is a composed explorer.sweep_runner.SweepRunner)."""
from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout,
                             QWidget)

from kernels.errors import InvalidParameter
from kernels.graphs.experiments import sssp_table as T
from kernels.graphs.apsp import METHODS

from ..log_axis import log_axes
from ..sweep_runner import SweepRunner, forwards_to_runner
from .emulated import HOST_LABEL, HOST_TIP

#: experiment combo: label -> key
EXPERIMENTS = {"Table 3.1 (|V| = 4677, four topologies)": "table", "Fig. 3.10: time vs |V|": "3.10",
               "Fig. 3.12: time vs |E|": "3.12", "Fig. 3.13: time vs w_max": "3.13",
               "Fig. 3.14: path-recording overhead": "overhead"}
DEFAULT_VALUES = {"3.10": "1024, 4096, 16384, 65536", "3.12": "8192, 16384, 32768, 65536",
                  "3.13": "16, 256, 4096, 65536", "overhead": "1024, 4096, 16384", "table": ""}
COLOR = {"sssp-harish": (214, 39, 40), "sssp": (31, 119, 180), "sssp-staged": (44, 160, 44),
         "cpu-dijkstra": (148, 103, 189)}


@forwards_to_runner
class SSSPTablePanel(QWidget):
    """Controls, a table (Table 3.1 next to the thesis's numbers) and a log–log plot (figures)."""

    CSV_NAME, CSV_EMPTY = "sssp.csv", "Run an experiment first."
    #: the experiments this tab shows (it picks one per run: :meth:`row_experiment`)
    SHOWS = (T.TABLE31, T.SCALING, T.PATH_OVERHEAD)

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend, self.message = backend, message
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message,
                                  row_experiment=self.row_experiment, csv_name=self.CSV_NAME,
                                  csv_empty=self.CSV_EMPTY, run_text="Run")
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.cb_exp = QComboBox()
        for label, key in EXPERIMENTS.items():
            self.cb_exp.addItem(label, key)
        self.cb_exp.setToolTip("Paper 004 ch. 3's experiment to re-run (random digraphs: DIMACS style, "
                               "|E| = 4|V| and w_max = |V| unless the figure varies them)")
        self.cb_exp.currentIndexChanged.connect(lambda _i: self._exp_changed())
        form.addRow("experiment", self.cb_exp)
        self.ed_values = QLineEdit()
        self.ed_values.setToolTip("The figure's x values (|V|, |E| or w_max), comma-separated")
        form.addRow("values", self.ed_values)
        row = QHBoxLayout()
        self.ck_method = {}
        for m in T.TABLE_METHODS:
            host = T.emulated(m, backend)
            ck = QCheckBox(T.LABELS[m] + (f" {HOST_LABEL}" if host else ""))
            ck.setToolTip(METHODS[m].help + (HOST_TIP if host else ""))
            ck.setChecked(not host)                         # the host path is slow: opt in
            self.ck_method[m] = ck
            row.addWidget(ck)
        form.addRow("methods", row)
        nums = QHBoxLayout()
        self.sp_sources = QSpinBox()
        self.sp_sources.setRange(0, 10_000_000)
        self.sp_sources.setValue(1024)
        self.sp_sources.setSpecialValueText("all")
        self.sp_sources.setToolTip("Time only the first k sources and scale by |V| / k (0 = all). Exact up to noise "
                                   "for the ring and complete graphs (every source alike); an estimate otherwise")
        self.sp_seed = QSpinBox()
        self.sp_seed.setRange(0, 2**31 - 1)
        self.sp_seed.setValue(1)
        self.sp_seed.setToolTip("Random seed of the graphs")
        for text, sp in (("sources", self.sp_sources), ("seed", self.sp_seed)):
            lab = QLabel(text)
            lab.setToolTip(sp.toolTip())
            nums.addWidget(lab)
            nums.addWidget(sp)
        nums.addStretch(1)
        form.addRow("runs", nums)
        lay.addLayout(form)
        self.runner.lay_out(lay, "Run the chosen experiment off the GUI thread", png_text="Export plot…",
                            png_tip="Save the plot as one PNG image")
        self.table = QTableWidget(len(T.TABLE_METHODS), len(T.TOPOLOGIES))
        self.table.setHorizontalHeaderLabels(list(T.TOPOLOGIES))
        self.table.setVerticalHeaderLabels([T.LABELS[m] for m in T.TABLE_METHODS])
        self.table.setToolTip("Seconds for all |V| sources (~: scaled from the first k), the thesis's in brackets")
        lay.addWidget(self.table, 1)
        self.plots = pg.GraphicsLayoutWidget()
        self.plot = self.plots.addPlot(row=0, col=0, axisItems=log_axes())
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setLabel("left", "seconds")
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=4)
        self.plots.addItem(self.legend, row=1, col=0)
        lay.addWidget(self.plots, 2)
        self._exp_changed()

    # ------------------------------------------------------------ parameters
    def experiment(self) -> str:
        return self.cb_exp.currentData()

    def _exp_changed(self):
        key = self.experiment()
        self.ed_values.setText(DEFAULT_VALUES[key])
        self.ed_values.setEnabled(key != "table")
        self.table.setVisible(key == "table")
        self.plots.setVisible(key != "table")
        self.lbl.setText({"table": "Paper 004 Table 3.1 (8800 GTS / Xeon 5440 ×4): Harish 4.39, 6.37, 687, 5730 s; "
                                   "proposed 0.669, 0.942, 58.2, 77.3 s.",
                          "overhead": "Paper 004 Fig. 3.14: recording costs 3.0–7.7 % of the cost computation."}
                         .get(key, T.FIGURES.get(key, "")))

    def methods(self) -> list[str]:
        return [m for m, ck in self.ck_method.items() if ck.isChecked() and ck.isEnabled()]

    def values(self) -> list[int]:
        try:
            vals = sorted({int(s) for s in self.ed_values.text().replace(";", ",").split(",") if s.strip()})
        except ValueError:
            raise InvalidParameter(f"values must be whole numbers separated by commas (got {self.ed_values.text()!r})") \
                from None
        if not vals or vals[0] < 2:
            raise InvalidParameter("give at least one value ≥ 2")
        return vals

    def state(self) -> dict:
        return {"experiment": self.experiment(), "values": self.ed_values.text(), "methods": self.methods(),
                "sources": self.sp_sources.value(), "seed": self.sp_seed.value()}

    def restore(self, state) -> None:
        if not isinstance(state, dict):
            return
        i = self.cb_exp.findData(state.get("experiment"))
        if i >= 0:
            self.cb_exp.setCurrentIndex(i)
        if isinstance(state.get("values"), str) and self.experiment() != "table":
            self.ed_values.setText(state["values"])
        if isinstance(state.get("methods"), list):
            for m, ck in self.ck_method.items():
                ck.setChecked(ck.isEnabled() and m in state["methods"])
        for key, sp in (("sources", self.sp_sources), ("seed", self.sp_seed)):
            v = state.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and sp.minimum() <= v <= sp.maximum():
                sp.setValue(v)

    # ---------------------------------------------------------------- running
    def run(self) -> bool:
        if self.job is not None:
            return False
        key = self.experiment()
        k = self.sp_sources.value() or None
        seed = self.sp_seed.value()
        try:
            if key == "overhead":
                T.check_methods(["sssp-path"], self.backend)
                vals = self.values()
                T.check_scaling_host("3.10", vals, ["sssp-path"], self.backend, seed, k)     # CUDA on the CPU
                gen = lambda c: T.run_path_overhead(vals, self.backend, seed, k, cancel=c)  # noqa: E731
                total = len(vals)
            else:
                methods = T.check_methods(self.methods(), self.backend)
                if key == "table":
                    T.check_table_host(T.TOPOLOGIES, methods, self.backend, seed=seed, max_sources=k)
                    gen = lambda c: T.run_table(T.TOPOLOGIES, methods, self.backend, seed=seed,  # noqa: E731
                                                max_sources=k, cancel=c)
                    total = len(T.TOPOLOGIES) * len(methods)
                else:
                    vals = self.values()
                    T.check_scaling_host(key, vals, methods, self.backend, seed, k)
                    gen = lambda c: T.run_scaling(key, vals, methods, self.backend, seed, k, cancel=c)  # noqa: E731
                    total = len(vals) * len(methods)
        except InvalidParameter as exc:
            self.runner.say(str(exc))
            return False
        self.rows = []
        self._redraw()
        self.lbl.setText("Running …")
        self.runner.start(f"Paper 004 {key}", gen, total)
        return True

    def row_experiment(self):
        """Table 3.1, a scaling figure or the path overhead: whichever the rows shown are."""
        return T.experiment_for(self.rows) if self.rows else None

    def _summary(self) -> str:
        if not self.rows:
            return "Nothing run."
        r0 = self.rows[0]
        if isinstance(r0, T.OverheadRow):
            ov = [100 * r.overhead for r in self.rows]
            ok = sum(r.paths_valid for r in self.rows), sum(r.paths_checked for r in self.rows)
            return (f"Path-recording overhead {min(ov):.1f}–{max(ov):.1f} % (paper 3.0–7.7 %); "
                    f"{ok[0]}/{ok[1]} recorded paths valid.")
        ups = T.speedups(self.rows, "sssp-harish")
        best = max(ups.items(), key=lambda kv: kv[1]) if ups else None
        text = (f"Largest speed-up over Harish's method: {best[0][-1]} {best[1]:.1f}×" if best else "")
        bad = [r for r in self.rows if r.agrees is False]
        return text + (" — some costs differ from scipy's!" if bad else "; every checked cost equals scipy's.")

    # --------------------------------------------------------------- display
    def _redraw(self):
        self.table.clearContents()
        self.plot.clear()
        self.legend.clear()
        if not self.rows:
            return
        r0 = self.rows[0]
        if isinstance(r0, T.TableRow):
            for r in self.rows:
                item = QTableWidgetItem(f"{'~' if r.scaled else ''}{r.seconds:.4g} ({r.paper_seconds:g})")
                item.setToolTip(f"{r.sources_timed} sources timed, {r.launches} launches; "
                                f"{'equal to' if r.agrees else 'DIFFERENT from'} scipy's costs")
                self.table.setItem(T.TABLE_METHODS.index(r.method), T.TOPOLOGIES.index(r.topology), item)
            return
        if isinstance(r0, T.OverheadRow):
            self.plot.setLabel("bottom", "|V|")
            self.plot.setLabel("left", "recording / cost computation")
            item = self.plot.plot([r.n for r in self.rows], [r.overhead for r in self.rows], pen=pg.mkPen("w", width=2),
                                  symbol="o")
            self.legend.addItem(item, "overhead (paper 0.030–0.077)")
            return
        self.plot.setLabel("left", "seconds")
        self.plot.setLabel("bottom", {"3.10": "|V|", "3.12": "|E|", "3.13": "w_max"}[r0.figure])
        x = {"3.10": lambda r: r.n, "3.12": lambda r: r.arcs, "3.13": lambda r: r.w_max}[r0.figure]
        for m in T.TABLE_METHODS:
            rs = sorted((r for r in self.rows if r.method == m), key=x)
            if rs:
                col = COLOR[m]
                item = self.plot.plot([x(r) for r in rs], [r.seconds for r in rs], pen=pg.mkPen(col, width=2),
                                      symbol="o", symbolBrush=col)
                self.legend.addItem(item, T.LABELS[m])

    # ----------------------------------------------------------------- export

    def shown(self):
        """What the tab shows: Table 3.1 as a table, the other experiments as plots."""
        return self.table if self.experiment() == "table" else self.plots

    def export_plots(self, path=None):
        return self.runner.export_widget(path, "sssp.png", self.shown(), "SSSP methods")

