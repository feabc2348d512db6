"""The GPU layer: one place where every system compiles, caches, launches and times its CUDA.

It sits below the compute systems (Cahn–Hilliard, Graphs, Occupancy, Flint, RNG) and imports
none of them::

    from kernels import gpu
    dev = gpu.device("cuda")          # the GPU through CuPy (the current CUDA device)
    dev = gpu.device("host")          # the same CUDA source compiled for the CPU (emulated)
    dev = gpu.device_for(backend)     # the device behind an app backend (kernels.backend)
    dev.xp                            # cupy or numpy: the arrays kernels of this device take
    mod = dev.module(files("kernels.graphs") / "cuda" / "bfs.cu",   # text, path or resource
                     name_expressions=["bfs_k7<int>"], options=("-std=c++17",), system="graphs")
    k = mod.function("bfs_k7<int>")   # compiled once per device; recorded in kernels.launches
    dev.launch(k, grid, block, args, shared_mem=0, cooperative=False)
    dev.synchronize()
    t = gpu.timing.time_calls(lambda: dev.launch(...), repeat=20, warmup=1, device=dev).median
    occ, regs, limiter = gpu.launch_occupancy(k, 256, 0)          # CUDA only

Contract:

* **Memoization per device.** ``module(...)`` / ``function(name)`` compile a module the first time
  it is used on a device and never again there; the key is (device kind, device id, source text,
  options, name expressions, cooperative), as ``cupy.memoize(for_each_device=True)`` keys CuPy's
  own kernels.  ``gpu.device("cuda")`` follows the current CuPy device (``with
  cupy.cuda.Device(i):`` picks it); ``gpu.device("cuda", i)`` is pinned to GPU ``i`` and ``with
  dev:`` makes it current.  A file source adds its folder as an include directory (``-I``).
* **Launch registry.** Every function taken from a module is recorded in :mod:`kernels.launches`
  as ``"<prefix> <label or name>"`` (prefix: ``module(prefix=…)``, default the ``system``) with its
  threads per block and dynamic shared memory; ``dev.launch`` updates the entry when the shape
  changes.  Tools that inspect kernels read only the registry.
* **Launching.** ``dev.launch(k, grid, block, args, shared_mem, cooperative)`` runs on the
  current stream of the current device (CuPy's ``RawKernel.__call__``; a module compiled with
  ``cooperative=True`` launches cooperatively).  ``dev.potential_block(k, smem)``,
  ``dev.active_blocks(k, block, smem)``: the CUDA occupancy API.  ``dev.stream()``, ``dev.on(s)``,
  ``dev.record()``, ``dev.wait(ev)``: streams and events.  ``dev.sms``: multiprocessors.
* **Host device.** ``dev.emulated`` is True: the same source, compiled by the host C++ compiler
  after a CUDA prelude (:mod:`kernels.gpu.host`), with NumPy arrays.  Until it is importable,
  ``gpu.device("host")`` raises :class:`~kernels.errors.BackendUnavailable`.
* **Timing.** :mod:`kernels.gpu.timing` — CUDA events on a CUDA device, ``perf_counter`` on the host.
* **Occupancy.** :func:`launch_occupancy` and the calculator (:mod:`kernels.gpu.calculator`,
  :mod:`kernels.gpu.specs`: NVIDIA's rules per compute capability) — the hardware model that the
  Occupancy workspace presents and that any system may ask about its own kernels.

CuPy is imported only when a CUDA device is asked for; the layer imports on machines without it.
"""
from __future__ import annotations

# Imports inside functions: keep `--help` fast (the CLI loads this layer; the occupancy calculator loads
# at the first launch_occupancy) and CuPy optional.
import importlib
import threading

from ..errors import BackendUnavailable
from . import timing
from .device import DEFAULT_BLOCK, Device, Module, ModuleSpec, compiled_count, forget_compiled

#: device kinds: name -> (module, class); the module is imported when the kind is first asked for
KINDS: dict[str, tuple[str, str]] = {
    "cuda": ("kernels.gpu.cuda", "CudaDevice"),
    "host": ("kernels.gpu.host", "HostDevice"),
}
#: an app backend's name (kernels.backend.Backend.name) -> device kind
BACKEND_KINDS = {"gpu": "cuda", "cpu": "host"}

_lock = threading.Lock()
_devices: dict[tuple, Device] = {}


def device_class(kind: str) -> type:
    """The :class:`Device` subclass of ``kind`` (imported on first use)."""
    if kind not in KINDS:
        raise ValueError(f"unknown device kind {kind!r}: use {' or '.join(KINDS)}")
    mod_name, cls_name = KINDS[kind]
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        if exc.name != mod_name:
            raise
        raise BackendUnavailable(f"the {kind} device is not available in this build ({mod_name} is missing)") from exc
    return getattr(mod, cls_name)


def device(kind: str = "cuda", index: int | None = None) -> Device:
    """The device of ``kind`` (``"cuda"`` or ``"host"``), one object per (kind, index).

    ``index``: a CUDA device number to pin to (``None``: follow the current device; the host
    device has one).  :class:`~kernels.errors.BackendUnavailable` when the kind cannot run here."""
    key = (kind, None if index is None else int(index))
    dev = _devices.get(key)
    if dev is None:
        cls = device_class(kind)
        with _lock:
            dev = _devices.get(key)
            if dev is None:
                dev = _devices[key] = cls() if index is None else cls(int(index))
    return dev


def device_for(backend) -> Device:
    """The device behind an app backend (:class:`kernels.backend.Backend`, or its name
    ``"gpu"``/``"cpu"``): the CUDA device on the GPU backend, the host device on the CPU one."""
    name = backend if isinstance(backend, str) else getattr(backend, "name", "")
    if name in KINDS:
        return device(name)
    if name not in BACKEND_KINDS:
        raise ValueError(f"unknown backend {name!r}: use {' or '.join(BACKEND_KINDS)}")
    return device(BACKEND_KINDS[name])


def available(kind: str) -> bool:
    """Whether :func:`device` of ``kind`` works on this machine (without raising)."""
    try:
        device(kind)
        return True
    except BackendUnavailable:
        return False


def launch_occupancy(kernel, block: int, dynamic_smem: int = 0) -> tuple[float, int, str]:
    """(theoretical occupancy 0–1, registers per thread, limiter) of a compiled CUDA kernel
    launched with ``block`` threads and ``dynamic_smem`` bytes, on the current GPU (the
    calculator with this GPU's limits and the kernel's registers and static shared memory)."""
    from .occupancy import launch_occupancy as occ
    return occ(kernel, block, dynamic_smem)


__all__ = ["Device", "Module", "ModuleSpec", "DEFAULT_BLOCK", "KINDS", "BACKEND_KINDS", "device", "device_for",
           "device_class", "available", "launch_occupancy", "timing", "compiled_count", "forget_compiled",
           "BackendUnavailable"]
