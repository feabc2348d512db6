"""Sweep points: parameter values typed as ranges or lists, their product, and a sweep's identity.

A *point* is a dict ``{parameter: value}``; a sweep is an ordered list of points.  Values are
typed the way the CLI's ``--vary NAME=VALUES`` and the GUI's sweep fields accept them:

* ``a:b:n``   — n evenly spaced floats from a to b, both included (numpy.linspace); n ≥ 1
  (n = 1 needs a = b);
* ``a..b``    — the integers a, a + 1, …, b (a ≤ b);
* ``x,y,z``   — a list; each item a number (int when it reads as one) or a word (``rk2``);
* ``x``       — one value.

:func:`product` makes the points of several such axes (the last axis varies fastest, like
``itertools.product``).  :func:`identity` is the sweep's fingerprint (task name, fixed parameters,
SHA-256 of the point list) that a result file's header records, so that ``--resume`` refuses a
file written by a different sweep.  Qt-free; every malformed input raises :class:`InvalidParameter`.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import re

import numpy as np

from ..errors import InvalidParameter
from ..limits import FLOAT_LIMIT, INT_LIMIT

#: the largest number of points one sweep may have (a typo such as 0:1:1e9 is refused, not run)
MAX_POINTS = 10_000_000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$")
_INT = re.compile(r"[+-]?\d+$")


class _OutOfRange(InvalidParameter):
    """A number beyond the command line's ranges (kernels.limits.FLOAT_LIMIT / INT_LIMIT)."""


def _number(text: str, what: str):
    """An int or a finite float within the ranges every number option has (±FLOAT_LIMIT floats,
    int64 integers), else InvalidParameter (values such as 1e308 or a step count of 1e30 would
    overflow or run for ever)."""
    t = text.strip()
    if _INT.match(t):
        v = int(t)
        if abs(v) > INT_LIMIT:
            raise _OutOfRange(f"{what}: {text!r} is outside the integer range ±{INT_LIMIT}")
        return v
    try:
        v = float(t)
    except ValueError:
        raise InvalidParameter(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(v):
        raise InvalidParameter(f"{what}: {text!r} is not a finite number")
    if abs(v) > FLOAT_LIMIT:
        raise _OutOfRange(f"{what}: {text!r} is outside the range ±{FLOAT_LIMIT:g} of every number option")
    return v


def _scalar(text: str, what: str = "value"):
    """An int, a float, or (for words such as ``rk2``) the stripped string."""
    t = text.strip()
    try:
        return _number(t, what)
    except _OutOfRange:
        raise
    except InvalidParameter:
        return t


def parse_values(text: str, name: str = "value") -> list:
    """The values of one sweep axis typed as ``a:b:n``, ``a..b``, ``x,y,z`` or ``x`` (see the module
    docstring); InvalidParameter for an empty or malformed range, naming ``name``."""
    t = str(text).strip()
    what = f"{name}={text}"
    if not t:
        raise InvalidParameter(f"{name}: no values given (use a:b:n, a..b or a comma list)")
    if ":" in t:
        parts = t.split(":")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise InvalidParameter(f"{what}: a range is START:STOP:COUNT, e.g. -0.6:0.6:13")
        a, b = _number(parts[0], what), _number(parts[1], what)
        n = _number(parts[2], what)
        if not isinstance(n, int) or n < 1:
            raise InvalidParameter(f"{what}: COUNT must be a whole number ≥ 1 (got {parts[2].strip()})")
        if n == 1 and a != b:
            raise InvalidParameter(f"{what}: one value between two different ends is ambiguous; "
                                   "use COUNT ≥ 2 or a single value")
        if n > MAX_POINTS:
            raise InvalidParameter(f"{what}: {n:,} values is more than the {MAX_POINTS:,} a sweep may have")
        return [float(v) for v in np.linspace(float(a), float(b), n)]
    if ".." in t:
        parts = t.split("..")
        if len(parts) != 2:
            raise InvalidParameter(f"{what}: an integer range is FIRST..LAST, e.g. 1..4")
        a, b = (_number(p, what) for p in parts)
        if not (isinstance(a, int) and isinstance(b, int)):
            raise InvalidParameter(f"{what}: FIRST..LAST takes whole numbers (got {t})")
        if b < a:
            raise InvalidParameter(f"{what}: the range is empty (LAST {b} < FIRST {a})")
        if b - a + 1 > MAX_POINTS:
            raise InvalidParameter(f"{what}: {b - a + 1:,} values is more than the {MAX_POINTS:,} a sweep may have")
        return list(range(a, b + 1))
    items = [s for s in t.split(",")]
    if any(not s.strip() for s in items):
        raise InvalidParameter(f"{what}: an empty item in the list")
    return [_scalar(s, what) for s in items]


def parse_vary(spec: str) -> tuple[str, list]:
    """``"mean=-0.6:0.6:13"`` → ``("mean", [-0.6, -0.5, …, 0.6])``."""
    name, sep, values = str(spec).partition("=")
    name = name.strip()
    if not sep or not name:
        raise InvalidParameter(f"{spec!r}: write NAME=VALUES, e.g. mean=-0.6:0.6:13 or seed=1..4")
    if not _NAME.match(name):
        raise InvalidParameter(f"{spec!r}: {name!r} is not a parameter name")
    return name, parse_values(values, name)


def parse_axes(specs) -> dict[str, list]:
    """Several ``NAME=VALUES`` specs → ``{name: values}`` in the order given; a name twice is refused."""
    axes: dict[str, list] = {}
    for spec in specs:
        name, values = parse_vary(spec)
        if name in axes:
            raise InvalidParameter(f"{name} is varied twice; give it once (a comma list joins values)")
        axes[name] = values
    return axes


def product(axes: dict[str, list]) -> list[dict]:
    """Every combination of the axes' values as a list of points (last axis fastest).  No axes give
    one empty point (a single run of the fixed parameters)."""
    names = list(axes)
    total = 1
    for n in names:
        if not axes[n]:
            raise InvalidParameter(f"{n}: no values")
        total *= len(axes[n])
    if total > MAX_POINTS:
        raise InvalidParameter(f"the sweep has {total:,} points, more than the {MAX_POINTS:,} allowed")
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def canonical(obj) -> str:
    """Deterministic JSON of points and parameters (sorted keys, floats by repr, NumPy scalars as
    Python numbers): the same sweep gives the same text on every machine."""
    def norm(v):
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        return v
    return json.dumps(norm(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def identity(task: str, fixed: dict, points: list[dict]) -> dict:
    """The fingerprint a result file's header records: task name, fixed parameters, number of
    points and the SHA-256 of the canonical point list."""
    digest = hashlib.sha256(canonical(points).encode()).hexdigest()
    return {"task": task, "fixed": json.loads(canonical(fixed)), "points": len(points), "points_sha256": digest}
