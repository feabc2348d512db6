"""Application start-up: QApplication, VisPy's Qt backend, exception dialog, main window."""
from __future__ import annotations

import sys
import traceback

import pyqtgraph as pg
import vispy
from PyQt6.QtWidgets import QApplication, QMessageBox

from kernels import backend as backend_mod
from kernels.appdirs import APP_NAME, ORG  # noqa: F401 (one definition for the app and the CLI)
from kernels.errors import ExplorerError

from .main_window import MainWindow

_vispy_ready = False


def use_vispy_qt() -> None:
    """Tell VisPy to draw through PyQt6 (must run before any SceneCanvas exists)."""
    global _vispy_ready
    if not _vispy_ready:
        vispy.use(app="pyqt6")
        _vispy_ready = True


def create_app(argv=None):
    """Return the QApplication (created once), styled and named for QSettings."""
    use_vispy_qt()
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv if argv is not None else sys.argv[:1]))
    app.setOrganizationName(ORG)
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    if app.style() is None or app.style().name().lower() != "fusion":
        app.setStyle("Fusion")   # once: setting it again re-polishes every widget that exists
    pg.setConfigOptions(background="w", foreground="k", antialias=True)
    return app


def install_excepthook(parent_getter=lambda: None, log_getter=lambda: None) -> None:
    """Show unexpected exceptions in a dialog (and on stderr, and in the message log that
    ``log_getter()`` returns) instead of aborting."""
    showing = []

    def hook(etype, value, tb):
        text = "".join(traceback.format_exception(etype, value, tb))
        sys.stderr.write(text)
        log = log_getter()
        if log is not None:
            log.add(f"{etype.__name__}: {value}", "error", "exception")
        if showing:  # never stack dialogs when an error repeats inside the dialog's loop
            return
        showing.append(1)
        try:
            box = QMessageBox(parent_getter())
            if isinstance(value, ExplorerError):
                box.setIcon(QMessageBox.Icon.Warning)
                box.setText(str(value))
            else:
                box.setIcon(QMessageBox.Icon.Critical)
                box.setText(f"An unexpected error occurred: {etype.__name__}: {value}\n\n"
                            "The application keeps running; the last action may be incomplete.")
                box.setDetailedText(text)
            box.setWindowTitle(APP_NAME)
            box.exec()
        finally:
            showing.clear()

    sys.excepthook = hook


def run_gui(backend_choice: str | None = None, argv=None) -> int:
    """Start the desktop app on ``backend_choice`` ("auto"|"gpu"|"cpu"|None) and run its event loop."""
    app = create_app(argv)

    try:
        backend = backend_mod.select(backend_choice)
    except ExplorerError as exc:
        QMessageBox.warning(None, APP_NAME, f"{exc}\n\nFalling back to the CPU (NumPy) backend.")
        backend = backend_mod.select("cpu")
        backend.notice = f"requested GPU unavailable: {exc}"

    win = MainWindow(backend)
    install_excepthook(lambda: win, lambda: win.log)
    win.show()
    return app.exec()
