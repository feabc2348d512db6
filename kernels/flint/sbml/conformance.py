"""SBML Test Suite conformance (semantic TimeCourse cases): the library half of ``main.py flint-suite``.

Reads cases (``settings.txt``, ``model.m`` tags, ``results.csv``), applies the suite's pass rule
|sim − expected| ≤ absolute + relative·|expected| (NaN/Inf must match exactly) and runs one case
(:func:`run_case`).  Running many — in worker processes with a per-case time limit, a hung or crashing
case failed alone — is the sweep layer's one executor, :func:`kernels.sweep.suite_tasks.run_cases`.

The backends are the adaptive ones of :data:`kernels.flint.schemes.ADAPTIVE_BACKENDS` (by name) or any
callable of their signature; :func:`kernels.flint.schemes.register_backend` adds one (tests inject
fakes this way).  Where the suite and the CI sample live is the harness's business
(:mod:`cli.flint_suite`: ``--suite-dir``, ``GSE_SBML_SUITE``, tests/data/sbml_suite_sample.txt): every
function here takes the suite root as an argument.
"""
from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ... import filegate
from ...errors import InvalidParameter, Unsupported
from ...fileio import write_bytes, write_text

STATUSES = ("passed", "failed", "refused")


@dataclass
class Settings:
    """A case's ``settings.txt``."""
    start: float
    duration: float
    steps: int
    variables: list[str]
    absolute: float
    relative: float
    amount: list[str] = field(default_factory=list)
    concentration: list[str] = field(default_factory=list)

    def times(self) -> np.ndarray:
        """The steps + 1 output times."""
        return np.linspace(self.start, self.start + self.duration, self.steps + 1)


def _names(v: str) -> list[str]:
    return [s.strip() for s in v.split(",") if s.strip()]


def parse_settings(text: str) -> Settings:
    """Parse ``settings.txt`` (``key: value`` lines)."""
    kv = {}
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        if sep:
            kv[k.strip().lower()] = v.strip()
    try:
        return Settings(start=float(kv["start"]), duration=float(kv["duration"]), steps=int(kv["steps"]),
                        variables=_names(kv.get("variables", "")), absolute=float(kv["absolute"]),
                        relative=float(kv["relative"]), amount=_names(kv.get("amount", "")),
                        concentration=_names(kv.get("concentration", "")))
    except (KeyError, ValueError) as exc:
        raise InvalidParameter(f"malformed settings.txt: {exc}") from None


def parse_tags(text: str) -> tuple[list[str], list[str], str]:
    """(componentTags, testTags, testType) from ``model.m`` (first occurrence of each)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"\s*(componentTags|testTags|testType)\s*:(.*)$", line)
        if m and m.group(1) not in found:
            found[m.group(1)] = m.group(2)
    return _names(found.get("componentTags", "")), _names(found.get("testTags", "")), \
        found.get("testType", "").strip()


@dataclass
class Results:
    """A ``results.csv``: the raw header line, column names, values (rows × columns), line ending."""
    header: str
    columns: list[str]
    data: np.ndarray
    newline: str = "\n"
    final_newline: bool = True

    @property
    def times(self) -> np.ndarray:
        return self.data[:, 0]

    def column(self, name: str) -> np.ndarray:
        """A variable's column (a variable may be named like the time column, e.g. case 01820)."""
        return self.data[:, 1 + self.columns[1:].index(name)]


def read_results(path: str | os.PathLike) -> Results:
    """Read a ``results.csv`` (float() parses NaN/INF/-inf in any case)."""
    raw = filegate.read_text(path, filegate.CSV, str(path))          # regular file, size limit
    newline = "\r\n" if "\r\n" in raw else "\n"
    lines = raw.split(newline)
    final = lines[-1] == ""
    if final:
        lines.pop()
    header = lines[0]
    cols = [c.strip() for c in header.split(",")]
    try:
        data = np.array([[float(x) for x in ln.split(",")] for ln in lines[1:] if ln.strip()], dtype=float)
    except ValueError as exc:
        raise InvalidParameter(f"{path}: malformed results.csv: {exc}") from None
    return Results(header, cols, data.reshape(-1, len(cols)), newline, final)


