"""Cahn–Hilliard kernels A–E: the host path (CUDA source run on the CPU) against the GPU on fresh random
fields.  The kernels are deterministic (no atomics, fixed summation order), so with the GPU built without
FMA contraction (``--fmad=false``: the host's arithmetic) the two fields are identical bit for bit; with
the default build (a·b + c contracted into FMAs) they agree to rounding."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import gpu
from kernels.backend import Backend, gpu_available

_ok, _why = gpu_available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _ok, reason=f"needs a CUDA GPU with CuPy: {_why}"),
              pytest.mark.skipif(not gpu.available("host"), reason="needs the host device (a C++ compiler)")]

CPU = Backend("cpu", np)
CASES = [(v, d, dt) for v in "ABCDE" for d in (2, 3) for dt in ("float32", "float64")]


def _run(p, phi, backend, options=None):
    from kernels.cahn_hilliard.cuda_stepper import OPTIONS, CudaStepper
    st = CudaStepper(p, backend)
    st.options = OPTIONS + tuple(options or ())
    x = st.xp.array(phi)                  # a copy: step() uses its input as a buffer
    out = st.step(x, 3)
    return out.get() if hasattr(out, "get") else out, st


@pytest.mark.parametrize("variant,dim,dtype", CASES, ids=[f"{v}-{d}d-{t}" for v, d, t in CASES])
def test_host_equals_gpu_bit_for_bit_without_fma(variant, dim, dtype, rng):
    from kernels.backend import gpu_backend
    from kernels.cahn_hilliard import CHParams
    box = (45, 150) if dim == 2 else (13, 11, 20)
    p = CHParams(dim=dim, size=box[-1], dt=0.01 if dim == 2 else 0.004,
                 boundary=str(rng.choice(["periodic", "mirror", "fixed"])), boundary_value=float(rng.uniform(-1, 1)),
                 integrator=str(rng.choice(["euler", "rk2"])) if variant != "E" else "rk2", variant=variant,
                 dtype=dtype)
    phi = rng.uniform(-1, 1, box).astype(dtype)
    host, hs = _run(p, phi, CPU)
    dev, ds = _run(p, phi, gpu_backend(), ("--fmad=false",))
    assert hs.emulated and not ds.emulated
    assert np.array_equal(host, dev), f"max |host − gpu| = {np.abs(host - dev).max()}"
    fma, _ = _run(p, phi, gpu_backend())
    tol = 1e-12 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(fma, host, rtol=tol, atol=tol)
