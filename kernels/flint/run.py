"""One Flint run, specified once: :class:`FlintRun` (frozen, validated) is what ``main.py flint`` and the
Flint workspace build from their options and widgets, and what a session saves.

``vary`` has one meaning everywhere: a :class:`Vary` spreads a parameter *linearly* over the members,
``numpy.linspace(lo, hi, n)`` (member 0 gets ``lo``, the last ``hi``).  The workspace's "± spread"
box is the same thing written around the model's value v0: spread s gives lo = v0·(1 − s),
hi = v0·(1 + s) (:meth:`Vary.around`; the workspace varies nothing for N = 1, while ``--vary`` with
one member gives it ``lo``).  (Until issue 22 the workspace computed v0·(1 + s·linspace(−1, 1));
the two agree to rounding of the last bit.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# Imports inside functions: kernels.flint.protocols (≈7 ms), needed only by a one-way wave run, so that
# `--help` (which loads this module) does not pay for it.
from ..errors import InvalidParameter
from .compiler import Network
from .model import Model, select_states
from .runtimes import INTEGRATORS, MAPPINGS, Simulation, network_stimulus, runtime_class
from .runtimes.auto import AUTO, choose_runtime
from .schemes import ENGINES, engine_for_runtime, runtime_for_engine

MEMBERS = ("ensemble", "line", "ring")
PROTOCOLS = ("uniform", "one-way")      # a ring's initial state: rest + stimulus, or a one-way wave
DTYPES = ("float64", "float32")
#: most time steps one run may take (t_end / dt)
MAX_STEPS = 10 ** 12


@dataclass(frozen=True)
class Vary:
    """Parameter ``param`` spread linearly over the members: ``numpy.linspace(lo, hi, n)``."""
    param: str
    lo: float
    hi: float

    @classmethod
    def around(cls, param: str, v0: float, spread: float) -> "Vary":
        """v0·(1 ± spread): the workspace's "± spread" (a fraction of the model's value)."""
        return cls(param, v0 * (1 - spread), v0 * (1 + spread))

    @classmethod
    def parse(cls, text: str) -> "Vary":
        """``PARAM=LO:HI`` (``PARAM=V``: every member V), as ``--vary`` takes it."""
        k, _, rng = str(text).partition("=")
        lo, _, hi = rng.partition(":")
        try:
            return cls(k.strip(), float(lo), float(hi or lo))
        except ValueError:
            raise InvalidParameter(f"vary: {text!r} is not PARAM=LO:HI with numbers") from None

    def values(self, n: int) -> np.ndarray:
        return np.linspace(self.lo, self.hi, n)

    def to_dict(self) -> dict:
        return {"param": self.param, "lo": self.lo, "hi": self.hi}


class RunSettingError(InvalidParameter):
    """A bad method / engine / dtype / mapping: ``field`` names the setting (the CLI names its option)."""

    def __init__(self, field: str, text: str):
        super().__init__(f"{field} {text}")
        self.field, self.text = field, text


def check_settings(method: str = "euler", engine: str = "auto", dtype: str = "float64",
                   mapping: str = "cell") -> tuple[str, str, str, str]:
    """(method, runtime, dtype, mapping) of a fixed-step run, checked — the one check of these settings
    (``main.py flint``, its sweeps, the workspace and sessions all come here through :class:`FlintRun`).
    ``method`` auto is euler; ``engine`` an engine of :data:`kernels.flint.schemes.ENGINES` or a Runtime
    name (``cpu`` is engine ``numpy``).  :class:`RunSettingError` names the setting and the choices."""
    method = "euler" if method in (None, AUTO) else method
    if method not in INTEGRATORS:
        raise RunSettingError("method", f"must be {' or '.join(INTEGRATORS)} (got {method!r}); the adaptive "
                                        "methods of an SBML model: dopri5 and rodas4 (an ensemble on any "
                                        "engine), lsoda (engine numpy, the SBML reference simulator)")
    runtime = runtime_for_engine(engine or AUTO)
    if runtime != AUTO:
        try:
            runtime_class(runtime)
        except InvalidParameter:
            names = [e for e in ENGINES if ENGINES[e].runtime]
            raise RunSettingError("engine", f"must be {', '.join(names)} or auto (got {engine!r})") from None
    if dtype not in DTYPES:
        raise RunSettingError("dtype", f"must be {' or '.join(DTYPES)} (got {dtype!r})")
    if mapping not in MAPPINGS:
        raise RunSettingError("mapping", f"must be {' or '.join(MAPPINGS)} (got {mapping!r})")
    return method, runtime, dtype, mapping


def _positive(name: str, v) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise InvalidParameter(f"{name} must be a number, got {v!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise InvalidParameter(f"{name} must be > 0, got {v!r}")
    return v


@dataclass(frozen=True)
class FlintRun:
    """A fixed-step Flint run: the model (parameters already set), where and how it is integrated, the
    members (an ensemble, or cells in a line/ring coupled on ``coupled`` with coefficient ``coupling``
    in 1/time), the parameters varied over them, what is recorded and how often, and the ring's initial
    state (``protocol``: "uniform" = rest, the first 5 cells stimulated; "one-way" = a one-way wave,
    :func:`kernels.flint.protocols.one_way_wave`, the stimulus off).  Checked when made."""
    model: Model
    runtime: str = "cpu"
    integrator: str = "euler"
    dtype: str = "float64"
    mapping: str = "cell"
    threads: int = 1
    dt: float = 0.01
    t_end: float = 1000.0
    members: str = "ensemble"
    n: int = 1
    coupling: float = 1.0
    coupled: str | None = None           # the coupled state; default V (else the first state)
    vary: tuple = ()                     # Vary, …
    record: tuple = ()                   # state names; () = every state
    every: int = 100
    protocol: str = "uniform"
    #: the global ``--backend`` (cpu / gpu / None = auto) that ``runtime="auto"`` follows
    backend: str | None = field(default=None, compare=False, repr=False)
    #: what ``runtime="auto"`` picked and why (:class:`~kernels.flint.runtimes.auto.Choice`), else None
    choice: object = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        m = self.model
        integrator, runtime, _, _ = check_settings(self.integrator, self.runtime, self.dtype, self.mapping)
        object.__setattr__(self, "integrator", integrator)
        object.__setattr__(self, "runtime", runtime)
        if self.runtime == AUTO:                 # resolved once, here: runtime is the name picked
            if self.members not in MEMBERS:
                raise InvalidParameter(f"members must be one of {', '.join(MEMBERS)} (got {self.members!r})")
            ch = choose_runtime(self.n if isinstance(self.n, (int, np.integer)) else 1,
                                self.members != "ensemble", self.mapping, backend=self.backend)
            object.__setattr__(self, "runtime", ch.runtime)
            object.__setattr__(self, "choice", ch)
        cls = runtime_class(self.runtime)
        if self.mapping not in cls.mappings:
            raise RunSettingError("mapping", f"{self.mapping} does not run on engine {self.engine}: it runs the {' or '.join(cls.mappings)} mapping "
                                   f"{cls.mapping_note()}".rstrip())
        object.__setattr__(self, "dt", _positive("dt", self.dt))
        object.__setattr__(self, "t_end", _positive("t end", self.t_end))
        ratio = self.t_end / self.dt
        if not ratio <= MAX_STEPS:
            raise InvalidParameter(f"t end / dt = {ratio:.3g} steps; at most {MAX_STEPS:.0e}")
        if int(round(ratio)) < 1:
            raise InvalidParameter(f"dt {self.dt:g} is larger than t end {self.t_end:g}: not one step would be taken")
        if self.members not in MEMBERS:
            raise InvalidParameter(f"members must be one of {', '.join(MEMBERS)} (got {self.members!r})")
        for name, v, low in (("n", self.n, 2 if self.members != "ensemble" else 1), ("threads", self.threads, 1),
                             ("every", self.every, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                what = "a line/ring needs at least 2 cells" if name == "n" and low == 2 else f"{name} must be ≥ {low}"
                raise InvalidParameter(f"{what} (got {v!r})")
        if self.members != "ensemble":
            if not (isinstance(self.coupling, (int, float)) and math.isfinite(self.coupling)):
                raise InvalidParameter(f"coupling must be a number, got {self.coupling!r}")
            if self.coupled_state not in m.states:
                raise InvalidParameter(f"coupled variable {self.coupled_state!r} is not a state of {m.name}")
        if self.protocol not in PROTOCOLS:
            raise InvalidParameter(f"protocol must be one of {', '.join(PROTOCOLS)} (got {self.protocol!r})")
        if self.protocol == "one-way" and self.members != "ring":
            raise InvalidParameter("the one-way wave protocol starts a ring")
        vary = tuple(v if isinstance(v, Vary) else Vary(**v) if isinstance(v, dict) else Vary.parse(v)
                     for v in self.vary)
        for v in vary:
            if v.param not in m.params:
                raise InvalidParameter(f"vary: {v.param!r} is not a parameter of {m.name}")
            if not (math.isfinite(v.lo) and math.isfinite(v.hi)):
                raise InvalidParameter(f"vary {v.param}: the range must be finite (got {v.lo}:{v.hi})")
        object.__setattr__(self, "vary", vary)
        object.__setattr__(self, "record", tuple(select_states(m, list(self.record))) if self.record else ())

    # --- the two axes (kernels.flint.schemes) -------------------------------------------------------
    @property
    def engine(self) -> str:
        """The engine (``numpy`` for Runtime ``cpu``, else the Runtime's name)."""
        return engine_for_runtime(self.runtime)

    @property
    def method(self) -> str:
        """The method (the fixed-step integrator)."""
        return self.integrator

    # --- derived ---------------------------------------------------------------------------------
    @property
    def coupled_state(self) -> str:
        s = self.coupled or ("V" if "V" in self.model.states else next(iter(self.model.states)))
        return s

    @property
    def network(self) -> Network | None:
        if self.members == "ensemble":
            return None
        return Network(self.members, self.n, self.coupled_state, float(self.coupling))

    @property
    def steps(self) -> int:
        return int(round(self.t_end / self.dt))

    @property
    def record_names(self) -> list[str]:
        return list(self.record) or list(self.model.states)

    @property
    def record_index(self) -> list[int]:
        states = list(self.model.states)
        return [states.index(r) for r in self.record_names]

    def member_params(self) -> dict:
        """Per-member parameters: a line/ring's stimulus (the first 5 cells; none for the one-way
        wave), then every :class:`Vary` (``linspace(lo, hi, n)``)."""
        from .protocols import no_stimulus
        m, n = self.model, self.n
        member = {}
        if self.members != "ensemble":
            member = no_stimulus(m, n) if self.protocol == "one-way" else network_stimulus(m, n)
        for v in self.vary:
            member[v.param] = v.values(n)
        return member

    def simulation(self, y0=None, member_params: dict | None = None):
        """The :class:`~kernels.flint.runtimes.Simulation` of this run (compiled, at t = 0) — what the CLI,
        the workspace's worker and sweeps integrate; ``y0`` a prepared initial state (the one-way wave);
        ``member_params``: more per-member values (parameter → n values; a sweep slice's points), after
        :meth:`member_params`."""
        member = self.member_params()
        for k, v in (member_params or {}).items():
            if k not in self.model.params:
                raise InvalidParameter(f"{k!r} is not a parameter of {self.model.name}")
            if np.shape(v) != (self.n,):
                raise InvalidParameter(f"{k}: {np.shape(v)} values for {self.n} members")
            member[k] = np.asarray(v, dtype=float)
        return Simulation(self.model, runtime=self.runtime, n=self.n, member_params=member,
                          network=self.network, integrator=self.integrator, dtype=self.dtype, y0=y0,
                          mapping=self.mapping, threads=self.threads)

    # --- sessions --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Everything but the model itself (its name, and its parameter values): JSON-ready."""
        return {"model": self.model.name, "params": dict(self.model.params), "method": self.method,
                "engine": self.engine, "dtype": self.dtype, "mapping": self.mapping,
                "threads": self.threads, "dt": self.dt, "t_end": self.t_end, "members": self.members,
                "n": self.n, "coupling": self.coupling, "coupled": self.coupled,
                "vary": [v.to_dict() for v in self.vary], "record": list(self.record), "every": self.every,
                "protocol": self.protocol}

    @classmethod
    def from_dict(cls, model: Model, d: dict) -> "FlintRun":
        """The run of :meth:`to_dict` on ``model`` (its saved parameter values applied to a copy).  Old
        sessions (``runtime`` / ``integrator``: cpu is engine numpy) load the same run."""
        m = model.copy()
        for k, v in dict(d.get("params", {})).items():
            if k in m.params:
                m.params[k] = float(v)
        keys = ("runtime", "integrator", "dtype", "mapping", "threads", "dt", "t_end", "members", "n", "coupling",
                "coupled", "every", "protocol")
        kw = {k: d[k] for k in keys if k in d}
        if "engine" in d:
            kw["runtime"] = d["engine"]
        if "method" in d:
            kw["integrator"] = d["method"]
        return cls(m, vary=tuple(d.get("vary", ())), record=tuple(d.get("record", ())), **kw)
