"""The two named axes of a Flint run — the single source of truth of ``--method`` and ``--engine``
(``main.py flint``, ``main.py flint-suite``, the Flint workspace and its sessions):

* the **method**, the integrator (:data:`METHODS`): ``euler`` and ``rk4`` (fixed step dt, any model, an
  ensemble or a line/ring of cells), ``dopri5`` (adaptive Dormand–Prince with root-found events),
  ``rodas4`` (Rosenbrock, stiff), ``lsoda`` (the SBML reference simulator: LSODA, events, delays,
  algebraic rules, fast reactions), ``cvode`` (libRoadRunner's, the peer), ``auto`` (the engine's default:
  euler in ``flint``; in ``flint-suite`` lsoda on numpy, and on is / ts / c / c-is the engine's own pick,
  Dormand–Prince or Rodas4 for a stiff model, :mod:`kernels.flint.ensemble.auto`).  In ``flint``, dopri5
  and rodas4 run an SBML model as an ensemble (:class:`kernels.flint.adaptive_run.EnsembleRun`) on the
  engines whose backend has an ``ensemble`` integrator, and an explicit ``--method auto`` goes there when
  the fixed-step compiler refuses the model (:func:`methods_help`).
* the **engine**, where and how it runs (:data:`ENGINES`): ``numpy``, ``c`` (the generated C compiled for
  the host), ``c-is`` (the bytecode interpreter compiled for the host), ``is`` / ``ts`` (the GPU's
  interpreter / translator), ``roadrunner`` (flint-suite only), ``auto``.

Each :class:`Engine` says which methods it offers and through what: a fixed-step Runtime of
:data:`kernels.flint.runtimes.RUNTIMES` (``runtime``) for euler/rk4, and adaptive backends
(``adaptive``: method → a name of :data:`ADAPTIVE_BACKENDS`).  The SBML reference simulator is
``--method lsoda --engine numpy``.  :func:`engine_table` is what ``--help`` and the README list;
:func:`pair` resolves a (method, engine) of one command to what runs; :func:`old_runtime` maps every
old ``--runtime`` spelling (:data:`FLINT_RUNTIME_ALIASES`, :data:`SUITE_RUNTIME_ALIASES`) to its pair.

An adaptive backend is ``fn(model_path, times, variables, amount, concentration) -> {variable: values}``
(values at ``times``; species in ``amount`` as amounts, in ``concentration`` as concentrations); raising
:class:`~kernels.errors.Unsupported` refuses the model.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable

# Imports inside functions: the runtimes package (it loads the compiler and code generators), so that the
# engine and method names here are read without it (CLI help).
from .. import backend as bk
from ..errors import InvalidParameter
from ..registry import Registry

SCHEMES = ("fixed-step", "adaptive")


@dataclass(frozen=True)
class AdaptiveBackend:
    """A named adaptive backend: ``target`` is the function or its ``"module:function"`` path (imported
    when first used, in the worker process); ``needs``: (module, install hint) it cannot run without.
    ``ensemble``: how it integrates an ensemble (:mod:`kernels.flint.adaptive_run`, the GUI and
    sweeps): ``("module:function", ((keyword, value), …))``, the function of
    :meth:`ensemble_integrator`; () = suite only."""
    name: str
    target: Callable | str
    help: str = ""
    device: str = "cpu"
    needs: tuple | None = None
    ensemble: tuple = ()
    host: bool = False                   # a host build: needs the host C++ compiler of engine c

    def resolve(self) -> Callable:
        return resolve(self.target)

    def ensemble_integrator(self) -> Callable | None:
        """``fn(core, times, n=, member_params=, fired=None) -> (values (times, observables, members),
        whether firings were reported)``, or None (suite only)."""
        if not self.ensemble:
            return None
        fn, kw = resolve(self.ensemble[0]), dict(self.ensemble[1]) if len(self.ensemble) > 1 else {}
        if not kw:
            return fn

        def bound(problem, times, **more):
            return fn(problem, times, **kw, **more)
        bound.__wrapped__ = fn                   # inspect.signature sees the function's own keywords
        return bound

    def unavailable(self) -> str | None:
        """None when it can run here, else one line saying what is missing."""
        if self.device == "gpu":
            ok, why = bk.gpu_available()
            if not ok:
                return (f"runtime {self.name} needs a GPU: {why} (the NumPy twin of the same integrator is "
                        "--method dopri5 --engine numpy, old spelling --runtime dopri-cpu)")
        if self.host:
            from .runtimes.base import runtime_class
            why = runtime_class("c").unavailable()
            if why:
                return f"runtime {self.name} (a host build) cannot run here: {why}"
        if self.needs and importlib.util.find_spec(self.needs[0]) is None:
            return f"runtime {self.name} needs {self.needs[1]}"
        if isinstance(self.target, str) and importlib.util.find_spec(self.target.partition(":")[0]) is None:
            return f"runtime {self.name}: module {self.target.partition(':')[0]} is not available"
        return None


def resolve(target: Callable | str) -> Callable:
    """The function of a backend target (a callable, or ``"module:function"``)."""
    if callable(target):
        return target
    mod, _, attr = str(target).partition(":")
    return getattr(importlib.import_module(mod), attr)


#: name → AdaptiveBackend, in the order ``--help`` lists them
ADAPTIVE_BACKENDS: Registry[AdaptiveBackend] = Registry("adaptive backend")


def register_backend(name: str, fn: Callable | str, help: str = "", device: str = "cpu",
                     needs: tuple | None = None, replace: bool = False, ensemble: tuple = (),
                     host: bool = False) -> AdaptiveBackend:
    """Add an adaptive backend: a callable or a ``"module:function"`` string (``ensemble``: see
    :class:`AdaptiveBackend`).  Another backend under a taken name is a ValueError unless ``replace``
    (the registries' one duplicate policy)."""
    if not name or not (callable(fn) or (isinstance(fn, str) and ":" in fn)):
        raise InvalidParameter(f"a backend is a name and a function or 'module:function', got {name!r}, {fn!r}")
    return ADAPTIVE_BACKENDS.register(AdaptiveBackend(name, fn, help, device, needs, tuple(ensemble), host),
                                      name=name, replace=replace)


def adaptive_backend(name: str) -> AdaptiveBackend:
    """The backend ``name``; InvalidParameter naming the choices otherwise."""
    b = ADAPTIVE_BACKENDS.get(name, None) if isinstance(name, str) else None
    if b is None:
        raise InvalidParameter(f"unknown runtime {name!r} (choose from {', '.join(ADAPTIVE_BACKENDS)})")
    return b


def backend_unavailable(name: str) -> str | None:
    """None when adaptive backend ``name`` can run here, else a one-line reason (what to install)."""
    b = ADAPTIVE_BACKENDS.get(name, None) if isinstance(name, str) else None
    if b is None:
        return f"unknown runtime {name!r} (choose from {', '.join(sorted(ADAPTIVE_BACKENDS))})"
    return b.unavailable()


def backend_help(scheme: str) -> dict[str, str]:
    """name → one line of help of every backend of ``scheme``."""
    if scheme == "fixed-step":
        from .runtimes import runtime_help
        return runtime_help()
    if scheme == "adaptive":
        return {k: b.help for k, b in ADAPTIVE_BACKENDS.items()}
    raise InvalidParameter(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")


register_backend("cpu", "kernels.flint.sbml.simulate:simulate_file",
                 "the SBML reference simulator (NumPy/SciPy LSODA, root-found events, delays, algebraic rules)")
register_backend("roadrunner", "kernels.flint.sbml.roadrunner:simulate_roadrunner",
                 "libRoadRunner (CVODE), the peer",
                 needs=("roadrunner", "libRoadRunner: pip install libroadrunner (or pip install -e '.[peers]')"))
_DOPRI, _RODAS, _AUTO = ("kernels.flint.adaptive_run:ensemble_dopri", "kernels.flint.adaptive_run:ensemble_rodas",
                         "kernels.flint.adaptive_run:ensemble_auto")
register_backend("dopri-cpu", "kernels.flint.ensemble.rk:simulate_file",
                 "adaptive Dormand-Prince on the ODE core, NumPy (the GPU integrator's twin)", ensemble=(_DOPRI,))
register_backend("is", "kernels.flint.ensemble.gpu:simulate_file_is",
                 "adaptive Dormand-Prince on the GPU, the model through the bytecode interpreter", device="gpu",
                 ensemble=(_DOPRI, (("flavour", "is"),)))
register_backend("ts", "kernels.flint.ensemble.gpu:simulate_file_ts",
                 "adaptive Dormand-Prince on the GPU, the model as generated CUDA C", device="gpu",
                 ensemble=(_DOPRI, (("flavour", "ts"),)))
register_backend("rodas-cpu", "kernels.flint.ensemble.rosenbrock:simulate_file",
                 "Rodas4 (stiff), NumPy (the GPU kernel's twin)", ensemble=(_RODAS,))
for _eng, _fl, _dev in (("ts", "ts", "cuda"), ("is", "is", "cuda"), ("c", "ts", "host"), ("c-is", "is", "host")):
    _where = "on the GPU" if _dev == "cuda" else "compiled for the host"
    _what = "generated CUDA C" if _fl == "ts" else "the bytecode interpreter"
    _fn = _eng.replace("-", "_")
    register_backend(f"rodas-{_eng}", f"kernels.flint.ensemble.rodas_gpu:simulate_file_{_fn}",
                     f"Rodas4 (stiff) {_where}, {_what}", device="gpu" if _dev == "cuda" else "cpu",
                     ensemble=(_RODAS, (("flavour", _fl), ("device", _dev))), host=_dev == "host")
    if _dev == "host":
        register_backend(f"dopri-{_eng}", f"kernels.flint.ensemble.gpu:simulate_file_{_fn}",
                         f"adaptive Dormand-Prince {_where}, {_what}", ensemble=(_DOPRI, (("flavour", _fl), ("device", _dev))),
                         host=True)
    register_backend(f"auto-{_eng}", f"kernels.flint.ensemble.auto:simulate_file_{_fn}",
                     f"method auto {_where}, {_what}: Dormand-Prince, Rodas4 for stiff models",
                     device="gpu" if _dev == "cuda" else "cpu", ensemble=(_AUTO, (("engine", _eng),)),
                     host=_dev == "host")


# ------------------------------------------------------------------ the two axes

@dataclass(frozen=True)
class Method:
    """An integrator: ``adaptive`` (error-controlled steps, output at the requested times) or fixed-step."""
    name: str
    help: str
    adaptive: bool = False


@dataclass(frozen=True)
class Engine:
    """Where and how a run is carried out: ``runtime`` (the fixed-step Runtime, or None) runs
    :data:`FIXED_METHODS`; ``adaptive`` maps a method to the adaptive backend running it;
    ``device`` "cpu" or "gpu"; ``suite_only``: not offered by ``flint`` (the SBML Test Suite's peers)."""
    name: str
    help: str
    device: str = "cpu"
    runtime: str | None = None
    adaptive: tuple = ()               # ((method, backend name), …)
    suite_only: bool = False

    def methods(self, command: str = "flint") -> list[str]:
        """The methods this engine runs in ``command`` ("flint": fixed-step, the reference simulator and
        the adaptive methods whose backend integrates ensembles; "flint-suite": the adaptive ones)."""
        adaptive = [m for m, _ in self.adaptive if m != AUTO]      # auto: the engine's own pick, not a method
        if command == "flint-suite":
            return adaptive
        if self.suite_only:
            return []
        fixed = list(FIXED_METHODS) if self.runtime else []
        return fixed + [m for m in adaptive if m in FLINT_REFERENCE
                        or (m in FLINT_ENSEMBLE and self.runs_ensembles(m))]

    def runs_ensembles(self, method: str) -> bool:
        """The adaptive backend of ``method`` on this engine integrates ensembles."""
        b = self.backend(method)
        return bool(b and b in ADAPTIVE_BACKENDS and ADAPTIVE_BACKENDS[b].ensemble)

    def backend(self, method: str) -> str | None:
        return dict(self.adaptive).get(method)


AUTO = "auto"
FIXED_METHODS = ("euler", "rk4")
#: adaptive methods ``flint`` runs: the SBML reference simulator (one model instance) …
FLINT_REFERENCE = ("lsoda",)
#: … and an SBML model as an adaptive ensemble (kernels.flint.adaptive_run), where the engine's backend
#: integrates ensembles; the others (cvode) run in flint-suite only
FLINT_ENSEMBLE = ("dopri5", "rodas4")
FLINT_ADAPTIVE = FLINT_REFERENCE + FLINT_ENSEMBLE
COMMANDS = ("flint", "flint-suite")

METHODS: Registry = Registry("method")
ENGINES: Registry = Registry("engine")
for _m in (Method("euler", "forward Euler, fixed step dt"),
           Method("rk4", "classical Runge–Kutta 4, fixed step dt"),
           Method("dopri5", "adaptive Dormand–Prince 5(4), root-found events", adaptive=True),
           Method("rodas4", "Rodas4, a Rosenbrock method for stiff models (the Jacobian from the expression DAG, "
                            "a dense LU per member), root-found events", adaptive=True),
           Method("lsoda", "LSODA (SciPy), the SBML reference simulator: events, delays, algebraic rules, "
                           "fast reactions", adaptive=True),
           Method("cvode", "CVODE inside libRoadRunner (the peer)", adaptive=True)):
    METHODS.register(_m)
for _e in (Engine("numpy", "NumPy on the host (the reference)", "cpu", "cpu",
                  (("lsoda", "cpu"), ("dopri5", "dopri-cpu"), ("rodas4", "rodas-cpu"))),
           Engine("c", "the generated C, compiled for the host (OpenMP threads)", "cpu", "c",
                  ((AUTO, "auto-c"), ("dopri5", "dopri-c"), ("rodas4", "rodas-c"))),
           Engine("c-is", "the bytecode interpreter, compiled for the host", "cpu", "c-is",
                  ((AUTO, "auto-c-is"), ("dopri5", "dopri-c-is"), ("rodas4", "rodas-c-is"))),
           Engine("is", "GPU: the bytecode interpreter (CUDA)", "gpu", "is",
                  ((AUTO, "auto-is"), ("dopri5", "is"), ("rodas4", "rodas-is"))),
           Engine("ts", "GPU: the model as generated CUDA C", "gpu", "ts",
                  ((AUTO, "auto-ts"), ("dopri5", "ts"), ("rodas4", "rodas-ts"))),
           Engine("roadrunner", "libRoadRunner, the peer (flint-suite only)", "cpu", None,
                  (("cvode", "roadrunner"),), suite_only=True)):
    ENGINES.register(_e)

#: every old ``flint --runtime`` spelling → (method or None = keep --method, engine)
FLINT_RUNTIME_ALIASES = {"auto": (None, "auto"), "cpu": (None, "numpy"), "c": (None, "c"), "c-is": (None, "c-is"),
                         "is": (None, "is"), "ts": (None, "ts"), "sbml": ("lsoda", "numpy")}
#: every old ``flint-suite --runtime`` spelling → (method, engine)
SUITE_RUNTIME_ALIASES = {"cpu": ("lsoda", "numpy"), "dopri-cpu": ("dopri5", "numpy"), "is": ("dopri5", "is"),
                         "ts": ("dopri5", "ts"), "roadrunner": ("cvode", "roadrunner")}


@dataclass(frozen=True)
class Pair:
    """A resolved (method, engine) of one command: ``target`` is the fixed-step runtime name
    (``kind`` "fixed"; "auto" while the engine is still to be picked), ``"sbml"`` for the reference
    simulator in ``flint`` (kind "reference"), the adaptive backend name (kind "adaptive"), or in
    ``flint`` an SBML ensemble's backend (kind "ensemble"; "auto" while the engine is still to be
    picked, by :class:`kernels.flint.adaptive_run.EnsembleRun`)."""
    method: str
    engine: str
    kind: str
    target: str


def registered_runtime_engines() -> list[Engine]:
    """A fixed-step Runtime registered in ``kernels.flint.runtimes.RUNTIMES`` that no engine above runs
    is an engine of its own name (a runtime added by a user or a test is offered by ``--engine``,
    ``--help`` and the GUI with no other change)."""
    from .runtimes.base import RUNTIMES
    covered = {ENGINES[e].runtime for e in ENGINES}
    return [Engine(name, RUNTIMES[name].help or name, RUNTIMES[name].device, name)
            for name in RUNTIMES if name not in covered and name != AUTO]


def engine_named(name: str) -> Engine:
    """The engine ``name`` (a registered engine, or a registered fixed-step Runtime's own engine)."""
    if name in ENGINES:
        return ENGINES[name]
    for e in registered_runtime_engines():
        if e.name == name:
            return e
    return ENGINES.get(name)                     # InvalidParameter naming the engines


def engine_table(command: str = "flint") -> dict[str, list[str]]:
    """engine → the methods it offers in ``command`` (engines offering none are left out)."""
    out = {}
    for e in [ENGINES[n] for n in ENGINES] + registered_runtime_engines():
        ms = e.methods(command)
        if ms:
            out[e.name] = ms
    return out


def engine_help(command: str = "flint") -> dict[str, str]:
    """engine → its one line of help and the methods it offers in ``command`` (the GUI's tooltips)."""
    return {e: f"{engine_named(e).help} — {', '.join(ms)}" for e, ms in engine_table(command).items()}


def methods_help(command: str = "flint") -> str:
    """One ``--help`` sentence: which methods each engine offers (generated from the registries); for
    ``flint`` also what the adaptive ones run and which engines have an own method auto."""
    table = engine_table(command)
    rows = "; ".join(f"{e} ({engine_named(e).device}): {', '.join(ms)}" for e, ms in table.items())
    if command != "flint":
        return f"methods by engine — {rows}"
    own = [e for e in table if engine_named(e).runs_ensembles(AUTO)]
    plain = [e for e in table if e not in own and any(engine_named(e).runs_ensembles(m) for m in FLINT_ENSEMBLE)]
    picks = ([f"on {', '.join(own)} the engine's own pick (dopri5, rodas4 when stiff)"] if own else []) \
        + ([f"on {', '.join(plain)} dopri5 (rodas4 for algebraic rules, fast reactions and delays)"] if plain else [])
    return (f"methods by engine — {rows}. {' and '.join(FLINT_ENSEMBLE)} run an SBML model (events, delays, "
            f"algebraic rules) as an adaptive ensemble (--ensemble, --vary; dt is the output interval); "
            f"--method auto, given, runs there an SBML model that the fixed-step compiler refuses "
            f"({', '.join(picks)}), and any SBML model on an engine with its own pick")


def engine_for_runtime(runtime: str) -> str:
    """The engine whose fixed-step Runtime is ``runtime`` (``cpu`` → ``numpy``); unknown names unchanged."""
    for name in ENGINES:
        if ENGINES[name].runtime == runtime:
            return name
    return runtime


def runtime_for_engine(engine: str) -> str:
    """The fixed-step Runtime name of ``engine`` (``numpy`` → ``cpu``); a Runtime name or auto unchanged."""
    e = ENGINES.get(engine, None) if isinstance(engine, str) else None
    return e.runtime if e is not None and e.runtime else engine


def _choices(command: str) -> str:
    return ", ".join([*engine_table(command), AUTO])


def check_backend(engine: str | None, backend: str | None) -> None:
    """The global ``--backend`` (the array library: cpu / gpu; None or auto: no say) and an explicit
    engine must agree on the device: ``--backend cpu --engine ts`` is one InvalidParameter."""
    if backend in (None, AUTO) or engine in (None, AUTO):
        return
    try:
        dev = engine_named(engine).device
    except InvalidParameter:                     # an unknown engine: refused where it is checked
        return
    if dev != backend:
        raise InvalidParameter(f"engine {engine} runs on the {dev.upper()}, but --backend {backend} says the "
                               f"{backend.upper()} (--engine auto follows --backend)")


def pair(method: str | None, engine: str | None, command: str = "flint", backend: str | None = None) -> Pair:
    """What ``--method METHOD --engine ENGINE`` runs in ``command``; one InvalidParameter naming the
    choices when the engine does not offer the method.  ``None`` means auto.  ``backend`` (the global
    ``--backend``): engine auto follows it (flint-suite: ``gpu`` → the first GPU engine offering the
    method, else the CPU ones; flint: :class:`~kernels.flint.run.FlintRun` picks), an explicit engine
    on the other device is refused (:func:`check_backend`)."""
    if command not in COMMANDS:
        raise InvalidParameter(f"command must be one of {', '.join(COMMANDS)}, got {command!r}")
    method, engine = method or AUTO, engine or AUTO
    table = engine_table(command)
    if engine != AUTO and engine not in table:
        raise InvalidParameter(f"engine must be one of {_choices(command)} (got {engine!r})")
    check_backend(engine, backend)
    offered = sorted({m for ms in table.values() for m in ms}, key=list(METHODS).index)
    if method != AUTO and method not in offered:
        raise InvalidParameter(f"method must be one of {', '.join(offered)} or auto (got {method!r}); "
                               + methods_help(command))
    if command == "flint":
        if method == "lsoda":
            if engine not in (AUTO, "numpy"):
                raise InvalidParameter(f"method lsoda runs on engine numpy only (got engine {engine!r})")
            return Pair("lsoda", "numpy", "reference", "sbml")
        if method in FLINT_ENSEMBLE:
            if engine == AUTO:
                return Pair(method, AUTO, "ensemble", AUTO)
            if method not in table[engine]:
                raise InvalidParameter(f"engine {engine} offers {', '.join(table[engine])}, not method {method!r}")
            return Pair(method, engine, "ensemble", ENGINES[engine].backend(method))
        method = "euler" if method == AUTO else method
        if engine == AUTO:
            return Pair(method, AUTO, "fixed", AUTO)
        if method not in table[engine]:
            raise InvalidParameter(f"engine {engine} offers {', '.join(table[engine])}, not method {method!r}")
        return Pair(method, engine, "fixed", engine_named(engine).runtime)
    if engine == AUTO:          # flint-suite: the CPU reference unless a method or --backend gpu says else
        dev = "gpu" if backend == "gpu" else "cpu"
        on_dev = sorted((e for e in table if engine_named(e).device == dev), key=lambda e: e != "ts")  # ts first
        engine = next((e for e in on_dev if method in table[e] or method == AUTO), None)
        if engine is None:
            raise InvalidParameter(f"no {dev.upper()} engine offers method {method} (--backend {backend}); "
                                   + methods_help(command))
    if method == AUTO:
        picked = engine_named(engine).backend(AUTO)   # the engine's own pick (dopri5, rodas4 when stiff)
        if picked:
            return Pair(AUTO, engine, "adaptive", picked)
        method = table[engine][0]
    if method not in table[engine]:
        raise InvalidParameter(f"engine {engine} offers {', '.join(table[engine])}, not method {method!r}")
    return Pair(method, engine, "adaptive", ENGINES[engine].backend(method))


def old_runtime(runtime: str, command: str = "flint") -> tuple[str | None, str]:
    """(method or None, engine) of an old ``--runtime`` spelling of ``command``; an adaptive backend
    added by :func:`register_backend` (flint-suite) is its own engine-less name: (None, name)."""
    aliases = FLINT_RUNTIME_ALIASES if command == "flint" else SUITE_RUNTIME_ALIASES
    if runtime in aliases:
        return aliases[runtime]
    if command == "flint-suite" and runtime in ADAPTIVE_BACKENDS:
        return None, runtime
    if command == "flint" and runtime in {e.name for e in registered_runtime_engines()}:
        return None, runtime                      # a registered Runtime is its own engine
    names = list(aliases) + ([k for k in ADAPTIVE_BACKENDS if k not in aliases] if command != "flint" else [])
    raise InvalidParameter(f"runtime must be {', '.join(names[:-1])} or {names[-1]} (got {runtime!r})")


def alias_note(runtime: str, method: str | None, engine: str) -> str:
    """The one line saying what an old ``--runtime`` spelling now is."""
    said = f"--method {method} --engine {engine}" if method else f"--engine {engine}"
    return f"--runtime {runtime} is the old spelling of {said}"
