"""Slab decomposition with halo exchange (paper 001 §4.6) on virtual GPUs (NumPy).

The scheduling, halo widths, global boundaries and exchange paths are the same
code the GPUs run; here slabs are NumPy arrays and copies are synchronous.
The decomposed field must equal the whole-array reference bit for bit.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from kernels.cahn_hilliard import CahnHilliard, multigpu
from kernels.cahn_hilliard.multigpu import MultiGPUStepper, resolve_devices, split_rows
from kernels.cahn_hilliard.params import CHParams
from kernels.cahn_hilliard.steppers import ReferenceStepper
from kernels.errors import InvalidParameter
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)



def _field(shape, rng, dtype=np.float64):
    return (rng.choice([0.0, -0.4]) + rng.uniform(-0.5, 0.5, size=shape)).astype(dtype)


def _same(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


CASES = [
    # dim, n, boundary, integrator, slabs, exchange, overlap
    (2, 48, "periodic", "rk2", 2, "host", True),
    (2, 45, "periodic", "euler", 3, "p2p", True),
    (2, 37, "fixed", "rk2", 4, "host", False),
    (2, 30, "mirror", "rk2", 3, "p2p", True),
    (3, 20, "periodic", "rk2", 2, "host", True),
    (3, 17, "fixed", "euler", 3, "p2p", False),
    (3, 16, "mirror", "rk2", 2, "host", True),
    (2, 16, "periodic", "rk2", 1, "host", True),
]


@pytest.mark.parametrize("dim,n,bc,integ,P,exchange,overlap", CASES)
def test_virtual_slabs_equal_whole_array_bit_for_bit(dim, n, bc, integ, P, exchange, overlap,
                                                     cpu, rng):
    p = CHParams(dim=dim, size=n, boundary=bc, integrator=integ, dtype="float64",
                 boundary_value=float(rng.uniform(-1, 1)))
    phi0 = _field(p.shape, rng)
    ref = ReferenceStepper(p, cpu).step(phi0.copy(), 40)
    st = MultiGPUStepper(p, cpu, list(range(P)), exchange, overlap=overlap)
    phi = phi0.copy()
    phi = st.step(phi, 17)
    phi = st.step(phi, 23)
    assert len(st.slabs) == P
    assert np.abs(ref - phi0).max() > 1e-4       # the field evolved
    assert _same(phi, ref), np.abs(phi - ref).max()


def test_halo_layout_and_neighbours(cpu):
    p = CHParams(size=40, boundary="fixed")
    st = MultiGPUStepper(p, cpu, [0, 1, 2])
    st.scatter(np.zeros(p.shape))
    s = st.slabs
    assert [(x.y0, x.y1) for x in s] == [(0, 14), (14, 27), (27, 40)]
    # a fixed/mirror field's outer slabs have no halo on the outside: the kernel's rule applies
    assert [(x.pt, x.pb) for x in s] == [(0, 2), (2, 2), (2, 0)]
    assert [(x.up, x.down) for x in s] == [(None, 1), (0, 2), (1, None)]
    per = MultiGPUStepper(p.with_changes(boundary="periodic"), cpu, [0, 1])
    per.scatter(np.zeros(p.shape))
    assert [(x.pt, x.pb, x.up, x.down) for x in per.slabs] == [(2, 2, 1, 1), (2, 2, 0, 0)]


def test_scatter_fills_periodic_halos_with_wrapped_rows(cpu, rng):
    p = CHParams(size=24)
    phi = _field(p.shape, rng)
    st = MultiGPUStepper(p, cpu, [0, 1])
    st.scatter(phi)
    s0, s1 = st.slabs
    b0 = s0.bufs[st._role[0]]
    assert _same(b0[:2], phi[-2:]) and _same(b0[2:14], phi[:12]) and _same(b0[14:], phi[12:14])
    assert _same(s1.bufs[st._role[0]][-2:], phi[:2])


def test_split_rows_is_balanced_and_covers():
    for n, parts in [(10, 3), (4096, 2), (7, 7), (100, 6)]:
        r = split_rows(n, parts)
        assert r[0][0] == 0 and r[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(r, r[1:]))
        sizes = [b - a for a, b in r]
        assert max(sizes) - min(sizes) <= 1


def test_set_field_midrun_is_rescattered(cpu, rng):
    p = CHParams(size=32, gpus=2, dtype="float64")
    sim = CahnHilliard(p, cpu)
    one = CahnHilliard(p.with_changes(gpus=1), cpu)
    sim.step(5); one.step(5)
    new = _field(p.shape, rng)
    sim.set_field(new); one.set_field(new)
    sim.step(7); one.step(7)
    assert _same(sim.field_numpy(), one.field_numpy())


def test_live_switch_between_one_and_several_gpus(cpu):
    p = CHParams(size=32, dtype="float64")
    sim, one = CahnHilliard(p, cpu), CahnHilliard(p, cpu)
    sim.step(4); one.step(4)
    assert sim.set_params(gpus=3, exchange="host") == []
    info = sim.decomposition()
    assert info["gpus"] == 3 and info["virtual_gpus"] and info["exchange"] == "host"
    sim.step(6); one.step(6)
    sim.set_params(gpus=1)
    assert sim.decomposition()["gpus"] == 1
    sim.step(3); one.step(3)
    assert _same(sim.field_numpy(), one.field_numpy())


def test_too_many_slabs_fall_back_with_a_note(cpu):
    sim = CahnHilliard(CHParams(size=12, gpus=5), cpu)
    assert sim.decomposition()["gpus"] == 3            # 12 rows / (2·halo 2) = 3 slabs at most
    assert any("at most 3 slabs" in n for n in sim.notes)


def test_kernel_e_needs_halo_4_and_spectral_stays_single(cpu):
    st = MultiGPUStepper(CHParams(size=32, variant="reference"), cpu, [0, 1])
    assert st.radius == 2
    sim = CahnHilliard(CHParams(size=32, gpus=2, integrator="spectral"), cpu)
    assert sim.decomposition()["gpus"] == 1
    assert any("spectral" in n for n in sim.notes)


def test_out_of_memory_slab_device_is_dropped(cpu, rng, monkeypatch):
    p = CHParams(size=32, dtype="float64")
    st = MultiGPUStepper(p, cpu, [0, 1, 2])
    real = st.ops.free_bytes
    monkeypatch.setattr(st.ops, "free_bytes", lambda d: 10 if d == 1 else real(d))
    phi0 = _field(p.shape, rng)
    out = st.step(phi0.copy(), 9)
    assert [s.device for s in st.slabs] == [0, 2]
    assert any("GPU 1 is out of memory" in n for n in st.notes)
    assert _same(out, ReferenceStepper(p, cpu).step(phi0.copy(), 9))


def test_resolve_devices_and_invalid_input(cpu):
    devs, notes = resolve_devices(3, cpu)
    assert devs == [0, 1, 2] and "virtual GPUs" in notes[0]
    assert resolve_devices(1, cpu) == ([0], [])
    with pytest.raises(InvalidParameter):
        resolve_devices(0, cpu)
    for bad in (dict(gpus=0), dict(gpus=2.5), dict(exchange="mpi")):
        with pytest.raises(InvalidParameter):
            CHParams(**bad).validate()
    with pytest.raises(InvalidParameter, match="exchange"):
        MultiGPUStepper(CHParams(), cpu, [0, 1], exchange="smoke")


@pytest.mark.parametrize("variant", ["B", "E"])
def test_cuda_variants_on_virtual_gpus_equal_one_device_bit_for_bit(cpu, rng, variant):
    """Without a GPU the slabs run the CUDA kernels' source on the CPU (the host device): every cell is
    written by the same kernel from the same neighbour values as on one device."""
    from kernels import gpu
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    if not gpu.available("host"):
        pytest.skip("needs the host device (a C++ compiler)")
    p = CHParams(size=40, variant=variant, boundary=str(rng.choice(["periodic", "mirror", "fixed"])),
                 boundary_value=0.3, dtype="float64")
    phi0 = _field(p.shape, rng).astype(np.float64)
    st = MultiGPUStepper(p, cpu, [0, 1, 2])
    assert st.emulated
    out = st.step(phi0.copy(), 4)
    assert all(s.op.emulated for s in st.slabs)
    assert np.array_equal(out, CudaStepper(p, cpu).step(phi0.copy(), 4))


def test_nccl_on_virtual_gpus_falls_back_to_host(cpu):
    st = MultiGPUStepper(CHParams(size=16), cpu, [0, 1], exchange="nccl")
    assert st.exchange == "host" and "NCCL" in st.notes[0]


def test_offered_gpus_env(cpu, monkeypatch):
    monkeypatch.delenv(multigpu.VIRTUAL_ENV, raising=False)
    assert multigpu.offered_gpus(cpu) == 1
    monkeypatch.setenv(multigpu.VIRTUAL_ENV, "4")
    assert multigpu.offered_gpus(cpu) == 4
    monkeypatch.setenv(multigpu.VIRTUAL_ENV, "lots")
    assert multigpu.offered_gpus(cpu) == 1


def _cli(*args):
    return subprocess.run([sys.executable, "main.py", "ch", "--backend", "cpu", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_gpus_json_and_bit_identical_field(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    r = _cli("--size", "40", "--steps", "30", "--gpus", "2", "--exchange", "host", "--json",
             "--save-field", str(a))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["gpus"] == 2 and out["slab_rows"] == [[0, 20], [20, 40]] and out["exchange"] == "host"
    assert _cli("--size", "40", "--steps", "30", "--save-field", str(b)).returncode == 0
    assert _same(np.load(a)["phi"], np.load(b)["phi"])


def test_cli_bad_gpus_is_one_line():
    r = _cli("--size", "16", "--steps", "1", "--gpus", "-1")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "gpus" in r.stderr


@pytest.mark.parametrize("k", ["2", "3"])
def test_kernel_e_k_steps_per_exchange_on_virtual_gpus_bit_for_bit(cpu, rng, k):
    """Issue 38: kernel E with k fused steps per pass exchanges a 4k-wide halo once per k steps; the
    field equals one device's single steps bit for bit (a step count not divisible by k included)."""
    from kernels import gpu
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    if not gpu.available("host"):
        pytest.skip("needs the host device (a C++ compiler)")
    bc = str(rng.choice(["periodic", "mirror", "fixed"]))
    kw = dict(size=int(rng.integers(40, 56)), variant="E", boundary=bc, boundary_value=0.3, dtype="float64")
    p = CHParams(**kw, steps_per_pass=k)
    phi0 = _field(p.shape, rng)
    st = MultiGPUStepper(p, cpu, [0, 1], str(rng.choice(["host", "p2p"])), overlap=bool(rng.integers(2)))
    steps = 2 * int(k) + int(rng.integers(1, int(k)))
    out = st.step(phi0.copy(), steps)
    assert st.steps_per_pass() == int(k) and st.radius == 4 * int(k)
    assert np.abs(out - phi0).max() > 1e-4
    assert _same(out, CudaStepper(CHParams(**kw, steps_per_pass="1"), cpu).step(phi0.copy(), steps))
