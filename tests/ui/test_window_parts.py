"""The main window's composed parts alone (issue #36): :class:`explorer.window_menus.WindowMenus`
and :class:`explorer.window_files.WindowFiles`, each on a small host that gives only the narrow API
their docstrings name — no MainWindow (CPU backend, Xvfb)."""
from __future__ import annotations

import random

import pytest
from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QDockWidget, QMainWindow


class Host(QMainWindow):
    """The window API the parts use, recording what they ask of it."""

    def __init__(self, backend, settings, ws):
        super().__init__()
        from explorer.window_files import WindowFiles
        self.backend, self.settings, self.ws, self.theme = backend, settings, ws, "light"
        self.log_dock = QDockWidget("log", self)
        self.notices, self.statuses, self.opened, self.lecture, self.captions = [], [], [], None, 0
        self.files = WindowFiles(self)
        self.setCentralWidget(ws)

    def workspace(self, key=None):
        return self.ws

    def show_workspace(self, key):
        return self.ws

    def current_key(self):
        return self.ws.objectName()

    def supports(self, cap):
        return self.ws.supports(cap)

    def call(self, method, *args):
        return getattr(self.ws, method)(*args) if self.ws.supports(method) or method not in ("step_once",) else None

    def notify(self, text, level="info"):
        self.notices.append((text, level))

    def show_status(self, text, ms=0, remember=False):
        self.statuses.append(text)

    def refresh_caption(self):
        self.captions += 1

    def set_lecture_mode(self, on):
        self.lecture = on

    def set_theme(self, name):
        self.theme = name

    def open_path(self, path):
        self.opened.append(path)

    def apply_preset(self, which):
        return self.menus.apply_preset(which)

    def rebuild_presets(self):
        self.menus.rebuild_presets()


@pytest.fixture
def host(qtbot, backend, tmp_path, monkeypatch):
    from explorer import undo
    from explorer.occupancy.workspace import OccupancyWorkspace
    monkeypatch.setenv("GSE_DATA_DIR", str(tmp_path / "data"))
    ws = OccupancyWorkspace(backend)
    ws.setObjectName("occupancy")
    h = Host(backend, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), ws)
    qtbot.addWidget(h)
    undo.attach(ws)
    return h


def test_window_menus_alone_bind_to_the_workspace(qtbot, host):
    from explorer.window_menus import WindowMenus
    menus = host.menus = WindowMenus(host)
    menus.rebind()
    ws = host.ws
    for act, method in menus.bound_actions:                  # entries follow the capabilities
        assert act.isEnabled() == ws.supports(method), method
    assert not menus.m_sim.menuAction().isVisible()           # Occupancy has no Run menu
    assert menus.act_figure.isEnabled() and not menus.m_cmap.isEnabled()
    # presets: the shipped ones of this workspace, applied as one undo step with a status line
    from explorer import presets as presets_mod
    shipped = presets_mod.load_presets("occupancy")
    assert [a.text().split("  ", 1)[1] for a in menus.preset_actions()] == [p["name"] for p in shipped]
    i = random.randrange(len(shipped))
    menus.preset_actions()[i].trigger()
    assert ws.preset is not None and ws.preset["name"] == shipped[i]["name"]
    assert host.statuses[-1] == f"Preset {i + 1}: {shipped[i]['name']}"
    from explorer import undo
    assert undo.stack_for(ws).count() in (0, 1)               # one step (none when nothing changed)
    assert menus.apply_preset("no such preset") is False and "no preset named" in host.notices[-1][0]
    # view entries reach the host
    menus.act_lecture.trigger()
    assert host.lecture is True
    menus.check_lecture(False)
    assert not menus.act_lecture.isChecked() and host.lecture is True     # shown, not toggled again
    [a for a in menus.theme_group.actions() if a.text() == "Dark"][0].trigger()
    assert host.theme == "dark"
    menus.act_controls.trigger()                              # Show controls off → the workspace's dock
    assert not ws.controls_dock.isVisibleTo(ws)
    # recent files: a choice asks the host to open it
    menus.recent.open_requested.emit("/x/y.gsession")
    assert host.opened == ["/x/y.gsession"]
    keys = dict((t, k) for k, t in menus.shortcuts())
    assert keys["File ▸ Export figure…"] == "Ctrl+Shift+F" and "Presets ▸ 1  " + shipped[0]["name"] in keys


