"""The file gate: every file the project reads (CLI and GUI) passes through here before a parser sees it.

Contract — each refusal is one :class:`~kernels.errors.InvalidParameter` naming the file and the limit:

* **Regular files only.**  The path is opened (symlinks followed) without blocking and the open
  descriptor is ``fstat``-ed: a FIFO, a device (``/dev/zero``, also through a symlink), a socket
  or a folder is refused before one byte is read, so nothing hangs and nothing reads forever.
* **A size limit per kind**, read from the file system before reading (:data:`KINDS`: the
  constants live there and only there).  Each limit is raised by its environment variable
  (``GSE_MAX_<KIND>_MB``, MiB) and, where a command has one, by a flag (``--max-model-mb``).
* **Bounded reads**: at most limit + 1 bytes are read; a file that grew past its limit while
  being read is refused too (:func:`open_text` streams with the same bound).
* **XML** — every document handed to an XML library (libsbml, libcellml, networkx' GraphML
  reader), whatever its suffix or first bytes (:func:`read_xml`, :func:`check_xml`): a UTF-8/16/32
  byte-order mark is stripped (the text is decoded and given to the library as UTF-8), then one
  streaming pass of expat (iterative: no recursion, constant memory per level) refuses a DOCTYPE
  that declares entities (XXE, "billion laughs"), elements nested deeper than
  :data:`MAX_XML_DEPTH` (libsbml and libcellml recurse on MathML and crash the process at a depth
  of ~10⁵) and text runs or comments longer than :data:`MAX_XML_TEXT` (libsbml reads those in
  quadratic time).  A document expat finds malformed is still measured (a tag counter) and then
  left to the library to report.
* **Archives** (``.npz``, ``.gsession``: zip) — :func:`check_archive` reads each member's
  *declared* uncompressed size (``ZipInfo.file_size``) before anything is inflated and refuses a
  member above the ``archive-member`` limit; an encrypted member and a compression method other
  than stored / deflate are refused with their own message.  (Python's zip reader never inflates
  past the declared size, so the declared size bounds the memory a member can take.)
* **Confinement** (:func:`confined`): a file named *inside* a model (SBML ``comp`` external model
  definitions, CellML imports, paths in a session) resolves inside the folder of the file that
  names it, unless the caller allows outside references (CLI ``--allow-outside-references``, or
  ``GSE_ALLOW_OUTSIDE_REFERENCES=1`` for worker processes).

Qt-free; standard library only.
"""
from __future__ import annotations

import codecs
import contextlib
import errno
import io
import json
import os
import re
import stat
import xml.parsers.expat as expat
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .errors import InvalidParameter

#: deepest element nesting of an XML document (the shipped models nest < 30 deep)
MAX_XML_DEPTH = 1000
#: longest single text run or comment of an XML document, bytes
MAX_XML_TEXT = 8 << 20
#: most members of one archive
MAX_ARCHIVE_MEMBERS = 10_000
#: the environment variable that allows references outside a model's folder in worker processes
ENV_ALLOW_OUTSIDE = "GSE_ALLOW_OUTSIDE_REFERENCES"
#: the compression methods an archive member may use
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}


@dataclass(frozen=True)
class FileKind:
    """One kind of input file and its size limit (``default_mb`` MiB unless ``env`` says otherwise)."""
    name: str
    what: str
    default_mb: float
    env: str
    flag: str = ""

    def limit(self) -> int:
        """The limit in bytes: ``$env`` MiB when set (a positive finite number), else ``default_mb``."""
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return int(self.default_mb * (1 << 20))
        try:
            mb = float(raw)
        except ValueError:
            raise InvalidParameter(f"{self.env}={raw[:40]!r} is not a number of MiB") from None
        if not (0 < mb < 1 << 40):
            raise InvalidParameter(f"{self.env}={raw[:40]!r} must be a positive number of MiB below 2^40")
        return int(mb * (1 << 20))

    def how_to_raise(self) -> str:
        return f"raise the limit with {self.flag} or {self.env}" if self.flag else f"raise the limit with {self.env}=MiB"


