"""The main window's Edit menu, a composed part: *Undo* (Ctrl+Z), *Redo* (Ctrl+Shift+Z) and the
*History* list (a dock with a ``QUndoView``), over one ``QUndoStack`` per workspace gathered in a
``QUndoGroup`` whose active stack is the shown workspace's (:mod:`explorer.undo`).

Why a stack per workspace, not one per window: each workspace keeps its own parameters, runs and
files; an undo must change what is on screen, never a workspace in the background (undoing a
Flint edit while the Cahn–Hilliard field runs would surprise).  The History list shows the current
workspace's edits; clicking an entry goes back (or forward) to it.
"""
from __future__ import annotations

from PyQt6.QtCore import QObject, Qt
from PyQt6.QtGui import QKeySequence, QUndoGroup
from PyQt6.QtWidgets import QDockWidget, QMainWindow, QMenu, QUndoView

from . import undo


class EditMenu(QObject):
    """Edit ▸ Undo / Redo / History of ``window`` (a QMainWindow), added to ``menu``."""

    def __init__(self, window: QMainWindow, menu: QMenu):
        super().__init__(window)
        self.group = QUndoGroup(self)
        self.act_undo = self.group.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(QKeySequence("Ctrl+Z"))
        self.act_undo.setStatusTip("Undo the last parameter change of this workspace")
        self.act_redo = self.group.createRedoAction(self, "&Redo")
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.act_redo.setStatusTip("Redo the parameter change undone last")
        for a in (self.act_undo, self.act_redo):
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            menu.addAction(a)
            window.addAction(a)
        menu.addSeparator()
        self.view = QUndoView(self.group)
        self.view.setEmptyLabel("<start>")
        self.view.setObjectName("undoHistory")
        self.view.setToolTip("Parameter changes of the current workspace; click one to go back to it")
        self.dock = QDockWidget("History", window)
        self.dock.setObjectName("undoHistoryDock")
        self.dock.setWidget(self.view)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()
        self.act_history = self.dock.toggleViewAction()
        self.act_history.setText("&History")
        self.act_history.setShortcut(QKeySequence("Ctrl+Shift+H"))
        self.act_history.setStatusTip("Show the list of parameter changes (undo history) of this workspace")
        menu.addAction(self.act_history)
        self.act_clear = menu.addAction("Clear history")
        self.act_clear.setStatusTip("Forget the undo history of this workspace")
        self.act_clear.triggered.connect(self.clear)

    def add_workspace(self, ws: QObject) -> None:
        """Give ``ws`` its stack (call after its settings are restored: nothing before is an edit)."""
        st = undo.attach(ws)
        st.clear()
        self.group.addStack(st)

    def set_current(self, ws: QObject | None) -> None:
        self.group.setActiveStack(undo.stack_for(ws) if ws is not None else None)

    def stack(self):
        return self.group.activeStack()

    def clear(self) -> None:
        st = self.group.activeStack()
        if st is not None:
            st.clear()
