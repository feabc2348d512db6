"""Compile-once loader for the graph CUDA sources in ``cuda/*.cu`` (CuPy RawModule)."""
from __future__ import annotations

import os
import threading

_DIR = os.path.join(os.path.dirname(__file__), "cuda")
_lock = threading.Lock()
_modules: dict = {}

_HOPS = ("unsigned char", "unsigned short", "unsigned int")
#: C++ instantiations requested per source file
NAME_EXPRESSIONS = {
    "bfs.cu": ([f"bfs_k7<{t}>" for t in _HOPS] + [f"bfs_compact<{t}>" for t in _HOPS]
               + ["bfs_init<unsigned char>", "bfs_init<int>"]),
    "msbfs.cu": [f"msbfs_{k}<{t}>" for k in ("seed", "level") for t in _HOPS],
    "fw.cu": [f"fw_phase{p}<{t}>" for p in (1, 2, 3) for t in (32, 64)],
}


def source(name: str) -> str:
    with open(os.path.join(_DIR, name)) as fh:
        return fh.read()


def kernel(file: str, name: str):
    """The RawKernel ``name`` from ``cuda/<file>`` (the module is compiled on first use)."""
    import cupy as cp
    with _lock:
        mod = _modules.get(file)
        if mod is None:
            mod = cp.RawModule(code=source(file), options=("-std=c++17",),
                               name_expressions=NAME_EXPRESSIONS.get(file))
            _modules[file] = mod
    return mod.get_function(name)


#: the C++ name of each compact hop-count dtype's template argument
CTYPE = {"uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int"}


def blocks(total: int, threads: int) -> int:
    return (int(total) + threads - 1) // threads
