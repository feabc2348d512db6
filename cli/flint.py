"""``flint``: compile a cell model (native, SBML, CellML) and integrate it headless (paper 004 ch. 5),
run an SBML file on the SBML reference simulator (``--method lsoda``), or as an adaptive ensemble
(``--method dopri5`` / ``rodas4``, and ``--method auto`` for an SBML model the compiler refuses:
:mod:`cli.flint_ensemble`).

The run is named on two axes (:mod:`kernels.flint.schemes`): ``--method`` (euler, rk4, dopri5, rodas4,
lsoda, auto) and ``--engine`` (numpy, c, c-is, is, ts, auto); ``--runtime`` is the old one-word spelling,
an alias that prints one note with the pair (``sbml`` = ``--method lsoda --engine numpy``).

Numbers and choices are parsed in :func:`run` so that bad input gives one ``error:`` line.  Before
any model is compiled: the time grid (at least one step, at most :data:`MAX_STEPS`), ``--csv``, the
model file's size and nesting (:mod:`kernels.flint.inputs`) and the memory of the run *including the
recorded samples* are checked; ``--method lsoda`` also estimates its output grid before allocating.
"""
from __future__ import annotations

import os
import time

# Imports inside functions: the SBML reference simulator (≈90 ms), loaded when --method lsoda runs, and
# cli.flint_ensemble (kernels.flint.adaptive_run, ≈85 ms), loaded when an adaptive ensemble runs, so that
# `--help` and the fixed-step runs do not pay for them.
from kernels import limits as L
from kernels.errors import ExplorerError, InvalidParameter, SimulationBlowUp
from kernels.filegate import ENV_ALLOW_OUTSIDE, MODEL
from kernels.flint.inputs import DEFAULT_MAX_MODEL_MB, ENV_MAX_MODEL_MB
from kernels.flint.model import select_states
from kernels.flint.run import FlintRun
from kernels.flint.runtimes import check_memory, samples_in
from kernels.flint.schemes import AUTO, FLINT_ENSEMBLE

from . import flint_sweep
from .common import (CSV_EXTS, UsageError, add_limit_options, apply_limit_options, check_output, number, num_type,
                     threads_type)
from .flint_options import (MAX_STEPS, add_axes, auto_backend, backend_agrees, grid,  # noqa: F401  (MAX_STEPS)
                            model_path, parameter_sets, read, report, resolve_axes, settings, summary, vary_specs,
                            with_hint)

