"""explorer.log_axis: legible log axes on short plots (decade / 1-2-5 labels, crowded minors dropped)."""
import math

import pyqtgraph as pg
import pytest

from explorer.log_axis import LogAxis, log_ticks, tick_label


def test_levels_cover_every_multiple_once(rng):
    for _ in range(20):
        lo = float(rng.uniform(-3, 4))
        hi = lo + float(rng.uniform(0.2, 5))
        (sp, major), (none, minor) = log_ticks(lo, hi)
        assert sp == 1.0 and none is None
        every = [k + math.log10(m) for k in range(math.floor(lo), math.ceil(hi) + 1) for m in range(1, 10)
                 if lo <= k + math.log10(m) <= hi]
        assert sorted(major + minor) == pytest.approx(sorted(every))
        mults = {round(10 ** (v - math.floor(v + 1e-9))) for v in major}
        assert mults <= ({1, 2, 5} if hi - lo < 2 else {1})
    assert log_ticks(1.0, 1.0) == [] and log_ticks(0.0, float("nan")) == []


def test_labels_are_short():
    assert [tick_label(math.log10(x)) for x in (2, 50, 0.01, 1000)] == ["2", "50", "0.01", "1000"]
    assert tick_label(6) == "1e+06" and tick_label(-5) == "1e-05"


def test_short_plot_draws_few_labels(qtbot):
    w = pg.GraphicsLayoutWidget()
    qtbot.addWidget(w)
    w.resize(500, 160)
    plain = w.addPlot(row=0, col=0)
    ours = w.addPlot(row=0, col=1, axisItems={"left": LogAxis("left"), "bottom": LogAxis("bottom")})
    for p in (plain, ours):
        p.setLogMode(x=True, y=True)
        p.plot([300, 600, 1200, 2400], [2, 8, 30, 60])
    w.show()
    qtbot.waitExposed(w)

    def ranged(p):                   # auto-range done: the view holds the data (log10 2 … log10 60)
        lo, hi = p.vb.viewRange()[1]
        return lo <= math.log10(2) and hi >= math.log10(60) and p.getAxis("left").height() > 50
    # a fixed 50 ms wait was too short on a loaded box: the axis was read before the view ranged
    qtbot.waitUntil(lambda: ranged(plain) and ranged(ours), timeout=5000)
    qtbot.wait(50)

    def labels(p):
        img = pg.QtGui.QImage(16, 16, pg.QtGui.QImage.Format.Format_ARGB32)
        painter = pg.QtGui.QPainter(img)
        try:
            return [t[2] for t in p.getAxis("left").generateDrawSpecs(painter)[2]]
        finally:
            painter.end()
    assert len(labels(plain)) > 10                       # pyqtgraph's own: every 1…9 multiple, overlapping
    got = labels(ours)
    assert 2 <= len(got) <= 6 and set(got) <= {"1", "2", "5", "10", "20", "50", "100"}, got
