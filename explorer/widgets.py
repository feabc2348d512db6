"""Small Qt pieces shared by the workspaces: the message strip, scrolled pages and waiting on a
worker's lock with a busy cursor."""
from __future__ import annotations

import contextlib

from PyQt6.QtCore import QSize, Qt, pyqtSignal
from PyQt6.QtGui import QPainter
from PyQt6.QtWidgets import (QAbstractButton, QApplication, QComboBox, QDockWidget, QFrame, QHBoxLayout, QLabel,
                             QMainWindow, QScrollArea, QStyle, QToolButton, QWidget)
import pyqtgraph as pg


class MessageBar(QFrame):
    """Non-modal message strip above the canvas (errors never block the run loop).  ``shown(text,
    level)`` is emitted for every message (the window's message log records it)."""

    shown = pyqtSignal(str, str)

    STYLES = {"error": ("#fde7e9", "#b00020", QStyle.StandardPixmap.SP_MessageBoxCritical),
              "warning": ("#fff4e0", "#8a5300", QStyle.StandardPixmap.SP_MessageBoxWarning),
              "info": ("#e7f1fb", "#1f4e79", QStyle.StandardPixmap.SP_MessageBoxInformation)}

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        self.icon = QLabel()
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        lay.addWidget(self.icon)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.level = ""
        self.hide()

    def show_message(self, text: str, level: str = "error") -> None:
        bg, fg, icon = self.STYLES[level]
        self.level = level
        self.setStyleSheet(f"MessageBar {{ background: {bg}; border: 1px solid {fg}; border-radius: 3px; }}"
                           f"QLabel {{ color: {fg}; }}")
        self.icon.setPixmap(self.style().standardIcon(icon).pixmap(18, 18))
        self.label.setText(text)
        self.show()
        self.shown.emit(str(text), level)

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""


class ElidedLabel(QLabel):
    """A one-line label that never widens its window: a long text is cut with "…" (the whole text
    in its tooltip).  For status-bar fields fed by the workspaces."""

    def __init__(self, text: str = "", tip: str = "", parent=None):
        super().__init__(text, parent)
        self._tip = tip
        self.setToolTip(tip)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self.setToolTip(f"{self._tip}\n{text}" if self._tip and text else self._tip or text)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(min(60, super().minimumSizeHint().width()), super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802
        sh = super().sizeHint()
        return QSize(min(sh.width(), self.maximumWidth()), sh.height())

    def paintEvent(self, _ev) -> None:  # noqa: N802
        p = QPainter(self)
        r = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, r.width())
        p.setPen(self.palette().windowText().color())
        p.drawText(r, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), text)
        p.end()


