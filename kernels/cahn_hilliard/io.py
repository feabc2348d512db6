"""Save and load a Cahn–Hilliard field with its parameters (``.npz``; no GUI code).

File layout: ``phi`` (the field, 2D square or 3D cubic array), ``params_json``
(the :class:`CHParams` as JSON), and optional ``t`` / ``steps`` scalars.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import InvalidParameter
from .params import CHParams

FORMAT_VERSION = 1


def save_field(path, phi, params: CHParams, t: float = 0.0, steps: int = 0) -> Path:
    """Write ``phi`` (host or device array already copied to host) and ``params`` to ``path``."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(".npz")
    phi = np.asarray(phi)
    np.savez_compressed(
        path,
        phi=phi,
        params_json=np.array(json.dumps(params.to_dict())),
        t=np.array(float(t)),
        steps=np.array(int(steps)),
        format_version=np.array(FORMAT_VERSION),
    )
    return path


def load_field(path) -> tuple[np.ndarray, CHParams | None, dict]:
    """Read a field file: returns (phi, params or None, extras {"t", "steps"}).

    Raises InvalidParameter with a readable message for files that are not
    field files or hold a field the simulation cannot use.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if "phi" not in z.files:
                raise InvalidParameter(f"{path.name} holds no field 'phi' (found: {', '.join(z.files)})")
            phi = np.array(z["phi"])
            params = None
            if "params_json" in z.files:
                try:
                    params = CHParams.from_dict(json.loads(str(z["params_json"])))
                except (ValueError, TypeError) as exc:
                    raise InvalidParameter(f"{path.name}: unreadable parameters ({exc})") from exc
            extras = {k: z[k].item() for k in ("t", "steps") if k in z.files}
    except OSError as exc:
        raise InvalidParameter(f"cannot read {path}: {exc}") from exc
    except (ValueError, KeyError) as exc:  # not an npz / corrupt
        if isinstance(exc, InvalidParameter):
            raise
        raise InvalidParameter(f"{path.name} is not a field file ({exc})") from exc
    if phi.ndim not in (2, 3) or len(set(phi.shape)) != 1:
        raise InvalidParameter(f"{path.name}: the field must be square (2D) or cubic (3D), got shape {phi.shape}")
    if not np.issubdtype(phi.dtype, np.floating):
        phi = phi.astype(np.float64)
    if not np.isfinite(phi).all():
        raise InvalidParameter(f"{path.name}: the field contains NaN or Inf values")
    return phi, params, extras
