"""CPU tests of the Marsaglia lagged-Fibonacci RNG (paper 001 §6, Alg. 26–32)."""
import numpy as np
import pytest

from kernels import rng
from kernels.rng import Ranmar, RanmarVec, fill_table_py, fill_tables
from kernels.rng.ranmar import ONE, batch_schedule, cycle_offsets


def test_published_test_vector():
    """RANMAR (James 1990): ij=1802, kl=9373, after 20 000 draws."""
    g = Ranmar(1802, 9373)
    g.uniform(20000)
    got = (g.uniform(6) * 4096.0 * 4096.0).tolist()
    assert got == [6533892.0, 14220222.0, 7275067.0, 6172232.0, 8354498.0, 10633180.0]


def test_vectorised_hits_test_vector():
    g = RanmarVec(1802, 9373, lag=97)
    g.integers24(20000)
    assert g.integers24(6).tolist() == [6533892, 14220222, 7275067, 6172232, 8354498, 10633180]


@pytest.mark.parametrize("ij,kl,lag", [(1802, 9373, 97), (0, 0, 97), (31328, 30081, 97),
                                       (12, 34, 1009), (555, 777, 3)])
def test_fast_table_fill_matches_reference(ij, kl, lag):
    assert fill_tables(ij, kl, lag).tolist() == fill_table_py(ij, kl, lag)


def test_fill_tables_many_seeds():
    ij = np.array([0, 1802, 31328, 77])
    kl = np.array([5, 9373, 30081, 0])
    t = fill_tables(ij, kl, 97)
    assert t.shape == (4, 97)
    for r in range(4):
        assert t[r].tolist() == fill_table_py(int(ij[r]), int(kl[r]), 97)


def test_schedule_matches_paper():
    assert cycle_offsets(92153) == (0, 30718, 61436)
    assert list(batch_schedule(0, 92153, 92153)) == [30718, 30718, 30717]
    for pos in (0, 5, 30717, 61436, 92152):
        assert all(b <= 92153 // 3 + 1 for b in batch_schedule(pos, 200000, 92153))
        assert sum(batch_schedule(pos, 200000, 92153)) == 200000


@pytest.mark.parametrize("lag,chunks", [(97, [1, 32, 33, 34, 100, 97 * 5 + 3]),
                                        (92153, [7, 30718, 61436, 92153, 40000])])
def test_vectorised_equals_sequential(lag, chunks):
    """> 3 batches, with chunk sizes that cut batches at odd places."""
    seq = Ranmar(4321, 1234, lag=lag)
    vec = RanmarVec(4321, 1234, lag=lag)
    total = sum(chunks)
    a = seq.integers24(total)
    b = np.concatenate([vec.integers24(k) for k in chunks])
    assert np.array_equal(a, b)
    assert vec.c == seq.c and vec.i == seq.i and vec.j == seq.j
    assert np.array_equal(np.asarray(seq.u), vec.u)


def test_uniform_values_are_exact_multiples():
    x = RanmarVec(1, 2).uniform(1000, np.float32)
    y = RanmarVec(1, 2).uniform(1000, np.float64)
    assert x.dtype == np.float32 and y.dtype == np.float64
    assert np.array_equal(x.astype(np.float64), y)
    assert np.array_equal(np.round(y * ONE), y * ONE)


def test_uniform_field_reproducible_and_sane():
    a = rng.uniform_field((1000, 1000), 42)
    b = rng.uniform_field((1000, 1000), 42)
    c = rng.uniform_field((1000, 1000), 43)
    assert a.shape == (1000, 1000) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.mean(a == c) < 1e-3
    assert a.min() >= 0.0 and a.max() < 1.0
    assert abs(float(a.mean()) - 0.5) < 5e-3          # sigma ~ 2.9e-4
    assert abs(float(a.var()) - 1 / 12) < 2e-3
    # it is the start of the sequential stream of that seed
    seq = Ranmar.from_seed(42, lag=92153).uniform(500, np.float32)
    assert np.array_equal(a.ravel()[:500], seq)


def test_uniform_field_dtypes_and_shapes():
    f64 = rng.uniform_field((17, 3), 7, dtype=np.float64)
    f32 = rng.uniform_field((17, 3), 7)
    assert f64.dtype == np.float64 and np.array_equal(f64, f32.astype(np.float64))
    assert rng.uniform_field(5, 7).shape == (5,)


def test_per_thread_reference_streams():
    a = rng.per_thread_reference(64, 300, seed=9)
    b = rng.per_thread_reference(64, 300, seed=9)
    c = rng.per_thread_reference(64, 300, seed=10)
    assert a.shape == (64, 300) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    rows = {r.tobytes() for r in a}
    assert len(rows) == 64                     # every thread has its own stream
    assert a.min() >= 0 and a.max() < 1
    # each row is the sequential generator with that thread's seeds
    ij, kl = rng.thread_seeds(9, 64)
    assert len(set(zip(ij.tolist(), kl.tolist()))) == 64
    for t in (0, 13, 63):
        s = Ranmar(int(ij[t]), int(kl[t])).uniform(300, np.float32)
        assert np.array_equal(a[t], s)
