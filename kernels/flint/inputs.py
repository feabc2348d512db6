"""Limits on model files, checked before a model file is parsed (native, SBML, CellML).

The checks are the file gate's (:mod:`kernels.filegate`, where the limits are defined):

* Size: at most :func:`max_model_bytes` — :data:`DEFAULT_MAX_MODEL_MB` MiB unless the environment
  variable ``GSE_MAX_MODEL_MB`` (or the CLI's ``--max-model-mb``) says otherwise.  The largest
  shipped model (LR-100, SBML) is 1.9 MB.  Regular files only (no FIFO, device or folder).
* Every file that is not a native ``.flint`` text — whatever its suffix or first bytes, a
  byte-order mark included — is checked as XML before libsbml/libcellml see it: element nesting at
  most :data:`MAX_XML_DEPTH` (libsbml and libcellml recurse on MathML and crash the process — a
  segmentation fault — at a depth of ~10⁵), no entity declarations, and no single comment or text
  run longer than :data:`MAX_XML_TEXT` bytes (libsbml reads those in quadratic time).

Each refusal is an :class:`~kernels.errors.InvalidParameter` naming the file and the limit.
"""
from __future__ import annotations

from pathlib import Path

from .. import filegate
from ..errors import InvalidParameter
from ..filegate import MAX_XML_DEPTH, MAX_XML_TEXT, MODEL

__all__ = ["ENV_MAX_MODEL_MB", "DEFAULT_MAX_MODEL_MB", "MAX_XML_DEPTH", "MAX_XML_TEXT", "max_model_bytes",
           "check_model_file", "read_model_text"]

ENV_MAX_MODEL_MB = MODEL.env
DEFAULT_MAX_MODEL_MB = MODEL.default_mb


def max_model_bytes() -> int:
    """The model file size limit in bytes (``GSE_MAX_MODEL_MB`` MiB, default 64 MiB)."""
    return MODEL.limit()


def read_model_text(path, label: str | None = None) -> str:
    """The model file's text through the gate: a native ``.flint`` file as UTF-8, anything else
    as XML (BOM stripped, depth / entities / text runs checked)."""
    p = Path(path)
    label = label or p.name
    data = filegate.read_bytes(p, MODEL, label)
    if p.suffix.lower() == ".flint" and not data.lstrip()[:1] in (b"<", b"\xef", b"\xfe", b"\xff", b"\x00"):
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidParameter(f"cannot read {label}: not UTF-8 text (byte {exc.start})") from None
    return filegate.check_xml(filegate.xml_text(data, label), label)


def check_model_file(path, label: str | None = None) -> Path:
    """``Path(path)`` if the file may be read as a model, else InvalidParameter (see module doc)."""
    read_model_text(path, label)
    return Path(path)
