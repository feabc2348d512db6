"""The graph CUDA sources in this folder (``*.cu``) and their compile site on the shared GPU layer.

:func:`function` asks a device of :mod:`kernels.gpu` (``gpu.device_for(backend)``: the CUDA device
on a GPU backend, the host device — the same ``.cu`` source compiled by the host C++ compiler after
a CUDA prelude — otherwise) for a kernel; the layer compiles, memoizes per device and records it in
the launch registry under the system "graphs".  The launchers (``bfs.py``, ``msbfs.py``,
``sssp.py``, ``clustering.py``, ``frontier.py``) use only the device's array module ``dev.xp`` and
``dev.launch``, so one launch sequence runs on both devices.

Template kernels are requested by C++ name expressions (``NAME_EXPRESSIONS[file]``).  A module is
compiled per (file, first template argument) — e.g. all ``float`` instantiations of ``fw_gemm.cu``
together — so a caller pays only for the element type it uses.  Sources may ``#include`` headers
beside them (``fw_common.cuh``); ``fw_coop.cu`` includes ``<cooperative_groups.h>`` from the CUDA
toolkit.
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional: it is imported only when a GPU device is asked for.
import os
from importlib.resources import files

import numpy as np
from ... import gpu
from ...errors import InvalidParameter
from ... import backend as kernel_backend


_HOPS = ("unsigned char", "unsigned short", "unsigned int")
#: sources whose kernels are launched cooperatively (grid.sync()): CuPy sets that per module
COOPERATIVE = {"fw_coop.cu"}
#: C++ instantiations requested per source file (the FW family adds its own: fw_gpu.py)
NAME_EXPRESSIONS: dict[str, list[str]] = {
    "bfs.cu": ([f"bfs_k7<{t}>" for t in _HOPS] + [f"bfs_compact<{t}>" for t in _HOPS]
               + ["bfs_init<unsigned char>", "bfs_init<int>"]),
    "msbfs.cu": [f"msbfs_{k}<{t}>" for k in ("seed", "level") for t in _HOPS],
}
#: the system (package) the launch registry files these kernels under
SYSTEM = "graphs"


def resource(name: str):
    """``<name>`` beside this module (``kernels/graphs/cuda/``) as an importlib.resources file (the
    layer reads it and includes from its folder)."""
    return files(__package__) / name


def group(name: str) -> str:
    """The module a kernel name belongs to: its first template argument ('' when untemplated)."""
    if "<" not in name:
        return ""
    return name.split("<", 1)[1].split(",", 1)[0].rstrip(">").strip()


def options(dev=None) -> tuple[str, ...]:
    """Compiler options of every graph source (the layer adds the sources' folder for ``#include``);
    on a CUDA device also the toolkit's include folder (``fw_coop.cu``: ``<cooperative_groups.h>``)."""
    opts = ["-std=c++17"]
    if getattr(dev, "kind", "") == "cuda":
        try:
            import cupy as cp
            inc = os.path.join(cp.cuda.get_cuda_path() or "", "include")
            if os.path.isdir(inc):
                opts.append(f"-I{inc}")
        except Exception:  # noqa: BLE001 - no CUDA path: NVRTC's own headers only
            pass
    return tuple(opts)


def device(backend):
    """The :mod:`kernels.gpu` device the graph kernels of ``backend`` run on: CUDA on a GPU
    backend, else the host device (the CUDA source run on the CPU; ``dev.emulated``)."""
    return gpu.device_for(backend if backend is not None else "cpu")


def function(dev, file: str, name: str):
    """The kernel ``name`` from ``cuda/<file>`` on ``dev`` (its module is compiled on first use,
    memoized by the layer per device, source and options)."""
    key = group(name)
    names = [x for x in NAME_EXPRESSIONS.get(file, []) if group(x) == key] or None
    if names is not None and name not in names:
        raise KeyError(f"{name} is not instantiated for {file}")
    mod = dev.module(resource(file), name_expressions=names, options=options(dev), system=SYSTEM,
                     cooperative=file in COOPERATIVE)
    return mod.function(name)


def to_host(a, out: np.ndarray | None = None) -> np.ndarray:
    """A device array (CuPy or NumPy) as a host array; into ``out`` when given."""
    if hasattr(a, "get"):
        return a.get() if out is None else a.get(out=out)
    if out is None:
        return np.asarray(a)
    out[...] = a
    return out


def free_memory(backend) -> int:
    """Bytes free on ``backend``'s device (the host's available memory without a backend)."""
    if backend is not None:
        return int(backend.free_memory())
    return kernel_backend.host_available_memory()


def null(dev):
    """A null pointer argument (an optional array left out)."""
    return dev.xp.uint64(0)


#: the longest run the host device is allowed before any work (issue 33: "about 30 s")
HOST_LIMIT_S = 30.0
#: the host cost model (issue 33), fitted to the process CPU time of 14 runs of these kernels on the
#: project's 2-core CI machine (its wall time when nothing else runs; ``benchmarks/bfs.py --sections
#: host``): seconds per launch (Python side, marshalling, the pool), per CUDA thread of a kernel with
#: barriers or warp collectives (a fiber: context switches), per thread of one without (a plain
#: loop), per arc visit
HOST_LAUNCH_S, HOST_FIBER_S, HOST_PLAIN_S, HOST_ARC_S = 1.4e-4, 3.1e-7, 3e-8, 1e-8
#: (per launch, per thread, per arc) of kernels with barriers (the default) and without
HOST_COSTS = (HOST_LAUNCH_S, HOST_FIBER_S, HOST_ARC_S)
PLAIN_COSTS = (HOST_LAUNCH_S, HOST_PLAIN_S, HOST_ARC_S)
#: half the threads in each: a plain scatter launch, then a check launch with a barrier (sssp.cu)
MIXED_COSTS = (HOST_LAUNCH_S, 0.5 * (HOST_FIBER_S + HOST_PLAIN_S), HOST_ARC_S)


class HostRunnable:
    """Mixin of a registered APSP method whose CUDA source runs on the host device without a GPU
    ("CUDA source run on the CPU"; ``host = True``: ``APSPMethod.available`` / ``emulated`` read it),
    with a size guard (:meth:`check_host`) that refuses, before any work, a run the cost model puts
    above :data:`HOST_LIMIT_S`, naming the largest number of sources that fits."""

    host = True
    #: seconds per launch, per thread, per arc visit on the host (overridden per method)
    host_costs: tuple = HOST_COSTS

    def rows(self, csr) -> int:
        """Sources (result rows) of this run: option ``sources``, default every vertex."""
        src = self.options.get("sources")
        return csr.n if src is None else int(np.size(src))

    def host_work(self, csr) -> tuple[float, float, float]:
        """(launches, CUDA threads run, arc visits) of a run on ``csr``."""
        raise NotImplementedError

    def host_seconds(self, csr) -> float:
        return float(np.dot(self.host_costs, self.host_work(csr)))

    def check_host(self, csr, backend) -> None:
        """On the host device, refuse (InvalidParameter) a run estimated above HOST_LIMIT_S; the
        message names the limit in sources, which scale the work linearly."""
        if not self.emulated(backend):
            return
        sec = self.host_seconds(csr)
        if sec <= HOST_LIMIT_S:
            return
        rows = self.rows(csr)
        fit = int(rows * HOST_LIMIT_S / sec)
        raise InvalidParameter(
            f"{self.name} runs its CUDA source on the CPU here (no GPU): {rows:,} sources on |V| = {csr.n:,}, "
            f"{csr.arcs:,} arcs would take about {sec:.0f} s; the limit is {HOST_LIMIT_S:.0f} s — about "
            f"{max(fit, 0):,} sources of this graph fit (fewer sources, a smaller graph, or a GPU)")


#: the C++ name of each compact hop-count dtype's template argument
CTYPE = {"uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int"}


def blocks(total: int, threads: int) -> int:
    return (int(total) + threads - 1) // threads
