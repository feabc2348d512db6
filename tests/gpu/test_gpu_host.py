"""The host device's CUDA prelude (kernels.gpu.host): tiny kernels, each exercising one CUDA feature,
on fresh random inputs against a NumPy reference — barriers and shared memory (static and dynamic),
atomics, warp shuffles and votes, cooperative grid sync, DPX intrinsics, textures, argument
marshalling by the kernel's parameter types, includes, and threads waiting at different barriers
reported as a deadlock instead of hanging."""
import numpy as np
import pytest

from kernels.hostcc import find_compiler

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="needs a host C++ compiler")

SRC = r"""
#include "helper.cuh"
template <int B>
__global__ void reverse_in_block(const int* x, int* y) {          // static shared memory + barrier
    __shared__ int s[B];
    int i = blockIdx.x * B + threadIdx.x;
    s[threadIdx.x] = x[i];
    __syncthreads();
    y[i] = s[B - 1 - threadIdx.x] + twice(0);
}
extern "C" __global__ void block_sums(const double* x, double* out, int n) {   // dynamic shared memory
    extern __shared__ __align__(16) double buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : 0.0;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int t = 0; t < (int)blockDim.x; ++t) s += buf[t];
        out[blockIdx.x] = s;
    }
}
extern "C" __global__ void atomics(const int* v, int n, int* hist, unsigned long long* total, int* mn, int* mx,
                                   float* fsum, unsigned* bits, int* cas_count) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&hist[v[i] & 15], 1);
        atomicAdd(total, (unsigned long long)v[i]);
        atomicMin(mn, v[i]);
        atomicMax(mx, v[i]);
        atomicAdd(fsum, 1.0f);
        atomicOr(&bits[0], 1u << (v[i] % 29));
        atomicAnd(&bits[1], ~(1u << (v[i] % 29)));
        int old;
        do { old = *cas_count; } while (atomicCAS(cas_count, old, old + 1) != old);
    }
}
extern "C" __global__ void warp_ops(const int* x, int* red, int* xr, int* scan, unsigned* ballot, int* any_all,
                                   int* bitops) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31, w = i >> 5;
    int v = x[i];
    int s = v;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) red[w] = s;
    int t = v;
    for (int o = 16; o > 0; o >>= 1) t = max(t, __shfl_xor_sync(0xffffffffu, t, o));
    xr[i] = t;
    int p = v;
    for (int o = 1; o < 32; o <<= 1) { int u = __shfl_up_sync(0xffffffffu, p, o); if (lane >= o) p += u; }
    scan[i] = p + __shfl_sync(0xffffffffu, v, 0) - __shfl_sync(0xffffffffu, v, 0);
    unsigned b = __ballot_sync(0xffffffffu, v & 1);
    if (lane == 0) {
        ballot[w] = b;
        any_all[2 * w] = __popc(b);
    }
    int all = __all_sync(0xffffffffu, v > 0), any = __any_sync(0xffffffffu, v > 90);
    if (lane == 0) any_all[2 * w + 1] = 2 * all + any;
    bitops[3 * i] = __ffs(v); bitops[3 * i + 1] = __clz(v); bitops[3 * i + 2] = __popc((unsigned)v);
}
extern "C" __global__ void grid_phases(int* a, int* b, int rounds) {    // cooperative grid sync
    namespace cg = cooperative_groups;
    cg::grid_group g = cg::this_grid();
    int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    for (int r = 0; r < rounds; ++r) {
        b[i] = a[(i + 1) % n] + a[(i + n - 1) % n];
        g.sync();
        a[i] = b[i];
        g.sync();
    }
}
extern "C" __global__ void grid_after_exit(int* a, int* out) {  // block 0 leaves early: the others still meet
    if (blockIdx.x == 0) return;
    a[blockIdx.x] = blockIdx.x;
    cooperative_groups::this_grid().sync();
    if (threadIdx.x == 0) out[blockIdx.x] = a[1 + blockIdx.x % (gridDim.x - 1)];
}
extern "C" __global__ void dpx(const int* a, const int* b, const int* c, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[4 * i] = __viaddmin_s32(a[i], b[i], c[i]);
    out[4 * i + 1] = __viaddmax_s32(a[i], b[i], c[i]);
    out[4 * i + 2] = __vimin3_s32(a[i], b[i], c[i]);
    out[4 * i + 3] = __vimax3_s32_relu(a[i], b[i], c[i]);
}
extern "C" __global__ void scalars(double* out, long long big, float f, double d, unsigned char u, bool flag,
                                   short s) {
    out[0] = (double)big; out[1] = f; out[2] = d; out[3] = u; out[4] = flag; out[5] = s;
}
extern "C" __global__ void textures(cudaTextureObject_t t1, cudaTextureObject_t t2, float* out, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * w + x] = tex1Dfetch<float>(t1, y * w + x) + tex2D<float>(t2, x + 1.5f, y + 0.5f);
}
extern "C" __global__ void divergent(int* a) {       // a block barrier and a warp barrier wait for each other
    if (threadIdx.x < 3) __syncthreads();
    else __syncwarp();
    a[threadIdx.x] = 1;
}
"""


