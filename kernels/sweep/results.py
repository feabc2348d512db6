"""The sweep's result file: a CSV that grows one finished point at a time and survives a killed client.

Layout::

    # gse-sweep {"task": "ch", "fixed": {…}, "points": 52, "points_sha256": "…"}
    point,mean,seed,…outputs…,error,worker,task_seconds
    0,-0.6,1,…

The first line is the sweep's identity (:func:`kernels.sweep.points.identity`); the second the
column names.  The header is written whole (``fileio.write_text``: temp file + rename), then each
finished point's rows are appended with **one** ``os.write`` on an ``O_APPEND`` descriptor followed
by ``fsync``: a client killed at any moment leaves a file whose complete lines are complete rows.
A torn last line (power loss in the middle of a write) is cut off on resume and its point run
again.  ``--resume`` reads the identity back and refuses a file from a different sweep; it skips
the points whose ``point`` index is already in the file.  An exclusive ``flock`` keeps two
sweeps from appending to one file at the same time.  The file is read through the file gate
(:mod:`kernels.filegate`: a regular file within the CSV size limit, bounded reads).  Qt-free.
"""
from __future__ import annotations

import csv
import fcntl
import io
import json
import math
import os
from pathlib import Path

from .. import filegate
from ..errors import InvalidParameter
from ..fileio import check_output_path, write_text

MAGIC = "# gse-sweep "
#: longest header line read (the identity JSON and the column names are a few KiB)
MAX_HEADER_LINE = 1 << 20
MODES = ("new", "resume", "overwrite")


