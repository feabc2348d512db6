"""GPU Science Explorer: the entry point.

    python main.py                      open the desktop app
    python main.py <command> [options]  run headless (commands: ``python main.py --help``)

The command line lives in the ``cli`` package (one module per command); this file only starts the
Qt application when no command is given.
"""
from __future__ import annotations

import sys


def _run_gui(backend):
    from explorer.app import run_gui
    return run_gui(backend)


def main(argv: list[str] | None = None) -> int:
    """Run a command (``cli.main``) or, without one, the desktop app."""
    from cli import main as cli_main
    return cli_main(argv, gui=_run_gui)


if __name__ == "__main__":
    sys.exit(main())
