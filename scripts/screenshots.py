"""Regenerate the README screenshots from the real app (CPU backend, under Xvfb).

    xvfb-run -a -s "-screen 0 1600x1000x24 +extension GLX" .venv/bin/python scripts/screenshots.py
"""
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "docs", "images")


def main():
    """Each screenshot in its own process (several GL windows in one process upset Mesa)."""
    import subprocess
    for i in range(len(SHOTS)):
        subprocess.run([sys.executable, __file__, str(i)], check=True)


def shoot(index):
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    from explorer.app import create_app
    from explorer.main_window import MainWindow
    from kernels import backend as bk
    from kernels.cahn_hilliard.params import CHParams

    app = create_app()
    be = bk.select("cpu")
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    os.makedirs(OUT, exist_ok=True)

    def wait_steps(ws, n):
        while ws.sim.step_count < n:
            app.processEvents()

    for name, params, steps in SHOTS[index:index + 1]:
        win = MainWindow(be, settings=settings, options={"cahn_hilliard": {"params": params, "steps_per_frame": 50 if steps > 1000 else 20}})
        win.resize(1600, 1000)
        win.show()
        ws = win.workspace("cahn_hilliard")
        if params.dim == 3:
            ws.iso_check.setChecked(True)
        ws.start()
        wait_steps(ws, steps)
        ws.pause() if hasattr(ws, "pause") else ws.toggle_run()
        for _ in range(50):
            app.processEvents()
        path = os.path.join(OUT, name)
        win.grab().save(path)
        print("wrote", path)
        win.close()
    QApplication.processEvents()


def _shots():
    from kernels.cahn_hilliard.params import CHParams
    return [
        ("cahn_hilliard_2d.png", CHParams(size=256, integrator="spectral", dt=0.5, seed=3), 400),
        ("cahn_hilliard_droplets.png", CHParams(size=256, initial="droplets", boundary="fixed", seed=4), 3000),
        ("cahn_hilliard_3d.png", CHParams(dim=3, size=64, integrator="spectral", dt=0.5, seed=5), 300),
    ]


SHOTS = _shots()

if __name__ == "__main__":
    if len(sys.argv) > 1:
        shoot(int(sys.argv[1]))
    else:
        main()
