"""Where the application keeps its files, through ``platformdirs`` (the platform's conventions:
``~/.config`` and ``~/.cache`` on Linux, honouring ``XDG_*``; ``~/Library`` on macOS;
``%LOCALAPPDATA%`` on Windows).  Qt-free: the command line (``--info``, ``--reset-settings``), the
compiled-library cache (:mod:`kernels.hostcc`) and the desktop app use the same paths.

- :func:`settings_file`: the desktop app's settings (an INI file read by ``QSettings`` in
  ``IniFormat``; on Linux this is where ``QSettings(ORG, APP_NAME)`` always kept them);
- :func:`cache_dir`: compiled libraries and other rebuildable files, one folder per ``kind``;
- :func:`data_dir`: files the user made in the app (user presets).
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ORG = "GPUScienceExplorer"           #: organisation name of the settings (as Qt's QSettings uses it)
APP_NAME = "GPU Science Explorer"    #: the application's name
DIST = "gpu-science-explorer"        #: the distribution's name: the cache and data folders


def config_dir() -> Path:
    """The folder of the settings file (``GSE_CONFIG_DIR`` overrides it, for tests and portable use)."""
    env = os.environ.get("GSE_CONFIG_DIR")
    return Path(env) if env else platformdirs.user_config_path(ORG, appauthor=False, roaming=True)


def settings_file() -> Path:
    """The desktop app's settings (INI)."""
    return config_dir() / f"{APP_NAME}.conf"


def cache_dir(kind: str = "") -> Path:
    """``<user cache>/gpu-science-explorer[/kind]``: rebuildable files (compiled libraries)."""
    base = platformdirs.user_cache_path(DIST, appauthor=False)
    return base / kind if kind else base


def data_dir(kind: str = "") -> Path:
    """``<user data>/gpu-science-explorer[/kind]``: files the user made (user presets)."""
    env = os.environ.get("GSE_DATA_DIR")
    base = Path(env) if env else platformdirs.user_data_path(DIST, appauthor=False)
    return base / kind if kind else base


def reset_settings() -> Path | None:
    """Delete the settings file (the app starts with its defaults); returns the path deleted, or
    None when there was none.  User presets and the cache are kept."""
    p = settings_file()
    try:
        p.unlink()
    except FileNotFoundError:
        return None
    return p
