"""Flint's thread-per-expression mapping (paper 004 §5.4–5.5): redundant threads and warp-parallel sums.

CPU tests run the bytecode emulation (``runtimes.interpret(..., mapping="expression")``), which
interprets every lane of every warp and performs WARP_SUM as the GPU's ``__shfl_xor_sync`` butterfly.
Exactness claims:
* ``redundant`` on/off, and the expression vs the thread-per-cell mapping with ``sum`` off: the same
  operations in the same order → bit-identical traces.
* ``sum`` on: a ≥ 32-term sum is added in a different order (32 partial sums, then the butterfly) →
  traces agree to 1e-12 relative; the butterfly itself is checked bit for bit against NumPy.
GPU tests (marked ``gpu``) compare IS and TS in the expression mapping against the NumPy runtime.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import CompileOptions, Network, Simulation, compile_model, load_model, parse_text
from kernels.flint.compiler import OPCODES, OPTIMIZATIONS, SUM_MIN, WARP, optimization_report, report_table
from kernels.flint.runtimes import interpret, network_stimulus
from kernels.flint.runtimes.emulate import run_warp

N_SUM = 40


def _sum_model(n: int = N_SUM):
    """x_i relax, V driven by an n-term synaptic-like sum (an assignment: the sum is inside a product)
    and by a 33-term sum nested inside its own ODE's right-hand side."""
    lines = ["model sums"] + [f"state x{i} = {0.5 + 0.01 * i}" for i in range(n)]
    lines += ["state V = -60.0", "param g = 0.3", "param E = -75.0"]
    lines += [f"param k{i} = {1.0 + 0.05 * i}" for i in range(n)]
    lines += ["let I = g*(" + " + ".join(f"x{i}" for i in range(n)) + ")*(V - E)"]
    lines += [f"ode x{i} = -k{i}*x{i} + 0.01*(V + 80)/(1 + exp(-(V + 40)))" for i in range(n)]
    lines += ["ode V = -I - 0.1*(V + 65) + 0.001*(" + " + ".join(f"x{i}*x{i}" for i in range(33)) + ")"]
    return parse_text("\n".join(lines))


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991.flint")


@pytest.fixture(scope="module")
def sums():
    return _sum_model()


def _traces(model, mapping="cell", opts=None, steps=200, integrator="euler", n=3, network=None, member=None):
    sim = Simulation(model, n=n, member_params=member, network=network, integrator=integrator, options=opts,
                     bytecode_on_cpu=True, mapping=mapping)
    return sim.advance(steps, 0.01, every=4)[1]


def _rel(a, b):
    scale = np.abs(b).max(axis=(0, 2), keepdims=True)
    return float((np.abs(a - b) / np.maximum(scale, 1e-300)).max())


# ---------------------------------------------------------------------------------------------
def test_redundant_threads_layout(lr):
    """On: every set of equal opcode sequences fills whole warps, no warp mixes sequences, copies run
    the very bytecode of the thread they copy.  Off: threads packed, some warps divergent."""
    on = compile_model(lr).layout
    off = compile_model(lr, options=CompileOptions(redundant=False)).layout
    st_on, st_off = on.stats(), off.stats()
    assert sum(st_on["expr_divergent_warps"]) == 0 and sum(st_off["expr_divergent_warps"]) > 0
    assert st_on["expr_threads_per_phase"] == st_off["expr_threads_per_phase"]       # same essential threads
    assert st_off["expr_lanes_per_phase"] == st_off["expr_threads_per_phase"]         # no copies when off
    for p in range(len(on.phase_warps)):
        lanes = on.phase_lanes(p)
        idx = on.index[on.phase_start[p]: on.phase_start[p] + WARP * on.phase_warps[p]]
        assert None not in lanes                                   # no idle lanes: copies fill the warps
        for w in range(on.phase_warps[p]):
            assert len(set(on.lane_seq[on.phase_start[p] + w * WARP: on.phase_start[p] + (w + 1) * WARP])) == 1
        for x, pc in zip(lanes, idx):
            first = lanes.index(x)
            assert pc == idx[first]                                # a copy shares its thread's bytecode
    # off: the phase's last warp is padded with idle lanes (index -1)
    assert (off.index == -1).any() and not (on.index == -1).any()
    # the thread-per-cell bytecode does not change
    assert np.array_equal(compile_model(lr).code,
                          compile_model(lr, options=CompileOptions(redundant=False, sum=False)).code)


