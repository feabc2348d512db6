"""File ▸ Open Recent, a composed part: the recent files of every kind (:mod:`explorer.recent`,
10 a kind), grouped by kind, newest first; choosing one emits ``open_requested(path)``.  Files that
have gone are dropped when the menu opens, and ``notice(text)`` says which."""
from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QMenu

from .recent import RecentFiles


class RecentMenu(QObject):
    """The submenu (:attr:`menu`) over a :class:`~explorer.recent.RecentFiles` in ``settings``."""

    open_requested = pyqtSignal(str)
    notice = pyqtSignal(str)

    def __init__(self, settings, parent_menu: QMenu, parent=None):
        super().__init__(parent)
        self.files = RecentFiles(settings)
        self.menu = parent_menu.addMenu("Open &Recent")
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self.rebuild)
        self.rebuild(prune=False)          # the window prunes once its notice is connected

    def add(self, kind: str, path) -> None:
        self.files.add(kind, path)
        self.rebuild()

    def prune(self) -> list[str]:
        gone = self.files.prune()
        if gone:
            names = ", ".join(Path(p).name for p in gone)
            self.notice.emit(f"Removed from the recent files (no longer there): {names}")
        return gone

    def rebuild(self, prune: bool = True) -> None:
        if prune:
            self.prune()
        self.menu.clear()
        kinds = [k for k in self.files.kinds() if self.files.paths(k)]
        for kind in kinds:
            self.menu.addSection(kind.capitalize() + "s")
            for p in self.files.paths(kind):
                act = self.menu.addAction(Path(p).name)
                act.setToolTip(p)
                act.setStatusTip(p)
                act.setData(p)
                act.triggered.connect(lambda _=False, q=p: self.open_requested.emit(q))
        if kinds:
            self.menu.addSeparator()
            clear = self.menu.addAction("Clear recent files")
            clear.triggered.connect(self.clear)
        else:
            none = self.menu.addAction("(no recent files)")
            none.setEnabled(False)

    def actions_for(self, kind: str) -> list:
        """The menu entries of ``kind`` (tests)."""
        self.rebuild()
        paths = self.files.paths(kind)
        return [a for a in self.menu.actions() if a.data() in paths]

    def clear(self) -> None:
        self.files.clear()
        self.rebuild()
