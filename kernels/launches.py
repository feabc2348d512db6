"""Launch registry: the app's compiled CUDA kernels and the shape each is launched with.

Every module that compiles a kernel records it here — display name, the compiled
``cupy.RawKernel``, threads per block and dynamic shared memory per block of the launch the
module makes — so that tools which inspect kernels (the occupancy calculator's "My kernels"
table, :mod:`kernels.occupancy.gpu`) only *read* this registry and never import, or parse the
names of, another compute system's kernels.

A :class:`SweepCase` is a kernel together with a ``launch(block)`` callable, for timing one
kernel over block sizes (built by the system that owns the kernel; see
:mod:`kernels.app_kernels`).

This module sits below every compute system: it imports nothing from ``kernels``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

_lock = threading.Lock()
_launches: dict[str, "Launch"] = {}


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


def record(name: str, kernel, block: int, dynamic_smem: int = 0, system: str = ""):
    """Record (or update) the launch of ``kernel`` under ``name``; returns ``kernel``.

    Recording the same name again replaces its entry (the latest launch shape wins) and keeps
    its place in compile order."""
    launch = Launch(str(name), kernel, int(block), int(dynamic_smem), str(system))
    with _lock:
        _launches[launch.name] = launch
    return kernel


def recorded(system: str | None = None) -> list[Launch]:
    """Every recorded launch in compile order (only ``system``'s when given)."""
    with _lock:
        out = list(_launches.values())
    return [ln for ln in out if system is None or ln.system == system]


def forget(system: str | None = None) -> None:
    """Drop the recorded launches (of one system when given) — for tests."""
    with _lock:
        for name in [n for n, ln in _launches.items() if system is None or ln.system == system]:
            del _launches[name]


@dataclass(frozen=True)
class SweepCase:
    """A kernel prepared for a block-size sweep: ``launch(block)`` runs it once with ``block``
    threads per block over ``work`` items (``unit``: what throughput is counted in)."""
    name: str
    kernel: object
    launch: Callable[[int], None]
    work: int
    unit: str
