"""Help ▸ About: what the app is, the papers it reproduces, and every version (app, Python,
Qt/PyQt, VisPy, pyqtgraph, NumPy, SciPy, CuPy, CUDA driver and runtime, GPU) with the settings and
cache paths — the same text as ``main.py --info`` (:func:`kernels.sysinfo.info_text`) — and a
*Copy* button that puts that text on the clipboard (for bug reports)."""
from __future__ import annotations

import html

from PyQt6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QPushButton,
                             QVBoxLayout)

from kernels import sysinfo
from kernels.appdirs import APP_NAME

from .papers import PAPERS


class AboutDialog(QDialog):
    """The About box; :attr:`info` is the copied text."""

    def __init__(self, backend, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        self.info = sysinfo.info_text(backend)
        items = "".join(f"<li><b>{html.escape(tag)}</b> — {html.escape(authors)}: <i>{html.escape(title)}</i>. "
                        f"{html.escape(where)}.</li>" for tag, authors, title, where in PAPERS)
        intro = QLabel(
            f"<h3>{APP_NAME} {html.escape(sysinfo.app_version())}</h3>"
            "<p>Explore GPU algorithms from research papers, live: run them on the GPU (CuPy/CUDA) "
            "or on the CPU (NumPy), change parameters while they run, and export images, plots, "
            "fields and movies. MIT licence.</p>"
            f"<p>Source papers:</p><ul>{items}</ul>", self)
        intro.setWordWrap(True)
        self.text = QPlainTextEdit(self.info, self)
        self.text.setReadOnly(True)
        self.text.setObjectName("aboutVersions")
        self.text.setToolTip("Versions, backend and paths (the same as `main.py --info`)")
        font = self.text.font()
        font.setFamily("monospace")
        self.text.setFont(font)
        self.text.setMinimumSize(640, 300)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.btn_copy = QPushButton("Copy", self)
        self.btn_copy.setToolTip("Copy the versions and paths to the clipboard (for a bug report)")
        buttons.addButton(self.btn_copy, QDialogButtonBox.ButtonRole.ActionRole)
        self.btn_copy.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)

    def copy(self) -> str:
        QApplication.clipboard().setText(self.info)
        return self.info
