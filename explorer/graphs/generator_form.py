"""The Graphs workspace's generator form: generator, N, k (m for Barabási–Albert), p, α, ring,
weights, seed and the APSP method, with the parameters the chosen generator ignores greyed out
(``kernels.graphs.data.generators.USES``).

A part that owns its controls: :meth:`GeneratorForm.params` reads them, :meth:`set_values` sets
them by the names sessions and presets use, :meth:`set_lecture` hides the non-essential rows.
Every control is undoable (``explorer.undo``, hooked in here once).
"""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from kernels.errors import InvalidParameter
from kernels.graphs.data import generators as gen
from kernels.graphs.apsp import METHODS

from .. import undo
from ..widgets import fit_combos
from .emulated import HOST_LABEL, HOST_TIP

GEN_LABELS = {k: gen.LABELS.get(k, k) for k in gen.GENERATORS}
# shorter in the combo, so the dock keeps its width ("Random, DIMACS style (paper 004)" needed 30 px
# more, which narrowed the graph view below what a 6000-vertex ring needs to show whole)
GEN_LABELS["random"] = "Random, DIMACS (paper 004)"
WEIGHTS = ("none", "int", "float")


def check_params(prm) -> dict:
    """A stored ``control_params`` dict, or InvalidParameter when it names an unknown generator or
    APSP method."""
    if not isinstance(prm, dict) or prm.get("generator") not in GEN_LABELS or prm.get("method", "cpu") not in METHODS:
        raise InvalidParameter("the session names an unknown generator or APSP method")
    return prm


