"""Flint: the thesis's measurements that benchmarks/flint.py does not make (paper 004 ch. 5, issue 23).

Sections (``--sections``; each takes ``--quick``; GPU sections say so and are skipped without CUDA):

``memory``  (Table 5.3, "global memory footprint for the IS method")
    Per runtime (cpu, c, c-is, is, ts) and mapping (cell, expression), for LR-1991 ensembles and lines
    and the flattened catalog models (Wang, Rybak, LR-Ring, LR-100, Mix): the thesis's rows computed
    from the compiled :class:`~kernels.flint.compiler.Program` — bytecode (+ per-member index or the
    expression layout's index and lane table), constant table, per-member parameters, states (current,
    next, two RK4 stages, accumulator: 5 arrays), the expression mapping's global slots, and the
    results of one sample (every state of every cell, the thesis's "(1 step)" row) — next to
    :func:`kernels.flint.runtimes.memory_estimate` (what a run checks before allocating) and, on the
    GPU, the real allocation: CuPy's default memory pool ``used_bytes()`` grown by building the run.
    Host runtimes whose build is a long compile of a flattened model (``c``; ``ts`` cell mapping:
    NVRTC of one thread running the whole model) are computed only.

``bandwidth``  (Table 5.5, "effective memory bandwidth")
    GB/s = bytes a step / measured seconds a step, for IS and TS, cell and expression mappings.
    Counting model ("compulsory" bytes, Euler, itemsize b, n cells): b·n·(2·S + Q) + b·C, plus
    b·n·2·F in the expression mapping — each state read and written once (S states), each
    per-member parameter read once (Q), the constant table read once (C), and every global slot of
    the expression mapping written once and read once (F slots; the cell mapping keeps them in
    registers/local memory).  Second column: the thesis's count ("push and pop operations in the
    bytecodes"): b · the operand words of the bytecode's memory instructions (CONST, CONST_IND,
    STATE, STATE_NB, VAR, ASSIGN) per cell per step, plus the update's state read/write.  Peak =
    2 · memory clock · bus width (CuPy device attributes).  TS many steps a launch keeps the states in
    registers, so its figure is the bandwidth a one-launch-a-step code would need for that speed.

``accuracy``  (Table 5.9, "relative root mean square errors")
    Against a Radau reference (``scipy.integrate.solve_ivp(method="Radau", rtol=1e-10, atol=1e-12)``
    on the same right-hand side, the NumPy runtime's generated code; the stimulus edges are
    integration breakpoints), over the thesis's 100 ms (10,000 steps of 0.01 ms), samples every
    0.1 ms: RMS(V) = sqrt(mean_t (V − V_ref)²) in mV, RRMSE(V) = RMS(V)/sqrt(mean_t V_ref²), and the
    largest per-state RRMSE.  Rows: Euler and RK4 at dt 0.02/0.01/0.005 ms in float64, and float32 at
    0.01 ms, on the host C runtime ``c`` (float32 there is the same generated C with ``real = float``;
    the NumPy runtime computes a single cell in Python floats, so it is not a float32 run) and, with a
    GPU, on ``ts`` and ``is``.  Second table — the thesis's own Table 5.9: RRMSE of each runtime
    against the interpreter on one core (``c-is``), float64, Euler, dt 0.01, 10,000 steps.  The
    adaptive schemes of :mod:`kernels.flint.schemes` take SBML files only, not these models.

``optimizations``  (Fig. 5.10)
    Seconds per 100,000 steps (scaled from a shorter run) of the expression mapping with the thesis's
    six optimizations on (reorder, remap, redundant, unify, merge, sum) and with each one switched
    off in turn (:class:`~kernels.flint.CompileOptions`), IS and TS, flattened models; every variant's
    state after 200 steps is compared with the all-on run first.

``auto``  (issue 23: ``--runtime auto`` never more than 1.2× slower than the fastest runtime)
    Seconds per 100,000 steps of c (one core), cpu, is, ts for LR-1991 ensembles of 1 … 100,000 cells
    and lines of 2 … 5,000; the runtime :func:`kernels.flint.runtimes.auto.choose_runtime` picks,
    its time over the fastest, PASS/FAIL.

Timing: compile excluded; a warm-up of at least ``--warm`` seconds (TS tunes its block size there),
then one run of about ``--min-time`` seconds, scaled to 100,000 steps.

Usage:  python benchmarks/flint_thesis.py [--quick] [--sections memory,bandwidth,...] [--format md|csv]
        [--out FILE] [--deadline S]        (markdown also to $OUT/flint_thesis.md)
"""
from __future__ import annotations

