"""GUI tests of the Cahn–Hilliard workspace (CPU backend, real Mesa OpenGL via Xvfb)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.cahn_hilliard.params import stability_limit

TIMEOUT = 20000


def wait_paused(qtbot, ws):
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=TIMEOUT)
    qtbot.wait(100)   # let the final frame arrive


def test_window_and_status(main_window, ws):
    assert "CPU (NumPy)" in main_window.lbl_backend.text()
    assert ws.sim.params.size == 64
    assert main_window.workspace() is ws
    # variants A–E run on the CPU as CUDA source on the host; cpu-threads (item 1) too
    combo = ws.controls.widgets["variant"]
    assert combo.count() == 7
    assert combo.model().item(1).isEnabled()
    assert combo.model().item(2).isEnabled() and combo.itemText(2).endswith("(CUDA source run on the CPU)")
    assert "GPU" in combo.itemData(2, 3)


def test_start_pause_step(qtbot, ws, main_window):
    ws.start()
    qtbot.waitUntil(lambda: ws.sim.step_count >= 50, timeout=TIMEOUT)
    ws.pause()
    wait_paused(qtbot, ws)
    n0 = ws.sim.step_count
    assert n0 >= 50 and n0 % 10 == 0
    qtbot.waitUntil(lambda: "step" in main_window.lbl_t.text(), timeout=TIMEOUT)
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count > n0, timeout=TIMEOUT)
    qtbot.wait(200)
    assert ws.sim.step_count == n0 + ws.worker.steps_per_frame == n0 + 10
    # the keyboard shortcut path (Simulation ▸ Step) does the same
    main_window.call("step_once")
    qtbot.waitUntil(lambda: ws.sim.step_count == n0 + 20, timeout=TIMEOUT)


def test_live_and_reset_parameters(qtbot, ws):
    ws.set_parameter("dt", 0.005)
    assert ws.sim.params.dt == pytest.approx(0.005)   # live: applied at once
    assert not ws.pending
    ws.set_parameter("size", 96)
    assert ws.sim.params.size == 64                    # needs reset
    assert ws.pending == {"size": 96}
    assert ws.controls.pending_label.isVisible()
    assert "size" in ws.controls.pending_label.text()
    assert ws.reset()
    assert ws.sim.params.size == 96 and ws.sim.phi.shape == (96, 96)
    assert ws.canvas.shape == (96, 96)
    assert not ws.pending and not ws.controls.pending_label.isVisible()
    assert ws.sim.params.dt == pytest.approx(0.005)


def test_invalid_parameter_shows_message(qtbot, ws):
    ws.set_parameter("boundary", "fixed")           # pending (needs reset)
    ws.set_parameter("integrator", "spectral")      # spectral needs periodic or mirror walls → invalid
    assert "periodic" in ws.message_bar.text()
    assert ws.controls.value("integrator") != "spectral"   # the control reverted
    assert ws.sim.params.integrator == "rk2"
    # the app keeps running
    ws.start()
    qtbot.waitUntil(lambda: ws.sim.step_count >= 20, timeout=TIMEOUT)
    ws.pause()
    wait_paused(qtbot, ws)


def test_dt_warning_and_blowup(qtbot, ws):
    dt_max = stability_limit(ws.sim.params)
    assert ws.controls.dt_limit.text().startswith("≤")
    ws.set_parameter("dt", 3 * dt_max)
    assert ws.sim.params.dt == pytest.approx(3 * dt_max, rel=1e-3)
    assert "b00020" in ws.controls.dt_limit.styleSheet()      # warning colour
    ws.start()
    qtbot.waitUntil(lambda: not ws.is_running(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "blew up" in ws.message_bar.text(), timeout=TIMEOUT)
    phi = ws.sim.field_numpy()
    assert np.isfinite(phi).all() and np.abs(phi).max() < 10
    qtbot.wait(200)
    shown = ws.canvas.field
    assert shown is not None and np.isfinite(shown).all()
    assert ws.controls.btn_run.text() == "Start"


def _luminance(img):
    return img[..., :3].astype(float) @ np.array([0.299, 0.587, 0.114])


def test_export_png_matches_field(qtbot, ws, tmp_path):
    import imageio.v2 as iio
    from skimage.transform import resize
    ws.set_parameter("integrator", "spectral")
    ws.set_parameter("dt", 0.5)
    ws.worker.steps_per_frame = 40
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count == 40, timeout=TIMEOUT)
    qtbot.wait(200)
    ws.set_colormap("grays")
    ws.set_auto_contrast(False)
    path = ws.export_image(str(tmp_path / "field.png"), scale=2, crop_to_data=True)
    img = iio.imread(path)
    assert img.ndim == 3 and img.shape[0] > 64 and img.shape[1] > 64
    assert img.std() > 10   # not blank
    lum = resize(_luminance(img), (64, 64), anti_aliasing=True)
    phi = ws.sim.field_numpy()
    r = np.corrcoef(lum.ravel(), phi.ravel())[0, 1]
    assert r > 0.9, r


def test_save_load_roundtrip(qtbot, ws, tmp_path):
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count == 10, timeout=TIMEOUT)
    qtbot.wait(100)
    phi = ws.sim.field_numpy().copy()
    ws.set_parameter("dt", 0.0125)
    out = ws.save_field(str(tmp_path / "f.npz"))
    z = np.load(out)
    assert "params_json" in z.files
    ws.set_parameter("dt", 0.01)
    ws.set_parameter("seed", 7)
    ws.reset()
    assert not np.allclose(ws.sim.field_numpy(), phi)
    assert ws.open_field(str(out))
    np.testing.assert_array_equal(ws.sim.field_numpy(), phi)
    assert ws.sim.params.initial == "file"
    assert ws.sim.params.dt == pytest.approx(0.0125)
    assert ws.controls.value("dt") == pytest.approx(0.0125)
    # a non-field file gives a message, not a crash
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert not ws.open_field(str(bad))
    assert ws.message_bar.text()


def test_3d_volume_and_slice(qtbot, ws):
    ws.set_parameter("dim", 3)
    ws.set_parameter("size", 32)
    ws.set_parameter("integrator", "spectral")
    ws.set_parameter("dt", 0.5)
    assert ws.reset()
    assert ws.sim.phi.shape == (32, 32, 32)
    ws.worker.steps_per_frame = 30
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count == 30, timeout=TIMEOUT)
    qtbot.wait(300)
    assert ws.view_bar.view3d_bar.isVisible()
    img = ws.canvas.render()
    assert img.std() > 5   # volume + slice drew something
    bg = img[2, 2, :3].astype(int)
    assert (np.abs(img[..., :3].astype(int) - bg).sum(-1) > 30).mean() > 0.05
    assert ws.canvas.volume.visible
    ws.view_bar.iso_check.setChecked(True)                  # isosurface φ = 0 (marching cubes → Mesh)
    assert ws.canvas.iso_mesh is not None and ws.canvas.iso_mesh.visible
    assert len(ws.canvas.iso_mesh.mesh_data.get_faces()) > 100
    ws.set_colormap("grays")                        # grey slice/volume, orange surface
    img2 = ws.canvas.render().astype(int)
    left = img2[:, : img2.shape[1] // 2]
    orange = (left[..., 0] > 120) & (left[..., 0] > left[..., 2] + 60)
    assert orange.mean() > 0.02, orange.mean()
    phi = ws.sim.field_numpy()
    ws.view_bar.slice_axis.setCurrentText("y")
    ws.view_bar.slice_slider.setValue(5)
    np.testing.assert_array_equal(ws.canvas.slice_data(), phi[:, 5, :])
    np.testing.assert_array_equal(ws.canvas.slice_image._data, phi[:, 5, :])
    ws.view_bar.slice_axis.setCurrentText("x")
    ws.view_bar.slice_slider.setValue(17)
    np.testing.assert_array_equal(ws.canvas.slice_data(), phi[:, :, 17])


def test_plots_have_data(qtbot, ws, tmp_path):
    ws.set_parameter("integrator", "spectral")
    ws.set_parameter("dt", 0.5)
    ws.start()
    qtbot.waitUntil(lambda: ws.sim.step_count >= 200, timeout=TIMEOUT)
    ws.pause()
    wait_paused(qtbot, ws)
    qtbot.waitUntil(ws.plots.has_data, timeout=TIMEOUT)
    # raw data (getData clips to the view); the plots refresh on a 200 ms timer
    qtbot.waitUntil(lambda: len(ws.plots.c_length.xData) >= 10, timeout=TIMEOUT)
    assert len(ws.plots.c_energy.xData) >= 3
    assert np.isfinite(ws.plots.alpha)
    assert "α =" in ws.plots.p_length.titleLabel.text
    assert ws.plots.c_sk.xData is not None and len(ws.plots.c_sk.xData) > 3
    png = ws.export_plots(str(tmp_path / "plots.png"))
    svg = ws.export_plots(str(tmp_path / "plots.svg"))
    assert (tmp_path / "plots.png").stat().st_size > 1000
    assert "<svg" in (tmp_path / "plots.svg").read_text()[:2000]


def test_movie_gif(qtbot, ws, tmp_path):
    path = ws.export_movie(str(tmp_path / "m.gif"), frames=5)
    assert path
    qtbot.waitUntil(lambda: ws.recorder is None, timeout=TIMEOUT)
    ws.pause()
    wait_paused(qtbot, ws)
    import imageio.v2 as iio
    frames = iio.mimread(path)
    assert len(frames) == 5


def test_settings_remembered(qtbot, main_window, ws, tmp_path):
    ws.set_colormap("coolwarm")
    main_window.close()
    s = main_window.settings
    s.sync()
    assert s.value("main/workspace") == "cahn_hilliard"
    assert s.value("ws/cahn_hilliard/colormap") == "coolwarm"


def test_rendered_canvas_shows_the_field(qtbot, ws):
    """The OpenGL canvas itself (not a re-colouring of the array) shows φ where the image sits."""
    from skimage.transform import resize
    ws.worker.steps_per_frame = 30
    ws.step_once()
    qtbot.waitUntil(lambda: ws.sim.step_count == 30, timeout=TIMEOUT)
    qtbot.wait(200)
    ws.set_colormap("grays")
    ws.set_auto_contrast(True)
    img = ws.canvas.canvas.render(alpha=False)
    x0, y0, x1, y1 = (int(round(v)) for v in ws.canvas.data_rect())
    crop = img[y0 + 1:y1 - 1, x0 + 1:x1 - 1, 0].astype(float)
    assert crop.shape[0] > 64 and crop.std() > 10
    phi = ws.canvas.field
    shown = resize(crop, phi.shape, anti_aliasing=True)
    r = np.corrcoef(shown.ravel(), phi.ravel())[0, 1]
    assert r > 0.95, r
