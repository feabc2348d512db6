"""The generic ``experiment`` sweep task (kernels.sweep.experiment_task): any paper experiment's points
run as sweep tasks give the serial run's rows, as the experiment's own row objects."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.graphs.experiments import cc_timing as cc
from kernels.graphs.experiments import sssp_table as T
from kernels.sweep import TASKS, ExperimentTask, experiment_sweep, read_rows
from kernels.sweep.experiment_task import reference


def test_reference_names_a_module_level_experiment():
    assert reference(T.TABLE31) == "kernels.graphs.experiments.sssp_table:TABLE31"
    assert TASKS.get("experiment") is ExperimentTask
    with pytest.raises(InvalidParameter):
        ExperimentTask("kernels.graphs.experiments.sssp_table:TOPOLOGIES")        # not an experiment
    with pytest.raises(InvalidParameter):
        ExperimentTask("no.such.module:X")


def test_sssp_table_on_the_sweep_equals_the_serial_table(tmp_path):
    seed = int(np.random.default_rng().integers(1, 10_000))
    settings = dict(topologies=["random", "ring"], methods=["cpu-dijkstra"], n=96, arcs=384, w_max=50, seed=seed)
    path = tmp_path / "t.csv"
    rows = list(experiment_sweep(T.TABLE31, settings, scheduler="none", path=path))
    serial = list(T.TABLE31.rows(**settings))
    assert all(isinstance(r, T.TableRow) for r in rows)
    key = lambda r: (r.topology, r.n, r.arcs, r.method, r.sources_timed, r.agrees)      # noqa: E731
    assert sorted(map(key, rows)) == sorted(map(key, serial)) and all(r.agrees for r in rows)
    _ident, cols, stored = read_rows(path)
    assert set(T.TableRow.__dataclass_fields__) <= set(cols) and len(stored) == len(serial)


def test_clustering_points_split_by_family():
    pts = cc.TIMINGS.points(sizes={"ws": [200, 400], "ba": [200, 400]}, methods=["cpu"])
    assert [p["sizes"] for p in pts] == [{"ws": [200, 400]}, {"ba": [200, 400]}]
