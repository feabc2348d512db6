"""The fuzz tests' worker process: runs command lines through ``cli.main`` in-process, one at a time.

Started by :class:`strategies.Harness` as ``python worker.py CMD_FD RESULT_FD EXTRA_AS_MB``; it
imports the CLI once (building the parser imports the kernels: seconds), caps its own address space
at what it uses then plus ``EXTRA_AS_MB`` (RLIMIT_AS, so a blow-up ends in MemoryError instead of
taking the machine down), and then answers requests.  A request is one JSON line on ``CMD_FD``::

    {"argv": [...], "cwd": DIR, "stdout": FILE, "stderr": FILE, "env": {NAME: VALUE or null}, "timeout": s}

The command runs with file descriptors 1 and 2 redirected to the two files (so output written by C
libraries is caught too), the working folder ``cwd``, the environment changes applied (and undone
afterwards), and a soft deadline (SIGALRM raises :class:`Deadline`, which the CLI's guard turns
into an ``error:`` line; the answer says that the deadline fired).  The answer is one JSON line on
``RESULT_FD``: ``{"status", "escaped", "deadline", "seconds", "children", "vm", "env_changed"}`` —
``escaped`` is the traceback of anything that got past ``cli.main``'s guard, ``children`` the
process ids of child processes still running after the command returned, ``vm`` the worker's
address space after it, ``env_changed`` the environment variables the command set or removed (undone before the next).
Call mode (``"call": "module:function", "args": [...]`` in the request) calls a loader instead of
the CLI: status 0 when it returns, 2 with one ``error:`` line when it raises the project's error.
A hang inside C code (where SIGALRM is not acted on) or a death by signal is seen by the parent,
which kills and restarts the worker.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


from kernels.errors import ExplorerError  # noqa: E402


class Deadline(BaseException):
    """The soft per-example deadline (SIGALRM)."""


_fired = {"deadline": False}


def _alarm(signum, frame):
    _fired["deadline"] = True
    raise Deadline("the fuzz example's deadline passed")


def _vm_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _children() -> list[int]:
    """Process ids of this process's live children (any thread's)."""
    out = []
    for task in Path("/proc/self/task").iterdir():
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    live = []
    for pid in out:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            live.append(pid)
        else:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
    return live


def _call(target: str, args: list):
    """Call mode: ``module:function(*args)`` (a loader the GUI uses); exit status 0 when it returns."""
    import importlib
    mod, fn = target.split(":")
    getattr(importlib.import_module(mod), fn)(*args)
    return 0


def run_one(cli, req: dict) -> dict:
    argv = [str(x) for x in req["argv"]]
    env_saved = {k: os.environ.get(k) for k in req.get("env", {})}
    for k, v in req.get("env", {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = str(v)
    env_before = dict(os.environ)
    here = os.getcwd()
    os.chdir(req["cwd"])
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    status, escaped = None, None
    _fired["deadline"] = False
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, float(req.get("timeout", 10)))
    raised = None
    try:
        if req.get("call"):
            status = _call(req["call"], req.get("args", []))
        else:
            status = cli.main(argv)
    except ExplorerError as exc:                    # the project's own error (call mode)
        status, raised = 2, f"{type(exc).__name__}: {exc}"
        sys.stderr.write(f"error: {' '.join(str(raised).split())}\n")
    except SystemExit as exc:                       # argparse's exit for --help, or a stray sys.exit
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else f"SystemExit({exc.code!r})")
    except Deadline:
        status = None
    except BaseException:                           # past the guard: the contract is broken
        escaped = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.perf_counter() - t0
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:                           # a closed or broken stream is the command's doing
            pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        os.chdir(here)
        env_changed = sorted(k for k in set(os.environ) | set(env_before) if os.environ.get(k) != env_before.get(k))
        os.environ.clear()                          # the next command starts from the same environment
        os.environ.update(env_before)
        for k, v in env_saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"status": status, "escaped": escaped, "deadline": _fired["deadline"], "seconds": seconds,
            "children": _children(), "vm": _vm_bytes(), "env_changed": env_changed}


def main() -> int:
    cmd_fd, res_fd, extra_mb = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    import cli
    cli.build_parser()                              # import every command's kernels now, once
    import numpy as np                              # noqa: F401  (warm, as the CLI's guard needs it)
    limit = _vm_bytes() + (extra_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)
    cmds = os.fdopen(cmd_fd, "r", encoding="utf-8")
    res = os.fdopen(res_fd, "w", encoding="utf-8")
    res.write(json.dumps({"ready": True, "as_limit": limit, "vm": _vm_bytes()}) + "\n")
    res.flush()
    for line in cmds:
        req = json.loads(line)
        try:
            ans = run_one(cli, req)
        except BaseException:                       # the worker itself must answer
            ans = {"status": None, "escaped": "worker: " + traceback.format_exc(), "deadline": False,
                   "seconds": 0.0, "children": []}
        res.write(json.dumps(ans) + "\n")
        res.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
