"""The GPU layer (kernels.gpu): per-device memoization, the launch registry, the timing helper.

A stand-in device (compiling is counting) checks the plumbing without a GPU; the ``gpu``-marked
tests check the CUDA device on real hardware.
"""
import os
import random
import sys
import time
from importlib.resources import files

import numpy as np
import pytest

from kernels import gpu, launches
from kernels.errors import BackendUnavailable
from kernels.gpu.device import Device


class FakeKernel:
    def __init__(self, name, serial):
        self.name, self.serial = name, serial
        self.attributes = {"num_regs": 0}


class FakeModule:
    def __init__(self, spec, serial):
        self.spec, self.serial = spec, serial

    def get_function(self, name):
        return FakeKernel(name, self.serial)


class FakeDevice(Device):
    """Compiles by counting; ``dev_id`` stands for the current CUDA device."""
    kind = "fake"
    xp = np

    def __init__(self):
        super().__init__()
        self.dev_id, self.compiles, self.runs = 0, [], []

    def current_id(self):
        return self.dev_id

    def compile(self, spec):
        self.compiles.append((self.dev_id, spec))
        return FakeModule(spec, len(self.compiles))

    def run(self, kernel, grid, block, args, shared_mem=0, cooperative=False):
        self.runs.append((kernel.name, grid, block, shared_mem))


@pytest.fixture
def dev():
    gpu.forget_compiled("fake")
    launches.forget("test-system")
    d = FakeDevice()
    yield d
    gpu.forget_compiled("fake")
    launches.forget("test-system")


def _source():
    # fresh text each run, so no earlier memo entry can answer
    return f'extern "C" __global__ void k{random.randrange(1 << 30)}() {{}}\n'


def test_a_module_compiles_once_per_device_and_configuration(dev):
    src = _source()
    k1 = dev.module(src, options=("-std=c++17",), system="test-system").function("k")
    k2 = dev.module(src, options=("-std=c++17",), system="test-system").function("k")
    assert k1 is k2 and len(dev.compiles) == 1
    dev.module(src, options=("-std=c++14",), system="test-system").function("k")
    assert len(dev.compiles) == 2                        # other options: another module
    dev.dev_id = 1                                       # another device: compiled again there
    k3 = dev.module(src, options=("-std=c++17",), system="test-system").function("k")
    assert k3 is not k1 and len(dev.compiles) == 3 and dev.compiles[-1][0] == 1
    dev.dev_id = 0
    assert dev.module(src, options=("-std=c++17",), system="test-system").function("k") is k1
    assert gpu.compiled_count("fake") == 3


def test_name_expressions_are_part_of_the_key_and_checked(dev):
    src = _source()
    a = dev.module(src, name_expressions=["f<int>"], system="test-system")
    b = dev.module(src, name_expressions=["f<float>"], system="test-system")
    a.function("f<int>")
    b.function("f<float>")
    assert len(dev.compiles) == 2
    with pytest.raises(KeyError):
        a.function("f<float>")


def test_every_function_is_recorded_and_launch_updates_its_shape(dev):
    src = _source()
    mod = dev.module(src, system="test-system", prefix="TS")
    k = mod.function("k", block=128, shared_mem=64)
    (ln,) = launches.recorded("test-system")
    assert (ln.name, ln.kernel, ln.block, ln.dynamic_smem) == ("TS k", k, 128, 64)
    g = mod.function("g", label="g<float> tile 8")
    assert launches.recorded("test-system")[1].name == "TS g<float> tile 8"
    assert launches.recorded("test-system")[1].block == gpu.DEFAULT_BLOCK
    bx, by = random.choice([(8, 4), (16, 16), (32, 2)])
    dev.launch(g, (3, 2), (bx, by), (), shared_mem=256)
    assert dev.runs == [("g", (3, 2), (bx, by), 256)]
    rec = {x.name: x for x in launches.recorded("test-system")}["TS g<float> tile 8"]
    assert (rec.block, rec.dynamic_smem) == (bx * by, 256)
    assert [x.name for x in launches.recorded("test-system")] == ["TS k", "TS g<float> tile 8"]   # order kept
    mod.function("g", block=64)                          # told another shape: recorded at once …
    assert {x.name: x for x in launches.recorded("test-system")}["TS g<float> tile 8"].block == 64
    dev.launch(g, 1, (bx, by), (), shared_mem=256)       # … and the next launch's shape wins again
    rec = {x.name: x for x in launches.recorded("test-system")}["TS g<float> tile 8"]
    assert (rec.block, rec.dynamic_smem) == (bx * by, 256)


