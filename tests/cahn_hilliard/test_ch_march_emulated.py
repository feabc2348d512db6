"""Kernel E's 3D z-march with shared plane rings (``ch_fused_march3d``) as CUDA source run on the CPU —
the library host backend (kernels.gpu's host device, through CudaStepper) — against the NumPy reference
RK2 step, on fresh random fields, every boundary, with partial tiles and several z chunks.  The GPU
itself runs it in test_ch_gpu.py."""
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
TX, TY = 8, 4                      # small blocks: 32 threads, several tiles per plane


@pytest.mark.parametrize("chunk", [4, 3, 16])          # 11 planes: a short last chunk; one chunk
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_march_equals_reference_rk2(boundary, chunk, rng):
    nz, ny, nx = 11, 9, 13                        # partial tiles in x and y; chunks of 4 planes in z
    p = CHParams(dim=3, size=nx, dt=0.004, boundary=boundary, boundary_value=float(rng.uniform(-1, 1)),
                 m=float(rng.uniform(0.5, 1.5)), K=float(rng.uniform(0.5, 1.5)), dtype="float64", variant="E")
    phi = rng.uniform(-1, 1, (nz, ny, nx))
    ref = np.empty_like(phi)
    st = ReferenceStepper(p, CPU)
    tmp = np.empty_like(phi)
    st.update(phi, phi, 0.5 * p.dt, tmp)         # the reference's two RK2 stages on a non-cubic box
    st.update(tmp, phi, p.dt, ref)
    e = CudaStepper(p, CPU)
    e.fused_impl3d, e.fused_march_shape = "march", {"double": (TX, TY, chunk)}
    out = e.fused_step(phi, np.full_like(phi, np.nan))
    assert e.emulated and np.isfinite(out).all(), "some outputs were never written"
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
