"""The workspace contract: what the main window uses of a workspace, and nothing else.

Every registered workspace (``explorer.workspaces``) is a QWidget that also derives from
:class:`Workspace` (put it before the Qt class, so that the workspace's methods win).  The main window calls the *hooks* below on every workspace — the defaults here do
nothing — and binds its menus to the optional *commands* a workspace lists in ``CAPABILITIES``;
it never probes a workspace with ``getattr`` / ``hasattr``.

A workspace also has a Qt signal ``status_changed(dict)`` (status-bar fields, see
``explorer.workspaces``; ``{"message": text}`` shows a passing notice in the status bar and the log,
e.g. "Exported … to …") and a ``message_bar`` (an ``explorer.widgets.MessageBar``) for notices that
must stay until dismissed (errors).  A success notice goes to the status bar, not the message bar:
the bar takes room above the views, so showing it re-lays out the figures (an export after it would
have another aspect than the one before).
``tests/ui/test_workspace_protocol.py`` checks every registered workspace against this.
"""
from __future__ import annotations

#: menu commands a workspace may implement (the main window's File / Simulation / View actions);
#: each is a method of that name, present exactly when its name is in ``CAPABILITIES``
COMMANDS = ("open_field", "save_field", "export_image", "export_plots", "export_movie",
            "toggle_run", "step_once", "reset", "set_colormap", "set_plots_visible", "set_controls_visible",
            "apply_preset")

#: optional capabilities that are not one command: each says which hooks the workspace overrides
FEATURES = {
    "colormaps": ("colormaps", "colormap"),               # View ▸ Colormap; also a colormap_changed(str) signal
    "figures": ("figure_targets",),                      # Export / Copy figure, Record movie of its view
    "sessions": ("session_state", "restore_session"),    # File ▸ Save / Open session
    "open_files": ("open_file",),                        # drag and drop, Open Recent: FILE_TYPES
    "user_presets": ("preset_params",),                  # Presets ▸ Save current as preset…
}

KNOWN_CAPABILITIES = frozenset(COMMANDS) | frozenset(FEATURES)


class Workspace:
    """Base class of every workspace: the hooks the main window calls, with no-op defaults.

    ``CAPABILITIES``: the optional commands (:data:`COMMANDS`) and features (:data:`FEATURES`)
    the workspace implements; ``MENU_TEXT``: {command: menu text} renaming shared menu entries."""

    CAPABILITIES: frozenset[str] = frozenset()
    MENU_TEXT: dict[str, str] = {}
    #: {suffix (lower case, with the dot): kind} of the files :meth:`open_file` opens (capability
    #: ``open_files``); the kind ("model", "graph", "field" …) groups them under File ▸ Open Recent
    FILE_TYPES: dict[str, str] = {}
    message_bar = None

    @classmethod
    def supports(cls, capability: str) -> bool:
        """Whether the workspace offers the command or feature ``capability``."""
        return capability in cls.CAPABILITIES

    # ---------------------------------------------------------------- lifecycle
    def busy(self) -> bool:
        """A run, job or recording is in progress (the mode bar marks it; quitting asks first)."""
        return False

    def shutdown(self) -> None:
        """Stop and wait for the workspace's threads (the window is closing)."""

    def save_settings(self, settings) -> None:
        """Remember controls in ``settings`` (a QSettings opened at the workspace's group)."""

    def restore_settings(self, settings) -> None:
        """Restore what :meth:`save_settings` wrote (bad values are ignored)."""

    def set_lecture_mode(self, on: bool) -> None:
        """Large fonts, essential controls only."""

    # ---------------------------------------------------------------- text
    def caption(self) -> str:
        """One line naming what is shown (lecture-mode caption, figure footers)."""
        return ""

    def parameter_summary(self) -> str:
        """The parameters of what is shown, for figure footers."""
        return ""

    # ---------------------------------------------------------------- menus
    def extra_actions(self) -> list[tuple]:
        """(text, method, shortcut or None, tip) of the workspace's own menu."""
        return []

    def colormaps(self) -> list[str]:
        return []

    def colormap(self) -> str | None:
        return None

    def plots_visible(self) -> bool:
        return True

    # ---------------------------------------------------------------- figures and sessions
    def figure_targets(self) -> list:
        """The workspace's figures (``explorer.export.Figure``) for Export / Copy figure."""
        return []

    def session_state(self) -> dict:
        """JSON-able parameters and view of a session."""
        return {}

    def session_data(self) -> dict:
        """Arrays saved with a session when data are included."""
        return {}

    def restore_session(self, state: dict, data: dict) -> None:
        """Restore a session written by :meth:`session_state` / :meth:`session_data`."""

    # ---------------------------------------------------------------- files and user presets
    def open_file(self, path: str) -> None:
        """Open ``path`` (its suffix is one of :attr:`FILE_TYPES`): a file dropped on the window or
        picked in File ▸ Open Recent.  On failure raise :class:`kernels.errors.ExplorerError` (the
        window shows "Could not open …: <message>") and change nothing; on success the window
        lists it under Open Recent.  The workspace's own open dialogs call
        ``explorer.recent.file_opened(path)`` after a successful read."""
        raise NotImplementedError

    def preset_params(self) -> dict:
        """The current parameters as a preset's ``params`` (JSON-able), such that
        ``apply_preset({"params": preset_params(), …})`` restores them (capability ``user_presets``)."""
        return {}
