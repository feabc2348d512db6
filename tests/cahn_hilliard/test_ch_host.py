"""Cahn–Hilliard kernels A–E as CUDA source run on the CPU (the host device of kernels.gpu: the same
``cuda/ch_kernels.cu`` compiled by the host C++ compiler after the CUDA prelude) against the NumPy
reference stepper, on fresh random fields: every variant in 2D and 3D, Euler and RK2, each boundary,
non-square boxes with partial tiles.  The host does not contract a·b + c into FMAs, so float64 agrees
with the reference to rounding (1e-12).  The size guard and the CLI's ``"emulated": true`` too.

Fast cases cover each variant × dimension once (boundaries and integrators rotate); the full matrix
(and float32) is marked slow.  The GPU-vs-host bit-for-bit check is in test_ch_host_gpu.py."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kernels import gpu
from kernels.backend import Backend
from kernels.cahn_hilliard import CHParams
from kernels.cahn_hilliard.cuda_stepper import CudaStepper, check_host_size, host_limit_cells
from kernels.cahn_hilliard.steppers import ReferenceStepper, make_stepper
from kernels.errors import GridTooLarge

pytestmark = pytest.mark.skipif(not gpu.available("host"), reason="needs the host device (a C++ compiler)")

CPU = Backend("cpu", np)
#: 2D boxes (ny, nx) and 3D boxes (nz, ny, nx): not square, partial tiles / strips / chunks everywhere
BOX = {2: (37, 130), 3: (11, 9, 14)}
#: (variant, dim, boundary, integrator): each variant × dimension once, boundaries and integrators rotating
FAST = [("A", 2, "periodic", "rk2"), ("A", 3, "fixed", "euler"),
        ("B", 2, "mirror", "rk2"), ("B", 3, "periodic", "rk2"),
        ("C", 2, "fixed", "euler"), ("C", 3, "mirror", "rk2"),
        ("D", 2, "periodic", "rk2"), ("D", 3, "fixed", "rk2"),
        ("E", 2, "fixed", "rk2"), ("E", 3, "mirror", "rk2")]
SLOW = [(v, d, bc, i) for v in "ABCDE" for d in (2, 3) for bc in ("periodic", "mirror", "fixed")
        for i in ("euler", "rk2") if not (v == "E" and i == "euler") and (v, d, bc, i) not in FAST]


def _params(rng, variant, dim, boundary, integrator, dtype="float64"):
    return CHParams(dim=dim, size=BOX[dim][-1], dt=0.01 if dim == 2 else 0.004, boundary=boundary,
                    boundary_value=float(rng.uniform(-1, 1)), m=float(rng.uniform(0.5, 1.5)),
                    K=float(rng.uniform(0.5, 1.5)), integrator=integrator, variant=variant, dtype=dtype)


def _pair(p, phi, steps=2, **attrs):
    ref = ReferenceStepper(p, CPU).step(phi.copy(), steps)
    st = CudaStepper(p, CPU)
    for k, v in attrs.items():
        setattr(st, k, v)
    out = st.step(phi.copy(), steps)
    return np.asarray(out, np.float64), np.asarray(ref, np.float64), st


def _check(p, rng, steps=2, tol=1e-12, **attrs):
    dt = np.float64 if p.dtype == "float64" else np.float32
    phi = rng.uniform(-1, 1, BOX[p.dim]).astype(dt)
    out, ref, st = _pair(p, phi, steps, **attrs)
    assert st.emulated and isinstance(out, np.ndarray)
    if p.variant in ("C", "D"):                     # the texture readers, as on the GPU
        assert st.last_read == ("tex2d" if p.dim == 2 else "tex1d")
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)
    return st


@pytest.mark.parametrize("variant,dim,boundary,integrator", FAST, ids=["-".join(map(str, c)) for c in FAST])
def test_host_kernel_equals_reference(variant, dim, boundary, integrator, rng):
    _check(_params(rng, variant, dim, boundary, integrator), rng)


@pytest.mark.slow
@pytest.mark.parametrize("variant,dim,boundary,integrator", SLOW, ids=["-".join(map(str, c)) for c in SLOW])
def test_host_kernel_equals_reference_all(variant, dim, boundary, integrator, rng):
    _check(_params(rng, variant, dim, boundary, integrator), rng)


@pytest.mark.slow
@pytest.mark.parametrize("variant,dim", [(v, d) for v in "ABCDE" for d in (2, 3)])
def test_host_kernel_float32(variant, dim, rng):
    _check(_params(rng, variant, dim, str(rng.choice(["periodic", "mirror", "fixed"])), "rk2", "float32"), rng,
           tol=2e-5)


@pytest.mark.slow
@pytest.mark.parametrize("variant,attrs", [("B", {"tile_impl": "paper"}), ("B", {"tile_impl": "march"}),
                                           ("D", {"tile_impl": "paper"}), ("E", {"fused_impl": "sliding"}),
                                           ("E", {"fused_impl": "generic"}), ("E", {"fused_impl3d": "march"}),
                                           ("E", {"fused_impl3d": "generic"})])
@pytest.mark.parametrize("dim", [2, 3])
def test_host_other_layouts(variant, attrs, dim, rng):
    _check(_params(rng, variant, dim, str(rng.choice(["periodic", "mirror", "fixed"])), "rk2"), rng, **attrs)


def test_make_stepper_runs_cuda_variants_on_the_cpu_backend(rng):
    p = _params(rng, "E", 2, "periodic", "rk2").with_changes(size=64)
    st = make_stepper(p, CPU)
    assert isinstance(st, CudaStepper) and st.emulated
    assert any("CUDA source run on the CPU" in n for n in st.notes)


def test_size_guard_names_the_limit():
    p = CHParams(dim=2, size=64, variant="E")
    check_host_size(p, 1)                          # small: runs
    most = host_limit_cells(p, 1000)
    big = p.with_changes(size=int((most * 4) ** 0.5) + 1)
    with pytest.raises(GridTooLarge, match=r"limit 30 s: at most [\d,]+ cells"):
        check_host_size(big, 1000)
    huge = CHParams(dim=3, size=1024, variant="A")
    with pytest.raises(GridTooLarge, match="CUDA source run on the CPU"):
        CudaStepper(huge, CPU)


def test_cli_json_says_emulated(capsys):
    from cli import main as cli_main
    rc = cli_main(["--backend", "cpu", "ch", "--variant", "E", "--size", "64", "--steps", "4",
                   "--record-every", "2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["emulated"] is True and out["variant"] == "E"


def test_cli_refuses_a_run_over_the_limit(capsys):
    from cli import main as cli_main
    rc = cli_main(["--backend", "cpu", "ch", "--variant", "A", "--size", "2048", "--steps", "100000"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("error:") == 1 and "limit 30 s" in err
