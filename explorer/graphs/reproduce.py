"""The "Reproduce" tab: paper 000's mean-path-vs-N experiment and paper 001's clustering
levels, run off the GUI thread and plotted live (compute in kernels.graphs.experiments.reproduce).

The scheduler choice (app-wide, :class:`explorer.sweep_panel.SchedulerChoice`): ``none`` runs the
sweep here with this window's backend; ``local`` or a ``tcp://`` address fans the instances out over
Dask with the task the CLI's ``graph-reproduce --scheduler`` uses
(:func:`kernels.sweep.graph_tasks.reproduce_sweep`; each instance timed on its worker)."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel,
                             QLineEdit, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from kernels.errors import ExplorerError, InvalidParameter
from kernels.graphs.data import generators as G
from kernels.graphs.experiments import reproduce as rp

from ..log_axis import log_axes
from ..sweep_panel import INPROCESS_TIP, SchedulerChoice
from ..sweep_runner import SweepRunner, forwards_to_runner
from .emulated import label as host_label
from kernels.sweep.graph_tasks import reproduce_sweep

COLORS = {"alpha-ring": (31, 119, 180), "alpha": (214, 39, 40), "ba": (44, 160, 44)}
#: short legend names (the plots share the tab with the controls)
LEGEND = {"alpha-ring": "(1) α-model, ring", "alpha": "(2) α-model, no ring", "ba": "(3) BA k = 100"}
#: the α-model types and their parameter set in generators.ALPHA_SETS
ALPHA_TYPES = {"alpha-ring": 1, "alpha": 2}
#: connectivity combo: label -> run_sweep's ``connectivity``
CONNECTIVITY_LABELS = {"redraw disconnected (paper)": "redraw", "largest component": "giant"}
#: CPU reference combo: label -> run_sweep's ``reference``
REFERENCE_LABELS = {"none": "", "cpu (scipy BFS)": "cpu",
                    f"cpu Floyd (paper's Table II CPU; N ≤ {rp.FLOYD_MAX_N})": "cpu-floyd"}
PAPER_CONNECTIVITY = ("“the fully connectedness … is not guaranteed by the algorithm, but rather "
                      "through graph analysis after they were generated”")
ALPHA_TIP = ("Watts' α-model: a vertex pair with m common neighbours (of k) is linked with weight "
             "R = (m/k)^α (1−p) + p for 0 < m < k, R = p for m = 0 (and 1 for m ≥ k). "
             "Small α: new links close triangles (clustered caves, long paths); large α: nearly "
             "random links (short paths). "
             "Paper 000 does not give its values: defaults are ours (generators.ALPHA_SETS).")


def parse_p(text: str, label: str = "p") -> float:
    """A probability typed as a number (scientific notation welcome: 1e-10) in [0, 1]."""
    try:
        p = float(text.strip())
    except ValueError:
        raise InvalidParameter(f"{label} must be a number in [0, 1], e.g. 1e-4 (got {text!r})") from None
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise InvalidParameter(f"{label} must lie in [0, 1] (got {text!r})")
    return p


def worker_backend(backend) -> str:
    """The Dask workers' backend choice for this window's ``backend``: gpu or cpu (so that the
    method list, a CPU or GPU one, holds on the workers too)."""
    return "gpu" if backend is not None and backend.is_gpu else "cpu"


def _points_and_mean(plot, n, y, pen, name=None, **points) -> None:
    """Each instance's finite value as a symbol (``points``: its style) and the per-N mean as a
    line; nothing when no value is finite (e.g. clustering not measured)."""
    ok = np.isfinite(y)
    if not ok.any():
        return
    n, y = n[ok], y[ok]
    plot.plot(n, y, pen=None, **points)
    ns = np.unique(n)
    plot.plot(ns, [y[n == v].mean() for v in ns], pen=pen, name=name)


@forwards_to_runner
class ReproducePanel(QWidget):
    """Controls + three live plots (mean path vs N, APSP time vs N, clustering vs N) + export; the
    run / cancel / export cycle is a composed :class:`explorer.sweep_runner.SweepRunner` (``runner``,
    its rows :class:`kernels.graphs.experiments.reproduce.SweepRow`).

    ``state()`` / ``restore(dict)`` give the controls as a JSON-able dict (for settings)."""

    EXPERIMENT = rp.FIG14

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.message = message            # callable(text, level) for the workspace's message bar
        self.sweep_params: dict = {}      # params / connectivity / clustering of the last run
        self.where = SchedulerChoice("none", INPROCESS_TIP, info=True)
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message, experiment=self.EXPERIMENT,
                                  where=self.where, csv_name="reproduce.csv", csv_empty="Run a sweep first.",
                                  live_summary=False, run_text="Run sweep")
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.ed_sizes = QLineEdit("500, 1000, 2000, 4000" if not backend.is_gpu else "1000, 2000, 5000, 10000, 20000")
        self.ed_sizes.setToolTip("Vertex counts N of the sweep (paper 000: 1 000 … 30 000)")
        self.sp_inst = QSpinBox(); self.sp_inst.setRange(1, 20); self.sp_inst.setValue(3 if not backend.is_gpu else 10)
        self.sp_inst.setToolTip("Instances per N (paper 000: 10); times are normalised per instance by Eq. 3")
        self.cb_method = QComboBox()
        for m in (["gpu-bfs", "sssp", "cpu", "cpu-sampled"] if backend.is_gpu else
                  ["cpu", "cpu-sampled", "gpu-bfs", "gpu-msbfs", "sssp"]):
            self.cb_method.addItem(host_label(m, rp.emulated(m, backend)), m)      # data: the method
        self.cb_method.setToolTip("APSP method timed for each instance (GPU BFS = paper 000 kernel 7); "
                                  f"cpu-sampled estimates the mean path from {rp.SAMPLED_SOURCES} random BFS "
                                  "sources — paper 000's full range 1 000 … 30 000 in seconds")
        types_row = QHBoxLayout()
        self.ck_types = {}
        for t, label in rp.TYPE_LABELS.items():
            ck = QCheckBox(label.split(",")[0] if t != "ba" else "(3) BA")
            ck.setChecked(True)
            ck.setToolTip(f"{label}; paper 000 Fig. 14 exponent {rp.PAPER_EXPONENTS[t]}")
            self.ck_types[t] = ck
            types_row.addWidget(ck)
        sizes_row = QHBoxLayout()
        sizes_row.addWidget(self.ed_sizes, 1)
        lab_inst = QLabel("instances"); lab_inst.setToolTip(self.sp_inst.toolTip())
        sizes_row.addWidget(lab_inst)
        sizes_row.addWidget(self.sp_inst)
        form.addRow("sizes N", sizes_row)
        form.addRow("graph types", types_row)
        # α-model parameter sets (1) and (2): one row each
        self.sp_alpha, self.ed_p = {}, {}
        for t, k in ALPHA_TYPES.items():
            r = QHBoxLayout()
            sp = QDoubleSpinBox(); sp.setRange(0.0, 20.0); sp.setSingleStep(0.5); sp.setDecimals(2)
            sp.setToolTip(f"α of set ({k}) — {ALPHA_TIP}")
            sp.setMaximumWidth(80)
            ed = QLineEdit(); ed.setMaximumWidth(90)
            ed.setToolTip(f"p of set ({k}): link weight of pairs without common neighbours, a number in "
                          f"[0, 1] (1e-10 style welcome) — {ALPHA_TIP}")
            self.sp_alpha[t], self.ed_p[t] = sp, ed
            la, lp = QLabel("α"), QLabel("p")
            la.setToolTip(sp.toolTip()); lp.setToolTip(ed.toolTip())
            for w in (la, sp, lp, ed):
                r.addWidget(w)
            r.addStretch(1)
            if k == 1:
                self.bt_defaults = QPushButton("Defaults")
                self.bt_defaults.setToolTip("Restore our α-model sets (generators.ALPHA_SETS); paper 000 "
                                            "does not give its own")
                self.bt_defaults.clicked.connect(self.set_alpha_defaults)
                r.addWidget(self.bt_defaults)
            lab = QLabel(f"set ({k}) {'ring' if k == 1 else 'no ring'}")
            lab.setToolTip(f"{rp.TYPE_LABELS[t]} — {ALPHA_TIP}")
            form.addRow(lab, r)
        self.set_alpha_defaults()
        conn = QHBoxLayout()
        self.cb_conn = QComboBox()
        self.cb_conn.addItems(list(CONNECTIVITY_LABELS))
        self.cb_conn.setToolTip(f"Paper 000 on set (2): {PAPER_CONNECTIVITY}.\n"
                                "redraw disconnected (paper): a disconnected draw is redrawn with the next seed;\n"
                                "largest component: an alternative reading — analyse the largest connected "
                                "component of each draw (its share of N is reported).")
        self.ck_clust = QCheckBox("clustering"); self.ck_clust.setChecked(True)
        self.ck_clust.setToolTip("Also measure the global clustering 3·triangles / connected triples of each "
                                 "instance (sampled wedges with cpu-sampled). Paper 000: type (2) has "
                                 "“slightly lower clustering coefficients” than type (1).")
        conn.addWidget(self.cb_method, 1)
        lab_conn = QLabel("connectivity"); lab_conn.setToolTip(self.cb_conn.toolTip())
        conn.addWidget(lab_conn)
        conn.addWidget(self.cb_conn, 2)
        conn.addWidget(self.ck_clust)
        form.addRow("APSP", conn)
        self.cb_ref = QComboBox()
        for label in REFERENCE_LABELS:
            self.cb_ref.addItem(label, REFERENCE_LABELS[label])
        self.cb_ref.setToolTip("Table II's CPU column: also time a CPU APSP of every instance, plot its time "
                               "beside the method's (hollow, dashed) and give the speed-up; its mean path is "
                               f"checked against the method's. cpu Floyd is the paper's CPU algorithm, O(N³): "
                               f"N ≤ {rp.FLOYD_MAX_N}.")
        form.addRow("CPU reference", self.cb_ref)
        form.addRow("scheduler", self.where)
        lay.addLayout(form)
        row = QHBoxLayout()
        for b in self.runner.buttons():
            row.addWidget(b)
        lay.addLayout(row)
        self.progress.setFormat("%v / %m instances")
        lay.addWidget(self.progress)
        self.lbl.setText("Paper 000 Fig. 14: mean path ∝ N^0.995 (1), N^0.223 (2), N^0.106 (3).")
        lay.addWidget(self.lbl)
        self.plots = pg.GraphicsLayoutWidget()
        self.p_len = self.plots.addPlot(row=0, col=0, title="mean shortest path vs N", axisItems=log_axes())
        self.p_time = self.plots.addPlot(row=1, col=0, title="APSP time vs N (Eq. 3 normalised; dashed: CPU "
                                         "reference, raw)", axisItems=log_axes())
        self.p_clu = self.plots.addPlot(row=2, col=0, title="global clustering vs N (paper 000: (2) slightly "
                                        "below (1))", axisItems=log_axes())
        for p, ylab in ((self.p_len, "mean path (hops)"), (self.p_time, "seconds"), (self.p_clu, "clustering C")):
            p.setLogMode(x=True, y=p is not self.p_clu)
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "N (vertices)")
            p.setLabel("left", ylab)
        self.p_clu.setYRange(0.0, 1.0, padding=0.02)
        self.p_clu.setToolTip("Global clustering 3·triangles / connected triples per instance (points) and per-N "
                              "mean (line). Paper 000: type (2) graphs have “slightly lower clustering "
                              "coefficients” than type (1).")
        self.legend = self.p_len.addLegend(offset=(10, 5), labelTextSize="8pt", verSpacing=-6)
        lay.addWidget(self.plots, 1)

    # ------------------------------------------------------------ parameters
    def set_alpha_defaults(self):
        """α / p of both sets back to generators.ALPHA_SETS."""
        for t, k in ALPHA_TYPES.items():
            self.sp_alpha[t].setValue(float(G.ALPHA_SETS[k]["alpha"]))
            self.ed_p[t].setText(f"{float(G.ALPHA_SETS[k]['p']):g}")

    def alpha_overrides(self) -> dict:
        """{type: {"alpha": …, "p": …}} from the fields; InvalidParameter on a bad p."""
        out = {}
        for t, k in ALPHA_TYPES.items():
            over = {"alpha": float(self.sp_alpha[t].value()), "p": parse_p(self.ed_p[t].text(), f"p of set ({k})")}
            rp.alpha_params(t, over)                  # the library's own check
            out[t] = over
        return out

    def method(self) -> str:
        """The APSP method chosen (the item's data; its text may add the host-run label)."""
        return self.cb_method.currentData() or self.cb_method.currentText()

    def connectivity(self) -> str:
        return CONNECTIVITY_LABELS[self.cb_conn.currentText()]

    def state(self) -> dict:
        """The controls as a JSON-able dict (see ``restore``)."""
        return {"sizes": self.ed_sizes.text(), "instances": self.sp_inst.value(),
                "method": self.method(),
                "types": [t for t, ck in self.ck_types.items() if ck.isChecked()],
                "alpha": {t: {"alpha": self.sp_alpha[t].value(), "p": self.ed_p[t].text()} for t in ALPHA_TYPES},
                "connectivity": self.connectivity(), "clustering": self.ck_clust.isChecked(),
                "reference": self.cb_ref.currentData()}

    def restore(self, state) -> None:
        """Set the controls from ``state()``'s dict; unknown or malformed entries are skipped."""
        if not isinstance(state, dict):
            return
        if isinstance(state.get("sizes"), str):
            self.ed_sizes.setText(state["sizes"])
        try:
            self.sp_inst.setValue(int(state["instances"]))
        except (KeyError, TypeError, ValueError):
            pass
        i = self.cb_method.findData(state.get("method"))
        if i >= 0:
            self.cb_method.setCurrentIndex(i)
        if isinstance(state.get("types"), list):
            for t, ck in self.ck_types.items():
                ck.setChecked(t in state["types"])
        if isinstance(state.get("reference"), str) and self.cb_ref.findData(state["reference"]) >= 0:
            self.cb_ref.setCurrentIndex(self.cb_ref.findData(state["reference"]))
        alpha = state.get("alpha")
        if isinstance(alpha, dict):
            for t in ALPHA_TYPES:
                d = alpha.get(t)
                if not isinstance(d, dict):
                    continue
                try:
                    self.sp_alpha[t].setValue(float(d["alpha"]))
                except (KeyError, TypeError, ValueError):
                    pass
                if isinstance(d.get("p"), (str, int, float)):
                    self.ed_p[t].setText(str(d["p"]))
        for label, key in CONNECTIVITY_LABELS.items():
            if state.get("connectivity") == key:
                self.cb_conn.setCurrentText(label)
        if isinstance(state.get("clustering"), bool):
            self.ck_clust.setChecked(state["clustering"])

    # ---------------------------------------------------------------- running
    def run(self) -> bool:
        if self.job is not None:
            return False
        try:
            sizes = rp.parse_sizes(self.ed_sizes.text())
        except InvalidParameter as exc:
            self.runner.say(str(exc))
            return False
        types = [t for t, ck in self.ck_types.items() if ck.isChecked()]
        if not types:
            self.runner.say("choose at least one graph type")
            return False
        inst, method = self.sp_inst.value(), self.method()
        conn, clust = self.connectivity(), self.ck_clust.isChecked()
        try:
            params = self.alpha_overrides()
            ref = rp.check_reference(self.cb_ref.currentData(), sizes)
            sched, workers = self.where.choice()
            if sched in ("none", "local"):                 # an address: its workers are checked there
                rp.check_memory_for(sizes, method, self.backend, ref)
                rp.check_host(types, sizes, method, self.backend, params)     # the CPU run of a CUDA method
            sweep = None
            if sched != "none":                            # the CLI's graph-reproduce --scheduler task
                box: list = []
                rows = reproduce_sweep(types, sizes, inst, method=method, backend=worker_backend(self.backend),
                                       params=params, connectivity=conn, clustering=clust, reference=ref,
                                       scheduler=sched, workers=workers, sweep_out=box)
                sweep = box[0]
        except ExplorerError as exc:                      # bad input, or the largest N cannot fit
            self.runner.say(str(exc))
            return False
        self.rows = []
        self.sweep_params = {"params": params, "connectivity": conn, "clustering": clust, "reference": ref}
        self._redraw()
        if sweep is not None:
            self.lbl.setText(f"Running on {sched} …")
            self.runner.start_sweep("Reproduce sweep", rows, sweep)
            return True
        self.runner.start("Reproduce sweep", lambda cancelled: rp.run_sweep(
            types, sizes, inst, method, backend=self.backend, cancel=cancelled, params=params,
            connectivity=conn, clustering=clust, reference=ref), len(types) * len(sizes) * inst)
        return True

    # --------------------------------------------------------------- plotting
    def _types_present(self) -> list[str]:
        """The swept types in the paper's order (1), (2), (3)."""
        return [t for t in rp.TYPE_LABELS if any(r.type == t for r in self.rows)]

    def _summary(self) -> str:
        fits = rp.fit_exponents(self.rows)
        order = self._types_present()
        short = {t: rp.TYPE_LABELS[t].split(" ")[0] for t in rp.TYPE_LABELS}          # "(1)" …
        parts = [f"{LEGEND[t]}: {fits[t]:.3f} (paper {rp.PAPER_EXPONENTS[t]})" for t in order if t in fits]
        text = "Fitted exponents — " + "; ".join(parts) if parts else "Need ≥ 2 sizes per type for a fit"
        clu = rp.mean_clustering(self.rows)
        if clu:
            text += ". Mean clustering — " + "; ".join(f"{short[t]} {clu[t]:.3f}" for t in order if t in clu)
        if self.rows and self.sweep_params.get("connectivity") == "giant":
            gf = {t: np.mean([r.giant_fraction for r in self.rows if r.type == t]) for t in order}
            text += ". Largest component, mean share of N — " + "; ".join(f"{short[t]} {100 * f:.1f} %"
                                                                         for t, f in gf.items())
        ups = rp.speedups(self.rows)
        if ups:
            ref = self.rows[0].ref_method
            best = {t: max(((n, x) for (tt, n), x in ups.items() if tt == t), default=None) for t in order}
            text += (f". Speed-up over {ref} at the largest N — " +
                     "; ".join(f"{short[t]} {x:.3g}× (N = {n})" for t, (n, x) in
                               ((t, b) for t, b in best.items() if b is not None)))
            bad = sum(r.ref_agrees is False for r in self.rows)
            text += (f". {bad} instance(s) DISAGREE with {ref}" if bad else
                     f". Mean paths agree with {ref}" if any(r.ref_agrees for r in self.rows) else "")
        return text + ("." if parts or clu else "")

    def _redraw(self):
        self.p_len.clear(); self.p_time.clear(); self.p_clu.clear()
        self.legend.clear()
        if not self.rows:
            return
        fits = rp.fit_exponents(self.rows)
        norm = rp.normalised(self.rows)
        for t in self._types_present():
            idx = [i for i, r in enumerate(self.rows) if r.type == t]
            n = np.array([self.rows[i].n for i in idx], float)
            L = np.array([self.rows[i].mean_path_length for i in idx], float)
            tt = np.array([max(norm[i], 1e-9) for i in idx], float)
            col = COLORS[t]
            name = LEGEND[t] + (f": N^{fits[t]:.3f} (paper {rp.PAPER_EXPONENTS[t]})" if t in fits else "")
            _points_and_mean(self.p_len, n, L, pg.mkPen(col, width=2), name, symbol="o", symbolSize=6,
                             symbolBrush=(*col, 120), symbolPen=None)
            _points_and_mean(self.p_time, n, tt, pg.mkPen(col, width=2), symbol="t", symbolSize=7,
                             symbolBrush=(*col, 160), symbolPen=None)
            rt = np.array([self.rows[i].ref_seconds for i in idx], float)
            # the CPU reference: hollow points, dashed mean
            _points_and_mean(self.p_time, n, np.where(rt > 0, rt, np.nan),
                             pg.mkPen(col, width=2, style=Qt.PenStyle.DashLine), symbol="t", symbolSize=7,
                             symbolBrush=None, symbolPen=pg.mkPen(col, width=1.2))
            C = np.array([self.rows[i].clustering for i in idx], float)
            _points_and_mean(self.p_clu, n, C, pg.mkPen(col, width=2), symbol="o", symbolSize=6,
                             symbolBrush=(*col, 120), symbolPen=None)

    # ----------------------------------------------------------------- export
    def export_plots(self, path=None):
        """The three plots as PNG (twice the screen size) or SVG; the path written, or None."""
        return self.runner.export_widget(path, "reproduce.png", self.plots, "Reproduce plots")
