"""The "Clustering timings" tab: paper 001 §5.7's experiment (Figs. 14–15), re-run — time of each
clustering-coefficient implementation against V on Watts–Strogatz and Barabási–Albert graphs, with
log–log slopes next to the paper's, run off the GUI thread and plotted live (compute in
kernels.graphs.experiments.cc_timing; the run / cancel / end cycle is a composed
explorer.sweep_runner.SweepRunner).

The scheduler choice (app-wide): ``none`` times here with this window's backend; ``local`` or a
``tcp://`` address fans the (family, V) points out over Dask with the CLI's ``graph-clustering
--scheduler`` task (:func:`kernels.sweep.graph_tasks.clustering_sweep`; every method of a point
timed on one worker, so timings stay per task)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QCheckBox, QFormLayout, QGridLayout, QHBoxLayout, QLabel, QLineEdit,
                             QPushButton, QSpinBox, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError, InvalidParameter
from kernels.graphs.experiments import cc_timing as cc

from ..log_axis import log_axes
from ..sweep_panel import INPROCESS_TIP, SchedulerChoice
from ..sweep_runner import SweepRunner, forwards_to_runner
from .reproduce import worker_backend
from .emulated import HOST_LABEL, HOST_TIP
from kernels.sweep.graph_tasks import clustering_sweep

SHORT = {"ws": "WS", "ba": "BA"}
#: method -> (colour, symbol); the family sets the line style (WS solid, BA dashed)
STYLE = {"cpu": ((31, 119, 180), "o"), "cpu-threads": ((255, 127, 14), "s"), "gpu-arc": ((44, 160, 44), "t"),
         "gpu-sorted": ((214, 39, 40), "d"), "multi-arc": ((23, 190, 207), "t1"),
         "multi-sorted": ((227, 119, 194), "star"), "networkx": ((148, 103, 189), "x")}
FAMILY_COLOR = {"ws": (31, 119, 180), "ba": (44, 160, 44)}
LINE = {"ws": Qt.PenStyle.SolidLine, "ba": Qt.PenStyle.DashLine}
METHOD_TIPS = {
    "cpu": "Single core: sparse (A·A)∘A row sums in row blocks (paper 001: single-threaded C)",
    "cpu-threads": "The same row blocks taken by a thread pool (paper 001: pThreads / TBB, Alg. 13–17)",
    "gpu-arc": "One CUDA thread per arc, arcs in storage order (paper 001: GPU kernel 1)",
    "gpu-sorted": "One CUDA thread per arc, arcs sorted by their end vertex's degree (paper 001: GPU kernel 2)",
    "multi-arc": "Kernel 1 over several GPUs (paper 001 §5.5: 2 GPUs kernel 1): the graph copied to every GPU, "
                 "arcs handed out in work blocks by a shared cursor, the integer counts added exactly. On the CPU "
                 "backend: virtual GPUs, each running the same CUDA kernel on the CPU — it shows the split, its times say "
                 "nothing about GPUs",
    "multi-sorted": "Kernel 2 (arcs sorted by end-vertex degree) over several GPUs, as multi-arc "
                    "(paper 001: 2 GPUs kernel 2)",
    "networkx": "networkx.transitivity, the reference peer — slow (pure Python): small sizes only",
}


def sizes_text(sizes) -> str:
    return ", ".join(str(n) for n in sizes)


def paper_sizes_text(family: str) -> str:
    return sizes_text(cc.PAPER_SIZES[family])


def parse_size_list(text: str, label: str) -> list[int]:
    """Sizes typed as "2000, 4000; 8000" (ranges are ``cc.check_sizes``'s job)."""
    try:
        return [int(s) for s in str(text).replace(";", ",").split(",") if s.strip()]
    except ValueError:
        raise InvalidParameter(f"{label}: sizes V must be whole numbers (integers) separated by commas "
                               f"(got {text!r})") from None


@forwards_to_runner
class ClusteringTimingPanel(QWidget):
    """Controls + two live plots (time vs V log–log, clustering vs V) + summary + export.

    ``state()`` / ``restore(dict)`` give the controls as a JSON-able dict (settings, sessions)."""

    EXPERIMENT = cc.TIMINGS

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.message = message            # callable(text, level) for the workspace's message bar
        self.where = SchedulerChoice("none", INPROCESS_TIP, info=True)
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message, experiment=self.EXPERIMENT,
                                  where=self.where, csv_name="cc_timings.csv", run_text="Run timings")
        lay = QVBoxLayout(self)
        form = QFormLayout()
        # families and their sizes
        self.ck_fam, self.ed_sizes = {}, {}
        fam_grid = QGridLayout()
        for i, (f, label) in enumerate(cc.FAMILIES.items()):
            ck = QCheckBox(label)
            ck.setChecked(True)
            ck.setToolTip(f"Time the implementations on {label} graphs (paper 001 §5.7: V = "
                          f"{cc.PAPER_SIZES[f][0]:,} … {cc.PAPER_SIZES[f][-1]:,}, clustering ≈ "
                          f"{cc.PAPER_LEVELS[f]})")
            ed = QLineEdit(sizes_text(cc.default_sizes(backend)[f]))     # the paper's on a GPU, else quick
            ed.setToolTip(f"Sizes V (vertices) of the {SHORT[f]} sweep, comma-separated whole numbers, at least "
                          f"two, {cc.MIN_V} … {cc.MAX_V:,}. Paper 001: {paper_sizes_text(f)}")
            self.ck_fam[f], self.ed_sizes[f] = ck, ed
            fam_grid.addWidget(ck, i, 0)
            fam_grid.addWidget(ed, i, 1)
        fam_grid.setColumnStretch(1, 1)
        self.bt_paper = QPushButton("Paper sizes")
        self.bt_paper.setToolTip("Fill in paper 001's ranges: WS V = 20 000 … 200 000, BA V = 10 000 … 100 000, "
                                 "ten even steps (minutes per method on a CPU)")
        self.bt_paper.clicked.connect(self.set_paper_sizes)
        fam_grid.addWidget(self.bt_paper, 0, 2, 2, 1)
        form.addRow("graphs, V", fam_grid)
        # methods
        meth = QGridLayout()
        self.ck_methods = {}
        for i, m in enumerate(cc.CLUSTERING_METHODS):
            host = cc.emulated(m, backend)
            ck = QCheckBox(m + (f" {HOST_LABEL}" if host else ""))
            tip = METHOD_TIPS[m] + (f"; compared with the paper's {cc.PAPER_NAME[m]} slope" if m in cc.PAPER_NAME
                                    else "; the paper has no slope for it")
            if host:
                tip += HOST_TIP
            ck.setChecked(m in cc.default_methods(backend))
            ck.setToolTip(tip)
            self.ck_methods[m] = ck
            meth.addWidget(ck, i // 3, i % 3)
        form.addRow("methods", meth)
        # repeats, threads, seed
        nums = QHBoxLayout()
        self.sp_repeats = QSpinBox(); self.sp_repeats.setRange(1, 100); self.sp_repeats.setValue(5)
        self.sp_repeats.setToolTip("Timed runs per point (their mean is plotted; one untimed warm-up run comes "
                                   "first). Paper 001 averaged 30 runs")
        self.sp_threads = QSpinBox(); self.sp_threads.setRange(1, max(256, cc.default_workers()))
        self.sp_threads.setValue(cc.default_workers())
        self.sp_threads.setToolTip("Threads of the cpu-threads method (default: this machine's cores)")
        self.sp_seed = QSpinBox(); self.sp_seed.setRange(0, 2**31 - 1); self.sp_seed.setValue(1)
        self.sp_seed.setToolTip("Random seed of the graphs: one graph per (family, V), shared by every method")
        self.sp_gpus = QSpinBox(); self.sp_gpus.setRange(1, 64); self.sp_gpus.setValue(cc.default_gpus(backend))
        self.sp_gpus.setToolTip("GPUs of multi-arc / multi-sorted (paper 001: the 2 GPUs of a GTX 295); "
                                "virtual GPUs on the CPU backend")
        for text, sp in (("repeats", self.sp_repeats), ("threads", self.sp_threads), ("seed", self.sp_seed),
                         ("GPUs", self.sp_gpus)):
            lab = QLabel(text); lab.setToolTip(sp.toolTip())
            nums.addWidget(lab)
            nums.addWidget(sp)
        nums.addStretch(1)
        form.addRow("runs", nums)
        form.addRow("scheduler", self.where)
        lay.addLayout(form)
        self.runner.lay_out(lay, "Time every chosen method on every chosen (family, V), off the GUI thread",
                            csv_tip="Save every timed point (family, V, edges, method, seconds, t, p, C) as CSV",
                            png_tip="Save both plots as one PNG image",
                            progress_tip="Finished (family, V, method) points of the sweep")
        self.bt_cancel.setToolTip("Stop after the point being timed (on Dask: cancel the tasks not yet finished)")
        self.lbl.setText("Paper 001 Figs. 14–15: time ∝ V^slope — WS single core 1.03, GPU kernel 1 1.03; "
                         "BA single core 1.37, GPU kernel 1 1.45. Clustering: WS 0.53, BA 0.01.")
        self.lbl.setToolTip("Fitted log–log slopes of time vs V next to paper 001's, the largest speed-up over "
                            "cpu, and whether every method counted the same t and p")
        self.plots = pg.GraphicsLayoutWidget()
        self.p_time = self.plots.addPlot(row=0, col=0, title="time vs V (paper 001 Figs. 14–15)", axisItems=log_axes())
        self.p_clu = self.plots.addPlot(row=2, col=0, title="clustering C vs V (dashed: paper 001)",
                                        axisItems=log_axes())
        for p, ylab in ((self.p_time, "seconds (mean of repeats)"), (self.p_clu, "clustering C = 3t / p")):
            p.setLogMode(x=True, y=True)
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "V (vertices)")
            p.setLabel("left", ylab)
            p.getAxis("left").enableAutoSIPrefix(False)
        self.p_time.setToolTip("Mean time of each method's count against V, log–log (WS solid, BA dashed); "
                               "the legend gives each fitted slope")
        self.p_clu.setToolTip("Global clustering 3t/p of each graph (points) and paper 001's level (dashed): "
                              "WS 0.53, BA 0.01")
        self.p_clu.setYRange(-2.5, 0.0, padding=0.02)           # log10 C: 0.003 … 1 holds both levels
        # legends in rows of their own under each plot (inside, they would hide points): WS left, BA right
        self.legend = pg.LegendItem(labelTextSize="8pt", verSpacing=-6, colCount=2)
        self.legend_clu = pg.LegendItem(labelTextSize="8pt", verSpacing=-6, colCount=4)
        self.plots.addItem(self.legend, row=1, col=0)
        self.plots.addItem(self.legend_clu, row=3, col=0)
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        lay.addWidget(self.plots, 1)

    # ------------------------------------------------------------ parameters
    def set_paper_sizes(self):
        for f, ed in self.ed_sizes.items():
            ed.setText(paper_sizes_text(f))

    def families(self) -> list[str]:
        return [f for f, ck in self.ck_fam.items() if ck.isChecked()]

    def methods(self) -> list[str]:
        return [m for m, ck in self.ck_methods.items() if ck.isChecked() and ck.isEnabled()]

    def sizes(self) -> dict:
        """{family: sorted V} of the checked families; InvalidParameter on bad input."""
        return cc.check_sizes({f: parse_size_list(self.ed_sizes[f].text(), cc.FAMILIES[f])
                               for f in self.families()})

    def state(self) -> dict:
        """The controls as a JSON-able dict (see ``restore``)."""
        return {"families": self.families(), "sizes": {f: ed.text() for f, ed in self.ed_sizes.items()},
                "methods": self.methods(), "repeats": self.sp_repeats.value(),
                "threads": self.sp_threads.value(), "seed": self.sp_seed.value(), "gpus": self.sp_gpus.value()}

    def restore(self, state) -> None:
        """Set the controls from ``state()``'s dict; unknown or malformed entries are skipped (without
        a GPU the GPU methods are restored too: their CUDA source runs on the CPU)."""
        if not isinstance(state, dict):
            return
        if isinstance(state.get("families"), list):
            for f, ck in self.ck_fam.items():
                ck.setChecked(f in state["families"])
        sizes = state.get("sizes")
        if isinstance(sizes, dict):
            for f, ed in self.ed_sizes.items():
                if isinstance(sizes.get(f), str):
                    ed.setText(sizes[f])
        if isinstance(state.get("methods"), list):
            for m, ck in self.ck_methods.items():
                ck.setChecked(ck.isEnabled() and m in state["methods"])
        for key, sp in (("repeats", self.sp_repeats), ("threads", self.sp_threads), ("seed", self.sp_seed),
                        ("gpus", self.sp_gpus)):
            v = state.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and sp.minimum() <= v <= sp.maximum():
                sp.setValue(int(v))

    # ---------------------------------------------------------------- running
    def run(self) -> bool:
        """Check the controls and start the sweep; False (with a message) on bad input or a running job."""
        if self.job is not None:
            return False
        repeats, workers, seed = self.sp_repeats.value(), self.sp_threads.value(), self.sp_seed.value()
        gpus = self.sp_gpus.value()
        try:
            sizes = self.sizes()
            methods = cc.check_methods(self.methods(), self.backend, sizes, seed)
            sched, nworkers = self.where.choice()
            sweep = None
            if sched != "none":                            # the CLI's graph-clustering --scheduler task
                box: list = []
                rows = clustering_sweep(sizes, methods, repeats, backend=worker_backend(self.backend), seed=seed,
                                        threads=workers, gpus=gpus, scheduler=sched, workers=nworkers,
                                        sweep_out=box)
                sweep = box[0]
        except ExplorerError as exc:
            self.runner.say(str(exc))
            return False
        self.rows = []
        self._redraw()
        if sweep is not None:
            self.lbl.setText(f"Timing on {sched} …")
            self.runner.start_sweep("Clustering timings", rows, sweep)
            return True
        self.lbl.setText("Timing …")
        self.runner.start("Clustering timings", lambda cancelled: cc.run_cc_sweep(
            sizes, methods, repeats, self.backend, seed, workers, cancelled, gpus),
            sum(len(ns) for ns in sizes.values()) * len(methods))
        return True

    # --------------------------------------------------------------- summary
    def _present(self, attr: str, order) -> list[str]:
        return [x for x in order if any(getattr(r, attr) == x for r in self.rows)]

    def _summary(self) -> str:
        if not self.rows:
            return "No points timed."
        fits, ups = cc.fit_slopes(self.rows), cc.speedups(self.rows)
        lines = []
        for f in self._present("family", cc.FAMILIES):
            parts = []
            for m in self._present("method", cc.CLUSTERING_METHODS):
                if (f, m) not in fits:
                    continue
                paper = cc.PAPER_NAME.get(m)
                ref = f"paper {paper} {cc.PAPER_SLOPES[f][paper]:.2f}" if paper else "no paper slope"
                parts.append(f"{m} {fits[f, m]:.2f} ({ref})")
            text = f"{SHORT[f]} slopes: " + ("; ".join(parts) if parts else "need ≥ 2 sizes per method")
            fam_ups = {k: s for k, s in ups.items() if k[0] == f}
            if fam_ups:
                (_f, n, m), s = max(fam_ups.items(), key=lambda kv: kv[1])
                text += f". Largest speed-up over cpu: {m} {s:.2f}× at V = {n:,}"
            clu = [r.clustering for r in self.rows if r.family == f]
            text += f". C = {np.mean(clu):.3f} (paper {cc.PAPER_LEVELS[f]})"
            lines.append(text + ".")
        bad = [r for r in self.rows if not r.agrees]
        if bad:
            lines.append("Warning — t and p disagree with the first method's: " +
                         "; ".join(f"{SHORT[r.family]} V = {r.n:,} {r.method} (t = {r.t}, p = {r.p})" for r in bad))
        else:
            lines.append("All methods agree on t and p.")
        return "\n".join(lines)

    # --------------------------------------------------------------- plotting
    def _redraw(self):
        for p in (self.p_time, self.p_clu):
            p.clear()
        self.legend.clear()
        self.legend_clu.clear()
        self.curves = {}
        if not self.rows:
            return
        fits, names = cc.fit_slopes(self.rows), {}
        for f in self._present("family", cc.FAMILIES):
            for m in self._present("method", cc.CLUSTERING_METHODS):
                rs = sorted((r for r in self.rows if r.family == f and r.method == m), key=lambda r: r.n)
                if not rs:
                    continue
                col, sym = STYLE[m]
                virtual = "" if self.backend is not None and self.backend.is_gpu else " virtual"
                gpus = f" ×{rs[0].gpus}{virtual} GPUs" if m in cc.MULTI_METHODS else ""
                name = f"{SHORT[f]} {m}{gpus}" + (f": V^{fits[f, m]:.2f}" if (f, m) in fits else "")
                self.curves[f, m] = self.p_time.plot(
                    [r.n for r in rs], [r.seconds for r in rs],
                    pen=pg.mkPen(col, width=2, style=LINE[f]), symbol=sym, symbolSize=7,
                    symbolBrush=col if f == "ws" else "w", symbolPen=pg.mkPen(col, width=1.5))
                names[f, m] = name
            pts = {}
            for r in self.rows:                      # one point per graph (all methods count the same C)
                if r.family == f:
                    pts.setdefault(r.n, r.clustering)
            ns = sorted(pts)
            col = FAMILY_COLOR[f]
            meas = self.p_clu.plot(ns, [max(pts[n], 1e-6) for n in ns], pen=pg.mkPen(col, width=1), symbol="o",
                                   symbolSize=7, symbolBrush=col, symbolPen=None, name=f"{SHORT[f]} measured")
            level = cc.PAPER_LEVELS[f]
            paper = self.p_clu.plot([ns[0], ns[-1]], [level, level], name=f"{SHORT[f]} paper {level}",
                                    pen=pg.mkPen(col, width=2, style=Qt.PenStyle.DashLine))
            for it in (meas, paper):
                self.legend_clu.addItem(it, it.name())
        for m in cc.CLUSTERING_METHODS:                  # row by method, WS then BA: the families fall into columns
            for f in cc.FAMILIES:
                if (f, m) in self.curves:
                    self.legend.addItem(self.curves[f, m], names[f, m])

    # ----------------------------------------------------------------- export

    def export_plots(self, path=None):
        """Both plots as one PNG (twice the screen size) or SVG; the path written, or None."""
        return self.runner.export_widget(path, "cc_timings.png", self.plots, "Clustering timings")