NAME = "flint"
#: ``--backend`` (the array library) is taken: ``--engine auto`` follows it (cpu: c or NumPy; gpu: ts), an
#: explicit ``--engine`` on the other device is refused
USES_BACKEND = True


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="Flint: run an SBML/CellML/native ODE model (paper 004 ch. 5)",
                       description="Compile a cell model to bytecode / CUDA C and integrate it headless.")
    p.add_argument("model", help="model file (.flint, SBML .xml, .cellml) or a shipped model name")
    p.add_argument("--t-end", default=1000.0, type=num_type(float, above=0), help="end time (model time units, ms for LR)")
    p.add_argument("--dt", default=0.01, type=num_type(float, above=0), help="time step; with --method lsoda, dopri5 or rodas4 "
                   "the output interval (the adaptive integrators choose their own steps, at most dt)")
    add_axes(p, NAME)
    p.add_argument("--integrator", default=None, help="the old name of --method")
    p.add_argument("--dtype", default=None, help="float64 (default) or float32; lsoda, dopri5, rodas4: float64 only")
    p.add_argument("--threads", default=1, type=threads_type(), help="host threads of --engine c / c-is (OpenMP over cells; "
                   "default 1, the thesis's CPU-1)")
    p.add_argument("--mapping", default=None,
                   help="GPU thread mapping: cell (one thread a member/cell, the default) or expression (the "
                        "thesis's: one launch a phase, one thread a bytecode, warps of 32); lsoda, dopri5, rodas4: cell only")
    p.add_argument("--ensemble", default=1, type=num_type(int, minimum=1), help="ensemble size N (one model, N members); lsoda: 1 only")
    p.add_argument("--vary", action="append", default=[], metavar="PARAM=LO:HI",
                   help="spread a parameter linearly over the ensemble (repeatable; not with lsoda; dopri5, rodas4: "
                        "a constant parameter of the SBML model)")
    p.add_argument("--line", default=None, type=num_type(int, minimum=1), metavar="N", help="N cells in a line, diffusively coupled on V (not lsoda)")
    p.add_argument("--ring", default=None, type=num_type(int, minimum=1), metavar="N", help="N cells in a ring (not lsoda)")
    p.add_argument("--coupling", default=1.0, type=num_type(float), help="coupling coefficient D (1/time) for --line/--ring")
    p.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE", help="change a parameter")
    p.add_argument("--record", action="append", default=None,
                   help="state to record (repeatable, comma lists and patterns such as 'S_RG_*'; default all); lsoda: any species, parameter or "
                        "compartment id, @a:S for the amount of species S (default: species and "
                        "non-constant parameters); dopri5, rodas4: SBML ids, comma lists (CSV columns name[member])")
    p.add_argument("--every", default=100, type=num_type(int, minimum=1), help="sample every N steps (lsoda, dopri5, rodas4: every N output "
                   "intervals; their samples include t = 0)")
    p.add_argument("--csv", default=None, help="write the recorded traces (member 0 / cell 0 .. all cells) as CSV; "
                   "with --sweep: the result file, one row per member, appended as each slice finishes")
    p.add_argument("--max-model-mb", default=None, type=num_type(float, above=0, maximum=1e6), metavar="MB",
                   help=f"largest model file read, in MiB (default {DEFAULT_MAX_MODEL_MB}, or {ENV_MAX_MODEL_MB})")
    p.add_argument("--allow-outside-references", action="store_true",
                   help="let the model read files it names outside its own folder (SBML comp external model "
                        "definitions, CellML imports); refused by default. The files read are listed in --json")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")
    add_limit_options(p)
    add_solver_steps_option(p)
    flint_sweep.add_options(p)


def add_solver_steps_option(p) -> None:
    """``--max-solver-steps``: raises :data:`kernels.limits.MAX_SOLVER_STEPS` for this run."""
    p.add_argument("--max-solver-steps", type=num_type(int, minimum=1), default=None, metavar="N",
                   help=f"most integrator steps of one SBML reference-simulator run (--method lsoda) before it "
                        f"stops (default {L.MAX_SOLVER_STEPS:,})")


def apply_solver_steps(a) -> None:
    """Put ``--max-solver-steps`` (or the default: no earlier run's value is inherited) in force."""
    L.set_limits(solver_steps=getattr(a, "max_solver_steps", None) or L.MAX_SOLVER_STEPS)


def _common_checks(a):
    check_output(a.csv, CSV_EXTS, "--csv")
    apply_limit_options(a)
    apply_solver_steps(a)
    if a.max_model_mb is not None:
        os.environ[ENV_MAX_MODEL_MB] = repr(number("--max-model-mb", a.max_model_mb, above=0))
    if a.allow_outside_references and a.sweep:           # the sweep's workers load the model themselves
        os.environ[ENV_ALLOW_OUTSIDE] = "1"


#: environment variables the options set for the command's worker processes; restored afterwards
OPTION_ENVIRONMENT = (MODEL.env, ENV_ALLOW_OUTSIDE)


def scoped_environment(fn, a) -> int:
    """``fn(a)`` with :data:`OPTION_ENVIRONMENT` put back as it was afterwards, so an option of one
    command (run in-process, e.g. by the tests or the GUI) never leaks into the next."""
    saved = {k: os.environ.get(k) for k in OPTION_ENVIRONMENT}
    try:
        return fn(a)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run(a) -> int:
    """``flint`` (:func:`run_flint`) with the environment its options set restored afterwards."""
    return scoped_environment(run_flint, a)