import os

# Radau's complex LU factorisations (400 × 400 for Wang) ran 25× slower on a threaded OpenBLAS than on one
# thread on the development machine: one BLAS thread unless the caller says otherwise (before NumPy loads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import csv  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels.errors import SimulationBlowUp  # noqa: E402
from kernels.flint import CompileOptions, Network, Simulation, compile_model, load_model  # noqa: E402
from kernels.flint.compiler import N_ARGS, OPNAMES  # noqa: E402
from kernels.flint.runtimes import RUNTIMES, memory_estimate, network_stimulus, numpy_source, ts_phase_build  # noqa: E402
from kernels.flint.runtimes.auto import choose_runtime  # noqa: E402
from kernels.flint.runtimes.is_loop import packable  # noqa: E402
from kernels.flint.runtimes.is_regs import pack_registers  # noqa: E402

SECTIONS = ("memory", "bandwidth", "accuracy", "optimizations", "auto")
GPU_SECTIONS = ("bandwidth", "optimizations")
FLAT = ("wang", "rybak", "lr-ring", "lr-100", "mix")
SIX = ("reorder", "remap", "redundant", "unify", "merge", "sum")       # thesis Fig. 5.10, in its order
PER = 100_000                                                          # steps the times are given for
DT = 0.01
MEM_OPS = {"CONST", "CONST_IND", "STATE", "STATE_NB", "VAR", "ASSIGN"}


class Report:
    """Tables printed as Markdown or CSV as they are finished, kept for ``--out`` / $OUT."""

    def __init__(self, fmt: str):
        self.fmt, self.parts = fmt, []

    def text(self, s: str = "") -> None:
        print(s, flush=True)
        self.parts.append(s)

    def table(self, title: str, cols: list, rows: list) -> None:
        if self.fmt == "csv":
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            w.writerow(["table"] + list(cols))
            for r in rows:
                w.writerow([title] + list(r))
            s = buf.getvalue().rstrip("\n")
        else:
            s = "\n".join([f"### {title}\n", "| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
                          + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]) + "\n"
        self.text(s)


def kb(b) -> str:
    return "—" if b is None else f"{b / 1024:,.1f}"


def case(name: str, n: int = 1, line: bool = False):
    """(label, model, n, network, member_params) of one measured case."""
    model = load_model("luo_rudy_1991" if name == "lr" else name)
    if line:
        net = Network("line", n, "V", 1.0)
        return f"LR line {n:,}", model, n, net, network_stimulus(model, n)
    label = f"LR ×{n:,}" if name == "lr" else name
    return label, model, n, None, None


def simulation(c, runtime: str, mapping: str = "cell", **kw) -> Simulation:
    _, model, n, net, mp = c
    return Simulation(model, runtime, n=n, network=net, member_params=mp, mapping=mapping, **kw)


def timed(sim: Simulation, k: int) -> float:
    t0 = time.perf_counter()
    sim.advance(k, DT, record=[0], every=max(k, 1))
    sim.engine.synchronize()
    return time.perf_counter() - t0


def per_step(sim: Simulation, min_s: float, warm_s: float, max_steps: int = PER) -> tuple[float, int]:
    """(seconds a step, steps timed): steps ×4 until ``warm_s`` is spent (compiles lazily, tunes the
    block size), then runs sized from the last until one lasts ``min_s`` seconds (or ``max_steps``):
    a short probe's per-call overhead would otherwise size the timed run too short."""
    k, el = 1, timed(sim, 1)
    while el < warm_s and k < max_steps:
        k = min(max_steps, 4 * k)
        el = timed(sim, k)
    while True:
        k = max(1, min(max_steps, int(1.1 * min_s * k / max(el, 1e-9))))
        el = timed(sim, k)
        if el >= min_s or k >= max_steps:
            return el / k, k


