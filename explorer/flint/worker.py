"""Runs of the Flint workspace off the GUI thread: the Flint runtimes chunk by chunk, and the SBML
reference simulator (paper 004 ch. 5).  Views only: the integrators are ``kernels.flint``."""
from __future__ import annotations

import inspect
import os
import time

from PyQt6.QtCore import pyqtSignal

from kernels.errors import SimulationBlowUp
from kernels.flint.protocols import one_way_wave
from kernels.flint.runtimes import runtime_class
from kernels.flint.schemes import engine_help
from kernels.flint.runtimes.auto import AUTO, AUTO_HELP
from kernels.flint.sbml.reference import run_reference

from ..jobs import Job

HOST_THREADS = max(1, (os.cpu_count() or 2) - 1)   # c / c-is: all cores but one (the GUI keeps one)
CHUNK_SECONDS = 1 / 30   # integration time per chunk streamed to the GUI: ≥ 30 trace updates a second
INIT_UNIFORM, INIT_ONE_WAY = "uniform (stimulus)", "one-way wave (re-entry)"
PROGRESS_SCALE = 1000    # the progress bar counts per mille (a run may take more steps than a C int)
RUNTIME_TOOLTIP = ("Engine (--engine): where and how the run is carried out<br>"
                   + "<br>".join(f"<b>{k}</b>: {v}" for k, v in {AUTO: AUTO_HELP, **engine_help()}.items()))


class _RunWorker(Job):
    """A run off the GUI thread (:class:`explorer.jobs.Job`): its config; pause / cancel act
    between chunks; ``steps(done, per_second)`` after each chunk ("done" a Python int: more than a
    C int holds for long runs); ``finished()`` at the end, whatever the outcome."""
    steps = pyqtSignal(object, float)

    def __init__(self, cfg: dict, parent=None):
        super().__init__(self.TITLE, parent)
        self.cfg = cfg
        self.sim = None


class FlintWorker(_RunWorker):
    """Integrates ``cfg["run"]`` (a :class:`~kernels.flint.run.FlintRun`) chunk by chunk — its
    :meth:`~kernels.flint.run.FlintRun.simulation`, exactly the run a session saves — and emits
    (times, samples) per chunk.  A blow-up's message gets ``cfg["blowup_hint"]`` appended (a model from
    an SBML file: the stiff methods to choose)."""
    TITLE = "the Flint run"
    chunk = pyqtSignal(object, object)
    note = pyqtSignal(str)

    def __init__(self, cfg: dict, parent=None):
        super().__init__(cfg, parent)
        self.y0 = None

    @property
    def run(self):
        """The FlintRun this worker integrates."""
        return self.cfg["run"]

    def work(self):
        run = self.run
        if run.protocol == "one-way":
            net = run.network
            self.note.emit(f"preparing the one-way wave: a {2 * net.n_cells}-cell line stimulated at one end…")
            self.y0 = one_way_wave(run.model, net.n_cells, net.D, state=net.state, dt=run.dt,
                                   integrator=run.integrator, runtime=run.runtime)
            i = self.y0.info
            self.note.emit(f"one-way wave: pulse {i['pulse_cells']} cells (front at cell {i['front']}), "
                           f"line velocity {i['cv_cells_per_ms']:.3f} cells/ms → one revolution ≈ "
                           f"{net.n_cells / i['cv_cells_per_ms']:.0f} ms")
        what = runtime_class(run.runtime).compiler
        choice = run.choice                     # engine "auto": what it picked and why
        said = f" — {choice}" if choice else ""
        if what:                                # compiles take seconds to a minute for the large models
            self.note.emit(f"compiling {run.model.name} ({run.model.n_states} states) for engine "
                           f"{run.engine} with {what}… (cached afterwards){said}")
        elif choice:
            self.note.emit(str(choice))
        self.sim = run.simulation(y0=self.y0)
        if what:
            self.note.emit(f"{run.model.name}: compiled for engine {run.engine} in "
                           f"{self.sim.compile_seconds:.1f} s{said}")
        total, done, t0, every = run.steps, 0, time.perf_counter(), run.every
        record = run.record_index
        chunk = max(every, min(2000, max(every, total // 50)) // every * every)
        while done < total and not self.checkpoint():      # waits while paused
            k = min(chunk, total - done)
            t1 = time.perf_counter()
            try:
                t, y = self.sim.advance(k, run.dt, record=record, every=every)
            except SimulationBlowUp as exc:
                hint = self.cfg.get("blowup_hint")
                if not hint:
                    raise
                raise SimulationBlowUp(f"{exc}; {hint}") from exc
            took = time.perf_counter() - t1
            done += k
            self.chunk.emit(t, y)
            self.steps.emit(done, done / max(time.perf_counter() - t0, 1e-9))
            # about CHUNK_SECONDS of integration per chunk: a long run streams ~30 chunks a
            # second, not thousands of tiny ones (each a signal and a copy in the GUI thread)
            if k == chunk and took > 0:
                want = chunk * min(4.0, max(0.25, CHUNK_SECONDS / took))
                chunk = max(every, int(want) // every * every)
            time.sleep(0.001)                   # let the GUI thread take the GIL


class EnsembleWorker(_RunWorker):
    """Runs ``cfg["run"]`` (a :class:`~kernels.flint.adaptive_run.EnsembleRun`: an SBML model with its
    events, as an ensemble on an adaptive engine); emits (first index, times, samples) as the output
    grid's prefixes finish; ``result`` holds the :class:`~kernels.flint.adaptive_run.EnsembleResult`
    (with the event firings) at the end."""
    TITLE = "the adaptive ensemble run"
    chunk = pyqtSignal(int, object, object)

    def __init__(self, cfg: dict, parent=None):
        super().__init__(cfg, parent)
        self.result = None

    def work(self):
        t0 = time.perf_counter()

        def on_chunk(i0, t, y):
            self.chunk.emit(i0, t, y)
            n = i0 + len(t)
            self.steps.emit(n, n / max(time.perf_counter() - t0, 1e-9))
            time.sleep(0.001)                       # let the GUI thread take the GIL

        self.result = self.cfg["run"].run(on_chunk=on_chunk, control=self.checkpoint)


class SbmlWorker(_RunWorker):
    """Runs the SBML reference simulator; emits (first index, times, samples) as output points finish."""
    TITLE = "the SBML reference run"
    chunk = pyqtSignal(int, object, object)

    def __init__(self, cfg: dict, parent=None):
        super().__init__(cfg, parent)
        self.result = None
        self.events = None                      # [(0, time, event id)] when the reference reports firings

    def work(self):
        c, t0 = self.cfg, time.perf_counter()

        def on_chunk(i0, t, y):
            self.chunk.emit(i0, t, y[:, :, None])
            n = i0 + len(t)
            self.steps.emit(n, n / max(time.perf_counter() - t0, 1e-9))
            time.sleep(0.001)                       # let the GUI thread take the GIL

        kw = {}
        if "on_event" in inspect.signature(run_reference).parameters:     # the reference reports firings
            self.events = []
            kw["on_event"] = lambda t, eid: self.events.append((0, float(t), eid))
        self.result = run_reference(c["sbml"], c["times"], c["record"], params=c["params"],
                                    on_chunk=on_chunk, chunk=c.get("chunk", 200), control=self.checkpoint, **kw)
