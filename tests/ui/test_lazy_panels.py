"""Hidden experiment tabs and docks built on first show or access (explorer/lazy_panel.py, issue 37
"suite time"): a window builds only what it shows; a tab never opened runs nothing, has no figure,
and keeps the state restored into it through save → restore round trips (settings and sessions)."""
from __future__ import annotations

import json

import pytest
from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QAbstractButton, QDockWidget, QLabel, QSpinBox, QTabWidget, QWidget

from explorer.lazy_panel import LazyPanel, LazyPanels, content_of
from explorer.widgets import scrolled


class Toy(QWidget):
    """A panel with ``state()`` / ``restore()`` that records every state it was given."""

    def __init__(self):
        super().__init__()
        self.spin = QSpinBox(self)
        self.spin.setRange(0, 10**6)
        self.given = []

    def state(self) -> dict:
        return {"n": self.spin.value()}

    def restore(self, state) -> None:
        if not isinstance(state, dict):
            return
        if "bad" in state:
            raise ValueError("a state that does not fit")
        self.given.append(state)
        if isinstance(state.get("n"), int):
            self.spin.setValue(state["n"])


def _settings(tmp_path, name: str) -> QSettings:
    return QSettings(str(tmp_path / f"{name}.ini"), QSettings.Format.IniFormat)


def test_a_tab_page_builds_when_chosen_or_asked_for(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("first"), "first")
    made = []
    lazy = [LazyPanel(lambda: made.append(Toy()) or made[-1], scrolled) for _ in range(2)]
    for i, page in enumerate(lazy):
        tabs.addTab(page, f"lazy {i}")
    tabs.show()
    qtbot.waitExposed(tabs)
    assert made == [] and not any(p.is_built for p in lazy) and content_of(lazy[0]) is None
    tabs.setCurrentIndex(1)
    assert len(made) == 1 and lazy[0].is_built and not lazy[1].is_built
    assert content_of(lazy[0]) is made[0] and made[0].isVisible()       # shown at once, in its scroll area
    assert lazy[0].page().widget() is made[0] and lazy[1].page() is None
    assert content_of(lazy[1], build=True) is made[1] and lazy[1].panel() is made[1] and len(made) == 2


def test_states_restored_before_the_build_are_applied_in_order(qtbot, rng):
    lazy = LazyPanel(Toy)
    qtbot.addWidget(lazy)
    a, b = ({"n": int(v)} for v in rng.integers(1, 10**6, 2))
    assert lazy.state() is None
    for s in (a, None, "junk", {"bad": 1}, b):
        lazy.restore(s)
    assert not lazy.is_built and lazy.state() == b          # the last one restored, never the defaults
    panel = lazy.panel()
    assert panel.given == [a, b] and panel.state() == b == lazy.state()   # the misfit skipped
    c = {"n": int(rng.integers(1, 10**6))}
    lazy.restore(c)                                          # once built: straight to the panel
    assert panel.given[-1] == c and lazy.state() == c


def test_lazy_panels_write_only_what_they_were_given(qtbot, tmp_path, rng):
    pages = {k: LazyPanel(Toy) for k in ("x", "y")}
    for p in pages.values():
        qtbot.addWidget(p)
    panels = LazyPanels(pages)
    empty = _settings(tmp_path, "empty")
    panels.save_settings(empty)
    assert empty.allKeys() == []                             # nothing known: no defaults written
    saved = {"n": int(rng.integers(1, 10**6))}
    s1 = _settings(tmp_path, "s1")
    s1.setValue("x_json", json.dumps(saved))
    s1.setValue("y_json", "{not json")
    panels.restore_settings(s1)
    assert "x" in panels and len(panels) == 2 and list(panels) == ["x", "y"] and panels.built() == {}
    s2 = _settings(tmp_path, "s2")
    panels.save_settings(s2)
    assert json.loads(s2.value("x_json")) == saved and s2.value("y_json") is None
    assert panels.states() == {"x": saved} and panels.built() == {}
    assert panels["x"].state() == saved and list(panels.built()) == ["x"]


@pytest.fixture
def keep(qtbot):
    """``keep(ws)``: a workspace made by the test, shut down (its worker stopped) at teardown."""
    kept = []

    def add(ws):
        qtbot.addWidget(ws)
        kept.append(ws)
        return ws

    yield add
    for ws in kept:
        ws.shutdown()


@pytest.fixture
def graphs(keep, backend):
    from explorer.graphs.workspace import GraphsWorkspace
    return lambda: keep(GraphsWorkspace(backend))


def _saved_restored_saved(ws1, make, tmp_path):
    """``ws1``'s settings restored into a new workspace, which saves them again: (it, its settings)."""
    s1, s2 = _settings(tmp_path, "s1"), _settings(tmp_path, "s2")
    ws1.save_settings(s1)
    ws2 = make()
    ws2.restore_settings(s1)
    ws2.save_settings(s2)
    return ws2, s2


def _figure_names(ws) -> list[str]:
    return [f.name for f in ws.figure_targets()]


