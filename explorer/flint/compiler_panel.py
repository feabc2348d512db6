"""The Flint "Compiler" tab: DAG levels (bar chart), bytecode listing, effect of each optimisation.

A view only: the numbers come from ``kernels.flint.compiler`` (``compile_model``, ``Program.stats``,
``optimization_report``; paper 004 §5.4, Tables 5.6–5.7).  Compiling and the report (ten compiles)
run on a worker thread; a newer request supersedes an older one.
"""
from __future__ import annotations

import csv

import numpy as np
import pyqtgraph as pg
from PyQt6 import sip
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QFontDatabase
from PyQt6.QtWidgets import (QCheckBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton,
                             QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from kernels.flint import CompileOptions, compile_model
from kernels.flint.compiler import OPTIMIZATIONS, optimization_report, report_table

from ..export import Figure, guarded, save_figure, write_file
from ..jobs import FunctionJob

TIPS = {"cse": "share common subexpressions (hash-consed DAG)", "fold": "fold constant arithmetic",
        "nary": "n-ary ADD/MUL instead of binary chains", "merge": "merge phases: ≤ 3 functions a thread (§5.4.1)",
        "reorder": "sort threads by opcode-sequence length, then lexicographically (§5.4.2)",
        "remap": "number variable slots by first use", "unify": "one bytecode for all members (CONST_IND)",
        "redundant": "pad sets of equal opcode sequences to whole warps (thread-per-expression mapping)",
        "sum": "split sums of ≥ 32 terms over a warp, WARP_SUM reduction (thread-per-expression mapping)"}


#: the widest the listing is made to show its bytecode unclipped (beyond it, a scroll bar)
MAX_LISTING_PX = 640


def _compile(args: tuple, options: CompileOptions):
    """The compiled program and the optimisation report (ten compiles), in the worker thread."""
    model, n, member, network = args
    return compile_model(model, n, member, network, options), optimization_report(model, n, member, network, options)


class CompilerPanel(QWidget):
    """Options (checkboxes) → DAG levels chart, bytecode listing, optimisation-effect table."""
    updated = pyqtSignal()

    def __init__(self, parent=None, message=None):
        super().__init__(parent)
        self.message = message           # message(text, level): failures and written files
        self._token = 0
        self._jobs: list = []
        self._args = None
        self.prog = None
        self._code = ""                  # the bytecode lines of the listing
        self.report: list = []
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(QLabel("Optimisations:"))
        self.checks: dict[str, QCheckBox] = {}
        for name in OPTIMIZATIONS:
            cb = QCheckBox(name)
            cb.setChecked(True)
            cb.setToolTip(TIPS[name])
            cb.toggled.connect(self._recompute)
            self.checks[name] = cb
            row.addWidget(cb)
        row.addStretch(1)
        self.status = QLabel("")
        row.addWidget(self.status)
        lay.addLayout(row)
        split = QSplitter(Qt.Orientation.Vertical)
        top = QSplitter(Qt.Orientation.Horizontal)
        self.levels = pg.PlotWidget(background="w")
        self.levels.setLabel("bottom", "DAG level (ODE phase last)")
        self.levels.setLabel("left", "functions")
        self.levels.setTitle("Functions per DAG level")
        self.bars = None
        top.addWidget(self.levels)
        # the listing: monospace; the long summary lines wrap at the width, the bytecode lines fit
        # (the listing is kept as wide as its longest bytecode line: nothing is clipped)
        self.listing = QPlainTextEdit(readOnly=True)
        self.listing.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.listing.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.listing.setToolTip("The compiled program: a summary, then the bytecode (address, opcode, operands; "
                                "after ';' the constant or variable named)")
        top.addWidget(self.listing)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        self._top = top
        split.addWidget(top)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        split.addWidget(self.table)
        lay.addWidget(split, 1)
        brow = QHBoxLayout()
        self.levels.setToolTip("Functions per DAG level (paper 004 §5.4): one phase per level, the ODE phase last "
                               "(orange)")
        self.table.setToolTip("The effect of each optimisation: the program with the option off ⇒ on, the other "
                              "options as ticked")
        self.bt_csv = QPushButton("Export table (CSV)…")
        self.bt_csv.setToolTip("Save the optimisation table as CSV")
        self.bt_csv.clicked.connect(lambda: self.export_table())
        self.bt_chart = QPushButton("Export chart (PNG/SVG)…")
        self.bt_chart.setToolTip("Save the DAG-levels chart as PNG or SVG")
        self.bt_chart.clicked.connect(lambda: self.export_chart())
        brow.addWidget(QLabel("Table: each option off ⇒ on, the others as ticked; a→b→c = per phase."))
        brow.addStretch(1)
        brow.addWidget(self.bt_csv)
        brow.addWidget(self.bt_chart)
        lay.addLayout(brow)

    # ------------------------------------------------------------------ requests
    def options(self) -> CompileOptions:
        return CompileOptions(**{k: cb.isChecked() for k, cb in self.checks.items()})

    def set_option(self, name: str, on: bool) -> None:
        self.checks[name].setChecked(bool(on))

    def request(self, model, n: int, member: dict, network) -> None:
        """Compile ``model`` (n members, per-member parameters, network) in the background."""
        self._args = (model, n, member, network)
        self._recompute()

    def _recompute(self, *_a) -> None:
        if self._args is None:
            return
        self._token += 1
        token, args, options = self._token, self._args, self.options()
        job = FunctionJob("compiling the model", lambda _progress, _cancelled: _compile(args, options))
        job.done.connect(lambda res: self._on_result(token, res))
        job.failed.connect(lambda msg: self._on_failed(token, msg))
        job.finished.connect(lambda j=job: self._jobs.remove(j) if j in self._jobs else None)
        self._jobs.append(job)
        self.status.setText("compiling…")
        job.start()

    def busy(self) -> bool:
        return bool(self._jobs)

    def shutdown(self) -> None:
        for j in list(self._jobs):
            j.wait(10000)

    def _current(self, token: int) -> bool:
        """A compile result is shown only when it is the latest request's and the panel still exists (a
        window closed and deleted while its compile ran would otherwise get it)."""
        return not sip.isdeleted(self) and token == self._token

    def _on_failed(self, token: int, msg: str) -> None:
        if not self._current(token):
            return
        self.prog = None
        self.status.setText("")
        self.listing.setPlainText(f"cannot compile: {msg}")
        self.updated.emit()

    def _on_result(self, token: int, result) -> None:
        if not self._current(token):
            return                                   # superseded by a newer request, or deleted
        prog, rep = result
        self.prog, self.report = prog, rep
        st = prog.stats()
        head = [f"model {prog.model.name}: {st['functions']} functions ({st['cse_temps']} shared subexpressions), "
                f"{st['odes']} ODEs",
                f"DAG levels (functions per level, ODE phase last): {prog.level_counts}",
                f"phases: {st['threads_per_phase']} threads; opcode sequences {st['opcode_sequences_per_phase']}",
                f"thread per cell: bytecode {st['bytecode_words']} words, {st['constants']} constants, "
                f"{st['slots']} slots, stack {st['stack_depth']}",
                f"thread per expression: lanes {st['expr_lanes_per_phase']}, divergent warps "
                f"{st['expr_divergent_warps']}, sum warps {st['expr_sum_warps']}, "
                f"unified warps {st['expr_unified_warps']} (lane table {st['expr_lane_table_words']} words), "
                f"bytecode {st['expr_bytecode_words']} words", ""]
        self._code = prog.listing()
        self.listing.setPlainText("\n".join(head) + self._code)
        self._fit_listing()
        self.levels.clear()
        counts = list(prog.level_counts)
        x = np.arange(1, len(counts) + 1)
        brushes = ["#1f5fa0"] * (len(counts) - 1) + ["#c05020"]
        self.bars = pg.BarGraphItem(x=x, height=counts, width=0.7, brushes=brushes)
        self.levels.addItem(self.bars)
        header, rows = report_table(rep)
        self.table.setColumnCount(len(header))
        self.table.setHorizontalHeaderLabels([h.replace("_", " ") for h in header])
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                it = QTableWidgetItem(text)
                if "⇒" in text:
                    it.setBackground(pg.mkColor("#fff2cc"))
                self.table.setItem(r, c, it)
        self.status.setText(f"{len(prog.phases)} phases")
        self.updated.emit()

    def _fit_listing(self) -> None:
        """The listing is at least as wide as its longest bytecode line (up to :data:`MAX_LISTING_PX`):
        the splitter cannot clip it; only the summary lines above wrap."""
        fm = self.listing.fontMetrics()
        widest = max((fm.horizontalAdvance(line) for line in self._code.splitlines()), default=0)
        need = widest + 2 * self.listing.frameWidth() + int(2 * self.listing.document().documentMargin()) \
            + self.listing.verticalScrollBar().sizeHint().width() + 4
        self.listing.setMinimumWidth(min(need, MAX_LISTING_PX))

    # ------------------------------------------------------------------ export
    def table_rows(self) -> tuple[list[str], list[list[str]]]:
        return report_table(self.report)

    def _say(self, text: str, level: str = "error") -> None:
        if self.message is not None:
            self.message(text, level)
        self.status.setText(text)

    def export_table(self, path: str | None = None):
        """The optimisation table as CSV; the path written, or None."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export optimisation table", "flint_optimizations.csv",
                                                  "CSV (*.csv)")
            if not path:
                return None
        header, rows = self.table_rows()

        def write(tmp):
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                w.writerows(rows)
        out = guarded(self._say, f"export the table to {path}", lambda: write_file(path, (".csv",), write, "CSV file"))
        if out is not None:
            self._say(f"Wrote {out}", "info")
        return out

    def export_chart(self, path: str | None = None):
        """The DAG-levels chart as PNG or SVG; the path written, or None."""
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export DAG levels", "flint_levels.png",
                                                  "PNG (*.png);;SVG (*.svg)")
            if not path:
                return None
        name = self.prog.model.name if self.prog is not None else ""
        out = guarded(self._say, f"export the chart to {path}", lambda: save_figure(
            Figure("DAG levels", widget=self.levels), path, footer=f"Flint DAG levels — {name}"))
        if out is not None:
            self._say(f"Wrote {out}", "info")
        return out

    def level_counts(self) -> list:
        return list(self.prog.level_counts) if self.prog is not None else []
