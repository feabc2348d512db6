"""Memory of a Flint run, checked before anything is allocated: states, per-member parameters, each
runtime's own arrays (:meth:`Runtime.memory`) and the recorded samples."""
from __future__ import annotations

# Imports inside functions: CuPy, so that it stays optional (asked only when a run needs GPU memory).
from ... import backend as bk
from ...errors import GridTooLarge, InvalidParameter
from ..model import Model
from .base import runtime_class


def memory_estimate(model: Model, n: int, n_pvar: int, runtime: str, mapping: str = "cell",
                    itemsize: int = 8, recorded: int = 0) -> tuple[int, int]:
    """(host bytes, GPU bytes) a Simulation of ``n`` members needs, roughly: states (initial, current,
    next, two RK4 stages, accumulator), per-member parameters, per function one value a member
    (the NumPy runtime's temporaries; the expression mapping's global slots), and ``recorded``
    sampled values (samples × recorded states × cells; held twice while :meth:`Simulation.advance`
    stacks them)."""
    ns, nf = model.n_states, len(model.assigns) + model.n_states
    own_host, own_gpu = runtime_class(runtime).memory(ns, nf, n, n_pvar, mapping, itemsize)
    host = 8 * n * (2 * ns + n_pvar) + own_host + record_bytes(recorded, itemsize)
    gpu = own_gpu
    return host, gpu


def record_bytes(recorded: int, itemsize: int = 8) -> int:
    """Host bytes of ``recorded`` sampled values: the per-sample copies and their stacked array."""
    return 2 * int(recorded) * int(itemsize)


def samples_in(steps_done: int, n_steps: int, every: int) -> int:
    """Samples :meth:`Simulation.advance` records over ``n_steps`` steps after ``steps_done``."""
    every = max(1, int(every))
    return (int(steps_done) + int(n_steps)) // every - int(steps_done) // every


def check_memory(model: Model, n: int, n_pvar: int, runtime: str, mapping: str = "cell", itemsize: int = 8,
                 recorded: int = 0) -> None:
    """Raise GridTooLarge before anything is allocated when ``n`` members (and ``recorded`` sampled
    values, see :func:`memory_estimate`) cannot fit in host or GPU memory."""
    if n < 1:
        raise InvalidParameter(f"the number of members/cells must be ≥ 1, got {n}")
    host, gpu = memory_estimate(model, n, n_pvar, runtime, mapping, itemsize, recorded)
    what = f"{n:,} members/cells of {model.name} ({model.n_states} states)"
    if recorded:
        what += f" with {recorded:,} recorded values"
    free_host = bk.host_available_memory()
    if host > 0.8 * free_host:
        raise GridTooLarge(f"{what} need about {host / 2**30:.1f} GiB of host memory; "
                           f"{free_host / 2**30:.1f} GiB are available: use fewer members or cells")
    if gpu:
        try:                                     # the GPU's free memory without selecting it as the app's backend
            import cupy as cp
            free = bk.Backend("gpu", cp).free_memory()
        except Exception:                        # no CuPy / no device: the runtime reports that itself
            return
        if gpu > 0.9 * free:
            raise GridTooLarge(f"{what} need about {gpu / 2**30:.1f} GiB of GPU memory; {free / 2**30:.1f} GiB "
                               "are free: use fewer members or cells")
