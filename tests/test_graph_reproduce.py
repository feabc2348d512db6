"""Paper 000's sweep runner (kernels.graphs.reproduce)."""
import numpy as np
import pytest

from kernels.backend import Backend
from kernels.errors import InvalidParameter
from kernels.graphs import reproduce as rp


@pytest.fixture
def cpu():
    return Backend("cpu", np)


def test_sweep_rows_fit_and_normalisation(cpu, tmp_path):
    rows = list(rp.run_sweep(["alpha-ring", "ba"], [200, 400, 800], instances=2, backend=cpu))
    assert len(rows) == 12 and {r.type for r in rows} == {"alpha-ring", "ba"}
    fits = rp.fit_exponents(rows)
    # ring substrate without shortcuts: a big world, path ∝ N (paper 0.995); BA: small world
    assert 0.8 < fits["alpha-ring"] < 1.1, fits
    assert 0.0 < fits["ba"] < 0.35, fits
    norm = rp.normalised(rows)
    for (t, n) in {(r.type, r.n) for r in rows}:
        idx = [i for i, r in enumerate(rows) if (r.type, r.n) == (t, n)]
        # Eq. 3 keeps the group's mean time when APSP values are equal, and rescales each t_i
        L = np.array([rows[i].mean_path_length for i in idx])
        t_ = np.array([rows[i].seconds for i in idx])
        np.testing.assert_allclose([norm[i] for i in idx], t_ / L * L.mean())
    rp.rows_to_csv(rows, tmp_path / "s.csv")
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert len(lines) == 13 and lines[0].startswith("type,n,instance")


def test_sweep_is_reproducible_and_cancellable(cpu):
    a = [r.mean_path_length for r in rp.run_sweep(["ba"], [100, 200], 2, backend=cpu, seed0=5)]
    b = [r.mean_path_length for r in rp.run_sweep(["ba"], [100, 200], 2, backend=cpu, seed0=5)]
    assert a == b
    calls = []
    rows = list(rp.run_sweep(["ba"], [100, 200], 3, backend=cpu, cancel=lambda: calls.append(1) or len(calls) > 2))
    assert len(rows) == 2


def test_sweep_refuses_bad_input(cpu):
    with pytest.raises(InvalidParameter):
        list(rp.run_sweep(["nope"], [100, 200], backend=cpu))
    with pytest.raises(InvalidParameter):
        list(rp.run_sweep(["ba"], [5, 10], backend=cpu))


def test_clustering_levels_match_paper_001():
    lv = rp.clustering_levels(n_ws=4000, n_ba=4000)
    assert lv["ws"][0] == pytest.approx(0.53, abs=0.02)
    assert 0.005 < lv["ba"][0] < 0.05


def test_sampled_mean_path_is_exact_with_all_sources_and_close_with_few():
    from kernels.graphs import generators as G
    from kernels.graphs.apsp import apsp
    from kernels.graphs.stats import sampled_summary, summary
    seed = int(np.random.default_rng().integers(1 << 30))
    g = G.barabasi_albert(600, 3, seed)
    full = summary(apsp(g, "cpu").dist)
    every = sampled_summary(g, sources=g.n, seed=seed)
    assert every["mean_path_length"] == pytest.approx(full["mean_path_length"], rel=1e-12)
    assert every["diameter"] == full["diameter"] and every["connected"] == full["connected"]
    few = sampled_summary(g, sources=64, seed=seed)
    assert few["sources"] == 64 and few["diameter"] <= full["diameter"]
    # 64 × 599 distances: the estimate's relative error is ~1 % (std ≈ 0.7 / L / sqrt(64))
    assert few["mean_path_length"] == pytest.approx(full["mean_path_length"], rel=0.05)


def test_sampled_sweep_rows_and_refusal():
    rows = list(rp.run_sweep(["ba"], [300, 600], instances=1, method="cpu-sampled", sources=32))
    assert [r.method for r in rows] == ["cpu-sampled"] * 2 and all(r.mean_path_length > 1 for r in rows)
    with pytest.raises(InvalidParameter, match="sources"):
        list(rp.run_sweep(["ba"], [300, 600], method="cpu-sampled", sources=1))
