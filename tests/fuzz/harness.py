"""The fuzz tests' runner and the house contract they check (no tests here).

:class:`Harness` keeps one worker process (``worker.py``) that runs command lines through
``cli.main`` in-process, so an example costs milliseconds instead of an interpreter start.  The
worker's address space is capped (RLIMIT_AS: what it uses after importing the CLI plus
:data:`EXTRA_AS_MB`), each example has a soft deadline (SIGALRM inside the worker) and a hard one
(the parent kills the worker's process group and starts a new worker), and a death by signal is
reported as such.  :func:`contract_problems` states the contract (cli/common.py, issue 35):

* exit status 0, or 2 with exactly one stderr line and it starts with ``error:`` (``note:`` lines
  may follow a success; commands whose runs can partly fail may also exit 1);
* no ``Traceback`` on stdout or stderr, nothing past the CLI's guard, no "unexpected" internal
  exception, no "out of memory" (the cap was reached: a size that was not checked before work);
* within the time limit, alive (no signal), no child process left running, the process
  environment as it was (a later command in the same process must not inherit this one's settings);
* every sentinel file placed at an output path beforehand is byte-for-byte unchanged after a
  failed run.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKER = HERE / "worker.py"

#: address space the worker may use beyond what it holds after importing the CLI (MiB)
EXTRA_AS_MB = 2048
#: soft per-example deadline (s): SIGALRM inside the worker
SOFT_TIMEOUT = 20.0
#: hard per-example deadline (s): the worker is killed (a hang in C code, where SIGALRM waits)
HARD_GRACE = 10.0
#: the worker's environment: no GPU here, one BLAS thread, no user configuration
WORKER_ENV = {"GSE_BACKEND": "cpu", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
              "DASK_DISTRIBUTED__WORKER__DAEMON": "True"}
#: the long, randomly seeded run (conftest.py's profiles)
LONG = os.environ.get("GSE_FUZZ_LONG", "") not in ("", "0")
LONG_FACTOR = int(os.environ.get("GSE_FUZZ_LONG_FACTOR", "20") or 20)
SURVEY = os.environ.get("GSE_FUZZ_SURVEY")
SENTINEL = b"fuzz sentinel: a failed run must leave this file as it was\n"


@dataclass
class Outcome:
    """What one command line did."""
    argv: list
    status: object = None           # exit status (int) or None
    stdout: str = ""
    stderr: str = ""
    escaped: str | None = None      # a traceback that got past cli.main's guard
    deadline: bool = False          # the soft deadline fired
    hung: bool = False              # no answer within the hard deadline: the worker was killed
    died: int | None = None         # the worker died: its return code (negative = signal)
    seconds: float = 0.0
    children: list = field(default_factory=list)
    timeout: float = SOFT_TIMEOUT   # the soft deadline it ran under
    env_changed: list = field(default_factory=list)   # environment variables the command changed

    def describe(self) -> str:
        tail = self.stderr[-1500:]
        return (f"argv: {self.argv}\nstatus: {self.status}  seconds: {self.seconds:.2f}  deadline: {self.deadline}"
                f"  hung: {self.hung}  died: {self.died}  children: {self.children}"
                f"{f'  environment changed: {self.env_changed}' if self.env_changed else ''}\n"
                f"stderr:\n{tail}\nstdout (end):\n{self.stdout[-600:]}" +
                (f"\nescaped:\n{self.escaped}" if self.escaped else ""))


class Harness:
    """One long-lived worker; :meth:`run` one command line at a time in a fresh scratch folder."""

    def __init__(self, extra_as_mb: int = EXTRA_AS_MB):
        self.extra_as_mb = extra_as_mb
        self.proc = None
        self.base = Path(tempfile.mkdtemp(prefix="gse-fuzz-"))
        self.count = 0
        self.restarts = 0

    # ---------------------------------------------------------------- worker life
    def start(self) -> None:
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        env = dict(os.environ, **WORKER_ENV)
        env.pop("GSE_MAX_MODEL_MB", None)
        self.log = open(self.base / f"worker-{self.restarts}.log", "wb")
        self.proc = subprocess.Popen([sys.executable, str(WORKER), str(cmd_r), str(res_w), str(self.extra_as_mb)],
                                     pass_fds=(cmd_r, res_w), stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=str(self.base), env=env,
                                     start_new_session=True)
        os.close(cmd_r)
        os.close(res_w)
        self.cmd = os.fdopen(cmd_w, "w", encoding="utf-8")
        self.res_fd = res_r
        self.buf = b""
        ready = self._answer(120.0)
        if not isinstance(ready, dict) or not ready.get("ready"):
            raise RuntimeError(f"the fuzz worker did not start: {(self.base / 'worker-0.log').read_text()[-2000:]}")
        self.vm_start = ready["vm"]

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        for f in (self.cmd,):
            try:
                f.close()
            except OSError:
                pass
        os.close(self.res_fd)
        self.log.close()
        self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    def _answer(self, timeout: float):
        """The next JSON line from the worker, None on timeout, "eof" if it closed the pipe."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.res_fd], [], [], left)
            if not r:
                return None
            chunk = os.read(self.res_fd, 65536)
            if not chunk:
                return "eof"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    # ---------------------------------------------------------------- one example
    def scratch(self) -> Path:
        """A new empty folder for one example (its cwd, inputs and outputs)."""
        shutil.rmtree(self.base / f"ex{self.count}", ignore_errors=True)      # the previous example's
        self.count += 1
        d = self.base / f"ex{self.count}"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()
        return d

    def call(self, target: str, args: list, cwd: Path, timeout: float = SOFT_TIMEOUT) -> Outcome:
        """Call ``module:function(*args)`` in the worker (a GUI loader): status 0 when it returns,
        2 with one ``error:`` line when it raises the project's error; anything else escapes."""
        return self.run([f"<call {target}>", *args], cwd, timeout=timeout, call=(target, list(args)))

    def run(self, argv, cwd: Path, env: dict | None = None, timeout: float = SOFT_TIMEOUT,
            call: tuple | None = None) -> Outcome:
        if self.proc is None or self.proc.poll() is not None:
            self.restart() if self.proc is not None else self.start()
        io_dir = cwd.parent / f"{cwd.name}.io"
        io_dir.mkdir(exist_ok=True)
        req = {"argv": [str(x) for x in argv], "cwd": str(cwd), "stdout": str(io_dir / "out"),
               "stderr": str(io_dir / "err"), "env": env or {}, "timeout": timeout}
        if call:
            req["call"], req["args"] = call[0], [str(x) for x in call[1]]
        o = Outcome(argv=list(req["argv"]), timeout=timeout)
        t0 = time.monotonic()
        try:
            self.cmd.write(json.dumps(req) + "\n")
            self.cmd.flush()
            ans = self._answer(timeout + HARD_GRACE)
        except (BrokenPipeError, OSError):
            ans = "eof"
        o.seconds = time.monotonic() - t0
        if ans is None:
            o.hung = True
            self.restart()
        elif ans == "eof":
            self.proc.wait(timeout=30)
            o.died = self.proc.returncode
            self.restart()
        else:
            o.status, o.escaped, o.deadline = ans["status"], ans["escaped"], ans["deadline"]
            o.seconds, o.children = ans["seconds"], ans["children"]
            o.env_changed = ans.get("env_changed", [])
            if o.deadline or o.children or ans.get("vm", 0) > self.vm_start + (self.extra_as_mb << 19):
                self.restart()                      # leftovers of an interrupted run, or less than half the
                #                                     headroom left (caches, thread arenas): start clean
        for name in ("out", "err"):
            p = io_dir / name
            text = p.read_text(encoding="utf-8", errors="replace") if p.exists() else ""
            setattr(o, "stdout" if name == "out" else "stderr", text)
        shutil.rmtree(io_dir, ignore_errors=True)
        if os.environ.get("GSE_FUZZ_LOG"):                # every example, one line: what ran and how it ended
            with open(os.environ["GSE_FUZZ_LOG"], "a", encoding="utf-8") as fh:
                first = (o.stderr.strip().splitlines() or [""])[-1][:160]
                fh.write(json.dumps({"argv": o.argv, "status": o.status, "s": round(o.seconds, 3), "err": first},
                                    ensure_ascii=False) + "\n")
        return o


