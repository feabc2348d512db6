"""CUDA kernel variants A–E against the NumPy reference stepper (float32 on the CPU).

Every variant × {2D, 3D} × {periodic, mirror, fixed} × {euler, rk2} (E: rk2
only) runs 100 steps from a fresh random field and must match the reference to
‖gpu − ref‖ / ‖ref‖ < 1e-5.  Skipped, with the reason, where no CUDA GPU is usable.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernels.backend import Backend, gpu_available

_ok, _why = gpu_available()
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _ok, reason=f"needs a CUDA GPU with CuPy: {_why}")]

if _ok:
    import cupy as cp
    from kernels.backend import gpu_backend
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper, compiled_kernels
    from kernels.cahn_hilliard.params import CHParams
    from kernels.cahn_hilliard.steppers import ReferenceStepper

VARIANTS = ("A", "B", "C", "D", "E")
BOUNDARIES = ("periodic", "mirror", "fixed")
CPU = Backend("cpu", np)
STEPS = 100
TOL = 1e-5


def _gpu():
    return gpu_backend()


def _field(shape, dtype=np.float32):
    rng = np.random.default_rng()
    mean = rng.choice([0.0, -0.4])
    return (mean + rng.uniform(-0.5, 0.5, size=shape)).astype(dtype)


def _run_pair(p, phi0, steps=STEPS):
    ref = ReferenceStepper(p, CPU).step(phi0.copy(), steps)
    gs = CudaStepper(p, _gpu())
    out = gs.step(cp.asarray(phi0), steps)
    return np.asarray(ref, dtype=np.float64), cp.asnumpy(out).astype(np.float64), gs


def _rel(a, ref):
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


CASES = [(v, d, bc, integ) for v in VARIANTS for d in (2, 3) for bc in BOUNDARIES
         for integ in ("euler", "rk2") if not (v == "E" and integ == "euler")]


@pytest.mark.parametrize("variant,dim,boundary,integrator", CASES,
                         ids=[f"{v}-{d}d-{bc}-{i}" for v, d, bc, i in CASES])
def test_matches_reference(variant, dim, boundary, integrator):
    sizes = (60, 50, 64, 200) if dim == 2 else (24, 29)
    dt = 0.01 if dim == 2 else 0.005
    for n in sizes:
        p = CHParams(dim=dim, size=n, dt=dt, boundary=boundary, boundary_value=-0.8,
                     integrator=integrator, variant=variant)
        phi0 = _field(p.shape)
        ref, got, _ = _run_pair(p, phi0)
        assert np.isfinite(got).all(), f"non-finite output at N={n}"
        err = _rel(got, ref)
        assert err < TOL, f"N={n}: relative error {err:.3g} ≥ {TOL}"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dim", (2, 3))
def test_every_element_written(variant, dim):
    for n, boundary in [(n, bc) for n in ((50, 200) if dim == 2 else (27,)) for bc in BOUNDARIES]:
        p = CHParams(dim=dim, size=n, boundary=boundary, variant=variant, integrator="rk2")
        gs = CudaStepper(p, _gpu())
        src = cp.asarray(_field(p.shape))
        out = cp.full(p.shape, cp.nan, dtype=cp.float32)
        if variant == "E":
            gs.fused_step(src, out)
        else:
            gs.update(src, src, 0.01, out)
        assert bool(cp.isfinite(out).all()), f"{boundary}: unwritten (NaN) elements remain"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dim", (2, 3))
def test_float64(variant, dim):
    n = 36 if dim == 2 else 20
    for boundary in BOUNDARIES:
        p = CHParams(dim=dim, size=n, dt=0.005, boundary=boundary, variant=variant,
                     integrator="rk2", dtype="float64")
        phi0 = _field(p.shape, np.float64)
        ref = ReferenceStepper(p, CPU).step(phi0.copy(), 50)
        got = cp.asnumpy(CudaStepper(p, _gpu()).step(cp.asarray(phi0), 50))
        assert _rel(got, ref) < 1e-11, boundary


@pytest.mark.parametrize("variant", VARIANTS)
def test_live_parameter_change(variant):
    """m, b, u, K, dx, dt, boundary_value change between calls without a stale kernel."""
    p = CHParams(dim=2, size=48, dt=0.01, boundary="fixed", variant=variant, integrator="rk2")
    phi0 = _field(p.shape)
    gs = CudaStepper(p, _gpu())
    ref = ReferenceStepper(p, CPU)
    g = gs.step(cp.asarray(phi0), 10)
    r = ref.step(phi0.copy(), 10)
    q = p.with_changes(m=0.7, b=1.3, u=0.9, K=0.6, dt=0.004, boundary_value=0.3)
    q = CHParams(**{**q.to_dict(), "dx": 1.1})
    gs.set_params(q)
    ref.set_params(q)
    g = gs.step(g, 20)
    r = ref.step(r, 20)
    assert _rel(cp.asnumpy(g).astype(np.float64), r.astype(np.float64)) < TOL


def test_compiled_kernels_listed():
    p = CHParams(dim=2, size=24, variant="A", integrator="euler")
    CudaStepper(p, _gpu()).step(cp.asarray(_field(p.shape)), 1)
    ks = [(n, k) for n, k in compiled_kernels() if isinstance(k, cp.RawKernel)]   # not the host device's
    assert ks and any(n == "ch_point<float, 0, 2, 0>" for n, _ in ks)
    assert all(k.num_regs > 0 for _, k in ks)


def test_texture_paths():
    """C reads a pitched 2D texture when the row pitch is aligned, else a 1D texture."""
    for n, want in ((64, "tex2d"), (50, "tex1d")):
        p = CHParams(dim=2, size=n, variant="C", integrator="euler")
        gs = CudaStepper(p, _gpu())
        gs.step(cp.asarray(_field(p.shape)), 1)
        assert gs.last_read == want, (n, gs.last_read)


@pytest.mark.parametrize("impl", ("generic", "sliding"))
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_fused_other_impls_2d(boundary, impl):
    """The shared-tile 2D fused kernels (tile loops; register sweeps), kept for comparison, also match."""
    for n in (60, 50):
        p = CHParams(dim=2, size=n, dt=0.01, boundary=boundary, boundary_value=-0.8,
                     integrator="rk2", variant="E")
        phi0 = _field(p.shape)
        ref = ReferenceStepper(p, CPU).step(phi0.copy(), STEPS)
        gs = CudaStepper(p, _gpu())
        gs.fused_impl = impl
        got = cp.asnumpy(gs.step(cp.asarray(phi0), STEPS))
        assert _rel(got.astype(np.float64), ref.astype(np.float64)) < TOL


#: (warps per block, rows in flight, rows per warp, min. blocks per SM) of the 2D warp march: the
#: default, several warps per block (whole warps past the last strip return), short chunks (a partial
#: last chunk), a register cap
WMARCH_TEST_SHAPES = [None, (4, 2, 8, 1), (2, 6, 16, 1), (1, 1, 24, 1), (1, 3, 32, 20), (2, 2, 0, 1)]


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_fused_wmarch_shapes_2d(boundary, dtype):
    """Kernel E's 2D warp march for several shapes, on fields whose width is (not) a multiple of 4
    (scalar / 16-byte loads) and of the 120-column strip, against the reference; every element written."""
    tol = TOL if dtype == "float32" else 1e-11
    for ny, nx in ((200, 244), (37, 250), (64, 130)):
        p = CHParams(dim=2, size=nx, dt=0.01, boundary=boundary, boundary_value=-0.7,
                     integrator="rk2", variant="E", dtype=dtype)
        phi0 = _field((ny, nx), np.dtype(dtype))
        ref = ReferenceStepper(p, CPU).step(phi0.copy(), 20).astype(np.float64)
        for shape in WMARCH_TEST_SHAPES:
            gs = CudaStepper(p, _gpu())
            if shape is not None:
                gs.wmarch_shape = {"float": shape, "double": shape}
            src = cp.asarray(phi0)
            out = cp.full_like(src, cp.nan)
            gs.fused_step(src, out)
            assert bool(cp.isfinite(out).all()), (shape, ny, nx)
            got = cp.asnumpy(gs.step(cp.asarray(phi0), 20)).astype(np.float64)
            err = _rel(got, ref)
            assert err < tol, f"shape {shape}, {ny}×{nx}: relative error {err:.3g}"


PAPER_CASES = [(v, d, bc, i) for v in ("B", "D") for d in (2, 3) for bc in BOUNDARIES
               for i in ("euler", "rk2")]


@pytest.mark.parametrize("variant,dim,boundary,integrator", PAPER_CASES,
                         ids=[f"{v}-{d}d-{bc}-{i}" for v, d, bc, i in PAPER_CASES])
def test_paper_tile_layout(variant, dim, boundary, integrator):
    """B/D with the generic tile (2D: the paper's 16×16-thread / 12×12-writer layout) also match."""
    sizes = (60, 50, 64) if dim == 2 else (24, 29)
    dt = 0.01 if dim == 2 else 0.005
    for n in sizes:
        p = CHParams(dim=dim, size=n, dt=dt, boundary=boundary, boundary_value=-0.8,
                     integrator=integrator, variant=variant)
        phi0 = _field(p.shape)
        ref = ReferenceStepper(p, CPU).step(phi0.copy(), STEPS)
        gs = CudaStepper(p, _gpu())
        gs.tile_impl = "paper"
        got = cp.asnumpy(gs.step(cp.asarray(phi0), STEPS))
        assert _rel(got.astype(np.float64), ref.astype(np.float64)) < TOL


@pytest.mark.parametrize("variant", ("B", "D"))
@pytest.mark.parametrize("dim", (2, 3))
def test_paper_layout_every_element_written(variant, dim):
    for boundary in BOUNDARIES:
        p = CHParams(dim=dim, size=50 if dim == 2 else 27, boundary=boundary, variant=variant,
                     integrator="rk2")
        gs = CudaStepper(p, _gpu())
        gs.tile_impl = "paper"
        src = cp.asarray(_field(p.shape))
        out = cp.full(p.shape, cp.nan, dtype=cp.float32)
        gs.update(src, src, 0.01, out)
        assert bool(cp.isfinite(out).all())


#: march shapes (TX, TY, chunk): the default plus one with short chunks, so blocks start
#: mid-field and the last chunk is partial
MARCH_TEST_SHAPES = {2: [None, (32, 1, 7)], 3: [None, (16, 4, 5)]}
MARCH_CASES = PAPER_CASES        # the same B/D × dim × boundary × integrator grid


@pytest.mark.parametrize("variant,dim,boundary,integrator", MARCH_CASES,
                         ids=[f"{v}-{d}d-{bc}-{i}" for v, d, bc, i in MARCH_CASES])
def test_march_layout(variant, dim, boundary, integrator):
    """B/D with the march layout (φ / μ plane rings along y or z) match, for several shapes."""
    sizes = (60, 50, 64) if dim == 2 else (24, 29)
    dt = 0.01 if dim == 2 else 0.005
    for shape in MARCH_TEST_SHAPES[dim]:
        for n in sizes:
            p = CHParams(dim=dim, size=n, dt=dt, boundary=boundary, boundary_value=-0.8,
                         integrator=integrator, variant=variant)
            phi0 = _field(p.shape)
            ref = ReferenceStepper(p, CPU).step(phi0.copy(), STEPS)
            gs = CudaStepper(p, _gpu())
            gs.tile_impl = "march"
            if shape is not None:
                gs.march_shape = {**gs.march_shape, dim: shape}
            got = cp.asnumpy(gs.step(cp.asarray(phi0), STEPS))
            assert np.isfinite(got).all(), (shape, n)
            err = _rel(got.astype(np.float64), ref.astype(np.float64))
            assert err < TOL, f"shape {shape}, N={n}: relative error {err:.3g}"


@pytest.mark.parametrize("variant", ("B", "D"))
@pytest.mark.parametrize("dim", (2, 3))
def test_march_every_element_written(variant, dim):
    for shape in MARCH_TEST_SHAPES[dim]:
        for boundary in BOUNDARIES:
            p = CHParams(dim=dim, size=50 if dim == 2 else 27, boundary=boundary, variant=variant,
                         integrator="rk2")
            gs = CudaStepper(p, _gpu())
            gs.tile_impl = "march"
            if shape is not None:
                gs.march_shape = {**gs.march_shape, dim: shape}
            src = cp.asarray(_field(p.shape))
            for base in (src, cp.asarray(_field(p.shape))):  # stage 1 (base is src) and stage 2
                out = cp.full(p.shape, cp.nan, dtype=cp.float32)
                gs.update(src, base, 0.01, out)
                assert bool(cp.isfinite(out).all()), (shape, boundary)


@pytest.mark.parametrize("variant", ("B", "D"))
def test_march_float64(variant):
    for dim, n in ((2, 36), (3, 20)):
        for boundary in BOUNDARIES:
            p = CHParams(dim=dim, size=n, dt=0.005, boundary=boundary, variant=variant,
                         integrator="rk2", dtype="float64")
            phi0 = _field(p.shape, np.float64)
            ref = ReferenceStepper(p, CPU).step(phi0.copy(), 50)
            gs = CudaStepper(p, _gpu())
            gs.tile_impl = "march"
            got = cp.asnumpy(gs.step(cp.asarray(phi0), 50))
            assert _rel(got, ref) < 1e-11, (dim, boundary)


#: (TX, TY, chunk, min. blocks per SM, planes in flight, cells per thread) of the 3D register
#: z-march: the default, small tiles with short chunks, a register cap, deeper prefetch, 2 cells
ZREG_TEST_SHAPES = [None, (8, 4, 5, 1, 1, 4), (16, 8, 7, 1, 2, 2), (16, 8, 0, 4, 3, 4), (32, 8, 0, 2, 2, 2)]


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_fused_zreg_shapes_3d(boundary, dtype):
    """Kernel E's 3D register z-march for several tile shapes and z chunks, on boxes whose width is
    (not) a multiple of 4 (scalar / 16-byte loads), against the reference; every element written."""
    tol = TOL if dtype == "float32" else 1e-11
    for shape3 in ((21, 26, 36), (19, 23, 30)):
        p = CHParams(dim=3, size=shape3[2], dt=0.005, boundary=boundary, boundary_value=-0.7,
                     integrator="rk2", variant="E", dtype=dtype)
        phi0 = _field(shape3, np.dtype(dtype))
        ref = ReferenceStepper(p, CPU).step(phi0.copy(), 20).astype(np.float64)
        for shape in ZREG_TEST_SHAPES:
            gs = CudaStepper(p, _gpu())
            if shape is not None:
                gs.zreg_shape = {"float": shape, "double": shape}
            src = cp.asarray(phi0)
            out = cp.full_like(src, cp.nan)
            gs.fused_step(src, out)
            assert bool(cp.isfinite(out).all()), (shape, shape3)
            got = cp.asnumpy(gs.step(cp.asarray(phi0), 20)).astype(np.float64)
            err = _rel(got, ref)
            assert err < tol, f"shape {shape}, {shape3}: relative error {err:.3g}"
