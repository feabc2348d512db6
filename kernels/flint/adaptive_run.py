"""An SBML model — events included — as an ensemble on an adaptive engine, specified once:
:class:`EnsembleRun` is what the Flint workspace builds for an SBML file that the fixed-step compiler
refuses (events, ``rateOf`` …) but the ODE core of :mod:`kernels.flint.sbml.core` takes, and what its
sessions save.  The pair (method, engine) is the ``flint-suite`` one of :mod:`kernels.flint.schemes`
(``dopri5`` on ``numpy`` / ``is`` / ``ts``, and whatever else is registered with an ``ensemble``
integrator); engine ``auto`` picks the GPU's ``ts`` when there is one (unless ``backend`` is ``cpu``), else a
host build, else NumPy — for method ``auto``, the first of those with its own pick (Dormand–Prince, Rodas4
when stiff), so that method and engine auto together still get the stiffness test.

A run returns an :class:`EnsembleResult`: the output grid, the recorded observables of every member, and
the **event firings** (member, time, event id) where the integrator reports them (its ``fired=`` keyword;
the GUI marks them on the time axis), and the method that ran (method ``auto``'s pick where the engine's
integrator says it: its ``picked=`` keyword).  A bad setting is an :class:`EnsembleSettingError` naming
the setting (``field``), so that a caller names its own control (``main.py flint`` its option).

Streaming (:meth:`EnsembleRun.run` with ``on_chunk``): the adaptive integrators start at t = 0 and cannot
be resumed, so the run integrates growing prefixes of the output grid (each 4× the last, from about
1/256 of it) and streams the new points of each.  Up to the last step of a prefix the path of the
integrator is the full run's (same steps, same step sizes: the step never exceeds the output interval),
so every point but the prefix's last two is final; those two are sent again with the next prefix.
(Every prefix gets the full grid's largest step ``hmax``: the smallest interval of a shorter grid may
differ from the full one's in the last bit, and with it every step.)  The
total work is at most 4/3 of one run; the last prefix is the full run, whose result is returned.
"""
from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field

import numpy as np

# Imports inside functions: the ensemble integrators (their CuPy kernels included), loaded at the first
# ensemble run so that opening the Flint workspace does not pay ≈100 ms for them and CuPy stays optional.
from ..errors import ExplorerError, InvalidParameter
from . import schemes
from .run import Vary
from .sbml.core import lower_system
from .sbml.reference import default_record, output_times, read_system

#: the adaptive methods the ensemble engines run (the flint-suite table's, less the reference simulator's)
DEFAULT_METHOD = "dopri5"
#: methods that run the full core (algebraic rules and fast reactions as a DAE, delays): :func:`lower`
FULL_CORE_METHODS = ("rodas4", "auto")
#: the first prefix streamed is about 1/FIRST_PREFIX of the output grid; each next one GROWTH times longer
FIRST_PREFIX, GROWTH = 256, 4
#: most output points × recorded variables × members one run keeps
MAX_VALUES = 200_000_000


@dataclass
class EnsembleResult:
    """Output ``times`` (k,), ``values`` (k, recorded, members) of the ``names``, the event firings
    ``events`` [(member, time, event id)] (empty when the engine does not report them), whether the run
    reached t end (``complete``) and how long it took."""
    times: np.ndarray
    values: np.ndarray
    names: list
    events: list = field(default_factory=list)
    complete: bool = True
    seconds: float = 0.0
    reports_events: bool = False
    #: the method that ran: the run's, or method auto's pick (dopri5 / rodas4) where the integrator says it
    method: str | None = None

    def event_times(self, member: int = 0) -> np.ndarray:
        """The times events fired in ``member`` (ascending; one entry a firing)."""
        return np.array(sorted(t for m, t, _e in self.events if m == member), dtype=float)


