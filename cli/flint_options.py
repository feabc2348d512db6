"""The ``flint`` command's shared option checks: the time grid, the integrator settings, the model
and its ``--set`` / ``--vary`` changes, and the report of a run — used by a single run
(:mod:`cli.flint`), an SBML ensemble (:mod:`cli.flint_ensemble`) and a sweep (:mod:`cli.flint_sweep`),
so none imports another's module."""
from __future__ import annotations

import numpy as np

# Imports inside functions: the SBML reference simulator (≈90 ms) and kernels.flint.adaptive_run, loaded only
# for the hint after a refused SBML file, so that `--help` does not pay for them.
from kernels.errors import ExplorerError, InvalidParameter
from kernels.flint import schemes
from kernels.flint.loaders import find_model_file, read_model
from kernels.flint.io import write_csv
from kernels.flint.run import MAX_STEPS, RunSettingError, Vary, check_settings
from kernels.flint.runtimes.auto import AUTO_HELP
from kernels.flint.schemes import (ADAPTIVE_BACKENDS, ENGINES, SUITE_RUNTIME_ALIASES, alias_note, check_backend,
                                   engine_named, engine_table, methods_help, old_runtime)

from .common import UsageError, dumps, note, number, raise_failed, write_outputs
from .scheduler import backend_choice

#: the option each FlintRun setting is given by (RunSettingError.field → flag)
FLAGS = {"method": "--method", "engine": "--engine", "dtype": "--dtype", "mapping": "--mapping"}


def add_axes(p, command: str) -> None:
    """``--method``, ``--engine`` and the old ``--runtime`` (an alias), their help generated from
    :mod:`kernels.flint.schemes` (which engine offers which method)."""
    aliases = _aliases(command)
    if command == "flint":
        auto_m, auto_e = "euler", f"auto: {AUTO_HELP}"
    else:
        own = " / ".join(e for e in engine_table(command) if engine_named(e).backend("auto"))
        auto_m = f"lsoda on numpy; on {own} the engine's own pick (dopri5, rodas4 for a stiff model)"
        auto_e = ("auto: numpy (the CPU reference), or the engine offering --method; it follows --backend "
                  "(gpu: ts first)")
    p.add_argument("--method", default=None, metavar="METHOD",
                   help=f"the integrator; auto (default) = {auto_m}. {methods_help(command)}")
    p.add_argument("--engine", default=None, metavar="ENGINE",
                   help="where and how it runs: " + "; ".join(f"{e}: {engine_named(e).help}" for e in engine_table(command))
                   + f"; {auto_e}")
    extra = ""
    if command != "flint":                         # adaptive backends added by register_backend, by name
        more = {k: b.help for k, b in ADAPTIVE_BACKENDS.items() if k not in SUITE_RUNTIME_ALIASES and k not in ENGINES}
        extra = "".join(f"; {k}: {v}" for k, v in more.items())
    p.add_argument("--runtime", default=None, metavar="OLD",
                   help="the old spelling, kept as an alias (a note says the pair): "
                   + ", ".join(f"{k} = {_pair_text(*v)}" for k, v in aliases.items()) + extra)


def _aliases(command: str) -> dict:
    return schemes.FLINT_RUNTIME_ALIASES if command == "flint" else schemes.SUITE_RUNTIME_ALIASES


def _pair_text(method, engine) -> str:
    return f"--method {method} --engine {engine}" if method else f"--engine {engine}"


def resolve_axes(a, command: str = "flint") -> tuple[str | None, str | None]:
    """(method, engine) as given, with an old ``--runtime`` spelling mapped to its pair (the ``note:``
    line saying so is kept for :func:`say_alias`); sets ``a.method`` / ``a.engine``.  ``--integrator`` (flint) is the old
    name of ``--method``.  Nothing else is checked here: FlintRun / :func:`kernels.flint.schemes.pair`
    check the values."""
    method = getattr(a, "method", None)
    old_int = getattr(a, "integrator", None)
    if old_int is not None:
        if method is not None and method != old_int:
            raise UsageError("--integrator is the old spelling of --method; give one of them")
        method = old_int
    engine = a.engine
    if a.runtime is not None:
        if engine is not None:
            raise UsageError("--runtime is the old spelling of --engine (and --method); give one of them")
        try:
            m, engine = old_runtime(a.runtime, command)
        except InvalidParameter as exc:
            raise UsageError(f"--{exc}") from None
        if m is not None:
            if method not in (None, "auto", m):
                flag = "--integrator" if old_int is not None else "--method"
                raise UsageError(f"{flag} does not apply to --runtime {a.runtime} (= {_pair_text(m, engine)}; got {method})")
            method = m
        a.alias_note = alias_note(a.runtime, m, engine)
    a.method, a.engine = method, engine
    return method, engine


def auto_backend(a) -> str | None:
    """What ``--engine auto`` follows: ``--backend``, else GSE_BACKEND (cpu / gpu), else None (auto)."""
    b = backend_choice(a)
    return None if b == "auto" else b