def run_flint(a) -> int:
    """``flint``: the options checked one by one (one ``error:`` line naming the option), then one
    :class:`kernels.flint.run.FlintRun` (``--vary PARAM=LO:HI``: ``linspace(LO, HI, N)`` over the
    members) compiled and integrated — or ``--method lsoda`` (:func:`_run_sbml`), or ``--method dopri5 /
    rodas4`` and an explicit ``--method auto`` for an SBML model the compiler refuses: an adaptive
    ensemble (:mod:`cli.flint_ensemble`)."""
    method, engine = resolve_axes(a, NAME)
    if method == "lsoda":                               # the SBML reference simulator: engine numpy only
        if engine not in (None, "auto", "numpy"):
            raise UsageError(f"--method lsoda runs on --engine numpy only (got --engine {engine})")
        if a.backend == "gpu":
            raise UsageError("--method lsoda (the SBML reference simulator) runs on the CPU, but --backend gpu "
                             "says the GPU")
        a.runtime = "sbml"
    backend_agrees(engine, a.backend)
    _common_checks(a)
    if a.sweep:
        return flint_sweep.run(a)
    given = [flag for flag, dest in flint_sweep.SWEEP_ONLY if getattr(a, dest) not in (None, False)]
    if given:
        raise UsageError(f"{given[0]} applies only with --sweep")
    if a.runtime == "sbml":
        return _run_sbml(a)
    if method in FLINT_ENSEMBLE:                        # an SBML model as an adaptive ensemble
        from . import flint_ensemble
        return flint_ensemble.run(a)
    if method == AUTO:                                  # an SBML model: the adaptive engines' own pick
        from . import flint_ensemble
        if flint_ensemble.prefers(a):
            return flint_ensemble.run(a, refused="")
    integrator, dtype, mapping = settings(a)
    t_end, dt, every, steps = grid(a)
    n = number("--ensemble", a.ensemble, int, minimum=1)
    threads = number("--threads", a.threads, int, minimum=1)
    try:
        model = read(a)
    except ExplorerError as exc:
        if method == AUTO:                               # --method auto: the adaptive ensemble instead
            from . import flint_ensemble
            if flint_ensemble.takes(a, exc):
                return flint_ensemble.run(a, refused=str(exc))
        raise with_hint(a, exc) from None
    model.params.update(parameter_sets(a, model))
    members, coupling = "ensemble", 1.0
    if a.line or a.ring:
        if a.line and a.ring:
            raise UsageError("--line and --ring exclude each other")
        members = "line" if a.line else "ring"
        n = number("--line/--ring", a.line or a.ring, int, minimum=1)
        coupling = number("--coupling", a.coupling)
    vary = vary_specs(a, model.params, model.name)
    try:
        rec = select_states(model, a.record) if a.record else list(model.states)
    except InvalidParameter as exc:
        text = str(exc)
        raise UsageError(f"--{text}" if text.startswith("record:") else f"--record: {text}") from None
    spec = FlintRun(model, runtime=a.runtime, integrator=integrator, dtype=dtype, mapping=mapping, threads=threads,
                    dt=dt, t_end=t_end, members=members, n=n, coupling=coupling, coupled="V", vary=vary,
                    record=tuple(rec), every=every, backend=auto_backend(a))
    member = spec.member_params()
    itemsize = 4 if dtype == "float32" else 8
    a.runtime = spec.runtime
    check_memory(model, n, len(member), a.runtime, mapping, itemsize, recorded=samples_in(0, steps, every) * len(rec) * n)
    t0 = time.perf_counter()
    sim = spec.simulation()
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        times, samples = sim.advance(steps, dt, record=spec.record_index, every=every)
    except SimulationBlowUp as exc:
        path = model_path(a.model)
        if path is None or path.suffix.lower() not in (".xml", ".sbml"):
            raise
        raise SimulationBlowUp(f"{exc}; the model may be stiff: --method rodas4 or --method auto") from None
    seconds = time.perf_counter() - t0
    info = sim.info()
    states = list(model.states)
    out = {"model": model.name, "n_states": model.n_states, "n_cells": sim.n, "steps": steps, "dt": dt,
           "t_end": steps * dt, "method": spec.method, "engine": spec.engine, "runtime": a.runtime, "mapping": mapping, "integrator": integrator, "dtype": dtype,
           "compile_seconds": round(t_compile, 4), "seconds": round(seconds, 4),
           "steps_per_s": round(steps / seconds, 1) if seconds > 0 else None,
           "block_size": info["block_size"], "threads": info["threads"],
           "runtime_choice": str(spec.choice) if spec.choice else None, "files_read": list(a.files_read),
           "variables": {r: {"min": float(samples[:, i].min()) if samples.size else None,
                             "max": float(samples[:, i].max()) if samples.size else None,
                             "final": [float(v) for v in sim.state()[states.index(r)][:8]] if sim.n > 1
                             else float(sim.state()[states.index(r), 0])}
                         for i, r in enumerate(rec)}}
    return report(a, out, times, samples, rec,
                  f"{model.name}: {model.n_states} states × {sim.n} cells, {steps} {integrator} steps "
                  f"on engine {spec.engine} in {seconds:.3f} s ({out['steps_per_s']} steps/s)"
                  + (f"\n{spec.choice}" if spec.choice else ""))


