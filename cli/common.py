"""What every command shares: the usage error, the number and list parsers, the JSON writer,
output-path checks, notes, and the error contract.

The error contract (:func:`run_guarded`): whatever goes wrong in a command — bad arguments, a
project error, an OS error, an exception from a bad file, RecursionError, MemoryError — ends in
exactly one stderr line starting ``error:`` and exit status 2 (``--debug``: the traceback instead).
Ctrl+C ends with one ``error: interrupted…`` line and exit status 130.  Warnings raised while a
command runs are collected, never printed before the results: after a successful run each distinct
one is printed as one ``note:`` line on stderr (stdout stays clean JSON in ``--json`` mode).

No Qt: this package drives :mod:`kernels` (and, for ``graph --export-view`` only, the headless
renderer :mod:`explorer.graphs.render`).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

from kernels import limits
from kernels.errors import ExplorerError
from kernels.fileio import atomic_write, check_output_path

EXIT_OK, EXIT_FAILED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130

#: extensions each kind of output accepts (anything else is refused before work starts)
CSV_EXTS = (".csv", ".txt")
JSON_EXTS = (".json",)
PNG_EXTS = (".png",)
NPZ_EXTS = (".npz",)
NPY_EXTS = (".npy",)
GRAPH_EXTS = (".graphml", ".edgelist", ".edges", ".txt")


class UsageError(ExplorerError):
    """A bad command line: printed as one ``error:`` line, exit status 2."""


class _RangeHelp:
    """Help formatter mix-in: a number option's help ends with its range (``num_type``)."""

    def _get_help_string(self, action):
        text = super()._get_help_string(action) or ""
        rng = getattr(action.type, "range_text", None)
        return f"{text} [{rng}]" if rng and "%(" not in rng else text


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the error contract: a parse error raises :class:`UsageError` (one line naming
    the command) instead of printing the usage block and exiting.  ``--help`` shows each number
    option's range."""

    def __init__(self, *args, **kw):
        fmt = kw.get("formatter_class", argparse.HelpFormatter)
        if not issubclass(fmt, _RangeHelp):
            kw["formatter_class"] = type(f"Range{fmt.__name__}", (_RangeHelp, fmt), {})
        super().__init__(*args, **kw)

    def error(self, message: str):
        # a number option's range error reads like the run-time checks: "--steps must be ≥ 0, got '-1'"
        message = re.sub(r"^argument ([^:]+): (must be )", r"\1 \2", message)
        words = self.prog.split()
        where = f"{words[-1]}: " if len(words) > 1 else ""
        raise UsageError(f"{where}{message}")


# ------------------------------------------------------------------ parsing
#: every number option lies in ±FLOAT_LIMIT (floats) / ±INT_LIMIT (integers) unless its own range is
#: narrower (kernels.limits: the sweeps' --vary values share them)
FLOAT_LIMIT, INT_LIMIT = limits.FLOAT_LIMIT, limits.INT_LIMIT


def number(name: str, value, kind=float, *, minimum=None, above=None, maximum=None):
    """``value`` (text or number) as ``kind`` (int or float): finite, in ±:data:`FLOAT_LIMIT`
    (floats) or ±:data:`INT_LIMIT` (integers), and ≥ ``minimum`` / > ``above`` / ≤ ``maximum``
    when given; else :class:`UsageError` naming the option and the range.  The one parser of every
    number on the command line (argparse options through :func:`num_type`)."""
    text = str(value).strip()
    try:
        x = kind(text)
    except (ValueError, OverflowError, TypeError):
        what = "an integer" if kind is int else "a number"
        raise UsageError(f"{name} must be {what}, got {_show(value)}") from None
    if kind is float and not math.isfinite(x):
        raise UsageError(f"{name} must be a finite number, got {_show(value)}")
    if minimum is not None and x < minimum:
        raise UsageError(f"{name} must be ≥ {minimum}, got {_show(value)}")
    if above is not None and not x > above:
        raise UsageError(f"{name} must be > {above}, got {_show(value)}")
    if maximum is not None and x > maximum:
        raise UsageError(f"{name} must be ≤ {maximum}, got {_show(value)}")
    lo, hi = _bounds(kind, minimum, above, maximum)
    if not lo <= x <= hi:
        raise UsageError(f"{name} must be {range_text(kind, minimum=minimum, above=above, maximum=maximum)}, "
                         f"got {_show(value)}")
    return x


