"""Undo / redo of parameter edits, for every workspace: one ``QUndoStack`` per workspace, gathered
in the main window's ``QUndoGroup`` (Edit ▸ Undo Ctrl+Z, Redo Ctrl+Shift+Z and the History list
act on the current workspace's stack, so an undo never changes a workspace that is not shown).

A part hooks in once per parameter, where it builds the control::

    from explorer import undo
    undo.track(self.dt_spin, "dt", label="dt", needs_reset=False)          # a standard widget
    undo.track(self, "model", get=self.model_name, set=self.select_model,  # anything else
               changed=self.model_changed, label="model")

``track`` watches the value: every change that is not an undo/redo itself (and not inside
:func:`suspended`) pushes a :class:`ParameterEdit` onto the stack of the workspace that holds the
widget (found through its parents when the edit happens, so a part can be built before it is
placed).  Consecutive edits of one field merge into one entry (typing 0.25 is one step back, not
four); an edit that returns to where the entry started removes it.  Undo and redo set the value
through ``set`` (for a standard widget: ``setValue`` / ``setCurrentIndex`` / ``setChecked`` /
``setText``), so the widget's own signals fire and the part reacts as to an edit: a live
parameter applies, one that needs *Reset* is marked ⟳ by the part's usual handler.  A part whose
``set`` blocks signals passes ``needs_reset=True, mark=callable(key)``: ``mark`` is called after
every undo/redo of that field.

Programmatic changes that are not user edits (a combo repopulated, a range clamped, a model
loaded) are wrapped in ``with undo.suspended(widget):`` — they update the remembered value and
push nothing; a part that sets tracked widgets with their signals blocked calls
``undo.resync(self)`` after.  Applying a preset or opening a session is one undo step: the window
wraps them in :func:`recorded` (values compared before and after, signals or not); opening a file
is no edit (suspended, then resynced).  Parts tested alone call ``undo.attach(part)``.

Merging: :meth:`ParameterEdit.id` is the tracker's id, so ``QUndoStack`` offers
:meth:`ParameterEdit.mergeWith` only the entry on top: consecutive edits of one field.
"""
from __future__ import annotations

import contextlib
import itertools
import weakref
from typing import Any, Callable

from PyQt6.QtCore import QObject
from PyQt6.QtGui import QUndoCommand, QUndoStack
from PyQt6.QtWidgets import (QAbstractButton, QAbstractSlider, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox,
                             QWidget)

_stacks: "weakref.WeakKeyDictionary[QObject, QUndoStack]" = weakref.WeakKeyDictionary()
_ids = itertools.count(1000)
_suspended: "weakref.WeakKeyDictionary[QObject, int]" = weakref.WeakKeyDictionary()
_trackers: "weakref.WeakSet[Tracker]" = weakref.WeakSet()


def attach(owner: QObject, stack: QUndoStack | None = None) -> QUndoStack:
    """Give ``owner`` (a workspace, or a part tested alone) an undo stack (``stack`` or a new one
    parented to it); edits of tracked widgets inside ``owner`` go there.  Returns the stack."""
    if stack is None:
        stack = _stacks.get(owner) or QUndoStack(owner)
    _stacks[owner] = stack
    return stack


def stack_for(widget: QObject | None) -> QUndoStack | None:
    """The stack of the nearest ancestor of ``widget`` (itself included) that has one."""
    w = widget
    while w is not None:
        st = _stacks.get(w)
        if st is not None:
            return st
        w = w.parent()
    return None


def _is_suspended(widget: QObject | None) -> bool:
    w = widget
    while w is not None:
        if _suspended.get(w):
            return True
        w = w.parent()
    return False


@contextlib.contextmanager
def suspended(widget: QObject):
    """Changes inside the block, to ``widget`` or any tracked widget inside it, are not edits: they
    push nothing (the remembered values follow them)."""
    _suspended[widget] = _suspended.get(widget, 0) + 1
    try:
        yield
    finally:
        n = _suspended.get(widget, 1) - 1
        if n:
            _suspended[widget] = n
        else:
            _suspended.pop(widget, None)


def _inside(obj: QObject | None, root: QObject) -> bool:
    try:
        while obj is not None:
            if obj is root:
                return True
            obj = obj.parent()
    except RuntimeError:                 # a widget already deleted (a closed window's)
        return False
    return False


def _alive(t: "Tracker") -> bool:
    try:
        t.widget.objectName()
    except RuntimeError:
        _trackers.discard(t)
        return False
    return True


def trackers(root: QObject) -> list["Tracker"]:
    """The trackers of the parameters inside ``root`` (itself included), in the order tracked."""
    return sorted((t for t in list(_trackers) if _alive(t) and _inside(t.widget, root)), key=lambda t: t.uid)


def is_tracked(widget: QObject) -> bool:
    return any(t.widget is widget for t in list(_trackers) if _alive(t))


def resync(root: QObject) -> None:
    """Every tracker inside ``root`` takes its widget's current value as the remembered one (after
    a part set tracked widgets with their signals blocked)."""
    for t in trackers(root):
        t.value = t.get()


