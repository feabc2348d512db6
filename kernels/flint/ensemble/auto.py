"""Method ``auto`` of the adaptive ensemble engines: Dormand–Prince for non-stiff models, Rodas4 for
stiff ones, instead of refusing them.

Rule.  A model is taken as stiff when the explicit method would need more than ``STIFF_STEPS`` steps
for stability alone at t0: ρ(J(0, y0))·t_end / 3.3 > STIFF_STEPS (ρ the spectral radius of the
Jacobian of member 0, 3.3 about the extent of DOPRI5's stability region on the negative real axis;
Hairer & Wanner II §IV.2), or when Dormand–Prince refuses the run (its step budget, ``rk.MAX_STEPS``,
exceeded, or its stiffness test — Hairer's h·λ > 3.25 in 15 tests in a row — saying so: stiffness that
develops later, as in Robertson's problem), or when the model has what only
Rodas4 runs (algebraic rules and fast reactions as a DAE, delay csymbols).  Then Rodas4 runs
(:mod:`.rosenbrock`, :mod:`.rodas_gpu`) on the same engine.

Engines: ``numpy`` (the twins), ``ts`` / ``is`` (CUDA), ``c`` / ``c-is`` (the same sources on the host CPU;
Dormand–Prince there through ``integrate_dp_host`` when the DP launcher offers it).
"""
from __future__ import annotations

import numpy as np

from ...errors import InvalidParameter, Unsupported
from . import rk
from .rosenbrock import StiffProblem, integrate as rodas_integrate
from . import gpu as dp_gpu
from ..sbml.core import lower_system
from .rodas_gpu import integrate_device, stiff_problem

STIFF_STEPS = 20_000
DOPRI_STABILITY = 3.3
ENGINES = {"numpy": (None, None), "ts": ("ts", "cuda"), "is": ("is", "cuda"), "c": ("ts", "host"),
           "c-is": ("is", "host")}


def stiffness_steps(pb: StiffProblem, t_end: float) -> float:
    """ρ(J(0, y0))·t_end / 3.3 of member 0: the explicit steps stability alone asks for at t0."""
    J, _ = pb.jacobian(np.zeros(1), pb.y0[:, :1], [0])
    J0 = J[:, :, 0]
    if not np.all(np.isfinite(J0)):
        return float("inf")
    rho = float(np.max(np.abs(np.linalg.eigvals(J0)))) if J0.size else 0.0
    return rho * float(t_end) / DOPRI_STABILITY


def integrate_auto(core, times, engine: str = "numpy", n: int = 1, member_params=None, fired: list | None = None,
                   **kw):
    """(method, observables (nt, nobs, n)): ``dopri5`` unless the model is stiff (see the module), then
    ``rodas4``.  ``core`` a lowered :class:`~kernels.flint.sbml.core.CoreSystem`; ``fired`` receives the
    event firings (member, t, event index) of the method that finished."""
    if engine not in ENGINES:
        raise InvalidParameter(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    flavour, device = ENGINES[engine]
    times = np.asarray(times, dtype=float)
    if device is not None:
        spb = stiff_problem(core, n, member_params)
    else:
        spb = StiffProblem(core, n, member_params)
    only_rodas = bool(getattr(core, "algebraic", None) or getattr(core, "delayed", None))
    stiff = only_rodas or stiffness_steps(spb, float(times[-1])) > STIFF_STEPS
    if not stiff:
        try:
            return "dopri5", _dopri(core, times, engine, n, member_params, fired=fired, **kw)
        except Unsupported:          # the step budget (stiffness that develops later), or a DP limit
            if fired is not None:
                fired.clear()        # Dormand–Prince's firings up to where it gave up
    if device is None:
        return "rodas4", rodas_integrate(spb, times, fired=fired, **kw)
    return "rodas4", integrate_device(spb, times, flavour, device, fired=fired, **kw)


def _dopri(core, times, engine, n, member_params, **kw):
    """Dormand–Prince with its stiffness test on: a stiff model stops it early (Unsupported)."""
    flavour, device = ENGINES[engine]
    kw["stiff_test"] = True
    if device is None:
        return rk.integrate(rk.Problem(core, n, member_params), times, **kw)
    pb = dp_gpu.gpu_problem(core, n, member_params)
    if device == "cuda":
        return dp_gpu.integrate_gpu(pb, times, flavour, **kw)
    host = getattr(dp_gpu, "integrate_host", None)
    if host is None:
        raise Unsupported("Dormand–Prince has no host launcher yet")
    return host(pb, times, flavour, **kw)


def _simulate(path, times, variables, amount, concentration, engine):
    try:
        core = lower_system(str(path), list(variables), set(amount), set(concentration))
    except Unsupported:                  # algebraic rules, fast reactions, delay csymbols: Rodas4 runs them
        core = lower_system(str(path), list(variables), set(amount), set(concentration), dae=True, delays=True)
    _, res = integrate_auto(core, times, engine)
    return {v: res[:, j, 0] for j, v in enumerate(core.observables)}


def simulate_file_numpy(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: method auto on the NumPy twins."""
    return _simulate(path, times, variables, amount, concentration, "numpy")


def simulate_file_ts(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: method auto on the GPU, generated CUDA C."""
    return _simulate(path, times, variables, amount, concentration, "ts")


def simulate_file_is(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: method auto on the GPU, the bytecode interpreter."""
    return _simulate(path, times, variables, amount, concentration, "is")


def simulate_file_c(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: method auto, the TS sources on the host CPU."""
    return _simulate(path, times, variables, amount, concentration, "c")


def simulate_file_c_is(path, times, variables, amount, concentration) -> dict:
    """Suite runtime: method auto, the IS sources on the host CPU."""
    return _simulate(path, times, variables, amount, concentration, "c-is")