def _bounds(kind, minimum, above, maximum):
    limit = INT_LIMIT if kind is int else FLOAT_LIMIT
    lo = -limit if minimum is None and above is None else max(-limit, minimum if minimum is not None else above)
    return lo, limit if maximum is None else min(limit, maximum)


def range_text(kind=float, *, minimum=None, above=None, maximum=None) -> str:
    """The documented range of a number option, e.g. ``an integer in 1 … 64``, ``an integer ≥ 0``
    (up to the 64-bit limit) or ``a number > 0 and ≤ 1e+15``."""
    if kind is int:
        lo = minimum if minimum is not None else (above + 1 if above is not None else None)
        if maximum is None:
            return "a 64-bit integer" if lo is None else f"an integer ≥ {lo:,}"
        return f"an integer in {(-INT_LIMIT if lo is None else lo):,} … {maximum:,}"
    hi = FLOAT_LIMIT if maximum is None else min(FLOAT_LIMIT, maximum)
    if above is not None:
        return f"a number > {above:g} and ≤ {hi:g}"
    return f"a number in {(-FLOAT_LIMIT if minimum is None else minimum):g} … {hi:g}"


def num_type(kind=float, **limits):
    """An argparse ``type=`` that parses with :func:`number` (argparse prefixes the option name).
    The parser carries its range: ``.number_kind``, ``.limits``, ``.range_text`` (shown by
    ``--help``, and read by the option-range tests)."""
    def parse(text):
        try:
            return number("the value", text, kind, **limits)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc)[len("the value "):]) from None
    parse.__name__ = kind.__name__
    parse.number_kind, parse.limits = kind, dict(limits)
    parse.range_text = range_text(kind, **limits)
    return parse


def threads_type():
    """The one ``--threads`` type of the host-threaded commands: an integer in 1 … cores ×
    :data:`kernels.limits.HOST_THREADS_PER_CORE` (more threads only add overhead, and a huge
    number makes the C++ runtime abort)."""
    return num_type(int, minimum=1, maximum=limits.max_host_threads())


def threads_value(name: str, value, default=None):
    """A ``--threads``-like value given as text (or None → ``default``) in 1 … cores × the factor."""
    if value is None:
        return default
    return number(name, value, int, minimum=1, maximum=limits.max_host_threads())


def add_limit_options(p) -> None:
    """The expansion-limit flags of the model commands (``flint``, ``flint-suite``): each raises
    one documented limit of :mod:`kernels.limits` for this run."""
    p.add_argument("--max-expression-nodes", type=num_type(int, minimum=1), default=None, metavar="N",
                   help=f"most nodes of one expression after inlining function definitions "
                        f"(default {limits.MAX_EXPRESSION_NODES:,})")
    p.add_argument("--max-events-per-instant", type=num_type(int, minimum=1), default=None, metavar="N",
                   help=f"most event firings at one model time before the run stops, naming the events "
                        f"(default {limits.MAX_EVENTS_PER_INSTANT:,})")
    p.add_argument("--max-expression-depth", type=num_type(int, minimum=1, maximum=100_000), default=None,
                   metavar="N", help=f"deepest nesting of one expression (default {limits.MAX_EXPRESSION_DEPTH})")


def apply_limit_options(a) -> None:
    """Put the run's expansion limits in force: the flags given, the defaults for the others
    (so one process running several commands never inherits an earlier run's limits)."""
    limits.set_limits(expression_nodes=getattr(a, "max_expression_nodes", None) or limits.MAX_EXPRESSION_NODES,
                      events_per_instant=getattr(a, "max_events_per_instant", None) or limits.MAX_EVENTS_PER_INSTANT,
                      expression_depth=getattr(a, "max_expression_depth", None) or limits.MAX_EXPRESSION_DEPTH)


