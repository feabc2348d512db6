"""Every file writer of the project goes through kernels.fileio: a write that fails part-way (the
writer's own call raising after it wrote part of the data, or the disk failing at the commit)
leaves the earlier file byte-for-byte and no temporary file (issue 19)."""
from __future__ import annotations

import csv
import os

import numpy as np
import pytest

from kernels.cahn_hilliard.params import CHParams
from kernels.graphs.data.graph import Graph

FIELD = np.random.default_rng(3).uniform(-1, 1, (16, 16)).astype(np.float32)
GRAPH = Graph(5, np.array([[0, 1], [1, 2], [3, 4]], dtype=np.int32))
WGRAPH = Graph(5, np.array([[0, 1], [1, 2], [3, 4]], dtype=np.int32), np.array([1.5, 2.0, 3.0], np.float32))


def _rows_reproduce():
    from kernels.graphs.experiments import reproduce as rp
    return list(rp.run_sweep(["ba"], [60, 120], 1, method="cpu-sampled", seed0=1, sources=4, clustering=False))


def _rows_cc():
    from kernels.graphs.experiments import cc_timing as cc
    return list(cc.run_cc_sweep({"ws": [100, 200]}, ["cpu"], 1, seed=1))


def _suite_results(tmp_path):
    from kernels.flint.sbml import conformance as suite
    src = tmp_path / "like.csv"
    src.write_text("time,S1\n0,1\n1,2\n")
    return suite.read_results(src)


def _writers(tmp_path):
    """name → (file name, write(path))."""
    from cli.common import write_json_file
    from cli.graph import _save_npy
    from kernels.cahn_hilliard.io import save_field
    from kernels.field_png import save_field_png
    from kernels.flint.sbml import conformance as suite
    from kernels.flint.io import write_csv, write_npz
    from kernels.graphs.experiments import cc_timing as cc
    from kernels.graphs.experiments import reproduce as rp
    from kernels.graphs.data.graph import save_graph
    times, samples = np.arange(4.0), np.ones((4, 2, 1))
    return {
        "ch save_field": ("f.npz", lambda p: save_field(p, FIELD, CHParams(size=16))),
        "field png": ("f.png", lambda p: save_field_png(p, FIELD, "magma")),
        "graph edge list": ("g.edgelist", lambda p: save_graph(GRAPH, p)),
        "weighted edge list": ("w.edges", lambda p: save_graph(WGRAPH, p)),
        "graphml": ("g.graphml", lambda p: save_graph(WGRAPH, p)),
        "distances npy": ("d.npy", lambda p: _save_npy(p, np.eye(5, dtype=np.uint8))),
        "flint csv": ("t.csv", lambda p: write_csv(p, times, samples, ["V", "m"])),
        "flint npz": ("t.npz", lambda p: write_npz(p, times, samples, ["V", "m"])),
        "suite json": ("r.json", lambda p: suite.write_json(p, {"cases": [1, 2]})),
        "suite results": ("00001.csv", lambda p: suite.write_results(p, _suite_results(tmp_path), np.arange(2.0),
                                                                     {"S1": np.array([1.0, 2.0])})),
        "reproduce csv": ("rows.csv", lambda p: rp.FIG14.to_csv(_rows_reproduce(), p)),
        "cc timing csv": ("cc.csv", lambda p: cc.TIMINGS.to_csv(_rows_cc(), p)),
        "cli json": ("o.json", lambda p: write_json_file(p, {"x": float("nan")})),
    }


NAMES = ["ch save_field", "field png", "graph edge list", "weighted edge list", "graphml", "distances npy",
         "flint csv", "flint npz", "suite json", "suite results", "reproduce csv", "cc timing csv", "cli json"]


def _partial_then_fail(monkeypatch):
    """Make the writers' own calls write part of their data, then raise."""
    import networkx as nx

    def fail_savez(file, *a, **k):
        file.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full (injected)")

    def fail_graphml(G, path, **k):
        with open(path, "w") as fh:
            fh.write("<graphml><graph>")
        raise OSError("disk full (injected)")

    real_writer = csv.writer

    class HalfWriter:
        def __init__(self, fh, *a, **k):
            self.w, self.n, self.fh = real_writer(fh, *a, **k), 0, fh

        def writerow(self, row):
            self.n += 1
            if self.n > 1:
                self.fh.write("1,2,3")
                raise OSError("disk full (injected)")
            return self.w.writerow(row)

    def fail_savetxt(fh, *a, **k):
        fh.write("0 1\n1 ")
        raise OSError("disk full (injected)")

    def fail_save(fh, arr, *a, **k):
        fh.write(b"\x93NUMPY half")
        raise OSError("disk full (injected)")

    monkeypatch.setattr(np, "savez_compressed", fail_savez)
    monkeypatch.setattr(np, "savetxt", fail_savetxt)
    monkeypatch.setattr(np, "save", fail_save)
    monkeypatch.setattr(nx, "write_graphml", fail_graphml)
    monkeypatch.setattr(csv, "writer", HalfWriter)


#: writers whose library call (np.savez_compressed / savetxt / save, networkx.write_graphml, csv.writer)
#: is made to write part of the data and raise; the others encode first and write once
PARTWAY = ["ch save_field", "graph edge list", "graphml", "distances npy", "flint csv", "flint npz",
           "reproduce csv", "cc timing csv"]


@pytest.mark.parametrize("name, how", [(n, "commit fails") for n in NAMES] + [(n, "writer fails part-way")
                                                                                for n in PARTWAY])
def test_failed_write_keeps_the_earlier_file(tmp_path, monkeypatch, name, how):
    out = tmp_path / "out"
    out.mkdir()
    fname, write = _writers(tmp_path)[name]
    path = out / fname
    old = b"an earlier, complete file\n"
    path.write_bytes(old)
    write(path)                                             # the writer works …
    assert path.read_bytes() != old and sorted(os.listdir(out)) == [fname]
    path.write_bytes(old)
    with monkeypatch.context() as m:
        if how == "commit fails":
            def broken_replace(src, dst):
                raise OSError("rename failed (injected)")
            m.setattr(os, "replace", broken_replace)
        else:
            _partial_then_fail(m)
        with pytest.raises(OSError, match="injected"):
            write(path)
    assert path.read_bytes() == old                         # … and a failed write changes nothing
    assert sorted(os.listdir(out)) == [fname]               # no temporary file left behind