def gpu_runtimes() -> list:
    return [r for r in ("is", "ts") if r in RUNTIMES and RUNTIMES[r].unavailable() is None]


def host_runtimes() -> list:
    return [r for r in ("cpu", "c-is", "c") if r in RUNTIMES and RUNTIMES[r].unavailable() is None]


# ------------------------------------------------------------------------------------- memory
def breakdown(prog, mapping: str, itemsize: int) -> dict:
    """The thesis's Table 5.3 rows, bytes, from the compiled program (see the module docstring)."""
    n, ns = prog.n_members, prog.n_states
    if mapping == "expression":
        lay = prog.layout
        code = lay.code.nbytes + lay.index.nbytes + lay.lane_table.nbytes
    else:
        code = prog.code.nbytes + (prog.index.nbytes if prog.index is not None else 0)
    return {"bytecode": code, "constants": prog.consts.size * itemsize,
            "parameters": prog.pvar_values.size * itemsize, "states": 5 * ns * n * itemsize,
            "slots": prog.n_slots * n * itemsize if mapping == "expression" else 0,
            "results": ns * n * itemsize}


def memory_section(rep: Report, cases: list, gpu: list, hosts: list, deadline: float) -> None:
    rows = []
    pool = None
    if gpu:
        import cupy as cp
        pool = cp.get_default_memory_pool()
    for c in cases:
        label, model, n, net, mp = c
        flat = model.n_states > 100
        combos = [(r, "cell") for r in hosts] + [(r, m) for r in gpu for m in ("cell", "expression")]
        progs = {}
        for rt, mapping in combos:
            if time.perf_counter() > deadline:
                rows.append([label, model.n_states, f"{n:,}", rt, mapping, "not run (deadline)"] + [""] * 11)
                continue
            if "prog" not in progs:
                progs["prog"] = compile_model(model, n, mp, net)
            prog = progs["prog"]
            item = 8
            b = breakdown(prog, mapping, item)
            if (rt, mapping) == ("is", "cell") and packable(prog):   # + the many-steps kernel's register form
                pk = pack_registers(prog, np.float64)
                b["bytecode"] += pk.code.nbytes + pk.imm.nbytes + pk.dslot.nbytes
            if rt in ("cpu", "c", "ts"):            # no bytecode: generated code (ts expression: its operand table)
                b["bytecode"] = np.asarray(ts_phase_build(prog, "double")[1]).nbytes \
                    if (rt, mapping) == ("ts", "expression") else 0
            host, dev = memory_estimate(model, n, len(mp or {}), rt, mapping, item)
            built = sum(v for k, v in b.items() if k != "results")
            measured, ratio = "—", "—"
            heavy = flat and ((rt == "c") or (rt == "ts" and mapping == "cell"))
            if rt in gpu and not heavy:
                gc.collect()                      # earlier simulations freed now, not during this build
                pool.free_all_blocks()
                before = pool.used_bytes()
                sim = simulation(c, rt, mapping)  # noqa: F841 (held while the pool is read)
                got = pool.used_bytes() - before
                measured, ratio = kb(got), f"{got / max(built, 1):.2f}"
                del sim
                pool.free_all_blocks()
            elif heavy:
                measured = "computed only (long compile)"
            rows.append([label, model.n_states, f"{n:,}", rt, mapping, kb(b["bytecode"]), kb(b["constants"]),
                         kb(b["parameters"]), kb(b["states"]), kb(b["slots"]), kb(built), kb(b["results"]),
                         kb(b["results"] * 1000), kb(host), kb(dev) if RUNTIMES[rt].device == "gpu" else "—",
                         measured, ratio])
            print(f"  memory {label} {rt} {mapping}: {measured} ({ratio})", file=sys.stderr, flush=True)
    rep.table("Table 5.3: memory footprint per runtime (KB, float64)",
              ["model", "ODEs", "cells", "runtime", "mapping", "bytecode", "constants", "parameters",
               "states (5 arrays)", "slots", "sum at build", "results (1 sample)", "results of 1000 samples",
               "estimate host", "estimate GPU", "measured GPU", "measured / sum"], rows)
    rep.text("bytecode … results: the thesis's rows from the compiled program (bytecode: IS's bytecode and index or "
             "expression layout, and for IS cell mapping of an ensemble also the many-steps kernel's packed register-form program; TS expression: its operand table; none for the generated code of cpu/c/ts cell); "
             "estimate: `memory_estimate` (what a run checks before allocating); measured: CuPy pool bytes held "
             "after the build (each allocation rounded up to 512 B; the TS many-steps kernel's constants live in "
             "__constant__ memory, outside the pool).\n")


