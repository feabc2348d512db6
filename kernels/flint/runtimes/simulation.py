"""The driver of the fixed-step runtimes: compile the model, build the chosen :class:`Runtime`, step it
in calls of about :data:`CALL_S` seconds, sample the recorded states, check for blow-up."""
from __future__ import annotations

import math
import time as _time

import numpy as np

from ... import backend as bk
from ...errors import GridTooLarge, InvalidParameter, SimulationBlowUp
from ..compiler import CompileOptions, Network, compile_model
from ..model import Model
from .base import INTEGRATORS, MAPPINGS, runtime_class
from .memory import check_memory, record_bytes, samples_in

#: seconds one call into a runtime aims at (the compiled host loops of c / c-is: Ctrl+C is handled
#: between calls; the Python-stepped runtimes step the same number either way)
CALL_S = 0.1


class Simulation:
    """Integrate a compiled model for an ensemble or a line/ring of cells on one runtime.

    Parameters
    ----------
    model : Model
    runtime : a name of :data:`~kernels.flint.runtimes.RUNTIMES`: "cpu" (NumPy), "is" (bytecode
        interpreter on the GPU), "ts" (generated CUDA C), "c" / "c-is" (the TS / IS source compiled by
        the host C++ compiler: the thesis's CPU-1 TS / IS) — or a :class:`~.base.Runtime` subclass
        itself, registered or not (as scipy's ``solve_ivp`` takes ``"RK45"`` or ``RK45``)
    n : ensemble size (ignored for a network: n = network.n_cells)
    member_params : name → array of n values (per-member parameters)
    network : Network or None
    integrator : "euler" | "rk4";  dtype : "float64" | "float32"
    y0 : initial states, (n_states,) or (n_states, n); default: the model's
    threads : host threads of runtimes c and c-is (OpenMP over cells; 1 = the thesis's CPU-1)
    mapping : "cell" (one thread integrates one member/cell: the whole bytecode or generated
        function) or "expression" (the thesis's mapping: one launch a phase, one thread a bytecode,
        blocks of one warp; redundant threads and warp-parallel sums apply).  On "cpu" it selects
        the bytecode emulation (with ``bytecode_on_cpu``); the generated NumPy code has no threads.

    The runtime object is :attr:`engine`; :meth:`info` says what it reports (block size, threads,
    compile seconds).
    """

    def __init__(self, model: Model, runtime: str = "cpu", n: int = 1, member_params: dict | None = None,
                 network: Network | None = None, integrator: str = "euler", dtype: str = "float64",
                 options: CompileOptions | None = None, y0=None, bytecode_on_cpu: bool = False,
                 mapping: str = "cell", threads: int = 1):
        cls = runtime_class(runtime)            # a name of RUNTIMES, or a Runtime subclass itself
        runtime = cls.name or cls.__name__
        if integrator not in INTEGRATORS:
            raise InvalidParameter(f"integrator must be euler or rk4, got {integrator!r}")
        if dtype not in ("float64", "float32"):
            raise InvalidParameter(f"dtype must be float64 or float32, got {dtype!r}")
        if mapping not in MAPPINGS:
            raise InvalidParameter(f"mapping must be one of {', '.join(MAPPINGS)}, got {mapping!r}")
        self.model, self.runtime, self.integrator, self.dtype = model, runtime, integrator, np.dtype(dtype)
        self.mapping = mapping
        check_memory(model, network.n_cells if network is not None else int(n), len(member_params or {}),
                     cls, mapping, self.dtype.itemsize)
        t0 = _time.perf_counter()
        self.engine = cls(integrator=integrator, mapping=mapping, threads=threads, bytecode_on_cpu=bytecode_on_cpu)
        self.prog = compile_model(model, n, member_params, network, options)
        self.n = self.prog.n_members
        y = np.array([model.states[s] for s in model.states], dtype=np.float64)[:, None].repeat(self.n, 1)
        if y0 is not None:
            y0 = np.asarray(y0, dtype=np.float64)
            y = np.broadcast_to(y0.reshape(y0.shape[0], -1), y.shape).copy() if y0.ndim else y
        self.steps = 0
        self._loop_chunk = 256                   # steps a many-steps call (adapted to ~CALL_S)
        self.t = 0.0
        self.engine.build(self.prog, self.dtype)
        self.engine.set_state(y)
        self.compile_seconds = _time.perf_counter() - t0

    # --- what the runtime reports ---------------------------------------------------------------
    @property
    def block_size(self) -> int:
        return self.engine.block_size

    @property
    def block_history(self) -> list:
        return self.engine.block_history

    @property
    def threads(self) -> int | None:
        return self.engine.threads

    @property
    def source(self) -> str | None:
        return self.engine.source

    def info(self) -> dict:
        """The runtime's report (block size where tuned, host threads) and the compile seconds."""
        return {**self.engine.info(), "compile_seconds": self.compile_seconds}

    # --- driver ---------------------------------------------------------------------------------
    def advance(self, n_steps: int, dt: float, record: list[int] | None = None, every: int = 100,
                cells=None):
        """Integrate ``n_steps`` of ``dt``; sample states ``record`` (indices) every ``every`` steps.

        Returns (times (k,), samples (k, len(record), n_cells_recorded)) as NumPy arrays.
        Raises SimulationBlowUp (naming the state and time) on NaN/Inf."""
        if not (dt > 0 and math.isfinite(dt)):
            raise InvalidParameter(f"dt must be > 0, got {dt}")
        record = list(range(self.prog.n_states)) if record is None else list(record)
        every = max(1, int(every))
        cells = slice(None) if cells is None else cells
        n_rec_cells = len(range(self.n)[cells]) if isinstance(cells, slice) else len(np.atleast_1d(cells))
        recorded = samples_in(self.steps, n_steps, every) * len(record) * n_rec_cells
        need = record_bytes(recorded, self.dtype.itemsize)
        if need > 0.8 * bk.host_available_memory():
            raise GridTooLarge(f"recording {recorded:,} values ({len(record)} states × {n_rec_cells} cells every "
                               f"{every} steps) needs about {need / 2**30:.1f} GiB of host memory; "
                               f"{bk.host_available_memory() / 2**30:.1f} GiB are available: record less often")
        rt = self.engine
        rt.start()
        if rt.loops():
            times, out = self._advance_looped(int(n_steps), dt, record, every, cells)
        else:
            times, out = self._advance_stepped(int(n_steps), dt, record, every, cells)
        self.t = self.steps * dt
        if not rt.finite():
            bad = np.where(~np.isfinite(self.state()).all(axis=1))[0]
            names = [list(self.model.states)[b] for b in bad]
            raise SimulationBlowUp(f"NaN/Inf in {', '.join(names)} by {self.model.at(self.t)} "
                                   "(try a smaller dt)")
        return np.array(times), out

    def _advance_stepped(self, n_steps, dt, record, every, cells):
        """The runtime steps up to each sample (one call at most to the next), then it is sampled."""
        rt = self.engine
        times, samples = [], []
        left = int(n_steps)
        chunk = 64                                # steps a call: adapted to ~CALL_S each
        while left > 0:                           # up to the next sample at most
            k = min(left, every - self.steps % every, chunk)
            t_call = _time.perf_counter()
            rt.advance(k, dt, self.steps)
            el = _time.perf_counter() - t_call
            chunk = max(1, min(4 * chunk, int(k * CALL_S / el))) if el > 0 else 4 * chunk
            left -= k
            self.steps += k
            if self.steps % every == 0:
                times.append(self.steps * dt)
                samples.append(rt.sample(record, cells))
        return times, rt.collect(samples, len(record))

    def _advance_looped(self, n_steps, dt, record, every, cells):
        """Chunks of many steps a call (:meth:`Runtime.run_loop`, recording inside the runtime's step
        loop), sized to about :data:`CALL_S` each; the distinct recorded cells are handed down sorted
        and put back in the caller's order (and repeats) here."""
        rt = self.engine
        idx = np.arange(self.n)[cells]
        uniq, inv = np.unique(idx, return_inverse=True)
        s0 = self.steps
        samples = []
        left, chunk = n_steps, self._loop_chunk  # kept across calls: a streaming caller's chunk is one call
        while left > 0:
            k = min(left, chunk)
            t_call = _time.perf_counter()
            samples += rt.run_loop(k, dt, self.steps, every, record, uniq)
            el = _time.perf_counter() - t_call
            if k == chunk:                        # a full call: adapt to ~CALL_S
                chunk = max(1, min(4 * chunk, int(k * CALL_S / el))) if el > 0 else 4 * chunk
            left -= k
            self.steps += k
        self._loop_chunk = chunk
        times = [s * dt for s in range((s0 // every + 1) * every, self.steps + 1, every)]
        out = rt.collect(samples, len(record))
        if out.shape[0] and not np.array_equal(inv.ravel(), np.arange(out.shape[2])):
            out = out[:, :, inv.ravel()]
        return times, out

    def state(self) -> np.ndarray:
        """Current states, (n_states, n) NumPy."""
        return self.engine.state()

    def set_state(self, y) -> None:
        self.engine.set_state(y)


def network_stimulus(model: Model, n: int, first: int = 5, param: str = "stim_amplitude") -> dict:
    """Per-cell stimulus for a line/ring: the model's stimulus in the first ``first`` cells only."""
    if param not in model.params:
        return {}
    amp = np.zeros(n)
    amp[:min(first, n)] = model.params[param]
    return {param: amp}
