"""Paper 001 on several GPUs, tested on virtual GPUs (issue 27): the shared device helpers, the
clustering counts with arcs split over GPUs, APSP with the sources split (rows gathered, streamed
to a memory-mapped file, or kept per device), and the ``--gpus`` options of the commands."""
import json
import os
import threading

import numpy as np
import pytest

from cli import main as cli_main
from kernels import backend as bk
from kernels import devices as dv
from kernels.errors import InvalidParameter
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import apsp
from kernels.graphs.apsp.multi import apsp_multi, rows_on_devices
from kernels.graphs.algorithms.clustering import clustering_arcs_reference, cpu_counts
from kernels.graphs.algorithms.clustering_multi import MultiGPUClustering
from kernels.graphs.data.graph import CSR


@pytest.fixture(scope="module")
def cpu():
    return bk.select("cpu")


def fresh() -> int:
    return int.from_bytes(os.urandom(4), "little")


# ------------------------------------------------------------------ kernels.devices
def test_run_on_devices_one_thread_each_results_in_rank_order(cpu):
    seen = []
    out = dv.run_on_devices(None, [0, 1, 2], lambda r, d: (seen.append(threading.current_thread().name), r * 10)[1])
    assert out == [0, 10, 20] and len(set(seen)) == 3
    with pytest.raises(ZeroDivisionError):
        dv.run_on_devices(None, [0, 1], lambda r, d: 1 // r)


def test_work_cursor_hands_out_every_item_once():
    cur = dv.WorkCursor(1003, 10)
    got = dv.run_on_devices(None, [0, 1, 2, 3], lambda r, d: list(iter(cur.take, None)))
    blocks = sorted(b for g in got for b in g)
    assert blocks[0] == (0, 10) and blocks[-1] == (1000, 1003)
    assert sum(b - a for a, b in blocks) == 1003 and all(x[1] == y[0] for x, y in zip(blocks, blocks[1:]))
    with pytest.raises(InvalidParameter):
        dv.WorkCursor(5, 0)


class AsyncDevice:
    """A fake GPU: launch() returns at once, one worker thread runs the blocks in order (2 ms each)."""

    def __init__(self):
        import queue
        self.q, self.done = queue.Queue(), []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        import time
        while True:
            a, b, ev = self.q.get()
            time.sleep(0.002)
            self.done.append((a, b))
            ev.set()

    def launch(self, a, b):
        ev = threading.Event()
        ev.synchronize = ev.wait
        self.q.put((a, b, ev))
        return ev


def test_drain_hands_blocks_to_devices_as_they_finish():
    """Launches that return at once must not let the first device take every block (the bug that
    made the first 2-GPU clustering run no faster than one GPU)."""
    devs = [AsyncDevice(), AsyncDevice()]
    cur = dv.WorkCursor(60, 1)
    taken = dv.run_on_devices(None, [0, 1], lambda r, d: dv.drain(cur, devs[r].launch, in_flight=2))
    assert sum(taken) == 60 and min(taken) >= 20, taken
    for d in devs:                                  # what each took, it ran (the caller waits at the end)
        while len(d.done) < taken[devs.index(d)]:
            threading.Event().wait(0.01)
    assert sorted(x for d in devs for x in d.done) == [(i, i + 1) for i in range(60)]
    ran = []
    assert dv.drain(dv.WorkCursor(5, 2), lambda a, b: ran.append((a, b))) == 3 and ran == [(0, 2), (2, 4), (4, 5)]


def test_cahn_hilliard_keeps_its_device_helpers(cpu, monkeypatch):
    """The CH slabs use kernels.devices through multigpu's names (lifted, not copied)."""
    from kernels.cahn_hilliard import multigpu
    from kernels.cahn_hilliard.params import CHParams
    assert multigpu.split_rows is dv.split_rows and multigpu.offered_gpus is dv.offered_gpus
    monkeypatch.setenv(multigpu.VIRTUAL_ENV, "3")
    assert multigpu.offered_gpus(cpu) == 3
    devs, notes = multigpu.resolve_devices(2, cpu)
    assert devs == [0, 1] and "2 slabs run as virtual GPUs" in notes[0] and "halo exchange" in notes[0]
    st = multigpu.MultiGPUStepper(CHParams(size=16), cpu, [0, 1], exchange="host")
    assert "2 virtual GPUs" in st.describe() and "staged through host memory" in st.describe()


def test_resolve_devices_virtual_and_limits(cpu):
    devs, notes = dv.resolve_devices(3, cpu, "widgets")
    assert devs == [0, 1, 2] and "3 widgets run as virtual GPUs" in notes[0]
    for bad in (0, 65):
        with pytest.raises(InvalidParameter):
            dv.resolve_devices(bad, cpu)


# ------------------------------------------------------------------ clustering
@pytest.mark.parametrize("family", ["ws", "ba"])
@pytest.mark.parametrize("variant", ["arc", "sorted"])
def test_multi_gpu_counts_equal_one_core_counts(cpu, family, variant):
    s = fresh()
    g = G.watts_strogatz(1500, 50, 0.1, s) if family == "ws" else G.barabasi_albert(1500, 25, s)
    ref = cpu_counts(g.csr())
    for gpus in (1, 2, 3):
        m = MultiGPUClustering(g, cpu, variant, gpus, block=997)       # odd blocks: cut arcs anywhere
        assert m.counts() == ref, (gpus, variant)
        assert sum(m.blocks_taken) == -(-g.csr().arcs // 997)


def test_virtual_gpus_run_the_cuda_kernel_on_directed_arcs(cpu, monkeypatch):
    """Arbitrary blocks of a directed graph with 2-cycles, counted on virtual GPUs by the CUDA source on
    the host device (no NumPy stand-in): the per-block sums add up to Alg. 12."""
    from kernels.graphs import cuda as graph_cuda
    rng = np.random.default_rng(fresh())
    n = 40
    keys = np.unique(rng.integers(0, n * n, 300))
    src, dst = keys // n, keys % n
    keep = src != dst
    src, dst = src[keep], dst[keep]
    csr = CSR.from_arcs(n, src, dst, None, directed=True)
    t_ref, p_ref, _ = clustering_arcs_reference(n, csr.sources(), csr.indices)
    asked = []
    real = graph_cuda.function
    monkeypatch.setattr(graph_cuda, "function", lambda dev, f, k: asked.append((dev.kind, f, k)) or real(dev, f, k))
    block = int(rng.integers(3, 17))
    for variant in ("arc", "sorted"):
        m = MultiGPUClustering(csr, cpu, variant, 2, block=block)
        assert m.counts() == (t_ref, p_ref)
        assert sum(m.blocks_taken) == -(-csr.arcs // block)
    assert asked and all(a[1:] == ("clustering.cu", "cc_per_arc") and a[0] != "cuda" for a in asked)


def test_cc_sweep_multi_rows(cpu):
    from kernels.graphs.experiments import cc_timing as cc
    rows = list(cc.run_cc_sweep({"ws": [300, 500]}, ["cpu", "multi-arc", "multi-sorted"], 1, cpu, gpus=3))
    assert all(r.agrees for r in rows) and {r.gpus for r in rows if r.method != "cpu"} == {3}
    assert cc.PAPER_NAME["multi-arc"] == "2 GPUs kernel 1" and ("ws", "multi-sorted") in cc.fit_slopes(rows)
    with pytest.raises(InvalidParameter, match="gpus"):
        list(cc.run_cc_sweep({"ws": [300, 500]}, ["multi-arc"], 1, cpu, gpus=0))


def test_graph_clustering_cli_gpus(capsys):
    code = cli_main(["--backend", "cpu", "graph-clustering", "--families", "ba", "--ba-sizes", "300,400",
                     "--gpus", "2", "--repeats", "1", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["gpus"] == 2 and out["all_methods_agree"]
    assert out["methods"] == ["cpu", "cpu-threads", "multi-arc", "multi-sorted"]
    assert "ba/multi-arc" in out["slopes"] and out["paper_slopes"]["ba"]["multi-sorted"] == 1.40
    assert cli_main(["--backend", "cpu", "graph-clustering", "--gpus", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "--gpus must be ≥ 1" in err and "\n" not in err


# ------------------------------------------------------------------ APSP
def test_multi_bfs_rows_equal_one_device(cpu, tmp_path):
    g = G.barabasi_albert(300, 3, fresh())            # the virtual GPUs run the CUDA source on the CPU
    ref = apsp(g, "cpu", cpu).dist
    for gpus in (1, 2, 3):
        r = apsp(g, "multi-bfs", cpu, gpus=gpus, batch=37)
        assert np.array_equal(r.dist, ref) and r.dist.dtype == ref.dtype
        assert sum(r.timings["batches_per_device"]) == -(-300 // 37)
    path = tmp_path / "rows.npy"
    r = apsp(g, "multi-bfs", cpu, gpus=2, out=str(path))
    assert isinstance(r.dist, np.memmap) and np.array_equal(np.load(path), ref)
    assert sorted(os.listdir(tmp_path)) == ["rows.npy"]              # the temporary file was renamed
    src = np.array([5, 290, 7])
    assert np.array_equal(apsp(g, "multi-bfs", cpu, gpus=2, sources=src).dist, ref[src])


def test_multi_sssp_weighted_rows_equal_dijkstra(cpu):
    g = G.with_weights(G.barabasi_albert(150, 3, fresh()), "int", seed=fresh())
    ref = apsp(g, "cpu", cpu).dist
    r = apsp(g, "multi-sssp", cpu, gpus=2)
    assert r.timings["notes"] and "CUDA kernels run on the CPU" in r.timings["notes"][0]
    assert r.weighted and r.dist.dtype == np.float32 and np.allclose(r.dist, ref)


def test_rows_kept_per_device(cpu):
    g = G.watts_strogatz(500, 6, 0.2, fresh())
    ref = apsp(g, "cpu", cpu).dist
    dr = rows_on_devices(g.csr(), cpu, "bfs", 3, batch=40)
    assert dr.shape == (500, 500) and dr.ranges == [(0, 167), (167, 334), (334, 500)]
    assert np.array_equal(dr.gather(), ref) and np.array_equal(dr.row(333), ref[333])
    assert sum(dr.nbytes_per_device()) == ref.nbytes
    with pytest.raises(IndexError):
        dr.row(500)


def test_multi_apsp_bad_options(cpu, tmp_path):
    g = G.barabasi_albert(100, 2, 1)
    with pytest.raises(InvalidParameter, match="gpus"):
        apsp(g, "multi-bfs", cpu, gpus=0)
    with pytest.raises(InvalidParameter, match="use .npy"):
        apsp(g, "multi-bfs", cpu, out=str(tmp_path / "x.csv"))
    with pytest.raises(InvalidParameter, match="needs out"):
        apsp_multi(g.csr(), cpu, rows="file")
    with pytest.raises(InvalidParameter, match="sssp engine"):
        apsp_multi(G.with_weights(g, "int", seed=1).csr(), cpu, "bfs")
    assert not list(tmp_path.iterdir())


def test_graph_cli_rows_file(tmp_path, capsys):
    path = tmp_path / "d.npy"
    code = cli_main(["--backend", "cpu", "graph", "--n", "300", "--apsp", "multi-bfs", "--gpus", "2",
                     "--rows-file", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["apsp_params"]["gpus"] == 2 and out["apsp_params"]["out"] == str(path)
    assert np.load(path).shape == (300, 300)
    assert cli_main(["--backend", "cpu", "graph", "--n", "300", "--apsp", "cpu", "--gpus", "2"]) == 2
    assert "--gpus" in capsys.readouterr().err
