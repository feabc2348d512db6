"""Paper 000's layouts chosen through CHParams (block_layout strips / rectangles for A and C; tile
paper / sweep / march for B and D) against the NumPy reference, and the layout rows of the Reproduce
runner.  Fresh random fields; ‖gpu − ref‖ / ‖ref‖ < 1e-5 after 60 RK2 steps."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.backend import Backend, gpu_available

_ok, _why = gpu_available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _ok, reason=f"needs a CUDA GPU with CuPy: {_why}")]

CPU = Backend("cpu", np)
CASES = ([(v, 2, bc, dict(block_layout=bl)) for v in ("A", "C") for bl in ("strips", "rectangles")
          for bc in ("periodic", "mirror", "fixed")]
         + [(v, 3, "fixed", dict(block_layout="strips")) for v in ("A", "C")]
         + [(v, 2, bc, dict(tile=t)) for v in ("B", "D") for t in ("paper", "sweep", "march")
            for bc in ("periodic", "mirror", "fixed")]
         + [(v, 3, bc, dict(tile=t)) for v in ("B", "D") for t in ("paper", "march") for bc in ("periodic", "fixed")])


@pytest.mark.parametrize("variant,dim,boundary,opts", CASES,
                         ids=[f"{v}-{d}d-{bc}-{'-'.join(o.values())}" for v, d, bc, o in CASES])
def test_layout_matches_reference(variant, dim, boundary, opts):
    import cupy as cp

    from kernels.backend import make
    from kernels.cahn_hilliard.params import CHParams
    from kernels.cahn_hilliard.steppers import ReferenceStepper, make_stepper
    rng = np.random.default_rng()
    for n in ((60, 77) if dim == 2 else (24, 29)):       # 60: a multiple of the paper's 12; 77: of nothing
        p = CHParams(dim=dim, size=n, dt=0.01 if dim == 2 else 0.005, boundary=boundary, boundary_value=-0.8,
                     integrator="rk2", variant=variant, **opts)
        phi0 = rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)
        ref = ReferenceStepper(p, CPU).step(phi0.copy(), 60).astype(np.float64)
        st = make_stepper(p, make("gpu"))
        got = cp.asnumpy(st.step(cp.asarray(phi0), 60)).astype(np.float64)
        err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
        assert err < 1e-5, f"N={n}: relative error {err:.3g}"


def test_layout_rows():
    from kernels.cahn_hilliard import fig10
    rows = list(fig10.run_fig10([256, 512], list(fig10.LAYOUTS), budget=0.05))
    assert {r.method for r in rows} == set(fig10.LAYOUTS) and all(r.gpus == 1 and r.per_1024 > 0 for r in rows)
    verdicts = fig10.LAYOUT_TIMES.claims(rows)
    assert len(verdicts) == 4 and all(h is not None for _c, h, _w in verdicts)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
def test_fused_march_3d_several_chunks(boundary, dtype):
    """Kernel E's 3D z-marches (register z windows, the default; shared plane rings) with partial tiles
    and several z chunks (70 planes: 64 + 6; chunks of 16 / 24), and the 3D tile kernel, against the
    reference."""
    import cupy as cp

    from kernels.backend import make
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    from kernels.cahn_hilliard.params import CHParams
    from kernels.cahn_hilliard.steppers import ReferenceStepper
    rng = np.random.default_rng()
    p = CHParams(dim=3, size=70, dt=0.005, boundary=boundary, boundary_value=-0.6, integrator="rk2",
                 variant="E", dtype=dtype)
    phi0 = rng.uniform(-0.5, 0.5, p.shape).astype(dtype)
    ref = ReferenceStepper(p, CPU).step(phi0.copy(), 20).astype(np.float64)
    for attrs in ({}, {"zreg_shape": {"float": (16, 8, 16, 1, 3, 2), "double": (8, 4, 24, 1, 2, 4)}},
                  {"fused_impl3d": "march"},
                  {"fused_impl3d": "march", "fused_march_shape": {"float": (32, 16, 16), "double": (32, 8, 16)}},
                  {"fused_impl3d": "generic"}):
        st = CudaStepper(p, make("gpu"))
        for k, v in attrs.items():
            setattr(st, k, v)
        got = cp.asnumpy(st.step(cp.asarray(phi0), 20)).astype(np.float64)
        err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
        assert err < (1e-5 if dtype == "float32" else 1e-12), f"{attrs}: relative error {err:.3g}"
