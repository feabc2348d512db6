"""Paper 001's CUDA generators (approach 1, Alg. 29–30; approach 2, Alg. 31–32) as CUDA source run on
the CPU — the host device of kernels.gpu, the same kernel text as on the GPU — against their NumPy
twins, bit for bit (integer arithmetic: the streams are deterministic), on fresh seeds; the approaches
registry on the CPU backend, its size guard and the ``rng`` command's ``"emulated": true``.  The
GPU-vs-host check runs in test_rng_host_gpu.py."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

from kernels import gpu
from kernels.errors import InvalidParameter
from kernels.rng import streams as st
from kernels.rng.gpu import PerThreadGPU, SingleTableGPU, per_thread_reference, thread_seeds
from kernels.rng.ranmar import L97, L_BIG, ONE, RanmarVec, table_for

pytestmark = pytest.mark.skipif(not gpu.available("host"), reason="needs the host device (a C++ compiler)")


@pytest.fixture(scope="module")
def host():
    return gpu.device("host")


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(6), "little")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_approach1_on_the_host_equals_its_numpy_twin(host, dtype):
    s, T = fresh_seed(), 100                      # T not a multiple of the 64-thread block
    g = PerThreadGPU(T, s, device=host)
    a = g.generate(37, dtype)
    assert isinstance(a, np.ndarray) and a.shape == (T, 37) and a.dtype == dtype
    assert np.array_equal(a, per_thread_reference(T, 37, s, dtype))
    b = g.generate(50, dtype)                     # the state carries over: the next 50 of every stream
    assert np.array_equal(np.hstack([a, b]), per_thread_reference(T, 87, s, dtype))


def test_approach1_integers_and_discard_continue_the_stream(host):
    s, T = fresh_seed(), 70
    ij, kl = thread_seeds(s, T)
    twin = RanmarVec(lag=L97, table=np.stack([table_for(int(i), int(k), L97) for i, k in zip(ij, kl)]))
    g = PerThreadGPU(T, s, device=host)
    g.discard(123)
    twin.integers24(123)
    assert np.array_equal(g.generate(9, np.int32), twin.integers24(9))


@pytest.mark.parametrize("lag,n", [(L97, 1000), (L_BIG, 70_000)])   # many short batches / three launches
def test_approach2_on_the_host_equals_the_sequential_stream(host, lag, n):
    s = fresh_seed()
    g = SingleTableGPU(s, lag=lag, device=host)
    ref = RanmarVec.from_seed(s, lag=lag)
    assert np.array_equal(g.generate(n, np.float32), ref.uniform(n, np.float32))
    g.discard(n // 3)
    ref.integers24(n // 3)
    assert np.array_equal(g.generate(500, np.float64), ref.uniform(500, np.float64))


def test_registry_runs_gpu1_gpu2_through_the_host_path(cpu):
    s = fresh_seed()
    g1 = st.make("gpu1", s, cpu, streams=40)
    g2 = st.make("gpu2", s, cpu, gpus=2)
    assert g1.emulated and g2.emulated and g1.device.emulated
    assert any(st.EMULATED_LABEL in n for n in g1.notes) and st.EMULATED_LABEL in g2.describe()
    th = st.make("threads", s, cpu, streams=40, workers=2).generate(40 * 30).reshape(40, 30)
    assert np.array_equal(g1.generate(40 * 30).reshape(40, 30), th)       # the threads approach's streams
    ij, kl = thread_seeds(s, 2)
    two = g2.generate(2 * 800).reshape(2, 800)
    for d in range(2):
        want = RanmarVec(lag=L_BIG, table=table_for(int(ij[d]), int(kl[d]), L_BIG)).uniform(800, np.float32)
        assert np.array_equal(two[d], want)
    tv = st.test_vector(g2)
    assert tv["passed"] and st.EMULATED_LABEL in tv["path"]
    assert (np.array(tv["got"]) < ONE).all()


def test_size_guard_names_the_limit(cpu):
    g = st.make("gpu2", 1, cpu)
    most = g.limit()
    assert most and most == int(st.SingleTable.emulated_rate * st.EMULATED_SECONDS)
    g.check_count(most)
    with pytest.raises(InvalidParameter, match=re.escape(f"at most {most:.3g} numbers")):
        g.discard(2 * most)


def test_rng_command_says_emulated(capsys):
    from cli import main as cli_main
    rc = cli_main(["--backend", "cpu", "rng", "--approach", "gpu2", "--count", "1e5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["emulated"] is True and out["test_vector_passed"]
    rc = cli_main(["--backend", "cpu", "rng", "--approach", "gpu2", "--count", "1e12"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("error:") == 1 and "CUDA source run on the CPU" in err
