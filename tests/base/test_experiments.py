"""The paper-experiment base (kernels.experiments, issue 37 §2): rows as an iterator, claims checked
on real rows, CSV written atomically, points that add up to the whole run, one CSV writer."""
from __future__ import annotations

import csv
import re

import numpy as np
import pytest
from support.paths import ROOT

from kernels.cahn_hilliard import fig10
from kernels.experiments import Claim, Experiment, row_dict, rows_to_csv
from kernels.graphs.experiments import EXPERIMENTS
from kernels.graphs.experiments import reproduce as rp


def _small_run(seed0: int):
    return rp.FIG14.rows(["alpha", "ba"], [120, 240], instances=2, method="cpu", seed0=seed0, clustering=False)


def test_rows_is_a_lazy_iterator_equal_to_the_serial_run():
    seed0 = int(np.random.default_rng().integers(1, 10_000))
    it = _small_run(seed0)
    first = next(it)                                   # one row computed, the rest not yet
    assert isinstance(first, rp.SweepRow) and (first.type, first.n, first.instance) == ("alpha", 120, 0)
    rows = [first, *it]
    ref = list(rp.run_sweep(["alpha", "ba"], [120, 240], 2, method="cpu", seed0=seed0, clustering=False))
    same = ("type", "n", "instance", "seed", "m", "mean_path_length", "diameter", "method", "regenerated")
    assert [[row_dict(r)[k] for k in same] for r in rows] == [[row_dict(r)[k] for k in same] for r in ref]


def test_points_add_up_to_the_whole_run():
    seed0 = int(np.random.default_rng().integers(1, 10_000))
    settings = dict(types=["alpha", "ba"], sizes=[120, 240], instances=2, method="cpu", seed0=seed0,
                    clustering=False)
    points = rp.FIG14.points(**settings)
    assert len(points) == 4 and all(len(p["types"]) == len(p["sizes"]) == 1 for p in points)
    parts = [r for p in points for r in rp.FIG14.rows(**p)]
    whole = list(rp.FIG14.rows(**settings))
    key = lambda r: (r.type, r.n, r.instance, r.seed, r.m, r.mean_path_length)    # noqa: E731
    assert sorted(map(key, parts)) == sorted(map(key, whole))
    assert rp.FIG14.ordered(parts[::-1]) == sorted(parts, key=rp.FIG14.order_key)


def test_claims_on_a_real_small_run_follow_the_fitted_exponents():
    rows = list(_small_run(int(np.random.default_rng().integers(1, 10_000))))
    claims = rp.FIG14.claims(rows)
    assert all(isinstance(c, Claim) and isinstance(c.text, str) and c.detail for c in claims)
    fits = rp.fit_exponents(rows)
    by_text = {c.text.split(":")[0]: c for c in claims}
    for t in ("alpha", "ba"):
        c = by_text[rp.TYPE_LABELS[t]]
        assert c.held == (abs(fits[t] - rp.PAPER_EXPONENTS[t]) <= rp.Fig14.TOLERANCE)
        assert f"{fits[t]:.3f}" in c.detail
    assert by_text[rp.TYPE_LABELS["alpha-ring"]].held is None          # not run: not measured
    assert by_text["the exponent falls from type (1) to (2) to (3)"].held is None


def test_a_claim_fails_when_the_rows_contradict_the_paper():
    rng = np.random.default_rng()
    beta = float(rng.uniform(0.5, 0.9))                # far from type (3)'s 0.106
    rows = [rp.SweepRow("ba", n, 0, 1, 3 * n, 2.0 * n ** beta, 5, "cpu", 0.1) for n in (1000, 2000, 4000)]
    c = [c for c in rp.FIG14.claims(rows) if c.text.startswith(rp.TYPE_LABELS["ba"])][0]
    assert c.held is False and f"{beta:.3f}" in c.detail and c.verdict == "does NOT hold"


def test_to_csv_writes_the_columns_and_one_line_per_row(tmp_path):
    rows = list(_small_run(3))
    p = tmp_path / "rows.csv"
    rp.FIG14.to_csv(rows, p)
    with open(p, newline="") as fh:
        lines = list(csv.reader(fh))
    assert tuple(lines[0]) == rp.FIG14.columns and len(lines) == len(rows) + 1
    assert [int(x[lines[0].index("n")]) for x in lines[1:]] == [r.n for r in rows]


def test_to_csv_is_atomic(tmp_path):
    p = tmp_path / "rows.csv"
    p.write_text("earlier\n")

    class Broken(Experiment):
        name, columns = "broken", ("a", "b")

        def table(self, rows):
            yield [1, 2]
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        Broken().to_csv([{"a": 1, "b": 2}, {"a": 3, "b": 4}], p)
    assert p.read_text() == "earlier\n"                       # whole or as it was
    assert sorted(x.name for x in tmp_path.iterdir()) == ["rows.csv"]   # no temporary file left


def test_default_table_reads_dicts_and_dataclasses(tmp_path):
    class Plain(Experiment):
        name, columns = "plain", ("x", "y")

    p = tmp_path / "t.csv"
    Plain().to_csv([{"x": 1, "y": "a"}, {"x": 2}], p)
    assert p.read_text().splitlines() == ["x,y", "1,a", "2,"]


def test_every_graph_experiment_is_registered_under_its_own_name():
    assert len(EXPERIMENTS) >= 8
    for name in EXPERIMENTS:
        exp = EXPERIMENTS[name]
        assert isinstance(exp, Experiment) and exp.name == name and exp.title and exp.columns
    for exp in (fig10.FIG10, fig10.LAYOUT_TIMES):
        assert isinstance(exp, Experiment) and exp.columns == fig10.CSV_COLUMNS


def test_rows_to_csv_is_defined_once_in_the_project():
    found = []
    for folder in ("kernels", "cli", "explorer", "benchmarks", "scripts", "main.py"):
        path = ROOT / folder
        files = [path] if path.is_file() else sorted(path.rglob("*.py")) if path.exists() else []
        for f in files:
            for m in re.finditer(r"^\s*def (\w+_to_csv)\(", f.read_text(encoding="utf-8"), re.M):
                found.append(f"{f.relative_to(ROOT)}: {m.group(1)}")
    assert found == ["kernels/experiments.py: rows_to_csv"], found


def test_shared_writer_is_atomic_too(tmp_path):
    p = tmp_path / "x.csv"

    def table():
        yield [1]
        raise ValueError("bad")

    with pytest.raises(ValueError):
        rows_to_csv(["a"], table(), p)
    assert not p.exists() and not list(tmp_path.iterdir())
