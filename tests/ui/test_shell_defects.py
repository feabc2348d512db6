"""Window defects of issue 36: the width after lecture mode with a long backend notice, the mode
bar's captions at the lecture font, clipped combos, steps/s while paused."""
from __future__ import annotations

from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QComboBox


def _window(qtbot, tmp_path, backend):
    from explorer.app import create_app
    from explorer.main_window import MainWindow
    from kernels.cahn_hilliard.params import CHParams
    create_app()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(backend, settings=settings,
                     options={"cahn_hilliard": {"params": CHParams(size=64), "steps_per_frame": 10}})
    qtbot.addWidget(win)
    return win


def test_long_backend_notice_keeps_1440_after_lecture_mode(qtbot, tmp_path, backend):
    backend.notice = ("no GPU: CuPy is not usable (ModuleNotFoundError: No module named 'cupy'); install the "
                      "'gpu' extra for GPU support")
    win = _window(qtbot, tmp_path, backend)
    win.resize(1440, 900)
    win.show()
    qtbot.waitExposed(win)
    win.show_workspace("occupancy")
    assert win.minimumSizeHint().width() <= 1440
    assert win.lbl_backend.width() < 200 and backend.notice in win.lbl_backend.toolTip()
    assert backend.notice in win.log.text()                     # the whole notice is in the log
    win.set_lecture_mode(True)
    qtbot.wait(300)
    win.set_lecture_mode(False)
    qtbot.waitUntil(lambda: win.width() == 1440, timeout=5000)
    qtbot.wait(200)
    assert win.width() == 1440 and win.height() == 900
    win.ask_before_quit = False


def _words_fit(win) -> list:
    fm = win.mode_bar.fontMetrics()
    bad = []
    for row in range(win.mode_bar.count()):
        it = win.mode_bar.item(row)
        width = win.mode_bar.visualItemRect(it).width()
        for word in it.text().replace("\u200b", " ").split():
            if fm.horizontalAdvance(word) > width - 8:
                bad.append((word, fm.horizontalAdvance(word), width))
    return bad


def test_mode_bar_captions_fit_in_lecture_mode(main_window, qtbot):
    assert _words_fit(main_window) == []
    assert main_window.mode_bar.width() == 92
    main_window.set_lecture_mode(True)
    qtbot.wait(200)
    assert _words_fit(main_window) == []
    main_window.set_lecture_mode(False)
    qtbot.wait(200)
    assert _words_fit(main_window) == [] and main_window.mode_bar.width() == 92


def test_fit_combos_gives_each_combo_room_for_its_longest_entry(qtbot):
    from PyQt6.QtWidgets import QFormLayout, QWidget

    from explorer.widgets import COMBO_MAX_PX, fit_combos
    form_w = QWidget()
    qtbot.addWidget(form_w)
    form = QFormLayout(form_w)
    long_text = "RK2 midpoint (explicit, paper 000)"
    c = QComboBox()
    c.addItems(["Euler", long_text])
    huge = QComboBox()
    huge.addItems(["x" * 400])
    form.addRow("Integrator", c)
    form.addRow("Other", huge)
    form_w.resize(200, 100)
    form_w.show()
    qtbot.waitExposed(form_w)
    assert fit_combos(form_w) == 2
    form_w.adjustSize()
    qtbot.wait(50)
    assert c.width() >= c.fontMetrics().horizontalAdvance(long_text) + 20     # the longest entry, whole
    assert huge.minimumWidth() == COMBO_MAX_PX                               # capped


def test_steps_per_second_hidden_while_paused(main_window, ws, qtbot):
    ws.status_changed.emit({"fps": 30.0, "steps_per_s": 1234.0, "running": True})
    assert main_window.lbl_sps.isVisible() and "1,234" in main_window.lbl_sps.text()
    ws.status_changed.emit({"fps": 0.0, "steps_per_s": 0.0, "running": False})
    assert not main_window.lbl_sps.isVisible()
    main_window.show_workspace("occupancy")
    main_window.show_workspace("cahn_hilliard")                 # replayed when shown again
    assert not main_window.lbl_sps.isVisible()


def test_footer_strip_holds_a_wrapped_caption(qtbot):
    """A caption longer than the image is wide wraps; the strip is tall enough for every line
    (first and last pixel rows of the strip stay white: no text cut at either edge)."""
    import numpy as np
    from PyQt6.QtGui import QColor, QImage

    from explorer.export import qimage_to_array, with_footer
    img = QImage(300, 100, QImage.Format.Format_ARGB32)
    img.fill(QColor("#3366aa"))
    words = " ".join(f"word{i}" for i in range(60))
    out = with_footer(img, f"caption line one\n{words}", scale=2.0)
    a = qimage_to_array(out)[..., :3]
    strip = a[100:]
    dark = (strip < 200).any(axis=(1, 2))
    assert dark.sum() > 6 * 2 * 8                      # many wrapped lines drawn
    assert not dark[0] and not dark[-1]                # white above the first and below the last
    assert np.all(a[:100] == a[0, 0])                  # the image itself untouched
