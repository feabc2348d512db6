"""Each part of the Graphs workspace tested alone (pytest-qt): the generator form with its undo,
the pointer readouts, the distance plots' heatmap, the session reader, the job runner and the
graph files; and the CH field files part."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest
from PyQt6.QtWidgets import QLabel, QProgressBar, QPushButton, QWidget

from explorer import undo
from explorer.graphs.files import GraphFiles
from explorer.graphs.generator_form import GeneratorForm, check_params
from explorer.graphs.graph_plots import HEAT_MAX, GraphPlots, heat_image
from explorer.graphs.graph_sessions import read_session, session_data
from explorer.graphs.job_runner import JobRunner
from explorer.graphs.pointer import describe_distance
from explorer.widgets import MessageBar
from kernels.errors import InvalidParameter
from kernels.graphs.apsp import APSPResult, sentinel
from kernels.graphs.data.graph import Graph, load_graph


@pytest.fixture
def rng():
    return np.random.default_rng()


def _graph(rng, n=None):
    n = n or int(rng.integers(10, 40))
    ring = np.array([(i, (i + 1) % n) for i in range(n)], np.int32)
    extra = rng.integers(0, n, (n, 2)).astype(np.int32)
    extra = extra[extra[:, 0] != extra[:, 1]]
    edges = np.unique(np.sort(np.vstack([ring, extra]), axis=1), axis=0)
    return Graph(n, edges, positions=rng.uniform(0, 1, (n, 2)), name="test graph")


def test_generator_form_values_lecture_and_undo(qtbot, backend, rng):
    form = GeneratorForm(backend, n=300)
    qtbot.addWidget(form)
    form.show()
    want = {"generator": "ws", "n": int(rng.integers(10, 5000)), "k": int(rng.integers(2, 20)),
            "p": round(float(rng.uniform(0, 1)), 4), "alpha": 2.5, "ring": False, "weights": "int",
            "seed": int(rng.integers(0, 99999)), "method": "cpu"}
    form.set_values(**want)
    assert form.values() == want and check_params(form.values()) == want
    form.set_values(generator="ba")
    assert form.form.labelForField(form.sp_k).text() == "m" and not form.sp_alpha.isEnabled()
    stack = undo.attach(form)
    k0 = form.sp_k.value()
    form.sp_k.setValue(k0 + 1)
    form.sp_k.setValue(k0 + 2)
    form.cb_weights.setCurrentText("float")
    assert stack.count() == 2
    stack.undo()
    stack.undo()
    assert form.sp_k.value() == k0 and form.weights() == "int"
    form.set_lecture(True)
    assert not form.cb_method.isVisible() and form.sp_p.isVisible()
    form.set_lecture(False)
    assert form.cb_method.isVisible()
    with pytest.raises(InvalidParameter):
        check_params({"generator": "nope"})


def test_pointer_describes_distances_of_both_kinds(rng):
    n = int(rng.integers(5, 30))
    d = rng.integers(0, 9, (n, n)).astype(np.uint8)
    i, j = (int(v) for v in rng.integers(0, n, 2))
    d[i, j] = sentinel(d.dtype)
    res = SimpleNamespace(dist=d)
    assert describe_distance(res, j + 0.5, i + 0.5) == f"d({i} → {j}) = unreachable"
    k = (j + 1) % n
    d[i, k] = hops = int(rng.integers(0, 200))
    assert describe_distance(res, k + 0.2, i + 0.7) == f"d({i} → {k}) = {hops} hops"
    f = rng.uniform(0, 5, (n, n))
    assert describe_distance(SimpleNamespace(dist=f), j, i) == f"d({i} → {j}) = {f[i, j]:.4g}"
    assert describe_distance(res, n + 1, 0) == "" and describe_distance(None, 0, 0) == ""


def test_heatmap_blocks_above_the_limit_and_plots_show_it(qtbot, rng):
    n = HEAT_MAX * 2 + int(rng.integers(1, 50))
    d = rng.integers(0, 50, (n, n)).astype(np.uint8)
    d[rng.integers(0, n, 40), rng.integers(0, n, 40)] = sentinel(d.dtype)
    f, b = heat_image(d, lambda: None)
    assert b == 3 and f.shape == (n // 3, n // 3)
    r, c = (int(v) for v in rng.integers(0, n // 3, 2))
    block = d[3 * r:3 * r + 3, 3 * c:3 * c + 3].astype(float)
    block[block == 255] = np.nan
    assert f[r, c] == pytest.approx(np.nanmean(block)) if np.isfinite(block).any() else np.isnan(f[r, c])
    plots = GraphPlots(lambda: None, lambda text: None)
    for w, _t in plots.tabs():
        qtbot.addWidget(w)
    g = _graph(rng)
    plots.show_graph(g)
    assert not plots.heat_bar.isVisible()
    small = rng.integers(0, 9, (g.n, g.n)).astype(np.uint8)
    plots.show_apsp(APSPResult(dist=small, method="cpu", seconds=0.0, kernel_seconds=0.0))
    assert plots.heat_bar.levels() == (0.0, float(small.max()))


def test_session_plan_checks_the_graph(rng):
    g = _graph(rng)
    res = APSPResult(dist=rng.integers(0, 9, (g.n, g.n)).astype(np.uint8), method="cpu", seconds=0.5,
                     kernel_seconds=0.0)
    data = session_data(g, g.positions, res)
    state = {"params": {"generator": "ring", "method": "cpu", "n": g.n}, "selected": [1, 2], "tab": 2,
             "has_graph": True, "graph_name": g.name, "apsp_method": "cpu", "apsp_seconds": 0.5, "reproduce": {"x": 1}}
    plan = read_session(state, data, ("reproduce", "cc_timing"))
    assert np.array_equal(plan.graph.edges, g.edges) and plan.graph.n == g.n and plan.selected == [1, 2]
    assert np.array_equal(plan.dist, res.dist) and plan.sweeps == {"reproduce": {"x": 1}, "cc_timing": None}
    bad = dict(data, edges=np.array([[0, g.n]], np.int32))
    with pytest.raises(InvalidParameter):
        read_session(state, bad)
    with pytest.raises(InvalidParameter):
        read_session(dict(state, params={"generator": "nope"}), data)


def test_job_runner_runs_one_job_and_reports(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    bar, info, prog = MessageBar(host), QLabel(host), QProgressBar(host)
    prog.setRange(0, 1000)
    cancel, gen = QPushButton(host), QPushButton(host)
    runner = JobRunner(prog, cancel, (gen,), bar, info)
    host.show()
    gate = threading.Event()
    got = []
    assert runner.start("Work", lambda progress, cancelled: (gate.wait(5), 42)[1], got.append)
    assert cancel.isEnabled() and not gen.isEnabled() and info.text() == "Work …"
    assert not runner.start("Again", lambda p, c: 0, got.append) and bar.level == "warning"
    with qtbot.waitSignal(runner.ended, timeout=10000) as sig:
        gate.set()
    assert got == [42] and sig.args == ["Work", True] and gen.isEnabled() and prog.value() == 1000

    def boom(progress, cancelled):
        raise ValueError("bad input")
    with qtbot.waitSignal(runner.ended, timeout=10000) as sig:
        runner.start("Fail", boom, got.append)
    assert sig.args == ["Fail", False] and bar.level == "error" and got == [42]


def test_graph_files_write_what_they_read(qtbot, tmp_path, rng):
    host = QWidget()
    qtbot.addWidget(host)
    bar = MessageBar(host)
    g = _graph(rng)
    res = APSPResult(dist=rng.integers(0, 9, (g.n, g.n)).astype(np.uint8), method="cpu", seconds=0.0,
                     kernel_seconds=0.0)
    model = SimpleNamespace(graph=g, result=res)
    files = GraphFiles(host, None, None, None, bar, lambda: model)
    out = files.save_graph(tmp_path / "g.edgelist")
    back = load_graph(out)
    assert back.n == g.n and np.array_equal(np.unique(np.sort(back.edges, 1), axis=0), g.edges)
    assert np.array_equal(np.load(files.export_distances(tmp_path / "d.npy")), res.dist)
    model.graph = model.result = None
    assert files.save_graph(tmp_path / "x.edgelist") is None and not (tmp_path / "x.edgelist").exists()


def test_ch_field_files_round_trip(qtbot, backend, tmp_path, rng):
    from explorer.cahn_hilliard.canvas import FieldCanvas
    from explorer.cahn_hilliard.exports import FieldExports
    from explorer.cahn_hilliard.plots import DiagnosticsPlots
    from explorer.colorbar import ColorBar
    from kernels.cahn_hilliard.params import CHParams
    host = QWidget()
    qtbot.addWidget(host)
    canvas = FieldCanvas(backend)
    n = int(rng.integers(8, 30))
    phi = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    canvas.update_field(phi)
    p = CHParams(size=n, m=float(rng.uniform(0.5, 2)))
    files = FieldExports(host, canvas, ColorBar("φ"), DiagnosticsPlots(), MessageBar(host),
                         snapshot=lambda: (phi, p, 1.5, 150))
    out = files.save_field(tmp_path / "f")
    back, params = files.load(out)
    assert out.suffix == ".npz" and np.array_equal(back, phi) and params == p
    ny, nx = n, n + int(rng.integers(1, 20))                             # a rectangle (PFHub 1c, size_y)
    canvas.update_field(rng.uniform(-1, 1, (ny, nx)).astype(np.float32))
    assert canvas.field_rgba(2).shape == (2 * ny, 2 * nx, 4)
    x0, y0, x1, y1 = canvas.data_rect()
    assert (x1 - x0) / (y1 - y0) == pytest.approx(nx / ny, rel=1e-3)
    names = [f.name for f in files.figure_targets()]
    assert names[:3] == ["Field view", "Field view with colour bar", "Diagnostic plots"]


def test_graph_plots_start_at_zero_before_any_graph(qtbot):
    """Issue 36: the plots of an empty Graphs workspace showed pyqtgraph's −0.5 … 0.5 (as −500 … 500
    ×0.001); they start at 0 … 1 until a graph is shown, then fit the data."""
    from explorer.graphs.graph_plots import GraphPlots
    from kernels.graphs.data import generators as G
    plots = GraphPlots(lambda: None, lambda text: None)
    for w, _name in plots.tabs():
        qtbot.addWidget(w)
        w.resize(400, 300)
        w.show()
        (x0, x1), (y0, y1) = w.getPlotItem().viewRange()
        assert x0 >= 0 and y0 >= 0 and x1 <= 1.01 and y1 <= 1.01, (_name, x0, x1, y0, y1)
    g = G.barabasi_albert(200, 3, int(np.random.default_rng().integers(1 << 30)))
    plots.show_graph(g)
    top = int(g.degrees().max())                            # fitted to the degrees after a graph
    qtbot.waitUntil(lambda: plots.deg_plot.getPlotItem().viewRange()[0][1] >= top, timeout=3000)