def test_sources_from_paths_and_resources_include_their_folder(dev, tmp_path):
    p = tmp_path / "k.cu"
    p.write_text(_source())
    mod = dev.module(p, system="test-system")
    assert mod.spec.source == p.read_text() and f"-I{tmp_path}" in mod.spec.options
    res = files("kernels.graphs") / "cuda" / "bfs.cu"
    mod = dev.module(res, system="test-system")
    assert mod.spec.source == res.read_text() and mod.spec.folder and os.path.isdir(mod.spec.folder)
    with pytest.raises(TypeError):
        dev.module(b"bytes are not source", system="test-system")


def test_host_timing_measures_wall_clock():
    d = random.uniform(0.002, 0.006)
    t = gpu.timing.time_calls(lambda: time.sleep(d), repeat=3, warmup=1)
    assert len(t) == 3 and all(s >= d for s in t.samples)
    assert t.best <= t.median <= max(t.samples) and t.mean >= d
    calls = []
    gpu.timing.time_calls(lambda: calls.append(1), repeat=4, warmup=2)
    assert len(calls) == 6
    with gpu.timing.Stopwatch() as sw:
        time.sleep(d)
    assert sw.done() and sw.seconds >= d and sw.ms == pytest.approx(sw.seconds * 1e3)
    with pytest.raises(ValueError):
        gpu.timing.time_calls(lambda: None, repeat=0)


def test_host_timing_waits_for_the_device_first():
    class Slow:
        kind = "host"
        waited = 0

        def synchronize(self):
            Slow.waited += 1
    gpu.timing.time_calls(lambda: None, repeat=2, warmup=0, device=Slow())
    assert Slow.waited == 4                               # before and after each call


def test_unknown_kinds_and_backends_are_refused():
    with pytest.raises(ValueError):
        gpu.device("opencl")
    with pytest.raises(ValueError):
        gpu.device_for("tpu")


def test_the_host_device_is_emulated_or_reported_missing():
    try:
        dev = gpu.device("host")
    except BackendUnavailable as exc:
        assert "host" in str(exc)
        return
    assert dev.emulated and dev.xp is np and gpu.device_for("cpu") is dev


def test_launch_shapes_become_cupy_tuples():
    from kernels.gpu.cuda import dims
    n = random.randrange(1, 1 << 20)
    assert dims(n) == (n,) and dims(np.int64(n)) == (n,) and dims([n, 2]) == (n, 2) and dims((n, 2, 3)) == (n, 2, 3)


def test_without_cupy_the_cuda_device_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)         # import cupy -> ImportError
    from kernels.gpu.cuda import CudaDevice
    with pytest.raises(BackendUnavailable):
        CudaDevice()


# ------------------------------------------------------------------------------------- on a GPU

