"""GPU Science Explorer: the entry point.

    python main.py                      open the desktop app
    python main.py <command> [options]  run headless (commands: ``python main.py --help``)

The command line lives in the ``cli`` package (one module per command); this file only starts the
Qt application when no command is given.
"""
from __future__ import annotations

import os
import signal
import sys


def _run_gui(backend):
    from explorer.app import run_gui
    return run_gui(backend)


def main(argv: list[str] | None = None) -> int:
    """Run a command (``cli.main``) or, without one, the desktop app.  Called without ``argv`` (the
    ``python main.py`` script and the ``gpu-science-explorer`` entry point), a Ctrl+C that comes
    before the command's own handling starts (imports) or after it ends (interpreter shutdown:
    atexit hooks, thread joins, a Dask cluster closing) also ends with status 130."""
    if argv is not None:
        from cli import main as cli_main
        return cli_main(argv, gui=_run_gui)
    try:
        from cli import main as cli_main
        status = cli_main(None, gui=_run_gui)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        status = 130
    try:
        signal.signal(signal.SIGINT, _exit_interrupted)
        sys.stdout.flush()
        sys.stderr.flush()
    except KeyboardInterrupt:
        _exit_interrupted()
    return status


def _exit_interrupted(signum=None, frame=None):
    """A Ctrl+C once the command is over ends the process with status 130 at once, never in a
    signal or a traceback."""
    os._exit(130)


if __name__ == "__main__":
    sys.exit(main())
