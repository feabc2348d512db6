"""Versions and paths of this installation, for Help ▸ About and ``main.py --info`` (one source
for both).  Qt-free: versions of Qt-side packages are read from their installed metadata
(``importlib.metadata``), never by importing them; CuPy, the CUDA driver and runtime and the GPU
are asked only through a :class:`kernels.backend.Backend` that already uses them (``gpu``), or
reported as not in use.
"""
from __future__ import annotations

import platform
import sys
from importlib import metadata

from . import appdirs

#: (shown name, distribution names to try) of every package the About box lists
PACKAGES = (("PyQt6", ("PyQt6",)), ("Qt", ("PyQt6-Qt6",)), ("VisPy", ("vispy",)),
            ("pyqtgraph", ("pyqtgraph",)), ("NumPy", ("numpy",)), ("SciPy", ("scipy",)),
            ("CuPy", ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy")))


def dist_version(*names: str) -> str:
    """The installed version of the first distribution of ``names`` that is installed, or ""."""
    for n in names:
        try:
            return metadata.version(n)
        except metadata.PackageNotFoundError:
            continue
    return ""


def app_version() -> str:
    return dist_version("gpu-science-explorer", "gpu_science_explorer") or "unknown (not installed)"


def _cuda_versions(backend) -> list[tuple[str, str]]:
    """CUDA driver / runtime versions and the GPU of a GPU backend ([] on the CPU backend)."""
    if backend is None or not backend.is_gpu:
        return []
    xp = backend.xp
    out = []

    def fmt(v: int) -> str:
        return f"{v // 1000}.{(v % 1000) // 10}"
    for name, fn in (("CUDA driver", "driverGetVersion"), ("CUDA runtime", "runtimeGetVersion")):
        try:
            out.append((name, fmt(int(getattr(xp.cuda.runtime, fn)()))))
        except Exception as exc:      # noqa: BLE001 — a broken driver is reported, never raised
            out.append((name, f"unavailable ({type(exc).__name__})"))
    cc = ".".join(map(str, backend.compute_capability or ()))
    out.append(("GPU", f"{backend.device_name} (CC {cc})"))
    return out


def versions(backend=None) -> list[tuple[str, str]]:
    """(name, version) of the app, Python, Qt/PyQt, VisPy, pyqtgraph, NumPy, SciPy, CuPy, and —
    with a GPU ``backend`` — the CUDA driver and runtime and the GPU; "not installed" / "not in
    use" where so."""
    rows = [("GPU Science Explorer", app_version()),
            ("Python", f"{platform.python_version()} ({sys.executable})")]
    for shown, dists in PACKAGES:
        rows.append((shown, dist_version(*dists) or "not installed"))
    cuda = _cuda_versions(backend)
    if cuda:
        rows += cuda
    else:
        rows += [("CUDA driver", "not in use"), ("CUDA runtime", "not in use"), ("GPU", "none in use")]
    rows.append(("Platform", platform.platform()))
    return rows


def paths() -> list[tuple[str, str]]:
    """(what, path) of the settings file, the user data folder (user presets) and the cache."""
    return [("Settings", str(appdirs.settings_file())), ("User presets", str(appdirs.data_dir("presets"))),
            ("Cache", str(appdirs.cache_dir()))]


def info(backend=None) -> dict:
    """Everything ``--info`` prints: {"backend": …, "versions": {…}, "paths": {…}}."""
    return {"backend": backend.describe() if backend is not None else "not selected",
            "versions": dict(versions(backend)), "paths": dict(paths())}


def info_text(backend=None) -> str:
    """:func:`info` as aligned text lines (``--info``, and the About box's *Copy*)."""
    d = info(backend)
    rows = [("Backend", d["backend"])] + list(d["versions"].items()) + list(d["paths"].items())
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