class GeneratorForm(QWidget):
    """Generator parameters and the APSP method of the Graphs workspace."""

    def __init__(self, backend, n: int = 300, parent=None):
        super().__init__(parent)
        self.form = form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)

        def tip(widget, text):
            widget.setToolTip(text)
            return widget

        self.cb_gen = tip(QComboBox(), "Graph generator (paper 000 §4.1, paper 001 §5.7)")
        for k, v in GEN_LABELS.items():
            self.cb_gen.addItem(v, k)
        self.sp_n = tip(QSpinBox(), "Number of vertices N (every vertex and edge is drawn at any size)")
        self.sp_n.setRange(3, 2_000_000)
        self.sp_n.setValue(n)
        self.sp_k = tip(QSpinBox(), "Mean degree k (ring, WS, α-model, spatial); BA: edges per new vertex m")
        self.sp_k.setRange(1, 1000)
        self.sp_k.setValue(4)
        self.sp_p = tip(QDoubleSpinBox(), "Probability: WS rewiring, ER edge, α-model random link")
        self.sp_p.setDecimals(6)
        self.sp_p.setRange(0, 1)
        self.sp_p.setSingleStep(0.01)
        self.sp_p.setValue(0.1)
        self.sp_alpha = tip(QDoubleSpinBox(), "α of Watts' α-model (0: only triangle-closing links)")
        self.sp_alpha.setRange(0, 100)
        self.sp_alpha.setValue(1.0)
        self.ck_ring = tip(QCheckBox("ring substrate"), "α-model on a ring (paper 000 type 1: always connected)")
        self.ck_ring.setChecked(True)
        self.cb_weights = tip(QComboBox(), "Weighted variant for Floyd–Warshall / SSSP")
        self.cb_weights.addItems(list(WEIGHTS))
        self.sp_seed = tip(QSpinBox(), "Random seed: the same seed gives the same graph")
        self.sp_seed.setRange(0, 2 ** 31 - 1)
        self.sp_seed.setValue(1)
        self.cb_method = tip(QComboBox(), "All-pairs shortest paths: hover a method for its paper and section")
        for m, cls in METHODS.items():
            host = getattr(cls, "emulated", lambda _b: False)(backend)   # CUDA source run on the CPU
            self.cb_method.addItem(m, m)                                  # text and data: the method name
            tip_text = cls.help + (f" — without a GPU: {HOST_LABEL.strip('()')}{HOST_TIP}" if host else "")
            self.cb_method.setItemData(self.cb_method.count() - 1, tip_text, Qt.ItemDataRole.ToolTipRole)
            if not cls.available(backend):
                self.cb_method.model().item(self.cb_method.count() - 1).setEnabled(False)
        rows = (("generator", self.cb_gen, "generator"), ("N", self.sp_n, "N"), ("k / m", self.sp_k, "k"),
                ("p", self.sp_p, "p"), ("α", self.sp_alpha, "alpha"), ("", self.ck_ring, "ring"),
                ("weights", self.cb_weights, "weights"), ("seed", self.sp_seed, "seed"),
                ("APSP", self.cb_method, "method"))
        for label, w, key in rows:
            form.addRow(label, w)
            undo.track(w, key, label=label or key)
        self._tips = {w: w.toolTip() for w in (self.sp_k, self.sp_p, self.sp_alpha, self.ck_ring, self.sp_seed)}
        self.cb_gen.currentIndexChanged.connect(lambda _i: self.update_generator_controls())
        self.update_generator_controls()
        self.nonessential = (self.sp_alpha, self.ck_ring, self.cb_weights, self.sp_seed, self.cb_method)
        fit_combos(self)                 # no generator name clipped when chosen
        self._combo_floors = {c: c.minimumWidth() for c in (self.cb_gen, self.cb_weights, self.cb_method)}

    # ----------------------------------------------------------------- values
    def params(self) -> dict:
        """The generator's arguments: kind, n, k, p, alpha, ring, seed."""
        return dict(kind=self.cb_gen.currentData(), n=self.sp_n.value(), k=self.sp_k.value(), p=self.sp_p.value(),
                    alpha=self.sp_alpha.value(), ring=self.ck_ring.isChecked(), seed=self.sp_seed.value())

    def weights(self) -> str:
        return self.cb_weights.currentText()

    def method(self) -> str:
        return self.cb_method.currentData() or self.cb_method.currentText()

    def values(self) -> dict:
        """The controls by the names of :meth:`set_values` (sessions, settings and presets)."""
        prm = self.params()
        return {"generator": prm["kind"], "n": prm["n"], "k": prm["k"], "p": prm["p"], "alpha": prm["alpha"],
                "ring": prm["ring"], "weights": self.weights(), "seed": prm["seed"], "method": self.method()}

    def set_values(self, **kw) -> None:
        """Set controls by name (generator, n, k, p, alpha, ring, weights, seed, method); other names
        are ignored."""
        if "generator" in kw:
            self.cb_gen.setCurrentIndex(self.cb_gen.findData(kw["generator"]))
        for key, wid in (("n", self.sp_n), ("k", self.sp_k), ("p", self.sp_p), ("alpha", self.sp_alpha),
                         ("seed", self.sp_seed)):
            if key in kw:
                wid.setValue(kw[key])
        if "ring" in kw:
            self.ck_ring.setChecked(bool(kw["ring"]))
        if "weights" in kw:
            self.cb_weights.setCurrentText(kw["weights"])
        if "method" in kw:
            i = self.cb_method.findData(kw["method"])
            if i >= 0:
                self.cb_method.setCurrentIndex(i)

    def update_generator_controls(self) -> None:
        """Grey out the parameters the chosen generator ignores and name what k means for it
        (BA: edges per new vertex m)."""
        kind = self.cb_gen.currentData()
        uses = gen.USES.get(kind, ())
        label = GEN_LABELS.get(kind, kind)
        for key, w in (("k", self.sp_k), ("p", self.sp_p), ("alpha", self.sp_alpha), ("ring", self.ck_ring),
                       ("seed", self.sp_seed)):
            w.setEnabled(key in uses)
            w.setToolTip(self._tips[w] if key in uses else f"{self._tips[w]}\n(not used by {label})")
        k_label = self.form.labelForField(self.sp_k)
        if k_label is not None:
            k_label.setText("m" if kind == "ba" else "k")
        if kind in gen.K_MEANING:
            self.sp_k.setToolTip(f"{label}: {gen.K_MEANING[kind]}")

    def set_lecture(self, on: bool) -> None:
        """Lecture mode: only generator, N, k and p."""
        for w in self.nonessential:
            self.form.setRowVisible(w, not on)
        for c, floor in self._combo_floors.items():   # the view keeps its share of a 1440-px screen
            c.setMinimumWidth(0 if on else floor)
