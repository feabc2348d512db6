"""The Cahn–Hilliard *Sweep* tab: many runs over composition, noise, seed … on a Dask cluster, with a
plot that fills as rows arrive (coarsening exponent, final length scale or free energy against a
swept parameter, mean ± standard deviation over the other axes, e.g. the seeds).

The fixed parameters are the Parameters panel's current values; the tab adds the swept ones
(``NAME=VALUES``: ``a:b:n``, ``a..b`` or a comma list), the steps and the grid size.  Running,
progress, cancel and export are :class:`explorer.sweep_panel.SweepPanel`; the runs are
kernels.sweep (task ``ch``).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import (QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QSpinBox, QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.sweep import Sweep, make_task, parse_axes, product
from kernels.sweep.commands import group_stats

from ..sweep_panel import SweepPanel
from ..lazy_panel import LazyPanel, lazy_dock
from ..widgets import plot_panel

#: plotted quantity: label → row column
QUANTITIES = {"coarsening exponent α (L ∝ t^α)": "coarsening_exponent",
              "final length scale L": "length_scale_final",
              "final free energy": "free_energy_final"}
AXES_TIP = ("Values of the parameter, one of: a:b:n (n evenly spaced values from a to b), a..b (the integers "
            "a to b) or a comma list. Every combination of the swept parameters is one run.")
#: the CHParams fields the tab sends along from the Parameters panel (the rest stay at defaults)
FIXED_FIELDS = ("m", "b", "u", "K", "dx", "dt", "dim", "boundary", "boundary_value", "initial", "mean", "noise",
                "seed", "integrator", "variant", "threads", "block_layout", "tile", "dtype")


class CHSweepTab(QWidget):
    """Controls for the swept parameters + the sweep panel + the live plot.  ``params()``: the
    Parameters panel's current CHParams (the fixed values of every run); ``message(text, level)``:
    where notices go."""

    def __init__(self, params, message, parent=None):
        super().__init__(parent)
        self.params = params
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.ed_axes = {}
        for name, default, unit in (("mean", "-0.6:0.6:7", "initial mean φ"),
                                    ("noise", "0.1", "uniform noise amplitude ±"),
                                    ("seed", "1..3", "random seed")):
            ed = QLineEdit(default)
            ed.setToolTip(f"{unit}. {AXES_TIP}")
            self.ed_axes[name] = ed
            form.addRow(name, ed)
        self.ed_more = QLineEdit()
        self.ed_more.setPlaceholderText("more, e.g.  dt=0.005,0.01  K=0.5:2:4")
        self.ed_more.setToolTip("Further swept parameters as NAME=VALUES separated by spaces (any Cahn–Hilliard "
                                f"parameter: dt, K, m, b, u, size, integrator …). {AXES_TIP}")
        form.addRow("also vary", self.ed_more)
        run = QHBoxLayout()
        self.sp_steps = QSpinBox()
        self.sp_steps.setRange(1, 10_000_000)
        self.sp_steps.setValue(2000)
        self.sp_steps.setToolTip("Time steps per run (each of dt)")
        self.sp_size = QSpinBox()
        self.sp_size.setRange(8, 32768)
        self.sp_size.setValue(128)
        self.sp_size.setToolTip("Cells per side of every run's grid")
        self.sp_every = QSpinBox()
        self.sp_every.setRange(1, 1_000_000)
        self.sp_every.setValue(100)
        self.sp_every.setToolTip("Diagnostics every N steps: the length scale L(t) behind the coarsening-exponent fit")
        self.cb_backend = QComboBox()
        self.cb_backend.addItems(["auto", "cpu", "gpu"])
        self.cb_backend.setToolTip("Array backend on each worker: auto (its GPU when it has one), cpu or gpu")
        for lab, w in (("steps", self.sp_steps), ("size", self.sp_size), ("every", self.sp_every),
                       ("backend", self.cb_backend)):
            ql = QLabel(lab)
            ql.setToolTip(w.toolTip())
            run.addWidget(ql)
            run.addWidget(w)
        form.addRow("each run", run)
        lay.addLayout(form)
        self.panel = SweepPanel(self.make_sweep, message=message, unit="runs")
        for bt, tip in ((self.panel.bt_run, "Run every combination of the swept values, each a Cahn–Hilliard run "
                                            "from the Parameters panel's values (progress below; Cancel stops)"),
                        (self.panel.bt_csv, "Save the finished runs' rows (parameters and results) as CSV"),
                        (self.panel.bt_file, "Choose the result file the rows are appended to")):
            if not bt.toolTip():
                bt.setToolTip(tip)
        self.panel.row.connect(lambda _r: self.redraw())
        self.panel.started.connect(self.redraw)
        lay.addWidget(self.panel)
        prow = QHBoxLayout()
        self.cb_y = QComboBox()
        self.cb_y.addItems(list(QUANTITIES))
        self.cb_y.setToolTip("Quantity plotted: mean over the runs that share the x value, error bar = standard "
                             "deviation (e.g. over seeds)")
        self.cb_x = QComboBox()
        self.cb_x.addItems(["mean"])
        self.cb_x.setToolTip("Swept parameter on the x axis")
        self.cb_y.currentIndexChanged.connect(self.redraw)
        self.cb_x.currentIndexChanged.connect(self.redraw)
        prow.addWidget(QLabel("plot"))
        prow.addWidget(self.cb_y, 2)
        prow.addWidget(QLabel("against"))
        prow.addWidget(self.cb_x, 1)
        lay.addLayout(prow)
        self.plot = plot_panel(grid=True, min_height=160)
        self.curve = self.plot.plot([], [], pen=pg.mkPen((31, 119, 180), width=2), symbol="o", symbolSize=7,
                                    symbolBrush=(31, 119, 180))
        self.scatter = pg.ScatterPlotItem(size=4, brush=pg.mkBrush(31, 119, 180, 90), pen=None)
        self.errors = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), height=np.zeros(0), beam=0.0,
                                      pen=pg.mkPen((31, 119, 180)))
        self.plot.addItem(self.scatter)
        self.plot.addItem(self.errors)
        lay.addWidget(self.plot, 1)
        self.stats: list[dict] = []

    # ------------------------------------------------------------ the sweep
    def axes(self) -> dict:
        """{name: values} of the swept parameters (empty fields are not swept)."""
        specs = [f"{n}={ed.text().strip()}" for n, ed in self.ed_axes.items() if ed.text().strip()]
        specs += self.ed_more.text().split()
        axes = parse_axes(specs)
        if not axes:
            raise InvalidParameter("give values to sweep for at least one parameter (e.g. mean = -0.6:0.6:7)")
        return axes

    def make_sweep(self, path, mode, scheduler, workers) -> Sweep:
        axes = self.axes()
        p = self.params()
        fixed = {k: getattr(p, k) for k in FIXED_FIELDS if k not in axes}
        if fixed.get("initial") == "file":
            fixed["initial"] = "spinodal"
        task = make_task("ch", steps=self.sp_steps.value(), record_every=self.sp_every.value(),
                         backend=self.cb_backend.currentText(), size=self.sp_size.value(), **fixed)
        sweep = Sweep(task, product(axes), path=path, mode=mode, scheduler=scheduler, workers=workers)
        cur = self.cb_x.currentText()
        self.cb_x.blockSignals(True)
        self.cb_x.clear()
        self.cb_x.addItems(list(axes))
        self.cb_x.setCurrentText(cur if cur in axes else next(iter(axes)))
        self.cb_x.blockSignals(False)
        return sweep

    # ------------------------------------------------------------- the plot
    def redraw(self):
        rows = self.panel.rows
        x, ykey = self.cb_x.currentText(), QUANTITIES[self.cb_y.currentText()]
        self.plot.setLabel("bottom", x)
        self.plot.setLabel("left", self.cb_y.currentText())
        self.stats = group_stats(rows, x, ykey) if x else []
        num = [s for s in self.stats if isinstance(s["x"], (int, float))]
        xs = np.array([s["x"] for s in num], float)
        ys = np.array([s["mean"] for s in num], float)
        sd = np.array([s["std"] for s in num], float)
        self.curve.setData(xs, ys)
        self.errors.setData(x=xs, y=ys, height=2 * sd)
        pts = [(r[x], r[ykey]) for r in rows if isinstance(r.get(x), (int, float))
               and isinstance(r.get(ykey), (int, float)) and np.isfinite(r[ykey])]
        self.scatter.setData([a for a, _ in pts], [b for _, b in pts])

    # ------------------------------------------------------------- settings
    def state(self) -> dict:
        return {"axes": {n: ed.text() for n, ed in self.ed_axes.items()}, "more": self.ed_more.text(),
                "steps": self.sp_steps.value(), "size": self.sp_size.value(), "every": self.sp_every.value(),
                "backend": self.cb_backend.currentText(), "y": self.cb_y.currentText(),
                "panel": self.panel.state()}

    def restore(self, state) -> None:
        if not isinstance(state, dict):
            return
        for n, v in (state.get("axes") or {}).items():
            if n in self.ed_axes and isinstance(v, str):
                self.ed_axes[n].setText(v)
        if isinstance(state.get("more"), str):
            self.ed_more.setText(state["more"])
        for key, sp in (("steps", self.sp_steps), ("size", self.sp_size), ("every", self.sp_every)):
            if isinstance(state.get(key), int):
                sp.setValue(state[key])
        if state.get("backend") in ("auto", "cpu", "gpu"):
            self.cb_backend.setCurrentText(state["backend"])
        if state.get("y") in QUANTITIES:
            self.cb_y.setCurrentText(state["y"])
        self.panel.restore(state.get("panel"))


def add_sweep_dock(ws) -> LazyPanel:
    """The Sweep tab as a dock of the Cahn–Hilliard workspace, tabbed with its Diagnostics dock; the
    :class:`CHSweepTab` is built the first time the dock shows or it is asked for (:func:`lazy_dock`)."""
    return lazy_dock(ws, "Sweep", "ch_sweep", lambda: CHSweepTab(lambda: ws.sim.params, ws.message_bar.show_message))
