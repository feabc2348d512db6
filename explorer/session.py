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
import os
import zipfile
import zlib
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from kernels import filegate
from kernels.errors import ExplorerError, InvalidParameter
from kernels.fileio import atomic_path, check_output_path
from resources import location

#: the app's shipped files (models, presets): a session may always name those
SHIPPED = location("").resolve()
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


def load_session(path, allow_outside: bool | None = False) -> tuple[str, dict, dict[str, np.ndarray], dict]:
    """``(workspace key, state, arrays, manifest)`` of a session file, or :class:`SessionError` —
    the only error it raises, whatever the file holds (bombs, deep nesting, encrypted or damaged
    members, memory).  Reading goes through the file gate (:mod:`kernels.filegate`): a regular file
    within the session size limit; the archive's and the inner ``data.npz``'s members' declared
    sizes, encryption and compression checked before inflating; the manifest's JSON parsed with
    its depth bounded.  Paths in the state (keys ``path`` or ``*_path``) must name files inside the
    session file's folder unless ``allow_outside``; they are replaced by their resolved form and
    listed in ``manifest["files_referenced"]``."""
    path = Path(path)
    name = path.name
    if not path.exists():
        raise SessionError(f"{name}: no such file")
    try:
        return _read_session(path, name, allow_outside)
    except SessionError:
        raise
    except ExplorerError as exc:
        raise SessionError(str(exc)) from None
    except RecursionError:
        raise SessionError(f"{name}: the session is nested too deeply to read") from None
    except MemoryError:
        raise SessionError(f"{name}: the session is too large to read into memory (or damaged)") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
        raise SessionError(f"{name} is not a session file or is damaged ({exc})") from None
    except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
        raise SessionError(f"{name}: cannot read the session ({exc})") from None
    except Exception as exc:                     # the contract: only SessionError leaves this function
        raise SessionError(f"{name}: cannot read the session ({type(exc).__name__}: {exc})") from None


def _read_session(path: Path, name: str, allow_outside: bool | None):
    with filegate.open_archive(path, filegate.SESSION, name, "is not a session file or is damaged") as z:
        names = set(z.namelist())
        if "manifest.json" not in names:
            raise SessionError(f"{name} is not a session file (no manifest.json inside)")
        try:
            manifest = filegate.loads_json(filegate.read_member(z, "manifest.json", name).decode("utf-8"),
                                           f"{name}: the manifest")
        except (UnicodeDecodeError, InvalidParameter) as exc:
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
        manifest["files_referenced"] = _confine_paths(state, path, name, allow_outside)
        wanted = manifest.get("arrays", [])
        if not isinstance(wanted, list) or not all(isinstance(k, str) for k in wanted):
            raise SessionError(f"{name}: the manifest's array list is damaged")
        arrays: dict[str, np.ndarray] = {}
        if wanted:
            if "data.npz" not in names:
                raise SessionError(f"{name}: the data part (data.npz) is missing")
            raw = filegate.read_member(z, "data.npz", name)
    if wanted:
        label = f"{name}: data.npz"
        with filegate.open_archive(raw, filegate.SESSION, label) as inner:     # members checked before inflating
            missing = set(wanted) - {n[:-4] for n in inner.namelist() if n.endswith(".npy")}
            if missing:
                raise SessionError(f"{name}: array(s) {', '.join(sorted(missing))} missing from the data")
            for k in wanted:
                arrays[k] = np.lib.format.read_array(io.BytesIO(filegate.read_member(inner, f"{k}.npy", label)),
                                                     allow_pickle=False)
    return ws, state, arrays, manifest


def _confine_paths(state, session: Path, name: str, allow_outside: bool | None) -> list[str]:
    """Resolve the state's file paths (keys ``path`` / ``*_path``, any depth) inside the session's
    folder (or the app's own shipped files, :data:`SHIPPED`), in place; the resolved paths, in order."""
    out: list[str] = []
    todo = [state]
    while todo:
        d = todo.pop()
        items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
        for k, v in items:
            if isinstance(v, (dict, list)):
                todo.append(v)
            elif isinstance(k, str) and (k == "path" or k.endswith("_path")) and isinstance(v, str) and v.strip():
                shipped = Path(os.path.join(session.parent, v)).resolve().is_relative_to(SHIPPED)
                p = filegate.confined(v, session.parent, session.parent, name, f"the file '{k}'",
                                      True if shipped else allow_outside)
                d[k] = str(p)
                out.append(str(p))
    return out