# -------------------------------------------------------------------- sentinels
def place_sentinels(paths) -> dict:
    """A sentinel file at each output path whose folder exists and that does not exist yet;
    returns {path: bytes} for :func:`contract_problems`."""
    placed = {}
    for p in paths:
        p = Path(p)
        try:
            if p.parent.is_dir() and not p.exists() and not p.is_symlink():
                p.write_bytes(SENTINEL)
                placed[p] = SENTINEL
        except OSError:
            pass
    return placed


# -------------------------------------------------------------------- the contract
def contract_problems(o: Outcome, sentinels: dict | None = None, may_fail: bool = False) -> list[str]:
    """What ``o`` breaks of the house contract (module docstring); [] when it holds.
    ``may_fail``: the command may also exit 1 (some points of a sweep or suite failed)."""
    bad = []
    if o.died is not None:
        bad.append(f"the process died (return code {o.died}{', a signal' if o.died < 0 else ''})")
    if o.hung:
        bad.append(f"no answer within {o.timeout + HARD_GRACE:.0f} s (a hang in native code?)")
    if o.deadline:
        bad.append(f"ran past the {o.timeout:.0f} s deadline")
    if o.escaped:
        bad.append("an exception got past the CLI's guard")
    if "Traceback (most recent call last)" in o.stderr or "Traceback (most recent call last)" in o.stdout:
        bad.append("a traceback was printed")
    if o.children:
        bad.append(f"child processes left running: {o.children}")
    if o.env_changed:
        bad.append(f"the command changed the process environment ({', '.join(o.env_changed)}): a later "
                   "command in the same process inherits it")
    if o.died is None and not o.hung and not o.deadline:
        lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
        allowed = (0, 1, 2) if may_fail else (0, 2)
        if o.status not in allowed:
            bad.append(f"exit status {o.status!r} (expected {' or '.join(map(str, allowed))})")
        errors = [ln for ln in lines if ln.startswith("error:")]
        if o.status == 2:
            if len(lines) != 1 or not lines[0].startswith("error:"):
                bad.append(f"exit 2 needs exactly one stderr line starting 'error:', got {len(lines)} line(s)")
        elif o.status == 0 and errors:
            bad.append("exit 0 with an 'error:' line")
        for ln in errors:
            if "(unexpected; --debug shows the traceback)" in ln:
                bad.append("an internal exception reported as 'unexpected'")
            if ln.startswith("error: out of memory"):
                bad.append("the memory cap was reached (a size not checked before the work)")
    if o.status not in (0, 1) or o.died is not None or o.hung or o.deadline:
        for p, data in (sentinels or {}).items():
            if f"saved to {p}" in o.stderr or f"written to {p}" in o.stderr:
                continue                            # said in the error line (the blow-up save of `ch`)
            try:
                now = Path(p).read_bytes() if not Path(p).is_dir() else b"<a folder>"
            except OSError:
                now = b"<gone>"
            if now != data:
                bad.append(f"the sentinel at {p} changed on a failed run")
    return bad


