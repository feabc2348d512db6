"""The fused expression mapping (issue 23, kernels/flint/runtimes/fused.py): a chunk of steps in one
launch with barriers between the phases.  GPU tests: bit for bit equal to the one-launch-a-phase path
(IS and TS, Euler and RK4, float64 and float32, block and grid barriers, slots in shared or global
memory, odd launch lengths, recorded cells with repeats) on fresh random inputs, and within rounding
of the NumPy runtime ``cpu``.  CPU tests: the generated sources, and ``flint_fused`` itself run on
the host (g++, a thread per CUDA thread) against the NumPy emulation of the expression mapping."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.backend import gpu_available
from kernels.flint import Network, Simulation, compile_model, load_model
from kernels.flint.runtimes.fused import MODES, block_threads, choose, fused_is_source, fused_ts_source

OK, WHY = gpu_available()
needs_gpu = pytest.mark.skipif(not OK, reason=f"no GPU: {WHY}")


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991.flint")


@pytest.fixture(scope="module")
def wang():
    return load_model("wang")          # the flattened Wang–Buzsáki network: 400 ODEs, a warp-parallel sum


def _rng():
    return np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))


def _pair(monkeypatch, model, runtime, steps, every, cells, record, mode=None, shared=None, **kw):
    """The same run fused and one launch a phase: (times, samples, final state, simulation) each."""
    from kernels.flint.runtimes.fused import FusedPhases
    from kernels.flint.runtimes.gpu import GpuRuntime
    rng = _rng()
    monkeypatch.setattr(FusedPhases, "LAUNCH_S", 2e-4)            # many short launches of odd lengths
    monkeypatch.setattr(FusedPhases, "FIRST_STEPS", int(rng.integers(1, 30)))
    monkeypatch.setattr(GpuRuntime, "fused_mode", mode)
    monkeypatch.setattr(GpuRuntime, "fused_shared", shared)
    out = {}
    for fused in (True, False):
        monkeypatch.setattr(GpuRuntime, "fused_enabled", fused)
        sim = Simulation(model, runtime=runtime, mapping="expression", **kw)
        assert sim.engine.loops() is fused
        a = sim.advance(steps // 3, 0.01, record=record, every=every, cells=cells)
        sim.engine.advance(7, 0.01, sim.steps)           # unrecorded steps through advance() too
        sim.steps += 7
        b = sim.advance(steps - steps // 3 - 7, 0.01, record=record, every=every, cells=cells)
        out[fused] = (np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]), sim.state(), sim)
    return out[True], out[False]


def _same(f, p):
    np.testing.assert_array_equal(f[0], p[0])
    np.testing.assert_array_equal(f[1], p[1])
    np.testing.assert_array_equal(f[2], p[2])


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("runtime", ["is", "ts"])
@pytest.mark.parametrize("integrator, dtype, mode, shared", [
    ("euler", "float64", None, None), ("rk4", "float64", "block", False), ("euler", "float32", "grid", None),
    ("rk4", "float32", None, None), ("rk4", "float64", None, "slots"), ("euler", "float32", None, "states")])
def test_fused_lr_ensemble_equals_per_phase(lr, monkeypatch, runtime, integrator, dtype, mode, shared):
    """A small LR ensemble in the expression mapping, fresh random parameters: fused == per phase, bit
    for bit; float64 also within 1e-10 of the NumPy runtime (GPU libm; the host test below checks
    the kernel against the NumPy emulation of the expression mapping)."""
    rng = _rng()
    n = int(rng.integers(3, 40))
    every = int(rng.integers(1, 40))
    cells = rng.integers(0, n, size=5)
    steps = 1300 if integrator == "rk4" else 2000
    kw = dict(n=n, member_params={"g_Na": rng.uniform(15, 25, n), "g_si": rng.uniform(0.06, 0.1, n)},
              integrator=integrator, dtype=dtype)
    f, p = _pair(monkeypatch, lr, runtime, steps, every, cells, [0, 7, 3], mode, shared, **kw)
    _same(f, p)
    info = f[3].info()
    assert info["fused_mode"] == (mode or "block")
    assert f[1].shape == (len(f[0]), 3, 5) and f[1][:, 0].max() > 0      # the stimulus fired
    if dtype == "float64":
        ref = Simulation(lr, runtime="cpu", **kw)
        r1 = ref.advance(steps // 3, 0.01, record=[0, 7, 3], every=every, cells=cells)[1]
        ref.advance(7, 0.01, record=[0], every=10**9)
        r2 = ref.advance(steps - steps // 3 - 7, 0.01, record=[0, 7, 3], every=every, cells=cells)[1]
        r = np.concatenate([r1, r2])
        scale = np.abs(r).max(axis=(0, 2), keepdims=True)
        assert (np.abs(f[1] - r) / np.maximum(scale, 1e-300)).max() <= 1e-10


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("runtime", ["is", "ts"])
@pytest.mark.parametrize("integrator, mode, shared", [("euler", None, None), ("rk4", "block", False),
                                                      ("euler", "grid", None), ("rk4", None, "slots")])
def test_fused_flat_model_equals_per_phase(wang, monkeypatch, runtime, integrator, mode, shared):
    """The flattened Wang network (one member, phases up to 34 warps, a warp-parallel sum) from random
    initial states: fused == per phase bit for bit, and close to the NumPy runtime."""
    rng = _rng()
    y0 = np.array(list(wang.states.values())) * (1 + 0.05 * rng.standard_normal(wang.n_states))
    every = int(rng.integers(1, 30))
    record = sorted(rng.choice(wang.n_states, size=6, replace=False).tolist())
    steps = 400 if integrator == "rk4" else 800
    kw = dict(integrator=integrator, y0=y0)
    f, p = _pair(monkeypatch, wang, runtime, steps, every, None, record, mode, shared, **kw)
    _same(f, p)
    info = f[3].info()
    assert info["fused_mode"] == (mode or "block")
    if (mode or "block") == "block":
        assert info["fused_threads"] == block_threads(f[3].prog)
        assert info["fused_shared"] == {None: "states"}.get(shared, shared)
    ref = Simulation(wang, runtime="cpu", **kw)
    r1 = ref.advance(steps // 3 + 7, 0.01, record=record, every=every)
    r2 = ref.advance(steps - steps // 3 - 7, 0.01, record=record, every=every)
    want = np.concatenate([r1[1], r2[1]])
    keep = np.isin(np.concatenate([r1[0], r2[0]]), f[0])      # the 7 unrecorded steps
    got = f[1]
    scale = np.abs(want[keep]).max(axis=(0, 2), keepdims=True)
    assert (np.abs(got - want[keep]) / np.maximum(scale, 1e-300)).max() <= 1e-9


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("runtime", ["is", "ts"])
def test_fused_ring_uses_grid_barrier(lr, monkeypatch, runtime):
    """A ring reads its neighbours every stage: the grid barrier (cooperative launch), bit for bit."""
    from kernels.flint.runtimes import network_stimulus
    rng = _rng()
    n = int(rng.integers(8, 60))
    kw = dict(network=Network("ring", n, "V", 2.0), member_params=network_stimulus(lr, n), integrator="rk4")
    f, p = _pair(monkeypatch, lr, runtime, 600, int(rng.integers(1, 30)), rng.integers(0, n, size=4), [0, 1],
                 **kw)
    _same(f, p)
    assert f[3].info()["fused_mode"] == "grid"
    from kernels.errors import InvalidParameter
    from kernels.flint.runtimes.gpu import GpuRuntime
    monkeypatch.setattr(GpuRuntime, "fused_enabled", True)
    monkeypatch.setattr(GpuRuntime, "fused_mode", "block")
    with pytest.raises(InvalidParameter, match="independent members"):
        Simulation(lr, runtime=runtime, mapping="expression", **kw)


# --- CPU: the generated sources ----------------------------------------------------------------
def test_choose_and_sources(lr, wang):
    """Block barrier for independent members, grid for coupled cells; the sources hold the fused
    kernel with its barrier chosen by FLINT_GRID and one TS phase function per phase."""
    assert choose(compile_model(lr, 4)) == "block"
    ring = compile_model(lr, network=Network("ring", 6, "V", 1.0))
    assert choose(ring) == "grid"
    assert choose(compile_model(lr, 4), grid_warps=5) == "grid" and choose(compile_model(lr, 4), grid_warps=12) == "block"
    p = compile_model(wang, 1)
    assert block_threads(p) == 32 * min(32, max(p.layout.phase_warps))
    for mode in MODES:
        for src in (fused_is_source(p, "double", mode, 256, True), fused_ts_source(p, "float", mode, 256, False)):
            assert src.count("__launch_bounds__(FLINT_THREADS) flint_fused(") == 1 and "#define FLINT_THREADS 256" in src
            assert f"#define FLINT_GRID {int(mode == 'grid')}" in src
    ts = fused_ts_source(p, "double", "block", 1024, True)
    assert all(f"void flint_tsf_p{k}(" in ts for k in range(len(p.layout.phase_warps)))
    assert "blockIdx.y" not in ts.split("flint_tsf_p0(", 1)[1].split("flint_fused_phase", 1)[0]


# --- CPU: flint_fused itself, compiled by g++ and run with one OS thread a CUDA thread ------------
_HOST_PRE = r"""#include <cmath>
#include <cstddef>
#include <cstdio>
#include <vector>
#include <thread>
#include <mutex>
#include <condition_variable>
using namespace std;
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
#define __launch_bounds__(x)
#define __shared__
struct D3 { unsigned x, y, z; };
struct Bar {
    std::mutex m; std::condition_variable cv; int count, waiting = 0; long gen = 0;
    explicit Bar(int c) : count(c) {}
    void wait() { std::unique_lock<std::mutex> lk(m); long g = gen;
        if (++waiting == count) { waiting = 0; ++gen; cv.notify_all(); return; }
        cv.wait(lk, [&] { return gen != g; }); }
};
struct Warp { Bar bar{32}; double buf[32]; };
static D3 blockDim, gridDim;
static thread_local D3 threadIdx, blockIdx;
static thread_local Bar* block_bar;
static thread_local Warp* warp;
static Bar* grid_bar;
double flint_smem[1 << 16];
inline void __syncthreads() { block_bar->wait(); }
template <class T> T __shfl_xor_sync(unsigned, T v, int o) {
    int lane = threadIdx.x & 31; warp->buf[lane] = (double)v; warp->bar.wait();
    T r = (T)warp->buf[lane ^ o]; warp->bar.wait(); return r;
}
namespace cooperative_groups { struct grid_group { void sync() { grid_bar->wait(); } };
inline grid_group this_grid() { return grid_group(); } }
"""

_HOST_MAIN = r"""
template <class T> vector<T> rd(const char* f) { FILE* fp = fopen(f, "rb"); vector<T> v; T x; while (fread(&x, sizeof(T), 1, fp) == 1) v.push_back(x); fclose(fp); return v; }
int main() {
    FILE* fm = fopen("meta.txt", "r"); int n, ns, nslot, nphase, net, rk4, k, blocks, threads, every, npv;
    fscanf(fm, "%d %d %d %d %d %d %d %d %d %d %d", &n, &ns, &nslot, &nphase, &net, &rk4, &k, &blocks, &threads, &every, &npv);
    auto code = rd<int>("code.bin"); auto index = rd<int>("index.bin"); auto ltab = rd<int>("ltab.bin");
    auto ps = rd<int>("pstart.bin"); auto pw = rd<int>("pwarps.bin"); auto dslot = rd<int>("dslot.bin");
    auto K = rd<double>("consts.bin"); auto P = rd<double>("pvar.bin"); auto y = rd<double>("y.bin");
    vector<int> rec(ns), col(n); for (int s = 0; s < ns; ++s) rec[s] = s; for (int i = 0; i < n; ++i) col[i] = i;
    vector<double> V((size_t)nslot * n, 0.0), y2(y.size()), k1(y.size()), k2(y.size()), acc(y.size());
    vector<double> out((size_t)(k / every + 1) * ns * n);
    blockDim = {(unsigned)threads, 1, 1}; gridDim = {(unsigned)blocks, 1, 1};
    Bar grid((int)(blocks * threads)); grid_bar = &grid;
    vector<Bar*> bars; vector<Warp*> warps;
    for (int b = 0; b < blocks; ++b) bars.push_back(new Bar(threads));
    for (int w = 0; w < blocks * threads / 32; ++w) warps.push_back(new Warp());
    // grid mode: every block at once (the grid barrier); block mode: one block after another (its
    // shared memory is the one static array), the same threads taking each block in turn
    auto run = [&](int b, int t) {
        threadIdx = {(unsigned)t, 0, 0}; blockIdx = {(unsigned)b, 0, 0}; block_bar = bars[b]; warp = warps[(b * threads + t) / 32];
        flint_fused(code.data(), index.data(), ps.data(), pw.data(), nphase, K.data(), P.data(), npv, V.data(), nslot,
                    ltab.data(), dslot.data(), ns, n, net, y.data(), y2.data(), k1.data(), k2.data(), acc.data(),
                    0LL, k, 0.01, rk4, (long long)every, rec.data(), ns, col.data(), n, out.data()); };
    vector<std::thread> th;
    if (FLINT_GRID) { for (int b = 0; b < blocks; ++b) for (int t = 0; t < threads; ++t) th.emplace_back(run, b, t); }
    else for (int t = 0; t < threads; ++t) th.emplace_back([&, t] { for (int b = 0; b < blocks; ++b) { run(b, t); bars[b]->wait(); } });
    for (auto& x : th) x.join();
    FILE* fo = fopen("out.bin", "wb"); fwrite(out.data(), sizeof(double), (size_t)(k / every) * ns * n, fo); fclose(fo);
    fo = fopen("final.bin", "wb"); fwrite((k % 2 ? y2 : y).data(), sizeof(double), y.size(), fo); fclose(fo);
}
"""


@pytest.mark.parametrize("runtime", ["is", "ts"])
@pytest.mark.parametrize("case", ["lr-block-euler", "lr-ring-grid-rk4", "sums-block-rk4", "lr-states-rk4",
                                  "sums-global-euler"])
def test_fused_kernel_runs_on_host(lr, runtime, case, tmp_path):
    """flint_fused (IS and TS) on the host — g++, one std::thread a CUDA thread, real barriers and a
    32-lane shuffle — with blocks of 2 warps (so a warp takes several phase warps), each barrier and
    each shared-memory level: its recorded samples and final states equal the NumPy emulation of the
    expression mapping to 1e-12."""
    import shutil
    import subprocess
    from kernels.flint import parse_text
    if shutil.which("g++") is None:
        pytest.skip("g++ not available")
    rng = _rng()
    integrator = case.rsplit("-", 1)[1]
    if case.startswith("sums"):
        n = 40
        lines = ["model sums"] + [f"state x{i} = {0.5 + 0.01 * i}" for i in range(n)] + ["state V = -60.0"]
        lines += ["let I = 0.3*(" + " + ".join(f"x{i}" for i in range(n)) + ")*(V + 75)"]
        lines += [f"ode x{i} = -{1 + 0.05 * i}*x{i} + 0.01*(V + 80)/(1 + exp(-(V + 40)))" for i in range(n)]
        lines += ["ode V = -I - 0.1*(V + 65)"]
        model, kw = parse_text("\n".join(lines)), dict(n=2)
    elif "ring" in case:
        model, kw = lr, dict(network=Network("ring", 3, "V", 1.0), member_params={"stim_amplitude": [-25.5, 0, 0]})
    else:
        model, kw = lr, dict(n=2, member_params={"g_Na": rng.uniform(15, 25, 2)})
    p = compile_model(model, kw.get("n", 1), kw.get("member_params"), kw.get("network"))
    mode = "grid" if "grid" in case else "block"
    level = 2 if "states" in case else (0 if "global" in case else 1)
    threads, k, every = 64, 12, 4
    blocks = p.n_members if mode == "block" else 2
    src = (fused_is_source if runtime == "is" else fused_ts_source)(p, "double", mode, threads, level)
    lay = p.layout
    if mode == "block":
        assert max(lay.phase_warps) > threads // 32          # the warp loop is exercised
    y = np.array(list(model.states.values()))[:, None] * (1 + 0.01 * rng.standard_normal((model.n_states, p.n_members)))
    ltab = lay.lane_table
    if runtime == "ts":
        from kernels.flint.runtimes.codegen import ts_phase_bodies
        ltab = ts_phase_bodies(p)[1]
    P = p.pvar_values if p.pvar_values.size else np.zeros((1, p.n_members))
    for name, arr, dtp in (("code", lay.code, np.int32), ("index", lay.index, np.int32), ("ltab", ltab, np.int32),
                           ("pstart", lay.phase_start, np.int32), ("pwarps", lay.phase_warps, np.int32),
                           ("dslot", p.deriv_slots, np.int32), ("consts", p.consts, np.float64),
                           ("pvar", P, np.float64), ("y", y, np.float64)):
        np.ascontiguousarray(arr, dtype=dtp).tofile(tmp_path / f"{name}.bin")
    meta = [p.n_members, model.n_states, max(p.n_slots, 1), len(lay.phase_warps), {None: 0, "ring": 2}[
        p.network.kind if p.network else None], int(integrator == "rk4"), k, blocks, threads, every, P.shape[0]]
    (tmp_path / "meta.txt").write_text(" ".join(map(str, meta)))
    (tmp_path / "main.cpp").write_text(_HOST_PRE + src + _HOST_MAIN)
    (tmp_path / "cooperative_groups.h").write_text("// the prelude's grid barrier stands in\n")
    subprocess.run(["g++", "-std=c++14", "-O1", "-pthread", "-ffp-contract=off", "-w", "-I.", "-o", "fused", "main.cpp"],
                   cwd=tmp_path, check=True)
    subprocess.run(["./fused"], cwd=tmp_path, check=True, timeout=300)
    ref = Simulation(model, runtime="cpu", mapping="expression", bytecode_on_cpu=True, integrator=integrator,
                     y0=y, **kw)
    want = ref.advance(k, 0.01, every=every)[1]
    got = np.fromfile(tmp_path / "out.bin").reshape(want.shape)
    final = np.fromfile(tmp_path / "final.bin").reshape(y.shape)
    scale = np.abs(want).max(axis=(0, 2), keepdims=True)
    assert (np.abs(got - want) / np.maximum(scale, 1e-300)).max() <= 1e-12
    np.testing.assert_array_equal(got[-1], final)
    assert not np.array_equal(final, y)
