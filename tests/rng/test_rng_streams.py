"""The RNG approaches registry, multi-device streams on virtual GPUs, quality checks, the ``rng``
command and the Cahn–Hilliard noise source (paper 001 §6, issues 26 §3 and 27)."""
import json
import os

import numpy as np
import pytest

from cli import main as cli_main
from kernels import backend as bk
from kernels.errors import InvalidParameter
from kernels.rng import Ranmar, quality, streams as st
from kernels.rng.gpu import per_thread_reference, thread_seeds
from kernels.rng.ranmar import RanmarVec, table_for


@pytest.fixture(scope="module")
def cpu():
    return bk.select("cpu")


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(6), "little")


@pytest.mark.parametrize("name", list(st.APPROACHES))
def test_every_approach_passes_the_ranmar_vector(cpu, name):
    tv = st.test_vector(st.make(name, 1, cpu, streams=8 if name in ("threads", "gpu1") else None))
    assert tv["passed"] and tv["got"] == [6533892, 14220222, 7275067, 6172232, 8354498, 10633180]


def test_seq_is_the_sequential_generator(cpu):
    s = fresh_seed()
    a = st.make("seq", s, cpu).generate(500, np.float64)
    assert np.array_equal(a, Ranmar.from_seed(s).uniform(500))


@pytest.mark.parametrize("name", list(st.APPROACHES))
def test_streams_are_reproducible_and_seed_dependent(cpu, name):
    kw = dict(streams=16) if name in ("threads", "gpu1") else {}
    s = fresh_seed()
    a = st.make(name, s, cpu, **kw).generate(4000)
    b = st.make(name, s, cpu, **kw).generate(4000)
    c = st.make(name, s + 1, cpu, **kw).generate(4000)
    assert a.dtype == np.float32 and a.shape == (4000,)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert 0.0 <= a.min() and a.max() < 1.0


def test_gpu1_on_two_virtual_gpus_equals_one_gpu_with_twice_the_threads(cpu):
    s, T, n = fresh_seed(), 24, 37
    one = st.make("gpu1", s, cpu, gpus=1, streams=2 * T)
    two = st.make("gpu1", s, cpu, gpus=2, streams=T)
    assert two.devices == [0, 1] and "virtual GPUs" in two.notes[0]
    a = one.generate(2 * T * n).reshape(2 * T, n)
    b = two.generate(2 * T * n).reshape(2 * T, n)
    assert np.array_equal(a, b)
    assert np.array_equal(a, per_thread_reference(2 * T, n, s))        # the GPU kernel's NumPy twin
    # continuing: the next draws stay identical too (state carried per device)
    assert np.array_equal(one.generate(2 * T * 5), two.generate(2 * T * 5))


def test_threads_are_the_first_gpu1_streams(cpu):
    s = fresh_seed()
    th = st.make("threads", s, cpu, streams=10, workers=3).generate(10 * 50).reshape(10, 50)
    g1 = st.make("gpu1", s, cpu, streams=30).generate(30 * 50).reshape(30, 50)
    assert np.array_equal(th, g1[:10])


def test_gpu2_device_streams_are_one_gpu_streams(cpu):
    s, n = fresh_seed(), 3000
    two = st.make("gpu2", s, cpu, gpus=2).generate(2 * n).reshape(2, n)
    one = st.make("gpu2", s, cpu, gpus=1).generate(n)
    assert np.array_equal(two[0], one)                           # the one-GPU run is device 0's stream
    ij, kl = thread_seeds(s, 2)                                  # device g: seed pair g from the host RNG
    for g in range(2):
        ref = RanmarVec(lag=92153, table=table_for(int(ij[g]), int(kl[g]), 92153)).uniform(n, np.float32)
        assert np.array_equal(two[g], ref)
    assert not np.array_equal(two[0], two[1])


def test_discard_advances_like_generate(cpu):
    a, b = st.make("gpu1", 3, cpu, gpus=2, streams=4), st.make("gpu1", 3, cpu, gpus=2, streams=4)
    a.discard(8 * 100)
    b.generate(8 * 100)
    assert np.array_equal(a.generate(80), b.generate(80))


def test_bad_arguments(cpu):
    with pytest.raises(InvalidParameter, match="unknown RNG approach"):
        st.make("gpu3", 1, cpu)
    with pytest.raises(InvalidParameter, match="--gpus applies"):
        st.make("threads", 1, cpu, gpus=2)
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidParameter, match="seed"):
            st.make("seq", bad, cpu)
    with pytest.raises(InvalidParameter, match="streams"):
        st.make("gpu1", 1, cpu, streams=0)


# ------------------------------------------------------------------ quality
def test_chi2_accepts_fresh_seeds_and_lags_are_small(cpu):
    for name in st.APPROACHES:
        x = st.make(name, fresh_seed(), cpu, **(dict(streams=64) if name in ("threads", "gpu1") else {})
                    ).generate(200_000)
        q = quality.check(x)
        assert q.p_value > 1e-6, (name, q.chi2)                  # false alarm 1 in 10⁶
        assert all(abs(r) < 6 / np.sqrt(x.size) for r in q.lags.values()), (name, q.lags)
        assert abs(q.mean - 0.5) < 0.01 and abs(q.var - 1 / 12) < 0.002


