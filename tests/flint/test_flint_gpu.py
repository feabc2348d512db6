"""Flint GPU runtimes (paper 004 §5.5–5.6): IS (bytecode interpreter) and TS (generated CUDA C) agree
with the NumPy runtime to 1e-10 relative in float64, for ensembles, rings, Euler and RK4."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from kernels.backend import gpu_available
from kernels.errors import SimulationBlowUp
from support.paths import ROOT

OK, WHY = gpu_available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not OK, reason=f"no GPU: {WHY}")]


@pytest.fixture(scope="module")
def lr():
    from kernels.flint import load_model
    return load_model("luo_rudy_1991.flint")


def _close(a, b):
    """1e-10 relative, per variable scaled by its magnitude (gates can be ~1e-8)."""
    scale = np.abs(b).max(axis=(0, 2), keepdims=True)
    err = np.abs(a - b) / np.maximum(scale, 1e-300)
    assert err.max() <= 1e-10, err.max()


def _run(lr, runtime, steps, **kw):
    from kernels.flint import Simulation
    sim = Simulation(lr, runtime=runtime, **kw)
    return sim.advance(steps, 0.01, every=25)[1], sim


@pytest.mark.parametrize("integrator, steps", [("euler", 2500), ("rk4", 1300)])
def test_is_ts_numpy_agree_ensemble(lr, integrator, steps):
    kw = dict(n=256, member_params={"g_Na": np.linspace(15, 25, 256), "g_si": np.linspace(0.06, 0.1, 256)},
              integrator=integrator)
    ref, _ = _run(lr, "cpu", steps, **kw)
    for rt in ("is", "ts"):
        got, _ = _run(lr, rt, steps, **kw)
        _close(got, ref)
    assert ref[:, 0].max() > 20            # the upstroke is inside the window


def test_is_ts_numpy_agree_ring(lr):
    from kernels.flint import Network
    from kernels.flint.runtimes import network_stimulus
    net = Network("ring", 40, "V", 2.0)
    kw = dict(network=net, member_params=network_stimulus(lr, 40))
    ref, _ = _run(lr, "cpu", 3000, **kw)
    for rt in ("is", "ts"):
        got, _ = _run(lr, rt, 3000, **kw)
        _close(got, ref)
    line = Network("line", 40, "V", 2.0)
    ref, _ = _run(lr, "cpu", 1500, network=line, member_params=network_stimulus(lr, 40), integrator="rk4")
    got, _ = _run(lr, "ts", 1500, network=line, member_params=network_stimulus(lr, 40), integrator="rk4")
    _close(got, ref)


def test_is_optimisations_off_identical_on_gpu(lr):
    from kernels.flint import CompileOptions
    kw = dict(n=64, member_params={"g_Na": np.linspace(15, 25, 64)})
    base, _ = _run(lr, "is", 1500, **kw)
    for flag in CompileOptions.names():
        off = dataclasses.replace(CompileOptions(), **{flag: False})
        got, _ = _run(lr, "is", 1500, options=off, **kw)
        assert np.array_equal(got, base), flag


def test_float32_and_block_tuning(lr):
    got, sim = _run(lr, "ts", 1500, n=1000, dtype="float32")
    ref, _ = _run(lr, "cpu", 1500, n=1)
    assert got.dtype == np.float32
    assert np.abs(got[:, 0, 0] - ref[:, 0, 0]).max() < 0.5
    assert len(sim.block_history) >= 2 and sim.block_size % 32 == 0
    got, _ = _run(lr, "is", 1500, n=100, dtype="float32")
    assert np.abs(got[:, 0, 0] - ref[:, 0, 0]).max() < 0.5


def test_cli_gpu_runtimes():
    outs = {}
    for rt in ("is", "ts", "cpu"):
        r = subprocess.run([sys.executable, "main.py", "flint", "luo_rudy_1991", "--t-end", "50", "--runtime", rt,
                            "--record", "V", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs[rt] = json.loads(r.stdout)
    for rt in ("is", "ts"):
        assert abs(outs[rt]["variables"]["V"]["max"] - outs["cpu"]["variables"]["V"]["max"]) < 1e-8


def _loop_pair(lr, monkeypatch, steps, every, cells, record, runtime="ts", **kw):
    """The same run twice on TS (or IS): many steps a launch, and one launch a step (issue 23)."""
    from kernels.flint import Simulation
    from kernels.flint.runtimes import RUNTIMES
    out = {}
    for loop in (True, False):
        monkeypatch.setattr(RUNTIMES[runtime], "loop_enabled", loop)
        sim = Simulation(lr, runtime=runtime, **kw)
        assert sim.engine.loops() is loop
        try:
            a = sim.advance(steps // 3, 0.01, record=record, every=every, cells=cells)
            b = sim.advance(steps - steps // 3, 0.01, record=record, every=every, cells=cells)
        except SimulationBlowUp as e:            # float32 LR: a cell's V can land on a removable
            out[loop] = (None, str(e), sim.state(), sim)       # singularity (0/0, e.g. V = -47.13)
            continue
        out[loop] = (np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]), sim.state(), sim)
    return out[True], out[False]


def _same_blow_up(a, b) -> bool:
    """Whether one of the pair blew up; then both must have, at the same time, with the same states
    (NaNs included): bit-identical paths fail identically."""
    if a[0] is not None and b[0] is not None:
        return False
    assert a[0] is None and b[0] is None and a[1] == b[1], (a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    return True


def _check_loop_equals_step(lr, monkeypatch, cls, integrator, dtype, steps, choice=None):
    """Runtime ``cls`` many steps a launch against one launch a step, bit for bit (odd launch lengths:
    a short tuning window, a tiny launch target; recorded cells with repeats; the class settings in
    ``choice``), the stimulus firing inside the loop, ≈ NumPy in float64; or the same blow-up."""
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    n = int(rng.integers(100, 3000 if dtype == "float64" else 300))   # float32: fewer cells near 0/0
    monkeypatch.setattr(cls, "TUNE_STEPS", int(rng.integers(3, 40)))
    monkeypatch.setattr(cls, "LAUNCH_S", 2e-4)
    for k, v in (choice or {}).items():
        monkeypatch.setattr(cls, k, v)
    every = int(rng.integers(1, 50))
    cells = rng.integers(0, n, size=7)
    kw = dict(n=n, member_params={"g_Na": rng.uniform(15, 25, n), "g_si": rng.uniform(0.06, 0.1, n)},
              integrator=integrator, dtype=dtype)
    pair = _loop_pair(lr, monkeypatch, steps, every, cells, [0, 7, 3], cls.name, **kw)
    if _same_blow_up(*pair):
        return
    (ta, ya, fa, sim), (tb, yb, fb, _) = pair
    np.testing.assert_array_equal(ta, tb)
    assert ya.shape == (steps // every, 3, 7)
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(fa, fb)
    assert len(sim.block_history) >= 2
    assert ya[:, 0].max() > 0                       # the stimulus (a function of t) fired inside the loop
    if dtype == "float64":
        from kernels.flint import Simulation
        ref = Simulation(lr, runtime="cpu", **kw)
        r1 = ref.advance(steps // 3, 0.01, record=[0, 7, 3], every=every, cells=cells)[1]
        r2 = ref.advance(steps - steps // 3, 0.01, record=[0, 7, 3], every=every, cells=cells)[1]
        _close(ya, np.concatenate([r1, r2]))


@pytest.mark.parametrize("integrator, dtype, steps", [("euler", "float64", 3000), ("rk4", "float64", 1300),
                                                      ("euler", "float32", 2000), ("rk4", "float32", 1300)])
def test_ts_many_steps_a_launch_equals_one_step_a_launch(lr, monkeypatch, integrator, dtype, steps):
    """Bit for bit: same operations in the same order, states in registers, samples from the kernel;
    odd launch lengths (a short tuning window, a tiny launch target) and recorded cells with repeats."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    _check_loop_equals_step(lr, monkeypatch, TranslatorRuntime, integrator, dtype, steps)


