"""Multi-GPU Cahn–Hilliard (slab decomposition, paper 001 §4.6) on real GPUs.

The field on P GPUs must equal the single-GPU field bit for bit after 1000
steps (same kernel, same operation order): periodic and fixed boundaries, 1
and 2 GPUs, every exchange mode, with and without overlap and CUDA graphs.
Two slabs on one GPU (devices [0, 0]) exercise the same code on single-GPU
machines.  Skipped, with the reason, where no CUDA GPU is usable; the 2-GPU
cases also where only one GPU is present.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernels.backend import gpu_available

_ok, _why = gpu_available()
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _ok, reason=f"needs a CUDA GPU with CuPy: {_why}")]

if _ok:
    import cupy as cp
    from kernels.backend import gpu_backend
    from kernels.cahn_hilliard import multigpu
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    from kernels.cahn_hilliard.multigpu import MultiGPUStepper
    from kernels.cahn_hilliard.params import CHParams
    NGPU = cp.cuda.runtime.getDeviceCount()
else:
    NGPU = 0

two_gpus = pytest.mark.skipif(NGPU < 2, reason=f"needs 2 GPUs (this host has {NGPU})")
STEPS = 1000


def _field(shape, rng, dtype=np.float32):
    return (rng.choice([0.0, -0.4]) + rng.uniform(-0.5, 0.5, size=shape)).astype(dtype)


def _single(p, phi0, steps):
    with cp.cuda.Device(0):
        return cp.asnumpy(CudaStepper(p, gpu_backend()).step(cp.asarray(phi0), steps))


def _multi(p, phi0, steps, devices, exchange="p2p", split_at=None, **kw):
    st = MultiGPUStepper(p, gpu_backend(), devices, exchange, **kw)
    with cp.cuda.Device(0):
        phi = cp.asarray(phi0)
        if split_at:   # two calls: the second must not re-scatter a stale field
            phi = st.step(phi, split_at)
            phi = st.step(phi, steps - split_at)
        else:
            phi = st.step(phi, steps)
        return cp.asnumpy(phi), st


def _assert_same(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape
    diff = np.flatnonzero(a.view(np.uint8) != b.view(np.uint8))
    assert diff.size == 0, (f"{what}: {diff.size} bytes differ, max |Δ| = "
                            f"{np.nanmax(np.abs(a.astype(np.float64) - b)):.3g}")


# 1000 steps, 2D and 3D, periodic and fixed, the default two-pass kernel (B) and fused E
CASES = [(dim, bc, var) for dim in (2, 3) for bc in ("periodic", "fixed") for var in ("B", "E")]


@pytest.mark.parametrize("dim,bc,variant", CASES)
@pytest.mark.parametrize("devices", [pytest.param([0], id="1gpu"),
                                     pytest.param([0, 1], id="2gpu", marks=two_gpus),
                                     pytest.param([0, 0], id="2slabs-1gpu")])
def test_bit_identical_1000_steps(dim, bc, variant, devices, rng):
    n = 192 if dim == 2 else 48
    p = CHParams(dim=dim, size=n, boundary=bc, boundary_value=-0.7, variant=variant, dt=0.01)
    phi0 = _field(p.shape, rng)
    ref = _single(p, phi0, STEPS)
    got, st = _multi(p, phi0, STEPS, devices, split_at=STEPS // 2 + 1)
    assert len(st.slabs) == len(devices)
    assert np.isfinite(ref).all() and np.abs(ref - phi0).max() > 1e-3   # it evolved
    _assert_same(got, ref, f"{len(devices)} slabs {dim}D {bc} {variant}")


@two_gpus
@pytest.mark.parametrize("exchange", ["host", "p2p", "nccl"])
@pytest.mark.parametrize("overlap,graph", [(True, False), (False, False), (True, True)])
def test_exchange_modes_bit_identical(exchange, overlap, graph, rng):
    p = CHParams(dim=2, size=256, boundary="periodic", variant="B")
    phi0 = _field(p.shape, rng)
    ref = _single(p, phi0, 300)
    got, st = _multi(p, phi0, 300, [0, 1], exchange, overlap=overlap, graph=graph)
    assert st.exchange == exchange, st.notes
    assert st.graph == graph, st.notes
    _assert_same(got, ref, f"{exchange} overlap={overlap} graph={graph}")


@pytest.mark.parametrize("dim,k", [(2, "2"), (2, "4"), (3, "2"), (3, "3")])
@pytest.mark.parametrize("devices,graph", [pytest.param([0, 1], True, id="2gpu-graph", marks=two_gpus),
                                           pytest.param([0, 0], False, id="2slabs-1gpu")])
def test_kernel_e_k_steps_per_exchange_bit_identical(dim, k, devices, graph, rng):
    """Issue 38: kernel E, k fused steps per pass and one exchange of a 4k halo per k steps, equals one
    GPU's single steps bit for bit (1000 + 1 steps: a remainder of single-step passes)."""
    n = 256 if dim == 2 else 64
    kw = dict(dim=dim, size=n, boundary="periodic", variant="E", dt=0.01)
    phi0 = _field(CHParams(**kw).shape, rng)
    ref = _single(CHParams(**kw, steps_per_pass="1"), phi0, STEPS + 1)
    got, st = _multi(CHParams(**kw, steps_per_pass=k), phi0, STEPS + 1, devices, graph=graph)
    assert st.steps_per_pass() == int(k) and st.radius == 4 * int(k), st.notes
    _assert_same(got, ref, f"{dim}D k={k} {devices}")


