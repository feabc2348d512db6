"""The compiled multi-threaded CPU stepper (variant cpu-threads, paper 001 §4) against the NumPy
reference, on fresh random fields and coefficients, every boundary, dimension and dtype."""
import json

import numpy as np
import pytest

from kernels import hostcc
from kernels.backend import Backend
from kernels.cahn_hilliard import CahnHilliard, CHParams
from kernels.cahn_hilliard import cpu_threads
from kernels.cahn_hilliard.steppers import ReferenceStepper, make_stepper
from kernels.errors import BackendUnavailable, InvalidParameter

pytestmark = pytest.mark.skipif(hostcc.find_compiler() is None, reason="needs a host C++ compiler")


def random_params(rng, **kw):
    """Coefficients drawn fresh (dt well inside the explicit limit)."""
    p = CHParams(m=float(rng.uniform(0.5, 1.5)), b=float(rng.uniform(0.5, 1.5)), u=float(rng.uniform(0.5, 1.5)),
                 K=float(rng.uniform(0.5, 1.5)), dx=float(rng.uniform(0.9, 1.3)),
                 boundary_value=float(rng.uniform(-1, 1)), **kw)
    from kernels.cahn_hilliard.params import stability_limit
    return p.with_changes(dt=0.3 * stability_limit(p))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("boundary", ["periodic", "mirror", "fixed"])
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("integrator", ["euler", "rk2"])
def test_equals_numpy_reference(dim, boundary, dtype, integrator, cpu, rng):
    n = int(rng.integers(9, 40)) if dim == 2 else int(rng.integers(8, 15))    # odd sizes too
    p = random_params(rng, dim=dim, size=n, boundary=boundary, dtype=dtype, integrator=integrator,
                      variant="cpu-threads", threads=int(rng.integers(1, 5)))
    phi = rng.uniform(-1, 1, p.shape).astype(dtype)
    ref = ReferenceStepper(p.with_changes(variant="reference"), cpu).step(phi.copy(), 7).copy()
    st = make_stepper(p, cpu)
    assert isinstance(st, cpu_threads.ThreadedStepper)
    got = st.step(phi.copy(), 7)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    # the C++ performs the reference's operations in its order and precision: equal to the last bit
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dim", [2, 3])
def test_thread_count_does_not_change_the_result(dim, cpu, rng):
    n = 67 if dim == 2 else 21
    p = random_params(rng, dim=dim, size=n, boundary=str(rng.choice(["periodic", "mirror", "fixed"])),
                      variant="cpu-threads", threads=1)
    phi = rng.uniform(-1, 1, p.shape).astype(np.float32)
    one = make_stepper(p, cpu).step(phi.copy(), 4).copy()
    many = make_stepper(p.with_changes(threads=5), cpu).step(phi.copy(), 4)
    np.testing.assert_array_equal(one, many)
    assert not np.array_equal(one, phi)            # it did step


def test_simulation_switches_variant_live_and_keeps_the_run(cpu, rng):
    """A run that switches reference → cpu-threads mid-way equals one that never switched."""
    p = CHParams(size=32, seed=int(rng.integers(0, 2**31)), dt=0.02)
    a = CahnHilliard(p, cpu)
    b = CahnHilliard(p, cpu)
    a.step(20)
    b.step(10)
    assert b.set_params(variant="cpu-threads", threads=2) == []
    assert isinstance(b.stepper, cpu_threads.ThreadedStepper)
    b.step(10)
    np.testing.assert_array_equal(a.field_numpy(), b.field_numpy())
    b.set_params(threads=1)                       # live, same stepper
    assert b.stepper.threads == 1


def test_threads_option_validated():
    with pytest.raises(InvalidParameter, match="threads"):
        CHParams(threads=-1).validate()
    with pytest.raises(InvalidParameter, match="threads"):
        CHParams(threads=True).validate()
    assert cpu_threads.resolve_threads(0) >= 1 and cpu_threads.resolve_threads(3) == 3


def test_gpu_backend_is_refused_with_a_message():
    fake_gpu = Backend("gpu", np)
    with pytest.raises(BackendUnavailable, match="CPU backend"):
        make_stepper(CHParams(variant="cpu-threads"), fake_gpu)


def test_cuda_variant_on_cpu_without_the_host_device_names_the_cpu_choices(monkeypatch, cpu):
    """A–E run on the CPU backend as CUDA source on the host; where the host device cannot run (no
    compiler), the message names the CPU variants."""
    from kernels import gpu

    def unavailable(backend):
        raise BackendUnavailable("no C++ compiler found")
    monkeypatch.setattr(gpu, "device_for", unavailable)
    with pytest.raises(BackendUnavailable, match="host C.. compiler.*cpu-threads"):
        make_stepper(CHParams(variant="B"), cpu)


def test_no_compiler_gives_a_clear_message(monkeypatch, cpu):
    monkeypatch.setattr(cpu_threads, "_lib", None)
    monkeypatch.setattr(hostcc, "find_compiler", lambda: None)
    with pytest.raises(BackendUnavailable, match="no C.. compiler.*g\\+\\+"):
        make_stepper(CHParams(variant="cpu-threads"), cpu)


def test_multi_gpu_request_is_noted_not_split(cpu):
    st = make_stepper(CHParams(variant="cpu-threads", gpus=2), cpu)
    assert isinstance(st, cpu_threads.ThreadedStepper)
    assert any("host cores" in n for n in st.notes)


def test_cli_ch_threads(tmp_path):
    from support.cli_calls import cli
    r = cli("ch", "--size", "24", "--steps", "20", "--variant", "cpu-threads", "--threads", "2", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["variant"] == "cpu-threads" and out["threads"] == 2
    ref = json.loads(cli("ch", "--size", "24", "--steps", "20", "--json").stdout)
    assert out["free_energy_final"] == ref["free_energy_final"]
    bad = cli("ch", "--size", "24", "--steps", "2", "--threads", "-3")
    assert bad.returncode == 2 and bad.stderr.count("error:") == 1 and "threads" in bad.stderr