def test_ts_loop_constants_as_argument_and_all_cells(lr, monkeypatch):
    """More constants than CONST_MAX: the table is a kernel argument; every cell recorded."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    monkeypatch.setattr(TranslatorRuntime, "CONST_MAX", 0)
    kw = dict(n=500, member_params={"g_Na": np.linspace(15, 25, 500)})
    (ta, ya, fa, sim), (tb, yb, fb, _) = _loop_pair(lr, monkeypatch, 2500, 100, None, None, **kw)
    assert sim.engine.loops() and sim.engine.loop_source.count("__constant__") == 0
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(fa, fb)
    assert ya.shape == (25, lr.n_states, 500)


def test_ts_rings_loop_grid_synchronised_expression_mapping_steps(lr, monkeypatch):
    """A short ring takes many steps a launch (grid-synchronised, tests/flint/test_flint_coupled.py) unless
    told one launch a step; the expression mapping takes the fused kernel."""
    from kernels.flint import Network, Simulation
    from kernels.flint.runtimes.translator import TranslatorRuntime
    sim = Simulation(lr, runtime="ts", network=Network("ring", 10, "V", 1.0))
    assert sim.engine.loops() and sim.engine.coupled is not None
    monkeypatch.setattr(TranslatorRuntime, "coupled_mode", "step")
    sim = Simulation(lr, runtime="ts", network=Network("ring", 10, "V", 1.0))
    assert not sim.engine.loops()
    sim = Simulation(lr, runtime="ts", n=10, mapping="expression")
    assert sim.engine.loops() and sim.info()["fused_mode"] == "block"     # the fused kernel (test_flint_fused.py)


@pytest.mark.parametrize("fit", [True, False])
def test_ts_loop_register_cap_keeps_results(lr, monkeypatch, fit):
    """100,000 members: with the registers capped so every thread is resident (or not), the same
    bits as one launch a step."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    monkeypatch.setattr(TranslatorRuntime, "fit_one_wave", fit)
    n = 100_000
    cells = np.random.default_rng().integers(0, n, size=50)
    kw = dict(n=n, member_params={"g_Na": np.linspace(15, 25, n)})
    (ta, ya, fa, sim), (tb, yb, fb, _) = _loop_pair(lr, monkeypatch, 1200, 100, cells, [0, 2], **kw)
    natural, capped = sim.engine.loop_registers
    assert natural is not None, "this CuPy does not report RawKernel.num_regs"
    assert (capped is not None) == (fit and sim.engine.one_wave_cap(natural) is not None)
    if capped is not None:
        assert capped <= sim.engine.one_wave_cap(natural) < natural
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(fa, fb)


