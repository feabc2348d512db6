"""Main window: mode bar of workspaces (marking those that run), status bar (with the value under
the mouse and the progress of slow steps), lecture mode and theme; quitting while a workspace runs
asks first.  It is composed of parts that own their state (napari's ``QtViewer`` model): the menus
bound to the current workspace and its presets (:class:`.window_menus.WindowMenus`, itself composing
Edit, Open Recent and user presets), sessions, figure export and dropped files for every workspace
(:class:`.window_files.WindowFiles`), the message log (:mod:`.message_log`)."""
from __future__ import annotations

from PyQt6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer
from PyQt6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPainter, QPen, QPixmap
from PyQt6.QtWidgets import (QDockWidget, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow, QMessageBox,
                             QStackedWidget, QVBoxLayout, QWidget)

import kernels.app_kernels  # noqa: F401  (registers the app kernels' providers in kernels.launches: Occupancy ▸ Compile)
from kernels import appdirs
from kernels.appdirs import APP_NAME

from . import jobs
from . import recent as recent_mod
from . import sweep_panel
from . import theme as theme_mod
from . import workspaces as registry
from .message_log import LogSource, LogView, MessageLog
from .widgets import add_dock, dock_button_tooltips
from .window_files import WindowFiles
from .window_menus import WindowMenus
from .window_status import StatusFields
from .workspace_api import COMMANDS


#: checks (every 25 ms) that leaving lecture mode makes for the window's rect and dock sizes
DOCK_CHECKS = 80


def dock_sizes(win: QMainWindow) -> dict:
    """The docked, visible dock widgets of ``win``: {Horizontal: {dock: width} for the left and right
    areas, Vertical: {dock: height} for the top and bottom ones}."""
    A = Qt.DockWidgetArea
    out = {Qt.Orientation.Horizontal: {}, Qt.Orientation.Vertical: {}}
    for d in win.findChildren(QDockWidget):
        if d.parent() is not win or d.isFloating() or not d.isVisible():
            continue
        area = win.dockWidgetArea(d)
        if area in (A.LeftDockWidgetArea, A.RightDockWidgetArea):
            out[Qt.Orientation.Horizontal][d] = d.width()
        elif area in (A.TopDockWidgetArea, A.BottomDockWidgetArea):
            out[Qt.Orientation.Vertical][d] = d.height()
    return out


