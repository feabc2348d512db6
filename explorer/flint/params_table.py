"""The parameter table of the Flint workspace as one part, :class:`ParameterTable`: name, value and
units (Flint models) or role (SBML reference mode), with the values typed into it checked.

The table owns the values it shows: :meth:`ParameterTable.values` is what the next run uses.  Every
accepted change — typed, or set through :meth:`ParameterTable.set_value` (the stimulus editor,
presets, sessions, undo) — is announced once as ``edited(name, old, new)``; a refused one as
``refused(message)`` (the value is put back).  The workspace applies the values to its model and
hooks undo on ``edited``.
"""
from __future__ import annotations

import math

from PyQt6.QtCore import QObject, Qt, pyqtSignal
from PyQt6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

from kernels.errors import InvalidParameter

from .. import undo

TOOLTIP = "The model's parameters: double-click a value to edit it (units in the third column)"
EDITABLE = Qt.ItemFlag.ItemIsEditable


class _Shown(QObject):
    """The parameters of one shown model: their undo trackers hang on it, and ``changed`` after each
    accepted edit lets them see it; showing another model retires it (its entries then do nothing)."""
    changed = pyqtSignal()


class ParameterTable(QTableWidget):
    """Three columns: parameter, value, units (or role).  ``owner`` names the model in refusals."""
    edited = pyqtSignal(str, float, float)
    refused = pyqtSignal(str)

    def __init__(self, parent=None):
        super().__init__(0, 3, parent)
        self.owner = "the model"
        self._values: dict[str, float] = {}
        self._rows: dict[str, int] = {}
        self._shown = _Shown(self)
        self.setHorizontalHeaderLabels(["parameter", "value", "units"])
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.setToolTip(TOOLTIP)
        self.itemChanged.connect(self._item_changed)

    def show_parameters(self, owner: str, values: dict, third: dict, header: str = "units",
                        fixed: dict | None = None) -> None:
        """Show ``values`` {name: value} with ``third`` {name: units or role}; ``fixed`` {name: why}
        are shown but not editable."""
        fixed = fixed or {}
        self.owner = owner
        self._values = {k: float(v) for k, v in values.items()}
        self._rows = {k: r for r, k in enumerate(values)}
        self.blockSignals(True)
        try:
            self.setHorizontalHeaderLabels(["parameter", "value", header])
            self.setRowCount(len(values))
            for r, (p, v) in enumerate(values.items()):
                name = QTableWidgetItem(p)
                name.setFlags(name.flags() & ~EDITABLE)
                val = QTableWidgetItem(repr(float(v)))
                if p in fixed:
                    val.setFlags(val.flags() & ~EDITABLE)
                    val.setToolTip(fixed[p])
                extra = QTableWidgetItem(third.get(p, ""))
                extra.setFlags(extra.flags() & ~EDITABLE)
                self.setItem(r, 0, name)
                self.setItem(r, 1, val)
                self.setItem(r, 2, extra)
        finally:
            self.blockSignals(False)
        self._track(fixed)

    def _track(self, fixed: dict) -> None:
        """Undo of every editable parameter, hooked here once per shown model (``explorer.undo``): an
        undo sets the value back as if typed; entries of a model no longer shown do nothing (their
        values stay those of that model: the table's values dict is replaced, not refilled)."""
        self._shown.setParent(None)              # retired: kept alive only by its undo entries
        shown = self._shown = _Shown(self)

        def setter(name):
            def set_(v):
                if shown is self._shown:
                    self.set_value(name, v)
            return set_
        for name in self._rows:
            if name not in fixed:
                undo.track(shown, name, get=lambda n=name, vals=self._values: vals.get(n), set=setter(name),
                           changed=shown.changed, label=name)

    # ------------------------------------------------------------------ values
    def values(self) -> dict[str, float]:
        """{name: value} as shown (every accepted edit applied)."""
        return dict(self._values)

    def names(self) -> list[str]:
        return list(self._rows)

    def value(self, name: str) -> float:
        return self._values[name]

    def editable(self, name: str) -> bool:
        return name in self._rows and bool(self.item(self._rows[name], 1).flags() & EDITABLE)

    def set_value(self, name: str, value: float) -> None:
        """Set a parameter as if typed (``edited`` follows); :class:`InvalidParameter` for a name that
        is not a parameter, one that is not editable, or a value that is not a finite number."""
        if name not in self._rows:
            raise InvalidParameter(f"{name!r} is not a parameter of {self.owner}")
        if not self.editable(name):
            raise InvalidParameter(f"{name!r} is not editable ({self.item(self._rows[name], 2).text()})")
        v = float(value)
        if not math.isfinite(v):
            raise InvalidParameter(f"{name}: {value!r} is not a finite number")
        self.item(self._rows[name], 1).setText(repr(v))

    def _item_changed(self, item) -> None:
        if item.column() != 1:
            return
        name = self.item(item.row(), 0).text()
        old, text = self._values[name], item.text()
        try:
            v = float(text)
            if not math.isfinite(v):
                raise ValueError
        except ValueError:
            self.blockSignals(True)
            item.setText(repr(old))
            self.blockSignals(False)
            self.refused.emit(f"{name}: {text!r} is not a number; kept {old!r}")
            return
        if v != old:
            self._values[name] = v
            self._shown.changed.emit()
            self.edited.emit(name, old, v)