# ------------------------------------------------------------------------------------- bandwidth
def bytecode_refs(code: np.ndarray) -> int:
    """Memory operand references in a bytecode (the thesis's push/pop count): CONST, CONST_IND,
    STATE, STATE_NB, VAR, ASSIGN instructions."""
    pc, refs = 0, 0
    while pc < code.size:
        op = OPNAMES.get(int(code[pc]), "END")
        refs += op in MEM_OPS
        pc += 1 + N_ARGS.get(op, 0)
    return refs


def step_bytes(prog, mapping: str, itemsize: int = 8) -> tuple[int, int]:
    """(compulsory bytes a step, the thesis's bytecode-count bytes a step): module docstring."""
    n, ns, q = prog.n_members, prog.n_states, prog.pvar_values.shape[0]
    comp = itemsize * (n * (2 * ns + q) + prog.consts.size)
    if mapping == "expression":
        comp += itemsize * n * 2 * prog.n_slots
        code = prog.layout.code
    else:
        code = prog.code
    per_cell = bytecode_refs(code) if (prog.index is None or mapping == "expression") else bytecode_refs(code) / n
    return comp, int(itemsize * n * (per_cell + 2 * ns))


def peak_bandwidth() -> tuple[float, str]:
    import cupy as cp
    a = cp.cuda.Device().attributes
    clock_hz, bus_bits = a["MemoryClockRate"] * 1e3, a["GlobalMemoryBusWidth"]
    peak = 2 * clock_hz * bus_bits / 8
    return peak, f"{clock_hz / 1e6:.0f} MHz × {bus_bits} bits × 2 = {peak / 1e9:,.0f} GB/s"


def bandwidth_section(rep: Report, cases: list, gpu: list, min_s: float, warm_s: float, deadline: float) -> None:
    peak, how = peak_bandwidth()
    rows = []
    for c in cases:
        label, model, n, net, mp = c
        maps = ("expression",) if model.n_states > 100 else ("cell", "expression")
        for rt in gpu:
            for mapping in maps:
                if time.perf_counter() > deadline:
                    rows.append([label, f"{n:,}", rt, mapping, "not run (deadline)", "", "", "", ""])
                    continue
                sim = simulation(c, rt, mapping)
                sec, k = per_step(sim, min_s, warm_s)
                comp, refs = step_bytes(sim.prog, mapping)
                rows.append([label, f"{n:,}", rt, mapping, f"{sec * PER:.3f}", f"{comp / sec / 1e9:.3g}",
                             f"{100 * comp / sec / peak:.2g} %", f"{refs / sec / 1e9:.3g}",
                             f"{100 * refs / sec / peak:.2g} %"])
                print(f"  bandwidth {label} {rt} {mapping}: {rows[-1][4:]}", file=sys.stderr, flush=True)
                del sim
    rep.table("Table 5.5: achieved bandwidth (GB/s, float64, Euler)",
              ["model", "cells", "runtime", "mapping", "s / 100k steps (scaled)", "compulsory GB/s", "compulsory / peak",
               "bytecode-count GB/s (thesis)", "bytecode count / peak"], rows)
    rep.text(f"Peak: {how}.  Counting model in the module docstring.  The bytecode count describes the "
             "interpreter (every operand a memory access); the translator keeps the bytecode's variables in "
             "registers (and the many-steps kernel its states too), so for ts its figure can pass the peak.\n")


