"""Kernel E's register marches — 2D warp march (``ch_fused_wmarch2d``) and 3D z-march with register
z windows (``ch_fused_zreg3d``) — as CUDA source run on the CPU (the library host backend: kernels.gpu's
host device, warp shuffles as warp collectives, through CudaStepper) against the NumPy reference RK2 step
on fresh random fields, every boundary, with partial strips / tiles, several chunks and both the 16-byte
and the scalar load path.  The GPU itself runs them in test_ch_gpu.py."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import gpu
from kernels.backend import Backend
from kernels.cahn_hilliard import CHParams
from kernels.cahn_hilliard.cuda_stepper import CudaStepper
from kernels.cahn_hilliard.steppers import ReferenceStepper

pytestmark = pytest.mark.skipif(not gpu.available("host"), reason="needs the host device (a C++ compiler)")

CPU = Backend("cpu", np)
PD = 3                             # rows in flight (the GPU default differs: both are template arguments)
TX, TY = 8, 4                      # 3D: small tiles (a 16×12 frame: 48 groups of 4 cells, 96 of 2)


def _reference(p, phi):
    st = ReferenceStepper(p, CPU)
    tmp, ref = np.empty_like(phi), np.empty_like(phi)
    st.update(phi, phi, 0.5 * p.dt, tmp)         # the reference's two RK2 stages on a non-square box
    st.update(tmp, phi, p.dt, ref)
    return ref


def _params(rng, dim, size, boundary):
    return CHParams(dim=dim, size=size, dt=0.01 if dim == 2 else 0.004, boundary=boundary,
                    boundary_value=float(rng.uniform(-1, 1)), m=float(rng.uniform(0.5, 1.5)),
                    K=float(rng.uniform(0.5, 1.5)), dtype="float64", variant="E")


# (ny, nx, chunk, vec): two strips with a partial second one; 16-byte path (nx % 4 == 0) and scalar
# path; chunks shorter than the field (a short last chunk) and one chunk covering it all
CASES = [(37, 250, 16, 0), (29, 132, 8, 1), (21, 124, 24, 1)]


@pytest.mark.parametrize("ny,nx,chunk,vec", CASES)
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_wmarch_equals_reference_rk2(boundary, ny, nx, chunk, vec, rng):
    p = _params(rng, 2, nx, boundary)
    phi = rng.uniform(-1, 1, (ny, nx))
    e = CudaStepper(p, CPU)
    e.fused_impl, e.wmarch_shape = "wmarch", {"double": (1, PD, chunk, 1)}
    assert e.vec_ok(phi) == bool(vec)
    out = e.fused_step(phi, np.full_like(phi, np.nan))
    assert np.isfinite(out).all(), "some outputs were never written"
    np.testing.assert_allclose(out, _reference(p, phi), rtol=1e-12, atol=1e-12)


# (nz, ny, nx, chunk, vec): partial tiles in x and y; 16-byte and scalar paths; a short last chunk
CASES3 = [(11, 9, 13, 4, 0), (10, 7, 16, 3, 1), (9, 10, 20, 16, 1)]


@pytest.mark.parametrize("vw", [4, 2])                  # cells per thread
@pytest.mark.parametrize("nz,ny,nx,chunk,vec", CASES3)
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_zreg3d_equals_reference_rk2(boundary, nz, ny, nx, chunk, vec, vw, rng):
    p = _params(rng, 3, nx, boundary)
    phi = rng.uniform(-1, 1, (nz, ny, nx))
    e = CudaStepper(p, CPU)
    e.fused_impl3d, e.zreg_shape = "zreg", {"double": (TX, TY, chunk, 1, 2, vw)}
    assert e.vec_ok(phi) == bool(vec)
    out = e.fused_step(phi, np.full_like(phi, np.nan))
    assert np.isfinite(out).all(), "some outputs were never written"
    np.testing.assert_allclose(out, _reference(p, phi), rtol=1e-12, atol=1e-12)