def _special(p: Path) -> bool:
    """Not a plain file, folder or symlink (a FIFO: copying it would block)."""
    import stat
    try:
        mode = os.lstat(p).st_mode
    except OSError:
        return True
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def examples(n: int):
    """Hypothesis ``settings(max_examples=n)``, times the long factor under ``GSE_FUZZ_LONG``."""
    from hypothesis import settings
    return settings(max_examples=n * LONG_FACTOR if LONG else n)


def check(o: Outcome, sentinels: dict | None = None, may_fail: bool = False, what: str = "",
          cwd: Path | None = None) -> None:
    """Assert the contract for ``o``; under ``GSE_FUZZ_SURVEY=FILE`` append the finding to FILE
    instead (and copy the example's folder ``cwd``, its input files, to ``FILE.inputs/N``)."""
    bad = contract_problems(o, sentinels, may_fail)
    if not bad:
        return
    text = f"{what}: " + "; ".join(bad) + "\n" + o.describe()
    from known import explained
    k = explained(o.describe())
    if k is not None and not SURVEY:
        return                                      # an open finding (known.py), reproduced by test_fuzz_known.py
    if SURVEY:
        if cwd is not None and Path(cwd).is_dir():
            kept = Path(SURVEY + ".inputs")
            keep = kept / str(len(list(kept.glob("*"))) if kept.is_dir() else 0)
            shutil.copytree(cwd, keep, symlinks=True, ignore_dangling_symlinks=True,
                            ignore=lambda d, names: [n for n in names if _special(Path(d) / n)])
            text += f"\ninputs kept in {keep}"
        with open(SURVEY, "a", encoding="utf-8") as fh:
            fh.write("=" * 100 + "\n" + text + "\n")
        return
    raise AssertionError(text)