def scrolled(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless, resizable scroll area: a page whose controls need more room than
    its dock or tab offers scrolls instead of forcing the window (and the views beside it) to make
    room — a dock of many sweep tabs would otherwise squeeze the central view to nothing."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    return area


def page_of(widget: QWidget | None) -> QWidget | None:
    """The content of a page made by :func:`scrolled` (else ``widget`` itself)."""
    return widget.widget() if isinstance(widget, QScrollArea) else widget


@contextlib.contextmanager
def busy_cursor():
    """The wait cursor over the whole application for the duration of the block."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        yield
    finally:
        QApplication.restoreOverrideCursor()


@contextlib.contextmanager
def holding(lock):
    """Hold ``lock`` (a worker's): at once when it is free, else under the wait cursor while the
    worker finishes its current chunk, so that a GUI-thread wait is never silent."""
    if not lock.acquire(blocking=False):
        with busy_cursor():
            lock.acquire()
    try:
        yield
    finally:
        lock.release()


_AREAS = {"left": Qt.DockWidgetArea.LeftDockWidgetArea, "right": Qt.DockWidgetArea.RightDockWidgetArea,
          "bottom": Qt.DockWidgetArea.BottomDockWidgetArea, "top": Qt.DockWidgetArea.TopDockWidgetArea}


def add_dock(window: QMainWindow, title: str, name: str, widget: QWidget, area: str = "left",
             closable: bool = False, tabify_with: QDockWidget | None = None) -> QDockWidget:
    """Put ``widget`` in a dock of ``window`` titled ``title`` at ``area`` (left, right, bottom,
    top).  ``name`` is its objectName (window state is saved by it); the dock moves and floats,
    and closes only when ``closable``; ``tabify_with`` stacks it as a tab behind that dock."""
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    dock.setWidget(widget)
    if not closable:
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
    window.addDockWidget(_AREAS[area], dock)
    if tabify_with is not None:
        window.tabifyDockWidget(tabify_with, dock)
    return dock


DOCK_BUTTON_TIPS = {"qt_dockwidget_floatbutton": "Float this panel in its own window (double-click its title "
                                                   "to put it back)",
                    "qt_dockwidget_closebutton": "Close this panel (View menu or the workspace's menu shows it again)"}


#: tooltips of Qt's own buttons that come without one (tables' corner, tab bars' scroll arrows)
INTERNAL_BUTTON_TIPS = {"qt_tableview_cornerbutton": "Select the whole table",
                        "ScrollLeftButton": "Scroll the tabs left", "ScrollRightButton": "Scroll the tabs right"}


def dock_button_tooltips(root: QWidget) -> int:
    """Tooltips on the float and close buttons of every dock under ``root``, and on Qt's other
    internal buttons (:data:`INTERNAL_BUTTON_TIPS`) — Qt gives them none; the number of buttons
    given one."""
    n = 0
    docks = root.findChildren(QDockWidget) + ([root] if isinstance(root, QDockWidget) else [])
    for dock in docks:
        for b in dock.findChildren(QAbstractButton):
            tip = DOCK_BUTTON_TIPS.get(b.objectName())
            if tip and not b.toolTip():
                b.setToolTip(f"{tip}: {dock.windowTitle()}" if dock.windowTitle() else tip)
                n += 1
    for b in root.findChildren(QAbstractButton):
        tip = INTERNAL_BUTTON_TIPS.get(b.objectName())
        if tip and not b.toolTip():
            b.setToolTip(tip)
            n += 1
    return n


#: a combo never asks for more than this to show its longest entry (longer ones keep "…" and a tooltip)
COMBO_MAX_PX = 320
#: a combo's frame, margins and arrow beside its text (Fusion: 31 px; a little to spare)
COMBO_CHROME_PX = 36


def fit_combos(root: QWidget) -> int:
    """Every combo box under ``root`` at least as wide as its longest entry needs (up to
    :data:`COMBO_MAX_PX`), so a dock does not squeeze it to a clipped text ("RK2 midpoint
    (explicit, paper 000"); its popup list is as wide as its longest entry.  Measured with the
    fonts of now (call it at normal fonts: lecture mode keeps these floors).  Returns how many
    combos got a floor.  A workspace calls it on its parameter form and lets the dock (or the
    scroll area, :func:`scrolled`) take the form's new minimum width — applied from outside, a
    scrolled page would only grow past its area and hide its right edge."""
    n = 0
    for c in root.findChildren(QComboBox):
        if c.count() == 0 or c.isEditable():
            continue
        fm = c.fontMetrics()
        text_w = max(fm.horizontalAdvance(c.itemText(i)) for i in range(c.count()))
        need = min(COMBO_MAX_PX, text_w + COMBO_CHROME_PX)
        c.view().setMinimumWidth(min(2 * COMBO_MAX_PX, text_w + 40))
        if need > c.minimumWidth():
            c.setMinimumWidth(need)
            n += 1
    return n


def plot_panel(title: str | None = None, bottom: str | None = None, left: str | None = None,
               units: dict | None = None, background=None, grid: bool = False, legend: bool = False,
               min_height: int | None = None):
    """A pyqtgraph PlotWidget with its title, axis labels (``units``: {"bottom"/"left": unit}, for
    pyqtgraph's SI-prefixed units), background, grid, legend and minimum height set in one call."""
    w = pg.PlotWidget(title=title) if background is None else pg.PlotWidget(title=title, background=background)
    units = units or {}
    for side, text in (("bottom", bottom), ("left", left)):
        if text is not None:
            w.setLabel(side, text, units=units.get(side))
    if grid:
        w.showGrid(x=True, y=True, alpha=0.3)
    if legend:
        w.addLegend()
    if min_height is not None:
        w.setMinimumHeight(min_height)
    return w
