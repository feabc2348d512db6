"""Helpers the shell tests share: a file dropped on the window as a file manager's drag does."""
from __future__ import annotations

from PyQt6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PyQt6.QtGui import QDragEnterEvent, QDropEvent


def drop_file(win, path, at: tuple[int, int] = (200, 200)) -> QDropEvent:
    """Drag ``path`` over ``win`` (the drag-enter must be accepted) and drop it; returns the drop event."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(*at), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    win.dragEnterEvent(enter)
    assert enter.isAccepted()
    ev = QDropEvent(QPointF(*at), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    win.dropEvent(ev)
    return ev