def test_sum_layout(sums):
    """Sum: each thread with a ≥32-term sum gets a warp of 32 lane bytecodes; lane l adds its
    contiguous share of the terms (⌊l·n/32⌋ … ⌊(l+1)·n/32⌋ − 1) and then WARP_SUM."""
    p = compile_model(sums)
    lay = p.layout
    assert lay.stats()["expr_sum_warps"] == 2 and sum(len(s) for s in lay.sum_warps) == 2
    ws = OPCODES["WARP_SUM"]
    for ph, warps in enumerate(lay.sum_warps):
        for w in warps:
            lanes = lay.phase_lanes(ph)[w * WARP:(w + 1) * WARP]
            assert len({x[0] for x in lanes}) == 1 and [x[1] for x in lanes] == list(range(WARP))
            starts = lay.index[lay.phase_start[ph] + w * WARP: lay.phase_start[ph] + (w + 1) * WARP]
            assert len(set(starts.tolist())) == WARP               # 32 different lane bytecodes
            for lane, pc in enumerate(starts):
                ops = _ops(lay.code, int(pc))
                names = [o[0] for o in ops]
                assert names.count(ws) == 1
                n_terms = N_SUM if lanes[0][0] == ("I",) else 33
                k = (lane + 1) * n_terms // WARP - lane * n_terms // WARP
                i = names.index(ws)
                if k > 1:
                    assert ops[i - 1] == (OPCODES["ADD"], k)
    off = compile_model(sums, options=CompileOptions(sum=False)).layout
    assert off.stats()["expr_sum_warps"] == 0 and ws not in [o[0] for o in _ops(off.code, 0, whole=True)]
    assert ws not in [o[0] for o in _ops(p.code, 0, whole=True)]                   # thread-per-cell code: never split


def _ops(code, pc, whole=False):
    """[(opcode, *operands)] from pc to END (or of the whole array)."""
    from kernels.flint.compiler import N_ARGS, OPNAMES
    out = []
    while pc < code.size:
        op = int(code[pc])
        n = N_ARGS.get(OPNAMES[op], 0)
        out.append(tuple(int(x) for x in code[pc: pc + 1 + n]))
        pc += 1 + n
        if OPNAMES[op] == "END" and not whole:
            break
    return out


def test_warp_sum_emulation_is_the_butterfly(sums):
    """The emulated WARP_SUM equals, bit for bit, NumPy partial sums + xor-butterfly; and it agrees
    with the sequential sum to rounding."""
    p = compile_model(sums)
    rng = np.random.default_rng(7)
    S = np.array(list(sums.states.values()))[:, None] * (1 + 0.2 * rng.standard_normal((sums.n_states, 5)))
    d_expr = interpret(p, S, None, 0.0, 0.0, p.pvar_values, mapping="expression")
    d_cell = interpret(p, S, None, 0.0, 0.0, p.pvar_values)
    def butterfly(terms):
        """Each lane's contiguous share of the terms added in order, then the xor butterfly."""
        part = []
        for lane in range(WARP):
            lo, hi = lane * len(terms) // WARP, (lane + 1) * len(terms) // WARP
            r = terms[lo]
            for j in range(lo + 1, hi):
                r = r + terms[j]
            part.append(r)
        for off in (16, 8, 4, 2, 1):
            part = [part[lane] + part[lane ^ off] for lane in range(WARP)]
        return part
    part = butterfly(list(S[:N_SUM]))
    assert all(np.array_equal(part[0], q) for q in part)       # every lane holds the same total
    V = S[N_SUM]
    g, E = sums.params["g"], sums.params["E"]
    I_warp = g * part[0] * (V - E)
    part2 = butterfly([S[i] * S[i] for i in range(33)])
    dV = (-I_warp - 0.1 * (V + 65)) + 0.001 * part2[0]
    assert np.array_equal(d_expr[N_SUM], dV)
    np.testing.assert_allclose(d_expr, d_cell, rtol=1e-13, atol=1e-15)