# ------------------------------------------------------------------------------------- accuracy
def breakpoints(model, t_end: float) -> list:
    """Times where the model's stimulus switches (integration restarts there): [0, …, t_end]."""
    p = model.params
    pts = {0.0, float(t_end)}
    if "stim_start" in p and "stim_duration" in p:
        start, dur, per = float(p["stim_start"]), float(p["stim_duration"]), float(p.get("stim_period", 1e30))
        k = 0
        while start + k * per < t_end:
            pts |= {start + k * per, start + k * per + dur}
            k += 1
    return sorted(x for x in pts if 0.0 <= x <= t_end)


def radau_reference(model, times: np.ndarray) -> np.ndarray:
    """(len(times), n_states) states of ``model`` at ``times`` by Radau (rtol 1e-10, atol 1e-12), the
    right-hand side the NumPy runtime's generated code (vectorised over columns for the Jacobian)."""
    from scipy.integrate import solve_ivp
    prog = compile_model(model, 1)
    ns = {"np": np, "nb": None, **{k: getattr(math, k) for k in dir(math) if not k.startswith("_")}}
    exec(numpy_source(prog), ns)                          # noqa: S102 (our own generated code)
    rhs, P, K, m = ns["rhs"], prog.pvar_values, prog.consts, prog.n_states
    exec(numpy_source(prog, scalar=True).replace("def rhs(", "def rhs1("), ns)   # noqa: S102
    rhs1, K1 = ns["rhs1"], [float(k) for k in K]

    def f(t, Y):
        if Y.ndim == 1 or Y.shape[1] == 1:                # one state vector: Python floats, 25x faster
            try:
                d = np.array(rhs1(Y.ravel().tolist(), None, 0.0, t, None, K1, None), dtype=np.float64)
                return d if Y.ndim == 1 else d[:, None]
            except (ArithmeticError, ValueError):
                pass
        cols = Y.shape[1] if Y.ndim == 2 else 1
        with np.errstate(all="ignore"):
            d = rhs(Y.reshape(m, cols), None, 0.0, t, P, K, None)
        out = np.stack([np.broadcast_to(np.asarray(v, dtype=np.float64), (cols,)) for v in d])
        return out if Y.ndim == 2 else out[:, 0]

    y = np.array(list(model.states.values()), dtype=np.float64)
    res = np.full((len(times), m), np.nan)
    edges = breakpoints(model, float(times[-1]))
    for a, b in zip(edges[:-1], edges[1:]):
        sol = solve_ivp(f, (a, b), y, method="Radau", rtol=1e-10, atol=1e-12, vectorized=True, dense_output=True,
                        max_step=min(b - a, 0.1))
        if not sol.success:
            raise RuntimeError(f"Radau failed on {model.name}: {sol.message}")
        inside = (times >= a) & (times <= b)
        res[inside] = sol.sol(times[inside]).T
        y = sol.y[:, -1]
    return res


def trajectory(model, runtime: str, integrator: str, dtype: str, dt: float, t_end: float, sample: float,
               mapping: str = "cell") -> np.ndarray:
    """(samples, n_states) of one cell every ``sample`` ms up to ``t_end`` (the first sample at ``sample``)."""
    sim = Simulation(model, runtime, n=1, integrator=integrator, dtype=dtype, mapping=mapping)
    every = max(1, round(sample / dt))
    _, y = sim.advance(round(t_end / dt), dt, every=every)
    return np.asarray(y, dtype=np.float64)[:, :, 0]


def errors(y: np.ndarray, ref: np.ndarray, v: int) -> tuple[float, float, float]:
    """(RMS of V, RRMSE of V, largest per-state RRMSE) of y against ref, both (samples, states)."""
    d = y - ref
    rms = np.sqrt(np.mean(d ** 2, axis=0))
    rr = rms / np.maximum(np.sqrt(np.mean(ref ** 2, axis=0)), 1e-300)
    return float(rms[v]), float(rr[v]), float(np.max(rr))


