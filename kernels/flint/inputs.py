"""Limits on model files, checked before a model file is parsed (native, SBML, CellML).

* Size: at most :func:`max_model_bytes` — :data:`DEFAULT_MAX_MODEL_MB` MiB unless the environment
  variable ``GSE_MAX_MODEL_MB`` (or the CLI's ``--max-model-mb``) says otherwise.  The largest
  shipped model (LR-100, SBML) is 1.9 MB.
* XML files (SBML, CellML), read once by expat (iterative, no recursion) before libsbml/libcellml
  see them: element nesting at most :data:`MAX_XML_DEPTH` (libsbml and libcellml recurse on MathML
  and crash the process — a segmentation fault — at a depth of ~10⁵), and no single comment or text
  run longer than :data:`MAX_XML_TEXT` bytes (libsbml reads those in quadratic time: 8 MB takes
  3 s, 300 MB hours).

Each refusal is an :class:`~kernels.errors.InvalidParameter` naming the file and the limit.
"""
from __future__ import annotations

import os
import xml.parsers.expat as expat
from pathlib import Path

from ..errors import InvalidParameter

ENV_MAX_MODEL_MB = "GSE_MAX_MODEL_MB"
DEFAULT_MAX_MODEL_MB = 64
MAX_XML_DEPTH = 1000
MAX_XML_TEXT = 8 << 20


def max_model_bytes() -> int:
    """The model file size limit in bytes (``GSE_MAX_MODEL_MB`` MiB, default 64 MiB)."""
    raw = os.environ.get(ENV_MAX_MODEL_MB, "").strip()
    if not raw:
        return DEFAULT_MAX_MODEL_MB << 20
    try:
        mb = float(raw)
    except ValueError:
        raise InvalidParameter(f"{ENV_MAX_MODEL_MB}={raw!r} is not a number of MiB") from None
    if not mb > 0 or mb != mb or mb == float("inf"):
        raise InvalidParameter(f"{ENV_MAX_MODEL_MB}={raw!r} must be a positive number of MiB")
    return int(mb * (1 << 20))


class _TooDeep(Exception):
    pass


def _scan_xml(data: bytes, label: str) -> None:
    """Refuse deep nesting and huge text runs; malformed XML is left to the model reader to report."""
    st = {"depth": 0, "run": 0}

    def start(_name, _attrs):
        st["depth"] += 1
        st["run"] = 0
        if st["depth"] > MAX_XML_DEPTH:
            raise _TooDeep(f"{label}: XML elements nested more than {MAX_XML_DEPTH} deep (line "
                           f"{p.CurrentLineNumber}); refused before parsing")

    def end(_name):
        st["depth"] -= 1
        st["run"] = 0

    def text(chunk):
        st["run"] += len(chunk)
        if st["run"] > MAX_XML_TEXT:
            raise _TooDeep(f"{label}: a text run of more than {MAX_XML_TEXT >> 20} MiB (line "
                           f"{p.CurrentLineNumber}); refused: the SBML reader takes quadratic time on those")

    def comment(body):
        if len(body) > MAX_XML_TEXT:
            raise _TooDeep(f"{label}: a comment of {len(body) / 2**20:.0f} MiB (line {p.CurrentLineNumber}); "
                           f"refused above {MAX_XML_TEXT >> 20} MiB: the SBML reader takes quadratic time on those")

    p = expat.ParserCreate()
    p.StartElementHandler, p.EndElementHandler = start, end
    p.CharacterDataHandler, p.CommentHandler = text, comment
    try:
        p.Parse(data, True)
    except _TooDeep as exc:
        raise InvalidParameter(str(exc)) from None
    except (expat.ExpatError, ValueError):
        return


def check_model_file(path, label: str | None = None) -> Path:
    """``Path(path)`` if the file may be read as a model, else InvalidParameter (see module doc)."""
    p = Path(path)
    label = label or p.name
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InvalidParameter(f"cannot read {p}: {exc.strerror or exc}") from None
    limit = max_model_bytes()
    if size > limit:
        raise InvalidParameter(f"{label} is {size / 2**20:.1f} MiB; model files above {limit / 2**20:.0f} MiB are "
                               f"refused (raise the limit with --max-model-mb or {ENV_MAX_MODEL_MB})")
    if p.suffix.lower() in (".xml", ".sbml", ".cellml") or _looks_xml(p):
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise InvalidParameter(f"cannot read {p}: {exc.strerror or exc}") from None
        _scan_xml(data, label)
    return p


def _looks_xml(p: Path) -> bool:
    try:
        with open(p, "rb") as fh:
            return fh.read(400).lstrip().startswith(b"<")
    except OSError:
        return False
