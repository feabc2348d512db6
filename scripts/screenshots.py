"""Regenerate the README screenshots from the real app (CPU backend, under Xvfb): every workspace
and lecture mode, into docs/images.

    xvfb-run -a -s "-screen 0 1600x1000x24 +extension GLX" .venv/bin/python scripts/screenshots.py
    … scripts/screenshots.py graphs_small_world.png      # one shot by name

Each shot runs in its own process (several GL windows in one process upset Mesa).
"""
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "docs", "images")


def main(names=None):
    import subprocess
    for name in names or [s[0] for s in SHOTS]:
        subprocess.run([sys.executable, __file__, "--one", name], check=True)


def _pump(app, seconds=0.0, until=None, timeout=120.0):
    t0 = time.time()
    while True:
        app.processEvents()
        if until is not None and until():
            break
        if until is None and time.time() - t0 >= seconds:
            break
        if time.time() - t0 > timeout:
            raise TimeoutError("screenshot setup did not finish")
        time.sleep(0.005)


def shoot(name):
    from PyQt6.QtCore import QSettings

    from explorer import workspaces as registry
    from explorer.app import create_app
    from explorer.main_window import MainWindow
    from kernels import backend as bk

    app = create_app()
    be = bk.select("cpu")
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    os.makedirs(OUT, exist_ok=True)
    _name, key, options, setup = next(s for s in SHOTS if s[0] == name)
    settings.setValue("main/workspace", key)
    win = MainWindow(be, settings=settings, options=options)
    win.resize(1600, 1000)
    win.show()
    _pump(app, 0.3)
    ws = win.workspace(key)
    setup(app, win, ws)
    _pump(app, 0.5)
    from explorer.export import save_image
    path = save_image(win.grab().toImage(), os.path.join(OUT, name), suffixes=(".png",))
    print("wrote", path)
    if win.lecture_mode():
        win.set_lecture_mode(False)
    win.ask_before_quit = False          # a setup may leave a run going
    win.close()
    _pump(app, 0.1)
    sys.stdout.flush()
    os._exit(0)        # skip interpreter teardown of GL contexts and worker threads (can crash Mesa)


# ------------------------------------------------------------------------------ setups
def _ch_run(steps, iso=False):
    def setup(app, win, ws):
        if iso:
            ws.view_bar.iso_check.setChecked(True)
        ws.start()
        _pump(app, until=lambda: ws.sim.step_count >= steps)
        ws.pause()
        _pump(app, 0.3)
    return setup


def _ch_preset(preset, steps, lecture=False):
    def setup(app, win, ws):
        if lecture:
            win.set_lecture_mode(True)
            _pump(app, 0.5)
        win.apply_preset(preset)
        _pump(app, until=lambda: ws.sim.step_count >= steps)
        ws.pause()
        _pump(app, 0.5)
    return setup


def _graph_preset(preset, clicks=(), tab=None, lecture=False):
    def setup(app, win, ws):
        if lecture:
            win.set_lecture_mode(True)
            _pump(app, 0.5)
        win.apply_preset(preset)
        _pump(app, until=lambda: ws.job is None and ws._then is None and ws.result is not None)
        for c in clicks:
            ws.click_node(c)
        if tab is not None:
            ws.tabs.setCurrentIndex(tab)
        _pump(app, 0.5)
    return setup


def _graph_million(n=1_000_000, k=6):
    """Graphs workspace: a spatial graph of ``n`` vertices (about n·k/2 edges, the generator's
    positions), every vertex and edge drawn, coloured by the hop distance from a clicked vertex near
    the centre, with its colour bar (issue 32); the Plots dock closed to give the view the width."""
    def setup(app, win, ws):
        import numpy as np
        ws.set_plots_visible(False)
        ws.set_parameters(generator="spatial", n=n, k=k, seed=7, layout="auto", color_by="distance")
        ws.generate()
        _pump(app, until=lambda: ws.job is None, timeout=600)
        ws.click_node(int(np.argmin(np.hypot(*(ws.pos - ws.pos.mean(0)).T))))
        _pump(app, 2.0)
    return setup


