"""The Graphs workspace's dock layout in lecture mode: the graph view keeps most of the width.

With lecture fonts the controls dock and the Plots dock beside the view left it a few pixels
(issue 32).  :class:`LectureDocks` moves the Plots dock under the view while lecture mode is on and
keeps the controls dock at :data:`CONTROLS_FRACTION` of the top-level window's width, so that the
view keeps at least :data:`VIEW_FRACTION` of it; it refits on every resize (the window goes full
screen after the workspaces switch).  Leaving puts the Plots dock back in its area; the main window
then restores the workspace's exact dock state (``QMainWindow.saveState``) once its own geometry is
back (``explorer.main_window``).
"""
from __future__ import annotations

from PyQt6.QtCore import QEvent, QObject, Qt, QTimer
from PyQt6.QtWidgets import QComboBox, QMainWindow

#: the controls dock's share of the window's width in lecture mode
CONTROLS_FRACTION = 0.24
#: the view's share of the window's width that lecture mode keeps (tests check it)
VIEW_FRACTION = 0.60
#: the Plots dock's share of the workspace's height in lecture mode (under the view)
PLOTS_FRACTION = 0.36
#: the first split of a new window: the controls' and the Plots dock's shares of its width
FIRST_SPLIT = (0.21, 0.33)
#: characters a combo box keeps when it must shrink (its list still shows whole entries)
COMBO_CHARS = 8


def shrinkable_combos(widget) -> None:
    """Let every combo box under ``widget`` shrink to :data:`COMBO_CHARS` characters (long
    entries otherwise set the dock's minimum width)."""
    for cb in widget.findChildren(QComboBox):
        cb.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        cb.setMinimumContentsLength(COMBO_CHARS)


class LectureDocks(QObject):
    """Lecture-mode dock layout of ``win`` (a QMainWindow workspace): ``controls`` left, ``plots``
    moved under the central view; :meth:`enter` / :meth:`leave`."""

    def __init__(self, win: QMainWindow, controls, plots):
        super().__init__(win)
        self.win, self.controls, self.plots = win, controls, plots
        self.active = False
        self._area = None
        self._queued = False
        self._split = False
        self._timer = QTimer(self)            # a child: no call after the window is gone
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._tick)
        win.installEventFilter(self)

    def _tick(self) -> None:
        (self.first_split if not self._split else self.fit)()

    def first_split(self) -> None:
        """Once, when first shown: the docks at FIRST_SPLIT of the window's width (their size hints
        alone left the view a quarter of it)."""
        if self._split or self.active:
            return
        self._split = True
        top = self.win.window().width()
        self.win.resizeDocks([self.controls, self.plots], [int(f * top) for f in FIRST_SPLIT],
                             Qt.Orientation.Horizontal)

    def enter(self) -> None:
        if self.active:
            return
        self.active = True
        self._area = self.win.dockWidgetArea(self.plots)
        self.win.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.plots)
        self.fit()

    def leave(self) -> None:
        if not self.active:
            return
        self.active = False
        self.win.addDockWidget(self._area or Qt.DockWidgetArea.RightDockWidgetArea, self.plots)

    def fit(self) -> None:
        """Controls at CONTROLS_FRACTION of the window's width, the Plots dock at PLOTS_FRACTION of
        the workspace's height."""
        self._queued = False
        if not self.active:
            return
        top = self.win.window().width()
        if self.controls.isVisible():
            self.win.resizeDocks([self.controls], [int(CONTROLS_FRACTION * top)], Qt.Orientation.Horizontal)
        if self.plots.isVisible() and not self.plots.isFloating():
            self.win.resizeDocks([self.plots], [int(PLOTS_FRACTION * self.win.height())], Qt.Orientation.Vertical)

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt's name)
        if not self._split and ev.type() == QEvent.Type.Show:
            self._timer.start(0)
        if self.active and ev.type() == QEvent.Type.Resize and not self._queued:
            self._queued = True
            self._timer.start(0)
        return False