@pytest.mark.parametrize("variant,integrator", [("A", "euler"), ("C", "rk2"), ("D", "rk2"),
                                                ("B", "euler")])
@pytest.mark.parametrize("bc", ["mirror", "periodic"])
def test_other_variants_two_slabs(variant, integrator, bc, rng):
    """Texture (C, D) and point (A) kernels on views of the padded slabs."""
    devices = [0, 1] if NGPU >= 2 else [0, 0]
    p = CHParams(dim=2, size=160, boundary=bc, variant=variant, integrator=integrator,
                 dtype="float64" if variant == "C" else "float32")
    phi0 = _field(p.shape, rng, p.dtype)
    _assert_same(_multi(p, phi0, 200, devices, graph=True)[0], _single(p, phi0, 200),
                 f"{variant} {integrator} {bc}")


def test_three_uneven_slabs_3d(rng):
    p = CHParams(dim=3, size=40, boundary="periodic", variant="B")
    phi0 = _field(p.shape, rng)
    devices = [0, 1, 0] if NGPU >= 2 else [0, 0, 0]
    got, st = _multi(p, phi0, 100, devices)
    assert [s.rows for s in st.slabs] == [14, 13, 13]
    _assert_same(got, _single(p, phi0, 100), "3 uneven slabs")


def test_missing_gpu_falls_back_with_a_note():
    be = gpu_backend()
    devs, notes = multigpu.resolve_devices([0, NGPU + 3], be)
    assert devs == [0] and "not present" in notes[0] and str(NGPU + 3) in notes[0]


def test_out_of_memory_device_is_dropped(monkeypatch, rng):
    p = CHParams(dim=2, size=128, variant="B")
    st = MultiGPUStepper(p, gpu_backend(), [0, 1] if NGPU >= 2 else [0, 0])
    real = st.ops.free_bytes
    calls = {"n": 0}

    def fake(dev):   # the second slab's device reports no free memory
        calls["n"] += 1
        return 1000 if calls["n"] == 2 else real(dev)
    monkeypatch.setattr(st.ops, "free_bytes", fake)
    phi0 = _field(p.shape, rng)
    with cp.cuda.Device(0):
        out = cp.asnumpy(st.step(cp.asarray(phi0), 50))
    assert len(st.slabs) == 1 and any("out of memory" in n for n in st.notes), st.notes
    _assert_same(out, _single(p, phi0, 50), "after dropping a GPU")


def test_simulation_cli_path_on_gpus(rng):
    from kernels.cahn_hilliard import CahnHilliard
    be = gpu_backend()
    p = CHParams(size=128, variant="E", gpus=2, seed=int(rng.integers(1 << 30)))
    sim = CahnHilliard(p, be)
    sim.step(60)
    info = sim.decomposition()
    assert info["gpus"] == min(2, NGPU) and not info.get("virtual_gpus")
    single = CahnHilliard(p.with_changes(gpus=1), be)
    single.step(60)
    _assert_same(sim.field_numpy(), single.field_numpy(), "CahnHilliard gpus=2")
    # a live switch back to one GPU keeps the field
    sim.set_params(gpus=1)
    sim.step(10); single.step(10)
    _assert_same(sim.field_numpy(), single.field_numpy(), "after gpus 2 → 1")
