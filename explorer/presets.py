"""Named presets of each workspace, read from ``resources/presets/<workspace_key>.json``.

A preset file is ``{"presets": [{"name", "description", "paper", "params", "params_cpu"?}, …]}``:
``params`` are the workspace's own inputs, ``params_cpu`` overrides some of them on the NumPy
backend (smaller sizes, so every preset starts in seconds there too).  The main window lists them
in its Presets menu (keys 1–9) and calls the workspace's ``apply_preset(preset)`` with the
preset *resolved* for the current backend (``params_cpu`` already merged into ``params``).
Qt-free, so the tests and the headless tools can read them too.

**User presets** (*Presets ▸ Save current as preset…*) are kept in the same format, one file per
workspace, in :func:`user_preset_dir` (``kernels.appdirs.data_dir("presets")``): the menu lists them
after the shipped ones.  The workspace gives the ``params`` to save through its ``preset_params()``
hook (capability ``user_presets``, :mod:`explorer.workspace_api`), exactly what its
``apply_preset`` takes back.  :func:`export_presets` / :func:`import_presets` move them between
machines as the same JSON.
"""
from __future__ import annotations

import json
from pathlib import Path

from kernels import appdirs, filegate
from kernels.errors import ExplorerError
from kernels.fileio import write_text
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


def user_preset_dir() -> Path:
    """Where user presets are kept (``GSE_DATA_DIR`` overrides the platform's data folder)."""
    return appdirs.data_dir("presets")


def load_user_presets(key: str, directory: Path | None = None) -> list[dict]:
    """The user's presets of workspace ``key`` ([] when none); :class:`PresetError` for a bad file."""
    return load_presets(key, directory or user_preset_dir())


def _dump(presets: list[dict]) -> str:
    return json.dumps({"presets": presets}, indent=2, ensure_ascii=False) + "\n"


def save_user_presets(key: str, presets: list[dict], directory: Path | None = None) -> Path:
    """Write ``presets`` (validated) as the user's presets of ``key``; the path written."""
    presets = validate({"presets": presets}, f"user presets of {key}")
    folder = Path(directory or user_preset_dir())
    folder.mkdir(parents=True, exist_ok=True)
    return write_text(preset_path(key, folder), _dump(presets))


def make_preset(name: str, params: dict, description: str = "", paper: str = "user") -> dict:
    """A preset of the file format from a workspace's ``preset_params()``."""
    name = " ".join(str(name).split())
    if not name:
        raise PresetError("a preset needs a name")
    if not isinstance(params, dict):
        raise PresetError("a preset's params must be a dict")
    json.dumps(params)                      # JSON-able, or TypeError here rather than in the file
    return {"name": name, "description": description or f"saved by the user: {name}", "paper": paper,
            "params": params}


def add_user_preset(key: str, preset: dict, directory: Path | None = None) -> list[dict]:
    """Add ``preset`` to the user's presets of ``key`` (one of the same name is replaced)."""
    presets = [p for p in load_user_presets(key, directory) if p["name"] != preset["name"]]
    presets.append(preset)
    save_user_presets(key, presets, directory)
    return presets


def delete_user_preset(key: str, name: str, directory: Path | None = None) -> bool:
    presets = load_user_presets(key, directory)
    keep = [p for p in presets if p["name"] != name]
    if len(keep) == len(presets):
        return False
    save_user_presets(key, keep, directory)
    return True


def export_presets(path, presets: list[dict]) -> Path:
    """Write ``presets`` as a preset file at ``path`` (.json); the path written."""
    validate({"presets": presets}, "presets to export")
    p = Path(path)
    if not p.suffix:
        p = p.with_suffix(".json")
    return write_text(p, _dump(presets))


def import_presets(key: str, path, directory: Path | None = None) -> list[str]:
    """Add the presets of the file ``path`` to the user's presets of ``key`` (same names are
    replaced); their names.  :class:`PresetError` for a bad file, and nothing changes."""
    path = Path(path)
    try:
        doc = filegate.read_json(path, filegate.JSON_FILE, path.name)
    except ExplorerError as exc:
        raise PresetError(str(exc)) from None
    except Exception as exc:      # noqa: BLE001 — the contract: only PresetError leaves
        raise PresetError(f"cannot read {path.name}: {type(exc).__name__}") from None
    new = validate(doc, path.name)
    names = {p["name"] for p in new}
    presets = [p for p in load_user_presets(key, directory) if p["name"] not in names] + new
    save_user_presets(key, presets, directory)
    return [p["name"] for p in new]


def resolved(preset: dict, is_gpu: bool) -> dict:
    """A copy of ``preset`` whose ``params`` include the ``params_cpu`` overrides on the CPU."""
    p = dict(preset)
    params = dict(preset.get("params", {}))
    if not is_gpu:
        params.update(preset.get("params_cpu", {}))
    p["params"] = params
    return p