def accuracy_section(rep: Report, models: list, dts: tuple, gpu: list, hosts: list, deadline: float,
                     t_end: float = 100.0) -> None:
    """Table 5.9: one cell of each model to ``t_end`` ms (the thesis: 100) against Radau."""
    sample = 0.1
    fixed = "c" if "c" in hosts else "cpu"
    rows, rows9 = [], []
    for name in models:
        model = load_model(name)
        if time.perf_counter() > deadline:
            rows.append([name, "not run (deadline)"] + [""] * 7)
            continue
        names = list(model.states)                       # V, else the first cell's (V_0, wang_V_0, …)
        v = next((i for i, s in enumerate(names) if s == "V" or s.startswith("V_") or "_V_" in s), 0)
        label = name if names[v] == "V" else f"{name} ({names[v]})"
        times = np.arange(1, round(t_end / sample) + 1) * sample
        t0 = time.perf_counter()
        ref = radau_reference(model, times)
        rows.append([label, "Radau rtol 1e-10 (reference)", "adaptive", "float64", "scipy",
                     f"({time.perf_counter() - t0:.1f} s)", "0", "0", ""])
        runs = [(fixed, i, "float64", dt) for i in ("euler", "rk4") for dt in dts]
        runs += [(rt, i, p, 0.01) for rt in gpu for i in ("euler", "rk4") for p in ("float64", "float32")]
        runs += [(fixed, i, "float32", 0.01) for i in ("euler", "rk4") if fixed == "c"]
        got = {}
        for rt, integ, dtype, dt in runs:
            mapping = "expression" if rt in gpu and model.n_states > 100 else "cell"
            try:
                y = got[rt, integ, dtype, dt] = trajectory(model, rt, integ, dtype, dt, t_end, sample, mapping)
            except SimulationBlowUp as exc:
                rows.append([label, integ, f"{dt:g}", dtype, rt, f"blew up ({exc})", "", "", ""])
                continue
            e = errors(y, ref, v)
            y64 = got.get((rt, integ, "float64", dt), got.get((fixed, integ, "float64", dt)))
            vs64 = f"{errors(y, y64, v)[0]:.3g}" if dtype == "float32" and y64 is not None else ""
            rows.append([label, integ, f"{dt:g}", dtype, f"{rt} ({mapping})" if rt in gpu else rt,
                         f"{e[0]:.3g}", f"{e[1]:.3g}", f"{e[2]:.3g}", vs64])
            print(f"  accuracy {name} {rows[-1][1:]}", file=sys.stderr, flush=True)
        if "c-is" in hosts:                                      # the thesis's Table 5.9
            base = trajectory(model, "c-is", "euler", "float64", DT, t_end, sample)
            for rt in [r for r in ("cpu", "c") if r in hosts] + gpu:
                mapping = "expression" if rt in gpu and model.n_states > 100 else "cell"
                y = trajectory(model, rt, "euler", "float64", DT, t_end, sample, mapping)
                rr = np.sqrt(np.sum((y - base) ** 2) / max(np.sum(base ** 2), 1e-300))
                rows9.append([name, f"{rt} ({mapping})", f"{rr:.2g}"])
    rep.table(f"Table 5.9 (issue 23 form): RMS error against Radau, one cell, {t_end:g} ms, samples every {sample} ms",
              ["model", "integrator", "dt (ms)", "precision", "runtime", "RMS(V) (mV)", "RRMSE(V)",
               "max RRMSE over states", "float32: RMS(V) vs the float64 run (mV)"], rows)
    if rows9:
        rep.table("Table 5.9 (thesis form): RRMSE of all states against the interpreter on one core (c-is), "
                  f"float64, Euler, dt {DT:g} ms, {round(t_end / DT):,} steps", ["model", "runtime", "RRMSE"], rows9)