def test_warp_sum_needs_the_whole_warp():
    def lane(reach):
        def g():
            if reach:
                yield 1.0
        return g()
    with pytest.raises(InvalidParameter, match="part of a warp"):
        run_warp([lane(i < 16) for i in range(WARP)])
    run_warp([lane(True) for _ in range(WARP)])                # converged warp: fine


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_expression_mapping_redundant_bitwise(lr, integrator):
    """LR ensemble (per-member g_Na) and ring: expression mapping, redundant on/off and the thread-per-
    cell mapping give bit-identical traces (LR has no ≥32-term sums, so sum on changes nothing)."""
    steps = 50 if integrator == "euler" else 12
    member = {"g_Na": np.linspace(16, 23, 3)}
    ref = _traces(lr, "cell", steps=steps, integrator=integrator, member=member)
    for opts in (CompileOptions(), CompileOptions(redundant=False), CompileOptions(sum=False)):
        got = _traces(lr, "expression", opts, steps=steps, integrator=integrator, member=member)
        assert np.array_equal(got, ref), opts
    ring = Network("ring", 4, "V", 1.0)
    kw = dict(n=4, network=ring, member=network_stimulus(lr, 4), steps=40)
    a = _traces(lr, "cell", **kw)
    b = _traces(lr, "expression", CompileOptions(redundant=False), **kw)
    c = _traces(lr, "expression", **kw)
    assert np.array_equal(a, b) and np.array_equal(a, c)


def test_expression_mapping_sum_on_off(sums):
    """Sum off: bit-identical to the thread-per-cell bytecode; sum on: ≤ 1e-12 relative (the
    warp's different addition order), Euler and RK4; redundant on/off bitwise in both cases."""
    for integ, steps in (("euler", 100), ("rk4", 25)):
        ref = _traces(sums, "cell", steps=steps, integrator=integ)
        off = _traces(sums, "expression", CompileOptions(sum=False), steps=steps, integrator=integ)
        assert np.array_equal(off, ref)
        on = _traces(sums, "expression", CompileOptions(), steps=steps, integrator=integ)
        on_nr = _traces(sums, "expression", CompileOptions(redundant=False), steps=steps, integrator=integ)
        assert np.array_equal(on, on_nr)
        assert _rel(on, ref) <= 1e-12


def test_catalog_wang_sum_if_present():
    """Wang–Buzsáki network (kernels/flint/catalog.py, when present): its N-term synaptic sum is one
    warp-parallel sum; expression mapping with sum on vs thread-per-cell ≤ 1e-12 relative."""
    catalog = pytest.importorskip("kernels.flint.catalog")
    if not hasattr(catalog, "wang_buzsaki"):
        pytest.skip("catalog has no wang_buzsaki yet")
    m = catalog.wang_buzsaki(40)
    st = compile_model(m).stats()
    assert st["expr_sum_warps"] >= 1
    ref = _traces(m, "cell", steps=60, n=1)
    got = _traces(m, "expression", steps=60, n=1)
    off = _traces(m, "expression", CompileOptions(sum=False, redundant=False), steps=60, n=1)
    assert np.array_equal(off, ref) and _rel(got, ref) <= 1e-12


def test_warp_unification(lr, sums):
    """Thesis §5.4.3 (Fig. 5.6): with unify on, a warp whose 32 bytecodes share one opcode sequence
    runs one bytecode whose lane-dependent operands come from the lane table (LANE prefix).  Fewer
    bytecode words, and traces bit-identical to unify off and to the thread-per-cell mapping (the
    same operations in the same order), for an LR ring, the sums model and a flattened network."""
    catalog = pytest.importorskip("kernels.flint.catalog")
    wang = catalog.wang_buzsaki(40) if hasattr(catalog, "wang_buzsaki") else None
    ring = Network("ring", 4, "V", 1.0)
    cases = [(lr, dict(n=4, network=ring, member=network_stimulus(lr, 4), steps=30)), (sums, dict(n=2, steps=40))]
    if wang is not None:
        cases.append((wang, dict(n=1, steps=40)))
    for model, kw in cases:
        on = compile_model(model, kw["n"], kw.get("member"), kw.get("network")).stats()
        off = compile_model(model, kw["n"], kw.get("member"), kw.get("network"), CompileOptions(unify=False)).stats()
        assert on["expr_unified_warps"] > 0 == off["expr_unified_warps"], model.name
        assert on["expr_bytecode_words"] < off["expr_bytecode_words"], model.name
        assert on["expr_warps_per_phase"] == off["expr_warps_per_phase"]
        ref = _traces(model, "cell", CompileOptions(sum=False), **kw)
        a = _traces(model, "expression", CompileOptions(sum=False), **kw)
        b = _traces(model, "expression", CompileOptions(sum=False, unify=False), **kw)
        assert np.array_equal(a, ref) and np.array_equal(b, ref), model.name
    if wang is not None:
        lay = compile_model(wang).layout
        assert OPCODES["LANE"] in set(lay.code.tolist()) and lay.lane_table.size > 1


