"""Named presets of each workspace, read from ``resources/presets/<workspace_key>.json``.

A preset file is ``{"presets": [{"name", "description", "paper", "params", "params_cpu"?}, …]}``:
``params`` are the workspace's own inputs, ``params_cpu`` overrides some of them on the NumPy
backend (smaller sizes, so every preset starts in seconds there too).  The main window lists them
in its Presets menu (keys 1–9) and calls the workspace's ``apply_preset(preset)`` with the
preset *resolved* for the current backend (``params_cpu`` already merged into ``params``).
Qt-free, so the tests and the headless tools can read them too.
"""
from __future__ import annotations

from pathlib import Path

from kernels import filegate
from kernels.errors import ExplorerError
from resources import location

PRESET_DIR = location("presets")        # importlib.resources: the checkout, an editable install or a wheel
REQUIRED = {"name": str, "description": str, "paper": str, "params": dict}
OPTIONAL = {"params_cpu": dict}


class PresetError(ExplorerError):
    """A preset file that cannot be read or does not follow the format."""


def preset_path(key: str, directory: Path | None = None) -> Path:
    return Path(directory or PRESET_DIR) / f"{key}.json"


def validate(doc, source: str = "preset file") -> list[dict]:
    """The list of presets in ``doc``, or :class:`PresetError` naming the first problem."""
    if not isinstance(doc, dict) or not isinstance(doc.get("presets"), list):
        raise PresetError(f'{source}: expected {{"presets": [ … ]}} at the top level')
    out, names = [], set()
    for i, p in enumerate(doc["presets"], 1):
        where = f"{source}: preset {i}"
        if not isinstance(p, dict):
            raise PresetError(f"{where} is not an object")
        for k, typ in REQUIRED.items():
            if k not in p:
                raise PresetError(f"{where} ({p.get('name', '?')!r}) has no {k!r}")
            if not isinstance(p[k], typ):
                raise PresetError(f"{where} ({p.get('name', '?')!r}): {k!r} must be a {typ.__name__}")
        for k, typ in OPTIONAL.items():
            if k in p and not isinstance(p[k], typ):
                raise PresetError(f"{where} ({p['name']!r}): {k!r} must be a {typ.__name__}")
        unknown = set(p) - set(REQUIRED) - set(OPTIONAL)
        if unknown:
            raise PresetError(f"{where} ({p['name']!r}): unknown key(s) {', '.join(sorted(unknown))}")
        if not p["name"].strip():
            raise PresetError(f"{where}: empty name")
        if p["name"] in names:
            raise PresetError(f"{where}: duplicate name {p['name']!r}")
        names.add(p["name"])
        out.append(p)
    return out


def load_presets(key: str, directory: Path | None = None) -> list[dict]:
    """Presets of workspace ``key`` ([] when it ships none); :class:`PresetError` — the only error it
    raises — for a bad file (read through :mod:`kernels.filegate`: a regular file within the JSON
    size limit, nesting bounded)."""
    path = preset_path(key, directory)
    if not path.exists():
        return []
    try:
        doc = filegate.read_json(path, filegate.JSON_FILE, path.name)     # regular file, size, depth
        return validate(doc, path.name)
    except PresetError:
        raise
    except ExplorerError as exc:
        raise PresetError(str(exc)) from None
    except (RecursionError, MemoryError, Exception) as exc:      # the contract: only PresetError leaves
        raise PresetError(f"cannot read {path.name}: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}") \
            from None


def resolved(preset: dict, is_gpu: bool) -> dict:
    """A copy of ``preset`` whose ``params`` include the ``params_cpu`` overrides on the CPU."""
    p = dict(preset)
    params = dict(preset.get("params", {}))
    if not is_gpu:
        params.update(preset.get("params_cpu", {}))
    p["params"] = params
    return p