@pytest.mark.parametrize("runtime", ["ts", "is"])
def test_loop_samples_copied_async_into_pinned_memory(lr, monkeypatch, runtime):
    """The many-steps driver copies each launch's samples on a second stream into page-locked host
    memory while the next launch runs (issue 23): the same samples as the device-buffer path, and
    the call's one page-locked array handed on without a copy; past PINNED_MAX_BYTES, device buffers."""
    import cupy
    from kernels.flint import Simulation
    from kernels.flint.runtimes.gpu import GpuRuntime
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    n = int(rng.integers(200, 3000))
    kw = dict(n=n, member_params={"g_Na": rng.uniform(15, 25, n)})
    every = int(rng.integers(5, 30))                # ≤ 16 MB a call: under PINNED_MAX_BYTES
    monkeypatch.setattr(GpuRuntime, "LAUNCH_S", 2e-4)           # many launches a call
    monkeypatch.setattr("kernels.flint.runtimes.simulation.CALL_S", 1e3)   # calls grow 4× (256 … 16,384)
    res = {}
    for mode in ("pinned", "device", "too-big"):
        monkeypatch.setattr(GpuRuntime, "async_copies", mode != "device")
        monkeypatch.setattr(GpuRuntime, "PINNED_MAX_BYTES", 0 if mode == "too-big" else 1 << 26)
        sim = Simulation(lr, runtime=runtime, **kw)
        assert sim.engine.loops()
        parts = [sim.advance(k, 0.01, record=[0, 1], every=every) for k in (6000, 1700, 900)]
        for _, y in parts[1:]:                                      # one many-steps call each
            assert isinstance(y.base, cupy.cuda.pinned_memory.PinnedMemoryPointer) == (mode == "pinned")
        res[mode] = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), sim.state())
    for mode in ("device", "too-big"):
        for a, b in zip(res["pinned"], res[mode]):
            np.testing.assert_array_equal(a, b)
    assert res["pinned"][1].shape == (8600 // every, 2, n)


_STACK = dict(loop_form="stack")


@pytest.mark.parametrize("integrator, dtype, steps, choice", [
    ("euler", "float64", 3000, {}), ("rk4", "float64", 1300, {}), ("euler", "float32", 2000, {}),
    ("rk4", "float32", 1300, {}), ("euler", "float64", 1500, dict(loop_slots_shared=False)),
    ("rk4", "float32", 1300, dict(loop_slots_shared=False)), ("euler", "float64", 1500, dict(loop_code="constant")),
    ("euler", "float64", 1500, _STACK), ("rk4", "float64", 1300, _STACK), ("euler", "float32", 2000, _STACK),
    ("euler", "float64", 1500, dict(_STACK, loop_slots_shared=False, loop_stack_shared=False)),
    ("rk4", "float64", 1300, dict(_STACK, loop_slots_shared=True, loop_stack_shared=True)),
    ("rk4", "float64", 1300, dict(_STACK, loop_code="constant"))])
def test_is_many_steps_a_launch_equals_one_step_a_launch(lr, monkeypatch, integrator, dtype, steps, choice):
    """IS's loop kernel (packed bytecode, stack top in registers; the default and each storage,
    program placement and dispatch choice) against the one-step interpreter ``flint_exec``, bit for
    bit; ≈ NumPy in float64."""
    from kernels.flint.runtimes.interpreter import InterpreterRuntime
    _check_loop_equals_step(lr, monkeypatch, InterpreterRuntime, integrator, dtype, steps, choice)


def test_is_loop_program_from_global_memory_and_all_cells(lr, monkeypatch):
    """A packed program too large for shared memory is read from global memory: the same bits."""
    from kernels.flint.runtimes.interpreter import InterpreterRuntime
    monkeypatch.setattr(InterpreterRuntime, "SHARED_MAX", 0)
    monkeypatch.setattr(InterpreterRuntime, "loop_slots_shared", False)
    kw = dict(n=500, member_params={"g_Na": np.linspace(15, 25, 500)})
    (ta, ya, fa, sim), (tb, yb, fb, _) = _loop_pair(lr, monkeypatch, 2500, 100, None, None, "is", **kw)
    assert sim.engine.loops() and not sim.engine.loop_code_shared and not sim.engine.loop_code_const
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(fa, fb)
    assert ya.shape == (25, lr.n_states, 500)


def test_is_rings_and_unify_off_keep_one_launch_a_step(lr):
    from kernels.flint import CompileOptions, Network, Simulation
    assert Simulation(lr, runtime="is", n=10).engine.loops()
    assert not Simulation(lr, runtime="is", network=Network("ring", 10, "V", 1.0)).engine.loops()
    expr = Simulation(lr, runtime="is", n=10, mapping="expression")      # the fused kernel (test_flint_fused.py)
    assert expr.engine.loops() and expr.engine.loop_source is None and expr.info()["fused_mode"] is not None
    off = Simulation(lr, runtime="is", n=10, member_params={"g_Na": np.linspace(15, 25, 10)},
                     options=CompileOptions(unify=False))
    assert not off.engine.loops()