def test_window_files_alone_sessions_and_figures(qtbot, host, tmp_path):
    files = host.files
    used, gone = [], []
    files.file_used.connect(lambda k, p: used.append((k, p)))
    files.file_gone.connect(lambda k, p: gone.append((k, p)))
    ws = host.ws
    rng = random.Random()
    threads, regs = 32 * rng.randint(1, 32), rng.randint(16, 200)
    ws.set_inputs(cc="8.6", threads=threads, regs=regs)
    out = str(files.save_session(str(tmp_path / "a.gsession")))
    assert out and used == [("session", out)]
    ws.set_inputs(cc="9.0", threads=1024, regs=16)
    assert files.open_session(out) is True
    assert ws.inputs()["threads_per_block"] == threads and ws.inputs()["regs_per_thread"] == regs
    assert ws.cc.currentData() == "8.6" and used[-1] == ("session", out) and host.captions >= 1
    # a broken session changes nothing, one message
    bad = tmp_path / "bad.gsession"
    bad.write_bytes(b"not a zip")
    before = ws.inputs()
    assert files.open_session(str(bad)) is False
    assert ws.inputs() == before and host.notices[-1][1] == "error"
    # open_path: a session opens; a missing file is reported and announced as gone
    assert files.open_path(out) is True
    assert files.open_path(str(tmp_path / "gone.gsession")) is False
    assert gone == [("session", str(tmp_path / "gone.gsession"))]
    assert files.open_path(str(tmp_path / "x.unknown")) is False and "no workspace opens" in host.notices[-1][0]
    # figures: the workspace's, exported at the asked width
    names = [f.name for f in files.figures()]
    assert "Occupancy charts" in names
    png = files.export_figure(str(tmp_path / "c.png"), target="Results table", width=640, dpi=96)
    from PyQt6.QtGui import QImage
    assert QImage(str(png)).width() == 640
    assert "Exported Results table" in host.statuses[-1]
    assert files.recording() is None
    assert files.include_data() is True
    host.settings.setValue("main/session_data", False)
    assert files.include_data() is False


def test_status_fields_alone(qtbot, backend):
    from PyQt6.QtWidgets import QStatusBar

    from explorer.window_status import StatusFields, backend_label
    sb = QStatusBar()
    qtbot.addWidget(sb)
    sb.show()
    f = StatusFields(sb, backend)
    assert f.lbl_backend.text() == backend_label(backend) and f.lbl_backend.text().startswith("CPU (NumPy)")
    rng = random.Random()
    sps, t, steps = rng.uniform(10, 1e6), rng.uniform(0, 100), rng.randint(0, 10**6)
    f.apply({"steps_per_s": sps, "running": True, "t": t, "steps": steps, "info": "hello"}, reset=True)
    assert f.lbl_sps.isVisible() and f.lbl_sps.text() == f"{sps:,.0f} steps/s"
    assert f.lbl_t.text() == f"t = {t:.4g}   step {steps:,}" and f.lbl_info.text() == "hello"
    assert not f.lbl_fps.isVisible() and not f.progress_bar.isVisible()
    f.apply({"running": False})                           # paused: steps/s hidden
    assert not f.lbl_sps.isVisible()
    frac = rng.random()
    f.apply({"progress": (frac, "working"), "cursor": "x = 1"})
    assert f.progress_bar.isVisible() and f.progress_bar.value() == int(1000 * frac)
    assert f.lbl_cursor.isVisible() and f.lbl_cursor.text() == "x = 1"
    with qtbot.waitSignal(f.message) as sig:
        f.apply({"message": "Exported X to y.png"})
    assert sig.args == ["Exported X to y.png"]
    f.apply({}, reset=True)                               # another workspace: nothing of this one shown
    assert not any(w.isVisible() for w in (f.lbl_sps, f.lbl_t, f.lbl_info, f.lbl_cursor, f.progress_bar))
