"""The main window's menus, a composed part (:class:`WindowMenus`): File / Edit / View / Run /
Workspace / Presets / Help, built once and re-bound to the current workspace (each entry calls one of
its ``CAPABILITIES`` or ``extra_actions()``, and is disabled or hidden where the workspace lacks it),
the presets menu (owning the current workspace's presets), the keyboard shortcuts list and the About
box.  The sub-menus that own state are parts of their own: :class:`~explorer.window_edit.EditMenu`,
:class:`~explorer.window_recent.RecentMenu`, :class:`~explorer.window_presets.PresetActions`.

What it uses of the window (a :class:`~explorer.main_window.MainWindow`, or any QMainWindow with
these): ``settings``, ``backend``, ``theme``, ``log_dock``, ``files`` (a
:class:`~explorer.window_files.WindowFiles`), ``workspace()``, ``current_key()``, ``supports(cap)``,
``call(method, *args)``, ``notify(text, level)``, ``show_status(text, ms)``, ``refresh_caption()``,
``set_lecture_mode(on)``, ``set_theme(name)``, ``open_path(path)``, ``close()``."""
from __future__ import annotations

from PyQt6.QtCore import QObject
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


class WindowMenus(QObject):
    """The menu bar of ``window``, bound to its current workspace (:meth:`rebind`)."""

    # (menu text, workspace method, shortcut, status tip)
    FILE_ACTIONS = [
        ("&Open field…", "open_field", QKeySequence.StandardKey.Open, "Load a saved field (.npz) as the initial condition"),
        ("&Save field…", "save_field", QKeySequence.StandardKey.Save, "Save the current field and its parameters (.npz)"),
        None,
        ("&Export image…", "export_image", "Ctrl+E", "Render the view to a PNG at a chosen resolution"),
        ("Export &plots…", "export_plots", "Ctrl+Shift+E", "Save the diagnostic plots as PNG or SVG"),
    ]
    SIM_ACTIONS = [
        ("&Start / Pause", "toggle_run", "Space", "Start or pause the simulation"),
        ("S&tep", "step_once", ".", "Advance one frame (steps per frame) while paused"),
        ("&Reset", "reset", "Ctrl+R", "Rebuild the initial field with the current parameters"),
    ]

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.bound_actions: list[tuple[QAction, str]] = []   # (action, workspace method) re-bound per workspace
        self.presets: list[dict] = []                        # the current workspace's presets (shipped + user)
        self._preset_entries: list[QAction] = []
        self._build()

    # ----------------------------------------------------------------- menus
    def _add_actions(self, menu, specs):
        for spec in specs:
            if spec is None:
                menu.addSeparator()
                continue
            text, method, shortcut, tip = spec
            act = QAction(text, self.window)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.setToolTip(tip)
            act.triggered.connect(lambda _=False, m=method: self.window.call(m))
            act.setData(text)  # the default text, restored when a workspace does not rename it
            menu.addAction(act)
            self.bound_actions.append((act, method))

    def _build(self) -> None:
        w = self.window
        mb = w.menuBar()
        m_file = mb.addMenu("&File")
        self._add_actions(m_file, self.FILE_ACTIONS)
        m_file.addSeparator()
        self.act_figure = self._own_action(m_file, "Export &figure…", lambda: w.files.export_figure(), "Ctrl+Shift+F",
                                           "Save any view or plot of this workspace as PNG (size, DPI) or SVG, "
                                           "with an optional caption footer")
        self.act_copy = self._own_action(m_file, "&Copy figure to clipboard", lambda: w.files.copy_figure(), "Ctrl+Shift+C",
                                         "Copy the main view of this workspace as an image")
        self.act_movie = self._own_action(m_file, "Record &movie…", lambda: w.files.record_movie(), "Ctrl+Shift+M",
                                          "Record the running view to MP4 or GIF")
        m_file.addSeparator()
        self._own_action(m_file, "Open sess&ion…", lambda: w.files.open_session(), "Ctrl+Shift+O",
                         "Restore a saved session: workspace, parameters, view and data")
        self._own_action(m_file, "Save sessio&n…", lambda: w.files.save_session(), "Ctrl+Shift+S",
                         "Save this workspace's complete state to one .gsession file")
        self.act_session_data = QAction("Sessions include &data", w, checkable=True)
        self.act_session_data.setChecked(str(w.settings.value("main/session_data", "true")).lower() == "true")
        self.act_session_data.setStatusTip("Save the field / graph / traces with the session (larger file); "
                                           "off: parameters and view only, recomputed on open")
        self.act_session_data.toggled.connect(lambda on: w.settings.setValue("main/session_data", bool(on)))
        m_file.addAction(self.act_session_data)
        m_file.addSeparator()
        self.recent = RecentMenu(w.settings, m_file, self)
        self.recent.open_requested.connect(w.open_path)
        self.recent.notice.connect(lambda text: w.notify(text, "warning"))
        m_file.addSeparator()
        quit_act = QAction("&Quit", w)
        quit_act.setShortcut(QKeySequence("Ctrl+Q"))
        quit_act.triggered.connect(w.close)
        m_file.addAction(quit_act)

        self.m_edit = mb.addMenu("&Edit")
        self.edit = EditMenu(w, self.m_edit)
        self.m_sim = mb.addMenu("&Run")
        self._add_actions(self.m_sim, self.SIM_ACTIONS)
        self.m_workspace = mb.addMenu("&Workspace")   # the current workspace's own actions
        self.m_presets = mb.addMenu("&Presets")       # the current workspace's presets, keys 1–9
        self.user_presets = PresetActions(w)           # Save current as preset…, export, import

        self.m_view = mb.addMenu("&View")
        self.m_cmap = self.m_view.addMenu("&Colormap")
        self.cmap_group = QActionGroup(w)
        self.act_plots = QAction("Show &plots", w, checkable=True, checked=True)
        self.act_plots.setShortcut(QKeySequence("Ctrl+P"))
        self.act_plots.toggled.connect(lambda on: w.call("set_plots_visible", on))
        self.m_view.addAction(self.act_plots)
        self.act_controls = QAction("Show &controls", w, checkable=True, checked=True)
        self.act_controls.toggled.connect(lambda on: w.call("set_controls_visible", on))
        self.m_view.addAction(self.act_controls)
        self.act_log = w.log_dock.toggleViewAction()
        self.act_log.setText("Message &log")
        self.act_log.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.act_log.setStatusTip("Every notice, warning and error with its time (copyable)")
        self.m_view.addAction(self.act_log)
        self.bound_actions += [(self.act_plots, "set_plots_visible"), (self.act_controls, "set_controls_visible")]
        self.m_view.addSeparator()
        self.act_lecture = QAction("&Lecture mode", w, checkable=True)
        self.act_lecture.setShortcuts([QKeySequence("F11"), QKeySequence("Ctrl+L")])
        self.act_lecture.setStatusTip("Full screen, large fonts, thick lines, high contrast, essential controls "
                                      "and a caption naming what is shown (F11 again to leave)")
        self.act_lecture.toggled.connect(w.set_lecture_mode)
        self.m_view.addAction(self.act_lecture)
        self.m_theme = self.m_view.addMenu("&Theme")
        self.theme_group = QActionGroup(w)
        for name in theme_mod.THEMES:
            a = QAction(name.capitalize(), w, checkable=True, checked=(name == w.theme))
            a.triggered.connect(lambda _=False, n=name: w.set_theme(n))
            self.theme_group.addAction(a)
            self.m_theme.addAction(a)

        m_help = mb.addMenu("&Help")
        keys = QAction("&Keyboard shortcuts", w)
        keys.triggered.connect(lambda: self.show_shortcuts())
        m_help.addAction(keys)
        about = QAction("&About GPU Science Explorer", w)
        about.triggered.connect(lambda: self.show_about())
        m_help.addAction(about)
        about_qt = QAction("About &Qt", w)
        about_qt.triggered.connect(lambda: QMessageBox.aboutQt(w))
        m_help.addAction(about_qt)

    def _own_action(self, menu, text, slot, shortcut, tip) -> QAction:
        act = QAction(text, self.window)
        act.setShortcut(QKeySequence(shortcut))
        act.setStatusTip(tip)
        act.setToolTip(tip)
        act.triggered.connect(lambda _=False: slot())
        menu.addAction(act)
        return act

    def rebind(self) -> None:
        """Enable/rename the shared menu actions for the window's current workspace and rebuild its
        own menu (``MENU_TEXT`` renames, ``extra_actions()`` adds), colormaps and presets."""
        w = self.window
        ws = w.workspace()
        texts = ws.MENU_TEXT if ws is not None else {}
        for act, method in self.bound_actions:
            act.setEnabled(w.supports(method))
            if act.data():
                act.setText(texts.get(method) or act.data())
        self.m_sim.menuAction().setVisible(any(w.supports(m) for _t, m, _k, _tip in self.SIM_ACTIONS))
        self.m_workspace.clear()
        extra = ws.extra_actions() if ws is not None else []
        for text, method, shortcut, tip in extra:
            act = QAction(text, self.m_workspace)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.triggered.connect(lambda _=False, m=method: w.call(m))
            self.m_workspace.addAction(act)
        self.m_workspace.menuAction().setVisible(bool(extra))
        self.m_cmap.clear()
        for a in self.cmap_group.actions():
            self.cmap_group.removeAction(a)
        names = ws.colormaps() if w.supports("colormaps") else []
        current = ws.colormap() if names else None
        for name in names:
            a = QAction(name, w, checkable=True, checked=(name == current))
            a.triggered.connect(lambda _=False, n=name: w.call("set_colormap", n))
            self.cmap_group.addAction(a)
            self.m_cmap.addAction(a)
        self.m_cmap.setEnabled(bool(names))
        if w.supports("set_plots_visible"):
            self.act_plots.blockSignals(True)
            self.act_plots.setChecked(ws.plots_visible())
            self.act_plots.blockSignals(False)
        if w.supports("colormaps"):
            try:
                ws.colormap_changed.disconnect(self.sync_colormap)
            except TypeError:
                pass
            ws.colormap_changed.connect(self.sync_colormap)
        has_figs = w.supports("figures")
        self.act_figure.setEnabled(has_figs)
        self.act_copy.setEnabled(has_figs)
        self.act_movie.setEnabled(has_figs or w.supports("export_movie"))
        self.rebuild_presets()

    def sync_colormap(self, name: str) -> None:
        """Check ``name`` in View ▸ Colormap (the workspace changed its colormap itself)."""
        for a in self.cmap_group.actions():
            a.setChecked(a.text() == name)

    def check_theme(self, name: str) -> None:
        for a in self.theme_group.actions():
            a.setChecked(a.text().lower() == name)

    def check_lecture(self, on: bool) -> None:
        """Show lecture mode ``on`` in View ▸ Lecture mode without toggling it again."""
        if self.act_lecture.isChecked() != on:
            self.act_lecture.blockSignals(True)
            self.act_lecture.setChecked(on)
            self.act_lecture.blockSignals(False)

    # --------------------------------------------------------------- presets
    def preset_actions(self) -> list:
        """The Presets menu's entries of presets (shipped, then the user's), in order."""
        return list(self._preset_entries)

    def rebuild_presets(self) -> None:
        """Rebuild the Presets menu for the current workspace (also after a user preset was saved,
        imported or deleted)."""
        w = self.window
        self.m_presets.clear()
        key = w.current_key()
        try:
            self.presets = presets_mod.load_presets(key) if key else []
        except presets_mod.PresetError as exc:
            self.presets = []
            bad = QAction(f"(presets file unreadable: {exc})", self.m_presets)
            bad.setEnabled(False)
            self.m_presets.addAction(bad)
            w.notify(f"Presets of this workspace could not be loaded: {exc}", "error")
        shipped = len(self.presets)
        self.presets += self.user_presets.load(key)
        usable = w.supports("apply_preset")
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
            act.triggered.connect(lambda _=False, n=i: w.apply_preset(n))
            self.m_presets.addAction(act)
            self._preset_entries.append(act)
        self.user_presets.add_actions(self.m_presets, key, self.presets[shipped:])
        self.m_presets.setToolTipsVisible(True)
        self.m_presets.menuAction().setVisible(bool(self.presets) or not self.m_presets.isEmpty())

    def apply_preset(self, which) -> bool:
        """Apply preset ``which`` (index or name) of the current workspace, resolved for this
        backend, as one undo step."""
        w = self.window
        ws = w.workspace()
        if isinstance(which, str):
            names = [p["name"] for p in self.presets]
            if which not in names:
                w.notify(f"no preset named {which!r}", "error")
                return False
            which = names.index(which)
        if not (0 <= which < len(self.presets)) or not w.supports("apply_preset"):
            return False
        p = presets_mod.resolved(self.presets[which], w.backend.is_gpu)
        try:
            with undo.recorded(ws, f"Preset: {p['name']}"):
                ws.apply_preset(p)
        except (ExplorerError, KeyError, TypeError, ValueError) as exc:
            w.notify(f"Preset {p['name']!r} could not be applied: {exc}", "error")
            return False
        w.show_status(f"Preset {which + 1}: {p['name']}", 6000)
        w.refresh_caption()
        return True

    # ----------------------------------------------------------------- help
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
        for a in self.window.menuBar().actions():
            if a.menu() is not None and a.isVisible():
                walk(a.menu(), a.menu().title().replace("&", "") + " ▸ ")
        return out

    def show_shortcuts(self) -> QMessageBox:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{t}</td></tr>" for k, t in self.shortcuts())
        box = QMessageBox(self.window)
        box.setWindowTitle("Keyboard shortcuts")
        box.setText(f"<p>Shortcuts of the current workspace (the README lists all):</p><table cellpadding=3>{rows}</table>")
        box.open()
        return box

    def show_about(self) -> AboutDialog:
        """Help ▸ About: versions, paths and papers, with *Copy* (non-modal; returned for tests)."""
        dlg = AboutDialog(self.window.backend, self.window)
        dlg.open()
        return dlg