MODEL = FileKind("model", "model file", 64, "GSE_MAX_MODEL_MB", "--max-model-mb")
GRAPH = FileKind("graph", "edge list", 4096, "GSE_MAX_GRAPH_MB")
GRAPHML = FileKind("graphml", "GraphML file", 512, "GSE_MAX_GRAPHML_MB")
FIELD = FileKind("field", "field file", 16384, "GSE_MAX_FIELD_MB")
SESSION = FileKind("session", "session file", 16384, "GSE_MAX_SESSION_MB")
MEMBER = FileKind("archive-member", "archive member (uncompressed)", 1536, "GSE_MAX_ARCHIVE_MEMBER_MB")
JSON_FILE = FileKind("json", "JSON file", 16, "GSE_MAX_JSON_MB")
CSV = FileKind("csv", "CSV file", 1024, "GSE_MAX_CSV_MB")
#: every kind, by name (the README's "File limits" list is this table)
KINDS = {k.name: k for k in (MODEL, GRAPH, GRAPHML, FIELD, SESSION, MEMBER, JSON_FILE, CSV)}


# ------------------------------------------------------------------------------ opening
def _refuse_type(mode: int, label: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise InvalidParameter(f"cannot read {label}: {os.strerror(errno.EISDIR)}, not a file")
    what = ( "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    raise InvalidParameter(f"cannot read {label}: it is {what}, not a file (only regular files are read)")


def _open_fd(path, kind: FileKind, label: str) -> tuple[int, int]:
    """(descriptor, size) of the regular file ``path`` within ``kind``'s limit; see the module doc."""
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError, TypeError) as exc:
        raise InvalidParameter(f"cannot read {label}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        st = os.fstat(fd)
        _refuse_type(st.st_mode, label)
        limit = kind.limit()
        if st.st_size > limit:
            raise InvalidParameter(f"{label} is {st.st_size / 2**20:.1f} MiB; {kind.what}s above "
                                   f"{limit / 2**20:g} MiB are refused ({kind.how_to_raise()})")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def check_file(path, kind: FileKind, label: str | None = None) -> Path:
    """``Path(path)`` when it is a regular file within ``kind``'s size limit (nothing read)."""
    label = label or os.path.basename(os.fspath(path))
    fd, _ = _open_fd(path, kind, label)
    os.close(fd)
    return Path(path)


def _too_big(kind: FileKind, label: str) -> InvalidParameter:
    return InvalidParameter(f"{label} grew past the {kind.what} limit of {kind.limit() / 2**20:g} MiB while "
                            f"being read ({kind.how_to_raise()})")


class _BoundedReader(io.RawIOBase):
    """A regular file read through its descriptor that refuses to deliver more than ``limit`` bytes."""

    def __init__(self, fd: int, kind: FileKind, label: str):
        super().__init__()
        self._f = io.FileIO(fd, "rb", closefd=True)
        self._left = kind.limit() + 1
        self._kind, self._label = kind, label

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        view = memoryview(b)
        n = self._f.readinto(view[:max(0, min(len(view), self._left))]) or 0
        self._left -= n
        if self._left <= 0:
            raise _too_big(self._kind, self._label)
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


def open_binary(path, kind: FileKind, label: str | None = None):
    """A seekable binary file object on the checked regular file (for zip and .npy readers)."""
    label = label or os.path.basename(os.fspath(path))
    fd, _ = _open_fd(path, kind, label)
    return os.fdopen(fd, "rb")


def open_text(path, kind: FileKind, label: str | None = None, encoding: str = "utf-8",
              newline: str | None = None) -> io.TextIOWrapper:
    """A text stream on the checked regular file that reads at most ``kind``'s limit (line by line
    reading stays bounded by it, whatever the file holds); ``encoding`` and ``newline`` as for
    :func:`open` (``newline=""`` for the csv module)."""
    label = label or os.path.basename(os.fspath(path))
    fd, _ = _open_fd(path, kind, label)
    return io.TextIOWrapper(io.BufferedReader(_BoundedReader(fd, kind, label)), encoding=encoding,
                            errors="strict", newline=newline)


def read_bytes(path, kind: FileKind, label: str | None = None) -> bytes:
    """The whole checked file, read with a bound (see the module doc)."""
    label = label or os.path.basename(os.fspath(path))
    fd, _ = _open_fd(path, kind, label)
    limit = kind.limit()
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InvalidParameter(f"cannot read {label}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise _too_big(kind, label)
    return data


def read_text(path, kind: FileKind, label: str | None = None) -> str:
    """The checked file as UTF-8 text (a UTF-8 byte-order mark is dropped)."""
    label = label or os.path.basename(os.fspath(path))
    try:
        return read_bytes(path, kind, label).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidParameter(f"cannot read {label}: not UTF-8 text (byte {exc.start})") from None


def loads_json(text: str | bytes, label: str):
    """``json.loads`` whose every failure (syntax, deep nesting, huge numbers) is one InvalidParameter."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidParameter(f"{label} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") \
            from None
    except RecursionError:
        raise InvalidParameter(f"{label}: the JSON is nested too deeply to read") from None
    except (ValueError, TypeError, MemoryError) as exc:
        raise InvalidParameter(f"{label}: unreadable JSON ({' '.join(str(exc).split())[:120]})") from None


def read_json(path, kind: FileKind = JSON_FILE, label: str | None = None):
    """The checked file parsed as JSON (:func:`loads_json`)."""
    label = label or os.path.basename(os.fspath(path))
    return loads_json(read_text(path, kind, label), label)


# ------------------------------------------------------------------------------ XML
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_NO_BOM = ((b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"), (b"\x00<", "utf-16-be"),
           (b"<\x00", "utf-16-le"))
_DECL_ENCODING = re.compile(r"""^(\s*<\?xml[^>]*?encoding\s*=\s*)(["'])[^"']*\2""")
_TAG = re.compile(rb"<(/?)([A-Za-z_][^\s/>]*)[^>]*?(/?)>|<!ENTITY", re.S)


def xml_text(data: bytes, label: str) -> str:
    """The document ``data`` as text: byte-order mark (UTF-8/16/32) stripped, decoded, and its XML
    declaration's encoding (if any) set to UTF-8, the encoding the libraries are given."""
    enc = None
    for bom, name in _BOMS:
        if data.startswith(bom):
            data, enc = data[len(bom):], name
            break
    if enc is None:
        enc = next((name for head, name in _NO_BOM if data.startswith(head)), "utf-8")
    try:
        text = data.decode(enc)
    except UnicodeDecodeError as exc:
        raise InvalidParameter(f"cannot read {label}: not {enc.upper()} text (byte {exc.start})") from None
    return _DECL_ENCODING.sub(r"\1\2UTF-8\2", text, count=1)


class _Refused(Exception):
    pass


_PASSED: dict[tuple[int, int], None] = {}    # (hash, length) of the last documents that passed check_xml
_PASSED_KEEP = 16


def check_xml(text: str, label: str) -> str:
    """Refuse entity declarations, nesting deeper than :data:`MAX_XML_DEPTH` and text runs above
    :data:`MAX_XML_TEXT` in the XML document ``text`` (see the module doc); returns ``text``.
    A document that passed moments ago (the same text, e.g. a file the loader read and the reader
    is now given) is not scanned again."""
    key = (hash(text), len(text))
    if key in _PASSED:
        return text
    _scan_xml(text, label)
    _PASSED[key] = None
    while len(_PASSED) > _PASSED_KEEP:
        del _PASSED[next(iter(_PASSED))]
    return text


def _scan_xml(text: str, label: str) -> None:
    st = {"depth": 0, "run": 0}
    p = expat.ParserCreate()
    p.buffer_text, p.buffer_size = True, 1 << 16

    def where() -> str:
        return f"line {p.CurrentLineNumber}"

    def start(_name, _attrs):
        st["depth"] += 1
        st["run"] = 0
        if st["depth"] > MAX_XML_DEPTH:
            raise _Refused(f"{label}: XML elements nested more than {MAX_XML_DEPTH} deep ({where()}); refused "
                           "before parsing")

    def end(_name):
        st["depth"] -= 1
        st["run"] = 0

    def chars(chunk):
        st["run"] += len(chunk)
        if st["run"] > MAX_XML_TEXT:
            raise _Refused(f"{label}: a text run of more than {MAX_XML_TEXT >> 20} MiB ({where()}); refused: the "
                           "SBML reader takes quadratic time on those")

    def comment(body):
        if len(body) > MAX_XML_TEXT:
            raise _Refused(f"{label}: a comment of {len(body) / 2**20:.0f} MiB ({where()}); refused above "
                           f"{MAX_XML_TEXT >> 20} MiB: the SBML reader takes quadratic time on those")

    def entity(name, *_rest):
        raise _Refused(f"{label}: the DOCTYPE declares the entity {name!r} ({where()}); XML entity declarations "
                       "are refused (they can expand without bound or read other files)")

    p.StartElementHandler, p.EndElementHandler = start, end
    p.CharacterDataHandler, p.CommentHandler = chars, comment
    p.EntityDeclHandler = entity
    try:
        p.Parse(text, True)
    except _Refused as exc:
        raise InvalidParameter(str(exc)) from None
    except (expat.ExpatError, ValueError, RecursionError):
        _count_tags(text.encode("utf-8", "replace"), label)      # malformed: measured anyway, then left to the reader


def _count_tags(data: bytes, label: str) -> None:
    """The depth check of a document expat could not read, by counting tags (comments and CDATA are
    not special-cased: a conservative over-estimate at worst)."""
    depth = 0
    for m in _TAG.finditer(data):
        if m.group(0) == b"<!ENTITY":
            raise InvalidParameter(f"{label}: the document declares an XML entity; entity declarations are refused")
        if m.group(1):
            depth -= 1
        elif not m.group(3):
            depth += 1
            if depth > MAX_XML_DEPTH:
                raise InvalidParameter(f"{label}: XML elements nested more than {MAX_XML_DEPTH} deep; refused "
                                       "before parsing")


def read_xml(path, kind: FileKind = MODEL, label: str | None = None) -> str:
    """The checked XML file as text, BOM stripped and checked by :func:`check_xml`."""
    label = label or os.path.basename(os.fspath(path))
    return check_xml(xml_text(read_bytes(path, kind, label), label), label)


# ------------------------------------------------------------------------------ archives
def check_archive(zf: zipfile.ZipFile, label: str) -> zipfile.ZipFile:
    """Refuse an archive whose members are encrypted, use an unsupported compression, or declare an
    uncompressed size above the ``archive-member`` limit (before anything is inflated)."""
    infos = zf.infolist()
    if len(infos) > MAX_ARCHIVE_MEMBERS:
        raise InvalidParameter(f"{label}: {len(infos):,} archive members; at most {MAX_ARCHIVE_MEMBERS:,} are read")
    limit = MEMBER.limit()
    for info in infos:
        name = info.filename[:80]
        if info.flag_bits & 0x1:
            raise InvalidParameter(f"{label}: the archive member '{name}' is encrypted; encrypted archives are "
                                   "not read")
        if info.compress_type not in ZIP_METHODS:
            raise InvalidParameter(f"{label}: the archive member '{name}' uses compression method "
                                   f"{info.compress_type}; only {' and '.join(ZIP_METHODS.values())} are read")
        if info.file_size > limit:
            raise InvalidParameter(f"{label}: the archive member '{name}' declares {info.file_size / 2**20:,.1f} MiB "
                                   f"uncompressed; members above {limit / 2**20:g} MiB are refused "
                                   f"({MEMBER.how_to_raise()})")
    return zf


@contextlib.contextmanager
def open_archive(source, kind: FileKind, label: str | None = None,
                 damaged: str = "is damaged or not an archive") -> Iterator[zipfile.ZipFile]:
    """A checked :class:`zipfile.ZipFile` on the file ``source`` (a path through the gate) or on
    ``bytes`` already read; a damaged archive is one InvalidParameter: ``label``, ``damaged``, the cause."""
    label = label or (os.path.basename(os.fspath(source)) if not isinstance(source, bytes) else "archive")
    fh = io.BytesIO(source) if isinstance(source, bytes) else open_binary(source, kind, label)
    try:
        try:
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            raise InvalidParameter(f"{label} {damaged} ({' '.join(str(exc).split())[:120]})") from None
        with zf:
            yield check_archive(zf, label)
    finally:
        fh.close()


def read_member(zf: zipfile.ZipFile, name: str, label: str) -> bytes:
    """One member of a checked archive, read with the member bound; damage is one InvalidParameter."""
    limit = MEMBER.limit()
    try:
        with zf.open(name) as fh:
            data = fh.read(limit + 1)
    except KeyError:
        raise InvalidParameter(f"{label}: no member '{name}'") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise InvalidParameter(f"{label}: the archive member '{name}' is damaged "
                               f"({' '.join(str(exc).split())[:120]})") from None
    if len(data) > limit:
        raise InvalidParameter(f"{label}: the archive member '{name}' is larger than it declares")
    return data


# ------------------------------------------------------------------------------ confinement
def allow_outside_default(allow_outside: bool | None) -> bool:
    """``allow_outside``, or (None) whether ``GSE_ALLOW_OUTSIDE_REFERENCES`` is set to 1 / true / yes."""
    if allow_outside is not None:
        return bool(allow_outside)
    return os.environ.get(ENV_ALLOW_OUTSIDE, "").strip().lower() in ("1", "true", "yes")


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")


def confined(ref: str, base_dir, root, label: str, what: str, allow_outside: bool | None = None) -> Path:
    """The file named by ``ref`` inside a model (relative to ``base_dir``, the folder of the file
    that names it), resolved (symlinks followed).  Refused: URLs other than ``file:``, and — unless
    outside references are allowed — a file outside ``root`` (the top model's folder)."""
    ref = str(ref).strip()
    m = _SCHEME.match(ref)
    if m and m.group(1).lower() != "file":
        raise InvalidParameter(f"{label}: {what} '{ref[:120]}' is a URL ({m.group(1)}:); only files are read")
    if m:
        ref = re.sub(r"^file:(//localhost|//)?", "", ref, flags=re.I)
    if not ref:
        raise InvalidParameter(f"{label}: {what} names no file")
    target = Path(os.path.join(os.fspath(base_dir), ref)).resolve()
    top = Path(root).resolve()
    if not allow_outside_default(allow_outside) and not target.is_relative_to(top):
        raise InvalidParameter(f"{label}: {what} '{ref[:120]}' resolves to {target}, outside the model's folder "
                               f"{top}; refused (--allow-outside-references reads it)")
    return target


def follow_references(doc, base_dir, label: str, what: str, names_in, load, allow_outside: bool | None = None,
                      max_files: int = 64) -> list[str]:
    """The files that ``doc`` names and, recursively, the files those name — each checked before the
    model library resolves them: ``names_in(document)`` lists a document's references, each must
    resolve inside ``base_dir`` (the top model's folder; :func:`confined`), is read through the
    gate (:func:`read_xml`) and parsed by ``load(text, name)`` for its own references; at most
    ``max_files`` files.  A reference to a file that does not exist is skipped: the library reports
    it in its own words.  Returns the resolved paths, in the order first met."""
    root = Path(base_dir).resolve()
    todo = [(doc, root)]
    seen: list[Path] = []
    while todo:
        d, base = todo.pop(0)
        for ref in names_in(d):
            path = confined(ref, base, root, label, what, allow_outside)
            if path in seen or not path.exists():
                continue
            if len(seen) >= max_files:
                raise InvalidParameter(f"{label}: more than {max_files} files named through {what}s")
            text = read_xml(path, MODEL, path.name)
            seen.append(path)
            todo.append((load(text, path.name), path.parent))
    return [str(p) for p in seen]