def test_shared_seed_streams_fail_and_distinct_seeds_pass():
    s = fresh_seed()
    bad = quality.check(quality.shared_seed(s, 16, 4000))
    good = quality.check(quality.distinct_seeds(s, 16, 4000))
    assert bad.identical_streams == 15 and bad.cross == pytest.approx(1.0) and not bad.passes
    assert bad.p_value < 1e-10                                   # 16 copies: χ² × 16
    assert good.identical_streams == 0 and abs(good.cross) < 0.1 and good.passes


def test_chi2_rejects_a_non_uniform_sample():
    x = np.random.default_rng(fresh_seed()).random(100_000) ** 1.1
    assert quality.chi2_uniform(x)[2] < 1e-6


def test_table1_rows_on_virtual_gpus(cpu):
    rows = list(quality.table1(50_000, backend=cpu, gpus=(1, 2), streams={"threads": 64, "gpu1": 64}))
    got = {(r.approach, r.gpus) for r in rows}
    assert got == {("seq", 1), ("threads", 1), ("gpu1", 1), ("gpu1", 2), ("gpu2", 1), ("gpu2", 2)}
    for r in rows:
        assert r.seconds > 0 and r.numbers >= 50_000 and r.test_vector
        assert r.extrapolated == pytest.approx(24e9 / r.rate)
    paper = {(r.approach, r.gpus): r.paper_seconds for r in rows}
    assert paper[("gpu1", 2)] == 4.33 and paper[("gpu2", 2)] == 8.33 and paper[("seq", 1)] == 256.45
    with pytest.raises(InvalidParameter):
        list(quality.table1(0, backend=cpu))


# ------------------------------------------------------------------ CLI
def run_cli(argv, capsys):
    code = cli_main(["--backend", "cpu", "rng", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_and_out_file(tmp_path, capsys):
    path = tmp_path / "r.npy"
    code, out, err = run_cli(["--approach", "gpu1", "--gpus", "2", "--streams", "8", "--count", "1600",
                              "--seed", "7", "--out", str(path), "--json"], capsys)
    assert code == 0, err
    d = json.loads(out)
    assert d["devices"] == 2 and d["device_kind"] == "virtual GPU" and d["streams"] == 16
    assert d["test_vector_passed"] and d["paper_table1_seconds"] == 4.33 and d["numbers_per_second"] > 0
    saved = np.load(path)
    assert saved.dtype == np.float32 and saved.shape == (1600,)
    assert np.array_equal(saved.reshape(16, 100), per_thread_reference(16, 100, 7))
    assert d["first"] == saved[:8].tolist()


def test_cli_discard_reports_first_numbers(capsys):
    code, out, err = run_cli(["--approach", "seq", "--count", "1e5", "--seed", "3", "--json"], capsys)
    assert code == 0, err
    d = json.loads(out)
    assert d["first"] == Ranmar.from_seed(3).uniform(8).tolist()
    assert d["drawn"] == 100_000 and d["extrapolated_24e9_seconds"] == pytest.approx(24e9 / d["numbers_per_second"])


@pytest.mark.parametrize("argv,fragment", [
    (["--count", "0"], "--count must be ≥ 1"),
    (["--approach", "threads", "--gpus", "2"], "--gpus applies"),
    (["--approach", "gpu1", "--threads", "2"], "--threads applies"),
    (["--out", "x.csv"], "use .npy"),
])
def test_cli_bad_input_is_one_error_line(argv, fragment, capsys):
    code, out, err = run_cli(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0]
    assert "Traceback" not in err + out


# ------------------------------------------------------------------ Cahn–Hilliard noise source
def test_ch_noise_source_is_a_param_recorded_and_selectable(cpu, tmp_path, capsys):
    from kernels.cahn_hilliard import CahnHilliard
    from kernels.cahn_hilliard.io import load_field
    from kernels.cahn_hilliard.params import CHParams
    s = fresh_seed() % 2 ** 31
    m = CahnHilliard(CHParams(size=16, seed=s), cpu).field_numpy()
    x = CahnHilliard(CHParams(size=16, seed=s, noise_source="xp"), cpu).field_numpy()
    r = np.random.default_rng(s).random((16, 16), dtype=np.float32)
    assert np.allclose(x, 0.1 * (2 * r - 1), atol=1e-7) and not np.allclose(m, x)
    from kernels.rng import uniform_field
    assert np.allclose(m, 0.1 * (2 * uniform_field((16, 16), s) - 1), atol=1e-7)
    assert CHParams.from_dict(CHParams(noise_source="xp").to_dict()).noise_source == "xp"
    assert CHParams.from_dict({"size": 32}).noise_source == "marsaglia"       # old sessions
    with pytest.raises(InvalidParameter, match="noise_source"):
        CHParams(noise_source="mt19937").validate()
    path = tmp_path / "f.npz"
    assert cli_main(["--backend", "cpu", "ch", "--size", "16", "--steps", "1", "--noise-source", "xp",
                     "--save-field", str(path), "--json"]) == 0
    capsys.readouterr()
    assert load_field(path)[1].noise_source == "xp"