def test_bad_mapping(lr):
    with pytest.raises(InvalidParameter, match="mapping"):
        Simulation(lr, mapping="warp")


# ---------------------------------------------------------------------------------------------
def test_optimization_report(lr, sums):
    rep = optimization_report(lr, 4, {"g_Na": np.linspace(16, 23, 4)})
    assert [r["option"] for r in rep] == list(OPTIMIZATIONS)
    by = {r["option"]: r for r in rep}
    for r in rep:
        for side in ("off", "on"):
            assert set(r[side]) >= {"phases", "threads_per_phase", "opcode_sequences_per_phase", "lanes_per_phase",
                                    "bytecode_words", "constants", "stack_depth"}
            assert len(r[side]["threads_per_phase"]) == r[side]["phases"]
    assert by["merge"]["on"]["phases"] < by["merge"]["off"]["phases"]                 # thesis Table 5.7
    assert by["redundant"]["off"]["divergent_warps"] > 0 == by["redundant"]["on"]["divergent_warps"]
    assert by["redundant"]["on"]["lanes_per_phase"] != by["redundant"]["off"]["lanes_per_phase"]
    assert by["unify"]["on"]["bytecode_words"] * 3 < by["unify"]["off"]["bytecode_words"]    # 4 members → 1
    assert by["cse"]["off"]["slots"] < by["cse"]["on"]["slots"]
    assert by["fold"]["on"]["constants"] < by["fold"]["off"]["constants"]
    assert by["sum"]["on"] == by["sum"]["off"]                                         # LR: no big sums
    assert by["unify"]["on"]["unified_warps"] > 0 == by["unify"]["off"]["unified_warps"]
    assert by["unify"]["on"]["expr_bytecode_words"] < by["unify"]["off"]["expr_bytecode_words"]
    s = {r["option"]: r for r in optimization_report(sums)}
    assert s["sum"]["on"]["sum_warps"] == 2 and s["sum"]["off"]["sum_warps"] == 0
    assert s["nary"]["off"]["sum_warps"] == 0                      # binary adds: nothing to split
    head, rows = report_table(rep)
    assert head[0] == "option" and len(rows) == len(OPTIMIZATIONS) and "⇒" in rows[list(OPTIMIZATIONS).index("merge")][1]


def test_sum_threshold_constants():
    assert SUM_MIN == 32 and WARP == 32


# ---------------------------------------------------------------------------------------------
gpu = pytest.mark.gpu


def _gpu_ok():
    from kernels.backend import gpu_available
    ok, why = gpu_available()
    if not ok:
        pytest.skip(f"no GPU: {why}")


@gpu
@pytest.mark.parametrize("runtime", ["is", "ts"])
@pytest.mark.parametrize("flag", ["redundant", "sum", "merge", "reorder", "remap", "unify"])
def test_gpu_expression_mapping_each_option(lr, sums, runtime, flag):
    """IS/TS in the thesis mapping, option on and off, vs the NumPy runtime: 1e-10 relative (GPU libm);
    on vs off bitwise where the arithmetic order is unchanged (all but sum on the sums model)."""
    _gpu_ok()
    off = dataclasses.replace(CompileOptions(), **{flag: False})
    for model, kw in ((lr, dict(n=64, member_params={"g_Na": np.linspace(15, 25, 64)})),
                      (sums, dict(n=8))):
        ref = Simulation(model, runtime="cpu", **kw).advance(1500, 0.01, every=25)[1]
        res = []
        for o in (CompileOptions(), off):
            sim = Simulation(model, runtime=runtime, options=o, mapping="expression", **kw)
            got = sim.advance(1500, 0.01, every=25)[1]
            assert _rel(got, ref) <= 1e-10, (runtime, flag, o)
            res.append(got)
        if not (flag == "sum" and model is sums):
            assert np.array_equal(res[0], res[1]), (runtime, flag)


