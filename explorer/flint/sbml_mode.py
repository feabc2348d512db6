"""SBML reference mode of the Flint workspace: an SBML file that the Flint importer refuses (events,
algebraic rules, delays, fast reactions …) but that the SBML reference simulator reads is shown and
run by ``kernels.flint.sbml.reference`` (one instance, LSODA with root-found events, output streamed in
chunks); the Flint-only controls and the Compiler tab are disabled meanwhile.  A mixin of
:class:`explorer.flint.workspace.FlintWorkspace` (it uses the workspace's widgets)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QTableWidgetItem

from kernels.errors import ExplorerError
from kernels.flint.sbml.reference import LABEL as SBML_LABEL
from kernels.flint.sbml.reference import TOOLTIP as SBML_TOOLTIP
from kernels.flint.sbml.reference import output_times

from .traces import check_recording
from .worker import PROGRESS_SCALE, RUNTIME_TOOLTIP, SbmlWorker


class SbmlModeMixin:
    """Enter / leave SBML reference mode and run the reference simulator."""

    def _enter_sbml(self, ref, why: str) -> None:
        """Show an SBML model the Flint compiler refuses, to be run by the SBML reference simulator."""
        was = self.sbml is not None
        self.sbml, self.sbml_params, self.model = ref, {}, None
        s = ref.system
        self.table.blockSignals(True)
        self.table.setHorizontalHeaderLabels(["parameter", "value", "role"])
        self.table.setRowCount(len(ref.params))
        ro = pg.QtCore.Qt.ItemFlag.ItemIsEditable
        for r, (p, v) in enumerate(ref.params.items()):
            it = QTableWidgetItem(p)
            it.setFlags(it.flags() & ~ro)
            self.table.setItem(r, 0, it)
            val = QTableWidgetItem(repr(v))
            role = QTableWidgetItem(ref.roles[p])
            role.setFlags(role.flags() & ~ro)
            if p not in ref.editable:
                val.setFlags(val.flags() & ~ro)
                val.setToolTip(f"{p} is set by its {ref.roles[p][7:]}: not editable")
            self.table.setItem(r, 1, val)
            self.table.setItem(r, 2, role)
        self.table.blockSignals(False)
        self.cb_record.clear()
        self.cb_record.addItems(ref.recordable)
        first = ref.default_record()[0] if ref.recordable else ""
        if first:
            self.cb_record.setCurrentText(first)
        self.cb_vary.clear()
        self.cb_vary.addItems(["(none)"])
        self.stim.bind(None)
        if not was:
            self._runtime_before = self.cb_runtime.currentText()
            for i in range(self.cb_runtime.count()):
                self.cb_runtime.model().item(i).setEnabled(False)
            self.cb_runtime.addItem(SBML_LABEL)
        i = self.cb_runtime.findText(SBML_LABEL)
        self.cb_runtime.setItemData(i, SBML_TOOLTIP, pg.QtCore.Qt.ItemDataRole.ToolTipRole)
        self.cb_runtime.setCurrentIndex(i)
        self.cb_runtime.setToolTip(SBML_TOOLTIP)
        note = "does not apply to the SBML reference simulator (one model instance, adaptive LSODA, float64)"
        for w in self._flint_only():
            w.setEnabled(False)
            w.setToolTip(note)
        for w, text in ((self.sp_dt, "dt (output interval)"), (self.sp_tend, "t end (model time)")):
            lab = self._form.labelForField(w)
            if lab is not None:
                lab.setText(text)
        self.sp_dt.setToolTip("Output interval, in the model's time unit: the reference simulator chooses "
                              "its own adaptive steps")
        self.sp_tend.setToolTip("End time of the run, in the model's time unit")
        k = self.tabs.indexOf(self.compiler)
        if self.tabs.currentIndex() == k:
            self.tabs.setCurrentWidget(self.plot)
        self.tabs.setTabEnabled(k, False)
        self.tabs.setTabToolTip(k, "The Flint compiler refuses this model; it runs on the SBML reference "
                                   "simulator, which does not compile to bytecode.")
        self.listing.setPlainText(f"not compiled: the Flint compiler refuses {ref.name} ({why}); it runs on "
                                  f"the SBML reference simulator.")
        self.plot.setLabel("bottom", "t (model time units)")
        self.heat_view.setLabel("bottom", "t (model time units)")
        self._sbml_why = why
        self._tag_sbml_item()
        self.message.show_message(
            f"loaded {ref.name} in SBML reference mode: {ref.n_states} states, {len(s.events)} events, "
            f"{len(ref.params)} parameters.  The Flint compiler refuses it ({why}), so it runs on the CPU "
            f"reference simulator (LSODA, events by root finding); dt is the output interval.", "info")
        self._emit_status()

    def _tag_sbml_item(self) -> None:
        """Name SBML reference mode in the model list entry of the loaded file."""
        ref, i = self.sbml, self.cb_model.currentIndex()
        if ref is None or i < 0 or self.cb_model.currentData() != str(ref.path):
            return
        if "SBML reference" not in self.cb_model.itemText(i):
            self.cb_model.setItemText(i, f"{self.cb_model.itemText(i)} — SBML reference")
            self.cb_model.setItemData(i, f"{ref.path}: runs on the SBML reference simulator ({self._sbml_why})",
                                      pg.QtCore.Qt.ItemDataRole.ToolTipRole)

    def _leave_sbml(self) -> None:
        if self.sbml is None:
            return
        self.sbml, self.sbml_params = None, {}
        self.table.setHorizontalHeaderLabels(["parameter", "value", "units"])
        i = self.cb_runtime.findText(SBML_LABEL)
        if i >= 0:
            self.cb_runtime.removeItem(i)
        for i in range(self.cb_runtime.count()):
            self.cb_runtime.model().item(i).setEnabled(True)
        j = self.cb_runtime.findText(self._runtime_before)
        self.cb_runtime.setCurrentIndex(max(j, 0))
        self.cb_runtime.setToolTip(RUNTIME_TOOLTIP)
        for w in self._flint_only():
            w.setEnabled(True)
        for w, tip in self._tips.items():
            w.setToolTip(tip)
        for w, text in ((self.sp_dt, "dt (ms)"), (self.sp_tend, "t end (ms)")):
            lab = self._form.labelForField(w)
            if lab is not None:
                lab.setText(text)
        k = self.tabs.indexOf(self.compiler)
        self.tabs.setTabEnabled(k, True)
        self.tabs.setTabToolTip(k, "")
        self.plot.setLabel("bottom", "t (ms)")
        self.heat_view.setLabel("bottom", "t (ms)")

    def in_sbml_mode(self) -> bool:
        return self.sbml is not None

    def _sbml_param_edited(self, item) -> None:
        ref = self.sbml
        name = self.table.item(item.row(), 0).text()
        v = self._cell_value(item, name, self.sbml_params.get(name, ref.params[name]))
        if v is None:
            return
        if v == ref.params[name]:
            self.sbml_params.pop(name, None)
        else:
            self.sbml_params[name] = v

    def _run_sbml(self) -> None:
        ref = self.sbml
        try:
            check_recording(int(self.sp_tend.value() / self.sp_dt.value()) + 1, 1, 1)
            times = output_times(self.sp_tend.value(), self.sp_dt.value())
        except ExplorerError as exc:
            self.message.show_message(str(exc))
            return
        rec = [self.cb_record.currentText() or ref.default_record()[0]]
        cfg = {"sbml": ref, "params": dict(self.sbml_params), "times": times, "record": rec,
               "steps": len(times) - 1, "n": 1, "unit": "output points",
               "chunk": max(1, min(200, len(times) // 50))}
        self.cfg = cfg
        self.record_names = rec
        self.traces.reset(1, 1)
        self.plot.clear()
        self.show_idx = np.array([0])
        self._pens = [pg.mkPen("#1f5fa0", width=1.5)]
        self.curves = [self.plot.plot(pen=self._pens[0])]
        self._style_curves()
        self.plot.setLabel("left", rec[0], units="")
        self.progress.setRange(0, PROGRESS_SCALE)
        self.progress.setValue(0)
        self.worker = SbmlWorker(cfg, self)
        self.worker.chunk.connect(self._on_sbml_chunk)
        self.worker.steps.connect(self._on_progress)
        self.worker.failed.connect(lambda msg: self.message.show_message(msg))
        self.worker.finished.connect(self._on_done)
        self.worker.start()
        self.timer.start()
        self.bt_run.setText("Running…")

    def _on_sbml_chunk(self, i0: int, t, y) -> None:
        """Output points i0 … (i0 = 0 again when the finished run replaces a differing preview)."""
        self.traces.append(t, y, at=i0)
        self._dirty = True