# ------------------------------------------------------------------------------------- optimizations
def optimizations_section(rep: Report, models: list, gpu: list, min_s: float, warm_s: float, deadline: float) -> None:
    rows = []
    for name in models:
        model = load_model(name)
        c = (name, model, 1, None, None)
        for rt in gpu:
            cells, ref = [], None
            for off in (None,) + SIX:
                if time.perf_counter() > deadline:
                    cells.append("not run (deadline)")
                    continue
                opts = CompileOptions(**({off: False} if off else {}))
                sim = simulation(c, rt, "expression", options=opts)
                sim.advance(200, DT, record=[0], every=200)
                y = sim.state()
                ref = y if off is None else ref
                diff = float(np.max(np.abs(y - ref) / np.maximum(np.abs(ref), 1e-12))) if ref is not None else 0.0
                sec, _ = per_step(sim, min_s, warm_s)
                cells.append(f"{sec * PER:.2f}" + (f" (Δ {diff:.0e})" if diff else ""))
                print(f"  optimizations {name} {rt} {off or 'all on'}: {cells[-1]}", file=sys.stderr, flush=True)
                del sim
            rows.append([name, model.n_states, rt] + cells)
    rep.table("Fig. 5.10: seconds per 100,000 steps, expression mapping, one optimization off at a time (scaled)",
              ["model", "ODEs", "runtime", "all on"] + [f"{o} off" for o in SIX], rows)
    rep.text("Δ: max relative difference of the state after 200 steps from the all-on run (blank: identical).\n")


# ------------------------------------------------------------------------------------- auto
def auto_section(rep: Report, quick: bool, gpu: list, hosts: list, min_s: float, warm_s: float,
                 deadline: float, limit: float = 1.2) -> None:
    ens = [1, 2, 4, 8, 12, 16, 24, 100, 1000] + ([] if quick else [10_000, 100_000])
    lines = [2, 4, 8, 12, 16, 24, 32, 48, 100] + ([] if quick else [1000, 5000])
    rts = [r for r in ("c", "cpu") if r in hosts] + gpu
    rows, verdicts = [], []
    for kind, sizes in (("ensemble", ens), ("line", lines)):
        for n in sizes:
            c = case("lr", n, line=kind == "line")
            t = {}
            for rt in rts:
                if time.perf_counter() > deadline:
                    break
                budget = PER if rt != "cpu" else 2000
                sim = simulation(c, rt)
                t[rt] = per_step(sim, min_s, warm_s if rt in gpu else 0.0, budget)[0] * PER
                del sim
            pick = choose_runtime(n, kind == "line", gpu=bool(gpu), compiler="c" in hosts).runtime
            if not t:
                rows.append([kind, f"{n:,}"] + ["not run (deadline)"] + [""] * (len(rts) + 3))
                continue
            best = min(t, key=t.get)
            ratio = t.get(pick, math.nan) / t[best]
            ok = "PASS" if ratio <= limit else ("FAIL" if ratio == ratio else "—")
            verdicts.append(ok)
            rows.append([kind, f"{n:,}"] + [f"{t[r]:.3f}" if r in t else "—" for r in rts]
                        + [best, pick, f"{ratio:.2f}", ok])
            print(f"  auto {kind} {n}: {rows[-1][2:]}", file=sys.stderr, flush=True)
    rep.table("issue 23: `--runtime auto` against the fastest runtime (LR-1991, s / 100k steps, scaled)",
              ["cells", "n"] + [f"{r}{' (1 core)' if r == 'c' else ''}" for r in rts]
              + ["fastest", "auto picks", "auto / fastest", f"≤ {limit}×"], rows)
    rep.text(f"auto within {limit}× of the fastest: {verdicts.count('PASS')}/{len(verdicts)} cases"
             + (" — **all met**" if verdicts and all(v == "PASS" for v in verdicts) else "") + ".\n")


