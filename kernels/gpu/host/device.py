"""The host device: CUDA sources run on the CPU ("CUDA source run on the CPU").

:class:`HostDevice` has the GPU layer's device interface with NumPy arrays (``xp`` = numpy):
``module(source, name_expressions, options)`` (the layer's :class:`kernels.gpu.Device`: memoized,
recorded), ``function(name)`` → :class:`HostKernel`, ``launch(k, grid, block, args, shared_mem,
cooperative)``, ``synchronize()``, ``emulated = True``.  Each kernel (one C++ name expression,
e.g. ``"fw_v3<int,true>"``) is its own small shared library: the source after the CUDA prelude
(``cuda_host.cuh``, ``cuda_intrinsics.cuh``), compiled once per machine by the host C++ compiler
(:func:`kernels.hostcc.compile_library`, cached by the text's hash) and memoized per process.  The parameter types come from the compiled function
(``emu_signature``), so launch arguments are converted the way CUDA would read them.

The device looks like a small GPU to launchers that size grids by occupancy: ``sms`` = the host's
cores, one resident block per "SM", ``block`` threads per block.  A cooperative launch, or one of
at most ``resident_blocks()`` blocks of a kernel whose threads can wait (barriers, warp collectives,
volatile spins), runs every block on its own OS thread at once (grid barriers, also spinning flag
barriers like paper 002's, need every block resident); other grids are shared out over
``workers`` threads of a process-wide pool (``pool.cpp``), or run on the calling thread when the
kernel's previous launch says this one takes under :data:`PARALLEL_MIN_S`.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from importlib.resources import files

import numpy as np

from ... import hostcc
from ...fileio import atomic_write
from ..device import Device
from . import source as src

#: host compiler flags: IEEE arithmetic without contraction (GPU: exact for +, min, compares); only
#: the entry points exported, and (GNU linkers) code the kernel cannot reach dropped — see :func:`meets`
FLAGS = ("-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fno-strict-aliasing", "-w", "-pthread",
         "-fvisibility=hidden") + (("-ffunction-sections", "-Wl,--gc-sections") if sys.platform.startswith("linux")
                                   else ())
#: threads per block the occupancy stand-ins suggest (fibers cost per thread: fewer is faster)
DEFAULT_BLOCK = 128
#: a launch predicted (from the kernel's last one) to take less than this runs on one worker
PARALLEL_MIN_S = 1e-3
#: a cooperative launch runs one OS thread per block: refuse grids beyond this
MAX_COOPERATIVE_BLOCKS = 1024


class HostKernel:
    """One compiled kernel: ``name`` (its C++ name expression), the library's entry points and the
    parameter codes (``p`` pointer, ``i4``/``u8``/``f4``/``b1`` …, ``s<bytes>`` a struct)."""

    #: read by :attr:`kernels.launches.Launch.on_host`: the CUDA driver knows nothing of this kernel
    on_host = True

    def __init__(self, name: str, lib: ctypes.CDLL, plain: bool = False):
        self.name, self.plain = name, plain
        self.cost = None             # seconds per CUDA thread of the last launch (one core's worth)
        self._launch = lib.emu_launch
        self._launch.restype = ctypes.c_int
        self._launch.argtypes = [ctypes.c_uint] * 7 + [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                                        ctypes.c_char_p, ctypes.c_int]
        sig = lib.emu_signature
        sig.restype = ctypes.c_char_p
        self.params = tuple(c for c in sig().decode().split(",") if c)
        self.attributes = {"num_regs": 0, "shared_size_bytes": 0, "max_threads_per_block": 1024}
        self.lib = lib

    def __repr__(self):
        return f"<HostKernel {self.name} ({', '.join(self.params)})>"


class HostModule:
    """A module (:class:`kernels.gpu.ModuleSpec`) prepared for the host; each kernel compiles on its
    first :meth:`get_function` (its own library: a kernel pays only for itself)."""

    def __init__(self, device: "HostDevice", spec):
        self.device, self.spec = device, spec
        self.prepared = src.body(spec.source, spec.options)
        self._kernels: dict[str, HostKernel] = {}
        self._lock = threading.Lock()

    def get_function(self, name: str) -> HostKernel:
        """The kernel ``name`` (a name expression of the module when it lists them)."""
        if self.spec.name_expressions is not None and name not in self.spec.name_expressions:
            raise KeyError(f"{name} is not among the module's name expressions")
        k = self._kernels.get(name)
        if k is None:
            with self._lock:
                k = self._kernels.get(name)
                if k is None:
                    k = self._kernels[name] = self.device.build(self.prepared, name, self.spec.options)
        return k


class _TexDesc(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("width", ctypes.c_longlong), ("height", ctypes.c_longlong),
                ("pitch", ctypes.c_longlong), ("elem", ctypes.c_longlong)]


class HostTexture:
    """A host texture object (``cuda_intrinsics.cuh``'s ``cuda_emu::Texture``); ``int(t)`` is the handle.
    It keeps its array alive."""

    def __init__(self, array, kind: str = "1d"):
        a = array
        if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
            raise TypeError("a host texture needs a C-contiguous NumPy array")
        if kind == "2d":
            if a.ndim != 2:
                raise ValueError(f"a 2d texture needs a 2-D array, not {a.ndim}-D")
            h, w, pitch = a.shape[0], a.shape[1], a.strides[0]
        elif kind == "1d":
            h, w, pitch = 1, a.size, a.nbytes
        else:
            raise ValueError(f"texture kind must be 1d or 2d, not {kind!r}")
        self.array, self.kind = a, kind
        self.desc = _TexDesc(a.ctypes.data, w, h, pitch, a.itemsize)

    def __int__(self):
        return ctypes.addressof(self.desc)

    __index__ = __int__


_pool: list = []
#: one error-message buffer per Python thread (launches from several threads stay apart)
_errors = threading.local()


def _error_buffer():
    b = getattr(_errors, "b", None)
    if b is None:
        b = _errors.b = ctypes.create_string_buffer(512)
    return b


_prelude: list = []


def prelude_folder() -> tuple[str | None, str]:
    """(folder, hash) of the prelude header with its precompiled form (GCC's ``.gch``, built once per
    machine beside it in the cache: each kernel's compile then skips parsing the prelude); folder
    None where it cannot be written (the units then hold the prelude's text)."""
    if not _prelude:
        text = src.prelude()
        digest = hashlib.sha1((text + "\0" + " ".join(FLAGS)).encode()).hexdigest()[:16]
        folder = hostcc.cache_dir("cuda-host") / f"prelude-{digest}"
        header = folder / src.PRELUDE_FILE
        try:
            if not header.exists():
                folder.mkdir(parents=True, exist_ok=True)
                tmp = folder / f".{os.getpid()}.tmp"
                tmp.write_text(text)
                os.replace(tmp, header)
            gch = folder / (src.PRELUDE_FILE + ".gch")
            cxx = hostcc.find_compiler()
            if not gch.exists() and cxx and "clang" not in os.path.basename(cxx):
                tmp = folder / f".{os.getpid()}.gch"
                compile_flags = [f for f in FLAGS if not f.startswith("-Wl,")]
                r = subprocess.run([cxx, *compile_flags, "-fPIC", "-x", "c++-header", str(header), "-o", str(tmp)],
                                   capture_output=True, timeout=300)
                if r.returncode == 0:
                    os.replace(tmp, gch)            # a failed one leaves the plain header: still correct
                else:
                    tmp.unlink(missing_ok=True)
            _prelude.append((str(folder), digest))
        except (OSError, subprocess.SubprocessError):
            _prelude.append((None, digest))
    return _prelude[0]


def pool_run() -> int:
    """The address of the process's worker pool (``pool.cpp``, compiled once, loaded once)."""
    if not _pool:
        text = (files(__package__) / "pool.cpp").read_text()
        lib = hostcc.compile_library(text, what="the host device's worker pool", kind="cuda-host", prefix="pool",
                                     flags=FLAGS, openmp=False)
        _pool.append((lib, ctypes.cast(lib.pool_run, ctypes.c_void_p).value))
    return _pool[0][1]


def meets(lib: ctypes.CDLL, prepared: str) -> bool:
    """Whether the kernel's threads can wait for each other: the prelude's marker function
    (:data:`.source.MARKER`) survived in the library (the linker drops it when the kernel cannot reach
    a barrier or warp collective; read with ``nm``, once per built library: the answer is kept beside
    it as ``<library>.meets``).  Without ``nm`` or a GNU linker: whether the source text has any
    (:func:`.source.plain`)."""
    side = f"{lib._name}.meets"
    with contextlib.suppress(OSError, KeyError):
        if os.path.getmtime(side) >= os.path.getmtime(lib._name):
            with open(side, encoding="ascii") as fh:
                return {"1": True, "0": False}[fh.read().strip()]
    nm = shutil.which("nm")
    if nm and sys.platform.startswith("linux"):
        try:
            r = subprocess.run([nm, lib._name], capture_output=True, text=True, timeout=30)
            if r.returncode == 0:
                found = src.MARKER in r.stdout
                with contextlib.suppress(OSError):
                    with atomic_write(side, "w", encoding="ascii") as fh:
                        fh.write("1" if found else "0")
                return found
        except (OSError, subprocess.SubprocessError):
            pass
    return not src.plain(prepared)


def _label(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")[:40] or "kernel"


def _pointer(a):
    if a is None:
        return None
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    if isinstance(a, (int, np.integer)):
        return int(a) or None
    if hasattr(a, "__array_interface__"):
        return a.__array_interface__["data"][0]
    if hasattr(a, "__cuda_array_interface__"):
        raise TypeError("the host device got a GPU array: pass NumPy arrays (dev.xp)")
    raise TypeError(f"a pointer parameter got {type(a).__name__}")


_SCALARS = {"i1": ctypes.c_int8, "i2": ctypes.c_int16, "i4": ctypes.c_int32, "i8": ctypes.c_int64,
            "u1": ctypes.c_uint8, "u2": ctypes.c_uint16, "u4": ctypes.c_uint32, "u8": ctypes.c_uint64,
            "f4": ctypes.c_float, "f8": ctypes.c_double, "b1": ctypes.c_bool}


def _value(code: str, a):
    """One argument as the C value its parameter type reads (kept alive by the caller)."""
    if code == "p":
        return ctypes.c_void_p(_pointer(a))
    if code in _SCALARS:
        if code[0] == "f":
            return _SCALARS[code](float(a))
        if code == "b1":
            return ctypes.c_bool(bool(a))
        return _SCALARS[code](int(a))
    if code.startswith("s"):
        raw = bytes(np.asarray(a).tobytes()) if not isinstance(a, (bytes, bytearray)) else bytes(a)
        if len(raw) != int(code[1:]):
            raise TypeError(f"a struct parameter of {code[1:]} bytes got {len(raw)} bytes")
        return ctypes.create_string_buffer(raw, len(raw))
    raise TypeError(f"unsupported parameter code {code}")


def dims(v) -> tuple[int, int, int]:
    """A grid or block (int or up to three ints) as three ints."""
    v = tuple(v) if isinstance(v, (tuple, list)) else (int(v),)
    if not 1 <= len(v) <= 3:
        raise ValueError(f"a grid or block has 1 to 3 dimensions, not {len(v)}")
    out = tuple(int(x) for x in v) + (1,) * (3 - len(v))
    if min(out) < 1:
        raise ValueError(f"grid and block dimensions must be positive: {out}")
    return out


class HostDevice(Device):
    """The CPU as a CUDA device (see the module docstring).  ``workers``: OS threads per launch
    (default: the cores); ``block``: the threads per block the occupancy stand-ins return."""

    kind = "host"
    name = "host"
    emulated = True
    xp = np

    def __init__(self, workers: int | None = None, block: int = DEFAULT_BLOCK, per_sm: int = 1):
        super().__init__()
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.sms, self.block, self.per_sm = self.workers, int(block), int(per_sm)
        self._built: dict = {}
        self._lock = threading.Lock()
        self.launch_count = 0

    # ------------------------------------------------------------------ compile
    def compile(self, spec) -> HostModule:
        """``spec`` prepared for the host compiler (kernels compile one by one, on first use)."""
        return HostModule(self, spec)

    def build(self, prepared: str, name: str, options=()) -> HostKernel:
        """The kernel ``name`` of a prepared source (``options``: its ``-D`` macros apply): compiled
        once per machine (the library cache), loaded once per process."""
        folder, digest = prelude_folder()
        unit = src.translation_unit(prepared, name, options, include=digest if folder else None)
        key = hashlib.sha1(unit.encode()).hexdigest()
        k = self._built.get(key)
        if k is None:
            flags = FLAGS + ((f"-I{folder}",) if folder else ())
            lib = hostcc.compile_library(unit, what=f"the host build of {name}", kind="cuda-host",
                                         prefix=_label(name), flags=flags, openmp=False)
            with self._lock:
                k = self._built.setdefault(key, HostKernel(name, lib, not meets(lib, prepared)))
        return k

    # ------------------------------------------------------------------ launch
    def resident_blocks(self) -> int:
        """Blocks that run at once (each on its own worker)."""
        return self.sms * self.per_sm

    def run(self, k: HostKernel, grid, block, args, shared_mem: int = 0, cooperative: bool = False):
        """Run ``k`` over ``grid`` × ``block`` with ``args`` (NumPy arrays or addresses for
        pointers, numbers for scalars); returns when every block is done (the host is synchronous)."""
        g, b = dims(grid), dims(block)
        args = tuple(args)
        if len(args) != len(k.params):
            raise TypeError(f"{k.name} takes {len(k.params)} arguments, got {len(args)}")
        vals = [_value(c, a) for c, a in zip(k.params, args)]
        ptrs = (ctypes.c_void_p * max(1, len(vals)))(*[ctypes.addressof(v) for v in vals])
        blocks = g[0] * g[1] * g[2]
        if cooperative and blocks > MAX_COOPERATIVE_BLOCKS:
            raise ValueError(f"a cooperative launch of {blocks} blocks: the host device runs at most "
                             f"{MAX_COOPERATIVE_BLOCKS} at once")
        nthreads = blocks * b[0] * b[1] * b[2]
        if cooperative or (not k.plain and blocks <= self.resident_blocks()):
            workers = blocks                       # every block resident: grid and spinning barriers work
        elif k.cost is not None and k.cost * nthreads < PARALLEL_MIN_S:
            workers = 1                            # too little work to wake the pool for
        else:
            workers = min(self.workers, blocks)
        err = _error_buffer()
        t0 = time.perf_counter()
        rc = k._launch(*g, *b, int(shared_mem), workers, int(k.plain), ctypes.addressof(ptrs), pool_run(), err, 512)
        k.cost = (time.perf_counter() - t0) * min(workers, self.workers) / nthreads
        self.launch_count += 1
        if rc:
            raise RuntimeError(f"{k.name} on the host: {err.value.decode(errors='replace')}")

    def synchronize(self):
        """Launches are synchronous on the host: nothing to wait for."""

    # ------------------------------------------------------------------ occupancy stand-ins (fw_gpu)
    def potential_block(self, k, shared_mem: int = 0) -> tuple[int, int]:
        """cudaOccupancyMaxPotentialBlockSize's (grid, block) for the host: every worker one block."""
        return self.resident_blocks(), self.block

    def active_blocks(self, k, block: int, shared_mem: int = 0) -> int:
        return self.per_sm

    # ------------------------------------------------------------------ textures
    def texture(self, array, kind: str = "1d") -> "HostTexture":
        """A texture object over ``array`` (C-contiguous NumPy): ``"1d"`` — tex1Dfetch over its
        elements (0 outside); ``"2d"`` — tex2D over a 2-D array (clamped, point reads).  Pass
        ``int(tex)`` as the kernel's ``cudaTextureObject_t``; keep ``tex`` alive while it is used."""
        return HostTexture(array, kind)

    # ------------------------------------------------------------------ streams: issue order (a valid serialisation)
    def stream(self):
        return contextlib.nullcontext()

    def on(self, stream):
        return stream if stream is not None else contextlib.nullcontext()

    def record(self):
        return None

    def wait(self, event):
        pass