def _badge_icon(text: str, color: str, size: int = 40, running: bool = False) -> QIcon:
    """A workspace's mode-bar icon; ``running``: with a green dot (the workspace is working)."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(QColor(color))
    p.setPen(Qt.PenStyle.NoPen)
    p.drawRoundedRect(2, 2, size - 4, size - 4, 8, 8)
    p.setPen(QColor("white"))
    f = QFont()
    f.setBold(True)
    f.setPixelSize(int(size * 0.38))
    p.setFont(f)
    p.drawText(pm.rect(), Qt.AlignmentFlag.AlignCenter, text)
    if running:
        d = int(size * 0.36)
        p.setPen(QPen(QColor("white"), 2))
        p.setBrush(QColor("#2ecc40"))
        p.drawEllipse(size - d - 1, 1, d, d)
    p.end()
    return QIcon(pm)


def workspace_specs() -> list:
    """The registered workspaces' specs in mode-bar order (``workspaces.WORKSPACES``: a registry of
    key → spec, or a plain list of specs)."""
    reg = registry.WORKSPACES
    return list(reg.values()) if hasattr(reg, "values") else list(reg)


def workspace_keys() -> list[str]:
    return [spec.key for spec in workspace_specs()]


def app_settings() -> QSettings:
    """The app's settings: an INI file at :func:`kernels.appdirs.settings_file` (platformdirs; on
    Linux where ``QSettings(ORG, APP_NAME)`` kept them)."""
    return QSettings(str(appdirs.settings_file()), QSettings.Format.IniFormat)


class MainWindow(QMainWindow):
    """Top-level window.  ``options`` maps a workspace key to keyword arguments of its factory."""

    def __init__(self, backend, settings: QSettings | None = None, options: dict | None = None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.settings = settings if settings is not None else app_settings()
        self._options = options or {}
        self._workspaces: dict[str, QWidget] = {}
        self._status: dict[str, dict] = {}   # last status fields per workspace key
        self._lecture = False
        self._lecture_look = theme_mod.LectureLook()
        self._pre_lecture_state = None
        self._pre_lecture_geometry = None
        self._pre_lecture_docks = None       # workspace → dock sizes before lecture mode
        self._dock_restore = (None, 0, 0)    # (window rect to wait for, checks left, calm checks)
        self._dock_timer = None
        self.last_message = ""               # last notice shown (tests read it)
        self.ask_before_quit = True          # confirm closing while a workspace runs
        self.setWindowTitle(APP_NAME)
        self.resize(1440, 900)
        self.setAcceptDrops(True)              # a dropped file opens in its workspace (window_files)
        self.log = MessageLog(self)            # every notice, warning and error (View ▸ Message log)

        central = QWidget(self)
        lay = QHBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        self.mode_bar = QListWidget(central)
        self.mode_bar.setObjectName("modeBar")
        self.mode_bar.setViewMode(QListWidget.ViewMode.IconMode)
        self.mode_bar.setIconSize(QSize(36, 36))
        self.mode_bar.setMovement(QListWidget.Movement.Static)
        self.mode_bar.setFlow(QListWidget.Flow.TopToBottom)
        self.mode_bar.setWrapping(False)
        self.mode_bar.setWordWrap(True)
        self.mode_bar.setSpacing(4)
        self.mode_bar.setFixedWidth(92)
        self.mode_bar.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.mode_bar.setStyleSheet(
            "#modeBar { background: #2b2f36; border: none; color: #e8e8e8; }"
            "#modeBar::item { padding: 6px 2px; border-radius: 4px; }"
            "#modeBar::item:selected { background: #4a5361; color: white; }")
        self.stack = QStackedWidget(central)
        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(0)
        self.caption = QLabel("", central)          # lecture mode: what is shown and the paper
        self.caption.setObjectName("lectureCaption")
        self.caption.setStyleSheet(theme_mod.CAPTION_QSS)
        self.caption.setWordWrap(True)
        self.caption.setToolTip("What is shown and the paper it comes from (lecture mode, F11)")
        self.caption.hide()
        right.addWidget(self.caption)
        right.addWidget(self.stack, 1)
        lay.addWidget(self.mode_bar)
        lay.addLayout(right, 1)
        self.setCentralWidget(central)
        self._icons = {}                     # key → (idle icon, running icon)
        for spec in workspace_specs():
            short = spec.short or spec.title[:2]
            self._icons[spec.key] = (_badge_icon(short, spec.color), _badge_icon(short, spec.color, running=True))
            it = QListWidgetItem(self._icons[spec.key][0],
                                 spec.title.replace("–", "–\u200b"))   # may wrap after the dash
            it.setData(Qt.ItemDataRole.UserRole, spec.key)
            it.setToolTip(spec.description or spec.title)
            it.setTextAlignment(Qt.AlignmentFlag.AlignHCenter)
            it.setSizeHint(QSize(84, 80))
            self.mode_bar.addItem(it)

        self.theme = str(self.settings.value("main/theme", "light"))
        if self.theme not in theme_mod.THEMES:
            self.theme = "light"
        theme_mod.apply_theme(self.theme)
        sweep_panel.preference().load(self.settings)     # where sweeps run: one choice for every tab
        self.log_dock = add_dock(self, "Message log", "messageLogDock", LogView(self.log), area="bottom",
                                 closable=True)
        self.log_dock.hide()
        self.files = WindowFiles(self)         # sessions, figures, movies, dropped / recent files
        self.menus = WindowMenus(self)         # File … Help, re-bound to the current workspace
        # the parts' pieces other code and tests reach through the window
        self.edit, self.recent, self.user_presets = self.menus.edit, self.menus.recent, self.menus.user_presets
        self.act_lecture, self.act_log, self.act_figure = self.menus.act_lecture, self.menus.act_log, self.menus.act_figure
        self.m_workspace, self.m_presets, self.m_cmap = self.menus.m_workspace, self.menus.m_presets, self.menus.m_cmap
        self.files.file_used.connect(self.recent.add)
        self.files.file_gone.connect(self.recent.files.remove)
        self.status_fields = StatusFields(self.statusBar(), self.backend)
        self.status_fields.message.connect(lambda text: self.show_status(text, 10000, remember=True))
        for name in ("lbl_backend", "lbl_fps", "lbl_sps", "lbl_t", "lbl_cursor", "lbl_info", "lbl_display",
                     "progress_bar"):       # the fields, as other code and tests reach them
            setattr(self, name, getattr(self.status_fields, name))
        self.statusBar().messageChanged.connect(LogSource(self.log, "status bar").info)
        if self.backend.notice:
            self.log.add(f"Backend: {self.backend.describe()}", "warning", "start")
        self.recent.prune()
        recent_mod.notifier().opened.connect(self.remember_file)
        dock_button_tooltips(self)
        self.mode_bar.currentRowChanged.connect(self._on_mode_changed)
        self._busy_timer = QTimer(self)           # the mode bar marks workspaces that are working
        self._busy_timer.setInterval(400)
        self._busy_timer.timeout.connect(self.update_mode_bar)
        self._busy_timer.start()

        geo = self.settings.value("main/geometry")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        last = self.settings.value("main/workspace", (workspace_keys() or [""])[0])
        keys = workspace_keys()
        self.mode_bar.setCurrentRow(keys.index(last) if last in keys else 0)
        state = self.settings.value("main/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)

    # ------------------------------------------------------------ workspaces
    def workspace(self, key: str | None = None) -> QWidget | None:
        """The workspace widget for ``key`` (created on first use), or the current one."""
        if key is None:
            return self.stack.currentWidget()
        if key not in self._workspaces:
            spec = registry.get(key)
            w = spec.factory(self.backend, parent=self.stack, **self._options.get(key, {}))
            w.setObjectName(key)
            self.settings.beginGroup(f"ws/{key}")
            try:
                w.restore_settings(self.settings)
            finally:
                self.settings.endGroup()
            w.status_changed.connect(self._on_status)
            if w.message_bar is not None:
                w.message_bar.shown.connect(LogSource(self.log, key).message)
            self.edit.add_workspace(w)         # its undo stack, after restore: restoring is no edit
            dock_button_tooltips(w)
            if self._lecture:
                w.set_lecture_mode(True)
            self._workspaces[key] = w
            self.stack.addWidget(w)
        return self._workspaces[key]

    def show_workspace(self, key: str) -> QWidget:
        """Make ``key`` the current workspace (as a click in the mode bar does) and return it."""
        keys = workspace_keys()
        self.mode_bar.setCurrentRow(keys.index(key))
        return self.workspace(key)

    def busy_workspaces(self) -> list[str]:
        """Keys of the workspaces running something (a simulation, a job, a recording)."""
        out = [k for k, w in self._workspaces.items() if w.busy()]
        if self.files.recording() is not None:
            out.append(self.files.recording())
        return list(dict.fromkeys(out))

    def update_mode_bar(self) -> None:
        """A green dot on the icon (and "running" in the tooltip) of every working workspace."""
        busy = set(self.busy_workspaces())
        for row, spec in enumerate(workspace_specs()):
            it = self.mode_bar.item(row)
            on = spec.key in busy
            if bool(it.data(Qt.ItemDataRole.UserRole + 1)) != on:
                it.setData(Qt.ItemDataRole.UserRole + 1, on)
                it.setIcon(self._icons[spec.key][1 if on else 0])
                tip = spec.description or spec.title
                it.setToolTip(f"{tip}\n— running" if on else tip)

    def mode_bar_marked(self, key: str) -> bool:
        """Whether the mode bar shows ``key`` as running (tests)."""
        row = workspace_keys().index(key)
        return bool(self.mode_bar.item(row).data(Qt.ItemDataRole.UserRole + 1))

    def _on_mode_changed(self, row: int) -> None:
        if row < 0:
            return
        key = workspace_keys()[row]
        w = self.workspace(key)
        self.stack.setCurrentWidget(w)
        self.edit.set_current(w)
        self.settings.setValue("main/workspace", key)
        self.menus.rebind()
        self.status_fields.apply(self._status.get(key), reset=True)
        self.refresh_caption()

    def lecture_mode(self) -> bool:
        return self._lecture

    def set_lecture_mode(self, on: bool) -> None:
        """Full screen, large fonts, thick lines, high-contrast theme, essential controls, caption."""
        on = bool(on)
        if on == self._lecture:
            return
        self._lecture = on
        self.menus.check_lecture(on)
        if on:      # the workspaces' dock layouts, put back exactly when lecture mode ends
            self._pre_lecture_docks = {k: dock_sizes(w) for k, w in self._workspaces.items()
                                       if isinstance(w, QMainWindow)}
        # workspaces first (reduced controls), so the window fits the screen when it goes full screen
        for w in self._workspaces.values():
            w.set_lecture_mode(on)
        if on:
            self._pre_lecture_state = self.windowState()
            self._pre_lecture_geometry = self.geometry()
            self._lecture_look.enter({self.mode_bar: theme_mod.LECTURE_MODEBAR_PT,
                                      self.statusBar(): theme_mod.LECTURE_STATUS_PT})
            self.fit_mode_bar()
            self.showFullScreen()
        else:
            self._lecture_look.leave(self.theme)
            self.fit_mode_bar()
            rect = None
            if self._pre_lecture_state is not None and self._pre_lecture_state & Qt.WindowState.WindowMaximized:
                self.showMaximized()
            else:
                self.showNormal()
                rect = self._pre_lecture_geometry              # where and as large as before, once the
                if rect is not None:                           # layouts have shrunk to normal fonts
                    QTimer.singleShot(100, lambda: None if self._lecture else self.setGeometry(rect))
            self._dock_restore = (rect, DOCK_CHECKS, 0)
            self._restore_docks()
        self.caption.setVisible(on)
        self.refresh_caption()

    def fit_mode_bar(self) -> None:
        """Size the mode bar's items for its font: each word of a title fits whole ("Occupancy",
        not "Occupa…" at the lecture font); 92 px wide at the normal font, as before."""
        fm = QFontMetrics(self.mode_bar.font())
        words = [w for spec in workspace_specs() for w in spec.title.replace("–", "– ").split()]
        lines = max((len(spec.title.replace("–", "– ").split()) for spec in workspace_specs()), default=1)
        item_w = max(84, max((fm.horizontalAdvance(w) for w in words), default=0) + 16)
        item_h = max(80, 36 + 16 + lines * fm.lineSpacing())
        for row in range(self.mode_bar.count()):
            self.mode_bar.item(row).setSizeHint(QSize(item_w, item_h))
        self.mode_bar.setFixedWidth(item_w + 8)

    def _restore_docks(self) -> None:
        """After lecture mode: the window back at its rect and each workspace's dock sizes as they
        were (:func:`dock_sizes` taken on entering).  Checked every 25 ms (``_dock_restore`` holds
        (rect or None when maximised, checks left)) until both have held for two checks in a row:
        a dock resize while the window still shrinks from the lecture fonts could grow it again.
        (``restoreState`` would restore the docks too, but it re-creates tabified docks' tab bars.)"""
        rect, tries, calm = self._dock_restore
        if self._lecture or tries <= 0:
            return
        settled = True
        if rect is not None and self.geometry() != rect:
            settled = False
            if tries <= DOCK_CHECKS - 4:       # the first setGeometry is the 100 ms timer's
                self.setGeometry(rect)
        elif not self._resize_pending():
            for key, sizes in (self._pre_lecture_docks or {}).items():
                w = self._workspaces.get(key)
                if w is not None and dock_sizes(w) != sizes:
                    settled = False
                    for orient, docks in sizes.items():
                        w.resizeDocks(list(docks), list(docks.values()), orient)
        else:
            settled = False
        calm = calm + 1 if settled else 0
        self._dock_restore = (rect, tries - 1, calm)
        if calm >= 2:
            self._pre_lecture_docks = None
            return
        if self._dock_timer is None:          # a child: it dies with the window (no call after close)
            self._dock_timer = QTimer(self)
            self._dock_timer.setSingleShot(True)
            self._dock_timer.setInterval(25)
            self._dock_timer.timeout.connect(self._restore_docks)
        self._dock_timer.start()

    def _resize_pending(self) -> bool:
        """The window's size differs from the one its layouts last saw (a resize still queued)."""
        ws = self.stack.currentWidget()
        return ws is not None and ws.size() != self.stack.size()

    def refresh_caption(self) -> None:
        """The lecture caption follows the current workspace (its ``caption()``)."""
        ws = self.workspace()
        text = (ws.caption() or ws.objectName()) if ws is not None else ""
        if self.caption.text() != text:
            self.caption.setText(text)

    def set_theme(self, name: str) -> None:
        if name not in theme_mod.THEMES:
            return
        self.theme = name
        self.settings.setValue("main/theme", name)
        self.menus.check_theme(name)
        if not self._lecture:
            theme_mod.apply_theme(name)

    # --------------------------------------------------------------- notices
    def notify(self, text: str, level: str = "info") -> None:
        """Show a notice in the current workspace's message bar (or the status bar)."""
        self.last_message = text
        self.log.add(text, level, self.stack.currentWidget().objectName() if self.stack.currentWidget() else "")
        ws = self.workspace()
        if ws is not None and ws.message_bar is not None:
            ws.message_bar.show_message(text, level)
        self.statusBar().showMessage(text, 10000)

    def show_status(self, text: str, ms: int = 6000, remember: bool = False) -> None:
        """A status-bar message (also logged); ``remember``: kept as :attr:`last_message` too."""
        if remember:
            self.last_message = text
        self.statusBar().showMessage(text, ms)

    def current_key(self) -> str:
        """The key of the workspace shown ("" before any)."""
        w = self.stack.currentWidget()
        return w.objectName() if w is not None else ""

    # ------------------------------------------- the parts' commands (public API, tests)
    @property
    def presets(self) -> list[dict]:
        """The current workspace's presets (shipped, then the user's)."""
        return self.menus.presets

    def apply_preset(self, which) -> bool:
        return self.menus.apply_preset(which)

    def preset_actions(self) -> list:
        return self.menus.preset_actions()

    def rebuild_presets(self) -> None:
        self.menus.rebuild_presets()

    def shortcuts(self) -> list[tuple[str, str]]:
        return self.menus.shortcuts()

    def show_about(self):
        return self.menus.show_about()

    def open_path(self, path) -> bool:
        return self.files.open_path(path)

    def remember_file(self, path) -> None:
        self.files.remember_file(path)

    def figures(self) -> list:
        return self.files.figures()

    def figure_footer(self) -> str:
        return self.files.figure_footer()

    def figure_style(self, fig):
        return self.files.figure_style(fig)

    def set_figure_style(self, fig, style) -> None:
        self.files.set_figure_style(fig, style)

    def export_figure(self, *args, **kw):
        return self.files.export_figure(*args, **kw)

    def copy_figure(self):
        return self.files.copy_figure()

    def record_movie(self, *args, **kw):
        return self.files.record_movie(*args, **kw)

    def save_session(self, *args, **kw):
        return self.files.save_session(*args, **kw)

    def open_session(self, path=None) -> bool:
        return self.files.open_session(path)

    def dragEnterEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if ev.mimeData().hasUrls() and any(u.isLocalFile() for u in ev.mimeData().urls()):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dropEvent(self, ev) -> None:  # noqa: N802
        """A dropped file opens in the workspace that reads it (:meth:`WindowFiles.open_path`)."""
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if not paths:
            ev.ignore()
            return
        ev.acceptProposedAction()
        for p in paths:
            self.files.open_path(p)

    def supports(self, capability: str) -> bool:
        """The current workspace offers ``capability`` (explorer.workspace_api)."""
        ws = self.workspace()
        return ws is not None and ws.supports(capability)

    def call(self, method: str, *args):
        """Run a menu command (one of the workspace's CAPABILITIES) or one of its extra_actions()."""
        ws = self.workspace()
        if ws is None or (method in COMMANDS and not ws.supports(method)):
            return None
        return getattr(ws, method)(*args)

    # ------------------------------------------------------------ status bar
    def _on_status(self, info: dict) -> None:
        sender = self.sender()           # asked once: a second call can return None (sender destroyed)
        if sender is None:
            return
        key = sender.objectName()
        # the mouse readout is live only: never replayed when the workspace is shown again
        self._status.setdefault(key, {}).update({k: v for k, v in info.items() if k not in ("cursor", "message")})
        if sender is not self.workspace():
            return
        self.status_fields.apply(info)
        if self._lecture:
            self.refresh_caption()

    # ---------------------------------------------------------------- closing
    def confirm_quit(self, running: list[str]) -> bool:
        """Ask before quitting while workspaces run (their titles in ``running``)."""
        names = ", ".join(running)
        verb = "is" if len(running) == 1 else "are"
        ans = QMessageBox.question(
            self, "Quit", f"{names} {verb} still running. Quit anyway? The run is stopped and its unsaved "
            "results are lost.", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return ans == QMessageBox.StandardButton.Yes

    def closeEvent(self, ev) -> None:
        running = self.busy_workspaces()
        if running and self.ask_before_quit:
            titles = [registry.get(k).title for k in running]
            if not self.confirm_quit(titles):
                ev.ignore()
                return
        self._busy_timer.stop()
        if self._lecture:
            self.set_lecture_mode(False)
        self.files.stop_recording()
        self.settings.setValue("main/theme", self.theme)
        self.settings.setValue("main/geometry", self.saveGeometry())
        self.settings.setValue("main/state", self.saveState())
        sweep_panel.preference().save(self.settings)
        for key, w in self._workspaces.items():
            self.settings.beginGroup(f"ws/{key}")
            try:
                w.save_settings(self.settings)
            finally:
                self.settings.endGroup()
            w.shutdown()
        jobs.wait_all(10000)                 # any background job a workspace left running
        self.settings.sync()
        super().closeEvent(ev)
