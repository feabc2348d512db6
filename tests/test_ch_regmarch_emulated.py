"""Kernel E's register marches — 2D warp march (``ch_fused_wmarch2d``) and 3D z-march with register
z windows (``ch_fused_zreg3d``) — run on the host, every CUDA thread an OS thread (tests/fw_cuda_emu.py's
prelude, warp shuffles through a block barrier), against the NumPy reference RK2 step on fresh random
fields, every boundary, with partial strips / tiles, several chunks and both the 16-byte and the scalar
load path.  The GPU itself runs them in test_ch_gpu.py."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

from kernels import hostcc

pytestmark = pytest.mark.skipif(hostcc.find_compiler() is None, reason="needs a host C++ compiler")

CUDA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels", "cahn_hilliard",
                        "cuda")
PD = 3                             # rows in flight (the GPU default differs: both are template arguments)
TX, TY, NT, NT2 = 8, 4, 64, 96     # 3D: small tiles (a 16×12 frame: 48 groups of 4 cells, 96 of 2)
STUBS = r"""
#define __align__(n) __attribute__((aligned(n)))
typedef unsigned long long cudaTextureObject_t;
struct int2 { int x, y; };
struct float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
template <class T> T tex1Dfetch(cudaTextureObject_t, int) { return T(); }
template <class T> T tex2D(cudaTextureObject_t, float, float) { return T(); }
inline double __hiloint2double(int, int) { return 0.0; }
static double emu_shfl_buf[1024];
template <class T> T emu_shfl(T v, int from) {   // one warp per block: the block barrier is the warp's
    const int t = (int)threadIdx.x;
    emu_shfl_buf[t] = (double)v;
    __syncthreads();
    const T r = (T)emu_shfl_buf[(t & ~31) + from];
    __syncthreads();
    return r;
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d) {
    const int l = (int)threadIdx.x & 31; return emu_shfl(v, l >= (int)d ? l - (int)d : l);
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d) {
    const int l = (int)threadIdx.x & 31; return emu_shfl(v, l + (int)d < 32 ? l + (int)d : l);
}
"""


def _library():
    from tests.fw_cuda_emu import EMU_PRELUDE
    with open(os.path.join(CUDA_DIR, "ch_stencil.cuh")) as fh:
        header = fh.read()
    with open(os.path.join(CUDA_DIR, "ch_regmarch.cuh")) as fh:
        kernel = fh.read()
    src = EMU_PRELUDE + STUBS + header + kernel + "".join(
        f'extern "C" void launch_{bc}(unsigned gx, unsigned gy, void** args) '
        f'{{ emu_invoke(&ch_fused_wmarch2d<double, {bc}, 1, {PD}, 1>, gx, gy, 1, 32, 1, 1, 0, args); }}\n'
        for bc in range(3)) + "".join(
        f'extern "C" void launch3_{vw}_{bc}(unsigned gx, unsigned gy, unsigned gz, void** args) '
        f'{{ emu_invoke(&ch_fused_zreg3d<double, {bc}, {TX}, {TY}, {nt}, 1, 2, {vw}>, gx, gy, gz, {nt}, 1, 1, 0, args); }}\n'
        for bc in range(3) for vw, nt in ((4, NT), (2, NT2)))
    flags = ("-std=c++14", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-pthread")
    return hostcc.compile_library(src, what="the host emulation of the register-march kernels", kind="ch-emu",
                                  prefix="regmarch", flags=flags)


@pytest.fixture(scope="module")
def lib():
    return _library()


# (ny, nx, chunk, vec): two strips with a partial second one; 16-byte path (nx % 4 == 0) and scalar
# path; chunks shorter than the field (a short last chunk) and one chunk covering it all
CASES = [(37, 250, 16, 0), (29, 132, 8, 1), (21, 124, 24, 1)]


@pytest.mark.parametrize("ny,nx,chunk,vec", CASES)
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_wmarch_equals_reference_rk2(lib, boundary, ny, nx, chunk, vec, rng):
    from kernels.backend import Backend
    from kernels.cahn_hilliard import CHParams
    from kernels.cahn_hilliard.steppers import ReferenceStepper
    p = CHParams(dim=2, size=nx, dt=0.01, boundary=boundary, boundary_value=float(rng.uniform(-1, 1)),
                 m=float(rng.uniform(0.5, 1.5)), K=float(rng.uniform(0.5, 1.5)), dtype="float64")
    phi = rng.uniform(-1, 1, (ny, nx))
    ref = np.empty_like(phi)
    st = ReferenceStepper(p, Backend("cpu", np))
    tmp = np.empty_like(phi)
    st.update(phi, phi, 0.5 * p.dt, tmp)         # the reference's two RK2 stages on a non-square box
    st.update(tmp, phi, p.dt, ref)
    out = np.full_like(phi, np.nan)
    vals = [ctypes.c_void_p(phi.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_int(nx), ctypes.c_int(ny),
            ctypes.c_int(chunk), ctypes.c_int(vec)] + [ctypes.c_double(v) for v in (
                0.5 * p.dt, p.dt, p.m, p.b, p.u, p.K, 1.0 / (p.dx * p.dx), p.boundary_value)]
    args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
    fn = getattr(lib, f"launch_{['periodic', 'mirror', 'fixed'].index(boundary)}")
    fn.argtypes, fn.restype = (ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p), None
    fn(-(-nx // 120), -(-ny // chunk), args)
    assert np.isfinite(out).all(), "some outputs were never written"
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


# (nz, ny, nx, chunk, vec): partial tiles in x and y; 16-byte and scalar paths; a short last chunk
CASES3 = [(11, 9, 13, 4, 0), (10, 7, 16, 3, 1), (9, 10, 20, 16, 1)]


@pytest.mark.parametrize("vw", [4, 2])                  # cells per thread
@pytest.mark.parametrize("nz,ny,nx,chunk,vec", CASES3)
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_zreg3d_equals_reference_rk2(lib, boundary, nz, ny, nx, chunk, vec, vw, rng):
    from kernels.backend import Backend
    from kernels.cahn_hilliard import CHParams
    from kernels.cahn_hilliard.steppers import ReferenceStepper
    p = CHParams(dim=3, size=nx, dt=0.004, boundary=boundary, boundary_value=float(rng.uniform(-1, 1)),
                 m=float(rng.uniform(0.5, 1.5)), K=float(rng.uniform(0.5, 1.5)), dtype="float64")
    phi = rng.uniform(-1, 1, (nz, ny, nx))
    ref = np.empty_like(phi)
    st = ReferenceStepper(p, Backend("cpu", np))
    tmp = np.empty_like(phi)
    st.update(phi, phi, 0.5 * p.dt, tmp)
    st.update(tmp, phi, p.dt, ref)
    out = np.full_like(phi, np.nan)
    chunk = min(chunk, nz)
    vals = [ctypes.c_void_p(phi.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_int(nx), ctypes.c_int(ny),
            ctypes.c_int(nz), ctypes.c_int(chunk), ctypes.c_int(vec)] + [ctypes.c_double(v) for v in (
                0.5 * p.dt, p.dt, p.m, p.b, p.u, p.K, 1.0 / (p.dx * p.dx), p.boundary_value)]
    args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
    fn = getattr(lib, f"launch3_{vw}_{['periodic', 'mirror', 'fixed'].index(boundary)}")
    fn.argtypes, fn.restype = (ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p), None
    fn(-(-nx // TX), -(-ny // TY), -(-nz // chunk), args)
    assert np.isfinite(out).all(), "some outputs were never written"
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
