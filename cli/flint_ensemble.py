"""``flint MODEL.xml --method dopri5|rodas4|auto``: an SBML model as an adaptive ensemble on the GPU or host
engines (issue 34) — one :class:`kernels.flint.adaptive_run.EnsembleRun` built from the options in
:func:`build`, the only place, and checked by it alone (its :class:`EnsembleSettingError` names the
setting, so the one ``error:`` line names the option).

What runs: ``--ensemble N`` members of the model from t = 0 to ``--t-end``, output every ``--dt``
(the integrator's largest step too), ``--set`` constant parameters for every member, ``--vary
P=LO:HI`` spread ``linspace(LO, HI, N)``; Dormand–Prince 5(4) or Rodas4 with root-found events,
delays and (Rodas4) algebraic rules, on ``--engine`` numpy (the NumPy twins), c / c-is (the GPU's CUDA
source compiled for the host), is / ts (the GPU).  ``--every N`` keeps every N-th output point (and
t end), the grid of ``--method lsoda`` (:func:`kernels.flint.sbml.reference.output_times`).

``--method auto`` (given explicitly) comes here for an SBML model that the fixed-step compiler refuses
(:func:`takes`), and for any SBML model when the engine has its own method auto (:func:`prefers`: its
stiffness test picks Rodas4 for a stiff model, where fixed-step Euler would blow up):
on an engine with its own method auto (c, c-is, is, ts) that pick runs (Dormand–Prince, Rodas4 when
stiff or for algebraic rules / delays); on numpy, Dormand–Prince, or Rodas4 when only the full core
(algebraic rules, fast reactions, delays) takes the model.  ``--engine auto`` follows ``--backend``
(gpu: ts; cpu: the host build c; neither: ts when a GPU is here, else c, else numpy).  One line says
what was picked and why (``runtime_choice`` in --json), as for the fixed-step engine's auto.

The results have the shapes of the other paths (:func:`cli.flint_options.report`): the recorded
traces of every member in --csv (columns ``name[member]``), min / max / final in --json, plus the
model's event count and member 0's firings (``events``: count and times, where the engine reports them).
``compile_seconds`` is reading and lowering the model; ``seconds`` the integration, which includes the
kernel's build on its first use (cached afterwards: time a second run).  ``--allow-outside-references``
lets the SBML readers follow comp references out of the model's folder (the files read are listed).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from kernels.errors import ExplorerError
from kernels.filegate import ENV_ALLOW_OUTSIDE
from kernels.flint.adaptive_run import (EnsembleRun, EnsembleSettingError, auto_engine, engine_offers_auto,
                                        engine_reason, ensemble_refusal, resolve_auto)
from kernels.flint.schemes import AUTO

from .common import UsageError, number
from .flint_options import auto_backend, grid, model_path, report, set_values, summary, vary_specs

#: the option of each EnsembleRun setting (EnsembleSettingError.field → flag)
FLAGS = {"method": "--method", "engine": "--engine", "params": "--set", "vary": "--vary"}
#: model files that are not SBML
NOT_SBML = (".flint", ".cellml")
#: why the engine's own method auto picked each method, in the one choice line
PICKED = {"dopri5": "not stiff", "rodas4": "stiff, or algebraic rules / fast reactions / delays"}


def takes(a, exc: ExplorerError) -> bool:
    """``--method auto`` and the fixed-step compiler refused the model (``exc``): whether the adaptive
    ensemble engines take it instead (an SBML file whose ODE core lowers, with Rodas4's DAE / delays)."""
    path = model_path(a.model)
    if path is None or isinstance(exc, UsageError) or path.suffix.lower() in NOT_SBML:
        return False
    _allow_outside(a)
    return ensemble_refusal(path, full=True) is None


def prefers(a) -> bool:
    """An explicit ``--method auto`` on an SBML file, on an engine with its own method auto (given, or
    engine auto's pick here), that the ensemble engines take: the adaptive pick (Dormand–Prince, or Rodas4
    when stiff) rather than fixed-step Euler."""
    path = model_path(a.model)
    if path is None or path.suffix.lower() in NOT_SBML or not path.is_file():
        return False
    engine = a.engine if a.engine not in (None, AUTO) else auto_engine(auto_backend(a))
    if engine is None or not engine_offers_auto(engine):
        return False
    _allow_outside(a)
    return ensemble_refusal(path, full=True) is None


def _allow_outside(a) -> None:
    """--allow-outside-references for the SBML readers (their default; cli.flint.run restores it)."""
    if a.allow_outside_references:
        os.environ[ENV_ALLOW_OUTSIDE] = "1"


def run(a, refused: str | None = None) -> int:
    """Build (:func:`build`), integrate, report; ``refused``: why the fixed-step compiler refused the
    model (``--method auto``; "" when it took it and :func:`prefers` chose the adaptive pick)."""
    t0 = time.perf_counter()
    spec, why, every, steps = build(a, refused)
    t_build = time.perf_counter() - t0
    res = spec.run()
    return _report(a, spec, res, why, every, steps, t_build)


def build(a, refused: str | None = None) -> tuple[EnsembleRun, list, int, int]:
    """(the EnsembleRun of the options, the reasons of what auto picked, --every, output intervals)."""
    path = model_path(a.model)
    if path is None:
        raise UsageError(f"no such model file: {a.model}")
    if path.suffix.lower() in NOT_SBML:
        raise UsageError(f"--method {a.method} runs an SBML model as an ensemble, got {path.name}")
    why = " (the adaptive ensembles integrate in float64, one thread a member)"
    for flag, bad in (("--line/--ring", a.line or a.ring), (f"--dtype {a.dtype}", a.dtype not in (None, "float64")),
                      (f"--mapping {a.mapping}", a.mapping not in (None, "cell")),
                      (f"--threads {a.threads}", str(a.threads) != "1")):
        if bad:
            raise UsageError(f"{flag} does not apply to --method {a.method}{why}")
    t_end, dt, every, steps = grid(a)
    n = number("--ensemble", a.ensemble, int, minimum=1)
    _allow_outside(a)
    record = tuple(r.strip() for item in (a.record or ()) for r in item.split(",") if r.strip())
    backend = auto_backend(a)
    method, engine, reasons = _pick(a, path, refused, backend)
    try:
        spec = EnsembleRun(str(path), method=method, engine=engine, n=n, t_end=t_end, dt=dt,
                           params=tuple(set_values(a).items()), vary=vary_specs(a), record=record, backend=backend)
    except EnsembleSettingError as exc:
        flag = FLAGS[exc.field]
        raise UsageError(f"--{exc}" if exc.field in ("method", "engine") else f"{flag}: {exc}") from None
    if a.engine in (None, AUTO) and engine is None:
        reasons.insert(0, engine_reason(spec.engine, backend))
    return spec, reasons, every, steps


def _pick(a, path: Path, refused: str | None, backend: str | None) -> tuple[str, str | None, list]:
    """(method, engine or None = EnsembleRun picks, reasons) of the options: the library's rule
    (:func:`kernels.flint.adaptive_run.resolve_auto`), after why the fixed-step compiler is not used."""
    reasons = []
    if refused is not None:
        reasons.append(f"the fixed-step compiler refuses it ({refused})" if refused else
                       "an SBML model: method auto is the adaptive engines' pick (Rodas4 when stiff), not fixed-step Euler")
    method, engine, why = resolve_auto(path, a.method, a.engine, backend)
    return method, engine, reasons + why


def _report(a, spec: EnsembleRun, res, reasons: list, every: int, steps: int, t_build: float) -> int:
    k = len(res.times)
    keep = np.arange(0, k, every)
    if k and keep[-1] != k - 1:
        keep = np.append(keep, k - 1)                # the grid of --method lsoda: t end included
    times, values = res.times[keep], res.values[keep]
    method = res.method or spec.method
    if spec.method == AUTO:
        reasons[-1] += f", {PICKED.get(method, 'which the engine does not say')}"
    choice = f"auto → {method} on {spec.engine}: " + "; ".join(reasons) if reasons else None
    t0 = res.event_times(0) if res.reports_events else None
    name = Path(spec.path).stem
    out = {"model": name, "n_states": len(spec.core.state_ids), "n_cells": spec.n, "steps": steps, "dt": spec.dt,
           "t_end": spec.t_end, "method": method, "engine": spec.engine, "runtime": spec.backend_name,
           "mapping": None, "integrator": method, "dtype": "float64", "compile_seconds": round(t_build, 4),
           "seconds": round(res.seconds, 4), "steps_per_s": round(steps / res.seconds, 1) if res.seconds > 0 else None,
           "block_size": None, "runtime_choice": choice, "n_events": len(spec.core.events),
           "events": {"reported": res.reports_events, "member": 0,
                      "count": None if t0 is None else len(t0), "times": None if t0 is None else t0.tolist()},
           "complete": res.complete, "files_read": list(spec.files_read), "variables": summary(values, list(res.names))}
    fired = "" if t0 is None or not spec.core.events else f", {len(t0)} event firings in member 0"
    headline = (f"{name}: {out['n_states']} states × {spec.n} members, {steps} output intervals (dt {spec.dt:g}) "
                f"with {method} on engine {spec.engine} in {res.seconds:.3f} s{fired}"
                + (f"\n{choice}" if choice else ""))
    return report(a, out, times, values, list(res.names), headline)
