"""The sweep layer's base: the task registry (:data:`TASKS`), :class:`SweepTask`, the per-worker
array backend and the per-task timing every row carries.

Task classes live in :mod:`.tasks` (``ch``), :mod:`.flint_tasks` (``flint-slice``), :mod:`.graph_tasks`,
:mod:`.suite_tasks` and :mod:`.experiment_task` (``experiment``: any paper figure or table);
``kernels/sweep/__init__.py`` registers them all with :func:`register`, so :func:`make_task` sees
every task (this module imports none of them: no import circle).  Imports inside functions here keep CuPy optional.
Qt-free.
"""
from __future__ import annotations

import os
import time

from ..errors import BackendUnavailable
from ..registry import Registry
import socket
from .. import backend as bk

#: name → task class; filled by the package's ``__init__``
TASKS: Registry[type["SweepTask"]] = Registry("sweep task")


def register(cls):
    """Add a task class to :data:`TASKS` under ``cls.name`` (the package ``__init__`` calls it)."""
    return TASKS.register(cls)


def make_task(name, **fixed) -> "SweepTask":
    """The task ``name`` (or task class) built from its fixed parameters; InvalidParameter naming
    the choices for an unknown name."""
    return TASKS.get(name)(**fixed)


class SweepTask:
    """Base class.  Subclasses set ``name``, ``columns`` (output columns), ``varies`` (the point
    keys allowed), fill ``self.fixed`` in ``__init__`` and implement ``run``."""

    name = ""
    columns: tuple[str, ...] = ()
    #: exceptions that abort the sweep instead of filling one point's error cell
    fatal: tuple[type, ...] = (BackendUnavailable,)
    #: a GPU task whose points use the GPU lightly (one small launch) and the CPU mostly (parsing,
    #: compiling): a local cluster then runs one worker process per core (``workers``) sharing the
    #: GPU, instead of one per GPU
    shares_gpu: bool = False

    def __init__(self, **fixed):
        self.fixed = dict(fixed)

    def needs_gpu(self) -> bool:
        """True when every point needs a CUDA GPU (workers without one cannot take it)."""
        return False

    def wants_gpu(self) -> bool:
        """True when a local cluster should be one worker per GPU (a GPU task, or auto on a GPU)."""
        return self.needs_gpu()

    def check_point(self, point: dict) -> dict:
        """The point with typed values, or InvalidParameter naming what is wrong (before any work)."""
        return dict(point)

    def run(self, point: dict):
        raise NotImplementedError


# ----------------------------------------------------------------------------- backends in workers
_BACKENDS: dict = {}


def worker_backend(choice: str):
    """The array backend of this process for ``choice`` (auto / cpu / gpu), made once.  The
    process-wide selection (``backend.current()``) is left as it was: with ``--scheduler none`` the
    tasks run inside the GUI or CLI process, whose own backend must not change under it."""
    if choice not in _BACKENDS:
        before = bk.current()
        _BACKENDS[choice] = bk.select(choice)
        if before.name != _BACKENDS[choice].name:
            bk.select(before.name)
    return _BACKENDS[choice]


def gpu_wanted(choice: str) -> bool:
    """Whether backend ``choice`` (auto / cpu / gpu) means a GPU here."""
    if choice == "gpu":
        return True
    if choice == "cpu":
        return False
    return bk.gpu_available()[0]


def timed(fn, *args):
    """(result, seconds, "host:pid") of ``fn(*args)`` — the per-task timing every row carries."""
    t0 = time.perf_counter()
    res = fn(*args)
    return res, time.perf_counter() - t0, f"{socket.gethostname()}:{os.getpid()}"
