"""Lecture mode (F11) on → off puts every widget back exactly (issue 19): palettes, style sheets,
fonts, and the themed pyqtgraph plots (background, axes, curve pens, labels), in all four
workspaces; the Light theme works afterwards; Flint in lecture mode draws readable axes and a
visible trace."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QColor, QPalette
from PyQt6.QtWidgets import QApplication, QWidget

from explorer.export import qimage_to_array

KEYS = ("cahn_hilliard", "graphs", "occupancy", "flint")
GROUPS = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled)
ROLES = [r for r in QPalette.ColorRole if r not in (QPalette.ColorRole.NColorRoles,)]


def _pen(p) -> tuple:
    p = pg.mkPen(p)
    return p.color().name(QColor.NameFormat.HexArgb), round(p.widthF(), 3), p.style().value


def widget_state(win) -> dict:
    """Palette (every group and role), style sheet, font and the 'set explicitly' flags of every
    widget under the main window."""
    out = {}
    for w in [win, *win.findChildren(QWidget)]:
        pal = w.palette()
        out[w] = (w.metaObject().className(), w.objectName(),
                      tuple(pal.color(g, r).name() for g in GROUPS for r in ROLES),
                      w.styleSheet(), w.font().toString(),
                      w.testAttribute(Qt.WidgetAttribute.WA_SetPalette), w.testAttribute(Qt.WidgetAttribute.WA_SetFont))
    return out


def plot_state(win) -> dict:   # keyed by the objects themselves: ids are not reused while held
    """The themed parts of every pyqtgraph view: background; axes' pens, label style and tick font;
    labels' HTML; curves' pens and symbols."""
    out = {}
    for v in win.findChildren(pg.GraphicsView):
        items = []
        for it in v.scene().items():
            if isinstance(it, pg.AxisItem):
                f = it.style.get("tickFont")
                items.append(("axis", it, _pen(it.pen()), _pen(it.textPen()), str(it.labelStyle),
                              f.toString() if f is not None else None, it.label.toHtml(), it.width()))
            elif isinstance(it, pg.PlotDataItem):
                o = it.opts
                sb = o.get("symbolBrush")
                items.append(("curve", it, _pen(o["pen"]), None if sb is None else pg.mkBrush(sb).color().name(),
                              o.get("symbolSize")))
            elif isinstance(it, pg.LabelItem):
                items.append(("label", it, it.item.toHtml(), str(it.opts)))
            elif isinstance(it, pg.ScatterPlotItem) and not isinstance(it.parentItem(), pg.PlotDataItem):
                items.append(("scatter", it, it.opts["size"], _pen(it.opts["pen"]),
                              it.opts["brush"].color().name() if hasattr(it.opts["brush"], "color") else None))
        out[v] = (v.backgroundBrush().color().name(), sorted(items, key=lambda t: (t[0], id(t[1]))))
    return out


def _open_all(main_window, qtbot):
    for key in KEYS:
        w = main_window.show_workspace(key)
        qtbot.waitExposed(w)
    fl = main_window.workspace("flint")
    fl.run()                                   # curves exist (and a legend-free single trace)
    qtbot.waitUntil(lambda: fl.worker is None, timeout=30000)
    return fl


def test_lecture_on_off_restores_every_widget_and_plot(main_window, qtbot):
    _open_all(main_window, qtbot)
    main_window.show_workspace("cahn_hilliard")
    qtbot.wait(500)                            # the plots' refresh timers have run
    w0, p0 = widget_state(main_window), plot_state(main_window)
    font0, geometry0 = QApplication.font().toString(), main_window.geometry()
    main_window.act_lecture.trigger()                     # F11
    assert main_window.lecture_mode()
    assert QApplication.font().pointSizeF() == 17 and QApplication.palette().window().color().name() == "#000000"
    on = plot_state(main_window)
    assert on != p0                                        # the plots really were themed
    main_window.act_lecture.trigger()                     # F11 again
    qtbot.wait(500)
    w1, p1 = widget_state(main_window), plot_state(main_window)
    assert QApplication.font().toString() == font0
    qtbot.waitUntil(lambda: main_window.geometry() == geometry0, timeout=3000)   # back where and as large
    changed = [w0[k][:2] for k in w0 if k in w1 and w0[k] != w1[k]]
    assert not changed, f"{len(changed)} widgets differ after lecture mode, e.g. {changed[:5]}"
    bad = [k for k in p0 if k in p1 and p0[k] != p1[k]]
    assert not bad, [[(a, b) for a, b in zip(p0[k][1], p1[k][1]) if a != b][:2] for k in bad[:2]]
    # View ▸ Theme ▸ Dark and back to Light reach every widget (nothing kept its own palette)
    main_window.set_theme("dark")
    qtbot.wait(50)
    dark = widget_state(main_window)
    labels = [k for k, v in dark.items()                 # (hidden pages update when shown)
              if v[0] in ("QLabel", "QDockWidget") and not v[3] and not v[5] and k.isVisible()]
    assert labels and all(dark[k][2] != w0[k][2] for k in labels if k in w0)
    main_window.set_theme("light")
    qtbot.wait(50)
    assert widget_state(main_window) == w0


def _luma(c) -> float:
    c = pg.mkColor(c)
    return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF()


def test_flint_lecture_mode_draws_readable_axes_and_trace(main_window, qtbot):
    fl = _open_all(main_window, qtbot)
    main_window.show_workspace("flint")
    main_window.set_lecture_mode(True)
    qtbot.wait(50)
    pi = fl.plot.getPlotItem()
    bg = _luma(fl.plot.backgroundBrush().color())
    for name in ("left", "bottom"):
        ax = pi.getAxis(name)
        assert abs(_luma(ax.pen().color()) - bg) > 0.5 and abs(_luma(ax.textPen().color()) - bg) > 0.5
    pen = fl.curves[0].opts["pen"]
    assert pen.widthF() >= 3 and abs(_luma(pen.color()) - bg) > 0.4
    # what is drawn: bright axis and trace pixels on the black background
    img = qimage_to_array(fl.plot.grab().toImage())[..., :3].astype(int)
    assert (img.sum(-1) < 60).mean() > 0.5                     # mostly black
    assert (img.min(-1) > 200).sum() > 200                     # white axes and tick labels
    yellow = (img[..., 0] > 200) & (img[..., 1] > 170) & (img[..., 2] < 90)
    assert yellow.sum() > 300                                  # the thick lecture trace
    main_window.set_lecture_mode(False)
    assert fl.curves[0].opts["pen"].widthF() == pytest.approx(1.5)
