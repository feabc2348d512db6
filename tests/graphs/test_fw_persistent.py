"""fw-fast as one persistent cooperative kernel (``persistent=1``, kernels/graphs/cuda/fw_persist.cu,
issue 38), run on the host device (the same CUDA source compiled for the CPU): bit for bit the
launch sequence of fw-fast (with and without its stream look-ahead) and exact against paper 002's
V1 on integer weights, on fresh random graphs whose sizes are no multiple of the tile; predecessors
equal too.  The GPU run of the same comparison is in tests/graphs/test_fw_family_gpu.py."""
import numpy as np
import pytest

from kernels.graphs.apsp import fw_core as C
from kernels.graphs.apsp import fw_cpu, fw_gpu
from kernels.graphs.apsp.core import InvalidParameter
from kernels.hostcc import find_compiler

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="needs a host C++ compiler")


@pytest.fixture(scope="module")
def dev():
    from kernels.gpu.host import HostDevice
    return HostDevice(workers=2, block=64, per_sm=2)


def random_working(rng, n, arith):
    m = rng.integers(1, 40, (n, n)).astype(np.float32)
    m[rng.random((n, n)) > rng.uniform(0.03, 0.2)] = np.inf
    if arith == "float32":
        m[np.isfinite(m)] += rng.uniform(0, 1, int(np.isfinite(m).sum())).astype(np.float32)
    return m, C.working_matrix(m, "float32" if arith == "float32" else "int32", 128)


def bits(a):
    return a.view(np.uint32)


@pytest.mark.slow                  # cold compile cache: the persistent and fw-fast kernels, ~10 s on 2 cores
@pytest.mark.parametrize("arith,pred", [("int32", False), ("float32", False), ("dpx", False), ("float32", True),
                                        ("int32", True)])
def test_persistent_equals_fw_fast_and_v1(dev, rng, arith, pred):
    n = int(rng.integers(129, 300))
    while n % 64 == 0:
        n = int(rng.integers(129, 300))
    m, w = random_working(rng, n, arith)
    npad = w.shape[0]
    tile = 64 if pred else int(rng.choice(fw_gpu.PERSIST_TILES))
    allowed = fw_gpu.PERSIST_CONFIGS if tile == 64 else fw_gpu.PERSIST_128_CONFIGS
    cfg = fw_gpu.DEFAULT_GEMM if pred else str(rng.choice(allowed))
    dpx = arith == "dpx"
    p0 = C.initial_pred(w, n) if pred else None
    a, pa = w.copy(), None if p0 is None else p0.copy()
    b, pb = w.copy(), None if p0 is None else p0.copy()
    look = bool(rng.integers(2))
    assert fw_gpu.run_fast_persistent(dev, a, pa, npad, cfg, dpx, tile=tile) == 1
    fw_gpu.run_fast(dev, b, pb, npad, tile, cfg, dpx, look)
    assert np.array_equal(bits(a), bits(b)), (n, arith, tile, cfg, look)
    if pred:
        assert np.array_equal(pa, pb)
    ref = w.copy()
    fw_cpu.fw_v1(ref, None)
    got, want = C.finish(a, n, arith), C.finish(ref, n, arith)
    if arith == "float32":
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-5)
    else:
        assert np.array_equal(got, want)


@pytest.mark.slow
def test_persistent_option_through_the_library(rng):
    """``graph --apsp fw-fast --fw-option persistent=1`` path: the FW version on the CPU backend with
    emulate=1 runs the persistent kernel on the host device and equals the launch sequence's run."""
    from kernels.backend import select
    n = int(rng.integers(130, 250))
    m = rng.integers(1, 30, (n, n)).astype(np.float32)
    m[rng.random((n, n)) > 0.1] = np.inf
    cpu = select("cpu")
    per = C.floyd_warshall(m, "fw-fast", cpu, arith="int32", pred=True, emulate=1, persistent=1)
    seq = C.floyd_warshall(m, "fw-fast", cpu, arith="int32", pred=True, emulate=1, tile=64)
    assert per.backend == "host" and per.params["persistent"] and per.launches == 1
    assert np.array_equal(per.dist, seq.dist) and np.array_equal(per.pred, seq.pred)


@pytest.mark.parametrize("opts", [{"persistent": 2}, {"persistent": "maybe"}, {"persistent": 1, "tile": 32},
                                  {"persistent": 1, "cfg": "128x128/8x4"},
                                  {"persistent": 1, "tile": 128, "cfg": "64x64/4x4"}])
def test_persistent_refuses_what_it_cannot_run(opts):
    with pytest.raises(InvalidParameter):
        C.fw_versions()["fw-fast"](**opts)


@pytest.mark.slow
def test_persistent_tile_128_both_sides_of_the_band_pairs(dev, rng):
    """Tile 128: an odd and an even number of pivot bands (n = 384, 512), float32, vs the sequence."""
    for npad in (384, 512):
        m, w = random_working(rng, npad - int(rng.integers(1, 60)), "float32")
        a, b = w.copy(), w.copy()
        fw_gpu.run_fast_persistent(dev, a, None, npad, "128x128/8x8/2", tile=128)
        fw_gpu.run_fast(dev, b, None, npad, 128, "128x128/8x8/2", False, bool(rng.integers(2)))
        assert np.array_equal(bits(a), bits(b)), npad


def test_persistent_needs_n_a_multiple_of_128(dev):
    d = np.zeros((192, 192), np.int32)
    with pytest.raises(ValueError, match="multiple of 128"):
        fw_gpu.run_fast_persistent(dev, d, None, 192)


def test_graph_option_on_the_host_is_the_launch_sequence(dev, rng):
    """``graph=1`` on the host device (no CUDA graphs there) runs the same launch sequence."""
    n = 128
    m, w = random_working(rng, 100, "int32")
    a, b = w.copy(), w.copy()
    assert fw_gpu.run_fast_graph(dev, a, None, n, 64, "64x64/4x4") == fw_gpu.run_fast(dev, b, None, n, 64,
                                                                                       "64x64/4x4", False, False)
    assert np.array_equal(a, b)
    with pytest.raises(InvalidParameter):
        C.fw_versions()["fw-fast"](graph=1, persistent=1)
    with pytest.raises(InvalidParameter):
        C.fw_versions()["fw-fast"](graph="x")
