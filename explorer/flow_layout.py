"""A layout that wraps its widgets onto as many rows as the width needs (Qt's "Flow Layout" example).

Rows of check boxes and buttons laid out with a QHBoxLayout set their panel's minimum width to
their total width, so a narrow dock scrolled them sideways and cut the last ones off; in a
:class:`FlowLayout` the minimum width is the widest single item and the height follows the width
(``heightForWidth``).
"""
from __future__ import annotations

from PyQt6.QtCore import QPoint, QRect, QSize, Qt
from PyQt6.QtWidgets import QLayout, QSizePolicy, QStyle


class FlowLayout(QLayout):
    """Items left to right, wrapped to the next row when the width runs out."""

    def __init__(self, parent=None, spacing: int = -1):
        super().__init__(parent)
        self._items = []
        self._spacing = spacing

    def addItem(self, item) -> None:  # noqa: N802 (Qt's names)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, i):  # noqa: N802
        return self._items[i] if 0 <= i < len(self._items) else None

    def takeAt(self, i):  # noqa: N802
        return self._items.pop(i) if 0 <= i < len(self._items) else None

    def expandingDirections(self):  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for it in self._items:
            size = size.expandedTo(it.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _gap(self, it, orientation) -> int:
        if self._spacing >= 0:
            return self._spacing
        w = it.widget()
        style = w.style() if w is not None else None
        if style is None:
            return 6
        pm = QStyle.PixelMetric.PM_LayoutHorizontalSpacing if orientation == Qt.Orientation.Horizontal \
            else QStyle.PixelMetric.PM_LayoutVerticalSpacing
        gap = style.layoutSpacing(QSizePolicy.ControlType.PushButton, QSizePolicy.ControlType.PushButton,
                                  orientation)
        return gap if gap >= 0 else style.pixelMetric(pm)

    def _place(self, rect, move: bool) -> int:
        """Lay the items out in ``rect`` (``move``: set their geometry); the height used."""
        m = self.contentsMargins()
        r = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_h = r.x(), r.y(), 0
        for it in self._items:
            if it.isEmpty():
                continue
            hint = it.sizeHint()
            dx, dy = self._gap(it, Qt.Orientation.Horizontal), self._gap(it, Qt.Orientation.Vertical)
            if x + hint.width() > r.right() + 1 and row_h > 0:
                x, y, row_h = r.x(), y + row_h + dy, 0
            if move:
                it.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + dx
            row_h = max(row_h, hint.height())
        return y + row_h - rect.y() + m.bottom()