def ensemble_engines(method: str = DEFAULT_METHOD) -> list[str]:
    """The engines whose adaptive backend for ``method`` integrates ensembles, GPU ones first (ts
    before is), then the host builds, then NumPy."""
    table = schemes.engine_table("flint-suite")
    out = []
    for e, ms in table.items():
        b = schemes.engine_named(e).backend(method) if method in ms else None
        if b and schemes.ADAPTIVE_BACKENDS[b].ensemble:
            out.append(e)
    order = {"ts": 0, "is": 1, "c": 2, "c-is": 3, "numpy": 9}
    return sorted(out, key=lambda e: (order.get(e, 5 if schemes.engine_named(e).device == "gpu" else 8)))


def ensemble_methods() -> list[str]:
    """The adaptive methods some engine integrates as an ensemble."""
    return [m for m in schemes.METHODS if schemes.METHODS[m].adaptive and ensemble_engines(m)]


def available_engines(method: str = DEFAULT_METHOD, backend: str | None = None) -> list[str]:
    """:func:`ensemble_engines` of ``method`` that can run here (and on ``backend``'s device)."""
    out = []
    for e in ensemble_engines(method):
        if backend in ("cpu", "gpu") and schemes.engine_named(e).device != backend:
            continue
        if schemes.backend_unavailable(schemes.engine_named(e).backend(method)) is None:
            out.append(e)
    return out


def default_engine(method: str = DEFAULT_METHOD, backend: str | None = None) -> str | None:
    """The engine ``engine`` auto picks for ``method``: the first of :func:`available_engines` (the GPU's
    ts when there is one and ``backend`` is not cpu, else a host build, else NumPy); None when none can
    run it here."""
    here = available_engines(method, backend)
    return here[0] if here else None


class EnsembleSettingError(InvalidParameter):
    """A bad setting of an :class:`EnsembleRun`: ``field`` is ``method``, ``engine``, ``params`` or
    ``vary``; the message is the setting's own (the GUI shows it as it is)."""

    def __init__(self, field: str, text: str):
        super().__init__(text)
        self.field = field


def engine_offers_auto(engine: str) -> bool:
    """The engine has its own method auto for ensembles (Dormand–Prince, Rodas4 when stiff)."""
    b = schemes.engine_named(engine).backend(schemes.AUTO)
    return bool(b and schemes.ADAPTIVE_BACKENDS[b].ensemble)


def engine_reason(engine: str, backend: str | None) -> str:
    """Why engine auto is ``engine`` (:func:`default_engine`), in the words of the CLI's options."""
    if schemes.engine_named(engine).device == "gpu":
        return "--backend gpu" if backend == "gpu" else "a GPU is here"
    where = "--backend cpu" if backend == "cpu" else "no GPU here"
    if engine == "numpy":
        return f"{where} and no host C++ compiler: the NumPy twins"
    return f"{where}: the GPU's kernels compiled for the host"


def auto_engine(backend: str | None = None) -> str | None:
    """Engine auto for method auto: the first engine here with its own pick (:func:`engine_offers_auto`:
    the stiffness test), else :func:`default_engine`; None when none runs here."""
    picks = [e for e in available_engines(DEFAULT_METHOD, backend) if engine_offers_auto(e)]
    return picks[0] if picks else default_engine(DEFAULT_METHOD, backend)


def resolve_auto(path, method: str | None, engine: str | None, backend: str | None = None
                 ) -> tuple[str, str | None, list[str]]:
    """(method, engine or None when nothing runs here, reasons) of ``method`` / ``engine`` (None or "auto":
    picked) — the one rule of method auto, for the CLI, the GUI and sessions: engine auto is
    :func:`auto_engine`; on an engine
    with its own pick, method auto is that pick (Dormand–Prince with its stiffness test, Rodas4 when
    stiff); on one without, Rodas4 for a model that only the full core takes (algebraic rules, fast
    reactions, delays: :func:`ensemble_refusal`), else Dormand–Prince.  ``reasons``: what was picked and
    why, one phrase each (the CLI prints them)."""
    engine = engine if engine not in (None, schemes.AUTO) else None
    reasons: list[str] = []
    if method not in (None, schemes.AUTO):
        return method, engine, reasons
    if engine is None:
        engine = auto_engine(backend)
        if engine is None:                                    # nothing runs here: the caller says why
            return DEFAULT_METHOD, None, reasons
        reasons.append(engine_reason(engine, backend))
    if engine_offers_auto(engine):
        reasons.append("the engine's own pick")               # what it picked: known after the run
        return schemes.AUTO, engine, reasons
    if ensemble_refusal(path) is not None:
        reasons.append("algebraic rules, fast reactions or delays: only Rodas4 runs them")
        return "rodas4", engine, reasons
    reasons.append(f"{engine} has no stiffness test (a stiff model: --method rodas4)")
    return DEFAULT_METHOD, engine, reasons