def write_results(path: str | os.PathLike, like: Results, times: np.ndarray, values: dict[str, np.ndarray]) -> None:
    """Write ``values`` in exactly ``like``'s layout: same header line, columns, row count, line endings."""
    n = like.data.shape[0]
    cols = [np.asarray(times, float)] + [np.asarray(values[c], float) for c in like.columns[1:]]
    for name, c in zip(like.columns, cols):
        if c.shape != (n,):
            raise InvalidParameter(f"{name}: {c.shape[0] if c.ndim else 1} values, results.csv has {n} rows")
    rows = [like.header] + [",".join(repr(float(c[i])) for c in cols) for i in range(n)]
    text = like.newline.join(rows) + (like.newline if like.final_newline else "")
    write_bytes(path, text.encode())


@dataclass
class Case:
    """One suite case: id, files, settings and tags."""
    id: str
    dir: Path
    model: Path | None
    settings: Settings | None
    component_tags: list[str]
    test_tags: list[str]
    test_type: str

    @property
    def results_path(self) -> Path:
        return self.dir / f"{self.id}-results.csv"

    @property
    def tags(self) -> list[str]:
        return self.component_tags + self.test_tags


def _model_file(d: Path, cid: str) -> Path | None:
    """The case's ``{cid}-sbml-l<L>v<V>.xml`` of the highest (L, V) in folder ``d``, or None."""
    best, head = None, f"{cid}-sbml-l"
    for p in d.iterdir():
        m = _LEVEL.fullmatch(p.name, len(head)) if p.name.startswith(head) else None
        if m and (best is None or (int(m[1]), int(m[2])) > best[0]):
            best = ((int(m[1]), int(m[2])), p)
    return best[1] if best else None


_LEVEL = re.compile(r"(\d+)v(\d+)\.xml")


def cases_folder(root: str | os.PathLike) -> Path | None:
    """The folder holding the ``NNNNN/`` case folders under a suite root, or None.

    Accepts the project's layout (``root/cases/NNNNN``), a clone of sbmlteam/sbml-test-suite
    (``root/cases/semantic/NNNNN``), the release zip of the semantic cases (``root/semantic/NNNNN``)
    and the case folder itself (``root/NNNNN``)."""
    root = Path(root)
    for d in (root / "cases" / "semantic", root / "cases", root / "semantic", root):
        if d.is_dir() and any(re.fullmatch(r"\d{5}", p.name) for p in d.iterdir()):
            return d
    return None


def load_case(root: Path, cid: str) -> Case:
    """Load case ``cid`` (5-digit id) from suite root ``root``."""
    return _load(cases_folder(root) or Path(root) / "cases", root, cid)


def _load(cases_dir: Path, root, cid: str) -> Case:
    """:func:`load_case` from the suite's :func:`cases_folder` ``cases_dir`` (found once by :func:`discover`)."""
    d = cases_dir / cid
    if not d.is_dir():
        raise InvalidParameter(f"no case {cid} in {root}")
    model_m = filegate.read_bytes(d / f"{cid}-model.m", filegate.CSV, f"case {cid} model.m")
    ctags, ttags, ttype = parse_tags(model_m.decode("utf-8", errors="replace"))
    try:
        settings = parse_settings(filegate.read_text(d / f"{cid}-settings.txt", filegate.CSV, f"case {cid} settings"))
    except InvalidParameter as exc:
        if ttype == "TimeCourse":
            raise InvalidParameter(f"case {cid}: {exc}") from None
        settings = None  # e.g. FluxBalanceSteadyState cases leave start/steps empty
    return Case(cid, d, _model_file(d, cid), settings, ctags, ttags, ttype)


def parse_case_ids(specs: list[str]) -> list[str]:
    """``["1-100", "00042", "7"]`` → sorted unique 5-digit ids (commas also separate)."""
    ids: set[str] = set()
    for spec in specs:
        for part in filter(None, (s.strip() for s in str(spec).split(","))):
            m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
            if not m:
                raise InvalidParameter(f"case must be a number or a range like 1-100, got {part!r}")
            lo, hi = int(m[1]), int(m[2] or m[1])
            if lo < 1 or hi < lo:
                raise InvalidParameter(f"bad case range {part!r}")
            if hi > 99999:
                raise InvalidParameter(f"case ids have five digits (1 … 99999), got {part!r}")
            ids.update(f"{i:05d}" for i in range(lo, hi + 1))
    return sorted(ids)


