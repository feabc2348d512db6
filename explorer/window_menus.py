"""The main window's menus (:class:`WindowMenusMixin`): File / Edit / View / Run / Presets / Help,
built once and re-bound to the current workspace (each entry calls one of its ``CAPABILITIES`` or
``extra_actions()``, and is hidden where the workspace lacks it), the presets menu, the keyboard
shortcuts list and the About box."""
from __future__ import annotations

from PyQt6.QtGui import QAction, QActionGroup, QKeySequence
from PyQt6.QtWidgets import QMessageBox

from kernels.errors import ExplorerError

from . import presets as presets_mod
from . import theme as theme_mod
from . import undo
from .about import AboutDialog
from .window_edit import EditMenu
from .window_presets import PresetActions
from .window_recent import RecentMenu


class WindowMenusMixin:
    """Menus of :class:`~explorer.main_window.MainWindow`, bound to its current workspace."""

    # ----------------------------------------------------------------- menus
    def _add_actions(self, menu, specs):
        for spec in specs:
            if spec is None:
                menu.addSeparator()
                continue
            text, method, shortcut, tip = spec
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.setToolTip(tip)
            act.triggered.connect(lambda _=False, m=method: self._call(m))
            act.setData(text)  # the default text, restored when a workspace does not rename it
            menu.addAction(act)
            self._bound_actions.append((act, method))

    def _build_menus(self) -> None:
        mb = self.menuBar()
        m_file = mb.addMenu("&File")
        self._add_actions(m_file, self.FILE_ACTIONS)
        m_file.addSeparator()
        self.act_figure = self._own_action(m_file, "Export &figure…", self.export_figure, "Ctrl+Shift+F",
                                           "Save any view or plot of this workspace as PNG (size, DPI) or SVG, "
                                           "with an optional caption footer")
        self.act_copy = self._own_action(m_file, "&Copy figure to clipboard", self.copy_figure, "Ctrl+Shift+C",
                                         "Copy the main view of this workspace as an image")
        self.act_movie = self._own_action(m_file, "Record &movie…", self.record_movie, "Ctrl+Shift+M",
                                          "Record the running view to MP4 or GIF")
        m_file.addSeparator()
        self._own_action(m_file, "Open sess&ion…", self.open_session, "Ctrl+Shift+O",
                         "Restore a saved session: workspace, parameters, view and data")
        self._own_action(m_file, "Save sessio&n…", self.save_session, "Ctrl+Shift+S",
                         "Save this workspace's complete state to one .gsession file")
        self.act_session_data = QAction("Sessions include &data", self, checkable=True)
        self.act_session_data.setChecked(str(self.settings.value("main/session_data", "true")).lower() == "true")
        self.act_session_data.setStatusTip("Save the field / graph / traces with the session (larger file); "
                                           "off: parameters and view only, recomputed on open")
        self.act_session_data.toggled.connect(lambda on: self.settings.setValue("main/session_data", bool(on)))
        m_file.addAction(self.act_session_data)
        m_file.addSeparator()
        self.recent = RecentMenu(self.settings, m_file, self)
        self.recent.open_requested.connect(self.open_path)
        self.recent.notice.connect(lambda text: self.notify(text, "warning"))
        m_file.addSeparator()
        quit_act = QAction("&Quit", self)
        quit_act.setShortcut(QKeySequence("Ctrl+Q"))
        quit_act.triggered.connect(self.close)
        m_file.addAction(quit_act)

        self.m_edit = mb.addMenu("&Edit")
        self.edit = EditMenu(self, self.m_edit)
        self.m_sim = mb.addMenu("&Run")
        self._add_actions(self.m_sim, self.SIM_ACTIONS)
        self.m_workspace = mb.addMenu("&Workspace")   # the current workspace's own actions
        self.m_presets = mb.addMenu("&Presets")       # the current workspace's presets, keys 1–9
        self.user_presets = PresetActions(self)        # Save current as preset…, export, import

        self.m_view = mb.addMenu("&View")
        self.m_cmap = self.m_view.addMenu("&Colormap")
        self.cmap_group = QActionGroup(self)
        self.act_plots = QAction("Show &plots", self, checkable=True, checked=True)
        self.act_plots.setShortcut(QKeySequence("Ctrl+P"))
        self.act_plots.toggled.connect(lambda on: self._call("set_plots_visible", on))
        self.m_view.addAction(self.act_plots)
        self.act_controls = QAction("Show &controls", self, checkable=True, checked=True)
        self.act_controls.toggled.connect(lambda on: self._call("set_controls_visible", on))
        self.m_view.addAction(self.act_controls)
        self.act_log = self.log_dock.toggleViewAction()
        self.act_log.setText("Message &log")
        self.act_log.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.act_log.setStatusTip("Every notice, warning and error with its time (copyable)")
        self.m_view.addAction(self.act_log)
        self._bound_actions += [(self.act_plots, "set_plots_visible"), (self.act_controls, "set_controls_visible")]
        self.m_view.addSeparator()
        self.act_lecture = QAction("&Lecture mode", self, checkable=True)
        self.act_lecture.setShortcuts([QKeySequence("F11"), QKeySequence("Ctrl+L")])
        self.act_lecture.setStatusTip("Full screen, large fonts, thick lines, high contrast, essential controls "
                                      "and a caption naming what is shown (F11 again to leave)")
        self.act_lecture.toggled.connect(self.set_lecture_mode)
        self.m_view.addAction(self.act_lecture)
        self.m_theme = self.m_view.addMenu("&Theme")
        self.theme_group = QActionGroup(self)
        for name in theme_mod.THEMES:
            a = QAction(name.capitalize(), self, checkable=True, checked=(name == self.theme))
            a.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            self.theme_group.addAction(a)
            self.m_theme.addAction(a)

        m_help = mb.addMenu("&Help")
        keys = QAction("&Keyboard shortcuts", self)
        keys.triggered.connect(self.show_shortcuts)
        m_help.addAction(keys)
        about = QAction("&About GPU Science Explorer", self)
        about.triggered.connect(self.show_about)
        m_help.addAction(about)
        about_qt = QAction("About &Qt", self)
        about_qt.triggered.connect(lambda: QMessageBox.aboutQt(self))
        m_help.addAction(about_qt)

    def _own_action(self, menu, text, slot, shortcut, tip) -> QAction:
        act = QAction(text, self)
        act.setShortcut(QKeySequence(shortcut))
        act.setStatusTip(tip)
        act.setToolTip(tip)
        act.triggered.connect(lambda _=False: slot())
        menu.addAction(act)
        return act

    def _rebind_actions(self) -> None:
        """Enable/rename the shared menu actions for the current workspace and
        rebuild its own menu (``MENU_TEXT`` renames, ``extra_actions()`` adds)."""
        ws = self.workspace()
        texts = ws.MENU_TEXT if ws is not None else {}
        for act, method in self._bound_actions:
            act.setEnabled(self._supports(method))
            if act.data():
                act.setText(texts.get(method) or act.data())
        self.m_sim.menuAction().setVisible(any(self._supports(m) for _t, m, _k, _tip in self.SIM_ACTIONS))
        self.m_workspace.clear()
        extra = ws.extra_actions() if ws is not None else []
        for text, method, shortcut, tip in extra:
            act = QAction(text, self.m_workspace)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.triggered.connect(lambda _=False, m=method: self._call(m))
            self.m_workspace.addAction(act)
        self.m_workspace.menuAction().setVisible(bool(extra))
        self._apply_status(self._status.get(ws.objectName() if ws is not None else "", None), reset=True)
        self.m_cmap.clear()
        for a in self.cmap_group.actions():
            self.cmap_group.removeAction(a)
        names = ws.colormaps() if self._supports("colormaps") else []
        current = ws.colormap() if names else None
        for name in names:
            a = QAction(name, self, checkable=True, checked=(name == current))
            a.triggered.connect(lambda _=False, n=name: self._call("set_colormap", n))
            self.cmap_group.addAction(a)
            self.m_cmap.addAction(a)
        self.m_cmap.setEnabled(bool(names))
        if self._supports("set_plots_visible"):
            self.act_plots.blockSignals(True)
            self.act_plots.setChecked(ws.plots_visible())
            self.act_plots.blockSignals(False)
        if self._supports("colormaps"):
            try:
                ws.colormap_changed.disconnect(self._sync_cmap)
            except TypeError:
                pass
            ws.colormap_changed.connect(self._sync_cmap)
        has_figs = self._supports("figures")
        self.act_figure.setEnabled(has_figs)
        self.act_copy.setEnabled(has_figs)
        self.act_movie.setEnabled(has_figs or self._supports("export_movie"))
        self._rebuild_presets()
        self._refresh_caption()

    # --------------------------------------------------------------- presets
    def preset_actions(self) -> list:
        """The Presets menu's entries of presets (shipped, then the user's), in order."""
        return list(self._preset_entries)

    def rebuild_presets(self) -> None:
        """Rebuild the Presets menu (after a user preset was saved, imported or deleted)."""
        self._rebuild_presets()

    def _rebuild_presets(self) -> None:
        self.m_presets.clear()
        key = self.stack.currentWidget().objectName() if self.stack.currentWidget() is not None else ""
        try:
            self.presets = presets_mod.load_presets(key) if key else []
        except presets_mod.PresetError as exc:
            self.presets = []
            bad = QAction(f"(presets file unreadable: {exc})", self.m_presets)
            bad.setEnabled(False)
            self.m_presets.addAction(bad)
            self.notify(f"Presets of this workspace could not be loaded: {exc}", "error")
        shipped = len(self.presets)
        self.presets += self.user_presets.load(key)
        usable = self._supports("apply_preset")
        self._preset_entries = []
        for i, p in enumerate(self.presets):
            if i == shipped and i:
                self.m_presets.addSection("Your presets")
            act = QAction(f"&{i + 1}  {p['name']}" if i < 9 else p["name"], self.m_presets)
            if i < 9:
                act.setShortcut(QKeySequence(str(i + 1)))
            tip = f"{p['description']} " + ("(your preset)" if i >= shipped else f"(paper {p['paper']})")
            act.setStatusTip(tip)
            act.setToolTip(tip)
            act.setEnabled(usable)
            act.triggered.connect(lambda _=False, n=i: self.apply_preset(n))
            self.m_presets.addAction(act)
            self._preset_entries.append(act)
        self.user_presets.add_actions(self.m_presets, key, self.presets[shipped:])
        self.m_presets.setToolTipsVisible(True)
        self.m_presets.menuAction().setVisible(bool(self.presets) or not self.m_presets.isEmpty())

    def apply_preset(self, which) -> bool:
        """Apply preset ``which`` (index or name) of the current workspace, resolved for this backend."""
        ws = self.workspace()
        if isinstance(which, str):
            names = [p["name"] for p in self.presets]
            if which not in names:
                self.notify(f"no preset named {which!r}", "error")
                return False
            which = names.index(which)
        if not (0 <= which < len(self.presets)) or not self._supports("apply_preset"):
            return False
        p = presets_mod.resolved(self.presets[which], self.backend.is_gpu)
        try:
            with undo.recorded(ws, f"Preset: {p['name']}"):
                ws.apply_preset(p)
        except (ExplorerError, KeyError, TypeError, ValueError) as exc:
            self.notify(f"Preset {p['name']!r} could not be applied: {exc}", "error")
            return False
        self.statusBar().showMessage(f"Preset {which + 1}: {p['name']}", 6000)
        self._refresh_caption()
        return True

    # ---------------------------------------------------------- lecture mode
    def shortcuts(self) -> list[tuple[str, str]]:
        """(keys, action) of every menu entry with a shortcut, for Help ▸ Keyboard shortcuts."""
        out = []

        def walk(menu, prefix):
            for a in menu.actions():
                if a.menu() is not None:
                    walk(a.menu(), prefix + a.menu().title().replace("&", "") + " ▸ ")
                elif a.shortcuts() and a.isVisible() and a.isEnabled():
                    keys = " / ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts())
                    out.append((keys, prefix + a.text().replace("&", "")))
        for a in self.menuBar().actions():
            if a.menu() is not None and a.isVisible():
                walk(a.menu(), a.menu().title().replace("&", "") + " ▸ ")
        return out

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{t}</td></tr>" for k, t in self.shortcuts())
        box = QMessageBox(self)
        box.setWindowTitle("Keyboard shortcuts")
        box.setText(f"<p>Shortcuts of the current workspace (the README lists all):</p><table cellpadding=3>{rows}</table>")
        box.open()

    def show_about(self) -> AboutDialog:
        """Help ▸ About: versions, paths and papers, with *Copy* (non-modal; returned for tests)."""
        dlg = AboutDialog(self.backend, self)
        dlg.open()
        return dlg