def format_value(v) -> str:
    """A cell: floats by ``repr`` (they read back bit for bit), None as empty, the rest by ``str``."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):      # NumPy scalars
        return format_value(v.item())
    return str(v)


def parse_value(s: str):
    """A cell read back: int, float, True/False, None for empty, else the string."""
    if s == "":
        return None
    if s in ("True", "False"):
        return s == "True"
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def _csv_line(values) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()


def read_header(path) -> tuple[dict, list[str]]:
    """(identity, columns) of a sweep result file; InvalidParameter if it is not one."""
    p = Path(path)
    try:
        with filegate.open_text(p, filegate.CSV, str(p)) as fh:      # regular file, size, bounded lines
            first = fh.readline(MAX_HEADER_LINE)
            second = fh.readline(MAX_HEADER_LINE)
    except OSError as exc:
        raise InvalidParameter(f"cannot read {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InvalidParameter(f"{p} is not a sweep result file (not UTF-8 text)") from None
    if not first.startswith(MAGIC) or not second.endswith("\n"):
        raise InvalidParameter(f"{p} is not a sweep result file (no '{MAGIC.strip()}' header)")
    try:
        ident = filegate.loads_json(first[len(MAGIC):], f"{p}: the sweep header")
    except InvalidParameter:
        raise InvalidParameter(f"{p}: the sweep header is damaged") from None
    if not isinstance(ident, dict):
        raise InvalidParameter(f"{p}: the sweep header is damaged (its identity is not a JSON object)")
    try:
        columns = next(csv.reader([second]))
    except csv.Error as exc:
        raise InvalidParameter(f"{p}: the column names are damaged ({exc})") from None
    return ident, columns


def read_rows(path) -> tuple[dict, list[str], list[dict]]:
    """(identity, columns, rows) of a result file; rows are dicts of typed values (``parse_value``).
    A torn last line (no newline) is left out."""
    ident, columns = read_header(path)
    text = filegate.read_text(path, filegate.CSV, str(path))
    lines = text.split("\n")[2:]
    if lines and lines[-1] != "":
        lines = lines[:-1]                       # torn last line: not a row
    rows = []
    reader = csv.reader(ln + "\n" for ln in lines if ln)
    try:
        for rec in reader:
            if len(rec) != len(columns):
                continue
            rows.append({c: parse_value(v) for c, v in zip(columns, rec)})
    except csv.Error as exc:
        raise InvalidParameter(f"{path}: row {reader.line_num} is damaged ({exc}); choose another file, or "
                               "--overwrite to start the sweep anew") from None
    return ident, columns, rows


def describe_difference(mine: dict, theirs: dict) -> str:
    """What differs between two sweep identities, in words."""
    if mine.get("task") != theirs.get("task"):
        return f"task {theirs.get('task')!r}, this sweep is {mine.get('task')!r}"
    a, b = mine.get("fixed") or {}, theirs.get("fixed") or {}
    if not (isinstance(a, dict) and isinstance(b, dict)):          # a damaged header: any JSON value
        if a != b:
            return f"fixed parameters {str(b)[:80]} there, {str(a)[:80]} here"
    else:
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                return f"{k} = {b.get(k)!r} there, {a.get(k)!r} here"
    if mine.get("points") != theirs.get("points"):
        return f"{theirs.get('points')} points there, {mine.get('points')} here"
    return "a different list of points"


class ResultFile:
    """Append-only result file of one sweep (see the module docstring).

    ``mode``: ``"new"`` (refuse an existing file), ``"overwrite"`` (replace it) or ``"resume"``
    (continue it: same identity required; ``done`` holds the point indices already there).
    ``open()`` checks and prepares the file before any work; ``append(rows)`` writes one point's
    rows at once; ``close()`` releases it."""

    def __init__(self, path, identity: dict, columns: list[str], mode: str = "new"):
        if mode not in MODES:
            raise InvalidParameter(f"result file mode must be one of {', '.join(MODES)} (got {mode!r})")
        self.path = check_output_path(path, (".csv",), "sweep result file")
        self.identity = json.loads(json.dumps(identity))
        self.columns = list(columns)
        self.mode = mode
        self.done: set[int] = set()
        self.rows_before = 0
        self._fd: int | None = None

    # ---------------------------------------------------------------- opening
    def check(self) -> "ResultFile":
        """Refuse a file this sweep must not write (an existing file in mode "new"; a different
        sweep's file to resume) and, for resume, read the points already done.  Writes nothing."""
        p = self.path
        self.done, self.rows_before = set(), 0
        if self.mode == "new" and p.exists():
            raise InvalidParameter(f"{p} exists: --resume continues that sweep, --overwrite replaces it "
                                   "(or choose another file)")
        if self.mode == "resume" and p.exists():
            ident, columns = read_header(p)
            if ident != self.identity:
                raise InvalidParameter(f"{p} holds the results of a different sweep "
                                       f"({describe_difference(self.identity, ident)}); choose another file, "
                                       "or --overwrite to start it anew")
            if columns != self.columns:
                raise InvalidParameter(f"{p}: its columns differ from this sweep's (written by another version?); "
                                       "choose another file, or --overwrite to start it anew")
            _ident, _cols, rows = read_rows(p)
            self.done = {r["point"] for r in rows if isinstance(r.get("point"), int)}
            self.rows_before = len(rows)
        return self

    def open(self) -> "ResultFile":
        """``check()``, then create the file with its header (or, resuming, cut a torn last line)
        and hold it open for appending."""
        self.check()
        p = self.path
        if self.mode == "resume" and p.exists():
            fd = self._lock(os.open(p, os.O_RDWR))
            size = os.fstat(fd).st_size
            data = os.pread(fd, size, 0) if size else b""
            end = data.rfind(b"\n") + 1
            if end < size:                               # a torn last line: cut it, that point runs again
                os.ftruncate(fd, end)
                os.fsync(fd)
            os.close(fd)
        else:
            header = MAGIC + json.dumps(self.identity, sort_keys=True) + "\n" + _csv_line(self.columns)
            write_text(p, header)                        # whole or absent
        self._fd = self._lock(os.open(p, os.O_WRONLY | os.O_APPEND))
        return self

    def _lock(self, fd: int) -> int:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InvalidParameter(f"{self.path} is being written by another sweep right now") from None
        return fd

    # ---------------------------------------------------------------- writing
    def append(self, rows: list[dict]) -> None:
        """Append one point's rows with a single write, then fsync."""
        if self._fd is None:
            raise RuntimeError("ResultFile.append before open()")
        text = "".join(_csv_line([format_value(r.get(c)) for c in self.columns]) for r in rows)
        data = text.encode("utf-8")
        n = os.write(self._fd, data)
        while n < len(data):                             # a short write (signals, full pipes): finish it
            n += os.write(self._fd, data[n:])
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
