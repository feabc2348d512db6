"""Compile-once loader for the graph CUDA sources in ``cuda/*.cu`` (CuPy RawModule).

Template kernels are requested by C++ name expressions (``NAME_EXPRESSIONS[file]``).  A module is
compiled per (file, first template argument) — e.g. all ``float`` instantiations of ``fw_gemm.cu``
together — so a caller pays only for the element type it uses.  Sources may ``#include`` headers
beside them (``fw_common.cuh``); ``fw_coop.cu`` includes ``<cooperative_groups.h>`` from the CUDA
toolkit.
"""
from __future__ import annotations

import os
import threading
from importlib.resources import files

_DIR = str(files(__package__) / "cuda")      # package data (importlib.resources); a folder NVRTC includes from
_lock = threading.Lock()
_modules: dict = {}
_functions: dict = {}

_HOPS = ("unsigned char", "unsigned short", "unsigned int")
#: sources whose kernels are launched cooperatively (grid.sync()): CuPy sets that per module
COOPERATIVE = {"fw_coop.cu"}
#: C++ instantiations requested per source file (the FW family adds its own: fw_gpu.py)
NAME_EXPRESSIONS: dict[str, list[str]] = {
    "bfs.cu": ([f"bfs_k7<{t}>" for t in _HOPS] + [f"bfs_compact<{t}>" for t in _HOPS]
               + ["bfs_init<unsigned char>", "bfs_init<int>"]),
    "msbfs.cu": [f"msbfs_{k}<{t}>" for k in ("seed", "level") for t in _HOPS],
}


def source(name: str) -> str:
    with open(os.path.join(_DIR, name)) as fh:
        return fh.read()


def group(name: str) -> str:
    """The module a kernel name belongs to: its first template argument ('' when untemplated)."""
    if "<" not in name:
        return ""
    return name.split("<", 1)[1].split(",", 1)[0].rstrip(">").strip()


def options() -> tuple[str, ...]:
    opts = ["-std=c++17", f"-I{_DIR}"]
    try:
        import cupy as cp
        inc = os.path.join(cp.cuda.get_cuda_path() or "", "include")
        if os.path.isdir(inc):
            opts.append(f"-I{inc}")
    except Exception:  # noqa: BLE001 - no CUDA path: NVRTC's own headers only
        pass
    return tuple(opts)


def kernel(file: str, name: str):
    """The RawKernel ``name`` from ``cuda/<file>`` for the current device (its module is compiled
    on first use, loaded once per device)."""
    import cupy as cp
    dev = cp.cuda.runtime.getDevice()        # a RawModule loads per device: functions are per device
    fn = _functions.get((file, name, dev))
    if fn is not None:
        return fn
    key = (file, group(name), dev)
    with _lock:
        mod = _modules.get(key)
        if mod is None:
            names = [x for x in NAME_EXPRESSIONS.get(file, []) if group(x) == key[1]] or None
            if names is not None and name not in names:
                raise KeyError(f"{name} is not instantiated for {file}")
            mod = cp.RawModule(code=source(file), options=options(), name_expressions=names,
                               enable_cooperative_groups=file in COOPERATIVE)
            _modules[key] = mod
        fn = _functions[(file, name, dev)] = mod.get_function(name)
    return fn


#: the C++ name of each compact hop-count dtype's template argument
CTYPE = {"uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int"}


def blocks(total: int, threads: int) -> int:
    return (int(total) + threads - 1) // threads
