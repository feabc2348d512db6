"""The documented limits that bad or hostile input meets, in one place.

Host threads: at most :data:`HOST_THREADS_PER_CORE` × the cores (``os.cpu_count()``) — more
threads than that only add scheduling overhead, and a very large number makes the C++ runtime
abort (``std::system_error``) instead of failing cleanly.

Expansion limits (the model compilers and simulators, :mod:`kernels.flint`): each one names the
model element that reaches it and can be raised with the flag in brackets.

* :data:`MAX_EXPRESSION_NODES` — nodes of one expression after inlining function definitions
  (a 5 KB SBML file whose function definitions call each other twice per level expands to 2^k
  nodes) [``--max-expression-nodes``];
* :data:`MAX_EVENTS_PER_INSTANT` — event firings and located trigger changes at one model time
  (Zeno events, events that re-trigger each other) [``--max-events-per-instant``];
* :data:`MAX_EXPRESSION_DEPTH` — nesting depth of one expression (deep MathML), refused before
  Python's own recursion limit is reached [``--max-expression-depth``];
* :data:`MAX_SOLVER_STEPS` — integrator steps of one run of the SBML reference simulator (a model
  that grows without bound or whose events keep restarting the integrator) [``--max-solver-steps``].

The values live in a :class:`contextvars.ContextVar` so a command line (or a test) can raise them
for one run (:func:`raised`) without touching the module.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass, replace

from .errors import InvalidParameter

#: every number a command line gives lies in ±FLOAT_LIMIT (floats) / ±INT_LIMIT (integers) unless
#: its own range is narrower: a float beyond 1e15 is never a sensible length, time or rate here, and
#: products of such values (dx³, t_end/dt) must not overflow a float
FLOAT_LIMIT = 1e15
INT_LIMIT = 2 ** 63 - 1
#: host threads per core allowed for any CPU-threaded kernel
HOST_THREADS_PER_CORE = 4
#: default limits (see the module docstring)
MAX_EXPRESSION_NODES = 100_000
MAX_EVENTS_PER_INSTANT = 100
MAX_EXPRESSION_DEPTH = 200
MAX_SOLVER_STEPS = 300_000


def max_host_threads() -> int:
    """The most host threads a command may ask for: cores × :data:`HOST_THREADS_PER_CORE`."""
    return max(1, os.cpu_count() or 1) * HOST_THREADS_PER_CORE


def check_host_threads(threads, what: str = "threads") -> int:
    """``threads`` as an int in 1 … :func:`max_host_threads`, else :class:`InvalidParameter`."""
    top = max_host_threads()
    t = int(threads)
    if not 1 <= t <= top:
        raise InvalidParameter(f"{what} must be in 1 … {top} ({HOST_THREADS_PER_CORE} per core on "
                               f"{os.cpu_count() or 1} cores), got {threads}")
    return t


class ExpansionLimit(InvalidParameter):
    """A model expands beyond a documented limit; the message names the element and the flag."""


@dataclass(frozen=True)
class Limits:
    """The expansion limits of one run."""
    expression_nodes: int = MAX_EXPRESSION_NODES
    events_per_instant: int = MAX_EVENTS_PER_INSTANT
    expression_depth: int = MAX_EXPRESSION_DEPTH
    solver_steps: int = MAX_SOLVER_STEPS


_CURRENT: contextvars.ContextVar[Limits] = contextvars.ContextVar("gse_limits", default=Limits())


def current() -> Limits:
    """The limits in force (the defaults unless :func:`raised` / :func:`set_limits` changed them)."""
    return _CURRENT.get()


def set_limits(**changes) -> Limits:
    """Change the limits for the rest of this context (a command's run); None values are ignored."""
    lim = replace(current(), **{k: int(v) for k, v in changes.items() if v is not None})
    _CURRENT.set(lim)
    return lim


@contextlib.contextmanager
def raised(**changes):
    """``with raised(expression_nodes=10**7): …`` — the limits changed inside the block only."""
    token = _CURRENT.set(replace(current(), **{k: int(v) for k, v in changes.items() if v is not None}))
    try:
        yield current()
    finally:
        _CURRENT.reset(token)


def too_many_nodes(element: str, count: int) -> ExpansionLimit:
    lim = current().expression_nodes
    return ExpansionLimit(f"{element} expands to more than {lim:,} expression nodes when inlined "
                          f"(reached {count:,}); raise the limit with --max-expression-nodes")


def too_deep(element: str) -> ExpansionLimit:
    lim = current().expression_depth
    return ExpansionLimit(f"{element} is nested too deeply: more than {lim} levels; raise the limit with "
                          f"--max-expression-depth")


def too_many_events(names, t: float) -> ExpansionLimit:
    lim = current().events_per_instant
    shown = ", ".join(list(dict.fromkeys(names))[:6]) or "?"
    return ExpansionLimit(f"events {shown} fired (or their triggers changed) more than {lim:,} times at "
                          f"t = {t:g} (Zeno or mutually re-triggering events); raise the limit with "
                          f"--max-events-per-instant")


def too_many_steps(source: str, t: float) -> ExpansionLimit:
    lim = current().solver_steps
    return ExpansionLimit(f"{source}: the integrator took more than {lim:,} steps (reached t = {t:g}); the model "
                          f"may grow without bound or its events keep restarting the integration; raise the limit "
                          f"with --max-solver-steps")