def parse_list(name: str, text) -> list[str]:
    """A comma (or semicolon) separated list: items stripped, empty ones and repeats dropped."""
    items = [s.strip() for s in str(text).replace(";", ",").split(",") if s.strip()]
    if not items:
        raise UsageError(f"{name} is empty")
    return list(dict.fromkeys(items))


def _show(value) -> str:
    text = str(value)
    return repr(text if len(text) <= 40 else text[:37] + "…")


# ------------------------------------------------------------------ outputs
#: the output paths checked so far in this command run (option → path), for the same-file check
_OUTPUTS: list = []


def reset_outputs() -> None:
    """Forget the outputs checked so far (cli.main calls it before each command)."""
    _OUTPUTS.clear()


def check_output(path, extensions, what: str):
    """Check an output path before any work (kernels.fileio.check_output_path); None passes.  Two
    different output options of one command naming the same file are refused here
    (:func:`check_distinct_outputs` over every output checked in this run)."""
    if path is None:
        return None
    out = check_output_path(path, extensions, what)
    check_distinct_outputs(*_OUTPUTS, (what, path))
    _OUTPUTS.append((what, path))
    return out


def check_distinct_outputs(*pairs) -> None:
    """Two output options naming one file are refused before any work: ``pairs`` are
    ``(option, path)``, None paths skipped; the same file is found through ``~``, relative parts,
    symbolic links and hard links (an existing file's device and inode)."""
    seen: dict = {}
    for flag, path in pairs:
        if path is None or str(path) in ("", "-"):
            continue
        p = Path(os.path.expanduser(str(path)))
        keys = {("path", os.path.realpath(p))}
        try:
            st = p.stat()
            keys.add(("inode", st.st_dev, st.st_ino))
        except OSError:
            pass
        for key in keys:
            if key in seen and seen[key] != flag:
                raise UsageError(f"{seen[key]} and {flag} name the same file ({path}); give each output its own path")
        for key in keys:
            seen.setdefault(key, flag)


def check_out_dir(path, what: str = "--out-dir"):
    """A folder that exists and is writable, or one that can be created (its nearest existing
    ancestor is a writable folder).  Nothing is created here."""
    if path is None:
        return None
    p = Path(os.path.expanduser(str(path)))
    if str(path).strip() == "":
        raise UsageError(f"{what} is empty")
    if p.exists() and not p.is_dir():
        raise UsageError(f"{what} {p} is a file, not a folder")
    q = p
    while not q.exists():
        q = q.parent
    if not q.is_dir():
        raise UsageError(f"{what} {p}: {q} is a file, not a folder")
    if not os.access(q, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {p}: the folder {q} is not writable")
    return p


def partial_path(path) -> Path:
    """Where partial results go after Ctrl+C: beside ``path`` (``name.partial.csv``), so that a
    complete earlier file at ``path`` is never replaced by a partial one."""
    p = Path(path)
    return p.with_name(f"{p.stem}.partial{p.suffix or '.csv'}")


def json_safe(v):
    """Strict JSON all the way down: NaN/inf become null (also inside lists and dicts); NumPy
    scalars and arrays become Python numbers and lists."""
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_safe(x) for x in v]
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):       # NumPy scalar or array
        return json_safe(v.tolist())
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def dumps(obj, **kw) -> str:
    """The one JSON writer: strict JSON (NaN/inf → null), never ``NaN`` tokens."""
    return json.dumps(json_safe(obj), allow_nan=False, **kw)


def write_json_file(path, obj) -> None:
    """``obj`` as strict JSON to ``path``, atomically."""
    with atomic_write(path, "w") as fh:
        fh.write(dumps(obj, indent=1))


def print_result(out: dict, as_json: bool) -> int:
    """One strict JSON object (``--json``), else one aligned 'key: value' line per entry; exit 0."""
    if as_json:
        print(dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>22}: {v}")
    return EXIT_OK


