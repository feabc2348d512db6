"""The device abstraction of the GPU layer: compile once per device, launch, record, synchronize.

A :class:`Device` is where CUDA source runs: the GPU through CuPy (:mod:`kernels.gpu.cuda`) or
the host, the same source compiled by the host C++ compiler after a CUDA prelude
(:mod:`kernels.gpu.host`).  Every system compiles through :meth:`Device.module`, which

* memoizes the compiled module *per device*, keyed by the source text, the compiler options, the
  C++ name expressions and the cooperative flag — what ``cupy.memoize(for_each_device=True)``
  does for CuPy's own kernels: the device id is part of the key, so a kernel compiled on GPU 0 is
  compiled (loaded) again for GPU 1, and never twice for one device;
* records every function taken from a module in the launch registry (:mod:`kernels.launches`)
  with its display name, threads per block, dynamic shared memory and system; :meth:`Device.launch`
  updates the entry when a kernel is launched with another shape (the latest shape wins).

A subclass supplies the machine: :meth:`Device.compile` (source → an object with
``get_function(name)``), :meth:`Device.run` (one launch), :meth:`Device.current_id` and the
occupancy / stream / event methods.  This module imports no compute system.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from math import prod

from .. import launches

#: threads per block a function is recorded with until it is launched (or told its block)
DEFAULT_BLOCK = 256

_lock = threading.RLock()
#: (device kind, device id, ModuleSpec.key) -> the compiled module
_modules: dict = {}
#: (device kind, device id, ModuleSpec.key, function name) -> the compiled function
_functions: dict = {}


def threads(block) -> int:
    """Threads per block of a launch's ``block`` (an int or a tuple of up to three ints)."""
    return int(prod(block)) if isinstance(block, (tuple, list)) else int(block)


def read_source(source) -> tuple[str, str | None]:
    """(source text, folder it was read from or None) of ``source``: a ``str`` is CUDA source
    text; a path (``os.PathLike``) or an ``importlib.resources`` Traversable is read as a file."""
    if isinstance(source, str):
        return source, None
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as fh:
            return fh.read(), os.path.dirname(path)
    if hasattr(source, "read_text"):                     # importlib.resources.abc.Traversable
        text = source.read_text(encoding="utf-8")
        folder = str(source.parent) if hasattr(source, "parent") else None
        if folder is not None and not os.path.isdir(folder):
            folder = None                                # inside a zip: nothing to include from
        return text, folder
    raise TypeError(f"CUDA source must be text, a path or a resource, not {type(source).__name__}")


@dataclass(frozen=True)
class ModuleSpec:
    """What a module is compiled from.  ``key`` identifies it in the per-device memo.

    ``source``: CUDA C++ text; ``options``: compiler options (NVRTC's, e.g. ``-std=c++17``,
    ``-I<dir>``, ``--maxrregcount=32``; the host device maps the ones it understands);
    ``name_expressions``: C++ names of template instantiations to compile (``None``: the source's
    ``extern "C"`` kernels only); ``cooperative``: kernels use ``grid.sync()`` and are launched
    cooperatively; ``system`` / ``prefix``: the recording system (package name, e.g. ``"graphs"``)
    and the display prefix of its kernels in the launch registry (default: ``system``);
    ``folder``: where the source was read from (``None`` for text)."""
    source: str
    options: tuple = ()
    name_expressions: tuple | None = None
    cooperative: bool = False
    system: str = ""
    prefix: str = ""
    folder: str | None = None

    @property
    def key(self) -> tuple:
        return (self.source, self.options, self.name_expressions, self.cooperative)


