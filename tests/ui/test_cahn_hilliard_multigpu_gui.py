"""GUI tests of the Cahn–Hilliard workspace's multi-GPU controls (CPU backend: virtual GPUs
from GSE_VIRTUAL_GPUS; real Mesa OpenGL via Xvfb)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.cahn_hilliard import CahnHilliard
from kernels.cahn_hilliard.multigpu import VIRTUAL_ENV

TIMEOUT = 20000


def wait_paused(qtbot, ws):
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=TIMEOUT)
    qtbot.wait(100)   # let the final frame arrive


@pytest.fixture
def ws2(monkeypatch, request):
    """The workspace built with two virtual GPUs offered (the env var is read when it is built)."""
    monkeypatch.setenv(VIRTUAL_ENV, "2")
    w = request.getfixturevalue("ws")
    assert w.controls.offered_gpus == 2, "request ws2 before main_window: the window reads the env var"
    return w


@pytest.fixture
def ws3(monkeypatch, request):
    """The workspace built with three virtual GPUs offered."""
    monkeypatch.setenv(VIRTUAL_ENV, "3")
    w = request.getfixturevalue("ws")
    assert w.controls.offered_gpus == 3
    return w


@pytest.fixture
def ws1(monkeypatch, request):
    """The workspace on the CPU backend without virtual GPUs: one GPU offered."""
    monkeypatch.delenv(VIRTUAL_ENV, raising=False)
    w = request.getfixturevalue("ws")
    assert w.controls.offered_gpus == 1
    return w


def test_controls_offer_two_virtual_gpus(ws2):
    gpus, exch = ws2.controls.widgets["gpus"], ws2.controls.widgets["exchange"]
    assert gpus.isEnabled() and gpus.minimum() == 1 and gpus.maximum() == 2
    assert gpus.value() == 1 and ws2.sim.params.gpus == 1
    assert not exch.isEnabled()                       # nothing to exchange on one GPU
    assert [exch.itemData(i) for i in range(exch.count())] == ["p2p", "host", "nccl"]
    tips = [exch.itemData(i, 3) for i in range(exch.count())]     # 3: ToolTipRole
    assert "cudaMemcpyPeerAsync" in tips[0] and "pinned host memory" in tips[1] and "NCCL" in tips[2]
    ws2.set_parameter("gpus", 2)
    assert exch.isEnabled()
    assert ws2.view_bar.slabs_check.isVisible() and ws2.view_bar.slabs_check.isEnabled()


def test_two_gpus_while_running_bit_exact(ws2, qtbot, main_window):
    p0 = ws2.sim.params
    ws2.start()
    qtbot.waitUntil(lambda: ws2.sim.step_count >= 30, timeout=TIMEOUT)
    ws2.set_parameter("gpus", 2)                      # live: applied while the run goes on
    assert ws2.is_running()
    assert ws2.sim.params.gpus == 2
    d = ws2.sim.decomposition()
    assert d["gpus"] == 2 and d["slab_rows"] == [[0, 32], [32, 64]] and d["virtual_gpus"]
    n_switch = ws2.sim.step_count
    qtbot.waitUntil(lambda: ws2.sim.step_count >= n_switch + 50, timeout=TIMEOUT)
    assert ws2.is_running()
    ws2.pause()
    wait_paused(qtbot, ws2)
    # the status bar names the decomposition, the message bar the kernel's note
    qtbot.waitUntil(lambda: "2 virtual GPUs" in main_window.lbl_info.text(), timeout=TIMEOUT)
    assert main_window.lbl_info.text() == "2 virtual GPUs · p2p · slabs of 32/32 rows"
    assert "virtual GPUs" in ws2.message_bar.text()
    # bit for bit the field of one GPU after as many steps
    steps = ws2.sim.step_count
    ref = CahnHilliard(p0.with_changes(gpus=1), ws2.backend)
    ref.step(steps)
    phi = ws2.sim.field_numpy()
    assert ws2.sim.params.with_changes(gpus=1) == ref.params
    assert np.array_equal(phi, ref.field_numpy())
    # and not trivially: the field did evolve
    assert not np.array_equal(phi, CahnHilliard(p0, ws2.backend).field_numpy())


def test_exchange_and_spectral_notes(ws2, qtbot, main_window):
    ws2.set_parameter("gpus", 2)
    ws2.set_parameter("exchange", "host")
    assert ws2.sim.decomposition()["exchange"] == "host"
    qtbot.waitUntil(lambda: "· host ·" in main_window.lbl_info.text(), timeout=TIMEOUT)
    # the spectral stepper runs on one GPU: a warning, no crash, the run goes on
    ws2.set_parameter("integrator", "spectral")
    assert ws2.sim.params.integrator == "spectral" and ws2.sim.params.gpus == 2
    assert ws2.sim.decomposition()["gpus"] == 1
    assert "spectral" in ws2.message_bar.text() and ws2.message_bar.level == "warning"
    qtbot.waitUntil(lambda: main_window.lbl_info.text() == "", timeout=TIMEOUT)
    assert not ws2.view_bar.slabs_check.isEnabled()
    ws2.step_once()
    qtbot.waitUntil(lambda: ws2.sim.step_count == 10, timeout=TIMEOUT)
    ws2.set_parameter("integrator", "rk2")
    assert ws2.sim.decomposition()["gpus"] == 2
    assert "spectral" not in ws2.message_bar.text()
    # a reset keeps two GPUs and the notes
    assert ws2.reset()
    assert ws2.sim.decomposition()["gpus"] == 2 and "virtual GPUs" in ws2.message_bar.text()


def test_slab_overlay(ws3, qtbot):
    """Three slabs of a 64-row field: boundaries at rows 22 and 43 (asymmetric, so the test
    also checks that array row 0 is at the top of the view)."""
    ws3.set_parameter("gpus", 3)
    assert ws3.sim.decomposition()["slab_rows"] == [[0, 22], [22, 43], [43, 64]]
    ws3.step_once()
    qtbot.waitUntil(lambda: ws3.sim.step_count == 10, timeout=TIMEOUT)
    qtbot.wait(200)
    c = ws3.canvas
    ws3.set_colormap("grays")
    assert not c.slab_overlay_visible()
    off = c.canvas.render(alpha=False).astype(int)
    ws3.view_bar.slabs_check.setChecked(True)
    assert ws3.show_slabs() and c.slab_overlay_visible()
    pos = c.slab_lines.pos
    assert sorted(set(pos[:, 1].tolist())) == [22, 43]   # the boundaries above rows 22 and 43
    assert pos[:, 0].min() == 0 and pos[:, 0].max() == 64
    on = c.canvas.render(alpha=False).astype(int)
    # the pixels that changed lie on the screen rows of field rows 22 and 43
    changed = np.abs(on - off).sum(-1) > 30
    rows = np.nonzero(changed.any(axis=1))[0]
    x0, y0, x1, y1 = c.data_rect()
    ratio = on.shape[0] / c.canvas.size[1]            # physical pixels per logical pixel
    for r in (22, 43):
        y = (y0 + (y1 - y0) * r / 64) * ratio
        near = changed[np.abs(np.arange(changed.shape[0]) - y) <= 2.5 * ratio]
        assert near.any(axis=0).sum() > 0.3 * (x1 - x0) * ratio, r   # a dashed line across the field
    ys = [(y0 + (y1 - y0) * r / 64) * ratio for r in (22, 43)]
    assert rows.size and all(min(abs(row - y) for y in ys) <= 2.5 * ratio for row in rows), (rows, ys)
    # the exported view carries the overlay, at the boundaries only
    img = c.field_rgba(4)
    ws3.view_bar.slabs_check.setChecked(False)
    plain = c.field_rgba(4)
    diff = np.nonzero((img != plain).any(axis=(1, 2)))[0]
    assert set(diff.tolist()) == {22 * 4, 43 * 4}
    assert not c.slab_overlay_visible()
    # the Workspace-menu toggle (Ctrl+G)
    ws3.toggle_slabs()
    assert ws3.show_slabs() and c.slab_overlay_visible()


def test_slab_overlay_off_in_3d(qtbot, ws2):
    ws2.set_parameter("gpus", 2)
    ws2.view_bar.slabs_check.setChecked(True)
    ws2.set_parameter("dim", 3)
    ws2.set_parameter("size", 32)
    assert ws2.reset()
    assert ws2.sim.decomposition()["gpus"] == 2
    assert ws2.canvas.dim == 3
    assert not ws2.view_bar.slabs_check.isEnabled() and not ws2.canvas.slab_overlay_visible()


def test_gpus_remembered(ws2, qtbot, main_window):
    ws2.set_parameter("gpus", 2)
    ws2.set_parameter("exchange", "host")
    ws2.view_bar.slabs_check.setChecked(True)
    main_window.close()
    s = main_window.settings
    s.sync()
    import json
    p = json.loads(s.value("ws/cahn_hilliard/params_json"))
    assert p["gpus"] == 2 and p["exchange"] == "host"
    assert str(s.value("ws/cahn_hilliard/show_slabs")).lower() == "true"


def test_one_gpu_offered_disables_controls(ws1):
    gpus, exch = ws1.controls.widgets["gpus"], ws1.controls.widgets["exchange"]
    assert not gpus.isEnabled() and not exch.isEnabled()
    assert gpus.maximum() == 1
    assert "two or more CUDA GPUs" in gpus.toolTip() and VIRTUAL_ENV in gpus.toolTip()
    assert not ws1.view_bar.slabs_check.isVisible()
    assert ws1.extra_actions() == []
    assert ws1.sim.decomposition()["gpus"] == 1


def test_session_asking_more_gpus_than_offered(ws1):
    state = ws1.session_state()
    state["params"] = {**state["params"], "gpus": 4, "exchange": "host"}
    ws1.restore_session(state, {})
    assert ws1.sim.params.gpus == 1 and ws1.sim.params.exchange == "host"
    assert ws1.sim.decomposition()["gpus"] == 1
    assert ws1.controls.value("gpus") == 1
    assert "4 GPUs were asked for" in ws1.message_bar.text()
