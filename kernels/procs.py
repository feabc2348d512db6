"""Process hygiene: worker processes die with their parent, and the parent takes them down on
SIGTERM as on Ctrl+C.

* :func:`die_with_parent` — called first in a worker process: on Linux the kernel sends it SIGKILL
  when the parent dies (``prctl(PR_SET_PDEATHSIG)``, through ctypes), even when the parent is
  killed with SIGKILL and no cleanup of its own runs; a parent that is already gone ends the
  worker at once.  The worker ignores SIGINT (a Ctrl+C reaches the whole foreground process
  group: the parent handles it and stops its workers).  Workers stay in the parent's process
  group (they are never moved to a new session), so ``kill -- -PGID`` reaches them too.
* :func:`terminate_on_sigterm` — in the parent, around the code that owns workers: SIGTERM (and
  SIGHUP) raise :class:`Terminated` (a ``KeyboardInterrupt``), so the ``finally`` blocks that stop
  the workers run, and the command ends as after Ctrl+C.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading

#: linux/prctl.h
PR_SET_PDEATHSIG = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM / SIGHUP received while workers were running (handled like Ctrl+C)."""


def die_with_parent(parent_pid: int | None = None, sig: int = signal.SIGKILL) -> bool:
    """Make this (worker) process receive ``sig`` when its parent dies (Linux; elsewhere a no-op
    that returns False), ignore SIGINT, and exit at once when ``parent_pid`` is given and the
    parent is already gone (the race between fork and prctl)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):          # not the main thread of this process
        pass
    ok = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            ok = libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
        except (OSError, AttributeError):
            ok = False
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)
    return ok


@contextlib.contextmanager
def on_sigterm(callback):
    """Inside the block, SIGTERM and SIGHUP call ``callback(signum)`` (main thread only; elsewhere
    the block runs unchanged); the previous handlers are restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for s in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[s] = signal.signal(s, lambda signum, _frame: callback(signum))
        except (ValueError, OSError):
            pass
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def raise_terminated(signum: int):
    """Raise :class:`Terminated` for ``signum`` (the default :func:`on_sigterm` action)."""
    raise Terminated(f"signal {signal.Signals(signum).name}")


def terminate_on_sigterm():
    """SIGTERM and SIGHUP raise :class:`Terminated` inside the block (see :func:`on_sigterm`)."""
    return on_sigterm(raise_terminated)
