"""Kernel E's 3D z-march (``ch_fused_march3d``) run on the host — every CUDA thread an OS thread
(tests/fw_cuda_emu.py's prelude) — against the NumPy reference RK2 step, on fresh random fields,
every boundary, with partial tiles and several z chunks.  The GPU itself runs it in test_ch_gpu.py."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

from kernels import hostcc

pytestmark = pytest.mark.skipif(hostcc.find_compiler() is None, reason="needs a host C++ compiler")

CUDA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels", "cahn_hilliard",
                        "cuda")
TX, TY = 8, 4                      # small blocks: 32 threads, several tiles per plane
STUBS = r"""
#define __align__(n) __attribute__((aligned(n)))
typedef unsigned long long cudaTextureObject_t;
struct int2 { int x, y; };
struct float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
template <class T> T tex1Dfetch(cudaTextureObject_t, int) { return T(); }
template <class T> T tex2D(cudaTextureObject_t, float, float) { return T(); }
inline double __hiloint2double(int, int) { return 0.0; }
"""


def _library():
    from tests.fw_cuda_emu import EMU_PRELUDE
    with open(os.path.join(CUDA_DIR, "ch_stencil.cuh")) as fh:
        header = fh.read()
    with open(os.path.join(CUDA_DIR, "ch_kernels.cu")) as fh:
        body = fh.read()
    kernel = body[body.index("// ---- E, 3D, z-march"):]
    src = EMU_PRELUDE + STUBS + header + kernel + "".join(
        f'extern "C" void launch_{bc}(unsigned gx, unsigned gy, unsigned gz, void** args) '
        f'{{ emu_invoke(&ch_fused_march3d<double, {bc}, {TX}, {TY}>, gx, gy, gz, {TX * TY}, 1, 1, 0, args); }}\n'
        for bc in range(3))
    flags = ("-std=c++14", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-pthread")
    return hostcc.compile_library(src, what="the host emulation of ch_fused_march3d", kind="ch-emu",
                                  prefix="march", flags=flags)


@pytest.fixture(scope="module")
def lib():
    return _library()


@pytest.mark.parametrize("chunk", [4, 3, 16])          # 11 planes: a short last chunk; one chunk
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_march_equals_reference_rk2(lib, boundary, chunk, rng):
    from kernels.backend import Backend
    from kernels.cahn_hilliard import CHParams
    from kernels.cahn_hilliard.steppers import ReferenceStepper
    nz, ny, nx = 11, 9, 13                        # partial tiles in x and y; chunks of 4 planes in z
    p = CHParams(dim=3, size=nx, dt=0.004, boundary=boundary, boundary_value=float(rng.uniform(-1, 1)),
                 m=float(rng.uniform(0.5, 1.5)), K=float(rng.uniform(0.5, 1.5)), dtype="float64")
    phi = rng.uniform(-1, 1, (nz, ny, nx))
    ref = np.empty_like(phi)
    st = ReferenceStepper(p, Backend("cpu", np))
    tmp = np.empty_like(phi)
    st.update(phi, phi, 0.5 * p.dt, tmp)         # the reference's two RK2 stages on a non-cubic box
    st.update(tmp, phi, p.dt, ref)
    out = np.full_like(phi, np.nan)
    chunk = min(chunk, nz)
    vals = [ctypes.c_void_p(phi.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_int(nx), ctypes.c_int(ny),
            ctypes.c_int(nz), ctypes.c_int(chunk)] + [ctypes.c_double(v) for v in (
                0.5 * p.dt, p.dt, p.m, p.b, p.u, p.K, 1.0 / (p.dx * p.dx), p.boundary_value)]
    args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
    fn = getattr(lib, f"launch_{['periodic', 'mirror', 'fixed'].index(boundary)}")
    fn.argtypes, fn.restype = (ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p), None
    fn(-(-nx // TX), -(-ny // TY), -(-nz // chunk), args)
    assert np.isfinite(out).all(), "some outputs were never written"
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
