"""Main window: mode bar of workspaces, menus bound to the current workspace, status bar."""
from __future__ import annotations

from PyQt6.QtCore import QByteArray, QSettings, QSize, Qt
from PyQt6.QtGui import QAction, QActionGroup, QColor, QFont, QIcon, QKeySequence, QPainter, QPixmap
from PyQt6.QtWidgets import (QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow,
                             QMessageBox, QStackedWidget, QWidget)

from . import workspaces as registry
from .app import APP_NAME, ORG
from .papers import PAPERS


def _badge_icon(text: str, color: str, size: int = 40) -> QIcon:
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
    p.end()
    return QIcon(pm)


def backend_label(backend) -> str:
    if backend.is_gpu:
        return f"GPU: {backend.device_name}"
    return "CPU (NumPy)" + (f" — {backend.notice}" if backend.notice else "")


class MainWindow(QMainWindow):
    """Top-level window.  ``options`` maps a workspace key to keyword arguments of its factory."""

    # (menu text, workspace method, shortcut, status tip)
    FILE_ACTIONS = [
        ("&Open field…", "open_field", QKeySequence.StandardKey.Open, "Load a saved field (.npz) as the initial condition"),
        ("&Save field…", "save_field", QKeySequence.StandardKey.Save, "Save the current field and its parameters (.npz)"),
        None,
        ("&Export image…", "export_image", "Ctrl+E", "Render the view to a PNG at a chosen resolution"),
        ("Export &plots…", "export_plots", "Ctrl+Shift+E", "Save the diagnostic plots as PNG or SVG"),
        ("Export &movie…", "export_movie", "Ctrl+Shift+M", "Record the running simulation to MP4 or GIF"),
    ]
    SIM_ACTIONS = [
        ("&Start / Pause", "toggle_run", "Space", "Start or pause the simulation"),
        ("S&tep", "step_once", ".", "Advance one frame (steps per frame) while paused"),
        ("&Reset", "reset", "Ctrl+R", "Rebuild the initial field with the current parameters"),
    ]

    def __init__(self, backend, settings: QSettings | None = None, options: dict | None = None, parent=None):
        super().__init__(parent)
        self.backend = backend
        self.settings = settings if settings is not None else QSettings(ORG, APP_NAME)
        self._options = options or {}
        self._workspaces: dict[str, QWidget] = {}
        self._bound_actions: list[tuple[QAction, str]] = []
        self._status: dict[str, dict] = {}   # last status fields per workspace key
        self.setWindowTitle(APP_NAME)
        self.resize(1440, 900)

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
        lay.addWidget(self.mode_bar)
        lay.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        for spec in registry.WORKSPACES:
            it = QListWidgetItem(_badge_icon(spec.short or spec.title[:2], spec.color),
                                 spec.title.replace("–", "–\u200b"))   # may wrap after the dash
            it.setData(Qt.ItemDataRole.UserRole, spec.key)
            it.setToolTip(spec.description or spec.title)
            it.setTextAlignment(Qt.AlignmentFlag.AlignHCenter)
            it.setSizeHint(QSize(84, 80))
            self.mode_bar.addItem(it)

        self._build_menus()
        self._build_status_bar()
        self.mode_bar.currentRowChanged.connect(self._on_mode_changed)

        geo = self.settings.value("main/geometry")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        last = self.settings.value("main/workspace", registry.WORKSPACES[0].key if registry.WORKSPACES else "")
        keys = [w.key for w in registry.WORKSPACES]
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
            if hasattr(w, "restore_settings"):
                self.settings.beginGroup(f"ws/{key}")
                try:
                    w.restore_settings(self.settings)
                finally:
                    self.settings.endGroup()
            if hasattr(w, "status_changed"):
                w.status_changed.connect(self._on_status)
            self._workspaces[key] = w
            self.stack.addWidget(w)
        return self._workspaces[key]

    def _on_mode_changed(self, row: int) -> None:
        if row < 0:
            return
        key = registry.WORKSPACES[row].key
        w = self.workspace(key)
        self.stack.setCurrentWidget(w)
        self.settings.setValue("main/workspace", key)
        self._rebind_actions()

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
        quit_act = QAction("&Quit", self)
        quit_act.setShortcut(QKeySequence("Ctrl+Q"))
        quit_act.triggered.connect(self.close)
        m_file.addAction(quit_act)

        self.m_sim = mb.addMenu("&Run")
        self._add_actions(self.m_sim, self.SIM_ACTIONS)
        self.m_workspace = mb.addMenu("&Workspace")   # the current workspace's own actions

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
        self._bound_actions += [(self.act_plots, "set_plots_visible"), (self.act_controls, "set_controls_visible")]

        m_help = mb.addMenu("&Help")
        about = QAction("&About GPU Science Explorer", self)
        about.triggered.connect(self.show_about)
        m_help.addAction(about)
        about_qt = QAction("About &Qt", self)
        about_qt.triggered.connect(lambda: QMessageBox.aboutQt(self))
        m_help.addAction(about_qt)

    def _rebind_actions(self) -> None:
        """Enable/rename the shared menu actions for the current workspace and
        rebuild its own menu (``MENU_TEXT`` renames, ``extra_actions()`` adds)."""
        ws = self.workspace()
        texts = getattr(ws, "MENU_TEXT", {}) or {}
        for act, method in self._bound_actions:
            act.setEnabled(callable(getattr(ws, method, None)))
            if act.data():
                act.setText(texts.get(method) or act.data())
        self.m_sim.menuAction().setVisible(
            any(callable(getattr(ws, m, None)) for _t, m, _k, _tip in self.SIM_ACTIONS))
        self.m_workspace.clear()
        extra = getattr(ws, "extra_actions", lambda: [])() if ws is not None else []
        for text, method, shortcut, tip in extra:
            act = QAction(text, self.m_workspace)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.triggered.connect(lambda _=False, m=method: self._call(m))
            self.m_workspace.addAction(act)
        self.m_workspace.menuAction().setVisible(bool(extra))
        self._apply_status(self._status.get(getattr(ws, "objectName", lambda: "")(), None), reset=True)
        self.m_cmap.clear()
        for a in self.cmap_group.actions():
            self.cmap_group.removeAction(a)
        names = getattr(ws, "colormaps", lambda: [])() if ws is not None else []
        current = getattr(ws, "colormap", lambda: None)() if ws is not None else None
        for name in names:
            a = QAction(name, self, checkable=True, checked=(name == current))
            a.triggered.connect(lambda _=False, n=name: self._call("set_colormap", n))
            self.cmap_group.addAction(a)
            self.m_cmap.addAction(a)
        self.m_cmap.setEnabled(bool(names))
        if ws is not None and hasattr(ws, "plots_visible"):
            self.act_plots.blockSignals(True)
            self.act_plots.setChecked(ws.plots_visible())
            self.act_plots.blockSignals(False)
        if ws is not None and hasattr(ws, "colormap_changed"):
            try:
                ws.colormap_changed.disconnect(self._sync_cmap)
            except TypeError:
                pass
            ws.colormap_changed.connect(self._sync_cmap)

    def _sync_cmap(self, name: str) -> None:
        for a in self.cmap_group.actions():
            a.setChecked(a.text() == name)

    def _call(self, method: str, *args):
        ws = self.workspace()
        fn = getattr(ws, method, None)
        if callable(fn):
            return fn(*args)
        return None

    def show_about(self) -> None:
        items = "".join(
            f"<li><b>{tag}</b> — {authors}: <i>{title}</i>. {where}.</li>" for tag, authors, title, where in PAPERS)
        QMessageBox.about(
            self, f"About {APP_NAME}",
            f"<h3>{APP_NAME}</h3>"
            "<p>Explore GPU algorithms from research papers, live: run them on the GPU (CuPy/CUDA) "
            "or on the CPU (NumPy), change parameters while they run, and export images, plots, "
            "fields and movies.</p>"
            f"<p>Backend: {self.backend.describe()}</p>"
            f"<p>Source papers:</p><ul>{items}</ul>")

    # ------------------------------------------------------------ status bar
    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self.lbl_backend = QLabel(backend_label(self.backend))
        self.lbl_backend.setToolTip(self.backend.describe())
        if not self.backend.is_gpu and self.backend.notice:
            self.lbl_backend.setStyleSheet("color: #9a5b00;")
        self.lbl_fps = QLabel("— fps")
        self.lbl_sps = QLabel("— steps/s")
        self.lbl_t = QLabel("t = 0")
        self.lbl_info = QLabel("")
        self.lbl_info.setToolTip("About the current workspace's data")
        sb.addPermanentWidget(self.lbl_info)
        self.lbl_display = QLabel("")
        self.lbl_display.setToolTip("How frames reach the screen: CUDA–GL interop writes the GPU field "
                                    "straight into an OpenGL buffer; host = copied through main memory")
        sb.addPermanentWidget(self.lbl_display)
        for w, tip, width in ((self.lbl_fps, "Display frames drawn per second", 70),
                              (self.lbl_sps, "Simulation steps per second (compute only)", 120),
                              (self.lbl_t, "Simulation time and step count", 200)):
            w.setToolTip(tip)
            w.setMinimumWidth(width)
            sb.addPermanentWidget(w)
        sb.addPermanentWidget(self.lbl_backend)

    def _on_status(self, info: dict) -> None:
        key = self.sender().objectName() if self.sender() is not None else ""
        self._status.setdefault(key, {}).update(info)
        if self.sender() is not self.workspace():
            return
        self._apply_status(info)

    def _apply_status(self, info: dict | None, reset: bool = False) -> None:
        """Show the fields a workspace reports; with ``reset`` hide the others."""
        fields = {"fps": self.lbl_fps, "steps_per_s": self.lbl_sps, "t": self.lbl_t,
                  "display": self.lbl_display, "info": self.lbl_info}
        info = info or {}
        for k, w in fields.items():
            if k in info:
                w.setVisible(True)
            elif reset:
                w.setVisible(False)
        if "info" in info:
            self.lbl_info.setText(str(info["info"]))
        if "fps" in info:
            self.lbl_fps.setText(f"{info['fps']:.0f} fps" if info["fps"] > 0 else "— fps")
        if "steps_per_s" in info:
            v = info["steps_per_s"]
            self.lbl_sps.setText("— steps/s" if v <= 0 else f"{v:,.0f} steps/s" if v >= 10 else f"{v:.2g} steps/s")
        if "display" in info:
            self.lbl_display.setText(f"display: {info['display']}")
        if "t" in info:
            self.lbl_t.setText(f"t = {info['t']:.4g}   step {info.get('steps', 0):,}")

    # ---------------------------------------------------------------- closing
    def closeEvent(self, ev) -> None:
        self.settings.setValue("main/geometry", self.saveGeometry())
        self.settings.setValue("main/state", self.saveState())
        for key, w in self._workspaces.items():
            if hasattr(w, "save_settings"):
                self.settings.beginGroup(f"ws/{key}")
                try:
                    w.save_settings(self.settings)
                finally:
                    self.settings.endGroup()
            if hasattr(w, "shutdown"):
                w.shutdown()
        self.settings.sync()
        super().closeEvent(ev)
