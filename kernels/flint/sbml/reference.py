"""The SBML reference simulator as a Flint runtime ("sbml"): a thin adapter for the CLI and the workspace.

The simulator itself is :mod:`kernels.flint.sbml.system` (reading) and :mod:`kernels.flint.sbml.solver`
(LSODA, root-found events, delays, algebraic rules, fast reactions).  This module only

* loads a file into an :class:`SbmlReference` (the system, compiled once to check it runs, its
  parameters with what may be edited, the variables that can be recorded);
* applies parameter overrides to a copy of the system (:func:`with_parameters`);
* runs it on an output grid (:func:`run_reference`), optionally streaming the finished output points
  in chunks and letting the caller stop (or pause) the integration.

Streaming.  :func:`kernels.flint.sbml.solver.simulate` reports every output point through its
``on_output`` hook (a point is final once a later one is reported) and polls ``stop`` every
integrator step; the adapter hands finished points to ``on_chunk`` in chunks and, when the run ends,
checks them against what ``simulate`` returned (if anything differs the whole series is sent again,
``on_chunk(0, …)``), so the caller always ends with ``simulate``'s numbers.  No Qt here.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import ExplorerError, GridTooLarge, InvalidParameter
from ... import backend
from .simulate import Stopped, simulate
from .solver import CompiledSbml
from .system import SbmlSystem, read_sbml_system

RUNTIME = "sbml"
LABEL = "sbml (CPU reference)"
TOOLTIP = ("The SBML reference simulator (kernels/flint/sbml/solver.py): CPU, scipy LSODA (rtol 1e-10) with "
           "events located by root finding, delays, algebraic rules and fast reactions; 1780 of the 1787 "
           "SBML Test Suite cases pass.  One model instance; dt is the output interval.")


@dataclass
class SbmlReference:
    """An SBML model loaded for the reference simulator."""
    name: str
    path: str
    system: SbmlSystem
    n_states: int
    params: dict                                     # parameter id -> value (the file's)
    roles: dict                                      # parameter id -> "" | note (see parameter_roles)
    recordable: list = field(default_factory=list)   # species, then varying parameters, then the rest

    @property
    def editable(self) -> list:
        return [p for p in self.params if not self.roles[p].startswith("fixed")]

    def default_record(self) -> list:
        """Every species and every parameter that is not constant (what changes in time): species
        first, then rate-rule variables (the model's ODE states), then the rest."""
        return default_record(self.system)


def recordable(s: SbmlSystem) -> list:
    """What a run of ``s`` can record: species, then varying parameters, then the rest, then compartments."""
    varying = [x for x, v in s.parameters.items() if not v.constant]
    return list(s.species) + varying + [x for x in s.parameters if x not in varying] + list(s.compartments)


def default_record(s: SbmlSystem) -> list:
    """:meth:`SbmlReference.default_record` of the system ``s``: every species and every parameter that
    is not constant, species first, then rate-rule variables; else the first recordable variable."""
    varying = [p for p, v in s.parameters.items() if not v.constant]
    varying.sort(key=lambda p: p not in s.rate_rules)          # stable: ODE states first
    return list(s.species) + varying or recordable(s)[:1]


def parameter_roles(s: SbmlSystem) -> dict:
    """'' for a plain parameter; 'fixed: …' when its value is not its own (assignment rule, initial
    assignment); 'initial value …' when the value is the start of a rate rule or of event changes."""
    roles = {}
    targets = {v for ev in s.events for v, _ in ev.assignments}
    for p in s.parameters:
        if p in s.assignment_rules:
            roles[p] = "fixed: assignment rule"
        elif p in s.initial_assignments:
            roles[p] = "fixed: initial assignment"
        elif p in s.rate_rules:
            roles[p] = "initial value (rate rule)"
        elif p in targets:
            roles[p] = "initial value (changed by events)"
        else:
            roles[p] = ""
    return roles


def load_reference(path, allow_outside: bool | None = None) -> SbmlReference:
    """Read and compile an SBML file for the reference simulator (raises ExplorerError subclasses:
    InvalidParameter for malformed input, Unsupported for what the simulator refuses).  The file and
    the files it names pass the file gate (:func:`.system.read_sbml_system`); ``system.files_read``
    lists them."""
    p = Path(path)
    system = read_system(p, allow_outside)
    try:
        c = CompiledSbml(system)
    except (RecursionError, MemoryError):
        raise InvalidParameter(f"{p.name}: the model's math is nested too deeply (or is too large) to read") from None
    s = system
    return SbmlReference(name=p.stem, path=str(p), system=system, n_states=len(c.states),
                         params={x: v.value for x, v in s.parameters.items()}, roles=parameter_roles(s),
                         recordable=recordable(s))


def read_system(path, allow_outside: bool | None = None) -> SbmlSystem:
    """The SBML file at ``path`` read (:func:`.system.read_sbml_system`, through the file gate), with
    :func:`load_reference`'s errors for a missing file and for math nested too deeply — for a caller
    that lowers the model itself and needs no reference simulator."""
    p = Path(path)
    if not p.exists():
        raise InvalidParameter(f"no such model file: {path}")
    try:
        return read_sbml_system(str(p), allow_outside=allow_outside)
    except (RecursionError, MemoryError):
        raise InvalidParameter(f"{p.name}: the model's math is nested too deeply (or is too large) to read") from None


def reference_fallback(path) -> SbmlReference | None:
    """The model for the reference simulator when ``path`` is an SBML file it reads and compiles
    (used after the Flint importer refused the file), else None."""
    try:
        p = Path(path)
        if not p.is_file() or p.suffix.lower() not in (".xml", ".sbml"):
            return None
        return load_reference(p)
    except (ExplorerError, OSError, ImportError):
        return None


def reference_hint(path) -> str:
    """For an error of the Flint importer on ``path``: a hint to use ``--method lsoda`` when the
    reference simulator reads and compiles the same file, else ''."""
    return ("; the SBML reference simulator runs it: use --method lsoda (old: --runtime sbml)"
            if reference_fallback(path) else "")


def with_parameters(ref: SbmlReference | SbmlSystem, overrides: dict | None) -> SbmlSystem:
    """A copy of the system with parameter values replaced (before initial values are solved)."""
    s = ref.system if isinstance(ref, SbmlReference) else ref
    if not overrides:
        return s
    roles = parameter_roles(s)
    s = copy.deepcopy(s)
    for k, v in overrides.items():
        if k not in s.parameters:
            raise InvalidParameter(f"{k!r} is not a parameter of {s.source}")
        if roles[k].startswith("fixed"):
            raise InvalidParameter(f"{k!r} is set by its {roles[k][7:]} in {s.source}; it cannot be edited")
        v = float(v)
        if not math.isfinite(v):
            raise InvalidParameter(f"{k}: {v} is not a finite number")
        s.parameters[k].value = v
    return s


#: most output points one reference run may produce (each holds every variable of the model)
MAX_OUTPUT_POINTS = 10_000_000


def n_output_points(t_end: float, dt: float, every: int = 1) -> int:
    """How many points :func:`output_times` returns (refusing grids it would refuse)."""
    if not (t_end > 0 and dt > 0 and every >= 1 and math.isfinite(t_end) and math.isfinite(dt)):
        raise InvalidParameter("t_end and dt must be finite and > 0, every ≥ 1")
    ratio = t_end / dt
    if not ratio < MAX_OUTPUT_POINTS * float(every):
        raise InvalidParameter(f"t_end / dt = {ratio:.3g} output intervals with every {every}: more than "
                               f"{MAX_OUTPUT_POINTS:,} output points; use a larger dt or every")
    steps = int(round(ratio))
    if steps < 1:
        raise InvalidParameter(f"dt = {dt:g} is larger than t_end = {t_end:g}: no output interval fits")
    return steps // every + 1 + (1 if steps % every else 0)


def check_output_memory(ref: SbmlReference, n_points: int, n_record: int) -> None:
    """GridTooLarge before a run whose output grid cannot fit in host memory: the solver keeps every
    model variable at every output point (plus the recorded columns, twice)."""
    cols = len(ref.recordable) + len(ref.system.reactions) + len(ref.system.species) + 2 * n_record + 1
    need = 8 * int(n_points) * cols
    avail = backend.host_available_memory()
    if need > 0.8 * avail:
        raise GridTooLarge(f"{n_points:,} output points of {ref.name} need about {need / 2**30:.1f} GiB of host "
                           f"memory; {avail / 2**30:.1f} GiB are available: use a larger dt or every")


def output_times(t_end: float, dt: float, every: int = 1) -> np.ndarray:
    """0, every·dt, 2·every·dt, … and t_end itself (the reference simulator reports t = 0 too).
    Grids of more than :data:`MAX_OUTPUT_POINTS` points, or without one whole interval, are refused."""
    n_output_points(t_end, dt, every)
    steps = int(round(t_end / dt))
    k = np.arange(0, steps + 1, every)
    if k[-1] != steps:
        k = np.append(k, steps)
    return k * float(dt)


@dataclass
class SbmlResult:
    times: np.ndarray          # (T,)
    values: np.ndarray         # (T, len(names))
    names: list
    complete: bool             # False when stopped early (the finished prefix)
    n_states: int
    seconds: float


def run_reference(ref: SbmlReference | SbmlSystem, times, record: list, params: dict | None = None,
                  on_chunk=None, chunk: int = 200, flush_s: float = 0.2, control=None,
                  on_event=None) -> SbmlResult:
    """Integrate on the output grid ``times`` and return the ``record`` variables (ids; ``@a:S`` for the
    amount of species S).  ``params`` overrides parameter values.  ``on_chunk(i0, t, y)`` receives
    finished points i0 … i0+len(t)-1 (y: (k, len(record))) at least every ``chunk`` points or
    ``flush_s`` seconds; ``control()`` is called during the integration and stops it by returning
    True (it may block, e.g. to pause).  ``on_event(t, event_id)`` is called at every event execution."""
    system = with_parameters(ref, params)
    t0 = time.perf_counter()
    c = CompiledSbml(system)
    times = np.asarray(times, dtype=float)
    cols = []
    for r in record:
        if r not in c.out_names:
            raise InvalidParameter(f"{r!r} is not a variable of {system.source} "
                                   f"(species, parameters, compartments, reactions; @a:S for amounts)")
        cols.append(c.out_names.index(r))
    cols = np.array(cols, dtype=int)
    nT = len(times)
    stream = np.full((nT, len(cols)), np.nan)
    st = {"idx": 0, "sent": 0, "last": time.perf_counter()}

    def flush(force=False):
        i, s = st["idx"], st["sent"]
        if on_chunk is None or i <= s:
            return
        if force or i - s >= chunk or time.perf_counter() - st["last"] >= flush_s:
            on_chunk(s, times[s:i], stream[s:i].copy())
            st["sent"], st["last"] = i, time.perf_counter()

    def on_output(i, t, row):
        stream[i] = np.asarray(row, dtype=float)[cols]      # the last report of a point wins
        if i > st["idx"]:                                  # points before i are final
            st["idx"] = i
            flush()

    try:
        if control is not None and control():
            raise Stopped
        res = simulate(c, times, on_output=on_output, stop=control, on_event=on_event)
    except Stopped:
        n = st["idx"]
        flush(force=True)
        return SbmlResult(times[:n], stream[:n], list(record), False, len(c.states), time.perf_counter() - t0)
    full = np.column_stack([res[r] for r in record]) if record else np.zeros((nT, 0))
    if on_chunk is not None:
        s = st["sent"]
        if s and not np.array_equal(stream[:s], full[:s], equal_nan=True):
            on_chunk(0, times, full.copy())       # the preview differed somewhere: send simulate's numbers
        elif s < nT:
            on_chunk(s, times[s:], full[s:].copy())
    return SbmlResult(times, full, list(record), True, len(c.states), time.perf_counter() - t0)