@gpu
@pytest.mark.parametrize("runtime", ["is", "ts"])
def test_gpu_expression_mapping_ring_rk4_and_emulation(lr, sums, runtime):
    """Ring + RK4 in the expression mapping vs NumPy; the sums model vs the CPU warp emulation."""
    _gpu_ok()
    ring = Network("ring", 40, "V", 2.0)
    kw = dict(network=ring, member_params=network_stimulus(lr, 40), integrator="rk4")
    ref = Simulation(lr, runtime="cpu", **kw).advance(800, 0.01, every=25)[1]
    got = Simulation(lr, runtime=runtime, mapping="expression", **kw).advance(800, 0.01, every=25)[1]
    assert _rel(got, ref) <= 1e-10
    emu = Simulation(sums, n=4, bytecode_on_cpu=True, mapping="expression").advance(300, 0.01, every=25)[1]
    g = Simulation(sums, n=4, runtime=runtime, mapping="expression").advance(300, 0.01, every=25)[1]
    assert _rel(g, emu) <= 1e-12


@gpu
def test_gpu_catalog_wang_sum(lr):
    _gpu_ok()
    catalog = pytest.importorskip("kernels.flint.catalog")
    if not hasattr(catalog, "wang_buzsaki"):
        pytest.skip("catalog has no wang_buzsaki")
    m = catalog.wang_buzsaki(100)
    ref = Simulation(m, runtime="cpu").advance(2000, 0.01, every=50)[1]
    for rt in ("is", "ts"):
        for o in (CompileOptions(), CompileOptions(sum=False, redundant=False)):
            got = Simulation(m, runtime=rt, mapping="expression", options=o).advance(2000, 0.01, every=50)[1]
            assert _rel(got, ref) <= 1e-9, (rt, o)