# ------------------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one flattened model, short timings")
    ap.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, of {', '.join(SECTIONS)}")
    ap.add_argument("--models", default=None, help="flattened models (default: all five; --quick: wang)")
    ap.add_argument("--accuracy-models", default=None,
                    help="models of the accuracy section (default luo_rudy_1991,wang; --quick: luo_rudy_1991)")
    ap.add_argument("--dts", default=None,
                    help="step sizes (ms) of the accuracy section, each dividing 0.1 (default 0.02,0.01,0.005; --quick: 0.01)")
    ap.add_argument("--accuracy-t-end", type=float, default=100.0, metavar="MS",
                    help="the accuracy section's horizon in ms (default 100, the thesis'; the test suite's "
                         "dry run: 20)")
    ap.add_argument("--format", choices=["md", "csv"], default="md")
    ap.add_argument("--out", default=None, help="also write the tables to this file")
    ap.add_argument("--min-time", type=float, default=None, help="seconds a timed run aims at (default 0.3; quick 0.05)")
    ap.add_argument("--warm", type=float, default=None, help="warm-up seconds of a GPU timing (default 0.1; quick 0.03)")
    ap.add_argument("--deadline", type=float, default=0.0,
                    help="seconds for each section; rows after it say 'not run (deadline)' (0: none)")
    ap.add_argument("--no-gpu", action="store_true", help="leave the GPU runtimes out")
    a = ap.parse_args(argv)
    sections = [s for s in a.sections.split(",") if s]
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        ap.error(f"unknown section(s) {', '.join(bad)}: choose from {', '.join(SECTIONS)}")
    if a.out and not os.path.isdir(os.path.dirname(os.path.abspath(a.out))):
        ap.error(f"--out: no folder {os.path.dirname(os.path.abspath(a.out))}")
    if not a.accuracy_t_end >= 1.0:
        ap.error(f"--accuracy-t-end must be ≥ 1 ms (got {a.accuracy_t_end:g})")
    min_s = a.min_time or (0.05 if a.quick else 0.3)
    warm_s = a.warm or (0.03 if a.quick else 0.1)
    gpu = [] if a.no_gpu else gpu_runtimes()
    hosts = host_runtimes()
    flat = a.models.split(",") if a.models else (["wang"] if a.quick else list(FLAT))
    acc_models = a.accuracy_models.split(",") if a.accuracy_models else \
        (["luo_rudy_1991"] if a.quick else ["luo_rudy_1991", "wang"])
    from kernels import backend as bk
    rep = Report(a.format)
    dev = bk.select("gpu").describe() if gpu else "no GPU runtime here (" + bk.gpu_available()[1] + ")"
    rep.text(f"# Flint thesis tables (paper 004 ch. 5) — {dev}; host runtimes: {', '.join(hosts)}\n")
    lr = [case("lr", n) for n in ([1, 1000] if a.quick else [1, 1000, 100_000])]
    lr += [case("lr", n, line=True) for n in ([100] if a.quick else [1000, 5000])]
    flats = [case(m) for m in flat]
    for s in sections:
        end = time.perf_counter() + a.deadline if a.deadline else math.inf
        t0 = time.perf_counter()
        if s in GPU_SECTIONS and not gpu:
            rep.text(f"## {s}: needs the GPU runtimes is/ts (not run)\n")
            continue
        rep.text(f"## {s}\n")
        if s == "memory":
            memory_section(rep, lr + flats, gpu, hosts, end)
        elif s == "bandwidth":
            bandwidth_section(rep, lr + flats, gpu, min_s, warm_s, end)
        elif s == "accuracy":
            dts = tuple(float(x) for x in a.dts.split(",")) if a.dts else ((0.01,) if a.quick else (0.02, 0.01, 0.005))
            accuracy_section(rep, acc_models, dts, gpu, hosts, end, a.accuracy_t_end)
        elif s == "optimizations":
            optimizations_section(rep, flat, gpu, min_s, warm_s, end)
        elif s == "auto":
            auto_section(rep, a.quick, gpu, hosts, min_s, warm_s, end)
        print(f"  section {s}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    text = "\n".join(rep.parts)
    save_markdown("flint_thesis.md" if a.format == "md" else "flint_thesis.csv", text)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text.rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
