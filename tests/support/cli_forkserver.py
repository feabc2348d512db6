"""A fork server for running many CLI command lines fast, each still in its own process.

Started as ``python tests/support/cli_forkserver.py`` with the environment every case shares, it imports the
CLI once (``main.main``, the parser and every command module), then reads one JSON request a line
on stdin — ``{"id", "argv", "stdout", "stderr", "env", "timeout"}`` — and forks a child per request.
The child sets the request's extra environment and the memory limits, sends its stdout and stderr to
the given files, runs ``main.main(argv)`` and exits with its status.  The server answers one JSON
line ``{"id", "status", "rss_mb"}`` (``os.wait4``'s exit status and peak RSS) when the child ends; a
child over its timeout is killed (status -9).  Requests run concurrently.

So each case keeps what a separate ``python main.py …`` gives the bad-input table (its own exit
status, stderr, peak memory and limits) without paying the interpreter start and the imports, which
were most of the table's time.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import sys
import threading
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADDRESS_SPACE = 6 << 30            # RLIMIT_AS of each child: the safety net


def case_environment(extra: dict | None = None) -> dict:
    """The environment every case runs in (the CPU backend, one BLAS/OpenMP thread), plus ``extra``;
    ``GSE_MAX_MODEL_MB`` only where ``extra`` sets it."""
    env = dict(os.environ, GSE_BACKEND="cpu", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONWARNINGS="default")
    env.update(extra or {})
    if "GSE_MAX_MODEL_MB" not in (extra or {}):
        env.pop("GSE_MAX_MODEL_MB", None)
    return env


def set_limits() -> None:
    """The memory limit (and no core files) of a case's process."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child(req: dict, entry) -> int:
    os.environ.update(req.get("env") or {})
    for k in req.get("unset") or ():
        os.environ.pop(k, None)
    set_limits()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fd_in = os.open(os.devnull, os.O_RDONLY)
    fd_out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    fd_err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for fd, target in ((fd_in, 0), (fd_out, 1), (fd_err, 2)):
        os.dup2(fd, target)
        os.close(fd)
    # fresh stream objects: the inherited ones may hold a buffer lock taken by another thread of the
    # server at the fork (a reply being written, stdin being read), which would block this child forever
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    try:
        status = entry(list(req["argv"]))
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:          # what an uncaught exception does to `python main.py`
        traceback.print_exc()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(int(status or 0) & 0xFF)


def main() -> int:
    sys.path.insert(0, ROOT)
    os.chdir(ROOT)
    import cli
    import main as entry_module
    cli.build_parser()                      # imports every command module and what they import
    out_lock = threading.Lock()
    reply = sys.stdout

    def serve(req: dict) -> None:
        with out_lock:                      # never fork while another thread writes a reply
            pid = os.fork()
        if pid == 0:
            _child(req, entry_module.main)
        timer = threading.Timer(float(req.get("timeout", 90)), lambda: os.kill(pid, signal.SIGKILL))
        timer.start()
        try:
            _pid, status, usage = os.wait4(pid, 0)
        finally:
            timer.cancel()
        answer = {"id": req["id"], "status": os.waitstatus_to_exitcode(status), "rss_mb": usage.ru_maxrss / 1024}
        with out_lock:
            reply.write(json.dumps(answer) + "\n")
            reply.flush()

    threads = []
    for line in sys.stdin:
        if line.strip():
            t = threading.Thread(target=serve, args=(json.loads(line),), daemon=True)
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
