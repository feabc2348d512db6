"""The message log: every notice, warning and error the window shows (message bars, status bar,
unexpected exceptions), with its time and where it came from, in a dock (View ▸ Message log)
whose text can be selected and copied (*Copy* copies all), and emptied (*Clear*).

The main window feeds it (:meth:`MessageLog.add`); a workspace's :class:`explorer.widgets.MessageBar`
reports each message it shows through its ``shown(text, level)`` signal, so a workspace needs no
call of its own.  The same message repeated within a second (a notice shown in the message bar
and the status bar at once) is logged once.
"""
from __future__ import annotations

import html
import time
from dataclasses import dataclass

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import (QApplication, QHBoxLayout, QPushButton, QTextEdit, QVBoxLayout, QWidget)

LEVELS = ("info", "warning", "error")
COLORS = {"info": "#1f4e79", "warning": "#8a5300", "error": "#b00020"}
MAX_ENTRIES = 5000


@dataclass(frozen=True)
class Entry:
    time: float
    level: str
    source: str
    text: str

    def line(self) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.time))
        src = f" [{self.source}]" if self.source else ""
        return f"{stamp} {self.level.upper():7s}{src} {self.text}"


class MessageLog(QObject):
    """The entries, oldest first; ``added(Entry)`` after each, ``cleared()``."""

    added = pyqtSignal(object)
    cleared = pyqtSignal()

    def __init__(self, parent=None, clock=time.time):
        super().__init__(parent)
        self.entries: list[Entry] = []
        self._clock = clock

    def add(self, text: str, level: str = "info", source: str = "") -> Entry | None:
        """Log ``text`` (``level`` info / warning / error); None when it repeats the last entry
        within a second or is empty."""
        text = " ".join(str(text).split())
        if not text:
            return None
        level = level if level in LEVELS else "info"
        now = self._clock()
        if self.entries:
            last = self.entries[-1]
            if last.text == text and now - last.time < 1.0:
                if LEVELS.index(level) > LEVELS.index(last.level):   # keep the graver level
                    self.entries[-1] = Entry(last.time, level, last.source or source, text)
                return None
        e = Entry(now, level, source, text)
        self.entries.append(e)
        del self.entries[:-MAX_ENTRIES]
        self.added.emit(e)
        return e

    def text(self) -> str:
        """Every entry, one a line (what *Copy* puts on the clipboard)."""
        return "\n".join(e.line() for e in self.entries)

    def clear(self) -> None:
        self.entries.clear()
        self.cleared.emit()


class LogSource(QObject):
    """A named sender into a :class:`MessageLog` (a child of it): connect signals to its slots —
    bound methods of a QObject, so Qt disconnects them when either side is deleted."""

    def __init__(self, log: MessageLog, source: str):
        super().__init__(log)
        self.log, self.source = log, source

    def message(self, text: str, level: str = "info") -> None:
        self.log.add(text, level, self.source)

    def info(self, text: str) -> None:
        self.log.add(text, "info", self.source)


class LogView(QWidget):
    """The dock's content: the entries (selectable, coloured by level), *Copy* and *Clear*."""

    def __init__(self, log: MessageLog, parent=None):
        super().__init__(parent)
        self.log = log
        self.view = QTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setObjectName("messageLogText")
        self.view.setToolTip("Every notice, warning and error with its time; select text to copy part of it")
        self.btn_copy = QPushButton("Copy", self)
        self.btn_copy.setToolTip("Copy the whole log to the clipboard")
        self.btn_clear = QPushButton("Clear", self)
        self.btn_clear.setToolTip("Empty the log")
        self.btn_copy.clicked.connect(self.copy)
        self.btn_clear.clicked.connect(log.clear)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.btn_copy)
        row.addWidget(self.btn_clear)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.view, 1)
        lay.addLayout(row)
        log.added.connect(self._append)
        log.cleared.connect(self.view.clear)
        for e in log.entries:
            self._append(e)

    def _append(self, e: Entry) -> None:
        self.view.append(f'<span style="color:{COLORS[e.level]}">{html.escape(e.line())}</span>')

    def copy(self) -> str:
        text = self.log.text()
        QApplication.clipboard().setText(text)
        return text
