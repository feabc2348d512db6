"""Issue 35: process hygiene — worker processes die with their parent (parent-death signal, process
group), SIGTERM stops them like Ctrl+C, and a Ctrl+C ends ``main.py`` with exit status 130, also
during interpreter shutdown.  Subprocesses, since signals and exit statuses are the subject."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kernels import procs
from support.paths import ROOT, SUITE

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def wait_for(cond, timeout: float = 20.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.05)
    return False


PARENT = textwrap.dedent("""
    import multiprocessing as mp, os, sys, time
    sys.path.insert(0, {root!r})
    from kernels import procs

    def child(parent):
        procs.die_with_parent(parent)
        time.sleep(120)

    if __name__ == "__main__":
        mp.set_start_method("fork")
        ps = [mp.Process(target=child, args=(os.getpid(),), daemon=True) for _ in range(2)]
        for p in ps:
            p.start()
        print(" ".join(str(p.pid) for p in ps), flush=True)
        time.sleep(120)
""")


@linux
def test_workers_die_with_a_killed_parent(tmp_path):
    """SIGKILL to the parent (no cleanup of its own runs): the kernel kills the workers."""
    script = tmp_path / "parent.py"
    script.write_text(PARENT.format(root=str(ROOT)))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        kids = [int(x) for x in p.stdout.readline().split()]
        assert len(kids) == 2 and all(alive(k) for k in kids)
        assert all(os.getpgid(k) == os.getpgid(p.pid) for k in kids)       # the parent's process group
        p.kill()
        p.wait(10)
        assert wait_for(lambda: not any(alive(k) for k in kids), 10), "a worker outlived its parent"
    finally:
        p.kill()


def test_sigterm_is_handled_like_ctrl_c():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with procs.terminate_on_sigterm():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert signal.getsignal(signal.SIGTERM) is before          # the previous handler is back


@linux
@pytest.mark.skipif(not (SUITE / "cases").is_dir(), reason="SBML Test Suite not present")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_flint_suite_takes_its_case_workers_along(sig, tmp_path):
    p = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "flint-suite", "1-200", "--workers", "2",
                          "--suite-dir", str(SUITE), "--timeout", "30"], cwd=tmp_path,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: len(children(p.pid)) >= 2, 30), "the case workers did not start"
        kids = children(p.pid)
        p.send_signal(sig)
        p.wait(20)
        assert wait_for(lambda: not any(alive(k) for k in kids), 10), "a case worker outlived flint-suite"
        if sig == signal.SIGTERM:
            assert p.returncode == 130
            assert p.stderr.read().strip().splitlines()[-1].startswith("error: interrupted")
    finally:
        p.kill()


def _started(p, marker: str, timeout: float = 30.0) -> bool:
    """Whether ``p`` printed a line containing ``marker`` within ``timeout`` seconds."""
    import threading
    seen = threading.Event()

    def read():
        for line in p.stdout:
            if marker in line:
                seen.set()
                return
    threading.Thread(target=read, daemon=True).start()
    return seen.wait(timeout)


def interrupt_main(tmp_path, setup: str, argv: list[str], marker: str) -> tuple[int, str]:
    """Run ``main.py argv`` as a script after ``setup`` (Python source), send SIGINT once ``marker``
    is printed; (exit status, stderr)."""
    code = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(setup)
            + f"\nsys.argv = {['main.py', *argv]!r}\nimport runpy\n"
              f"runpy.run_path({str(ROOT / 'main.py')!r}, run_name='__main__')\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=tmp_path)
    try:
        assert _started(p, marker), "the command did not start"
        p.send_signal(signal.SIGINT)
        p.wait(20)
        return p.returncode, p.stderr.read()
    finally:
        p.kill()


def test_ctrl_c_during_a_run_exits_130(tmp_path):
    status, err = interrupt_main(tmp_path, """
        import time
        import cli.occupancy as occ
        def slow(a):
            print("started", flush=True)
            time.sleep(60)
        occ.run = slow
    """, ["occupancy"], "started")
    assert status == 130, err
    assert [ln for ln in err.splitlines() if ln.strip()] == ["error: interrupted"]


def test_ctrl_c_during_interpreter_shutdown_exits_130(tmp_path):
    """The command has finished; an atexit hook (like a Dask cluster closing) is still running when
    Ctrl+C comes: exit status 130, no traceback, not a death by signal (it was 0 and a traceback)."""
    status, err = interrupt_main(tmp_path, """
        import atexit, time
        def slow_shutdown():
            print("shutting down", flush=True)
            time.sleep(60)
        atexit.register(slow_shutdown)
    """, ["occupancy", "--list"], "shutting down")
    assert status == 130, (status, err)
    assert "Traceback" not in err
