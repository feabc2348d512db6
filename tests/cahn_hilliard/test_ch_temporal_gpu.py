"""Kernel E's temporal blocking on the GPU (issue #38): a k-step pass (2D warp march
``ch_fused_wmarch2d_tb`` and shared tile ``ch_fused_tb``, 3D register z-march ``ch_fused_zreg3d_tb`` and
shared tile) equals k single steps of kernel
E BIT FOR BIT on fresh random fields — both compiled by NVRTC with the same options, every value from
the same ch_stencil.cuh expressions — every boundary, float32 and float64, partial tiles, k = 2, 3, 4;
and CudaStepper.step with a remainder.  The CPU twin is test_ch_temporal.py (host device)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.backend import gpu_available

_ok, _why = gpu_available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _ok, reason=f"needs a CUDA GPU with CuPy: {_why}")]

BOUNDARIES = ("periodic", "mirror", "fixed")
BOX = {2: (301, 1030), 3: (37, 45, 70)}      # not multiples of the tiles / strips
ALL = [(d, b, t, k, i) for d in (2, 3) for i in (("wmarch", "tile") if d == 2 else ("zreg", "tile"))
       for b in BOUNDARIES for t in ("float32", "float64") for k in (2, 3, 4)]
# the default set (NVRTC compiles each k-step kernel once, the k = 4 ones are large): every dimension ×
# kernel × boundary once, dtype and k rotating among the cases that fit an H100's shared memory (3D z-march:
# float k ≤ 3, double k = 2; 3D tile: float k = 2); the rest is marked slow
FAST = [(2, "periodic", "float32", 2, "wmarch"), (2, "mirror", "float64", 3, "wmarch"),
        (2, "fixed", "float32", 4, "wmarch"), (2, "periodic", "float64", 2, "tile"),
        (2, "mirror", "float32", 3, "tile"), (2, "fixed", "float64", 4, "tile"),
        (3, "periodic", "float32", 2, "zreg"), (3, "mirror", "float64", 2, "zreg"),
        (3, "fixed", "float32", 3, "zreg"), (3, "periodic", "float32", 2, "tile"),
        (3, "mirror", "float32", 2, "tile"), (3, "fixed", "float32", 2, "tile")]
CASES = FAST + [pytest.param(*c, marks=pytest.mark.slow) for c in ALL if c not in FAST]


def _stepper(p):
    from kernels.backend import gpu_backend
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    return CudaStepper(p, gpu_backend())


def _params(rng, dim, shape, boundary, dtype, **kw):
    from kernels.cahn_hilliard import CHParams
    return CHParams(dim=dim, size=shape[-1], dt=0.01 if dim == 2 else 0.004, boundary=boundary,
                    boundary_value=float(rng.uniform(-1, 1)), m=float(rng.uniform(0.5, 1.5)),
                    K=float(rng.uniform(0.5, 1.5)), dtype=dtype, variant="E", **kw)


def _id(c):
    d, b, t, k, i = c.values if hasattr(c, "values") else c
    return f"{d}d-{b}-{t}-k{k}-{i}"


@pytest.mark.parametrize("dim,boundary,dtype,k,impl", CASES, ids=[_id(c) for c in CASES])
def test_gpu_fused_k_steps_equal_k_single_steps_bit_for_bit(dim, boundary, dtype, k, impl, rng):
    import cupy as cp
    shape = BOX[dim]
    p = _params(rng, dim, shape, boundary, dtype, steps_per_pass=str(k))
    st = _stepper(p)
    if dim == 2:
        st.fused_impl = "wmarch" if impl == "wmarch" else "generic"
    else:
        st.fused_impl3d = "zreg" if impl == "zreg" else "generic"
    if st.steps_per_pass() < k:
        pytest.skip(f"{k} steps of a {dim}D {dtype} tile do not fit the GPU's shared memory")
    phi = cp.asarray(rng.uniform(-1, 1, shape).astype(dtype))
    single = _stepper(p.with_changes(steps_per_pass="1"))     # kernel E's default single step
    a, b = phi.copy(), cp.empty_like(phi)
    for _ in range(k):
        single.fused_step(a, b)
        a, b = b, a
    got = st.fused_steps(phi.copy(), cp.full_like(phi, cp.nan), k)
    assert bool(cp.isfinite(got).all()), "some outputs were never written"
    assert not bool(cp.array_equal(a, phi))
    np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(a))


@pytest.mark.parametrize("dim", [2, 3])
def test_gpu_step_with_remainder(dim, rng):
    import cupy as cp
    shape = (130, 515) if dim == 2 else (40, 33, 50)
    p = _params(rng, dim, shape, str(rng.choice(BOUNDARIES)), "float32", steps_per_pass="2")
    phi = cp.asarray(rng.uniform(-1, 1, shape).astype(np.float32))
    got = _stepper(p).step(phi.copy(), 7)
    want = _stepper(p.with_changes(steps_per_pass="1")).step(phi.copy(), 7)
    np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want))