@pytest.mark.gpu
def test_cuda_device_memoizes_records_and_launches():
    import cupy as cp
    dev = gpu.device("cuda")
    assert not dev.emulated and dev.xp is cp and dev.sms > 0
    n = random.randrange(1000, 5000)
    src = (f'extern "C" __global__ void add_{n}(const int* a, int* b, int n) {{\n'
           "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] + 1; }\n")
    before = gpu.compiled_count("cuda")
    k = dev.module(src, system="gpu-test").function(f"add_{n}")
    assert dev.module(src, system="gpu-test").function(f"add_{n}") is k
    assert gpu.compiled_count("cuda") == before + 1
    a = cp.asarray(np.random.default_rng().integers(-1000, 1000, n, dtype=np.int32))
    b = cp.zeros_like(a)
    dev.launch(k, ((n + 127) // 128,), (128,), (a, b, np.int32(n)))
    dev.synchronize()
    assert np.array_equal(cp.asnumpy(b), cp.asnumpy(a) + 1)
    b.fill(0)
    dev.launch(k, (n + 127) // 128, 128, (a, b, np.int32(n)))      # ints as well as tuples
    dev.synchronize()
    assert np.array_equal(cp.asnumpy(b), cp.asnumpy(a) + 1)
    (ln,) = launches.recorded("gpu-test")
    assert ln.block == 128 and ln.kernel is k
    occ, regs, lim = gpu.launch_occupancy(k, 128, 0)
    assert 0 < occ <= 1 and regs == k.attributes["num_regs"] and lim
    grid, block = dev.potential_block(k)
    assert grid > 0 and 0 < block <= 1024 and dev.active_blocks(k, block) > 0
    t = gpu.timing.time_calls(lambda: dev.launch(k, ((n + 127) // 128,), (128,), (a, b, np.int32(n))),
                              repeat=5, device=dev)
    assert len(t) == 5 and 0 < t.median < 1.0
    launches.forget("gpu-test")


@pytest.mark.gpu
def test_cuda_modules_are_per_device():
    import cupy as cp
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    src = f'extern "C" __global__ void z{random.randrange(1 << 30)}(int* a) {{ a[0] = 0; }}\n'
    name = src.split("void ")[1].split("(")[0]
    dev = gpu.device("cuda")
    with cp.cuda.Device(0):
        k0 = dev.module(src, system="gpu-test").function(name)
    with cp.cuda.Device(1):
        k1 = dev.module(src, system="gpu-test").function(name)
        assert dev.module(src, system="gpu-test").function(name) is k1
    assert k0 is not k1
    pinned = gpu.device("cuda", 1)
    assert pinned.module(src, system="gpu-test").function(name) is k1
    launches.forget("gpu-test")


# ------------------------------------------------------------------------ launch-registry providers

def test_providers_compile_on_demand_and_record_once():
    calls = []
    kern = FakeKernel("k", 0)
    key = f"test-key-{random.randrange(1 << 30)}"
    block = random.choice([64, 128, 256])

    def factory():
        calls.append(1)
        return launches.Launch(f"TS {key}", kern, block, 0, "test-system")
    launches.provide(key, factory)
    try:
        assert key in launches.provided()
        ln = launches.resolve(key)
        assert (ln.kernel, ln.block) == (kern, block) and calls == [1]
        assert [x.name for x in launches.recorded("test-system")] == [f"TS {key}"]
        launches.resolve(key)                            # the factory answers again, one entry stays
        assert len(calls) == 2 and len(launches.recorded("test-system")) == 1
        with pytest.raises(KeyError):
            launches.resolve(key + "-unknown")
    finally:
        launches.forget("test-system")


def test_compilers_and_sweep_cases_are_registered_by_name():
    ran = []
    name = f"test-compiler-{random.randrange(1 << 30)}"
    launches.provide_compiler(name, lambda: ran.append(name))
    try:
        assert launches.compile_all([name]) == [name] and ran == [name]
        size = random.randrange(10, 100)
        launches.provide_sweep(name, lambda n: launches.SweepCase(name, None, lambda b: None, n, "cells"))
        assert launches.sweep_case(name, size).work == size and name in launches.sweep_kernels()
        with pytest.raises(ValueError):
            launches.sweep_case(name + "-unknown", size)
    finally:                                 # the app's tables hold only the app's entries afterwards
        launches.COMPILERS.unregister(name)
        launches.SWEEPS.unregister(name)


def test_the_app_provides_the_occupancy_presets_kernels():
    """kernels.app_kernels names the FW preset kernels without importing Graphs at import time; the
    names must be fw_gpu's (the presets file names two of them)."""
    from kernels import app_kernels
    from kernels.graphs.apsp.fw_gpu import PRESET_KERNELS
    assert set(app_kernels.FW_PRESETS) == set(PRESET_KERNELS)
    assert set(app_kernels.FW_PRESETS) <= set(launches.provided())
    assert set(app_kernels.SWEEP_CASES) <= set(launches.sweep_kernels())


@pytest.mark.gpu
def test_occupancy_presets_resolve_to_kernels_compiled_here():
    """The FW preset kernels reach the Occupancy workspace through the registry, compiled for this GPU
    with the threads per block the thesis launches them with."""
    from kernels import app_kernels
    from kernels.gpu.occupancy import kernel_resources
    from kernels.graphs.apsp.fw_gpu import PRESET_KERNELS
    for key in app_kernels.FW_PRESETS:
        ln = launches.resolve(key)
        res = kernel_resources(ln.kernel)
        assert ln.block == PRESET_KERNELS[key][2] and res["registers"] > 0
        assert any(x.kernel is ln.kernel for x in launches.recorded())
