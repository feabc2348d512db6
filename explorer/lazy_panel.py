"""Panels built the first time they are shown or asked for (a workspace's hidden experiment tabs
and docks), so that a window starts with only what it shows.

A :class:`LazyPanel` stands where the panel would be — a QTabWidget page or a dock's body — and
builds it (``build()``, then ``wrap(panel)`` for the widget it shows, e.g. the panel in a scroll
area) when it is first shown, or when code asks for it (:meth:`LazyPanel.panel`).  A tab page is
shown when its tab is chosen (its ``showEvent``); a dock's body when the dock becomes visible
(:meth:`LazyPanel.show_with`: the dock's ``visibilityChanged``, as Qt keeps the docks behind a tabbed
group's front one "visible", moved off-screen, so a show event says nothing there).  Until then it
runs nothing and keeps what the workspace restores into it: ``restore(state)`` with the panel's
``state()`` dict (settings, a session) is queued and applied, in order, once the panel is built,
and :meth:`LazyPanel.state` gives back the last state restored — so saving a tab never opened
writes the state it was given, not its defaults, and a save → restore round trip loses nothing.
A state that is not a dict is ignored, as every panel's ``restore`` does.

:class:`LazyPanels` holds a workspace's lazy panels by key: item access builds (``tabs["x"]``: the
panel), :meth:`LazyPanels.built` gives only the built ones (what ``busy()``, Cancel and figure export
look at: a panel never built runs nothing and has no data), and it saves and restores their states as
JSON settings under ``<key>_json``.  :class:`panel_property` makes one of them a workspace attribute
(``fig10 = panel_property("reproduce", "side_panels")``) that builds on first access.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QDockWidget, QVBoxLayout, QWidget

from .widgets import add_dock, dock_button_tooltips, page_of, scrolled


class LazyPanel(QWidget):
    """A placeholder that builds its panel on first show or on :meth:`panel`; ``built`` is emitted
    with the panel once it exists.  ``wrap(panel)`` gives the widget put in the placeholder (None:
    the panel itself)."""

    built = pyqtSignal(object)

    def __init__(self, build: Callable[[], QWidget], wrap: Callable[[QWidget], QWidget] | None = None,
                 parent=None):
        super().__init__(parent)
        self._make, self._wrap = build, wrap
        self._panel: QWidget | None = None
        self._page: QWidget | None = None          # what the placeholder shows: the panel or its wrap
        self._building = False
        self._pending: list[dict] = []           # states restored before the panel exists, in order
        self._in_dock = False                      # built when its dock becomes visible (show_with)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)

    @property
    def is_built(self) -> bool:
        return self._panel is not None

    def built_panel(self) -> QWidget | None:
        """The panel when it has been built, else None (builds nothing)."""
        return self._panel

    def page(self) -> QWidget | None:
        """The widget put in the placeholder (the panel, or ``wrap(panel)``); None before the build."""
        return self._page

    def panel(self) -> QWidget:
        """The panel, built now if it was not: shown in the placeholder (Qt's internal buttons given
        the tooltips the main window gives a new workspace's, :func:`explorer.widgets.dock_button_tooltips`),
        then given the states restored so far (one that does not fit, TypeError or ValueError, is skipped)."""
        if self._panel is None:
            if self._building:
                raise RuntimeError("a lazy panel asked for itself while it was being built")
            self._building = True
            try:
                panel = self._make()
                page = self._wrap(panel) if self._wrap is not None else panel
                self.layout().addWidget(page)
                dock_button_tooltips(page)
                if self.isVisible():
                    page.show()
                self._panel, self._page = panel, page
            finally:
                self._building = False
            pending, self._pending = self._pending, []
            for state in pending:
                try:
                    panel.restore(state)
                except (TypeError, ValueError):
                    pass
            self.built.emit(panel)
        return self._panel

    def showEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if self._panel is None and not self._in_dock:
            self.panel()
        super().showEvent(ev)

    def show_with(self, dock: QDockWidget) -> None:
        """Build when ``dock`` (the one holding this placeholder) becomes visible: shown, floated, or
        its tab chosen in a tabbed group — not on the placeholder's own show events."""
        self._in_dock = True
        dock.visibilityChanged.connect(self._on_dock_visible)

    def _on_dock_visible(self, visible: bool) -> None:
        if visible and self._panel is None:
            self.panel()

    def state(self) -> dict | None:
        """The panel's ``state()``; before it is built, the last state restored (None: none)."""
        if self._panel is not None:
            return self._panel.state()
        return self._pending[-1] if self._pending else None

    def restore(self, state) -> None:
        """The panel's ``restore(state)`` now, or once it is built (a non-dict: ignored then)."""
        if self._panel is not None:
            self._panel.restore(state)
        elif isinstance(state, dict):
            self._pending.append(state)


def lazy_dock(ws, title: str, name: str, make: Callable[[], QWidget]) -> LazyPanel:
    """A dock of the workspace ``ws`` titled ``title`` (objectName ``name``: its saved place), at the
    bottom, tabbed behind ``ws.plots_dock`` (which stays in front), whose body is a :class:`LazyPanel`
    building ``make()`` in a scroll area the first time the dock shows or the panel is asked for (the
    tab never makes the window taller than the screen, lecture mode included).  The panel gets
    ``.dock``, the dock holding it."""
    def build() -> QWidget:
        panel = make()
        panel.dock = dock
        return panel

    lazy = LazyPanel(build, scrolled)
    dock = add_dock(ws, title, name, lazy, "bottom", tabify_with=ws.plots_dock)
    lazy.show_with(dock)
    ws.plots_dock.raise_()
    return lazy


def content_of(widget: QWidget | None, build: bool = False) -> QWidget | None:
    """What a tab page shows: a :class:`LazyPanel`'s panel (built when ``build``, else None while it
    is not), a scrolled page's content (:func:`explorer.widgets.page_of`), else ``widget``."""
    if isinstance(widget, LazyPanel):
        return widget.panel() if build else widget.built_panel()
    return page_of(widget)


class LazyPanels(Mapping):
    """{key: :class:`LazyPanel`} read as {key: panel}: ``panels[key]`` builds that panel; ``key in
    panels`` and iteration build nothing (``values()`` / ``items()`` build every panel)."""

    def __init__(self, lazy: dict[str, LazyPanel] | None = None):
        self.lazy: dict[str, LazyPanel] = dict(lazy or {})

    def __getitem__(self, key: str) -> QWidget:
        return self.lazy[key].panel()

    def __contains__(self, key) -> bool:
        return key in self.lazy

    def __iter__(self):
        return iter(self.lazy)

    def __len__(self) -> int:
        return len(self.lazy)

    def built(self) -> dict:
        """{key: panel} of the panels built so far."""
        return {k: p.built_panel() for k, p in self.lazy.items() if p.is_built}

    def states(self) -> dict:
        """{key: state} of every panel that has one (built, or restored into): a session's entries."""
        out = {k: p.state() for k, p in self.lazy.items()}
        return {k: s for k, s in out.items() if s is not None}

    def restore(self, states: dict) -> None:
        """Each panel's state from ``states`` (a missing key: None, which a panel ignores)."""
        for key, p in self.lazy.items():
            p.restore(states.get(key))

    def save_settings(self, s) -> None:
        """Each state as JSON under ``<key>_json`` (a panel neither built nor restored into writes nothing)."""
        for key, state in self.states().items():
            s.setValue(f"{key}_json", json.dumps(state))

    def restore_settings(self, s) -> None:
        """Each panel's state from ``<key>_json`` (missing or not JSON: left as it is)."""
        for key, p in self.lazy.items():
            try:
                p.restore(json.loads(s.value(f"{key}_json") or "null"))
            except (TypeError, ValueError):
                pass


class panel_property:  # noqa: N801 (used like ``property``)
    """A class attribute that reads one panel of a :class:`LazyPanels` attribute of the instance,
    building it on first access: ``fig10 = panel_property("reproduce", "side_panels")``."""

    def __init__(self, key: str, panels: str):
        self.key, self.panels = key, panels

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return getattr(obj, self.panels)[self.key]