def backend_agrees(engine: str | None, backend: str | None) -> None:
    """An explicit ``--engine`` and an explicit ``--backend`` name the same device (one error line)."""
    try:
        check_backend(engine, backend)
    except InvalidParameter as exc:
        raise UsageError(f"--{exc}") from None


def say_alias(a) -> None:
    """The one ``note:`` line of an old ``--runtime`` spelling — said once, with the results (a refused
    or interrupted run keeps its one ``error:`` line)."""
    text = getattr(a, "alias_note", None)
    if text:
        note(text)
        a.alias_note = None


def model_path(name):
    """The file behind a model argument (a path or a shipped model's file name), or None."""
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
    """(method, dtype, mapping) of a fixed-step run, checked by FlintRun's one check
    (:func:`kernels.flint.run.check_settings`); sets ``a.runtime`` to the Runtime of ``--engine``."""
    try:
        method, runtime, dtype, mapping = check_settings(a.method, a.engine, a.dtype or "float64", a.mapping or "cell")
    except RunSettingError as exc:
        flag = "--integrator" if exc.field == "method" and getattr(a, "integrator", None) is not None \
            else FLAGS[exc.field]
        raise UsageError(f"{flag} {exc.text}") from None
    a.runtime = runtime
    return method, dtype, mapping


def read(a):
    """The model of the MODEL argument, or the compiler's own error; the files its reading opened are
    kept in ``a.files_read`` for --json."""
    loaded = read_model(a.model, allow_outside=a.allow_outside_references)
    a.files_read = loaded.files_read
    return loaded.model


def with_hint(a, exc: ExplorerError) -> ExplorerError:
    """The error to raise for a model the compiler refused: an SBML file the reference simulator reads
    gets the hint to try --method lsoda (and the adaptive ensembles where they take it)."""
    from kernels.flint.sbml.reference import reference_hint
    path = model_path(a.model)
    hint = reference_hint(path) if path is not None and not isinstance(exc, UsageError) else ""
    if not hint:
        return exc
    from kernels.flint.adaptive_run import ensemble_refusal
    if ensemble_refusal(path, full=True) is None:
        hint += ", or an adaptive ensemble: --method auto, dopri5 or rodas4"
    return UsageError(f"{exc}{hint}")


def load(a):
    """The model of the MODEL argument (:func:`read`; a refusal with :func:`with_hint`)."""
    try:
        return read(a)
    except ExplorerError as exc:
        raise with_hint(a, exc) from None


def set_values(a) -> dict:
    """The --set PARAM=VALUE changes, the values checked (the names are the model's to check)."""
    out = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        out[k] = number(f"--set {k}", v)
    return out


def parameter_sets(a, model) -> dict:
    """The --set PARAM=VALUE changes, checked against the model's parameters."""
    for kv in a.set:
        k = kv.partition("=")[0]
        if k not in model.params:
            raise UsageError(f"--set: {k!r} is not a parameter of {model.name}")
    return set_values(a)


def vary_specs(a, params=None, name: str = "") -> tuple:
    """The --vary PARAM=LO:HI spreads (:class:`Vary`; ``PARAM=V``: every member V), the numbers
    checked; ``params``: the model's parameters to check the names against (else the model checks)."""
    out = []
    for kv in a.vary:
        k, _, rng = kv.partition("=")
        if params is not None and k not in params:
            raise UsageError(f"--vary: {k!r} is not a parameter of {name}")
        lo, _, hi = rng.partition(":")
        out.append(Vary(k, number("--vary", lo), number("--vary", hi or lo)))
    return tuple(out)


# ------------------------------------------------------------------ the report of a run

def summary(samples, names: list) -> dict:
    """name → min / max over the samples of every member (NaN ignored) and the final value (member 0's,
    or the first 8 members' with several); ``samples`` (k, len(names), members)."""
    y = np.asarray(samples, dtype=float)
    out = {}
    for i, r in enumerate(names):
        col = y[:, i, :]
        final = [float(v) for v in col[-1, :8]] if col.shape[1] > 1 and len(col) else \
            float(col[-1, 0]) if len(col) else None
        out[r] = {"min": float(np.nanmin(col)) if col.size else None,
                  "max": float(np.nanmax(col)) if col.size else None, "final": final}
    return out


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.6g}"


def report(a, out: dict, times, samples, rec: list, headline: str) -> int:
    """The results (one JSON object with --json, else a headline + min/max/final lines), with --csv
    (the recorded traces, ``samples`` (k, recorded, members)) written first; a failing CSV still
    prints the results."""
    say_alias(a)                                 # an old --runtime spelling: one note, with the results
    failed = write_outputs(out, [("csv", lambda: (write_csv(a.csv, times, samples, rec), a.csv)[1])]
                           if a.csv else [])
    if a.json:
        print(dumps(out))
    else:
        print(headline)
        for r, d in out["variables"].items():
            print(f"  {r}: min {_fmt(d['min'])}  max {_fmt(d['max'])}  final {d['final']}")
        if not len(times):
            note(f"no samples recorded: --every {a.every} is longer than the run")
    raise_failed(failed)
    return 0
