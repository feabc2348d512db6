"""Graphs workspace, Reproduce and Clustering-timings tabs on Dask (issue 25): the scheduler choice
(shared with the Cahn–Hilliard Sweep tab, remembered), the same rows on an embedded 2-worker
cluster as in this process (any order), progress counting tasks, the workers shown, and Cancel on
an existing cluster leaving none of the sweep's tasks behind."""
from __future__ import annotations

import time

import pytest

pytest.importorskip("distributed")
TIMEOUT = 120_000


def _reproduce(panel, scheduler, workers=0):
    panel.ed_sizes.setText("60, 120")
    panel.sp_inst.setValue(2)
    panel.cb_method.setCurrentText("cpu-sampled")
    for t, ck in panel.ck_types.items():
        ck.setChecked(t in ("alpha", "ba"))
    panel.cb_conn.setCurrentText("largest component")          # instances independent: one task each
    panel.where.cb_sched.setCurrentText(scheduler)
    panel.where.sp_workers.setValue(workers)


def _clustering(panel, scheduler, workers=0, ws="200, 300", ba="200, 260", repeats=1):
    for f, ck in panel.ck_fam.items():
        ck.setChecked(True)
    panel.ed_sizes["ws"].setText(ws)
    panel.ed_sizes["ba"].setText(ba)
    for m, ck in panel.ck_methods.items():
        ck.setChecked(m in ("cpu", "cpu-threads"))
    panel.sp_repeats.setValue(repeats)
    panel.sp_threads.setValue(2)
    panel.where.cb_sched.setCurrentText(scheduler)
    panel.where.sp_workers.setValue(workers)


def _run(qtbot, panel, seen=None):
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT):
        assert panel.run()
        if seen is not None and panel.job is not None:
            panel.job.yielded.connect(lambda item: seen.append(item[1]))
    assert panel.job is None and panel.bt_run.isEnabled()
    return list(panel.rows)


def _numbers(rows, drop=("seconds", "ref_seconds", "std")):
    return sorted(tuple(sorted((k, v) for k, v in r.to_dict().items() if k not in drop)) for r in rows)


def test_reproduce_on_a_local_cluster_equals_the_in_process_run(qtbot, graphs_ws):
    panel = graphs_ws.reproduce
    _reproduce(panel, "none")
    here = _run(qtbot, panel)
    assert len(here) == 8 and panel.where.info.isHidden()
    _reproduce(panel, "local", workers=2)
    seen: list = []
    there = _run(qtbot, panel, seen)
    assert _numbers(there) == _numbers(here)                          # the same numbers, any order
    assert all(r.seconds > 0 for r in there)                          # each instance timed on its worker
    assert [r.instance for r in there if r.type == "ba" and r.n == 120] == [0, 1]    # serial order again
    # progress counted finished tasks across the cluster (one task per instance here)
    assert panel.progress.maximum() == panel.progress.value() == 8 and "tasks" in panel.progress.format()
    assert [st["finished"] for st in seen] == list(range(9))
    assert seen[-1]["workers"] == 2 and seen[-1]["kind"] == "local-cpu"
    assert "2 workers (local-cpu)" in panel.where.info.text() and not panel.where.info.isHidden()
    assert "Fitted exponents" in panel.lbl.text()
    # back to in-process: the progress bar counts instances again
    _reproduce(panel, "none")
    _run(qtbot, panel)
    assert panel.progress.format() == "%v / %m instances"


def test_clustering_on_a_local_cluster_equals_the_in_process_run(qtbot, graphs_ws):
    panel = graphs_ws.cc_timing
    _clustering(panel, "none")
    here = _run(qtbot, panel)
    _clustering(panel, "local", workers=2)
    seen: list = []
    there = _run(qtbot, panel, seen)
    assert len(there) == len(here) == 8 and all(r.agrees for r in there)
    assert _numbers(there) == _numbers(here)
    assert [(r.family, r.n, r.method) for r in there] == [(r.family, r.n, r.method) for r in here]
    assert panel.progress.value() == panel.progress.maximum() == 4           # one task per (family, V)
    assert seen[-1]["finished"] == 4 and seen[-1]["workers"] == 2
    assert "All methods agree" in panel.lbl.text() and "4 of 4 tasks" in panel.where.info.text()