# ---------------------------------------------------------------------------------------------
# The CUDA sources executed on the host: flint_is.cu (flint_is_phase/update) and the TS phase kernels
# compiled with g++ (CUDA keywords stubbed), one std::thread a lane and __shfl_xor_sync emulated with
# a 32-thread barrier, so warp-parallel sums really exchange values between concurrent lanes.
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
#define __restrict__
struct D3 { unsigned x, y, z; };
static D3 blockIdx, blockDim;
static thread_local D3 threadIdx;
static std::mutex mu; static std::condition_variable cv; static double buf[32]; static int arrived = 0, gen = 0;
static void barrier(std::unique_lock<std::mutex>& lk) {
    int g = gen; if (++arrived == 32) { arrived = 0; gen++; cv.notify_all(); } else cv.wait(lk, [&]{ return gen != g; });
}
template <class T> T __shfl_xor_sync(unsigned, T v, int o) {
    std::unique_lock<std::mutex> lk(mu);
    int lane = threadIdx.x; buf[lane] = (double)v; barrier(lk);
    T r = (T)buf[lane ^ o]; barrier(lk); return r;
}
"""

_HOST_MAIN = r"""#include "pre.h"
#ifdef TS
#include "ts.cu.h"
#else
#include "is.cu.h"
#endif
template <class T> vector<T> rd(const char* f) { FILE* fp = fopen(f, "rb"); vector<T> v; T x; while (fread(&x, sizeof(T), 1, fp) == 1) v.push_back(x); fclose(fp); return v; }
int main() {
    FILE* fm = fopen("meta.txt", "r"); int n, ns, nslot, np_, net; fscanf(fm, "%d %d %d %d %d", &n, &ns, &nslot, &np_, &net);
    vector<int> pw(np_), ps(np_); for (auto& x : pw) fscanf(fm, "%d", &x); for (auto& x : ps) fscanf(fm, "%d", &x);
    auto code = rd<int>("code.bin"); auto index = rd<int>("index.bin"); auto ltab = rd<int>("ltab.bin"); auto lt = rd<int>("lt.bin");
    auto K = rd<double>("consts.bin"); auto P = rd<double>("pvar.bin");
    auto y = rd<double>("y.bin"); auto dslot = rd<int>("dslot.bin"); auto ref = rd<double>("ref.bin");
    vector<double> V((size_t)nslot * n, 0.0), yout(y.size());
    double t = 10.5, dt = 0.01;
    for (int p = 0; p < np_; ++p)
        for (unsigned i = 0; i < (unsigned)n; ++i)
            for (unsigned w = 0; w < (unsigned)pw[p]; ++w) {
                blockIdx = {i, w, 0}; blockDim = {32, 1, 1};
                vector<std::thread> th;
                for (unsigned l = 0; l < 32; ++l) th.emplace_back([&, l] { threadIdx = {l, 0, 0};
#ifdef TS
                    switch (p) { FLINT_TS_DISPATCH }
#else
                    flint_is_phase(code.data(), index.data(), ps[p], K.data(), P.data(), y.data(), nullptr, 0.0, t, V.data(), n, net, ltab.data());
#endif
                });
                for (auto& x : th) x.join();
            }
    blockDim = {128, 1, 1}; blockIdx = {0, 0, 0};
    for (unsigned i = 0; i < (unsigned)n; ++i) { threadIdx = {i, 0, 0};
        flint_update(V.data(), dslot.data(), y.data(), dt, 0, 0.0, nullptr, nullptr, yout.data(), ns, n);
    }
    double err = 0; int neq = 0;
    for (size_t k = 0; k < y.size(); ++k) { double e = fabs(yout[k] - ref[k]) / fmax(fabs(ref[k]), 1e-300); err = fmax(err, e); neq += yout[k] != ref[k]; }
    printf("max rel err %.3g, %d of %zu values differ bitwise\n", err, neq, y.size());
}
"""


@pytest.mark.parametrize("unify", [True, False, "unordered"])
@pytest.mark.parametrize("which", ["sums", "lr_ring"])
def test_cuda_sources_run_on_host(lr, sums, which, unify, tmp_path):
    """One Euler step of the IS phase kernel and of the TS phase kernels (C++ on the host, 32 real
    threads a warp) equals the Python warp emulation bit for bit."""
    import shutil
    import subprocess
    from kernels.flint.runtimes import is_source, ts_phase_build
    if shutil.which("g++") is None:
        pytest.skip("g++ not available")
    # "unordered": unify on without reorder and redundant threads (equal sequences not adjacent,
    # partly idle warps: only the warps that happen to be uniform are unified)
    opts = CompileOptions(reorder=False, redundant=False) if unify == "unordered" else CompileOptions(unify=unify)
    if which == "sums":
        m, n = sums, 3
        p = compile_model(m, n, {"g": [0.1, 0.2, 0.3]}, options=opts)
    else:
        m, n = lr, 4
        p = compile_model(m, network=Network("ring", n, "V", 1.0), member_params={"stim_amplitude": [-25.5, 0, 0, 0]},
                          options=opts)
    rng = np.random.default_rng(1)
    y = np.array(list(m.states.values()))[:, None] * (1 + 0.05 * rng.standard_normal((m.n_states, n)))
    lay = p.layout
    if unify is not False:
        assert lay.unified_warps > 0 or unify == "unordered"   # the LANE path of flint_exec is exercised
    else:
        assert lay.unified_warps == 0
    P = p.pvar_values if p.pvar_values.size else np.zeros((1, n))
    ref = y + 0.01 * interpret(p, y, None, 0.0, 10.5, P, mapping="expression")
    for name, arr, dtp in (("code", lay.code, np.int32), ("index", lay.index, np.int32),
                           ("ltab", lay.lane_table, np.int32), ("consts", p.consts, np.float64),
                           ("pvar", P, np.float64), ("y", y, np.float64), ("dslot", np.array(p.deriv_slots), np.int32),
                           ("ref", ref, np.float64)):
        np.ascontiguousarray(arr, dtype=dtp).tofile(tmp_path / f"{name}.bin")
    meta = [n, m.n_states, max(p.n_slots, 1), len(lay.phase_warps), 2 if p.network else 0]
    (tmp_path / "meta.txt").write_text(" ".join(map(str, meta + list(lay.phase_warps) + list(lay.phase_start))))
    (tmp_path / "pre.h").write_text(_HOST_PRE)
    (tmp_path / "main.cpp").write_text(_HOST_MAIN)
    (tmp_path / "is.cu.h").write_text(is_source(p))
    ts_src, lt = ts_phase_build(p)
    lt.tofile(tmp_path / "lt.bin")
    (tmp_path / "ts.cu.h").write_text(ts_src)
    disp = " ".join(f"case {k}: flint_ts_p{k}(K.data(), P.data(), y.data(), nullptr, 0.0, t, V.data(), n, net, lt.data()); break;"
                    for k in range(len(lay.phase_warps)))
    for flags in ([], ["-DTS", f"-DFLINT_TS_DISPATCH={disp}"]):
        exe = tmp_path / ("ts" if flags else "is")
        subprocess.run(["g++", "-std=c++14", "-O1", "-pthread", "-ffp-contract=off", "-w", *flags, "-o", str(exe),
                        "main.cpp"], cwd=tmp_path, check=True)
        out = subprocess.run([str(exe)], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
        assert "0 of" in out and "err 0," in out, (flags[:1], out)