def _number(name: str, v, above: float = 0.0) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise InvalidParameter(f"{name} must be a number, got {v!r}") from None
    if not (math.isfinite(v) and v > above):
        raise InvalidParameter(f"{name} must be a finite number > {above:g}, got {v!r}")
    return v


@dataclass(frozen=True)
class EnsembleRun:
    """``n`` members of the SBML model at ``path`` from t = 0 to ``t_end``, output every ``dt``, on
    ``engine`` with ``method`` (None / "auto": picked, see the module docstring; ``backend`` the global
    ``--backend``).  ``params``: constant parameters set for every member; ``vary``: :class:`Vary`
    spreads (``linspace(lo, hi, n)``); ``record``: the variables (SBML ids; () = the model's species and
    non-constant parameters).  Checked when made; the model is read and lowered then too."""
    path: str
    method: str | None = None
    engine: str | None = None
    n: int = 1
    t_end: float = 100.0
    dt: float = 1.0
    params: tuple = ()                   # ((id, value), …)
    vary: tuple = ()
    record: tuple = ()
    backend: str | None = None
    core: object = field(default=None, compare=False, repr=False)
    files_read: tuple = field(default=(), compare=False, repr=False)   # the files reading the model opened

    def __post_init__(self):
        engine = self.engine if self.engine not in (None, schemes.AUTO) else None
        known = list(dict.fromkeys(e for m in ensemble_methods() for e in ensemble_engines(m)))
        if engine is not None and engine not in known:
            raise EnsembleSettingError("engine", f"engine must be one of {', '.join(known)} or auto for an ensemble "
                                                 f"(got {engine!r})")
        method, engine, _why = resolve_auto(self.path, self.method, engine, self.backend)
        own_auto = engine is not None and engine_offers_auto(engine)
        offered = ensemble_methods() + ([schemes.AUTO] if own_auto else [])
        if method not in offered:
            raise EnsembleSettingError("method", f"method must be one of {', '.join(offered)} or auto for an "
                                                 f"ensemble (got {method!r})")
        if engine is None:
            engine = default_engine(method, self.backend)
            if engine is None:
                raise InvalidParameter(f"no engine runs method {method} here"
                                       + (f" on --backend {self.backend}" if self.backend else ""))
        elif method != schemes.AUTO and engine not in ensemble_engines(method):
            raise EnsembleSettingError("engine", f"engine must be one of {', '.join(ensemble_engines(method))} or "
                                                 f"auto for method {method} (got {engine!r})")
        schemes.check_backend(engine, self.backend)
        why = schemes.backend_unavailable(self.backend_name_of(method, engine))
        if why:
            raise InvalidParameter(why)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "engine", engine)
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise InvalidParameter(f"n must be an integer ≥ 1 (got {self.n!r})")
        object.__setattr__(self, "t_end", _number("t end", self.t_end))
        object.__setattr__(self, "dt", _number("dt", self.dt))
        params = tuple((str(k), _number(f"parameter {k}", v, -math.inf))
                       for k, v in (self.params.items() if isinstance(self.params, dict) else self.params))
        object.__setattr__(self, "params", params)
        vary = tuple(v if isinstance(v, Vary) else Vary(**v) if isinstance(v, dict) else Vary.parse(v)
                     for v in self.vary)
        object.__setattr__(self, "vary", vary)
        if self.core is None:                # the file is read once: the default record and the lowering
            system = read_system(self.path)
            record = list(self.record) or default_record(system)
            object.__setattr__(self, "record", tuple(record))
            object.__setattr__(self, "files_read", tuple(system.files_read))
            object.__setattr__(self, "core", lower(system, record, full=method in FULL_CORE_METHODS))
        for what, keys in (("params", [k for k, _v in params]), ("vary", [v.param for v in vary])):
            for k in keys:
                if k not in self.core.param_ids:
                    raise EnsembleSettingError(what, f"{k!r} is not a constant parameter of {self.core.source} (the "
                                               f"ones an ensemble can set: {', '.join(list(self.core.param_ids)[:12])})")
        k = len(self.times())
        if k * len(self.record) * self.n > MAX_VALUES:
            raise InvalidParameter(f"{k:,} output points × {len(self.record)} variables × {self.n:,} members are more "
                                   f"than {MAX_VALUES:,} values; raise dt, record fewer or run fewer members")

    @staticmethod
    def backend_name_of(method: str, engine: str) -> str:
        return schemes.engine_named(engine).backend(method)

    @property
    def backend_name(self) -> str:
        """The adaptive backend of :data:`kernels.flint.schemes.ADAPTIVE_BACKENDS` that runs it."""
        return self.backend_name_of(self.method, self.engine)

    def times(self) -> np.ndarray:
        """The output grid: 0, dt, 2 dt, … and t end."""
        return output_times(self.t_end, self.dt)

    def member_params(self) -> dict:
        """SBML parameter id → the members' values (``params`` for all, then each :class:`Vary`)."""
        out = {k: np.full(self.n, v) for k, v in self.params}
        for v in self.vary:
            out[v.param] = v.values(self.n)
        return out

    def hmax(self) -> float:
        """The largest step: the smallest interval of the whole output grid (given to every prefix, so
        that a prefix steps exactly as the full run)."""
        dt = np.diff(self.times())
        return float(dt[dt > 0].min()) if np.any(dt > 0) else max(self.t_end, 1.0)

    def integrate(self, times, hmax: float | None = None, picked: list | None = None) -> tuple[np.ndarray, list | None]:
        """(values (len(times), recorded, n), firings [(member, t, event index)] or None when the
        integrator does not report them); ``hmax`` default :meth:`hmax`; ``picked``: a list that gets the
        method method auto ran, where the integrator says it (its ``picked=`` keyword)."""
        fn = schemes.ADAPTIVE_BACKENDS[self.backend_name].ensemble_integrator()
        fired = []
        more = {"picked": picked} if picked is not None and "picked" in inspect.signature(fn).parameters else {}
        out, reported = fn(self.core, np.asarray(times, dtype=float), n=self.n, member_params=self.member_params(),
                           fired=fired, hmax=self.hmax() if hmax is None else hmax, **more)
        return np.asarray(out), fired if reported else None

    def run(self, on_chunk=None, control=None) -> EnsembleResult:
        """Integrate; ``on_chunk(i0, times, values)`` gets the points i0 … as prefixes finish (see the
        module docstring; a point may be sent twice, the later one wins); ``control()`` is asked between
        prefixes and stops the run by returning True (it may block to pause)."""
        t0 = time.perf_counter()
        times, hmax = self.times(), self.hmax()
        nt = len(times)
        if on_chunk is None:
            ends = [nt]
        else:
            ends, k = [], max(2, -(-nt // FIRST_PREFIX))
            while k < nt:
                ends.append(k)
                k *= GROWTH
            ends.append(nt)
        values, fired, sent, complete, picked = None, None, 0, True, []
        for k in ends:
            if control is not None and control():
                complete = False
                break
            values, fired = self.integrate(times[:k], hmax, picked)
            if on_chunk is not None:
                i0 = max(0, sent - 2)
                on_chunk(i0, times[i0:k], values[i0:k])
                sent = k
        if values is None:
            values, k = np.zeros((0, len(self.record), self.n)), 0
        events = [(int(m), float(t), self.core.events[int(e)].id) for m, t, e in (fired or ())]
        method = picked[-1] if picked else (self.method if self.method != schemes.AUTO else None)
        return EnsembleResult(times[:k], values, list(self.record), events, complete,
                              time.perf_counter() - t0, fired is not None, method)

    # --- sessions ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"kind": "ensemble", "path": str(self.path), "method": self.method, "engine": self.engine,
                "n": int(self.n), "t_end": self.t_end, "dt": self.dt, "params": dict(self.params),
                "vary": [v.to_dict() for v in self.vary], "record": list(self.record)}

    @classmethod
    def from_dict(cls, d: dict, **over) -> "EnsembleRun":
        keys = ("path", "method", "engine", "n", "t_end", "dt", "params", "vary", "record")
        kw = {k: d[k] for k in keys if k in d}
        kw["params"] = tuple(dict(kw.get("params", {})).items())
        kw["vary"], kw["record"] = tuple(kw.get("vary", ())), tuple(kw.get("record", ()))
        kw.update(over)
        return cls(**kw)


def lower(path, record, full: bool = False) -> object:
    """The ODE core of the SBML model at ``path`` (or of an SBML system already read) observing
    ``record`` (Unsupported saying what is outside it); ``full``: with algebraic rules and fast
    reactions as a DAE and the delay csymbol (``lower_system(dae=True, delays=True)``: what Rodas4
    and method auto run)."""
    if full:
        return lower_system(path, list(record), set(), set(), dae=True, delays=True)
    return lower_system(path, list(record), set(), set())


def ensemble_refusal(path, full: bool = False) -> str | None:
    """None when the ensemble engines take the SBML model at ``path`` (``full``: with Rodas4 / auto, see
    :func:`lower`), else one line saying why not."""
    try:
        lower(path, [], full)
    except (ExplorerError, ValueError, KeyError) as exc:
        return str(exc)
    return None


# ----------------------------------------------------------------------------- the ensemble integrators
# What :class:`kernels.flint.schemes.AdaptiveBackend` ``ensemble`` names: fn(core, times, n=, member_params=,
# fired=None, **engine keywords) -> (values (times, observables, members), whether firings were reported).

def _call(fn, *args, fired=None, **kw):
    """``fn(*args, **kw)``, passing ``fired`` when ``fn`` takes it: (result, reported).  Keywords are the
    integrators' own (``hmax``: the largest step)."""
    if fired is not None and "fired" in inspect.signature(fn).parameters:
        return fn(*args, fired=fired, **kw), True
    return fn(*args, **kw), False


def ensemble_dopri(core, times, n=1, member_params=None, fired=None, flavour=None, device="cuda", hmax=None):
    """Dormand–Prince: the NumPy twin (``flavour`` None) or the kernel of ``flavour`` (is / ts) on ``device``
    (cuda / host)."""
    if flavour is None:
        from .ensemble.rk import Problem, integrate
        return _call(integrate, Problem(core, n, member_params), times, fired=fired, hmax=hmax)
    from .ensemble.gpu import gpu_problem, integrate_gpu
    kw = {"device": device} if device != "cuda" else {}
    return _call(integrate_gpu, gpu_problem(core, n, member_params), times, flavour, fired=fired, hmax=hmax, **kw)


def ensemble_rodas(core, times, n=1, member_params=None, fired=None, flavour=None, device="cuda", hmax=None):
    """Rodas4: the NumPy twin (``flavour`` None) or the kernel of ``flavour`` on ``device`` (cuda / host)."""
    if flavour is None:
        from .ensemble.rosenbrock import StiffProblem, integrate
        return _call(integrate, StiffProblem(core, n, member_params), times, fired=fired, hmax=hmax)
    from .ensemble.rodas_gpu import integrate_device, stiff_problem
    return _call(integrate_device, stiff_problem(core, n, member_params), times, flavour, device, fired=fired,
                 hmax=hmax)


def ensemble_auto(core, times, n=1, member_params=None, fired=None, engine="numpy", hmax=None, picked=None):
    """Method auto of :mod:`kernels.flint.ensemble.auto` on ``engine``: Dormand–Prince, Rodas4 when stiff;
    ``picked`` (a list) gets the method that ran."""
    from .ensemble.auto import integrate_auto
    (method, out), reported = _call(integrate_auto, core, times, engine, n, member_params, fired=fired, hmax=hmax)
    if picked is not None:
        picked.append(method)
    return out, reported