def test_cancel_on_an_existing_cluster_leaves_none_of_its_tasks(qtbot, graphs_ws):
    from distributed import Client, LocalCluster
    panel = graphs_ws.cc_timing
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                      host="127.0.0.1", dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        _clustering(panel, cluster.scheduler_address, ws="2000, 4000, 8000, 16000, 24000",
                    ba="2000, 4000, 8000, 12000", repeats=3)
        with qtbot.waitSignal(panel.finished, timeout=TIMEOUT):
            assert panel.run()
            qtbot.waitUntil(lambda: len(panel.rows) >= 1, timeout=TIMEOUT)
            panel.bt_cancel.click()
        assert 1 <= len(panel.rows) < 18 and "cancelled" in panel.lbl.text()
        assert panel.job is None and panel.bt_run.isEnabled() and not panel.bt_cancel.isEnabled()
        assert "remote" in panel.where.info.text()

        def tasks():
            return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        deadline = time.monotonic() + 30
        while tasks() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert tasks() == 0                                # no future of the sweep left on the scheduler
        assert len(client.scheduler_info()["workers"]) == 2     # and the cluster still runs


def test_cancel_on_a_local_cluster_stops_it(qtbot, graphs_ws):
    panel = graphs_ws.reproduce
    _reproduce(panel, "local", workers=2)
    panel.ed_sizes.setText("2000, 4000, 8000, 16000")
    panel.sp_inst.setValue(5)
    clusters = []
    with qtbot.waitSignal(panel.finished, timeout=TIMEOUT):
        assert panel.run()
        sweep = panel.job.sweep
        panel.job.yielded.connect(lambda _item: sweep.connection and clusters.append(sweep.connection.cluster))
        qtbot.waitUntil(lambda: len(panel.rows) >= 1, timeout=TIMEOUT)
        panel.bt_cancel.click()
    assert 1 <= len(panel.rows) < 40 and "cancelled" in panel.lbl.text() and "cancelled" in panel.where.info.text()
    assert sweep.connection is None and clusters                     # the sweep let go of its cluster …
    assert clusters[0].status.name == "closed" and not clusters[0].workers    # … which is stopped


def test_scheduler_choice_is_shared_checked_and_remembered(qtbot, main_window, graphs_ws, backend):
    from explorer.main_window import MainWindow
    rep, cct = graphs_ws.reproduce, graphs_ws.cc_timing
    ch = main_window.workspace("cahn_hilliard").sweep.panel
    # until one is picked, each tab shows its own default: the Graphs tabs run here, the CH sweep on Dask
    assert rep.where.text() == cct.where.text() == "none" and ch.cb_sched.currentText() == "local"
    rep.where.cb_sched.setCurrentText("tcp://127.0.0.1:1")
    rep.where.sp_workers.setValue(3)
    assert cct.where.text() == ch.cb_sched.currentText() == "tcp://127.0.0.1:1"
    assert cct.where.sp_workers.value() == ch.sp_workers.value() == 3
    # a bad address: one message, nothing runs
    cct.where.cb_sched.setCurrentText("http://nowhere")
    assert rep.where.text() == "http://nowhere"
    assert not rep.run() and "scheduler" in graphs_ws.message_bar.text() and rep.job is None
    assert not cct.run() and "scheduler" in cct.lbl.text() and cct.job is None
    # remembered by the main window, for every tab
    ch.cb_sched.setCurrentText("local")
    ch.sp_workers.setValue(2)
    main_window.close()
    again = MainWindow(backend, settings=main_window.settings)
    qtbot.addWidget(again)
    ws2 = again.show_workspace("graphs")
    assert ws2.reproduce.where.text() == ws2.cc_timing.where.text() == "local"
    assert ws2.cc_timing.where.sp_workers.value() == 2
    again.close()


def test_unreachable_scheduler_is_one_message_and_the_tab_stays_usable(qtbot, graphs_ws, monkeypatch):
    import socket

    from kernels.sweep import cluster
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.5)
    panel = graphs_ws.reproduce
    _reproduce(panel, f"tcp://127.0.0.1:{port}")
    _run(qtbot, panel)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in graphs_ws.message_bar.text()
    assert not panel.rows and not panel.bt_cancel.isEnabled()
    _reproduce(panel, "none")                                         # and it runs again
    assert len(_run(qtbot, panel)) == 8
