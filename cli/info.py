"""The top-level options that describe or reset the installation, handled before any command:

    python main.py --version          the app's version (one line)
    python main.py --info             backend, GPU, every version, settings and cache paths
    python main.py --info --json      the same as one JSON object
    python main.py --reset-settings   delete the desktop app's settings file (defaults at next start)

The text comes from :mod:`kernels.sysinfo` — the same as the desktop app's Help ▸ About.
"""
from __future__ import annotations

import json

from kernels import appdirs, sysinfo
from kernels import backend as backend_mod


def add_options(p) -> None:
    """The options on the top-level parser."""
    p.add_argument("--version", action="store_true", help="print the version and exit")
    p.add_argument("--info", action="store_true",
                   help="print the backend, GPU, versions of every component, settings and cache paths, and exit "
                        "(with --json: as JSON)")
    p.add_argument("--reset-settings", action="store_true",
                   help="delete the desktop app's settings (window layout, parameters, recent files) and exit; "
                        "user presets and the cache are kept")


def requested(a) -> bool:
    return bool(a.version or a.info or a.reset_settings)


def run(a, as_json: bool = False) -> int:
    """Handle ``--version`` / ``--info`` / ``--reset-settings`` (in that order; each prints)."""
    if a.version:
        print(f"gpu-science-explorer {sysinfo.app_version()}")
    if a.reset_settings:
        gone = appdirs.reset_settings()
        print(f"settings reset: deleted {gone}" if gone else
              f"settings reset: there were none ({appdirs.settings_file()})")
    if a.info:
        b = backend_mod.select(a.backend)                 # a forced gpu without one: the error contract
        if as_json:
            print(json.dumps(sysinfo.info(b), indent=2))
        else:
            print(sysinfo.info_text(b))
    return 0
