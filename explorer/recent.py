"""Recent files: the last :data:`MAX_PER_KIND` files of each kind (``session``, and each kind a
workspace names in its ``FILE_TYPES``: ``model``, ``graph``, ``field`` …), newest first, kept in
the settings under ``recent/<kind>``.  File ▸ Open Recent lists them; a file that has gone is
dropped (:meth:`RecentFiles.prune`, the window says which).

A workspace that opens a file through its own dialog reports it with :func:`file_opened` (a
module-level signal the main window listens to), so it is listed too::

    from explorer import recent
    recent.file_opened(path)             # after the file was read successfully
"""
from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QObject, pyqtSignal

MAX_PER_KIND = 10
GROUP = "recent"


class RecentFiles:
    """Recent files of every kind in a QSettings (``settings``)."""

    def __init__(self, settings, max_per_kind: int = MAX_PER_KIND):
        self.settings = settings
        self.max = int(max_per_kind)

    def _key(self, kind: str) -> str:
        return f"{GROUP}/{kind}"

    def paths(self, kind: str) -> list[str]:
        """The recent files of ``kind``, newest first (at most ``max``)."""
        v = self.settings.value(self._key(kind), [])
        if isinstance(v, str):          # QSettings gives a one-item list back as a string
            v = [v] if v else []
        return [str(p) for p in (v or []) if str(p)][: self.max]

    def kinds(self) -> list[str]:
        self.settings.beginGroup(GROUP)
        try:
            return sorted(self.settings.childKeys())
        finally:
            self.settings.endGroup()

    def add(self, kind: str, path) -> None:
        """Put ``path`` (made absolute) first in ``kind``'s list; the oldest beyond ``max`` go."""
        p = str(Path(path).expanduser().resolve())
        items = [p] + [q for q in self.paths(kind) if q != p]
        self.settings.setValue(self._key(kind), items[: self.max])

    def remove(self, kind: str, path) -> None:
        self.settings.setValue(self._key(kind), [q for q in self.paths(kind) if q != str(path)])

    def prune(self) -> list[str]:
        """Drop the files that no longer exist, from every kind; returns them."""
        gone = []
        for kind in self.kinds():
            items = self.paths(kind)
            keep = [p for p in items if Path(p).is_file()]
            gone += [p for p in items if p not in keep]
            if keep != items:
                self.settings.setValue(self._key(kind), keep)
        return gone

    def clear(self) -> None:
        self.settings.remove(GROUP)


class _Notifier(QObject):
    opened = pyqtSignal(str)


_notifier: _Notifier | None = None


def notifier() -> _Notifier:
    """The object whose ``opened(path)`` signal carries :func:`file_opened` (the window connects)."""
    global _notifier
    if _notifier is None:
        _notifier = _Notifier()
    return _notifier


def file_opened(path) -> None:
    """A workspace read ``path`` through its own dialog: list it under Open Recent."""
    notifier().opened.emit(str(path))
