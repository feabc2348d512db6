"""User presets in the Presets menu, a composed part of the main window: *Save current as
preset…* (the workspace's ``preset_params()``, capability ``user_presets``), the user's presets
listed after the shipped ones, *Export your presets…*, *Import presets…* (JSON, the shipped
format) and *Delete* — stored by :mod:`explorer.presets` in the user data folder.  A file that
cannot be read gives one message and changes nothing."""
from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QObject
from PyQt6.QtWidgets import QFileDialog, QInputDialog

from kernels.errors import ExplorerError

from . import presets as presets_mod


class PresetActions(QObject):
    """The user-preset entries of ``window``'s Presets menu (``window``: the main window; used:
    ``workspace()``, ``current_key()``, ``supports(cap)``, ``notify(text, level)``,
    ``rebuild_presets()``)."""

    def __init__(self, window, directory: Path | None = None):
        super().__init__(window)
        self.window = window
        self.directory = directory            # None: presets_mod.user_preset_dir() (tests pass a folder)

    def _key(self) -> str:
        return self.window.current_key()

    def load(self, key: str) -> list[dict]:
        """The user's presets of ``key`` ([] after a message when the file is unreadable)."""
        if not key:
            return []
        try:
            return presets_mod.load_user_presets(key, self.directory)
        except presets_mod.PresetError as exc:
            self.window.notify(f"Your presets of this workspace could not be loaded: {exc}", "error")
            return []

    def add_actions(self, menu, key: str, user: list[dict]) -> None:
        menu.addSeparator()
        can_save = self.window.supports("user_presets")
        a = menu.addAction("&Save current as preset…")
        a.setStatusTip("Keep the current parameters as a preset of your own, listed here")
        a.setEnabled(can_save)
        a.triggered.connect(lambda: self.save_current())
        a = menu.addAction("&Import presets…")
        a.setStatusTip("Add the presets of a JSON file (as exported) to your presets")
        a.setEnabled(can_save)
        a.triggered.connect(lambda: self.import_file())
        a = menu.addAction("&Export your presets…")
        a.setStatusTip("Save your presets of this workspace to a JSON file")
        a.setEnabled(bool(user))
        a.triggered.connect(lambda: self.export_file())
        if user:
            dm = menu.addMenu("&Delete your preset")
            for p in user:
                d = dm.addAction(p["name"])
                d.triggered.connect(lambda _=False, n=p["name"]: self.delete(n))

    def save_current(self, name: str | None = None, description: str = "") -> dict | None:
        """Save the current workspace's parameters as a user preset (asks the name when None)."""
        ws, key = self.window.workspace(), self._key()
        if ws is None or not ws.supports("user_presets"):
            self.window.notify("This workspace cannot save presets.", "warning")
            return None
        if name is None:
            name, ok = QInputDialog.getText(self.window, "Save current as preset", "Preset name:")
            if not ok:
                return None
        try:
            preset = presets_mod.make_preset(name, ws.preset_params(), description)
            presets_mod.add_user_preset(key, preset, self.directory)
        except (ExplorerError, OSError, TypeError, ValueError) as exc:
            self.window.notify(f"Could not save the preset: {exc}", "error")
            return None
        self.window.rebuild_presets()
        self.window.notify(f"Saved preset {preset['name']!r}", "info")
        return preset

    def export_file(self, path=None) -> Path | None:
        key = self._key()
        user = self.load(key)
        if not user:
            self.window.notify("You have no presets of this workspace to export.", "warning")
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self.window, "Export your presets", f"{key}_presets.json",
                                                  "Presets (*.json)")
            if not path:
                return None
        try:
            out = presets_mod.export_presets(path, user)
        except (ExplorerError, OSError) as exc:
            self.window.notify(f"Could not export the presets: {exc}", "error")
            return None
        self.window.notify(f"Exported {len(user)} preset(s) to {out}", "info")
        return out

    def import_file(self, path=None) -> list[str]:
        key = self._key()
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.window, "Import presets", "", "Presets (*.json)")
            if not path:
                return []
        try:
            names = presets_mod.import_presets(key, path, self.directory)
        except (ExplorerError, OSError) as exc:
            self.window.notify(f"Could not import presets: {exc}", "error")
            return []
        self.window.rebuild_presets()
        self.window.notify(f"Imported {len(names)} preset(s): {', '.join(names)}", "info")
        return names

    def delete(self, name: str) -> bool:
        try:
            done = presets_mod.delete_user_preset(self._key(), name, self.directory)
        except (ExplorerError, OSError) as exc:
            self.window.notify(f"Could not delete the preset: {exc}", "error")
            return False
        self.window.rebuild_presets()
        return done
