"""explorer.jobs: the one job family — results, progress, yields, pause/cancel between yields,
exceptions mapped to one message, signal order — on real worker threads."""
from __future__ import annotations

import threading

import pytest

from kernels.errors import InvalidParameter


@pytest.fixture
def jobs(qapp):
    from explorer import jobs
    return jobs


def _record(job):
    got = []
    for name in ("started", "progress", "yielded", "done", "failed", "cancelled", "finished"):
        getattr(job, name).connect(lambda *a, n=name: got.append((n, *a)))
    return got


def test_function_job_reports_progress_then_its_result(jobs, qtbot):
    def fn(progress, cancelled):
        for i in range(4):
            progress((i + 1) / 4)
        return threading.get_ident()

    job = jobs.FunctionJob("sum", fn)
    got = _record(job)
    with qtbot.waitSignal(job.finished, timeout=5000):
        job.start()
    names = [g[0] for g in got]
    assert names[0] == "started" and names[-1] == "finished" and names.count("done") == 1
    assert [g[1] for g in got if g[0] == "progress"] == [0.25, 0.5, 0.75, 1.0]
    assert next(g[1] for g in got if g[0] == "done") != threading.get_ident()    # ran off the GUI thread
    assert job.wait(100) and not job.is_running()
    with pytest.raises(RuntimeError):
        job.start()


@pytest.mark.parametrize("exc, message", [
    (InvalidParameter("size must be ≥ 8"), "size must be ≥ 8"),
    (FileNotFoundError(2, "No such file", "x.npz"), "No such file"),
    (ZeroDivisionError("division by zero"), "bfs failed: ZeroDivisionError: division by zero"),
])
def test_exceptions_become_one_message(jobs, qtbot, exc, message):
    def fn(progress, cancelled):
        raise exc

    job = jobs.FunctionJob("bfs", fn)
    got = _record(job)
    with qtbot.waitSignal(job.finished, timeout=5000):
        job.start()
    failed = [g[1] for g in got if g[0] == "failed"]
    assert len(failed) == 1 and message in failed[0]
    assert not any(g[0] in ("done", "cancelled") for g in got)


def test_interrupted_function_counts_as_cancelled(jobs, qtbot):
    def fn(progress, cancelled):
        raise InterruptedError

    job = jobs.FunctionJob("x", fn)
    got = _record(job)
    with qtbot.waitSignal(job.finished, timeout=5000):
        job.start()
    assert [g[0] for g in got if g[0] in ("done", "failed", "cancelled")] == ["cancelled"]


def test_generator_job_pauses_and_cancels_between_yields(jobs, qtbot):
    gate = threading.Event()
    closed = []

    def gen(cancelled):
        try:
            for i in range(1000):
                if i == 3:
                    gate.wait(5)        # the test pauses the job while the generator is at item 3
                yield i
        finally:
            closed.append(True)

    job = jobs.GeneratorJob("gen", gen, total=1000)
    got = _record(job)
    job.start()
    qtbot.waitUntil(lambda: any(g[0] == "yielded" for g in got), timeout=5000)
    assert job.toggle_pause() and job.is_paused
    gate.set()
    qtbot.wait(200)
    n_paused = sum(g[0] == "yielded" for g in got)
    qtbot.wait(200)
    assert sum(g[0] == "yielded" for g in got) == n_paused <= 5       # nothing while paused
    job.cancel()                                                       # wakes the paused job to stop
    qtbot.waitUntil(lambda: got and got[-1][0] == "finished", timeout=5000)
    assert closed == [True] and not job.is_paused
    assert [g[0] for g in got if g[0] in ("done", "failed", "cancelled")] == ["cancelled"]
    ys = [g[1] for g in got if g[0] == "yielded"]
    assert ys == list(range(len(ys)))
    prog = [g[1] for g in got if g[0] == "progress"]
    assert prog == [(i + 1) / 1000 for i in range(len(ys))]


def test_generator_return_value_is_the_result(jobs, qtbot):
    def gen(cancelled):
        yield "a"
        yield "b"
        return 42

    job = jobs.GeneratorJob("gen", gen)
    got = _record(job)
    with qtbot.waitSignal(job.finished, timeout=5000):
        job.start()
    assert [g for g in got if g[0] in ("yielded", "done")] == [("yielded", "a"), ("yielded", "b"), ("done", 42)]
    assert not any(g[0] == "progress" for g in got)          # no total: no progress


def test_wait_all_cancels_running_jobs(jobs, qtbot):
    def fn(progress, cancelled):
        while not cancelled():
            threading.Event().wait(0.01)
        raise InterruptedError

    job = jobs.FunctionJob("spin", fn)
    job.start()
    qtbot.waitUntil(job.is_running, timeout=5000)
    assert jobs.wait_all(5000)
    assert not job.is_running()