class Module:
    """A CUDA module on one device: :meth:`function` gives its compiled kernels."""

    def __init__(self, device: "Device", spec: ModuleSpec):
        self.device, self.spec = device, spec

    @property
    def compiled(self):
        """The device's compiled module for the current device id (compiled on first use)."""
        return self.device.compiled(self.spec)

    def function(self, name: str, *, block: int | None = None, shared_mem: int = 0, label: str | None = None,
                 lazy: bool = False):
        """The compiled kernel ``name`` (an ``extern "C"`` name or one of the name expressions);
        ``lazy``: compiled when first launched or asked about, not now (``extern "C"`` kernels).

        Memoized per device; the first time on a device it is recorded in :mod:`kernels.launches`
        as ``"<prefix> <label or name>"`` with ``block`` threads (default :data:`DEFAULT_BLOCK`
        until :meth:`Device.launch` launches it) and ``shared_mem`` bytes of dynamic shared memory.
        Asking again with another ``block`` / ``shared_mem`` updates the recorded launch shape (for
        callers that launch the kernel object directly).  An unknown name raises ``KeyError``."""
        return self.device.function(self.spec, name, block=block, shared_mem=shared_mem, label=label, lazy=lazy)

    def __repr__(self):
        return f"<Module {self.spec.prefix or self.spec.system} on {self.device!r}>"


@dataclass
class _Record:
    name: str
    system: str
    shape: tuple


