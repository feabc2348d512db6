"""Fixtures for the GUI tests: the main window on the CPU backend at a 64² grid, under Xvfb."""
from __future__ import annotations

import importlib.util

import pytest

# The GUI tests need PyQt6 (and pytest-qt); where it is missing (the GPU machine) the folder is
# left out of collection rather than failing to import.
collect_ignore_glob = [] if importlib.util.find_spec("PyQt6") else ["test_*.py"]


@pytest.fixture
def backend():
    from kernels import backend as b
    return b.select("cpu")


@pytest.fixture
def main_window(qtbot, backend, tmp_path):
    from PyQt6.QtCore import QSettings

    from explorer.app import create_app
    from explorer.main_window import MainWindow
    from kernels.cahn_hilliard.params import CHParams

    create_app()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(backend, settings=settings,
                     options={"cahn_hilliard": {"params": CHParams(size=64), "steps_per_frame": 10}})
    win.resize(1280, 860)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.ask_before_quit = False          # a test may leave a run going: no dialog at teardown
    win.close()


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
