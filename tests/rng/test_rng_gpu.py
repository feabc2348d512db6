"""GPU tests of the Marsaglia RNG (paper 001 §6.4, Alg. 29–32): exact equality."""
import numpy as np
import pytest

import kernels.backend
from kernels import rng

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not kernels.backend.gpu_available()[0],
                       reason="needs a CUDA GPU with CuPy"),
]


def test_approach1_matches_numpy_reference():
    import cupy as cp
    g = rng.gpu_per_thread(1000, 250, seed=5)
    assert g.shape == (1000, 250)
    ref = rng.per_thread_reference(1000, 250, seed=5)
    assert np.array_equal(cp.asnumpy(g), ref)


def test_approach1_continues_stream_and_f64():
    import cupy as cp
    gen = rng.PerThreadGPU(128, seed=3)
    parts = [cp.asnumpy(gen.generate(k)) for k in (40, 1, 100)]
    gen.discard(7)
    parts.append(cp.asnumpy(gen.generate(5, np.float64)))
    ref = rng.per_thread_reference(128, 153, seed=3, dtype=np.float64)
    got = np.concatenate([p.astype(np.float64) for p in parts[:3]], axis=1)
    assert np.array_equal(got, ref[:, :141])
    assert np.array_equal(parts[3], ref[:, 148:153])


def test_approach2_equals_sequential():
    import cupy as cp
    from kernels.rng.gpu import SingleTableGPU
    n = 3 * 92153 + 12345
    seq = rng.RanmarVec(777, 888, lag=92153)
    ref = seq.integers24(n)
    # the vectorised path is checked against the pure sequential one on CPU;
    # here also the head of the stream against Ranmar directly
    head = rng.Ranmar(777, 888, lag=92153).integers24(70000)
    assert np.array_equal(ref[:70000], head)
    gen = SingleTableGPU(table=rng.fill_tables(777, 888, 92153))
    got = np.concatenate([cp.asnumpy(gen.generate(k, np.int32))
                          for k in (1000, 92153, 5, n - 93158)])
    assert np.array_equal(got, ref)
    assert np.array_equal(cp.asnumpy(gen.U), seq.u)


def test_gpu_single_table_float():
    import cupy as cp
    g = rng.gpu_single_table(200000, seed=11)
    ref = rng.RanmarVec.from_seed(11).uniform(200000, np.float32)
    assert np.array_equal(cp.asnumpy(g), ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_field_cupy_equals_numpy(dtype):
    import cupy as cp
    a = rng.uniform_field((512, 640), 2026, xp=cp, dtype=dtype)
    b = rng.uniform_field((512, 640), 2026, xp=np, dtype=dtype)
    assert isinstance(a, cp.ndarray) and a.dtype == dtype and a.shape == (512, 640)
    assert np.array_equal(cp.asnumpy(a), b)