def _cc_timings(ws_sizes, ba_sizes):
    """Graphs workspace, Clustering timings tab (paper 001) after a small CPU sweep with networkx."""
    def setup(app, win, ws):
        win.apply_preset("scale-free hubs")
        _pump(app, until=lambda: ws.job is None and ws._then is None and ws.result is not None)
        panel = ws.cc_timing
        ws.show_tab(panel)
        panel.ed_sizes["ws"].setText(ws_sizes)
        panel.ed_sizes["ba"].setText(ba_sizes)
        panel.ck_methods["networkx"].setChecked(True)
        panel.sp_repeats.setValue(2)
        panel.run()
        _pump(app, until=lambda: panel.job is None, timeout=300)
    return setup


def _occ_preset(preset, lecture=False):
    def setup(app, win, ws):
        if lecture:
            win.set_lecture_mode(True)
            _pump(app, 0.5)
        win.apply_preset(preset)
        _pump(app, 0.3)
    return setup


def _flint_preset(preset, tab=None):
    def setup(app, win, ws):
        win.apply_preset(preset)            # Flint presets start the run themselves
        _pump(app, 0.3)
        _pump(app, until=lambda: not ws.is_running(), timeout=300)
        if tab is not None:
            ws.tabs.setCurrentIndex(tab)
        _pump(app, 0.5)
    return setup


def _flint_compiler(model):
    def setup(app, win, ws):
        idx = ws.cb_model.findText(model)
        ws.cb_model.setCurrentIndex(idx)       # a shipped model: select it in the browser
        ws.tabs.setCurrentIndex(2)
        _pump(app, 4.0)                     # the Compiler panel compiles off the GUI thread
    return setup


def _shots():
    from kernels.cahn_hilliard.params import CHParams

    def ch(params, spf):
        return {"cahn_hilliard": {"params": params, "steps_per_frame": spf}}

    return [
        ("cahn_hilliard_2d.png", "cahn_hilliard", ch(CHParams(size=256, integrator="spectral", dt=0.5, seed=3), 20),
         _ch_run(400)),
        ("cahn_hilliard_droplets.png", "cahn_hilliard",
         ch(CHParams(size=256, initial="droplets", boundary="fixed", seed=4), 50), _ch_run(3000)),
        ("cahn_hilliard_3d.png", "cahn_hilliard", ch(CHParams(dim=3, size=64, integrator="spectral", dt=0.5, seed=5), 20),
         _ch_run(300, iso=True)),
        ("graphs_scale_free.png", "graphs", {}, _graph_preset("scale-free hubs", clicks=(0,), tab=1)),
        ("graphs_small_world.png", "graphs", {}, _graph_preset("small world: p = 0.05", clicks=(0, 150), tab=2)),
        ("graphs_clustering_timings.png", "graphs", {}, _cc_timings("1000, 2000, 4000, 8000", "1000, 2000, 4000")),
        ("graphs_million.png", "graphs", {}, _graph_million()),
        ("occupancy.png", "occupancy", {}, _occ_preset("register pressure")),
        ("flint_single_beat.png", "flint", {}, _flint_preset("single LR-1991 beat")),
        ("flint_ring.png", "flint", {}, _flint_preset("LR ring: colliding wavefronts", tab=1)),
        ("flint_reentry.png", "flint", {}, _flint_preset("LR ring: sustained re-entry", tab=1)),
        ("flint_compiler.png", "flint", {}, _flint_compiler("wang_buzsaki_1996.flint")),
        ("flint_rybak.png", "flint", {}, _flint_preset("Rybak CPG: flexor–extensor rhythm")),
        ("lecture_cahn_hilliard.png", "cahn_hilliard", ch(CHParams(size=64), 10),
         _ch_preset("spinodal 2D", 1500, lecture=True)),
        ("lecture_graphs.png", "graphs", {}, _graph_preset("small world: p = 0.05", clicks=(0, 150), lecture=True)),
        ("lecture_occupancy.png", "occupancy", {}, _occ_preset("paper 003 T10 case", lecture=True)),
    ]


SHOTS = _shots()

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        shoot(sys.argv[2])
    else:
        main(sys.argv[1:] or None)
