"""The Runtime base class and the registry of Flint's fixed-step runtimes (name → class).

A runtime integrates a compiled :class:`~kernels.flint.compiler.Program` for ``n`` members/cells
with an explicit integrator, one thread a member (paper 004 §5.5–5.6):

  Euler  y' = y + dt·f(t, y)
  RK4    k1..k4 at (t, y), (t+dt/2, y+dt/2·k1), (t+dt/2, y+dt/2·k2), (t+dt, y+dt·k3);
         acc = k1/6 + k2/3 + k3/3, y' = y + dt·(acc + k4/6) — one kernel launch a stage so that
         coupled cells read their neighbours' stage values.

:class:`~kernels.flint.runtimes.simulation.Simulation` is the driver (sampling, blow-up check);
a runtime only builds, steps and hands back its states.  Like scipy's ``solve_ivp`` METHODS table
of ``OdeSolver`` classes: a new runtime is one module with one :class:`Runtime` subclass plus one
:func:`register` line (``kernels/flint/runtimes/__init__.py``); the CLI's ``--runtime`` choices,
the GUI's runtime list and its tooltips read :data:`RUNTIMES`.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InvalidParameter
from ...registry import Registry

INTEGRATORS = ("euler", "rk4")
MAPPINGS = ("cell", "expression")
RK4_STAGES = ((0.0, 1.0 / 6.0), (0.5, 1.0 / 3.0), (0.5, 1.0 / 3.0), (1.0, 1.0 / 6.0))   # (c, weight)


class Runtime:
    """One engine of the fixed-step schemes.  Class attributes describe it to callers:

    name      the ``--runtime`` value;  help: one line for ``--help`` and the GUI tooltip
    device    "cpu" or "gpu": where the states live (a GPU runtime needs CuPy and a device)
    compiler  what compiles each model for it (a note is shown while it runs), or None
    mappings  the thread mappings it runs (:data:`MAPPINGS`)
    threaded  whether ``threads`` (host threads over cells) applies

    Life cycle: ``rt = cls(integrator, mapping, threads)``; ``rt.build(prog, dtype)`` compiles and
    allocates; ``rt.set_state(y)``; ``rt.advance(k, dt, step0)`` takes k steps from step number
    ``step0`` (t = step·dt); ``rt.state()`` / ``rt.sample(...)`` read the states back."""

    name: ClassVar[str] = ""
    help: ClassVar[str] = ""
    device: ClassVar[str] = "cpu"
    compiler: ClassVar[str | None] = None
    mappings: ClassVar[tuple] = MAPPINGS
    threaded: ClassVar[bool] = False

    def __init__(self, integrator: str = "euler", mapping: str = "cell", threads: int = 1,
                 bytecode_on_cpu: bool = False):
        if mapping not in self.mappings:
            raise InvalidParameter(f"runtime {self.name} runs the {' or '.join(self.mappings)} mapping "
                                   f"{self.mapping_note()}")
        if self.threaded and int(threads) < 1:
            raise InvalidParameter(f"threads must be ≥ 1, got {threads}")
        self.integrator, self.mapping = integrator, mapping
        self.threads = int(threads) if self.threaded else None
        self.bytecode_on_cpu = bool(bytecode_on_cpu)
        self.block_size = 128               # CUDA threads a block (the GPU runtimes' cell mapping)
        self.block_history: list = []       # (block size, ms a window) while a runtime tunes it
        self.source: str | None = None     # the generated source it compiled, if any
        self.prog = None
        self.dtype = np.dtype("float64")

    # --- what callers ask before building ------------------------------------------------------
    @classmethod
    def mapping_note(cls) -> str:
        """Why other mappings do not apply (appended to the refusal)."""
        return ""

    @classmethod
    def unavailable(cls) -> str | None:
        """None when this runtime can run here, else one line saying what is missing."""
        return None

    @classmethod
    def memory(cls, n_states: int, n_functions: int, n: int, n_pvar: int, mapping: str,
               itemsize: int) -> tuple[int, int]:
        """(host bytes, GPU bytes) of this runtime's own arrays for ``n`` members (the driver's
        states and parameters are counted by :func:`~kernels.flint.runtimes.memory.memory_estimate`)."""
        return 0, 0

    # --- the engine ----------------------------------------------------------------------------
    def build(self, prog, dtype) -> None:
        """Compile/prepare ``prog`` (a :class:`~kernels.flint.compiler.Program`) in ``dtype``."""
        raise NotImplementedError

    @property
    def n(self) -> int:
        return self.prog.n_members

    @property
    def net_code(self) -> int:
        net = self.prog.network
        return {None: 0, "line": 1, "ring": 2}[net.kind if net else None]

    def start(self) -> None:
        """Called at the start of every :meth:`Simulation.advance` (the translator's tuning window)."""

    def advance(self, k: int, dt: float, step0: int) -> None:
        """Take ``k`` steps of ``dt`` from step number ``step0`` (t = step·dt), in place."""
        raise NotImplementedError

    def loops(self) -> bool:
        """Whether :meth:`run_loop` takes many steps a call with the recording inside (the driver
        then hands it whole chunks; issue 23).  Default False: the driver steps to each sample."""
        return False

    def run_loop(self, k: int, dt: float, step0: int, every: int, record: list, cells: np.ndarray) -> list:
        """Take ``k`` steps from step number ``step0`` and return the samples taken after every step
        whose number is a multiple of ``every``: a list of (len(record), len(cells)) arrays (``cells``
        sorted distinct member indices).  This default steps to each sample with :meth:`advance` and
        :meth:`sample` — the reference of a runtime whose kernel records inside its step loop."""
        out, step, end = [], int(step0), int(step0) + int(k)
        while step < end:
            nxt = min(end, (step // every + 1) * every)
            self.advance(nxt - step, dt, step)
            step = nxt
            if step % every == 0:
                out.append(self.sample(record, cells))
        return out

    def state(self) -> np.ndarray:
        """Current states, (n_states, n) NumPy."""
        return np.asarray(self.y)

    def set_state(self, y) -> None:
        """Replace the states: any array of n_states × n values."""
        self.y = np.asarray(y, dtype=self.dtype).reshape(self.prog.n_states, self.n).copy()

    def sample(self, record: list, cells):
        """A copy of the states ``record`` of the members/cells ``cells`` (kept on the device)."""
        return self.y[record][:, cells].copy()

    def collect(self, samples: list, n_record: int) -> np.ndarray:
        """The samples of one :meth:`Simulation.advance` stacked as (k, n_record, cells), NumPy."""
        return np.stack(samples) if samples else np.zeros((0, n_record, 0))

    def finite(self) -> bool:
        """Whether every state is finite (the driver's blow-up check)."""
        return bool(np.all(np.isfinite(self.y)))

    def synchronize(self) -> None:
        """Wait for queued device work (timing)."""

    def info(self) -> dict:
        """What a caller shows about the run: block size (tuned GPU runtimes), host threads."""
        return {"runtime": self.name, "block_size": None, "threads": self.threads}


#: the registry (:class:`~kernels.registry.Registry`): name → Runtime subclass, in the order the CLI
#: lists them; filled in ``kernels/flint/runtimes/__init__.py``.  A Runtime subclass is accepted
#: wherever a name is (:func:`runtime_class`), registered or not.
RUNTIMES: Registry[type[Runtime]] = Registry("Flint runtime", base=Runtime)


def register(cls: type[Runtime]) -> type[Runtime]:
    """Add a runtime class under ``cls.name``; returns the class (usable as a decorator).  A different
    class under a taken name is a ValueError (the registry's one duplicate policy)."""
    if not (isinstance(cls, type) and issubclass(cls, Runtime)) or not cls.name:
        raise InvalidParameter(f"a Flint runtime is a named Runtime subclass, got {cls!r}")
    return RUNTIMES.register(cls)


def unregister(name: str) -> None:
    """Remove runtime ``name`` (tests that registered a toy one)."""
    RUNTIMES.unregister(name)


def runtime_class(name: str | type[Runtime]) -> type[Runtime]:
    """The class of runtime ``name`` (a Runtime subclass is returned as is); InvalidParameter naming
    the choices otherwise."""
    try:
        return RUNTIMES.get(name)
    except TypeError:                       # an unhashable value
        raise InvalidParameter(f"unknown Flint runtime {name!r}: use one of {', '.join(RUNTIMES)}") from None


def runtime_help() -> dict[str, str]:
    """name → one line of help, for ``--help`` and tooltips."""
    return {k: c.help for k, c in RUNTIMES.items()}
