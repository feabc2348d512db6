"""Save and load a Cahn–Hilliard field with its parameters (``.npz``; no GUI code).

File layout: ``phi`` (the field, 2D square or 3D cubic array), ``params_json``
(the :class:`CHParams` as JSON), and optional ``t`` / ``steps`` scalars.  A bare ``.npy`` array
(2D square or 3D cubic) is read as a field without parameters.

Reading checks the array header (shape and dtype) before any data are read: a file that claims
more cells than :data:`~kernels.cahn_hilliard.params.MAX_CELLS`, more bytes than the host has, or
more bytes than it holds (truncated), and complex, string or object arrays, are refused with
:class:`InvalidParameter` / :class:`GridTooLarge` naming the file.  Writing goes through
:func:`kernels.fileio.atomic_write`: an interrupted save leaves any earlier file untouched.
"""
from __future__ import annotations

import json
import math
import tokenize
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import filegate
from ..backend import host_available_memory
from ..errors import GridTooLarge, InvalidParameter
from ..fileio import atomic_write
from .params import MAX_CELLS, CHParams

FORMAT_VERSION = 1
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"
#: largest ``params_json`` member read (bytes): the parameters are a few hundred bytes
MAX_PARAMS_BYTES = 1 << 20


@dataclass(frozen=True)
class FieldHeader:
    """What a field file holds, read from the array header alone (no data read)."""
    shape: tuple
    dtype: np.dtype

    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(self.shape[0]) if self.shape else 0

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def save_field(path, phi, params: CHParams, t: float = 0.0, steps: int = 0) -> Path:
    """Write ``phi`` (host or device array already copied to host) and ``params`` to ``path``
    (a path without the ``.npz`` suffix gets it); returns the path written."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(".npz")
    phi = np.asarray(phi)
    if np.iscomplexobj(phi) or phi.dtype.kind not in "fiu":
        raise InvalidParameter(f"a field must hold real numbers, got {phi.dtype}")
    with atomic_write(path, "wb") as fh:
        np.savez_compressed(
            fh,
            phi=phi,
            params_json=np.array(json.dumps(params.to_dict())),
            t=np.array(float(t)),
            steps=np.array(int(steps)),
            format_version=np.array(FORMAT_VERSION),
        )
    return path


def _read_header(fh, label: str) -> tuple[tuple, np.dtype, int]:
    """(shape, dtype, header length) of the .npy stream ``fh`` (positioned at its start)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except (ValueError, OSError, EOFError, zlib.error, zipfile.BadZipFile, SyntaxError, TypeError, KeyError,
            IndexError, tokenize.TokenError) as exc:
        raise InvalidParameter(f"{label}: not a readable array ({_short(exc)})") from None
    return tuple(int(s) for s in shape), np.dtype(dtype), fh.tell()


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "…"


def _amount(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 1 << 30 else f"{nbytes:,} bytes"


def _check_header(shape: tuple, dtype: np.dtype, label: str, memory: bool = True) -> None:
    """Refuse what cannot be a field before reading it: kind, shape, cell count, host memory
    (``memory``)."""
    if dtype.kind == "c":
        raise InvalidParameter(f"{label}: the field is complex ({dtype}); Cahn–Hilliard fields are real")
    if dtype.kind not in "fiub" or dtype.hasobject:
        raise InvalidParameter(f"{label}: the field holds {dtype} values, not numbers")
    if len(shape) not in (2, 3) or len(set(shape)) != 1:
        raise InvalidParameter(f"{label}: the field must be square (2D) or cubic (3D), got shape {shape}")
    cells = math.prod(shape)
    if cells > MAX_CELLS[len(shape)]:
        raise InvalidParameter(f"{label}: a {'×'.join(map(str, shape))} field exceeds the supported maximum "
                               f"of {MAX_CELLS[len(shape)]:,} cells")
    if not memory:
        return
    need = cells * (dtype.itemsize + 8)              # the data and their float copy
    avail = host_available_memory()
    if need > 0.8 * avail:
        raise GridTooLarge(f"{label}: the {'×'.join(map(str, shape))} field needs about {need / 2**30:.1f} GiB "
                           f"of host memory to read; {avail / 2**30:.1f} GiB are available")


def _kind(path: Path) -> str:
    """'npz' or 'npy' by the file's first bytes; refuses anything else."""
    if not path.exists():
        raise InvalidParameter(f"cannot read {path}: no such file")
    try:
        with filegate.open_binary(path, filegate.FIELD, path.name) as fh:     # regular file, size limit
            magic = fh.read(6)
    except OSError as exc:
        raise InvalidParameter(f"cannot read {path}: {exc.strerror or exc}") from None
    if not magic:
        raise InvalidParameter(f"{path.name} is empty, not a field file")
    if magic.startswith(NPY_MAGIC):
        return "npy"
    if not magic.startswith(ZIP_MAGIC):
        raise InvalidParameter(f"{path.name} is not a field file (.npz from Save field / --save-field, or .npy)")
    return "npz"


def _zip(path: Path):
    """The archive through the file gate: members' declared sizes, encryption and compression
    checked before anything is inflated (:func:`kernels.filegate.check_archive`)."""
    try:
        zf = zipfile.ZipFile(filegate.open_binary(path, filegate.FIELD, path.name))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise InvalidParameter(f"{path.name} is not a readable field file: damaged or truncated ({_short(exc)})") \
            from None
    try:
        return filegate.check_archive(zf, path.name)
    except InvalidParameter:
        zf.fp.close()
        raise


def _member(zf: zipfile.ZipFile, name: str, label: str):
    """``zf.open(name)``; a damaged member (local header, compression) is an InvalidParameter."""
    try:
        return zf.open(name)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error) as exc:
        raise InvalidParameter(f"{label}: '{name[:-4]}' is damaged ({_short(exc)})") from None


