"""Sessions and figures of the main window, for every workspace: *Export figure* (PNG at a size and
DPI, SVG, footer), *Copy figure*, *Record movie* (the workspace's own or a timed recording of its
view), *Save / Open session*.  Files are written through :mod:`explorer.export` and
:mod:`explorer.session` (checked path, temporary file, rename); a failure is one message and the
workspace keeps its state.  A composed part of the main window (:class:`WindowFiles`); it owns the
running screen recording.

What it uses of the window (a :class:`~explorer.main_window.MainWindow`): ``settings``,
``workspace(key=None)``, ``show_workspace(key)``, ``current_key()``, ``notify(text, level)``,
``show_status(text, ms)``, ``refresh_caption()``.  Files it opened or saved are announced with
``file_used(kind, path)`` (the window lists them under File ▸ Open Recent), files that have gone
with ``file_gone(kind, path)``."""
from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QFileDialog, QInputDialog

from kernels.appdirs import APP_NAME
from kernels.errors import ExplorerError

from . import export as fig_export
from . import figure_style
from . import session as session_mod
from . import undo
from . import workspaces as registry

SESSION_KIND = "session"


class WindowFiles(QObject):
    """Figure export, clipboard, movies and sessions of ``window``'s current workspace; files
    dropped on the window or chosen in File ▸ Open Recent (:meth:`open_path`)."""

    file_used = pyqtSignal(str, str)      # (recent-files kind, path) opened or saved
    file_gone = pyqtSignal(str, str)      # (kind, path) that no longer exists

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.recorder = None              # ScreenRecorder of a workspace without its own movie export
        self.recorder_key = ""            # the workspace it records

    def recording(self) -> str | None:
        """The key of the workspace whose view is being recorded, or None."""
        return self.recorder_key if self.recorder is not None and self.recorder.active else None

    def stop_recording(self) -> None:
        if self.recorder is not None:
            self.recorder.stop()

    # ------------------------------------------------------------ open any file
    def kind_of(self, path) -> tuple[str, str] | None:
        """(workspace key or "" for a session, recent-files kind) of the file ``path``, or None."""
        if Path(str(path)).suffix.lower() == session_mod.SUFFIX:
            return "", SESSION_KIND
        key = registry.workspace_for(path, prefer=self.window.current_key() or None)
        if key is None:
            return None
        return key, registry.file_types(registry.get(key))[Path(str(path)).suffix.lower()]

    def open_path(self, path) -> bool:
        """Open ``path`` in the workspace that reads its suffix (a session: File ▸ Open session).
        A file no workspace opens, or one that fails, gives one message and changes nothing."""
        path = str(path)
        name = Path(path).name
        found = self.kind_of(path)
        if found is None:
            self.window.notify(f"Could not open {name}: no workspace opens {Path(path).suffix or 'files without a suffix'}"
                        f" files (sessions: {session_mod.SUFFIX})", "error")
            return False
        key, kind = found
        if not Path(path).is_file():
            self.window.notify(f"Could not open {name}: the file does not exist", "error")
            self.file_gone.emit(kind, path)
            return False
        if not key:
            return self.open_session(path)
        ws = self.window.workspace(key)
        self.window.show_workspace(key)
        try:
            with undo.suspended(ws):
                ws.open_file(path)
        except (ExplorerError, OSError, ValueError) as exc:
            self.window.notify(f"Could not open {name}: {exc}", "error")
            return False
        finally:
            undo.resync(ws)
        self.file_used.emit(kind, path)
        self.window.refresh_caption()
        self.window.notify(f"Opened {name}", "info")
        return True

    def remember_file(self, path) -> None:
        """A workspace read ``path`` through its own dialog (``explorer.recent.file_opened``)."""
        found = self.kind_of(path)
        if found is not None:
            self.file_used.emit(found[1], str(path))

    def figures(self) -> list:
        ws = self.window.workspace()
        return list(ws.figure_targets()) if ws is not None and ws.supports("figures") else []

    def figure_footer(self) -> str:
        """Default footer: the caption and the workspace's parameter summary."""
        ws = self.window.workspace()
        parts = [ws.caption(), ws.parameter_summary()] if ws is not None else []
        return "\n".join(p for p in parts if p)

    def figure_style(self, fig) -> figure_style.FigureStyle:
        """The style remembered for ``fig`` of the current workspace (the defaults at first)."""
        return figure_style.load_style(self.window.settings, self.window.current_key(), fig.name)

    def set_figure_style(self, fig, style: figure_style.FigureStyle) -> None:
        figure_style.save_style(self.window.settings, self.window.current_key(), fig.name, style)

    def export_figure(self, path=None, target: str | None = None, width: int | None = None,
                      dpi: int = 300, footer: bool | str = False, style=None):
        """Export one figure of the current workspace (dialog when ``path`` is None).  Without the
        dialog, ``style`` (a :class:`~explorer.figure_style.FigureStyle`, or None for the one
        remembered for that figure) styles its plots."""
        figs = self.figures()
        if not figs:
            return None
        if path is None:
            dlg = fig_export.ExportFigureDialog(figs, self.figure_footer(), self.window, styles=self.figure_style)
            if dlg.exec() != dlg.DialogCode.Accepted:
                return None
            fig, svg = dlg.figure(), dlg.fmt.currentData() == "svg"
            width, dpi = dlg.width.value(), dlg.dpi.value()
            footer = dlg.footer_text.text() if dlg.footer_check.isChecked() else ""
            style = dlg.style()
            if style is not None:
                self.set_figure_style(fig, style)
            default = f"{self.window.current_key()}_{fig.name.lower().replace(' ', '_')}"
            path, _ = QFileDialog.getSaveFileName(self.window, "Export figure", default + (".svg" if svg else ".png"),
                                                  "SVG vector (*.svg)" if svg else "PNG image (*.png)")
            if not path:
                return None
        else:
            names = [f.name for f in figs]
            if target and target not in names:      # e.g. the figure of a tab never opened (nothing to draw)
                self.window.notify(f"Could not export {target}: no such figure in this workspace now "
                                   f"(figures: {', '.join(names)})", "error")
                return None
            fig = figs[names.index(target)] if target else figs[0]
            if footer is True:
                footer = self.figure_footer()
            if style is None:
                style = self.figure_style(fig)
        try:
            out = fig_export.save_figure(fig, path, width=width, dpi=dpi, footer=footer or "", style=style)
        except (ExplorerError, OSError, ValueError) as exc:
            self.window.notify(f"Could not export {fig.name}: {exc}", "error")
            return None
        # the status bar (and log), not the message bar: showing the bar would re-lay out the figure,
        # so the next export of it would have another aspect
        self.window.show_status(f"Exported {fig.name} to {out}", 10000, remember=True)
        return out

    def copy_figure(self):
        figs = self.figures()
        if not figs:
            return None
        img = fig_export.copy_to_clipboard(figs[0], scale=2.0)
        self.window.show_status(f"Copied {figs[0].name} ({img.width()}×{img.height()}) to the clipboard", 5000)
        return img

    def record_movie(self, path=None, frames: int | None = None, fps: int = 10):
        """The workspace's own movie export (a running simulation) or a timed recording of its view."""
        ws = self.window.workspace()
        if ws is not None and ws.supports("export_movie"):
            return ws.export_movie(path, frames) if path is not None else ws.export_movie()
        figs = self.figures()
        if not figs:
            return None
        if self.recording() is not None:
            self.window.notify("A recording is already running (Stop it in its progress window).", "warning")
            return None
        if frames is None:
            frames, ok = QInputDialog.getInt(self.window, "Record movie", f"Frames to record at {fps} fps:", 100, 2, 100000)
            if not ok:
                return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self.window, "Record movie", "recording.mp4",
                                                  "MP4 video (*.mp4);;Animated GIF (*.gif)")
            if not path:
                return None
        def finished(rec):
            if rec.error:
                self.window.notify(f"Could not record {rec.path}: {rec.error}", "error")
            else:
                self.window.show_status(f"Recorded {rec.count} frames to {rec.path}", 10000, remember=True)
        try:
            self.recorder_key = self.window.current_key()
            self.recorder = fig_export.ScreenRecorder(figs[0], path, frames, fps, parent=self.window,
                                                      finished=finished)
        except Exception as exc:  # missing ffmpeg, unwritable path …
            self.window.notify(f"Could not record {path}: {exc}", "error")
            return None
        return self.recorder.rec.path

    def include_data(self) -> bool:
        """File ▸ Sessions include data (remembered in the settings)."""
        return str(self.window.settings.value("main/session_data", "true")).lower() == "true"

    def save_session(self, path=None, include_data: bool | None = None):
        ws = self.window.workspace()
        key = self.window.current_key() if ws is not None else ""
        if ws is None or not ws.supports("sessions"):
            self.window.notify("This workspace cannot save sessions yet.", "warning")
            return None
        if path is None:
            start = str(Path(str(self.window.settings.value("main/session_dir", ""))) / f"{key}{session_mod.SUFFIX}")
            path, _ = QFileDialog.getSaveFileName(self.window, "Save session", start,
                                                  f"Sessions (*{session_mod.SUFFIX})")
            if not path:
                return None
        if include_data is None:
            include_data = self.include_data()
        try:
            state = ws.session_state()
            data = ws.session_data() if include_data else {}
            out = session_mod.save_session(path, key, state, data, app=APP_NAME)
        except ExplorerError as exc:
            self.window.notify(f"Could not save the session: {exc}", "error")
            return None
        self.window.settings.setValue("main/session_dir", str(Path(out).parent))
        self.file_used.emit(SESSION_KIND, str(out))
        self.window.show_status(f"Saved session to {out}" + ("" if data else " (parameters and view only)"), 10000,
                                remember=True)
        return out

    def open_session(self, path=None) -> bool:
        """Restore a session; a bad file gives one message and changes nothing."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.window, "Open session", str(self.window.settings.value("main/session_dir", "")),
                                                  f"Sessions (*{session_mod.SUFFIX});;All files (*)")
            if not path:
                return False
        try:
            key, state, data, _manifest = session_mod.load_session(path)
            try:
                registry.get(key)
            except KeyError:
                raise session_mod.SessionError(f"{Path(path).name} is a session of the {key!r} workspace, "
                                               "which this version of the app does not have") from None
        except ExplorerError as exc:
            self.window.notify(f"Could not open the session: {exc}", "error")
            return False
        ws = self.window.workspace(key)
        if not ws.supports("sessions"):
            self.window.notify(f"The {key} workspace cannot restore sessions.", "error")
            return False
        self.window.show_workspace(key)
        try:
            with undo.recorded(ws, f"Session {Path(path).name}"):
                ws.restore_session(state, data)
        except (ExplorerError, KeyError, TypeError, ValueError) as exc:
            self.window.notify(f"Could not open the session {Path(path).name}: {exc}", "error")
            return False
        self.window.settings.setValue("main/session_dir", str(Path(path).parent))
        self.file_used.emit(SESSION_KIND, str(path))
        self.window.refresh_caption()
        self.window.show_status(f"Opened session {Path(path).name}", 6000, remember=True)
        return True
