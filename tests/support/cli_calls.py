"""Calling the CLI from tests: in-process through ``cli.main(argv)`` (``run``) or as a subprocess
(``cli``), and the one-``error:``-line check."""
import os
import subprocess
import sys

from cli import main
from support.paths import ROOT


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
    env = dict(os.environ, GSE_BACKEND="cpu", **(env_extra or {}))
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), *args],
                          capture_output=True, text=True, env=env, timeout=240)
