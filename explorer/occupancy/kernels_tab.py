"""The Occupancy workspace's *My kernels* tab (:class:`KernelsTab`, a composed part): every app kernel
compiled so far with its registers, shared memory and occupancy on this GPU (``kernels.occupancy.gpu``),
a button that compiles them all, a measured block-size sweep beside the theoretical occupancy (paper
003's argument); selecting a kernel emits ``kernel_chosen(row)`` (the workspace loads it into the
calculator).  It owns its rows and needs only the GPU's spec (None without a GPU)."""
from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtCore import QEvent, QSize, Qt, pyqtSignal
from PyQt6.QtGui import QBrush, QColor, QFont
from PyQt6.QtWidgets import (QAbstractItemView, QApplication, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                             QSizePolicy, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from kernels import launches
from kernels.occupancy.gpu import app_kernel_table, block_size_sweep

from ..widgets import plot_panel
from .charts import CURVE_PEN

#: the calculator's compute-capability choice meaning "this GPU" (its own spec, from the driver)
DEVICE = "device"


def plural(n: int, noun: str) -> str:
    """'1 block', '2 blocks', '0 blocks' (the workspace's counts in words)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class FittedTable(QTableWidget):
    """A table as tall as its header and all its rows — no row behind a vertical scroll bar — also
    after its rows or fonts change (lecture mode): rows sized to their text, the height asked of the
    layout following the header's sections."""

    def __init__(self, rows: int, cols: int, parent=None, min_row: int = 21):
        super().__init__(rows, cols, parent)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWordWrap(False)                  # one line a row: a narrow column must not make rows tall
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().setMinimumSectionSize(min_row)
        self.setSizePolicy(self.sizePolicy().horizontalPolicy(), QSizePolicy.Policy.Fixed)
        self.verticalHeader().sectionResized.connect(lambda *_: self.updateGeometry())
        self.horizontalHeader().geometriesChanged.connect(self.updateGeometry)

    def full_height(self) -> int:
        """Header + every row + frame (+ a horizontal scroll bar when one shows)."""
        header = self.horizontalHeader()
        hh = 0 if header.isHidden() else max(header.height(), header.sizeHint().height())
        sb = self.horizontalScrollBar()
        extra = sb.sizeHint().height() if sb.isVisible() else 0
        return hh + self.verticalHeader().length() + 2 * self.frameWidth() + extra

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.full_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), self.full_height())

    def changeEvent(self, event):
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.resizeRowsToContents()
            self.updateGeometry()


def table_item(text, tip: str = "", bold: bool = False, bg: QColor | None = None) -> QTableWidgetItem:
    """A read-only table cell: ``tip`` as its tooltip, bold, or on background ``bg`` (black text)."""
    it = QTableWidgetItem(str(text))
    it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if tip:
        it.setToolTip(tip)
    if bold:
        f = QFont()
        f.setBold(True)
        it.setFont(f)
    if bg is not None:
        it.setBackground(QBrush(bg))
        it.setForeground(QBrush(QColor("black")))   # readable on the highlight in every theme
    return it


