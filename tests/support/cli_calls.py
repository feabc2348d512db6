"""Calling the CLI from tests: in-process through ``cli.main(argv)`` (``run``, ``cli_here``, ``run_case``)
or as a subprocess (``cli``, ``run_plain``), and the one-``error:``-line check.

``run_case`` and ``run_plain`` give a bad-input case the same surroundings both ways: the CPU backend,
one BLAS/OpenMP thread, ``GSE_MAX_MODEL_MB`` only where the case sets it, the project root as the
working folder and an address-space limit as a safety net (a regression that allocates a huge array
gets a ``MemoryError`` instead of taking the machine down)."""
from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path
from unittest import mock

from cli import main
from support.paths import ROOT

ADDRESS_SPACE = 6 << 30            # bytes: RLIMIT_AS of a plain case process; the in-process headroom


def run(argv, capsys):
    status = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return status, cap.out, cap.err


def one_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "unexpected" not in err and "recursion" not in err.lower(), err
    return lines[0]


def cli(*args, env_extra=None):
    """``python main.py ARGS`` (the CPU backend unless ``env_extra`` says otherwise): a
    ``CompletedProcess`` with text output."""
    env = dict(os.environ, GSE_BACKEND="cpu", **(env_extra or {}))
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), *args],
                          capture_output=True, text=True, env=env, timeout=240)


def cli_here(*args, env_extra=None) -> subprocess.CompletedProcess:
    """What :func:`cli` answers, from ``cli.main(ARGS)`` run in this process (no interpreter start
    and imports per call): the same environment variables for the call, Python's stdout and stderr
    captured.  For checks of a command's result; what needs a process of its own (signals, exit
    by signal, peak memory, ``main.py`` itself) stays with :func:`cli`."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, {"GSE_BACKEND": "cpu", **(env_extra or {})}), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:          # what `python main.py` turns SystemExit into
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess(["main.py", *argv], status, out.getvalue(), err.getvalue())


def case_environment(extra: dict | None = None) -> dict:
    """The environment of a plain case process (the CPU backend, one BLAS/OpenMP thread), plus
    ``extra``; ``GSE_MAX_MODEL_MB`` only where ``extra`` sets it."""
    env = dict(os.environ, GSE_BACKEND="cpu", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONWARNINGS="default")
    env.update(extra or {})
    if "GSE_MAX_MODEL_MB" not in (extra or {}):
        env.pop("GSE_MAX_MODEL_MB", None)
    return env


def _child_setup() -> None:
    """A plain case process: the memory limit, no core files, and Ctrl+C as in a terminal (a test
    run started in the background ignores SIGINT, and children inherit that)."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_plain(argv: list[str], workdir: Path, env_extra: dict | None = None, timeout: float = 90):
    """``python main.py *argv`` in a process of its own; (exit status, stdout, stderr, peak RSS in MiB
    from ``os.wait4``).  Killed after ``timeout`` s (status -9)."""
    out, err = workdir / ".stdout", workdir / ".stderr"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        p = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *argv], cwd=ROOT, env=case_environment(env_extra),
                             stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, preexec_fn=_child_setup)
    timer = threading.Timer(timeout, lambda: os.kill(p.pid, signal.SIGKILL))
    timer.start()
    try:
        _pid, status, usage = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    text_out, text_err = out.read_text(errors="replace"), err.read_text(errors="replace")
    out.unlink()
    err.unlink()
    return p.returncode, text_out, text_err, usage.ru_maxrss / 1024


@contextlib.contextmanager
def address_space_headroom(extra: int = ADDRESS_SPACE):
    """RLIMIT_AS of this process lowered to its present size plus ``extra`` bytes for the block, then
    put back (the hard limit is untouched, so the soft one can rise again)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as fh:
        size = int(fh.read().split()[0]) * resource.getpagesize()
    want = size + extra
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY:
        want = min(want, soft)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak_rss() -> int | None:
    """Reset this process's peak RSS (``VmHWM``) to its present RSS (Linux ≥ 4.0: ``clear_refs`` 5);
    the present RSS in KiB, or None where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _status_kb("VmRSS")
    except (OSError, KeyError):
        return None


def peak_rss_growth_mb(start_kb: int | None) -> float | None:
    """How far the peak RSS rose above ``start_kb`` (from :func:`reset_peak_rss`), in MiB."""
    return None if start_kb is None else (_status_kb("VmHWM") - start_kb) / 1024


def run_case(argv: list[str], capfd, monkeypatch, env_extra: dict | None = None):
    """``cli.main(argv)`` in this process, surrounded as :func:`run_plain` surrounds a process; returns
    (exit status, stdout, stderr, how far the peak RSS rose meanwhile in MiB, or None where Linux's
    peak reset is not available).  An exception escaping ``main`` propagates (the test fails with it)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("GSE_BACKEND", "cpu")
    if "GSE_MAX_MODEL_MB" not in (env_extra or {}):
        monkeypatch.delenv("GSE_MAX_MODEL_MB", raising=False)
    for k, v in (env_extra or {}).items():
        monkeypatch.setenv(k, v)
    capfd.readouterr()
    start = reset_peak_rss()
    with address_space_headroom():
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:          # what `python main.py` turns SystemExit into
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    grew = peak_rss_growth_mb(start)
    cap = capfd.readouterr()
    return status, cap.out, cap.err, grew
