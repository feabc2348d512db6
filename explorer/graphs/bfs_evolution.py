"""The "BFS kernels" and "Block sweep" tabs: paper 000 §4.3's kernel evolution (Figs. 10–13) and
kernel 7's block-size sweep (Fig. 15), re-run off the GUI thread and plotted live (compute in
kernels.graphs.experiments.bfs_evolution; the run / cancel / end cycle is a composed
explorer.sweep_runner.SweepRunner)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGridLayout, QHBoxLayout, QLabel,
                             QLineEdit, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from kernels.errors import InvalidParameter
from kernels.graphs.experiments import bfs_evolution as E
from kernels.graphs.experiments import reproduce as rp
from kernels.graphs.apsp import METHODS

from ..log_axis import log_axes
from ..sweep_runner import SweepRunner, forwards_to_runner
from .emulated import HOST_TIP, label
from .reproduce import LEGEND
from kernels.gpu import launch_occupancy

#: kernel -> colour (K1 … K7 along a colour ramp, the two beyond-the-paper kernels apart)
KCOLOR = {k: pg.intColor(i, hues=9, values=1, maxValue=220) for i, k in enumerate(E.KERNELS + E.EXTRA)}
SHORT = {**{f"gpu-bfs-k{i}": f"K{i}" for i in range(1, 8)}, "gpu-bfs": "K7c", "gpu-msbfs": "MS-BFS"}
#: sizes that finish in about a minute per kernel with one source per BFS (the paper's take hours)
QUICK_SIZES = {"alpha-ring": "250, 500, 1000", "alpha": "1000, 2000, 4000", "ba": "1000, 2000, 4000"}


def parse_sizes(text: str, label: str) -> list[int]:
    try:
        ns = sorted({int(s) for s in str(text).replace(";", ",").split(",") if s.strip()})
    except ValueError:
        raise InvalidParameter(f"{label}: sizes N must be whole numbers separated by commas (got {text!r})") from None
    if len(ns) < 2 or ns[0] < rp.MIN_N or ns[-1] > rp.MAX_N:
        raise InvalidParameter(f"{label}: give at least two sizes N in {rp.MIN_N} … {rp.MAX_N}")
    return ns


def _spin(lo, hi, value, tip, step=1):
    sp = QSpinBox()
    sp.setRange(lo, hi)
    sp.setSingleStep(step)
    sp.setValue(value)
    sp.setToolTip(tip)
    return sp


@forwards_to_runner
class _Panel(QWidget):
    """Shared parts: type check boxes, the run row (a composed :class:`SweepRunner`), plots and exports."""

    CSV_NAME = "bfs.csv"
    EXPERIMENT = None

    def _compose_runner(self, backend, message, run_text: str, run_tip: str, lay) -> None:
        self.backend, self.message = backend, message
        self.runner = SweepRunner(self, run=self.run, redraw=self._redraw, summary=self._summary,
                                  export_plots=self.export_plots, message=message, experiment=self.EXPERIMENT,
                                  csv_name=self.CSV_NAME, csv_empty="Run it first.", run_text=run_text)
        self.runner.lay_out(lay, run_tip)

    def _types_row(self, form, with_sizes: bool):
        self.ck_type, self.ed_sizes = {}, {}
        grid = QGridLayout()
        for i, t in enumerate(E.TYPES):
            ck = QCheckBox(LEGEND[t])
            ck.setChecked(True)
            ck.setToolTip(f"Paper 000 graph type {E.TYPE_LABELS[t]}; paper slopes of time vs N "
                          f"{E.PAPER_SLOPES[t][0]}–{E.PAPER_SLOPES[t][1]}")
            self.ck_type[t] = ck
            grid.addWidget(ck, i, 0)
            if with_sizes:
                host = E.emulated(self.backend)             # the CUDA source on the CPU: smaller sizes
                ed = QLineEdit(", ".join(map(str, E.HOST_QUICK_SIZES[t])) if host else QUICK_SIZES[t])
                ed.setToolTip("Sizes N (vertices), comma-separated, at least two. Paper 000: 1 000 … 30 000 "
                              "(hours with one source per BFS)")
                self.ed_sizes[t] = ed
                grid.addWidget(ed, i, 1)
        grid.setColumnStretch(1, 1)
        form.addRow("graph types", grid)

    def types(self) -> list[str]:
        return [t for t, ck in self.ck_type.items() if ck.isChecked()]

    def _idle(self) -> bool:
        """No job running (the kernels run on any backend: their CUDA source on the CPU without a GPU)."""
        return self.job is None

    def export_plots(self, path=None):
        return self.runner.export_widget(path, self.CSV_NAME.replace(".csv", ".png"), self.plots, "BFS kernels")

    def _restore_common(self, state: dict) -> None:
        if isinstance(state.get("types"), list):
            for t, ck in self.ck_type.items():
                ck.setChecked(t in state["types"])
        for key, sp in self._spins.items():
            v = state.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and sp.minimum() <= v <= sp.maximum():
                sp.setValue(int(v))


class BFSEvolutionPanel(_Panel):
    """Kernel evolution: controls, one log–log plot per graph type (paper Figs. 11–13), the slopes
    and the per-kernel % changes at the largest N (Fig. 10) in the summary."""

    CSV_NAME = "bfs_evolution.csv"
    EXPERIMENT = E.EVOLUTION

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self._types_row(form, with_sizes=True)
        self.bt_paper = QPushButton("Paper sizes")
        self.bt_paper.setToolTip("Fill in paper 000's N = 1 000, 5 000, …, 30 000 for every type (one source per "
                                 "BFS: hours for type (1); use more sources per launch)")
        self.bt_paper.clicked.connect(lambda: [ed.setText(", ".join(map(str, E.PAPER_SIZES)))
                                               for ed in self.ed_sizes.values()])
        form.addRow("", self.bt_paper)
        grid = QGridLayout()
        self.ck_kernel = {}
        for i, k in enumerate(E.KERNELS + E.EXTRA):
            host = E.emulated(self.backend)
            ck = QCheckBox(label(SHORT[k], host))
            ck.setChecked(k in E.KERNELS)
            ck.setToolTip(METHODS[k].help + (HOST_TIP if host else ""))
            self.ck_kernel[k] = ck
            grid.addWidget(ck, i // 5, i % 5)
        form.addRow("kernels", grid)
        nums = QHBoxLayout()
        self._spins = {
            "instances": _spin(1, 50, 2, "Graph instances per (type, N); times are normalised by Eq. 3 (paper: 10)"),
            "batch": _spin(1, 60000, 1, "Sources per launch: 1 = the paper's one source per BFS; more = the "
                                        "kernels' multi-source form (beyond the paper)"),
            "block": _spin(32, 1024, E.PAPER_BLOCK,
                           "Threads per block (paper 000: 256)", 32),
            "seed": _spin(0, 2**31 - 1, 1, "Random seed of the first instance"),
        }
        for name, sp in self._spins.items():
            lab = QLabel(name)
            lab.setToolTip(sp.toolTip())
            nums.addWidget(lab)
            nums.addWidget(sp)
        nums.addStretch(1)
        form.addRow("runs", nums)
        lay.addLayout(form)
        self._compose_runner(backend, message, "Run kernels",
                             "Time every chosen kernel on every chosen (type, N) off the GUI thread", lay)
        self.lbl.setText("Paper 000 Figs. 11–13: time ∝ N^slope, type (1) 2.04–2.45, (2) 1.49–1.94, (3) 1.51–1.71.")
        self.plots = pg.GraphicsLayoutWidget()
        self.p = {}
        for i, t in enumerate(E.TYPES):
            p = self.plots.addPlot(row=0, col=i, title=LEGEND[t], axisItems=log_axes())
            p.setLogMode(x=True, y=True)
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "N")
            p.setLabel("left", "seconds (Eq. 3)")
            self.p[t] = p
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=5)
        self.plots.addItem(self.legend, row=1, col=0, colspan=3)
        self.plots.setToolTip("Eq. 3-normalised GPU time (without the copy of the result) against N, log–log, "
                              "one plot per graph type; legend: fitted slope per kernel")
        lay.addWidget(self.plots, 1)

    def state(self) -> dict:
        return {"types": self.types(), "sizes": {t: ed.text() for t, ed in self.ed_sizes.items()},
                "kernels": [k for k, ck in self.ck_kernel.items() if ck.isChecked()],
                **{k: sp.value() for k, sp in self._spins.items()}}

    def restore(self, state) -> None:
        if not isinstance(state, dict):
            return
        self._restore_common(state)
        if isinstance(state.get("sizes"), dict):
            for t, ed in self.ed_sizes.items():
                if isinstance(state["sizes"].get(t), str):
                    ed.setText(state["sizes"][t])
        if isinstance(state.get("kernels"), list):
            for k, ck in self.ck_kernel.items():
                ck.setChecked(k in state["kernels"])

    def run(self) -> bool:
        if not self._idle():
            return False
        try:
            types = E.check_types(self.types())
            sizes = {t: parse_sizes(self.ed_sizes[t].text(), LEGEND[t]) for t in types}
            kernels = E.check_kernels([k for k, ck in self.ck_kernel.items() if ck.isChecked()], self.backend)
            v = {k: sp.value() for k, sp in self._spins.items()}
            E.check_host(types, [max(sizes[t]) for t in types], kernels, self.backend, v["batch"], v["block"],
                         v["seed"])                        # the CUDA source on the CPU: the host limit
        except InvalidParameter as exc:
            self.runner.say(str(exc))
            return False
        self.rows = []
        self._redraw()
        self.lbl.setText("Timing …")

        def rows(cancelled):
            for t in types:
                yield from E.run_evolution([t], sizes[t], kernels, v["instances"], self.backend, v["batch"],
                                           v["block"], v["seed"], cancel=cancelled)

        self.runner.start("BFS kernel evolution", rows,
                          sum(len(s) for s in sizes.values()) * v["instances"] * len(kernels))
        return True

    def _summary(self) -> str:
        if not self.rows:
            return "No points timed."
        fits, pct = E.fit_slopes(self.rows), E.percent_changes(self.rows)
        lines = []
        for t in [t for t in E.TYPES if any(r.type == t for r in self.rows)]:
            lo, hi = E.PAPER_SLOPES[t]
            sl = ", ".join(f"{SHORT[k]} {fits[t, k]:.2f}" for k in self.ck_kernel if (t, k) in fits)
            ch = []
            for k in E.KERNELS[1:]:
                if (t, k) in pct and np.isfinite(pct[t, k][0]):
                    ch.append(f"{SHORT[k]} {pct[t, k][0]:+.0f}% (paper: {E.PAPER_EFFECT[k][t]})")
            lines.append(f"{LEGEND[t]}: slopes {sl or '(need ≥ 2 sizes)'} — paper {lo}–{hi}."
                         + (f" At the largest N, vs parent: {'; '.join(ch)}." if ch else ""))
        bad = [r for r in self.rows if not r.agrees]
        lines.append("Warning: some kernels' hop counts differ." if bad else "All kernels give the same hop counts.")
        return "\n".join(lines)

    def _redraw(self):
        for p in self.p.values():
            p.clear()
        self.legend.clear()
        if not self.rows:
            return
        mt, fits, named = E.mean_times(self.rows), E.fit_slopes(self.rows), set()
        for t, p in self.p.items():
            for k in E.KERNELS + E.EXTRA:
                ns = sorted(n for (tt, kk, n) in mt if tt == t and kk == k)
                if not ns:
                    continue
                item = p.plot(ns, [mt[t, k, n] for n in ns], pen=pg.mkPen(KCOLOR[k], width=2), symbol="o",
                              symbolSize=6, symbolBrush=KCOLOR[k])
                if k not in named:
                    named.add(k)
                    self.legend.addItem(item, SHORT[k] + (f" ({fits[t, k]:.2f})" if (t, k) in fits else ""))


class BlockSweepPanel(_Panel):
    """Fig. 15: time of one BFS kernel against the block size, theoretical occupancy beside it."""

    CSV_NAME = "bfs_block_sweep.csv"
    EXPERIMENT = E.BLOCK_SWEEP

    def __init__(self, backend, message=None, parent=None):
        super().__init__(parent)
        self.backend = backend
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self._types_row(form, with_sizes=False)
        self.ed_n = QLineEdit(", ".join(map(str, E.HOST_SWEEP_SIZES)) if E.emulated(backend) else "2000, 10000")
        self.ed_n.setToolTip("Sizes N, comma-separated (paper 000 Fig. 15: 10 000 and 30 000)")
        form.addRow("N", self.ed_n)
        self.cb_kernel = QComboBox()
        for k in E.KERNELS + ("gpu-bfs",):
            self.cb_kernel.addItem(label(SHORT[k], E.emulated(backend)), k)
        self.cb_kernel.setCurrentIndex(6)
        self.cb_kernel.setToolTip("The kernel swept (paper: kernel 7)")
        form.addRow("kernel", self.cb_kernel)
        nums = QHBoxLayout()
        self._spins = {"repeats": _spin(1, 50, E.SWEEP_REPEATS, "Runs per block size, averaged (paper: 5)"),
                       "batch": _spin(1, 60000, 60000, "Sources per launch (1 = the paper's; capped at N)"),
                       "seed": _spin(0, 2**31 - 1, 1, "Random seed of the instance")}
        for name, sp in self._spins.items():
            lab = QLabel(name)
            lab.setToolTip(sp.toolTip())
            nums.addWidget(lab)
            nums.addWidget(sp)
        nums.addStretch(1)
        form.addRow("runs", nums)
        lay.addLayout(form)
        self._compose_runner(backend, message, "Run sweep",
                             "Blocks 32 … 512 in steps of 32 on one instance per (type, N)", lay)
        self.lbl.setText("Paper 000 Fig. 15: 256 is a good block size overall; the best one differs by graph type.")
        self.plots = pg.GraphicsLayoutWidget()
        self.p_time = self.plots.addPlot(row=0, col=0, title="time / mean path vs block (Fig. 15)")
        self.p_occ = self.plots.addPlot(row=1, col=0, title="theoretical occupancy" + (
            " (GPU only: none for the CUDA source run on the CPU)" if E.emulated(backend) else ""))
        self.p_occ.setXLink(self.p_time)
        for p, ylab in ((self.p_time, "seconds per hop of mean path"), (self.p_occ, "occupancy %")):
            p.showGrid(x=True, y=True, alpha=0.3)
            p.setLabel("bottom", "threads per block")
            p.setLabel("left", ylab)
        self.p_occ.setYRange(0, 100)
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=6)
        self.plots.addItem(self.legend, row=2, col=0)
        lay.addWidget(self.plots, 1)

    def state(self) -> dict:
        return {"types": self.types(), "n": self.ed_n.text(), "kernel": self.cb_kernel.currentData(),
                **{k: sp.value() for k, sp in self._spins.items()}}

    def restore(self, state) -> None:
        if not isinstance(state, dict):
            return
        self._restore_common(state)
        if isinstance(state.get("n"), str):
            self.ed_n.setText(state["n"])
        i = self.cb_kernel.findData(state.get("kernel"))
        if i >= 0:
            self.cb_kernel.setCurrentIndex(i)

    def run(self) -> bool:
        if not self._idle():
            return False
        try:
            types = E.check_types(self.types())
            ns = sorted({int(s) for s in self.ed_n.text().replace(";", ",").split(",") if s.strip()})
            if not ns or ns[0] < rp.MIN_N or ns[-1] > rp.MAX_N:
                raise InvalidParameter(f"sizes N must lie in {rp.MIN_N} … {rp.MAX_N}")
            v = {k: sp.value() for k, sp in self._spins.items()}
            kernel = self.cb_kernel.currentData()
            E.check_host(types, [max(ns)], [kernel], self.backend, min(v["batch"], max(ns)), max(E.SWEEP_BLOCKS),
                         v["seed"])                        # the CUDA source on the CPU: the host limit
        except (InvalidParameter, ValueError) as exc:
            self.runner.say(str(exc) if isinstance(exc, InvalidParameter) else f"sizes N must be whole numbers ({exc})")
            return False
        self.rows = []
        self._redraw()

        def rows(cancelled):
            occupancy_of = launch_occupancy if not E.emulated(self.backend) else None
            for t in types:
                for n in ns:
                    yield from E.run_block_sweep([t], [n], E.SWEEP_BLOCKS, kernel, v["repeats"], min(v["batch"], n),
                                                 self.backend, v["seed"], cancel=cancelled,
                                                 occupancy_of=occupancy_of)

        self.runner.start("Block-size sweep", rows, len(types) * len(ns) * len(E.SWEEP_BLOCKS))
        return True

    def _summary(self) -> str:
        if not self.rows:
            return "No points timed."
        best = E.best_blocks(self.rows)
        r0 = self.rows[-1]
        return ("Fastest block: " + "; ".join(f"{LEGEND[t]} N = {n:,}: {b}" for (t, n), b in best.items())
                + f". {r0.kernel}: {r0.registers} registers/thread.")

    def _redraw(self):
        self.p_time.clear()
        self.p_occ.clear()
        self.legend.clear()
        keys = sorted({(r.type, r.n) for r in self.rows}, key=lambda k: (E.TYPES.index(k[0]), k[1]))
        for i, (t, n) in enumerate(keys):
            rs = sorted((r for r in self.rows if (r.type, r.n) == (t, n)), key=lambda r: r.block)
            col = pg.intColor(i, hues=max(3, len(keys)))
            item = self.p_time.plot([r.block for r in rs], [r.normalised for r in rs], pen=pg.mkPen(col, width=2),
                                    symbol="o", symbolSize=6, symbolBrush=col)
            self.legend.addItem(item, f"{LEGEND[t]} N = {n:,}")
        if self.rows:
            occ = {r.block: 100 * r.occupancy for r in self.rows}
            bs = sorted(occ)
            self.p_occ.plot(bs, [occ[b] for b in bs], pen=pg.mkPen((120, 120, 120), width=2), symbol="s", symbolSize=5)