class KernelsTab(QWidget):
    """The *My kernels* tab.  ``device_spec``: this GPU's spec (``kernels.occupancy.gpu.device_spec``)
    or None (the buttons are disabled and a note says why, ``why``).  Signals: ``kernel_chosen(row)``
    (a row of :meth:`refresh_kernels` selected), ``message(text, level)``."""

    kernel_chosen = pyqtSignal(dict)
    message = pyqtSignal(str, str)

    def __init__(self, device_spec=None, why: str = "", parent=None):
        super().__init__(parent)
        self._device_spec = device_spec
        self.kernel_rows: list[dict] = []
        v = QVBoxLayout(self)
        self.kernels_note = QLabel()
        self.kernels_note.setWordWrap(True)
        v.addWidget(self.kernels_note)
        hl = QHBoxLayout()
        self.btn_refresh = QPushButton("Refresh")
        self.btn_refresh.setToolTip("List every app kernel compiled so far with its resources and occupancy")
        self.btn_refresh.clicked.connect(self.refresh_kernels)
        self.btn_compile = QPushButton("Compile the app's kernels")
        self.btn_compile.setToolTip("Run two steps of every Cahn–Hilliard variant (A–E, 2D and 3D) so that "
                                    "their kernels are compiled and listed")
        self.btn_compile.clicked.connect(self.compile_kernels)
        self.btn_measure = QPushButton("Measure block sizes")
        self.btn_measure.setToolTip("Time the Cahn–Hilliard variant A kernel at every block size and plot "
                                    "its throughput beside the theoretical occupancy (paper 003's argument)")
        self.btn_measure.clicked.connect(self.measure_block_sizes)
        for b in (self.btn_refresh, self.btn_compile, self.btn_measure):
            hl.addWidget(b)
        hl.addStretch(1)
        v.addLayout(hl)
        cols = ["kernel", "registers", "static smem (B)", "local (B)", "max threads/block", "launch block",
                "blocks/SM", "occupancy", "limiter", "driver blocks/SM"]
        self.kernels = QTableWidget(0, len(cols))
        self.kernels.setHorizontalHeaderLabels(cols)
        self.kernels.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.kernels.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.kernels.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.kernels.setToolTip("Select a kernel to load it into the calculator")
        self.kernels.itemSelectionChanged.connect(self._on_kernel_selected)
        v.addWidget(self.kernels, 2)
        self.measure_plot = plot_panel("Measured throughput vs theoretical occupancy", "threads per block",
                                       "relative throughput / occupancy", units={"left": "%"}, background="w",
                                       legend=True, min_height=180)
        v.addWidget(self.measure_plot, 1)
        gpu = self._device_spec is not None
        for b in (self.btn_refresh, self.btn_compile, self.btn_measure):
            b.setEnabled(gpu)
        if gpu:
            self.kernels_note.setText(f"The app's compiled kernels on {self._device_spec.examples} "
                                      f"(CC {self._device_spec.cc}); 'driver' is cudaOccupancyMaxActiveBlocks"
                                      "PerMultiprocessor's answer.")
        else:
            why = why or "the CPU backend is selected"
            self.kernels_note.setText("<b>No kernels to show:</b> this table lists the app's compiled CUDA "
                                      "kernels (registers, shared memory, occupancy on the current GPU), and the "
                                      f"app is running without a GPU ({why}). The calculator works for every "
                                      "compute capability without one.")

    def refresh_kernels(self) -> list[dict]:
        if self._device_spec is None:
            return []
        self.kernel_rows = app_kernel_table()
        self.kernels.setRowCount(len(self.kernel_rows))
        for i, r in enumerate(self.kernel_rows):
            vals = [r["name"], r["registers"], r["static_smem"], r["local_bytes"], r["max_threads_per_block"],
                    r["block"], r["active_blocks_per_sm"], f"{r['occupancy']:.0%}", r["limiter"],
                    r["driver_blocks_per_sm"]]
            for j, val in enumerate(vals):
                self.kernels.setItem(i, j, table_item(val))
        return self.kernel_rows

    def compile_kernels(self) -> None:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            ran = launches.compile_all()           # the compilers the app registered (kernels.app_kernels)
        finally:
            QApplication.restoreOverrideCursor()
        self.refresh_kernels()
        if not ran:
            self.message.emit("No kernel compilers are registered (kernels.app_kernels was not "
                              "imported): the table lists the kernels compiled so far", "info")

    def _on_kernel_selected(self) -> None:
        rows = self.kernels.selectionModel().selectedRows()
        if not rows or not self.kernel_rows:
            return
        self.kernel_chosen.emit(dict(self.kernel_rows[rows[0].row()]))

    def measure_block_sizes(self, kind: str = "ch_point", size: int = 2048) -> list[dict]:
        if self._device_spec is None:
            return []
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            rows = block_size_sweep(launches.sweep_case(kind, size), repeats=5)
        finally:
            QApplication.restoreOverrideCursor()
        best = max(r["throughput"] for r in rows)
        self.measure_plot.clear()
        xs = [r["block"] for r in rows]
        self.measure_plot.plot(xs, [100 * r["throughput"] / best for r in rows], pen=pg.mkPen("#d1495b", width=2),
                               symbol="o", symbolSize=5, name=f"{kind}: measured (relative)")
        self.measure_plot.plot(xs, [100 * r["occupancy"] for r in rows], pen=CURVE_PEN,
                               name="theoretical occupancy")
        return rows
