"""Session files (``.gsession``): the complete state of one workspace in one file.

A session is a zip archive holding ``manifest.json`` — ``{"format": "gsession", "version": 1,
"workspace": key, "state": {…JSON…}, "arrays": [names], "saved": ISO time, "app": …}`` — and,
when data is included, ``data.npz`` with the named arrays (field, graph, traces).  The state
comes from the workspace's ``session_state()``, the arrays from ``session_data()``; both go
back through ``restore_session(state, data)``.  Reading checks everything before anything is
restored, so a corrupt, foreign or newer file gives one clear :class:`SessionError` and the
running workspace is left as it was.  Qt-free.
"""
from __future__ import annotations

import io
import json
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from kernels.errors import ExplorerError, InvalidParameter
from kernels.fileio import atomic_path, check_output_path

FORMAT = "gsession"
VERSION = 1
SUFFIX = ".gsession"


class SessionError(ExplorerError):
    """A session file that cannot be written or read back."""


def save_session(path, workspace: str, state: dict, data: dict | None = None, app: str = "") -> Path:
    """Write a session file; returns its path (``.gsession`` added when missing)."""
    path = Path(path)
    if path.suffix != SUFFIX:
        path = path.with_name(path.name + SUFFIX)
    data = {k: np.asarray(v) for k, v in (data or {}).items() if v is not None}
    for k, v in data.items():
        if v.dtype == object:
            raise SessionError(f"session array {k!r} has dtype object and cannot be saved")
    manifest = {"format": FORMAT, "version": VERSION, "workspace": workspace, "state": state,
                "arrays": sorted(data), "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "app": app}
    try:
        text = json.dumps(manifest, indent=1, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SessionError(f"the workspace state is not JSON-serialisable: {exc}") from None
    try:
        check_output_path(path, (SUFFIX,), "session")
        with atomic_path(path) as tmp:  # never a half-written session under the real name
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
                z.writestr("manifest.json", text)
                if data:
                    buf = io.BytesIO()
                    np.savez(buf, **data)
                    z.writestr("data.npz", buf.getvalue())
    except (OSError, InvalidParameter) as exc:
        raise SessionError(f"could not write {path}: {exc}") from None
    return path


def load_session(path) -> tuple[str, dict, dict[str, np.ndarray], dict]:
    """``(workspace key, state, arrays, manifest)`` of a session file, or :class:`SessionError`."""
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise SessionError(f"{name}: no such file")
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "manifest.json" not in names:
                raise SessionError(f"{name} is not a session file (no manifest.json inside)")
            try:
                manifest = json.loads(z.read("manifest.json").decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise SessionError(f"{name}: the manifest is corrupt ({exc})") from None
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise SessionError(f"{name} is not a GPU Science Explorer session")
            ver = manifest.get("version")
            if not isinstance(ver, int) or ver < 1:
                raise SessionError(f"{name}: unknown session version {ver!r}")
            if ver > VERSION:
                raise SessionError(f"{name} was saved by a newer version of the app (session format "
                                   f"{ver}; this version reads up to {VERSION}): update the app to open it")
            ws, state = manifest.get("workspace"), manifest.get("state")
            if not isinstance(ws, str) or not isinstance(state, dict):
                raise SessionError(f"{name}: the manifest names no workspace or state")
            wanted = manifest.get("arrays", [])
            arrays: dict[str, np.ndarray] = {}
            if wanted:
                if "data.npz" not in names:
                    raise SessionError(f"{name}: the data part (data.npz) is missing")
                with np.load(io.BytesIO(z.read("data.npz")), allow_pickle=False) as npz:
                    missing = set(wanted) - set(npz.files)
                    if missing:
                        raise SessionError(f"{name}: array(s) {', '.join(sorted(missing))} missing from the data")
                    arrays = {k: npz[k] for k in wanted}
    except SessionError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise SessionError(f"{name} is not a session file or is damaged ({exc})") from None
    except (OSError, ValueError, KeyError) as exc:
        raise SessionError(f"{name}: cannot read the session ({exc})") from None
    return ws, state, arrays, manifest
