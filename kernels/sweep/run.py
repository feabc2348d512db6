"""Run a sweep: submit its points to the scheduler, yield rows as they complete, append each to the
result file at once, resume, cancel.

    sweep = Sweep(make_task("ch", steps=2000, size=256), product({"mean": …, "seed": …}),
                  path="ch.csv", scheduler="local")
    for row in sweep.rows():          # rows as they complete, in any order
        …
    sweep.cancel()                    # from another thread: cancels the futures, rows() returns

Every point is submitted with ``Client.submit`` (with the task object itself, not a scattered copy:
a worker lost or restarted must not take the task away from the others) and collected through ``distributed.as_completed``; each finished point's rows are appended to the
result file before they are yielded, so a killed client loses nothing that finished.  A point is
written once even if Dask runs it twice (a worker lost after finishing it).  ``mode="resume"``
skips the points already in the file (:class:`ResultFile`).  ``timeout`` (seconds per point, from
its submission; at most one point per worker thread is in flight then) fails a point that runs too
long and restarts the worker that runs it.  ``scheduler="none"`` runs the points here, one after
the other (no timeout).

Rows are dicts: ``point`` (its index), the point's values, the task's columns, ``error`` (empty, or
why the point failed: the sweep goes on), ``worker`` (host:pid) and ``task_seconds`` (wall time
of the task on its worker: per-task timings stay comparable however many workers run).  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: distributed loads only when a sweep runs on a Dask cluster (slow to import).
import os
import threading
import time
from typing import Iterator

from ..errors import BackendUnavailable, ExplorerError, InvalidParameter
from ..procs import on_sigterm, raise_terminated
from .cluster import Connection, connect, parse_scheduler
from .points import identity
from .results import ResultFile
from .base import SweepTask, timed
import socket

TAIL = ("error", "worker", "task_seconds")


def execute(task: SweepTask, index: int, point: dict) -> dict:
    """Run one point (on a worker): ``{"point", "rows", "error", "worker", "task_seconds"}``.
    The task's fatal exceptions propagate (they stop the sweep); any other failure of the point
    is returned as its error."""
    err = ""
    t0 = time.perf_counter()
    try:
        res, secs, where = timed(task.run, point)
    except task.fatal:
        raise
    except ExplorerError as exc:
        res, err = None, str(exc)
    except Exception as exc:  # noqa: BLE001 — one point's failure is that point's row, not the sweep's end
        res, err = None, f"{type(exc).__name__}: {exc}"
    if err:
        secs, where = time.perf_counter() - t0, f"{socket.gethostname()}:{os.getpid()}"
    rows = [] if res is None else (res if isinstance(res, list) else [res])
    return {"point": index, "rows": rows, "error": err, "worker": where, "task_seconds": secs}


class Sweep:
    """One sweep of ``task`` over ``points`` (see the module docstring).  Everything that can be
    wrong with the input (points, result file, scheduler address) is refused in the constructor
    or ``open()``, before any point runs."""

    def __init__(self, task: SweepTask, points: list[dict], path=None, mode: str = "new",
                 scheduler: str = "local", workers: int | None = None, timeout: float | None = None,
                 config: dict | None = None):
        self.task = task
        if not points:
            raise InvalidParameter("the sweep has no points")
        self.points = [task.check_point(p) for p in points]
        self.scheduler = parse_scheduler(scheduler)
        if timeout is not None and not timeout > 0:
            raise InvalidParameter(f"timeout must be > 0 seconds (got {timeout})")
        if workers is not None and int(workers) < 1:
            raise InvalidParameter(f"workers must be ≥ 1 (got {workers})")
        self.timeout, self.workers, self.config = timeout, workers, config
        self.identity = identity(task.name, task.fixed, self.points)
        keys = list(dict.fromkeys(k for p in self.points for k in p))
        self.keys = keys                  # the point's parameters (columns after "point")
        self.columns = ["point", *keys, *(c for c in task.columns if c not in keys and c not in TAIL), *TAIL]
        self.file = ResultFile(path, self.identity, self.columns, mode) if path else None
        self.total = len(self.points)
        self.pending: list[int] = list(range(self.total))
        self.finished = 0                 # points finished in this run
        self.rows_out = 0                 # rows yielded in this run (several per point for some tasks)
        self.errors: dict = {}            # error message → points that failed with it, this run
        self.skipped = 0                  # points already in the file (resume)
        self.connection: Connection | None = None
        self._cancel = threading.Event()
        self._wake = threading.Event()
        self._futures: dict = {}
        self._workers_seen = (0.0, 0)     # (when, how many): status() asks the scheduler at most 2× a second
        self._gpu_workers: list | None = None
        self._restarts: list = []         # when each background restart began (removed when it ends)
        self._restarted = threading.Event()
        self._gpu_lost: float | None = None  # since when no GPU worker answers after a restart
        self._opened = False

    # ---------------------------------------------------------------- set-up
    def open(self) -> "Sweep":
        """Check / prepare the result file, connect to the scheduler, check GPUs where needed."""
        if self._opened:
            return self
        if self.file is not None:
            self.file.check()                            # refuse a wrong file before starting anything
            self.pending = [i for i in range(self.total) if i not in self.file.done]
            self.skipped = self.total - len(self.pending)
        try:
            if self.pending:
                self.connection = connect(self.scheduler, self.workers, gpu=self.task.wants_gpu(),
                                          gpu_shared=self.task.shares_gpu, config=self.config)
                if self.task.needs_gpu():
                    good, why = self.connection.gpu_workers()
                    if not good:
                        where = ("this machine" if self.connection.kind != "remote"
                                 else f"any worker of {self.scheduler}")
                        raise BackendUnavailable(f"this sweep needs a CUDA GPU, but {where} has none ({why}); "
                                                 "start GPU workers with 'dask cuda worker', or run on the CPU")
                    self._gpu_workers = None if self.connection.serial else good
            if self.file is not None:
                self.file.open()                         # header written only once the cluster is ready
        except BaseException:
            self.close()
            raise
        self._opened = True
        return self

    def close(self) -> None:
        """Cancel what is still running, disconnect (stopping an embedded cluster), close the file."""
        try:
            if self.connection is not None and self.connection.client is not None and self._futures:
                try:
                    self.connection.client.cancel(list(self._futures), force=True)
                except Exception:  # noqa: BLE001 — the scheduler may be gone already
                    pass
            self._futures = {}
            if self.connection is not None:
                self.connection.close()
        finally:
            self.connection = None
            if self.file is not None:
                self.file.close()

    def cancel(self) -> None:
        """Stop the sweep (thread-safe): pending points are cancelled; ``rows()`` returns soon."""
        self._cancel.set()
        self._wake.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    # ---------------------------------------------------------------- running
    def rows(self) -> Iterator[dict]:
        """Yield each finished row (after it is in the result file); closes everything at the end,
        on cancel, on an error and when the caller stops iterating.  SIGTERM and SIGHUP stop it as
        Ctrl+C does, so the workers go down with the run: a serial run raises
        :class:`procs.Terminated` at once; a distributed one cancels, lets the scheduler's loop wind
        down (raising inside a Dask call leaves its threads logging errors), then raises it."""
        got: list[int] = []

        def terminate(signum: int):
            got.append(signum)
            self.cancel()
            if self.connection is not None and self.connection.serial:
                raise_terminated(signum)
        with on_sigterm(terminate):
            try:
                yield from self._rows()
            except Exception:
                if not got:
                    raise                     # a failure of its own, not the signal's doing
        if got:
            raise_terminated(got[0])

    def _rows(self) -> Iterator[dict]:
        try:
            self.open()
            if not self.pending:
                return
            if self.connection.serial:
                yield from self._serial()
            else:
                yield from self._distributed()
        finally:
            self.close()

    def _record(self, res: dict, written: set) -> list[dict]:
        i = res["point"]
        if i in written:                        # Dask ran it twice: keep the first
            return []
        written.add(i)
        point = self.points[i]
        base = {"point": i, **point}
        tail = {"error": res["error"], "worker": res["worker"], "task_seconds": res["task_seconds"]}
        rows = [{**base, **r, **base, **tail} for r in res["rows"]] or [{**base, **tail}]
        if self.file is not None:
            self.file.append(rows)
        self.finished += 1
        self.rows_out += len(rows)
        if res["error"]:
            self.errors[res["error"]] = self.errors.get(res["error"], 0) + 1
        return rows

    def _serial(self) -> Iterator[dict]:
        written: set = set()
        for i in list(self.pending):
            if self.cancelled:
                return
            yield from self._record(execute(self.task, i, self.points[i]), written)

    def _distributed(self) -> Iterator[dict]:
        from distributed import as_completed
        client = self.connection.client
        todo = list(reversed(self.pending))
        ac = as_completed(loop=client.loop)
        written: set = set()

        def submit(i):
            placement = {"workers": self._gpu_workers, "allow_other_workers": False} if self._gpu_workers else {}
            fut = client.submit(execute, self.task, i, self.points[i], pure=False, **placement)
            fut.add_done_callback(lambda _f: self._wake.set())
            self._futures[fut] = (i, time.perf_counter())
            ac.add(fut)

        window = self.total if self.timeout is None else None
        while todo or self._futures:
            if self.cancelled:
                return
            limit = window or max(1, self.connection.threads())
            if self._gpu_workers and not self._gpu_workers_ready():
                limit = 0                     # a GPU worker is restarting: its new address is not known yet
            while todo and len(self._futures) < limit:
                submit(todo.pop())
            batch = ac.next_batch(block=False)
            if not batch:
                self._wake.wait(0.1)
                self._wake.clear()
                if self.timeout is not None:
                    yield from self._expire(written)
                continue
            for fut in batch:
                i, _t0 = self._futures.pop(fut, (None, 0.0))
                if i is None:
                    continue
                yield from self._collect(fut, i, written, todo)

    def _collect(self, fut, i: int, written: set, todo: list) -> Iterator[dict]:
        from distributed.client import FutureCancelledError
        status = fut.status
        if status == "finished":
            yield from self._record(fut.result(), written)
            return
        if status == "cancelled" or self.cancelled:
            if not self.cancelled:               # cancelled from outside this sweep: run it again
                todo.append(i)
            return
        exc = fut.exception()
        if isinstance(exc, self.task.fatal) or isinstance(exc, FutureCancelledError):
            raise exc
        why = (f"the worker running it died ({type(exc).__name__}: {exc})" if type(exc).__name__ == "KilledWorker"
               else f"{type(exc).__name__}: {exc}")
        yield from self._record({"point": i, "rows": [], "error": why, "worker": "", "task_seconds": 0.0},
                                written)

    def _expire(self, written: set) -> Iterator[dict]:
        """Points past ``timeout``: record them failed, then cancel them and restart the workers running
        them in the background (:meth:`_restart`), so that the sweep goes on meanwhile."""
        now = time.perf_counter()
        late = [(f, i, t0) for f, (i, t0) in self._futures.items() if now - t0 >= self.timeout and not f.done()]
        if not late:
            return
        for f, i, t0 in late:
            self._futures.pop(f, None)
            yield from self._record({"point": i, "rows": [], "worker": "", "task_seconds": round(now - t0, 4),
                                     "error": f"timed out after {self.timeout:g} s (worker restarted)"}, written)
        began = time.perf_counter()
        self._restarts.append(began)
        threading.Thread(target=self._restart, args=(self.connection.client, [f for f, _i, _t in late], began),
                         name="sweep-restart", daemon=True).start()

    def _gpu_workers_ready(self) -> bool:
        """False while a GPU worker restarts.  A restarted worker comes back at a new address, and a point
        pinned to the old one would wait forever (on a machine with one GPU, every point after the first
        time-out did); so once the restarts are over, the GPU workers are asked for again.  A restart
        that has not ended after ``timeout`` + 60 s is given up on (the scheduler drops such a worker);
        no GPU worker answering for as long after that ends the sweep with BackendUnavailable."""
        grace = 60.0 + (self.timeout or 0.0)
        if any(time.perf_counter() - t < grace for t in self._restarts):
            return False
        if self._restarted.is_set() or self._restarts:
            self._restarted.clear()
            self._restarts.clear()
            good, why = self.connection.gpu_workers()
            if not good:                       # not back yet: ask again on the next round
                now = time.perf_counter()
                self._gpu_lost = self._gpu_lost or now
                if now - self._gpu_lost > grace:
                    raise BackendUnavailable(f"no GPU worker came back after a restart ({why or 'none answers'})")
                self._restarted.set()
                return False
            self._gpu_workers, self._gpu_lost = good, None
        return True

    def _restart(self, client, futures: list, began: float) -> None:
        """Cancel ``futures`` and restart the workers running them.  Off the sweep's loop: a nanny can take
        long to kill a worker stuck in native code (a GPU kernel), and ``restart_workers`` waits for it
        beyond its ``timeout``; on the loop that wait stopped every other point (and the sweep, when the
        last points were waiting to be submitted).  Points still running when their worker goes are the
        loop's: they time out or fail as "died"."""
        keys = {f.key for f in futures}
        try:
            processing = client.processing()
            busy = [w for w, ks in processing.items() if any(k in keys for k in ks)]
            client.cancel(futures, force=True)
            if busy:
                client.restart_workers(busy, timeout=30, raise_for_error=False)
        except Exception:  # noqa: BLE001 — a worker that cannot restart is replaced by Dask or gone
            pass
        finally:
            if began in self._restarts:
                self._restarts.remove(began)
            self._restarted.set()
            self._wake.set()

    # ---------------------------------------------------------------- status
    def status(self) -> dict:
        """Progress and cluster facts for a progress bar: finished (this run + already in the file),
        total, workers, dashboard link."""
        c = self.connection
        if c is None:
            workers = 0
        elif c.serial:
            workers = 1
        else:
            when, workers = self._workers_seen
            if time.monotonic() - when > 0.5:
                workers = len(c.workers())
                self._workers_seen = (time.monotonic(), workers)
        return {"finished": self.finished + self.skipped, "total": self.total, "skipped": self.skipped,
                "keys": list(self.keys),
                "scheduler": self.scheduler, "kind": c.kind if c else "",
                "workers": workers,
                "dashboard": c.dashboard_link() if c else "", "notes": list(c.notes) if c else []}