def test_graphs_tabs_build_when_chosen(graphs, qtbot):
    ws = graphs()
    ws.resize(1200, 800)
    ws.show()
    qtbot.waitExposed(ws)
    assert ws.sweep_tabs.built() == {} and not ws.busy()
    ws.cancel()                                              # nothing built, nothing to stop
    timing = "Reproduce clustering timings (paper 001 Figs. 14–15)"
    assert timing not in _figure_names(ws)                   # a tab never opened has no figure
    i = [ws.tabs.tabText(k) for k in range(ws.tabs.count())].index("Clustering timings (paper 001)")
    ws.tabs.setCurrentIndex(i)
    assert list(ws.sweep_tabs.built()) == ["cc_timing"] and ws.cc_timing.isVisible()
    assert timing in _figure_names(ws) and ws.show_tab(ws.cc_timing) == i
    assert ws.fw_family is ws.sweep_tabs["fw_family"] and set(ws.sweep_tabs.built()) == {"cc_timing", "fw_family"}


def test_graphs_export_plots_builds_the_chosen_tab(graphs, tmp_path):
    ws = graphs()                                            # never shown: choosing a tab builds nothing
    i = [ws.tabs.tabText(k) for k in range(ws.tabs.count())].index("Reproduce (paper 000)")
    ws.tabs.setCurrentIndex(i)
    assert ws.sweep_tabs.built() == {}
    out = ws.export_plots(str(tmp_path / "plots.png"))
    assert out and (tmp_path / "plots.png").stat().st_size > 0 and list(ws.sweep_tabs.built()) == ["reproduce"]


def test_graphs_never_opened_tab_keeps_its_saved_state(graphs, tmp_path, rng):
    ws1 = graphs()
    p = ws1.cc_timing
    p.sp_repeats.setValue(int(rng.integers(1, 101)))
    p.sp_seed.setValue(int(rng.integers(0, min(p.sp_seed.maximum(), 10**6))))
    p.ed_sizes["ba"].setText(", ".join(map(str, sorted(rng.integers(50, 5000, 3)))))
    want = p.state()
    ws2, s2 = _saved_restored_saved(ws1, graphs, tmp_path)
    session = ws2.session_state()
    assert "cc_timing" not in ws2.sweep_tabs.built()
    assert json.loads(s2.value("cc_timing_json")) == want and session["cc_timing"] == want
    ws3 = graphs()
    ws3.restore_settings(s2)
    assert ws3.cc_timing.state() == want
    ws4 = graphs()
    ws4.restore_session(json.loads(json.dumps(session)), {})
    assert ws4.sweep_tabs.built() == {} and ws4.cc_timing.state() == want


@pytest.fixture
def ch(keep, backend):
    from explorer.cahn_hilliard.workspace import CahnHilliardWorkspace
    from kernels.cahn_hilliard.params import CHParams
    return lambda: keep(CahnHilliardWorkspace(backend, params=CHParams(size=32)))


def test_ch_docks_build_when_their_tab_is_chosen(ch, qtbot):
    ws = ch()
    ws.resize(1200, 800)
    ws.show()
    qtbot.waitExposed(ws)
    assert ws.side_panels.built() == {}                      # Qt shows every tabbed dock once: none built
    fig = "Reproduce timings (paper 001 Fig. 10 / paper 000 layouts)"
    assert fig not in _figure_names(ws)
    dock = ws.findChild(QDockWidget, "ch_reproduce")
    dock.raise_()
    qtbot.waitUntil(lambda: "reproduce" in ws.side_panels.built(), timeout=3000)
    assert list(ws.side_panels.built()) == ["reproduce"] and ws.fig10.dock is dock and ws.fig10.isVisible()
    assert fig in _figure_names(ws)
    assert ws.rng_panel.dock in ws.tabifiedDockWidgets(ws.plots_dock)          # read: built
    assert set(ws.side_panels.built()) == {"reproduce", "rng"}
    corners = [b for b in ws.rng_panel.findChildren(QAbstractButton) if b.objectName() == "qt_tableview_cornerbutton"]
    assert corners and all(b.toolTip() for b in corners)     # as the main window gives a new workspace's


def test_ch_never_opened_docks_keep_their_saved_state(ch, tmp_path, rng):
    ws1 = ch()
    ws1.rng_panel.sp_count.setValue(int(rng.integers(1, 100_001)))
    ws1.rng_panel.sp_seed.setValue(int(rng.integers(0, min(ws1.rng_panel.sp_seed.maximum(), 10**6))))
    ws1.fig10.ed_sizes.setText(", ".join(map(str, sorted(rng.integers(16, 512, 3)))))
    want = {"rng": ws1.rng_panel.state(), "reproduce": ws1.fig10.state()}
    ws2, s2 = _saved_restored_saved(ws1, ch, tmp_path)
    assert ws2.side_panels.built() == {}
    assert {k: json.loads(s2.value(f"{k}_json")) for k in want} == want
    ws3 = ch()
    ws3.restore_settings(s2)
    assert {"rng": ws3.rng_panel.state(), "reproduce": ws3.fig10.state()} == want
