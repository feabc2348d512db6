"""Sessions and figures of the main window, for every workspace: *Export figure* (PNG at a size and
DPI, SVG, footer), *Copy figure*, *Record movie* (the workspace's own or a timed recording of its
view), *Save / Open session*.  Files are written through :mod:`explorer.export` and
:mod:`explorer.session` (checked path, temporary file, rename); a failure is one message and the
workspace keeps its state.  A mixin of :class:`explorer.main_window.MainWindow`."""
from __future__ import annotations

from pathlib import Path

from PyQt6.QtWidgets import QFileDialog, QInputDialog

from kernels.appdirs import APP_NAME
from kernels.errors import ExplorerError

from . import export as fig_export
from . import figure_style
from . import session as session_mod
from . import undo
from . import workspaces as registry

SESSION_KIND = "session"


class WindowFilesMixin:
    """Figure export, clipboard, movies and sessions of the current workspace; files dropped on
    the window or chosen in File ▸ Open Recent (:meth:`open_path`)."""

    # ------------------------------------------------------------ open any file
    def kind_of(self, path) -> tuple[str, str] | None:
        """(workspace key or "" for a session, recent-files kind) of the file ``path``, or None."""
        if Path(str(path)).suffix.lower() == session_mod.SUFFIX:
            return "", SESSION_KIND
        cur = self.stack.currentWidget()
        key = registry.workspace_for(path, prefer=cur.objectName() if cur is not None else None)
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
            self.notify(f"Could not open {name}: no workspace opens {Path(path).suffix or 'files without a suffix'}"
                        f" files (sessions: {session_mod.SUFFIX})", "error")
            return False
        key, kind = found
        if not Path(path).is_file():
            self.notify(f"Could not open {name}: the file does not exist", "error")
            self.recent.files.remove(kind, path)
            return False
        if not key:
            return self.open_session(path)
        ws = self.workspace(key)
        self.show_workspace(key)
        try:
            with undo.suspended(ws):
                ws.open_file(path)
        except (ExplorerError, OSError, ValueError) as exc:
            self.notify(f"Could not open {name}: {exc}", "error")
            return False
        finally:
            undo.resync(ws)
        self.recent.add(kind, path)
        self._refresh_caption()
        self.notify(f"Opened {name}", "info")
        return True

    def remember_file(self, path) -> None:
        """A workspace read ``path`` through its own dialog (``explorer.recent.file_opened``)."""
        found = self.kind_of(path)
        if found is not None:
            self.recent.add(found[1], path)

    def dragEnterEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if ev.mimeData().hasUrls() and any(u.isLocalFile() for u in ev.mimeData().urls()):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dropEvent(self, ev) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if not paths:
            ev.ignore()
            return
        ev.acceptProposedAction()
        for p in paths:
            self.open_path(p)

    def figures(self) -> list:
        ws = self.workspace()
        return list(ws.figure_targets()) if ws is not None and ws.supports("figures") else []

    def figure_footer(self) -> str:
        """Default footer: the caption and the workspace's parameter summary."""
        ws = self.workspace()
        parts = [ws.caption(), ws.parameter_summary()] if ws is not None else []
        return "\n".join(p for p in parts if p)

    def figure_style(self, fig) -> figure_style.FigureStyle:
        """The style remembered for ``fig`` of the current workspace (the defaults at first)."""
        return figure_style.load_style(self.settings, self.stack.currentWidget().objectName(), fig.name)

    def set_figure_style(self, fig, style: figure_style.FigureStyle) -> None:
        figure_style.save_style(self.settings, self.stack.currentWidget().objectName(), fig.name, style)

    def export_figure(self, path=None, target: str | None = None, width: int | None = None,
                      dpi: int = 300, footer: bool | str = False, style=None):
        """Export one figure of the current workspace (dialog when ``path`` is None).  Without the
        dialog, ``style`` (a :class:`~explorer.figure_style.FigureStyle`, or None for the one
        remembered for that figure) styles its plots."""
        figs = self.figures()
        if not figs:
            return None
        if path is None:
            dlg = fig_export.ExportFigureDialog(figs, self.figure_footer(), self, styles=self.figure_style)
            if dlg.exec() != dlg.DialogCode.Accepted:
                return None
            fig, svg = dlg.figure(), dlg.fmt.currentData() == "svg"
            width, dpi = dlg.width.value(), dlg.dpi.value()
            footer = dlg.footer_text.text() if dlg.footer_check.isChecked() else ""
            style = dlg.style()
            if style is not None:
                self.set_figure_style(fig, style)
            default = f"{self.stack.currentWidget().objectName()}_{fig.name.lower().replace(' ', '_')}"
            path, _ = QFileDialog.getSaveFileName(self, "Export figure", default + (".svg" if svg else ".png"),
                                                  "SVG vector (*.svg)" if svg else "PNG image (*.png)")
            if not path:
                return None
        else:
            names = [f.name for f in figs]
            fig = figs[names.index(target)] if target else figs[0]
            if footer is True:
                footer = self.figure_footer()
            if style is None:
                style = self.figure_style(fig)
        try:
            out = fig_export.save_figure(fig, path, width=width, dpi=dpi, footer=footer or "", style=style)
        except (ExplorerError, OSError, ValueError) as exc:
            self.notify(f"Could not export {fig.name}: {exc}", "error")
            return None
        self.notify(f"Exported {fig.name} to {out}", "info")
        return out

    def copy_figure(self):
        figs = self.figures()
        if not figs:
            return None
        img = fig_export.copy_to_clipboard(figs[0], scale=2.0)
        self.statusBar().showMessage(f"Copied {figs[0].name} ({img.width()}×{img.height()}) to the clipboard", 5000)
        return img

    def record_movie(self, path=None, frames: int | None = None, fps: int = 10):
        """The workspace's own movie export (a running simulation) or a timed recording of its view."""
        ws = self.workspace()
        if ws is not None and ws.supports("export_movie"):
            return ws.export_movie(path, frames) if path is not None else ws.export_movie()
        figs = self.figures()
        if not figs:
            return None
        if self._recorder is not None and self._recorder.active:
            self.notify("A recording is already running (Stop it in its progress window).", "warning")
            return None
        if frames is None:
            frames, ok = QInputDialog.getInt(self, "Record movie", f"Frames to record at {fps} fps:", 100, 2, 100000)
            if not ok:
                return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Record movie", "recording.mp4",
                                                  "MP4 video (*.mp4);;Animated GIF (*.gif)")
            if not path:
                return None
        def finished(rec):
            if rec.error:
                self.notify(f"Could not record {rec.path}: {rec.error}", "error")
            else:
                self.notify(f"Recorded {rec.count} frames to {rec.path}", "info")
        try:
            self._recorder_key = self.stack.currentWidget().objectName()
            self._recorder = fig_export.ScreenRecorder(figs[0], path, frames, fps, parent=self, finished=finished)
        except Exception as exc:  # missing ffmpeg, unwritable path …
            self.notify(f"Could not record {path}: {exc}", "error")
            return None
        return self._recorder.rec.path

    def save_session(self, path=None, include_data: bool | None = None):
        ws = self.workspace()
        key = self.stack.currentWidget().objectName() if ws is not None else ""
        if ws is None or not ws.supports("sessions"):
            self.notify("This workspace cannot save sessions yet.", "warning")
            return None
        if path is None:
            start = str(Path(str(self.settings.value("main/session_dir", ""))) / f"{key}{session_mod.SUFFIX}")
            path, _ = QFileDialog.getSaveFileName(self, "Save session", start,
                                                  f"Sessions (*{session_mod.SUFFIX})")
            if not path:
                return None
        if include_data is None:
            include_data = self.act_session_data.isChecked()
        try:
            state = ws.session_state()
            data = ws.session_data() if include_data else {}
            out = session_mod.save_session(path, key, state, data, app=APP_NAME)
        except ExplorerError as exc:
            self.notify(f"Could not save the session: {exc}", "error")
            return None
        self.settings.setValue("main/session_dir", str(Path(out).parent))
        self.recent.add(SESSION_KIND, out)
        self.notify(f"Saved session to {out}" + ("" if data else " (parameters and view only)"), "info")
        return out

    def open_session(self, path=None) -> bool:
        """Restore a session; a bad file gives one message and changes nothing."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open session", str(self.settings.value("main/session_dir", "")),
                                                  f"Sessions (*{session_mod.SUFFIX});;All files (*)")
            if not path:
                return False
        try:
            key, state, data, _manifest = session_mod.load_session(path)
            keys = [w.key for w in registry.WORKSPACES]
            if key not in keys:
                raise session_mod.SessionError(f"{Path(path).name} is a session of the {key!r} workspace, "
                                               "which this version of the app does not have")
        except ExplorerError as exc:
            self.notify(f"Could not open the session: {exc}", "error")
            return False
        ws = self.workspace(key)
        if not ws.supports("sessions"):
            self.notify(f"The {key} workspace cannot restore sessions.", "error")
            return False
        self.show_workspace(key)
        try:
            with undo.recorded(ws, f"Session {Path(path).name}"):
                ws.restore_session(state, data)
        except (ExplorerError, KeyError, TypeError, ValueError) as exc:
            self.notify(f"Could not open the session {Path(path).name}: {exc}", "error")
            return False
        self.settings.setValue("main/session_dir", str(Path(path).parent))
        self.recent.add(SESSION_KIND, path)
        self._refresh_caption()
        self.statusBar().showMessage(f"Opened session {Path(path).name}", 6000)
        self.last_message = f"Opened session {Path(path).name}"
        return True