@pytest.fixture(scope="module")
def dev():
    from kernels.gpu.host import HostDevice
    return HostDevice(workers=2)


@pytest.fixture(scope="module")
def mod(dev, tmp_path_factory):
    inc = tmp_path_factory.mktemp("inc")
    (inc / "helper.cuh").write_text("#pragma once\n__device__ __forceinline__ int twice(int v) { return 2 * v; }\n")
    names = ["reverse_in_block<64>", "block_sums", "atomics", "warp_ops", "grid_phases", "grid_after_exit", "dpx",
             "scalars", "textures", "divergent"]
    return dev.module(SRC, name_expressions=names, options=(f"-I{inc}",), system="test")


def test_barrier_and_static_shared_memory(dev, mod, rng):
    blocks = int(rng.integers(2, 9))
    x = rng.integers(-1000, 1000, blocks * 64).astype(np.int32)
    y = np.zeros_like(x)
    k = mod.function("reverse_in_block<64>")
    assert not k.plain
    dev.launch(k, blocks, 64, (x, y))
    assert np.array_equal(y, x.reshape(blocks, 64)[:, ::-1].ravel())


def test_dynamic_shared_memory(dev, mod, rng):
    n, block = int(rng.integers(100, 2000)), int(rng.choice([32, 96, 128]))
    x = rng.random(n)
    blocks = -(-n // block)
    out = np.zeros(blocks)
    dev.launch(mod.function("block_sums"), blocks, block, (x, out, n), shared_mem=block * 8)
    want = [sum(x[b * block:(b + 1) * block].tolist()) for b in range(blocks)]     # same order of adds
    assert np.array_equal(out, want)


def test_atomics_across_parallel_blocks(dev, mod, rng):
    n = int(rng.integers(1000, 5000))
    v = rng.integers(0, 1 << 20, n).astype(np.int32)
    hist, total = np.zeros(16, np.int32), np.zeros(1, np.uint64)
    mn, mx = np.full(1, np.iinfo(np.int32).max, np.int32), np.full(1, -1, np.int32)
    fsum, bits, cas = np.zeros(1, np.float32), np.array([0, 0xffffffff], np.uint32), np.zeros(1, np.int32)
    dev.launch(mod.function("atomics"), 7, 64, (v, n, hist, total, mn, mx, fsum, bits, cas))
    assert np.array_equal(hist, np.bincount(v & 15, minlength=16))
    assert int(total[0]) == int(v.astype(np.int64).sum()) and mn[0] == v.min() and mx[0] == v.max()
    assert fsum[0] == n and cas[0] == n
    ors = int(np.bitwise_or.reduce(np.left_shift(np.int64(1), (v % 29).astype(np.int64))))
    assert bits[0] == ors and bits[1] == (0xffffffff & ~ors)


def test_warp_shuffles_and_votes(dev, mod, rng):
    blocks, block = int(rng.integers(1, 4)), int(rng.choice([32, 64, 128]))
    n = blocks * block
    x = rng.integers(1, 100, n).astype(np.int32)
    red, xr, scan = np.zeros(n // 32, np.int32), np.zeros(n, np.int32), np.zeros(n, np.int32)
    ballot, any_all, bitops = np.zeros(n // 32, np.uint32), np.zeros(n // 16, np.int32), np.zeros(3 * n, np.int32)
    k = mod.function("warp_ops")
    dev.launch(k, blocks, block, (x, red, xr, scan, ballot, any_all, bitops))
    w = x.reshape(-1, 32)
    assert np.array_equal(red, w.sum(1))
    assert np.array_equal(xr, np.repeat(w.max(1), 32))
    assert np.array_equal(scan, np.cumsum(w, 1).ravel())
    want = ((w & 1) << np.arange(32)).sum(1).astype(np.uint32)
    assert np.array_equal(ballot, want)
    assert np.array_equal(any_all[0::2], (w & 1).sum(1))
    assert np.array_equal(any_all[1::2], 2 * (w > 0).all(1) + (w > 90).any(1))
    b = bitops.reshape(-1, 3)
    low = np.array([(int(v) & -int(v)).bit_length() for v in x])
    assert np.array_equal(b[:, 0], low) and np.array_equal(b[:, 1], [32 - int(v).bit_length() for v in x])
    assert np.array_equal(b[:, 2], [bin(int(v)).count("1") for v in x])


def test_cooperative_grid_sync(dev, mod, rng):
    blocks, block, rounds = int(rng.integers(2, 6)), int(rng.choice([1, 32, 64])), int(rng.integers(1, 6))
    n = blocks * block
    a = rng.integers(-5, 5, n).astype(np.int32)
    want = a.astype(np.int64)
    for _ in range(rounds):
        want = np.roll(want, -1) + np.roll(want, 1)
    b = np.zeros_like(a)
    dev.launch(mod.function("grid_phases"), blocks, block, (a, b, rounds), cooperative=True)
    assert np.array_equal(a, want.astype(np.int32))
    c, out = np.zeros(blocks + 1, np.int32), np.zeros(blocks + 1, np.int32)
    dev.launch(mod.function("grid_after_exit"), blocks + 1, 32, (c, out), cooperative=True)   # block 0 not waited for
    want = 1 + np.arange(1, blocks + 1) % blocks
    assert out[0] == 0 and np.array_equal(out[1:], want)


def test_dpx_intrinsics(dev, mod, rng):
    n = int(rng.integers(50, 500))
    a, b, c = (rng.integers(-2 ** 31, 2 ** 31 - 1, n, dtype=np.int64).astype(np.int32) for _ in range(3))
    out = np.zeros(4 * n, np.int32)
    dev.launch(mod.function("dpx"), -(-n // 64), 64, (a, b, c, out, n))
    s = (a.astype(np.int64) + b).astype(np.int32)        # 32-bit wrap-around, as the hardware adds
    o = out.reshape(-1, 4)
    assert np.array_equal(o[:, 0], np.minimum(s, c)) and np.array_equal(o[:, 1], np.maximum(s, c))
    assert np.array_equal(o[:, 2], np.minimum(np.minimum(a, b), c))
    assert np.array_equal(o[:, 3], np.maximum(np.maximum(np.maximum(a, b), c), 0))


def test_arguments_converted_to_parameter_types(dev, mod, rng):
    k = mod.function("scalars")
    assert k.params == ("p", "i8", "f4", "f8", "u1", "b1", "i2")
    big, f, d = int(rng.integers(2 ** 40, 2 ** 50)), float(rng.random()), float(rng.random())
    out = np.zeros(6)
    dev.launch(k, 1, 1, (out, big, f, d, 200, True, -7))
    assert out.tolist() == [float(big), float(np.float32(f)), d, 200.0, 1.0, -7.0]
    with pytest.raises(TypeError, match="takes 7 arguments"):
        dev.launch(k, 1, 1, (out, big))


def test_textures(dev, mod, rng):
    h, w = int(rng.integers(2, 9)), int(rng.integers(2, 33))
    f = rng.random((h, w)).astype(np.float32)
    out = np.zeros_like(f)
    t1, t2 = dev.texture(f, "1d"), dev.texture(f, "2d")
    dev.launch(mod.function("textures"), h, w, (int(t1), int(t2), out, w))
    assert np.array_equal(out, f + np.concatenate([f[:, 1:], f[:, -1:]], axis=1))


def test_barrier_in_divergent_code_is_reported(dev, mod):
    a = np.zeros(8, np.int32)
    with pytest.raises(RuntimeError, match="deadlock"):
        dev.launch(mod.function("divergent"), 1, 8, (a,))


def test_plain_kernels_and_the_ucontext_switch(dev, rng):
    """A kernel that cannot wait runs without fibers; the portable ucontext switch gives the same."""
    src = r'''extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }
        extern "C" __global__ void shift(const int* x, int* y) {
        __shared__ int s[32]; s[threadIdx.x] = x[threadIdx.x]; __syncthreads();
        y[threadIdx.x] = s[(threadIdx.x + 1) % 32]; }'''
    k = dev.module(src).function("axpy")
    assert k.plain
    n = int(rng.integers(100, 3000))
    x, y = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    want = y + np.float32(0.5) * x
    dev.launch(k, -(-n // 128), 128, (0.5, x, y, n))
    assert np.array_equal(y, want)
    ku = dev.module(src, options=("-DCUDA_EMU_UCONTEXT",)).function("shift")
    xi, yi = rng.integers(0, 99, 32).astype(np.int32), np.zeros(32, np.int32)
    dev.launch(ku, 1, 32, (xi, yi))
    assert np.array_equal(yi, np.roll(xi, -1))


def test_the_barrier_answer_is_read_once_a_library(dev, rng, monkeypatch):
    """Whether a kernel can wait (``nm`` on its library) is kept beside the library: a later load of the
    same library reads it back without ``nm``, and a damaged note is read again with ``nm``."""
    import os
    import shutil
    import subprocess
    from kernels.gpu.host import device as hd
    c = int(rng.integers(1, 1 << 30))                                  # a library not built before
    src = (f'extern "C" __global__ void waits(int* y) {{ __shared__ int s[32]; s[threadIdx.x] = {c};'
           ' __syncthreads(); y[threadIdx.x] = s[31 - threadIdx.x]; }\n'
           f'extern "C" __global__ void plain(int* y) {{ y[threadIdx.x] = {c}; }}')
    kw, kp = dev.module(src).function("waits"), dev.module(src).function("plain")
    assert not kw.plain and kp.plain
    if shutil.which("nm") is None:
        pytest.skip("no nm here: the source text decides, nothing is kept")
    for k, want in ((kw, True), (kp, False)):
        side = f"{k.lib._name}.meets"
        assert open(side).read() == ("1" if want else "0")
        with monkeypatch.context() as m:                               # no nm now: the note answers
            m.setattr(subprocess, "run", lambda *a, **k: pytest.fail("nm ran again"))
            assert hd.meets(k.lib, "") is want
        open(side, "w").write("?")                                     # damaged: nm again, note rewritten
        os.utime(side, None)
        assert hd.meets(k.lib, "") is want and open(side).read() == ("1" if want else "0")
