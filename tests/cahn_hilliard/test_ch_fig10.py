"""Paper 001 Fig. 10 runner (kernels.cahn_hilliard.fig10): rows, input checks, the claims' verdicts."""
import pytest

from kernels import hostcc
from kernels.cahn_hilliard import fig10
from kernels.errors import InvalidParameter

needs_cxx = pytest.mark.skipif(hostcc.find_compiler() is None, reason="needs a host C++ compiler")


@needs_cxx
def test_run_rows_and_cancel():
    rows = list(fig10.run_fig10([16, 32], ["single", "threads", "numpy"], threads=2, budget=0.05))
    assert [(r.n, r.method) for r in rows] == [(n, m) for n in (16, 32) for m in ("single", "threads", "numpy")]
    for r in rows:
        assert 1 <= r.steps <= 1024 and r.seconds > 0
        assert r.per_1024 == pytest.approx(r.seconds / r.steps * 1024)
    assert {r.threads for r in rows if r.method == "threads"} == {2}
    assert {r.threads for r in rows if r.method == "single"} == {1}
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 1
    assert len(list(fig10.run_fig10([16, 32], ["single"], budget=0.01, cancelled=cancel))) == 1


def test_inputs_checked():
    with pytest.raises(InvalidParameter, match="N must lie"):
        fig10.check_sizes([8])
    with pytest.raises(InvalidParameter, match="N must lie"):
        fig10.check_sizes([1024], dim=3)
    with pytest.raises(InvalidParameter, match="unknown method"):
        fig10.check_methods(["tbb"], gpus=0)
    with pytest.raises(InvalidParameter, match="CUDA GPU"):
        fig10.check_methods(["gpu"], gpus=0)
    with pytest.raises(InvalidParameter, match="two or more"):
        fig10.check_methods(["multi-gpu"], gpus=1)
    assert fig10.default_methods(0) == ["single", "threads", "numpy"]
    assert fig10.default_methods(2)[-2:] == ["gpu", "multi-gpu"]


def row(method, n, s, threads=0):
    return fig10.Fig10Row(method, n, 2, threads, 0, "x", 1024, s, s, "d")


def test_claims_verdicts(rng):
    base = float(rng.uniform(1, 10))
    good = [row("single", 1024, base), row("threads", 1024, base / 3, 4), row("gpu", 1024, base / 50),
            row("single", 2048, 4 * base), row("threads", 2048, 4 * base / 3, 4), row("gpu", 2048, 4 * base / 50),
            row("multi-gpu", 2048, 4 * base / 100), row("multi-gpu", 1024, base / 40)]
    v = {c: h for c, h, _ in fig10.FIG10.claims(good)}
    assert v["single core is the slowest device"] is True
    assert v["threads faster than one core"] is True
    assert v["GPU many (≥ 10) times faster than one core"] is True
    assert v["multi-GPU ≈ 2× one GPU for N ≥ 2048"] is True
    assert v["multi-GPU slower than one GPU for N < 2048"] is True
    bad = [row("single", 1024, base), row("threads", 1024, 2 * base, 4), row("gpu", 1024, base / 2)]
    v = {c: h for c, h, _ in fig10.FIG10.claims(bad)}
    assert v["single core is the slowest device"] is False
    assert v["threads faster than one core"] is False
    assert v["GPU many (≥ 10) times faster than one core"] is False
    assert v["multi-GPU ≈ 2× one GPU for N ≥ 2048"] is None


@needs_cxx
def test_csv(tmp_path):
    rows = [row("single", 64, 0.5, 1), row("threads", 64, 0.25, 2)]
    p = tmp_path / "f.csv"
    fig10.FIG10.to_csv(rows, p)
    lines = p.read_text().splitlines()
    assert lines[0].split(",") == list(fig10.CSV_COLUMNS) and len(lines) == 3


@pytest.mark.gpu
def test_gpu_point_runs():
    r = fig10.time_point("gpu", 256, budget=0.1)
    assert r.gpus == 1 and r.variant == "C" and r.per_1024 > 0


def test_layout_options_are_params_and_cli_options():
    from kernels.cahn_hilliard import CHParams
    from support.cli_calls import cli
    p = fig10.method_params("A strips", 64)
    assert (p.variant, p.block_layout) == ("A", "strips")
    p = fig10.method_params("B paper tile", 64)
    assert (p.variant, p.tile) == ("B", "paper")
    with pytest.raises(InvalidParameter, match="2D only"):
        CHParams(dim=3, tile="sweep").validate()
    with pytest.raises(InvalidParameter, match="block layout"):
        CHParams(block_layout="diagonal").validate()
    assert CHParams(dim=3, tile="march", block_layout="strips").validate().tile == "march"
    r = cli("ch", "--size", "16", "--steps", "2", "--tile", "paper", "--block-layout", "strips", "--json")
    assert r.returncode == 0, r.stderr
    bad = cli("ch", "--size", "16", "--dim", "3", "--steps", "2", "--tile", "sweep")
    assert bad.returncode == 2 and "2D only" in bad.stderr and bad.stderr.count("error:") == 1
