"""Fixtures for the GUI tests: the main window on the CPU backend at a 64² grid, under Xvfb."""
from __future__ import annotations

import gc
import importlib.util

import pytest

# The GUI tests need PyQt6 (and pytest-qt); where it is missing (the GPU machine) the folder is
# left out of collection rather than failing to import.
collect_ignore_glob = [] if importlib.util.find_spec("PyQt6") else ["test_*.py"]


#: a full collection after every this many GUI tests (the others collect the young generations only:
#: with the collector off, everything a test made is young)
FULL_EVERY = 16
_RUNS = [0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Python's cycle collector stays off while a GUI test runs (set-up, body, teardown) and runs once
    after it, between tests.  Widgets kept alive only by reference cycles (a slot capturing the part
    that owns the widget; pytest-qt keeps weak references) are otherwise reclaimed whenever the
    collector fires, including inside the ``processEvents`` pytest-qt calls after each test body:
    destroying Qt objects while Qt dispatches events to them crashed a test worker now and then
    (a segfault in ``pytestqt/plugin.py``'s ``_process_events``; the same diagnosis and remedy as
    equinor/ert#14421)."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        _RUNS[0] += 1
        gc.collect(2 if _RUNS[0] % FULL_EVERY == 0 else 1)   # the test's own garbage; all of it now and then


@pytest.fixture
def backend():
    from kernels import backend as b
    return b.select("cpu")


#: the fixtures that show one workspace (other than the first, Cahn–Hilliard) → its key
SHOWN_BY = {"graphs_ws": "graphs", "occ_ws": "occupancy", "flint_ws": "flint"}


def start_workspace(request) -> str | None:
    """The workspace the test is about, for the main window to open on (as it opens on the one
    shown when it was last closed), so that it builds no other one first (a workspace is built
    the first time it is shown or asked for): the one its workspace fixture shows (``graphs_ws``,
    ``occ_ws``, ``flint_ws``; none with ``ws``, which expects Cahn–Hilliard in front), else its
    ``key`` parameter when that names a workspace.  None: the default (Cahn–Hilliard)."""
    from explorer.main_window import workspace_keys

    names = set(request.fixturenames)
    if "ws" in names:
        return None
    shown = {key for name, key in SHOWN_BY.items() if name in names}
    if shown:
        return shown.pop() if len(shown) == 1 else None
    callspec = getattr(request.node, "callspec", None)
    key = callspec.params.get("key") if callspec is not None else None
    return key if isinstance(key, str) and key in workspace_keys() else None


@pytest.fixture
def open_window(qtbot, backend):
    """``open_window(settings_path, start=None)``: a main window on the CPU backend (Cahn–Hilliard at
    64²) keeping its settings in the INI file ``settings_path``, opened on workspace ``start`` (None:
    the one remembered there), 1280 × 860, shown.  Closed and deleted at teardown."""
    from PyQt6.QtCore import QCoreApplication, QEvent, QSettings

    from explorer.app import create_app
    from explorer.main_window import MainWindow
    from kernels.cahn_hilliard.params import CHParams

    made = []

    def make(settings_path, start: str | None = None):
        create_app()
        settings = QSettings(str(settings_path), QSettings.Format.IniFormat)
        if start is not None:
            settings.setValue("main/workspace", start)
        win = MainWindow(backend, settings=settings,
                         options={"cahn_hilliard": {"params": CHParams(size=64), "steps_per_frame": 10}})
        win.resize(1280, 860)
        qtbot.addWidget(win)
        win.show()
        qtbot.waitExposed(win)
        made.append(win)
        return win

    yield make
    for win in made:
        win.ask_before_quit = False      # a test may leave a run going: no dialog at teardown
        win.close()
        # pytest-qt has called deleteLater on the window: delete it now, not at some later test's
        # event loop or garbage collection (its widgets would slow every later window's set-up)
        win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def main_window(request, open_window, tmp_path):
    """The main window of a GUI test, opened on the workspace the test is about
    (:func:`start_workspace`)."""
    return open_window(tmp_path / "settings.ini", start_workspace(request))


@pytest.fixture
def ws(main_window, qtbot):
    w = main_window.workspace("cahn_hilliard")
    qtbot.waitExposed(w.canvas.native)
    return w


@pytest.fixture
def graphs_ws(main_window, qtbot):
    """The Graphs workspace, shown (CPU backend)."""
    w = main_window.show_workspace("graphs")
    qtbot.waitExposed(w.canvas.native)
    return w


@pytest.fixture
def occ_ws(main_window, qtbot):
    """The Occupancy workspace, shown (CPU backend: the calculator works, 'My kernels' is empty)."""
    w = main_window.show_workspace("occupancy")
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def flint_ws(main_window, qtbot):
    """The Flint workspace, shown (CPU backend: NumPy runtime only)."""
    w = main_window.show_workspace("flint")
    qtbot.waitExposed(w)
    yield w
    w.shutdown()


@pytest.fixture(autouse=True)
def _no_quit_dialog(monkeypatch):
    """No modal quit question at teardown: pytest-qt closes the windows before fixtures end, and a
    test that failed with a run going would otherwise wait forever on the dialog.  Tests of the
    question itself patch ``confirm_quit`` on their window (an instance attribute wins)."""
    from explorer.main_window import MainWindow
    monkeypatch.setattr(MainWindow, "confirm_quit", lambda self, names: True)


@pytest.fixture(autouse=True)
def _fresh_sweep_preference():
    """The app-wide scheduler choice (explorer.sweep_panel.preference) starts unset in every test."""
    yield
    from explorer.sweep_panel import preference
    pref = preference()
    pref.scheduler, pref.workers = None, 0
