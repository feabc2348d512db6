"""The main window's status-bar fields, a composed part (:class:`StatusFields`): the value under
the mouse, the progress of a slow step, the workspace's info line, the display path, fps, steps/s,
simulation time and the backend — shown as the current workspace reports them
(``status_changed(dict)``, keys in :mod:`explorer.workspaces`).  ``{"message": text}`` is a passing
notice: emitted as :attr:`StatusFields.message` (the window shows it in the status bar and logs it)."""
from __future__ import annotations

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QLabel, QProgressBar, QStatusBar

from .widgets import ElidedLabel


def backend_label(backend) -> str:
    """The status bar's short backend name; a fallback's reason is in its tooltip and the log."""
    if backend.is_gpu:
        return f"GPU: {backend.device_name}"
    return "CPU (NumPy)" + (" ⚠" if backend.notice else "")


class StatusFields(QObject):
    """The permanent fields of ``sb`` (a QStatusBar) for the app running on ``backend``."""

    message = pyqtSignal(str)

    def __init__(self, sb: QStatusBar, backend):
        super().__init__(sb)
        self.lbl_backend = QLabel(backend_label(backend))
        self.lbl_backend.setToolTip(backend.describe() + ("\n(also in View ▸ Message log)"
                                                          if backend.notice else ""))
        if not backend.is_gpu and backend.notice:
            self.lbl_backend.setStyleSheet("color: #9a5b00;")
        self.lbl_fps = QLabel("— fps")
        self.lbl_sps = QLabel("— steps/s")
        self.lbl_t = QLabel("t = 0")
        self.lbl_cursor = ElidedLabel("", "The value under the mouse")
        self.lbl_cursor.setMaximumWidth(520)
        self.lbl_cursor.hide()
        sb.addPermanentWidget(self.lbl_cursor)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setToolTip("Progress of a slow step of the current workspace")
        self.progress_bar.hide()
        sb.addPermanentWidget(self.progress_bar)
        self.lbl_info = ElidedLabel("", "About the current workspace's data")
        self.lbl_info.setMaximumWidth(560)
        sb.addPermanentWidget(self.lbl_info)
        self.lbl_display = QLabel("")
        self.lbl_display.setToolTip("How frames reach the screen: CUDA–GL interop writes the GPU field "
                                    "straight into an OpenGL buffer; host = copied through main memory")
        sb.addPermanentWidget(self.lbl_display)
        for w, tip, width in ((self.lbl_fps, "Display frames drawn per second", 70),
                              (self.lbl_sps, "Simulation steps per second (compute only)", 120),
                              (self.lbl_t, "Simulation time and step count", 200)):
            w.setToolTip(tip)
            w.setMinimumWidth(width)
            sb.addPermanentWidget(w)
        sb.addPermanentWidget(self.lbl_backend)

    def apply(self, info: dict | None, reset: bool = False) -> None:
        """Show the fields a workspace reports; with ``reset`` hide the others."""
        fields = {"fps": self.lbl_fps, "steps_per_s": self.lbl_sps, "t": self.lbl_t,
                  "display": self.lbl_display, "info": self.lbl_info}
        info = info or {}
        for k, w in fields.items():
            if k in info and not (k == "steps_per_s" and info.get("running") is False):
                w.setVisible(True)
            elif reset:
                w.setVisible(False)
        if reset:
            self.lbl_cursor.hide()
        if info.get("message"):                # a passing notice (file written …): status bar + log
            self.message.emit(str(info["message"]))
        if "cursor" in info:
            self.lbl_cursor.setText(info["cursor"])
            self.lbl_cursor.setVisible(bool(info["cursor"]))
        if "progress" in info or reset:
            prog = info.get("progress")
            self.progress_bar.setVisible(prog is not None)
            if prog is not None:
                self.progress_bar.setValue(int(1000 * max(0.0, min(1.0, prog[0]))))
                self.progress_bar.setFormat(prog[1])
        if "info" in info:
            self.lbl_info.setText(str(info["info"]))
        if "fps" in info:
            self.lbl_fps.setText(f"{info['fps']:.0f} fps" if info["fps"] > 0 else "— fps")
        if "running" in info:                  # steps/s only while something runs
            self.lbl_sps.setVisible(bool(info["running"]))
        if "steps_per_s" in info:
            v = info["steps_per_s"]
            self.lbl_sps.setText("— steps/s" if v <= 0 else f"{v:,.0f} steps/s" if v >= 10 else f"{v:.2g} steps/s")
        if "display" in info:
            self.lbl_display.setText(f"display: {info['display']}")
        if "t" in info:
            self.lbl_t.setText(f"t = {info['t']:.4g}   step {info.get('steps', 0):,}")