class ExportFailed(ExplorerError):
    """An optional output could not be written after the run (the others were)."""


def write_outputs(out: dict, outputs) -> list[str]:
    """Write the optional outputs ``[(key, write), …]`` in order, after the results exist: each
    ``write()`` returns the path written, stored as ``out[key]``; a failure is remembered and the
    remaining outputs are still written.  Returns the failures (for :func:`finish`)."""
    failed = []
    for key, write in outputs:
        try:
            out[key] = str(write())
        except (OSError, ExplorerError) as exc:
            failed.append(f"{key.replace('_', '-')}: {message(exc)}")
    return failed


def finish(out: dict, as_json: bool, failed: list[str]) -> int:
    """Print the results; then, if an optional output failed, end with its one ``error:`` line."""
    print_result(out, as_json)
    raise_failed(failed)
    return EXIT_OK


def raise_failed(failed: list[str]) -> None:
    """After the results were printed: the failed outputs of :func:`write_outputs` as one error."""
    if failed:
        raise ExportFailed("; ".join(failed) + " (the results above and the other outputs were written)")


def note(text: str, as_json: bool = False) -> None:
    """A ``note:`` line on stderr (never on stdout, so JSON output stays clean)."""
    print(f"note: {one_line(text)}", file=sys.stderr, flush=True)


def one_line(text) -> str:
    return " ".join(str(text).split())


# ------------------------------------------------------------------ sweeps
def collect_rows(sweep, total: int, unit: str, csv_path, write_csv, report=None):
    """The rows of a streaming sweep, ``report(row, rows so far)`` after each.  Ctrl+C closes the
    sweep, writes the finished rows beside ``csv_path`` (:func:`partial_path`; a complete earlier
    file at ``csv_path`` is kept), prints one error line and returns None: the caller exits 130."""
    rows: list = []
    try:
        for r in sweep:
            rows.append(r)
            if report is not None:
                report(r, len(rows))
    except KeyboardInterrupt:
        sweep.close()
        msg = f"interrupted after {len(rows)} of {total} {unit}"
        if csv_path and rows:
            part = partial_path(csv_path)
            try:
                write_csv(rows, part)
                msg += f"; partial CSV written to {part}"
            except (OSError, ExplorerError) as exc:
                msg += f"; the partial CSV could not be written to {part} ({one_line(exc)})"
        print(f"error: {msg}", file=sys.stderr, flush=True)
        return None
    return rows


# ------------------------------------------------------------------ the error contract
def message(exc: BaseException) -> str:
    """The one-line text of the ``error:`` line for ``exc``."""
    if isinstance(exc, (ExplorerError,)):
        return one_line(exc) or type(exc).__name__
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to process (Python's recursion limit)"
    if isinstance(exc, MemoryError):
        return "out of memory: the input or the requested run is too large for this machine"
    if isinstance(exc, (OverflowError, FloatingPointError)):
        return one_line(f"a number went out of the floating-point range ({one_line(exc) or type(exc).__name__}): "
                        "an option or model value is too large or too small for this run")
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return one_line(f"{exc.strerror or exc}{where}")
    text = one_line(exc)
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__) + \
        " (unexpected; --debug shows the traceback)"


def run_guarded(fn, debug: bool = False) -> int:
    """Run ``fn()`` (returns an exit status) under the error contract (module docstring)."""
    seen: dict[str, None] = {}

    def collect(msg, category, filename, lineno, file=None, line=None):
        text = f"{category.__name__}: {one_line(msg)}"
        if len(seen) < 5:
            seen.setdefault(text)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.filterwarnings("error", category=np.exceptions.ComplexWarning)   # never cast silently
        warnings.showwarning = collect
        try:
            status = fn()
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        except SystemExit:
            raise
        except BaseException as exc:                     # the contract: anything at all
            if debug:
                traceback.print_exc()
            print(f"error: {message(exc)}", file=sys.stderr, flush=True)
            return EXIT_ERROR
    for text in seen:
        print(f"note: {text}", file=sys.stderr)
    return EXIT_OK if status is None else int(status)
