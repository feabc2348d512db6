"""Calling the CLI from tests: in-process through ``cli.main(argv)`` (``run``, ``cli_here``, ``run_case``)
or as a subprocess (``cli``, ``run_plain``), and the one-``error:``-line check.

``run_case`` and ``run_plain`` give a bad-input case the same surroundings both ways: the CPU backend,
one BLAS/OpenMP thread, ``GSE_MAX_MODEL_MB`` only where the case sets it, the project root as the
working folder and an address-space limit as a safety net (a regression that allocates a huge array
gets a ``MemoryError`` instead of taking the machine down)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys
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


#: The plain case process is started by this small launcher (a fresh interpreter), not forked from
#: the test process itself: Linux keeps a process's peak RSS across ``execve``, and a child forked from
#: a pytest-xdist worker that has grown to 600 MiB (GUI and Flint tests ran in it first) started
#: life with the worker's pages counted, so ``ru_maxrss`` of even ``main.py nosuch`` read 606 MiB.
#: Forked from the launcher, the child's peak is its own.  The launcher: the memory limit, no core
#: files and Ctrl+C as in a terminal for the child (a test run started in the background ignores
#: SIGINT, and children inherit that), the child's output to the given files, the time limit
#: (SIGKILL), then one line of JSON: exit status and the child's ``ru_maxrss`` (KiB) from ``os.wait4``.
_LAUNCHER = r"""
import json, os, resource, signal, sys, threading
a = json.loads(sys.argv[1])
pid = os.fork()
if pid == 0:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (a["limit"], a["limit"]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        fi = os.open(os.devnull, os.O_RDONLY)
        fo = os.open(a["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        fe = os.open(a["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fi, 0); os.dup2(fo, 1); os.dup2(fe, 2)
        os.chdir(a["cwd"])
        os.execve(a["argv"][0], a["argv"], a["env"])
    finally:
        os._exit(127)
timer = threading.Timer(a["timeout"], lambda: os.kill(pid, signal.SIGKILL))
timer.start()
_pid, status, usage = os.wait4(pid, 0)
timer.cancel()
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "maxrss_kib": usage.ru_maxrss}))
"""


def run_plain(argv: list[str], workdir: Path, env_extra: dict | None = None, timeout: float = 90):
    """``python main.py *argv`` in a process of its own (started by :data:`_LAUNCHER`); (exit status,
    stdout, stderr, peak RSS in MiB from ``os.wait4``).  Killed after ``timeout`` s (status -9)."""
    out, err = workdir / ".stdout", workdir / ".stderr"
    spec = {"argv": [sys.executable, str(ROOT / "main.py"), *argv], "env": case_environment(env_extra),
            "cwd": str(ROOT), "out": str(out), "err": str(err), "timeout": timeout, "limit": ADDRESS_SPACE}
    r = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, json.dumps(spec)], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=timeout + 60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    text_out, text_err = out.read_text(errors="replace"), err.read_text(errors="replace")
    out.unlink()
    err.unlink()
    return got["status"], text_out, text_err, got["maxrss_kib"] / 1024


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