def read_field_header(path) -> FieldHeader:
    """Shape and dtype of the field in ``path`` (checked as :func:`load_field` checks them), without
    reading its data."""
    path = Path(path)
    if _kind(path) == "npy":
        with filegate.open_binary(path, filegate.FIELD, path.name) as fh:
            shape, dtype, head = _read_header(fh, path.name)
        held, what = path.stat().st_size - head, path.name
    else:
        with _zip(path) as zf, zf.fp:
            if "phi.npy" not in zf.namelist():
                names = ", ".join(n[:-4] if n.endswith(".npy") else n for n in zf.namelist()[:8])
                raise InvalidParameter(f"{path.name} holds no field 'phi' (found: {names or 'nothing'})")
            with _member(zf, "phi.npy", path.name) as fh:
                shape, dtype, head = _read_header(fh, path.name)
            held, what = zf.getinfo("phi.npy").file_size - head, f"{path.name}: 'phi'"
    _check_header(shape, dtype, path.name, memory=False)
    promised = math.prod(shape) * dtype.itemsize
    if held < promised:                              # before the memory check: a damaged header is not "too large"
        raise InvalidParameter(f"{what} is truncated or its header is damaged: the header promises "
                               f"{_amount(promised)}, the file holds {_amount(max(0, held))}")
    _check_header(shape, dtype, path.name)
    return FieldHeader(shape, dtype)


def _read_member(zf: zipfile.ZipFile, name: str, label: str, max_bytes: int | None = None) -> np.ndarray:
    """One array of the archive, its header checked against the member's real size first."""
    info = zf.getinfo(name)
    with _member(zf, name, label) as fh:
        shape, dtype, head = _read_header(fh, label)
        if dtype.hasobject:
            raise InvalidParameter(f"{label}: '{name[:-4]}' holds Python objects, which are not read")
        nbytes = math.prod(shape) * dtype.itemsize
        if max_bytes is not None and nbytes > max_bytes:
            raise InvalidParameter(f"{label}: '{name[:-4]}' is implausibly large ({nbytes:,} bytes)")
        if info.file_size < head + nbytes:
            raise InvalidParameter(f"{label}: '{name[:-4]}' is truncated: the header promises {nbytes:,} bytes, "
                                   f"the file holds {max(0, info.file_size - head):,}")
    try:
        with zf.open(info) as fh:
            return np.lib.format.read_array(fh, allow_pickle=False)
    except (ValueError, OSError, EOFError, zlib.error, zipfile.BadZipFile, tokenize.TokenError) as exc:
        raise InvalidParameter(f"{label}: '{name[:-4]}' is damaged ({_short(exc)})") from None


def load_field(path) -> tuple[np.ndarray, CHParams | None, dict]:
    """Read a field file: returns (phi, params or None, extras {"t", "steps"}).

    Raises InvalidParameter (GridTooLarge for a field the host cannot hold) with a readable
    message for files that are not field files or hold a field the simulation cannot use.
    """
    path = Path(path)
    header = read_field_header(path)
    params, extras = None, {}
    if _kind(path) == "npy":
        try:
            with filegate.open_binary(path, filegate.FIELD, path.name) as fh:
                phi = np.lib.format.read_array(fh, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise InvalidParameter(f"{path.name} is damaged ({_short(exc)})") from None
    else:
        with _zip(path) as zf, zf.fp:
            phi = _read_member(zf, "phi.npy", path.name)
            names = zf.namelist()
            if "params_json.npy" in names:
                raw = _read_member(zf, "params_json.npy", path.name, MAX_PARAMS_BYTES)
                params = _parse_params(raw, path.name)
            for k in ("t", "steps"):
                if f"{k}.npy" in names:
                    v = _read_member(zf, f"{k}.npy", path.name, 64)
                    if v.shape == () and v.dtype.kind in "fiu" and math.isfinite(float(v)):
                        extras[k] = v.item()
    if phi.dtype.kind != "f":
        phi = phi.astype(np.float64)
    if not np.isfinite(phi).all():
        raise InvalidParameter(f"{path.name}: the field contains NaN or Inf values")
    return phi, params, extras


def _parse_params(raw: np.ndarray, label: str) -> CHParams:
    if raw.shape != () or raw.dtype.kind not in "US":
        raise InvalidParameter(f"{label}: unreadable parameters (params_json is not one JSON text)")
    try:
        d = json.loads(str(raw.item() if raw.dtype.kind == "U" else raw.item().decode("utf-8")))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InvalidParameter(f"{label}: unreadable parameters ({_short(exc)})") from None
    if not isinstance(d, dict):
        raise InvalidParameter(f"{label}: unreadable parameters (params_json holds a {type(d).__name__}, "
                               "not an object)")
    try:
        return CHParams.from_dict(d)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidParameter(f"{label}: unreadable parameters ({_short(exc)})") from None
