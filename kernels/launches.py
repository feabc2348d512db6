"""Launch registry: the app's compiled CUDA kernels and the shape each is launched with.

Every module that compiles a kernel records it here — display name, the compiled
``cupy.RawKernel``, threads per block and dynamic shared memory per block of the launch the
module makes — so that tools which inspect kernels (the occupancy calculator's "My kernels"
table, :mod:`kernels.occupancy.gpu`) only *read* this registry and never import, or parse the
names of, another compute system's kernels.

A :class:`SweepCase` is a kernel together with a ``launch(block)`` callable, for timing one
kernel over block sizes (built by the system that owns the kernel; see
:mod:`kernels.app_kernels`).

Providers let a view reach kernels that are not compiled yet without importing their system: the
module above the systems (:mod:`kernels.app_kernels`, imported by the main window) registers

* :func:`provide` — a named kernel compiled on demand (:func:`resolve`; the occupancy presets'
  ``"fw-mm t=64"``);
* :func:`provide_compiler` — a function compiling a group of the app's kernels (:func:`compile_all`);
* :func:`provide_sweep` — a :class:`SweepCase` factory by kernel name (:func:`sweep_case`).

The four tables (:data:`LAUNCHES`, :data:`PROVIDERS`, :data:`COMPILERS`, :data:`SWEEPS`) are
:class:`~kernels.registry.Registry` instances; each entry is replaced on purpose (``replace=True``:
the latest launch shape, the latest provider registered under a key).

This module sits below every compute system: it imports nothing from ``kernels`` but the registry type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .registry import Registry


@dataclass(frozen=True)
class Launch:
    """One compiled kernel and its launch shape.

    ``name``: unique display name, prefixed by the system (``"CH ch_point<float, 0, 2, 0>"``);
    ``kernel``: the compiled ``cupy.RawKernel``; ``block``: threads per block (1 … 1024);
    ``dynamic_smem``: dynamic shared memory per block in bytes; ``system``: the recording system."""
    name: str
    kernel: object
    block: int
    dynamic_smem: int = 0
    system: str = ""

    def __post_init__(self):
        if not self.name:
            raise ValueError("a launch needs a name")
        if not 1 <= int(self.block) <= 1024:
            raise ValueError(f"{self.name}: {self.block} threads per block is outside 1 … 1024")
        if int(self.dynamic_smem) < 0:
            raise ValueError(f"{self.name}: negative dynamic shared memory")

    @property
    def on_host(self) -> bool:
        """True for a kernel the host GPU layer compiled (:mod:`kernels.gpu.host`: it runs on the CPU
        and the CUDA driver cannot be asked about it); False for a ``cupy.RawKernel``."""
        return bool(getattr(self.kernel, "on_host", False))


#: name → :class:`Launch`, in compile order (a kernel recorded again keeps its place)
LAUNCHES: Registry[Launch] = Registry("kernel launch")


def record(name: str, kernel, block: int, dynamic_smem: int = 0, system: str = ""):
    """Record (or update) the launch of ``kernel`` under ``name``; returns ``kernel``.

    Recording the same name again replaces its entry (the latest launch shape wins) and keeps
    its place in compile order."""
    LAUNCHES.register(Launch(str(name), kernel, int(block), int(dynamic_smem), str(system)), replace=True)
    return kernel


def recorded(system: str | None = None, device_only: bool = False) -> list[Launch]:
    """Every recorded launch in compile order (only ``system``'s when given; only the CUDA device's,
    not the host GPU layer's, with ``device_only``)."""
    return [ln for ln in LAUNCHES.values()
            if (system is None or ln.system == system) and not (device_only and ln.on_host)]


def forget(system: str | None = None) -> None:
    """Drop the recorded launches (of one system when given) — for tests."""
    for ln in recorded(system):
        LAUNCHES.unregister(ln.name)


@dataclass(frozen=True)
class SweepCase:
    """A kernel prepared for a block-size sweep: ``launch(block)`` runs it once with ``block``
    threads per block over ``work`` items (``unit``: what throughput is counted in)."""
    name: str
    kernel: object
    launch: Callable[[int], None]
    work: int
    unit: str


# ------------------------------------------------------------------------------------- providers
#: key → factory() compiling a kernel and returning its :class:`Launch` (:func:`provide`)
PROVIDERS: Registry[Callable[[], Launch]] = Registry("provided kernel")
#: name → compile_fn() compiling (and so recording) a group of the app's kernels (:func:`provide_compiler`)
COMPILERS: Registry[Callable[[], None]] = Registry("kernel compiler")
#: kernel name → factory(size) of its :class:`SweepCase` (:func:`provide_sweep`)
SWEEPS: Registry[Callable[[int], SweepCase]] = Registry("sweep kernel")


def provide(key: str, factory: Callable[[], Launch]) -> None:
    """Register ``factory()`` (compiles a kernel, returns its :class:`Launch`) under ``key`` (again: replaced)."""
    PROVIDERS.register(factory, name=str(key), replace=True)


def provided() -> list[str]:
    """The keys :func:`resolve` knows, in registration order."""
    return PROVIDERS.names()


def resolve(key: str) -> Launch:
    """The launch of the kernel provided under ``key``, compiled now if needed (and recorded);
    ``KeyError`` when nothing provides it (its system's provider module was not imported)."""
    factory = PROVIDERS.get(key, None)
    if factory is None:
        raise KeyError(f"no kernel is provided under {key!r}")
    ln = factory()
    if not any(x.kernel is ln.kernel for x in recorded()):    # the GPU layer may have recorded it already
        record(ln.name, ln.kernel, ln.block, ln.dynamic_smem, ln.system)
    return ln


def provide_compiler(name: str, compile_fn: Callable[[], None]) -> None:
    """Register ``compile_fn()``, which compiles (and so records) a group of the app's kernels."""
    COMPILERS.register(compile_fn, name=str(name), replace=True)


def compile_all(names=None) -> list[str]:
    """Run every registered compiler (those named in ``names`` when given); the names of those
    that ran (none registered: [])."""
    todo = [(n, fn) for n, fn in COMPILERS.items() if names is None or n in names]
    for _name, fn in todo:
        fn()
    return [name for name, _fn in todo]


def provide_sweep(name: str, factory: Callable[[int], SweepCase]) -> None:
    """Register a :class:`SweepCase` factory (taking a problem size) for block-size sweeps."""
    SWEEPS.register(factory, name=str(name), replace=True)


def sweep_kernels() -> list[str]:
    """The kernel names :func:`sweep_case` takes."""
    return SWEEPS.names()


def sweep_case(name: str, size: int) -> SweepCase:
    """The sweep case ``name`` at problem size ``size``; InvalidParameter (a ValueError) naming the
    choices for an unknown name."""
    return SWEEPS.get(name)(int(size))