class Device:
    """A place where CUDA source runs (see the module docstring).  Subclasses set ``kind``,
    ``xp`` (the array module: cupy or numpy), ``emulated`` and ``sms``."""

    kind: str = ""
    emulated: bool = False
    xp = None
    sms: int = 1

    def __init__(self):
        self._records: dict[int, _Record] = {}
        self._last: dict[int, tuple] = {}           # id(kernel) -> (block, shared_mem) as last launched

    # ---------------------------------------------------------------- what a subclass supplies
    def current_id(self) -> int:
        """Id of the device compiled modules belong to now (the current CUDA device)."""
        return 0

    def compile(self, spec: ModuleSpec):
        """Compile ``spec`` for the current device: an object with ``get_function(name)``."""
        raise NotImplementedError

    def run(self, kernel, grid, block, args, shared_mem: int = 0, cooperative: bool = False) -> None:
        """Launch ``kernel`` once (no recording)."""
        raise NotImplementedError

    def attributes(self, kernel) -> dict:
        """The compiled kernel's attributes (``num_regs``, ``shared_size_bytes``,
        ``max_threads_per_block``, …) as CuPy's ``RawKernel.attributes`` gives them."""
        return dict(getattr(kernel, "attributes", {}) or {})

    def lazy_function(self, spec: ModuleSpec, name: str):
        """``name`` of ``spec`` compiled on first use rather than now (``function(lazy=True)``;
        default: now)."""
        return self.compiled(spec).get_function(name)

    def potential_block(self, kernel, shared_mem: int = 0) -> tuple[int, int]:
        """cudaOccupancyMaxPotentialBlockSize: (grid of co-resident blocks, threads per block)."""
        raise NotImplementedError

    def active_blocks(self, kernel, block: int, shared_mem: int = 0) -> int:
        """cudaOccupancyMaxActiveBlocksPerMultiprocessor for ``block`` threads."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait until every launch issued on this device has finished."""

    def stream(self):
        """A second stream (work on it may overlap the current one)."""
        raise NotImplementedError

    def on(self, stream):
        """Context manager: launches inside it go to ``stream``."""
        return stream

    def record(self):
        """An event recorded on the current stream (for :meth:`wait`)."""
        return None

    def wait(self, event) -> None:
        """The current stream waits for ``event``."""

    # ---------------------------------------------------------------- the shared plumbing
    def module(self, source, *, name_expressions=None, options=(), system: str = "", prefix: str = "",
               cooperative: bool = False) -> Module:
        """A :class:`Module` of ``source`` (CUDA text, a path or an ``importlib.resources`` file;
        a file's folder is added as an include directory).  Compiled on first use, once per device."""
        text, folder = read_source(source)
        opts = tuple(options)
        if folder is not None and f"-I{folder}" not in opts:
            opts += (f"-I{folder}",)
        names = None if name_expressions is None else tuple(name_expressions)
        return Module(self, ModuleSpec(text, opts, names, bool(cooperative), str(system),
                                       str(prefix or system), folder))

    def kernel(self, source, name: str, *, block: int | None = None, shared_mem: int = 0,
               label: str | None = None, lazy: bool = False, **module_args):
        """Shorthand: ``self.module(source, **module_args).function(name, …)``."""
        return self.module(source, **module_args).function(name, block=block, shared_mem=shared_mem, label=label,
                                                           lazy=lazy)

    def compiled(self, spec: ModuleSpec):
        """The compiled module of ``spec`` for the current device (memoized per device)."""
        key = (self.kind, self.current_id(), spec.key)
        mod = _modules.get(key)
        if mod is None:
            with _lock:
                mod = _modules.get(key)
                if mod is None:
                    mod = _modules[key] = self.compile(spec)
        return mod

    def function(self, spec: ModuleSpec, name: str, *, block: int | None = None, shared_mem: int = 0,
                 label: str | None = None, lazy: bool = False):
        """See :meth:`Module.function`."""
        key = (self.kind, self.current_id(), spec.key, name)
        fn = _functions.get(key)
        if fn is None:
            if spec.name_expressions is not None and name not in spec.name_expressions:
                raise KeyError(f"{name} is not among the module's name expressions")
            with _lock:
                fn = _functions.get(key)
                if fn is None:
                    fn = self.lazy_function(spec, name) if lazy and spec.name_expressions is None \
                        else self.compiled(spec).get_function(name)
                    _functions[key] = fn
        rec = self._records.get(id(fn))
        if rec is None:
            self._note(fn, f"{spec.prefix or spec.system} {label or name}".strip(), spec.system,
                       DEFAULT_BLOCK if block is None else threads(block), int(shared_mem))
        elif block is not None and rec.shape != (threads(block), int(shared_mem)):
            self._note(fn, rec.name, rec.system, threads(block), int(shared_mem))
        return fn

    def _note(self, fn, name: str, system: str, n: int, shared_mem: int) -> None:
        shape = (int(n), int(shared_mem))
        launches.record(name, fn, max(1, min(1024, shape[0])), shape[1], system=system)
        self._records[id(fn)] = _Record(name, system, shape)
        self._last[id(fn)] = (None, None)           # the next launch compares its shape again

    def launch(self, kernel, grid, block, args, shared_mem: int = 0, cooperative: bool = False) -> None:
        """Launch ``kernel`` on ``grid`` blocks of ``block`` threads (ints or tuples) with ``args``
        and ``shared_mem`` bytes of dynamic shared memory; ``cooperative``: all blocks resident at
        once (grid barriers).  A kernel of this layer launched with a new shape updates its entry
        in the launch registry."""
        self.run(kernel, grid, block, args, shared_mem, cooperative)
        last = self._last.get(id(kernel))        # the shape as last passed: one lookup per launch
        if last is not None and (last[0] != block or last[1] != shared_mem):
            self._reshape(kernel, block, shared_mem)

    def _reshape(self, kernel, block, shared_mem) -> None:
        rec = self._records[id(kernel)]
        n = threads(block)
        if rec.shape != (n, int(shared_mem)):
            self._note(kernel, rec.name, rec.system, n, int(shared_mem))
        self._last[id(kernel)] = (block, shared_mem)

    def __repr__(self):
        return f"<{type(self).__name__} {self.kind}>"


def forget_compiled(kind: str | None = None) -> None:
    """Drop the memoized modules and functions (of one device kind when given) — for tests."""
    with _lock:
        for d in (_modules, _functions):
            for k in [k for k in d if kind is None or k[0] == kind]:
                del d[k]


def compiled_count(kind: str | None = None) -> int:
    """How many modules are memoized (of one device kind when given) — for tests and tools."""
    return sum(1 for k in _modules if kind is None or k[0] == kind)
