"""Array backend: CuPy when importable and a CUDA device exists, else NumPy.

Choose explicitly with ``select("cpu"|"gpu"|"auto")`` (the CLI's ``--backend``)
or the environment variable ``GSE_BACKEND``.  A forced ``gpu`` without a GPU
raises :class:`BackendUnavailable`; ``auto`` falls back to NumPy with a notice.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional (imported when the GPU backend is asked for).
import os
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from .errors import BackendUnavailable

ENV_VAR = "GSE_BACKEND"


@dataclass
class Backend:
    """The array module in use and facts about the device behind it."""

    name: str                      # "gpu" or "cpu"
    xp: ModuleType                 # cupy or numpy
    device_name: str = "CPU (NumPy)"
    compute_capability: tuple[int, int] | None = None
    notice: str = ""               # why we fell back, if we did
    props: dict = field(default_factory=dict)

    @property
    def is_gpu(self) -> bool:
        return self.name == "gpu"

    def to_numpy(self, a) -> np.ndarray:
        """Copy an array of this backend to host memory."""
        if self.is_gpu:
            return self.xp.asnumpy(a)
        return np.asarray(a)

    def asarray(self, a, dtype=None):
        return self.xp.asarray(a, dtype=dtype)

    def synchronize(self) -> None:
        if self.is_gpu:
            self.xp.cuda.Device().synchronize()

    def free_memory(self) -> int:
        """Bytes that can still be allocated on this backend's device."""
        if self.is_gpu:
            free, _total = self.xp.cuda.runtime.memGetInfo()
            pool = self.xp.get_default_memory_pool()
            return int(free + pool.free_bytes())
        return host_available_memory()

    def describe(self) -> str:
        if self.is_gpu:
            cc = ".".join(map(str, self.compute_capability or ()))
            return f"GPU: {self.device_name} (CC {cc}, CuPy {self.xp.__version__})"
        return "CPU: NumPy " + np.__version__ + (f" — {self.notice}" if self.notice else "")


def host_available_memory() -> int:
    """Available host memory in bytes (MemAvailable on Linux, else a guess)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def gpu_backend() -> Backend:
    """A CuPy backend on the current CUDA device, without changing the selection (:func:`select`);
    BackendUnavailable when CuPy or a device is missing."""
    try:
        import cupy as cp
    except Exception as exc:  # ImportError, or a broken CUDA install
        raise BackendUnavailable(f"CuPy is not usable ({exc.__class__.__name__}: {exc}); "
                                 "install the 'gpu' extra for GPU support") from exc
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise BackendUnavailable(f"no CUDA device available ({exc})") from exc
    if n < 1:
        raise BackendUnavailable("no CUDA device available")
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    cc = (int(props["major"]), int(props["minor"]))
    return Backend("gpu", cp, name, cc, props=props)


def cpu_backend(notice: str = "") -> Backend:
    """A NumPy backend, without changing the selection (:func:`select`)."""
    return Backend("cpu", np, notice=notice)


_current: Backend | None = None


def select(choice: str | None = None) -> Backend:
    """Pick and remember the backend. ``choice``: "auto" (default), "gpu" or "cpu"."""
    global _current
    choice = (choice or os.environ.get(ENV_VAR) or "auto").lower()
    if choice not in ("auto", "gpu", "cpu"):
        raise BackendUnavailable(f"unknown backend {choice!r}: use auto, gpu or cpu")
    if choice == "cpu":
        _current = cpu_backend()
    elif choice == "gpu":
        _current = gpu_backend()
    else:
        try:
            _current = gpu_backend()
        except BackendUnavailable as exc:
            _current = cpu_backend(notice=f"no GPU: {exc}")
    return _current


def make(choice: str) -> Backend:
    """A "cpu" or "gpu" backend without selecting it (BackendUnavailable when there is no GPU)."""
    if choice == "gpu":
        return gpu_backend()
    if choice == "cpu":
        return cpu_backend()
    raise BackendUnavailable(f"unknown backend {choice!r}: use gpu or cpu")


def current() -> Backend:
    """The selected backend (selects ``auto``/``GSE_BACKEND`` on first use)."""
    return _current if _current is not None else select()


def gpu_available() -> tuple[bool, str]:
    """(True, device) when a CUDA GPU with CuPy is usable, else (False, reason)."""
    try:
        b = gpu_backend()
    except BackendUnavailable as exc:
        return False, str(exc)
    return True, b.device_name


def array_module(a) -> ModuleType:
    """cupy for CuPy arrays, numpy otherwise."""
    mod = type(a).__module__
    if mod.startswith("cupy"):
        import cupy
        return cupy
    return np
