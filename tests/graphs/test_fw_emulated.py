"""The Floyd–Warshall GPU kernels and their launch sequences (kernels.graphs.apsp.fw_gpu), run on the host
device (kernels.gpu.host: the .cu sources compiled by the host C++ compiler after its CUDA prelude;
blocks on worker threads, every CUDA thread a fiber), against paper 002's V1 on fresh random
graphs: exact distances on integer weights, valid predecessor paths.  Each run draws its
tile / configuration at random, so repeated runs cover them all while one run stays short."""
import numpy as np
import pytest

from kernels.graphs.apsp import fw_core as C
from kernels.graphs.apsp import fw_cpu, fw_gpu
from kernels.hostcc import find_compiler

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="needs a host C++ compiler")


@pytest.fixture(scope="module")
def dev():
    from kernels.gpu.host import HostDevice
    return HostDevice(workers=2, block=64, per_sm=2)


def run_case(dev, rng, run, n, arith, pred, pad, **kw):
    m = rng.integers(1, 30, (n, n)).astype(np.float32)
    m[rng.random((n, n)) > rng.uniform(0.03, 0.15)] = np.inf
    if arith == "float32":
        m[np.isfinite(m)] += rng.uniform(0, 1, int(np.isfinite(m).sum())).astype(np.float32)
    w = C.working_matrix(m, "float32" if arith == "float32" else "int32", pad)
    p = C.initial_pred(w, n) if pred else None
    ref = w.copy()
    fw_cpu.fw_v1(ref, None)
    run(dev, w, p, w.shape[0], **kw)
    got, want = C.finish(w, n, arith), C.finish(ref, n, arith)
    if arith == "float32":
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-5)
    else:
        assert np.array_equal(got, want)
    if pred:
        res = C.FWResult(got, p[:n, :n], "emu", arith, 0, 0)
        for i, j in rng.integers(0, n, (40, 2)):
            path = res.path(i, j)
            if (got[i, j] == C.NO_PATH_INT) if arith != "float32" else not np.isfinite(got[i, j]):
                assert path == []
            else:
                assert path[0] == i and path[-1] == j
                assert C.path_length(m, path) == pytest.approx(float(got[i, j]), rel=1e-5)


def test_plain_and_v2_v3(dev, rng):
    run_case(dev, rng, fw_gpu.run_naive, int(rng.integers(20, 45)), "int32", True, 1)
    run_case(dev, rng, fw_gpu.run_v2, int(rng.integers(10, 30)), "float32", False, 1)
    run_case(dev, rng, fw_gpu.run_v3, int(rng.integers(20, 45)), "int32", True, 1)


@pytest.mark.parametrize("version", [4, 5])
def test_v4_v5_grid_barriers(dev, rng, version):
    coop = bool(rng.integers(2))
    run_case(dev, rng, fw_gpu.run_v45, int(rng.integers(15, 35)), "int32", True, 1, version=version, coop=coop)


def test_blocked_three_phase(dev, rng):
    run_case(dev, rng, fw_gpu.run_blocked, int(rng.integers(33, 90)), "int32", True, 32, tile=32)
    run_case(dev, rng, fw_gpu.run_blocked, int(rng.integers(65, 130)), "float32", False, 64, tile=64)


@pytest.mark.slow                  # a cold compile cache: ~6–8 s of compiling on 2 cores
@pytest.mark.parametrize("method", ["mm", "2l"])
def test_thesis_mm_and_two_level(dev, rng, method):
    tile = int(rng.choice(fw_gpu.THESIS_TILES))
    n = int(rng.integers(65, 140))
    run_case(dev, rng, fw_gpu.run_thesis, n, "dpx", False, 64, tile=tile, l=int(rng.integers(1, 4)), method=method,
             dpx=True)
    run_case(dev, rng, fw_gpu.run_thesis, n, "float32", True, 64, tile=int(rng.choice(fw_gpu.THESIS_TILES)), l=1,
             method=method)


def test_recursive(dev, rng):
    t_r = int(rng.choice([16, 32]))
    run_case(dev, rng, fw_gpu.run_recursive, int(rng.integers(3 * t_r, 6 * t_r)), "int32", True, t_r, t_r=t_r)


@pytest.mark.slow                  # a cold compile cache: ~9 s of compiling the GEMM kernels on 2 cores
def test_fast(dev, rng):
    tile = int(rng.choice(fw_gpu.FAST_TILES))
    cfg = str(rng.choice(list(fw_gpu.GEMM_CONFIGS)))
    run_case(dev, rng, fw_gpu.run_fast, int(rng.integers(129, 260)), "dpx", False, 128, tile=tile, cfg=cfg, dpx=True)
    run_case(dev, rng, fw_gpu.run_fast, int(rng.integers(129, 200)), "int32", True, 128, tile=64, lookahead=False)
