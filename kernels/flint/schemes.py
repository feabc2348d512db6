"""Two named axes of a Flint run instead of one overloaded "runtime":

* the *scheme* — ``fixed-step``: Euler / RK4 with a fixed dt on any model, an ensemble or a line/ring of
  cells (:mod:`kernels.flint.runtimes`, the backends ``cpu is ts c c-is``); ``adaptive``: error-controlled
  integration of SBML models with root-found events (the SBML reference simulator, the adaptive
  Dormand–Prince ensembles of :mod:`kernels.flint.ensemble`, libRoadRunner as a peer);
* the *backend* that carries the scheme out.  The fixed-step backends are the Runtime classes of
  :data:`kernels.flint.runtimes.RUNTIMES`; the adaptive ones are listed here, :data:`ADAPTIVE_BACKENDS`
  (``main.py flint-suite --runtime``, the SBML Test Suite harness), and :func:`register_backend` adds one.

An adaptive backend is ``fn(model_path, times, variables, amount, concentration) -> {variable: values}``
(values at ``times``; species in ``amount`` as amounts, in ``concentration`` as concentrations); raising
:class:`~kernels.errors.Unsupported` refuses the model.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable

from ..errors import InvalidParameter

SCHEMES = ("fixed-step", "adaptive")


@dataclass(frozen=True)
class AdaptiveBackend:
    """A named adaptive backend: ``target`` is the function or its ``"module:function"`` path (imported
    when first used, in the worker process); ``needs``: (module, install hint) it cannot run without."""
    name: str
    target: Callable | str
    help: str = ""
    device: str = "cpu"
    needs: tuple | None = None

    def resolve(self) -> Callable:
        return resolve(self.target)

    def unavailable(self) -> str | None:
        """None when it can run here, else one line saying what is missing."""
        if self.device == "gpu":
            from .. import backend as bk
            ok, why = bk.gpu_available()
            if not ok:
                return (f"runtime {self.name} needs a GPU: {why} (the NumPy twin of the same integrator is "
                        "--runtime dopri-cpu)")
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
ADAPTIVE_BACKENDS: dict[str, AdaptiveBackend] = {}


def register_backend(name: str, fn: Callable | str, help: str = "", device: str = "cpu",
                     needs: tuple | None = None) -> AdaptiveBackend:
    """Add (or replace) an adaptive backend: a callable or a ``"module:function"`` string."""
    if not name or not (callable(fn) or (isinstance(fn, str) and ":" in fn)):
        raise InvalidParameter(f"a backend is a name and a function or 'module:function', got {name!r}, {fn!r}")
    ADAPTIVE_BACKENDS[name] = b = AdaptiveBackend(name, fn, help, device, needs)
    return b


def adaptive_backend(name: str) -> AdaptiveBackend:
    """The backend ``name``; InvalidParameter naming the choices otherwise."""
    try:
        return ADAPTIVE_BACKENDS[name]
    except (KeyError, TypeError):
        raise InvalidParameter(f"unknown runtime {name!r} (choose from {', '.join(ADAPTIVE_BACKENDS)})") from None


def backend_unavailable(name: str) -> str | None:
    """None when adaptive backend ``name`` can run here, else a one-line reason (what to install)."""
    b = ADAPTIVE_BACKENDS.get(name)
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
register_backend("dopri-cpu", "kernels.flint.ensemble.rk:simulate_file",
                 "adaptive Dormand-Prince on the ODE core, NumPy (the GPU integrator's twin)")
register_backend("is", "kernels.flint.ensemble.gpu:simulate_file_is",
                 "adaptive Dormand-Prince on the GPU, the model through the bytecode interpreter", device="gpu")
register_backend("ts", "kernels.flint.ensemble.gpu:simulate_file_ts",
                 "adaptive Dormand-Prince on the GPU, the model as generated CUDA C", device="gpu")