def _run_sbml(a) -> int:
    """--method lsoda (old: --runtime sbml): the SBML reference simulator (kernels/flint/sbml/reference.py),
    one model instance on engine numpy."""
    from kernels.flint.sbml.reference import check_output_memory, load_reference, n_output_points, output_times, run_reference
    why = "(the SBML reference simulator integrates one model instance with LSODA in float64)"
    if a.dtype not in (None, "float64"):
        raise UsageError(f"--dtype {a.dtype} does not apply to --method lsoda {why}")
    if a.mapping not in (None, "cell"):
        raise UsageError(f"--mapping {a.mapping} does not apply to --method lsoda {why}")
    if a.line or a.ring:
        raise UsageError(f"--line/--ring do not apply to --method lsoda {why}")
    if number("--ensemble", a.ensemble, int, minimum=1) != 1:
        raise UsageError(f"--ensemble {a.ensemble} does not apply to --method lsoda {why}")
    if a.vary:
        raise UsageError(f"--vary does not apply to --method lsoda {why}; use --set")
    t_end, dt, every, steps = grid(a)
    try:
        n_points = n_output_points(t_end, dt, every)
    except InvalidParameter as exc:
        raise UsageError(f"--t-end/--dt/--every: {exc}") from None
    path = model_path(a.model)
    if path is None:
        raise UsageError(f"no such model file: {a.model}")
    if path.suffix.lower() in (".flint", ".cellml"):
        raise UsageError(f"--method lsoda needs an SBML file, got {path.name}")
    t0 = time.perf_counter()
    ref = load_reference(path, allow_outside=a.allow_outside_references)
    overrides = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        if k not in ref.params:
            raise UsageError(f"--set: {k!r} is not a parameter of {ref.name}")
        if k not in ref.editable:
            raise UsageError(f"--set: {k!r} is {ref.roles[k]} in {ref.name}; it cannot be set")
        overrides[k] = number(f"--set {k}", v)
    rec = a.record or ref.default_record()
    known = set(ref.recordable) | {"@a:" + x for x in ref.system.species} | {r.id for r in ref.system.reactions}
    for r in rec:
        if r not in known:
            more = " …" if len(ref.recordable) > 12 else ""
            raise UsageError(f"--record: {r!r} is not a variable of {ref.name} (species, parameters, compartments; "
                             f"@a:S for amounts: {', '.join(ref.recordable[:12])}{more})")
    check_output_memory(ref, n_points, len(rec))
    times = output_times(t_end, dt, every)
    t_load = time.perf_counter() - t0
    res = run_reference(ref, times, rec, params=overrides)
    y = res.values
    out = {"model": ref.name, "n_states": res.n_states, "n_cells": 1, "steps": steps, "dt": dt,
           "t_end": steps * dt, "method": "lsoda", "engine": "numpy", "runtime": "sbml", "mapping": None,
           "integrator": "lsoda", "dtype": "float64",
           "compile_seconds": round(t_load, 4), "seconds": round(res.seconds, 4),
           "steps_per_s": round(steps / res.seconds, 1) if res.seconds > 0 else None, "block_size": None,
           "n_events": len(ref.system.events), "files_read": list(ref.system.files_read),
           "variables": summary(y[:, :, None], rec)}
    return report(a, out, res.times, y[:, :, None], rec,
                  f"{ref.name}: {res.n_states} states, {len(ref.system.events)} events, {steps} output "
                  f"intervals (dt {dt:g}) on the SBML reference simulator in {res.seconds:.3f} s")