def discover(root: str | os.PathLike, ids: list[str] | None = None,
             test_type: str | None = "TimeCourse") -> list[Case]:
    """Cases under ``root`` (all, or those in ``ids``; ids not in the suite are skipped) of ``test_type``."""
    root = Path(root)
    cases_dir = cases_folder(root) if root.is_dir() else None
    if cases_dir is None:
        raise InvalidParameter(f"SBML Test Suite not found at {root}: get it with 'git clone --depth 1 "
                               "https://github.com/sbmlteam/sbml-test-suite' and pass that folder as "
                               "--suite-dir (or set GSE_SBML_SUITE)")
    present = sorted(p.name for p in cases_dir.iterdir() if re.fullmatch(r"\d{5}", p.name))
    if ids is not None:
        want = set(ids)
        present = [c for c in present if c in want]
    cases = [_load(cases_dir, root, c) for c in present]
    return [c for c in cases if test_type is None or c.test_type == test_type]


# ---------------------------------------------------------------- comparison

@dataclass
class Comparison:
    """Outcome of the pass rule; ``worst`` is the point with the largest error / allowed ratio."""
    ok: bool
    message: str
    worst: dict | None = None


def compare(expected: Results, sim: dict[str, np.ndarray], absolute: float, relative: float) -> Comparison:
    """The suite's rule at every point of every non-time column; NaN/Inf must match exactly."""
    n = expected.data.shape[0]
    worst, worst_ratio = None, -1.0
    for j, name in enumerate(expected.columns[1:], start=1):
        if name not in sim:
            return Comparison(False, f"variable {name} missing from the simulation")
        s = np.asarray(sim[name], dtype=float).reshape(-1)
        if s.shape[0] != n:
            return Comparison(False, f"variable {name}: {s.shape[0]} points, expected {n}")
        e = expected.data[:, j]
        fin = np.isfinite(e) & np.isfinite(s)
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.where(fin, np.abs(s - e), np.inf)
        # non-finite values must be identical (NaN ↔ NaN, +Inf ↔ +Inf, −Inf ↔ −Inf)
        same = (~np.isfinite(e)) & ((np.isnan(e) & np.isnan(s)) | (e == s))
        err = np.where(same, 0.0, err)
        allowed = absolute + relative * np.where(np.isfinite(e), np.abs(e), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(err == 0, 0.0, err / allowed)
        i = int(np.argmax(ratio))
        if ratio[i] > worst_ratio:
            worst_ratio = float(ratio[i])
            worst = {"variable": name, "time": float(expected.data[i, 0]), "expected": float(e[i]),
                     "simulated": float(s[i]), "error": float(err[i]), "allowed": float(allowed[i]),
                     "ratio": float(ratio[i])}
    if worst is None:
        return Comparison(True, "no variables to compare")
    ok = worst["ratio"] <= 1.0
    w = worst
    msg = (f"worst {w['variable']} at t={w['time']:g}: sim {w['simulated']:.10g} vs {w['expected']:.10g} "
           f"(|err| {w['error']:.3g}, allowed {w['allowed']:.3g})")
    return Comparison(ok, msg if not ok else "ok; " + msg, worst)


# ---------------------------------------------------------------- running

@dataclass
class Outcome:
    """One case's result: status (passed/failed/refused), message, seconds, worst point."""
    case: str
    status: str
    message: str
    seconds: float
    worst: dict | None = None
    tags: list[str] = field(default_factory=list)


def run_case(case: Case, fn: Callable, out_dir: str | os.PathLike | None = None) -> Outcome:
    """Run one case in this process (exceptions become outcomes)."""
    t0 = time.perf_counter()

    def done(status, msg, worst=None):
        return Outcome(case.id, status, msg, round(time.perf_counter() - t0, 4), worst, case.tags)

    if case.test_type != "TimeCourse":
        return done("refused", f"testType {case.test_type or '?'} is not a time course")
    if case.model is None:
        return done("refused", "no SBML model file in the case")
    s = case.settings
    times = s.times()
    try:
        sim = fn(case.model, times, list(s.variables), set(s.amount), set(s.concentration))
    except Unsupported as exc:
        return done("refused", str(exc))
    except Exception as exc:  # noqa: BLE001 — any failure of one case is that case's outcome
        return done("failed", f"exception {type(exc).__name__}: {exc}")
    try:
        expected = read_results(case.results_path)
        cmp = compare(expected, sim, s.absolute, s.relative)
        if out_dir is not None and all(c in sim for c in expected.columns[1:]):
            try:
                write_results(Path(out_dir) / f"{case.id}.csv", expected, times, sim)
            except InvalidParameter:
                pass  # wrong shape: already a failure, nothing comparable to write
    except Exception as exc:  # noqa: BLE001
        return done("failed", f"comparison error {type(exc).__name__}: {exc}")
    return done("passed" if cmp.ok else "failed", ("wrong numbers: " if not cmp.ok else "") + cmp.message,
                cmp.worst)


# Running many cases — in worker processes with a per-case time limit and crash isolation, or serially —
# is the sweep layer's: kernels.sweep.suite_tasks.run_cases (scheduler "local" / "none" / a cluster).
# (The hand-made process pool that lived here is gone: one executor.)


# ---------------------------------------------------------------- reports

def totals(outcomes: list[Outcome]) -> dict[str, int]:
    """Counts per status plus the total."""
    t = {s: 0 for s in STATUSES}
    for o in outcomes:
        t[o.status] += 1
    t["total"] = len(outcomes)
    return t


def tag_table(cases: list[Case], outcomes: list[Outcome]) -> dict[str, dict[str, int]]:
    """``{"component:Species": {"passed": .., "failed": .., "refused": ..}, "test:Amount": …}``."""
    by = {o.case: o for o in outcomes}
    table: dict[str, dict[str, int]] = {}
    for c in cases:
        if c.id not in by:
            continue
        for kind, tags in (("component", c.component_tags), ("test", c.test_tags)):
            for t in tags:
                row = table.setdefault(f"{kind}:{t}", {s: 0 for s in STATUSES})
                row[by[c.id].status] += 1
    return dict(sorted(table.items()))


def format_tag_table(table: dict[str, dict[str, int]]) -> str:
    """Plain-text table: tag, passed, failed, refused."""
    w = max([len(k) for k in table] + [3])
    lines = [f"{'tag':<{w}}  {'passed':>6}  {'failed':>6}  {'refused':>7}"]
    lines += [f"{k:<{w}}  {r['passed']:>6}  {r['failed']:>6}  {r['refused']:>7}" for k, r in table.items()]
    return "\n".join(lines)


def _json_float(v):
    return v if not isinstance(v, float) or math.isfinite(v) else repr(v)


def report(cases: list[Case], outcomes: list[Outcome], runtime: str, wall_seconds: float, suite: str = "") -> dict:
    """JSON-ready dict: totals, per-tag table, every case's outcome (non-finite floats as strings)."""
    rows = []
    for o in outcomes:
        d = asdict(o)
        if d["worst"]:
            d["worst"] = {k: _json_float(v) for k, v in d["worst"].items()}
        rows.append(d)
    return {"runtime": runtime, "suite": suite, "wall_seconds": round(wall_seconds, 3),
            "totals": totals(outcomes), "tags": tag_table(cases, outcomes), "cases": rows}


def write_json(path: str | os.PathLike, data: dict) -> None:
    """``data`` as strict JSON (no NaN/inf), written atomically."""
    write_text(path, json.dumps(data, indent=1, allow_nan=False))


# ---------------------------------------------------------------- CI sample

def stratified_sample(cases: list[Case], n: int = 150) -> list[str]:
    """Deterministic ids of ≥ n TimeCourse cases: every tag present at least once, the rest spread
    evenly over the id range.  Tags are covered rarest first, each by the case that covers the
    most still-uncovered tags (smallest id on ties)."""
    tc = sorted((c for c in cases if c.test_type == "TimeCourse"), key=lambda c: c.id)
    count: dict[str, int] = {}
    for c in tc:
        for t in set(c.tags):
            count[t] = count.get(t, 0) + 1
    chosen: set[str] = set()
    covered: set[str] = set()
    for tag in sorted(count, key=lambda t: (count[t], t)):
        if tag in covered:
            continue
        best = max((c for c in tc if tag in c.tags), key=lambda c: (len(set(c.tags) - covered), -int(c.id)))
        chosen.add(best.id)
        covered |= set(best.tags)
    rest = [c.id for c in tc if c.id not in chosen]
    k = max(0, min(n - len(chosen), len(rest)))
    if k:
        chosen.update(rest[int(i)] for i in np.floor(np.arange(k) * len(rest) / k))
    return sorted(chosen)
