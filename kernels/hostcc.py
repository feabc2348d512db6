"""The host C++ compiler as a kernels-wide service: compile a source once into a cached shared library.

Used wherever a compute system runs compiled code on the CPU: Flint's ``c`` / ``c-is`` runtimes
(the model's CUDA C compiled for host cores) and the graphs' compiled CPU versions (e.g. the
sequential Floyd–Warshall of paper 002).  A library is cached by a hash of its source, flags and
compiler under the user's cache folder, so each source compiles once per machine; a compile runs
with OpenMP when the compiler has it, else without (``omp`` pragmas are then ignored).  No compiler
→ :class:`~kernels.errors.BackendUnavailable` naming what to install.  Qt-free.

:data:`CUDA_HOST_PRELUDE` defines the CUDA keywords away so that a ``.cu`` source whose kernels are
plain C++ can be compiled for the host (one "thread" per call: each OpenMP thread sets its own
``threadIdx``).
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from . import appdirs
from .errors import BackendUnavailable

CUDA_HOST_PRELUDE = r"""#include <cmath>
#include <cstddef>
#include <cstring>
using namespace std;
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
struct D3 { unsigned x, y, z; };
static D3 blockIdx, blockDim;
static thread_local D3 threadIdx;
template <class T> T __shfl_xor_sync(unsigned, T v, int) { return v; }
"""

CXX_FLAGS = ("-std=c++14", "-O2", "-ffp-contract=off", "-fno-fast-math", "-w")
OPENMP_FLAG = "-fopenmp"


def find_compiler() -> str | None:
    """The host C++ compiler: $CXX, else g++, c++ or clang++ on PATH; None when there is none."""
    for c in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        if c and shutil.which(c):
            return shutil.which(c)
    return None


def cache_dir(kind: str = "flint-c") -> Path:
    """Where compiled libraries are kept and built (:func:`build`): the application's cache folder
    (:func:`kernels.appdirs.cache_dir`, through platformdirs) ``/<kind>``."""
    return appdirs.cache_dir(kind)


BUILD_PREFIX = ".build-"


def clean_stale_builds(folder: Path, older_than: float) -> None:
    """Remove build folders (:data:`BUILD_PREFIX`) in ``folder`` untouched for ``older_than`` seconds:
    left by a compile that was killed (a running compile ends within its time limit)."""
    now = time.time()
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(BUILD_PREFIX)]
    except OSError:
        return
    for e in entries:
        with contextlib.suppress(OSError):
            if e.is_dir(follow_symlinks=False) and now - e.stat(follow_symlinks=False).st_mtime > older_than:
                shutil.rmtree(e.path, ignore_errors=True)


def build(cxx: str, source: str, flags: tuple, lib: Path, timeout: float) -> str | None:
    """Compile ``source`` to the shared library ``lib``; the compiler's first error line, or None.

    The compile happens in a temporary folder *inside the cache folder* (the library's own file
    system), so the final :func:`os.replace` never crosses devices (a tmpfs ``/tmp`` and a cache
    on disk are a common set-up)."""
    lib.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_builds(lib.parent, 2 * timeout + 60)
    with tempfile.TemporaryDirectory(prefix=BUILD_PREFIX, dir=lib.parent) as d:
        src = Path(d) / "unit.cpp"
        src.write_text(source)
        tmp = Path(d) / "unit.so"
        try:
            r = subprocess.run([cxx, *flags, "-shared", "-fPIC", "-o", str(tmp), str(src)],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BackendUnavailable(f"the C++ compile took over {timeout:.0f} s") from None
        if r.returncode:
            return next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:200])
        os.replace(tmp, lib)                  # same folder tree, same device; atomic: concurrent compiles are harmless
    return None


def compile_library(source: str, timeout: float = 600.0, *, what: str = "this CPU path",
                    kind: str = "flint-c", prefix: str = "flint", flags: tuple = CXX_FLAGS,
                    openmp: bool = True) -> ctypes.CDLL:
    """Compile ``source`` into a shared library (cached by hash) and load it; with OpenMP when the
    compiler has it (and ``openmp``), else single-threaded.  ``what`` names the feature in the
    no-compiler message; ``kind`` / ``prefix`` place the cached library
    (``<cache>/<kind>/<prefix>_<hash>[_omp].so``)."""
    cxx = find_compiler()
    if cxx is None:
        raise BackendUnavailable(f"{what}: no C++ compiler found on PATH (install g++ or clang++; on Debian: "
                                 "apt install g++)")
    key = hashlib.sha1((source + "\0" + " ".join(flags) + "\0" + cxx).encode()).hexdigest()[:20]
    folder = cache_dir(kind)
    libs = [folder / f"{prefix}_{key}_omp.so", folder / f"{prefix}_{key}.so"]
    for lib in libs:
        if lib.exists():
            return ctypes.CDLL(str(lib))
    err = build(cxx, source, flags + (OPENMP_FLAG,), libs[0], timeout) if openmp else "no OpenMP asked"
    if err is None:
        return ctypes.CDLL(str(libs[0]))
    err = build(cxx, source, flags, libs[1], timeout)            # a compiler without OpenMP
    if err is None:
        return ctypes.CDLL(str(libs[1]))
    raise BackendUnavailable(f"the C++ compile of {what} failed: {err}")
