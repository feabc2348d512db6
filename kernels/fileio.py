"""Output files that are whole or absent: checked before work, written to a temp file, renamed.

Every file the project writes (CLI outputs, GUI exports, sessions, fields, CSVs) goes through
:func:`atomic_write`: the data go to a temporary file in the destination's own folder, which
replaces the destination with :func:`os.replace` only once everything was written.  An
interrupted or failing write (an exception, Ctrl+C, a full disk) leaves any earlier file at the
path untouched and no temporary file behind.  A writer killed outright (SIGKILL) cannot clean up: the
next write to the same path removes such stale ``.part`` files first (:func:`clean_stale_parts`:
older than this process, not locked by a live writer), and an exit hook removes any this process
still holds.

:func:`check_output_path` is the check a command runs on each output path *before* its work
starts: the folder exists and is writable, the path is not a folder, and the extension is one the
writer understands (nothing is renamed silently: the path reported is the path written).
Qt-free.
"""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Iterable, Iterator

from .errors import InvalidParameter


def _process_start() -> float:
    """When this process started (seconds since the epoch; Linux /proc), else the time of this import."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            ticks = int(fh.read(4096).rsplit(b")", 1)[1].split()[19])      # start, clock ticks after boot
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read(256).split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()


#: the start of this process: temporary files last written before it belong to earlier, dead writers
PROCESS_START = _process_start()
_CREATED: set[str] = set()          # temporary files this process made and has not yet renamed or removed


def _remove_created() -> None:
    for tmp in list(_CREATED):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _CREATED.clear()


atexit.register(_remove_created)


def part_pattern(p: Path) -> re.Pattern:
    """The names :func:`atomic_path` gives the temporary files of a write to ``p``."""
    return re.compile(re.escape(f".{p.stem}.") + r"[A-Za-z0-9_]{8}" + re.escape(f".part{p.suffix}") + "$")


def clean_stale_parts(path) -> list[Path]:
    """Remove the temporary files that interrupted writes to ``path`` left beside it (a writer killed
    by SIGKILL cannot remove its own): ``.<stem>.XXXXXXXX.part<suffix>`` siblings last modified before
    this process started and not locked by a writer still running.  Returns the paths removed."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    pat = part_pattern(p)
    try:
        names = [n for n in os.listdir(folder) if pat.match(n)]
    except OSError:
        return []
    removed = []
    for n in names:
        q = folder / n
        try:
            fd = os.open(q, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_mtime >= PROCESS_START:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)        # held by a live writer: not stale
            os.unlink(q)
            removed.append(q)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def check_output_path(path, extensions: Iterable[str] | None = None, what: str = "output") -> Path:
    """Return ``Path(path)`` if a file can be written there, else raise :class:`InvalidParameter`.

    ``extensions`` (lower case, with the dot, e.g. ``(".png", ".tif")``) restricts the suffix;
    ``None`` accepts any name.  Nothing is created or changed.
    """
    if path is None or str(path).strip() == "":
        raise InvalidParameter(f"the {what} path is empty")
    p = Path(os.path.expanduser(str(path)))
    if extensions is not None:
        exts = tuple(e.lower() for e in extensions)
        if p.suffix.lower() not in exts:
            got = f"'{p.suffix}'" if p.suffix else "no extension"
            raise InvalidParameter(f"{what} {p}: {got}; use {', '.join(exts)}")
    if p.is_dir():
        raise InvalidParameter(f"{what} {p} is a folder, not a file")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidParameter(f"{what} {p}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidParameter(f"{what} {p}: the folder {folder} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise InvalidParameter(f"{what} {p} exists and is not writable")
    return p


@contextlib.contextmanager
def atomic_path(path, require_data: bool | None = None) -> Iterator[Path]:
    """A temporary file name beside ``path`` for writers that want a *name* (imageio, networkx,
    numpy); it replaces ``path`` when the block ends without an exception and is removed otherwise.

    The temporary name keeps the destination's suffix, so writers that choose the format by
    extension choose the same one.  With ``require_data`` (default: unless the suffix is a text
    format that may legitimately be empty) an empty result is an :class:`OSError`: a writer that
    wrote nothing, or wrote to another name, must not truncate the destination.
    """
    p = Path(path)
    clean_stale_parts(p)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=f".part{p.suffix}", dir=str(p.parent) or ".")
    _CREATED.add(tmp)
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)          # marks the file as in use (clean_stale_parts)
    if require_data is None:
        require_data = p.suffix.lower() not in (".csv", ".txt", ".edges", ".edgelist")
    try:
        yield Path(tmp)
        if require_data and os.path.getsize(tmp) == 0:
            raise OSError(f"nothing was written to {p}")
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, _default_mode(p))
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)
        _CREATED.discard(tmp)


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb", **open_kw) -> Iterator:
    """Open a temporary file beside ``path`` for writing; rename it onto ``path`` on success.

    ``mode`` is ``"wb"`` or ``"w"`` (text, UTF-8 unless ``encoding`` is given; ``open_kw`` such as
    ``newline=""`` go to :func:`open`).  On any exception, ``KeyboardInterrupt`` included, the
    temporary file is removed, ``path`` keeps its earlier content, and the exception propagates.
    The new file gets the permissions a plain ``open`` would have given it.
    """
    if mode not in ("w", "wb"):
        raise ValueError("atomic_write writes whole files: mode must be 'w' or 'wb'")
    if "b" not in mode:
        open_kw.setdefault("encoding", "utf-8")
    with atomic_path(path, require_data=False) as tmp, open(tmp, mode, **open_kw) as fh:
        yield fh


def write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path written."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path written."""
    with atomic_write(path, "w") as fh:
        fh.write(text)
    return Path(path)


def _default_mode(p: Path) -> int:
    """The mode of an existing file at ``p``, else 0o666 less the process umask."""
    try:
        return os.stat(p).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