@contextlib.contextmanager
def recorded(root: QObject, text: str):
    """Whatever the block changes among the tracked parameters inside ``root`` — through signals
    or with them blocked — becomes one undo step named ``text`` (a preset, a session): the values
    before and after are compared, not the signals counted."""
    ts = trackers(root)
    before = [t.get() for t in ts]
    with suspended(root):
        yield
    changes = []
    for t, old in zip(ts, before):
        new = t.get()
        t.value = new
        if new != old:
            changes.append((t, old, new))
    st = stack_for(root)
    if st is not None and changes:
        st.push(GroupEdit(text, changes))


def _accessors(widget: QWidget):
    """(get, set, changed signal) of a standard editing widget."""
    if isinstance(widget, (QSpinBox, QDoubleSpinBox, QAbstractSlider)):
        return widget.value, widget.setValue, widget.valueChanged
    if isinstance(widget, QComboBox):
        return widget.currentIndex, widget.setCurrentIndex, widget.currentIndexChanged
    if isinstance(widget, QAbstractButton) and widget.isCheckable():
        return widget.isChecked, widget.setChecked, widget.toggled
    if isinstance(widget, QLineEdit):
        return widget.text, widget.setText, widget.textChanged
    raise TypeError(f"undo.track: pass get, set and changed for a {type(widget).__name__}")


def _shown(widget: QObject, value) -> str:
    if isinstance(widget, QComboBox) and isinstance(value, int) and 0 <= value < widget.count():
        return widget.itemText(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bool):
        return "on" if value else "off"
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


class Tracker(QObject):
    """One tracked parameter (made by :func:`track`): remembers its value and pushes edits."""

    def __init__(self, widget: QObject, key: str, get, set_, changed, label: str, needs_reset: bool,
                 mark: Callable[[str], Any] | None):
        super().__init__(widget)
        self.widget, self.key, self.get, self.set = widget, key, get, set_
        self.label, self.needs_reset, self.mark = label, needs_reset, mark
        self.uid = next(_ids)
        self.value = get()
        self.applying = False
        changed.connect(self._changed)
        _trackers.add(self)

    def _changed(self, *_):
        new = self.get()
        old, self.value = self.value, new
        if self.applying or old == new or _is_suspended(self.widget):
            return
        st = stack_for(self.widget)
        if st is not None:
            st.push(ParameterEdit(self, old, new))

    def apply(self, value) -> None:
        """Set ``value`` as an undo/redo does (no new entry), then mark it when it needs Reset."""
        self.applying = True
        try:
            self.set(value)
        finally:
            self.applying = False
        self.value = self.get()
        if self.needs_reset and self.mark is not None:
            self.mark(self.key)

    def text(self, old, new) -> str:
        return f"{self.label}: {_shown(self.widget, old)} → {_shown(self.widget, new)}"


class ParameterEdit(QUndoCommand):
    """One edit of one parameter, ``old`` → ``new``; consecutive edits of the same parameter merge."""

    def __init__(self, tracker: Tracker, old, new):
        super().__init__(tracker.text(old, new))
        self.tracker, self.old, self.new = tracker, old, new
        self._done = True            # pushed after the widget already changed: the first redo is a no-op

    def id(self) -> int:  # noqa: A003 (Qt's name)
        return self.tracker.uid

    def mergeWith(self, other) -> bool:  # noqa: N802
        if not isinstance(other, ParameterEdit) or other.tracker is not self.tracker:
            return False
        self.new = other.new
        self.setText(self.tracker.text(self.old, self.new))
        if self.new == self.old:
            self.setObsolete(True)
        return True

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        self.tracker.apply(self.new)

    def undo(self) -> None:
        self.tracker.apply(self.old)


class GroupEdit(QUndoCommand):
    """Several parameters changed at once (:func:`recorded`): undo sets them back in the order
    they were tracked, redo forward."""

    def __init__(self, text: str, changes: list):
        super().__init__(text)
        self.changes = changes
        self._done = True

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        for t, _old, new in self.changes:
            t.apply(new)

    def undo(self) -> None:
        for t, old, _new in self.changes:
            t.apply(old)


def track(widget: QObject, key: str, get: Callable[[], Any] | None = None, set: Callable[[Any], Any] | None = None,  # noqa: A002
          changed=None, label: str | None = None, needs_reset: bool = False,
          mark: Callable[[str], Any] | None = None) -> Tracker:
    """Make every edit of parameter ``key`` undoable (see the module docstring).  ``widget``: a
    QSpinBox / QDoubleSpinBox / QSlider / QComboBox (by index) / checkable button / QLineEdit —
    then ``get``, ``set`` and ``changed`` are found — or any QObject with all three given
    (``changed``: a bound signal emitted after each change).  ``label``: the name shown in the
    History list (default ``key``).  ``needs_reset`` + ``mark``: called as ``mark(key)`` after an
    undo/redo of this field, to show ⟳ where ``set`` does not go through the part's edit handler."""
    if get is None or set is None or changed is None:
        g, s, c = _accessors(widget)
        get, set, changed = get or g, set or s, changed or c
    return Tracker(widget, key, get, set, changed, label or key, needs_reset, mark)
