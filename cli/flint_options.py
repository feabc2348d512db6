"""The ``flint`` command's shared option checks: the time grid, the integrator settings, the model
and its ``--set`` changes — used by a single run (:mod:`cli.flint`) and a sweep
(:mod:`cli.flint_sweep`), so neither imports the other's module."""
from __future__ import annotations

from .common import UsageError, number

#: most time steps one run may take (t_end / dt)
MAX_STEPS = 10 ** 12


def model_path(name):
    """The file behind a model argument (a path or a shipped model's file name), or None."""
    from kernels.flint.loaders import find_model_file
    return find_model_file(name)


def grid(a):
    """(t_end, dt, every, steps) checked: finite, > 0, at least one step and at most MAX_STEPS."""
    t_end, dt = number("--t-end", a.t_end, above=0), number("--dt", a.dt, above=0)
    every = number("--every", a.every, int, minimum=1)
    ratio = t_end / dt
    if not ratio <= MAX_STEPS:
        raise UsageError(f"--t-end / --dt = {ratio:.3g} steps; at most {MAX_STEPS:.0e}")
    steps = int(round(ratio))
    if steps < 1:
        raise UsageError(f"--dt {a.dt} is larger than --t-end {a.t_end}: not one step would be taken")
    return t_end, dt, every, steps


def settings(a) -> tuple[str, str, str]:
    """(integrator, dtype, mapping) of a bytecode / C / NumPy run, checked."""
    from kernels.flint.runtimes import INTEGRATORS, MAPPINGS
    integrator, dtype, mapping = a.integrator or "euler", a.dtype or "float64", a.mapping or "cell"
    if integrator not in INTEGRATORS:
        raise UsageError(f"--integrator must be euler or rk4 (got {integrator!r})")
    if dtype not in ("float64", "float32"):
        raise UsageError(f"--dtype must be float64 or float32 (got {dtype!r})")
    if mapping not in MAPPINGS:
        raise UsageError(f"--mapping must be {' or '.join(MAPPINGS)} (got {mapping!r})")
    return integrator, dtype, mapping


def load(a):
    """The model of the MODEL argument (an SBML file the compiler refuses gets the hint to try
    --runtime sbml); the files its reading opened are kept in ``a.files_read`` for --json."""
    from kernels.errors import ExplorerError
    from kernels.flint.loaders import read_model
    try:
        loaded = read_model(a.model, allow_outside=a.allow_outside_references)
        a.files_read = loaded.files_read
        return loaded.model
    except ExplorerError as exc:
        from kernels.flint.sbml.reference import reference_hint
        path = model_path(a.model)
        hint = reference_hint(path) if path is not None and not isinstance(exc, UsageError) else ""
        if hint:
            raise UsageError(f"{exc}{hint}") from None
        raise


def parameter_sets(a, model) -> dict:
    """The --set PARAM=VALUE changes, checked against the model's parameters."""
    out = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        if k not in model.params:
            raise UsageError(f"--set: {k!r} is not a parameter of {model.name}")
        out[k] = number(f"--set {k}", v)
    return out
