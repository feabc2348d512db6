"""Flint benchmark (paper 004 ch. 5), side by side in one run.

1. LR-1991 ensembles of 1, 1k, 10k and 100k cells, 100,000 explicit Euler steps of 0.01 ms
   (1000 ms), float64: our interpreter (IS) and translator (TS) on the GPU, our NumPy runtime, and a
   ``jax.jit(vmap(...))`` Euler of the same model (its right-hand side is the same generated code,
   traced by JAX).  Target on H100: TS at least as fast as JAX; 100k cells × 100k steps < 5 s.
2. The LR line of 5000 cells (diffusive coupling on V, stimulus in the first 5 cells), same
   runtimes (JAX: the vectorised right-hand side with a clipped-index neighbour gather); with TS
   also one launch a step and many steps a launch with a grid-wide barrier between steps (issue 23;
   checked bit for bit against each other first), up to a 100,000-cell line whose threads no longer
   fit the GPU at once (the grid-stride kernel).
3. Thesis Table 5.4 style (Tesla C2070 vs one i7 930 core: interpreter 24× over the CPU,
   translator a further 2.4×; one LR cell slower on the GPU, the 5000-cell line ~250× faster):
   seconds for 100,000 steps of LR lines of 1 … 5000 cells (and the flattened catalog models when
   kernels.flint.catalog exists), IS vs TS vs CPU, with the GPU/CPU ratio — where the GPU pays.
   CPU columns: our NumPy runtime (vectorised over cells) and, when a host C++ compiler is present,
   the thesis's own CPU baselines — runtime ``c-is`` (the interpreter compiled for one core, "IS
   CPU-1"), ``c`` (the translated model on one core, "TS CPU-1") and ``c8`` (the same on 8 OpenMP
   threads, "TS CPU-8").

CPU columns that would take minutes are measured over fewer steps and scaled linearly (marked).
Every runtime's final state is checked against the NumPy runtime over a short run first.

4. ``--only loop`` (issue 23): the same ensembles, TS taking many steps a launch (states in
   registers, samples recorded by the kernel) next to TS one launch a step (as before issue 23) and
   ``jax.jit`` with the whole loop in ``lax.fori_loop``; both TS paths checked against NumPy and
   against each other (bit for bit) first.  Targets (H100): ≤ 0.85 s at 100k cells, ≤ 0.45 s at
   1k–10k.  Beside them IS many steps a launch (the interpreter's loop kernel) and IS one launch a
   step, checked the same way; target IS ≤ 3× TS at every size.

5. ``--only peers`` / ``--only first`` (issue 38, :mod:`benchmarks.peers.flint_sections`): TS beside the
   hand-written LR-1991 CUDA kernel, jax.jit and diffrax (Euler, Dopri5; ``vmap`` over members; rows
   skipped with the reason where diffrax does not import); the first ``advance`` of a new Simulation
   against a warm one, with the block-size tuning cache cold and filled.

Usage:  python benchmarks/flint.py [--quick] [--steps N] [--ensemble-sizes N,N]   (markdown also to
        $OUT/flint_bench.md; the test suite's dry run: --quick --no-gpu --steps 200 --only ensembles
        --runtimes cpu --ensemble-sizes 1,1000)
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels.flint import Network, Simulation, load_model  # noqa: E402
from kernels.flint.compiler import compile_model  # noqa: E402
from kernels.flint.runtimes import RUNTIMES, network_stimulus, numpy_source  # noqa: E402
from kernels.flint.runtimes.host_c import find_compiler  # noqa: E402

DT = 0.01
LINES: list[str] = []


def out(s: str = "") -> None:
    print(s, flush=True)
    LINES.append(s)


def _sync(sim: Simulation) -> None:
    sim.engine.synchronize()


COLUMN_NAMES = {"is": "IS (GPU)", "ts": "TS (GPU)", "cpu": "NumPy (CPU)", "c-is": "IS CPU-1 (C)",
                "c": "TS CPU-1 (C)", "c8": "TS CPU-8 (C, OpenMP)", "jax": "jax.jit"}


#: expression-mapping variants of the flattened-model table (issue 23): column suffix → GpuRuntime
#: settings (fused_enabled, fused_mode, fused_shared); "expression" is the default (fused kernel)
FLAT_VARIANTS = {"phases": (False, None, None), "expression": (True, None, None), "global": (True, "block", False),
                 "grid": (True, "grid", None), "block": (True, "block", None), "slots": (True, "block", "slots"),
                 "states": (True, "block", "states")}


@contextlib.contextmanager
def expression_variant(name: str):
    """Simulations built inside run the expression mapping as ``name`` of :data:`FLAT_VARIANTS`:
    one launch a phase, or the fused kernel (its barrier, slots in shared or global memory)."""
    from kernels.flint.runtimes.gpu import GpuRuntime
    keys = ("fused_enabled", "fused_mode", "fused_shared")
    before = [getattr(GpuRuntime, k) for k in keys]
    for k, v in zip(keys, FLAT_VARIANTS[name]):
        setattr(GpuRuntime, k, v)
    try:
        yield "expression"
    finally:
        for k, v in zip(keys, before):
            setattr(GpuRuntime, k, v)


def time_runtime(model, runtime: str, n: int, steps: int, network=None, cpu_budget_s: float = 20.0,
                 mapping: str = "cell", gpu_budget_s: float = 60.0):
    """Seconds for ``steps`` Euler steps (compile excluded; warm-up of 100 steps), and whether the
    number was scaled from a shorter run.  V is sampled every 1000 steps (as little output as
    possible: thesis Table 5.4 is 'without output').  ``mapping``: cell, or a name of
    :data:`FLAT_VARIANTS` (the expression mapping, fused or one launch a phase)."""
    mp = network_stimulus(model, n) if network is not None else None
    t_c = time.perf_counter()
    threads = 8 if runtime == "c8" else 1             # "c8": runtime c on 8 threads (thesis CPU-8)
    runtime = "c" if runtime == "c8" else runtime
    with (expression_variant(mapping) if mapping in FLAT_VARIANTS else contextlib.nullcontext(mapping)) as mapping:
        sim = Simulation(model, runtime, n=n, network=network, member_params=mp, mapping=mapping, threads=threads)
    sim.advance(100, DT, record=[0], every=1000)
    _sync(sim)
    sim.setup_seconds = time.perf_counter() - t_c          # compile (NVRTC) + 100 warm-up steps
    run_steps, scaled = steps, False
    t0 = time.perf_counter()
    sim.advance(200, DT, record=[0], every=1000)
    _sync(sim)
    per = (time.perf_counter() - t0) / 200
    budget = gpu_budget_s if RUNTIMES[runtime].device == "gpu" else cpu_budget_s
    if per * steps > budget:
        run_steps, scaled = max(200, int(budget / 4 / per)), True
    t0 = time.perf_counter()
    sim.advance(run_steps, DT, record=[0], every=1000)
    _sync(sim)
    sec = (time.perf_counter() - t0) * steps / run_steps
    return sec, scaled, sim


# --------------------------------------------------------------------------------------------
def jax_euler(model, n: int, network=None):
    """A jax.jit Euler integrator of the same model: ``vmap`` of the one-cell right-hand side over
    the ensemble (:func:`benchmarks.peers.flint_jax.fori_euler`), or (for a line) the vectorised
    right-hand side with a neighbour gather."""
    if network is None:
        from benchmarks.peers.flint_jax import fori_euler
        return fori_euler(model, n, DT)
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    from jax import lax
    ns = {"np": jnp, **{k: getattr(math, k) for k in dir(math) if not k.startswith("_")}}
    prog = compile_model(model, n, network_stimulus(model, n), network)
    exec(numpy_source(prog), ns)                     # noqa: S102 (our own generated code)
    rhs, K, P = ns["rhs"], jnp.asarray(prog.consts), jnp.asarray(prog.pvar_values)
    idx = jnp.arange(n)
    ring = network.kind == "ring"

    def nb(S, s, off):
        j = jnp.mod(idx + off, n) if ring else jnp.clip(idx + off, 0, n - 1)
        return S[s, j]

    def f(S, t):
        return jnp.stack([jnp.broadcast_to(jnp.asarray(v, dtype=jnp.float64), (n,))
                          for v in rhs(S, None, 0.0, t, P, K, lambda _S, s, off: nb(S, s, off))])
    y0 = np.array([model.states[s] for s in model.states])[:, None].repeat(n, 1)

    @jax.jit
    def run(y, k0, nsteps):
        return lax.fori_loop(0, nsteps, lambda i, y: y + DT * f(y, (k0 + i) * DT), y)

    return run, jnp.asarray(y0)


def time_jax(model, n: int, steps: int, network=None):
    import jax
    run, y0 = jax_euler(model, n, network)
    y = run(y0, 0, 100)
    jax.block_until_ready(y)
    t0 = time.perf_counter()
    y = run(y, 100, steps)
    jax.block_until_ready(y)
    return time.perf_counter() - t0, run, y0


@contextlib.contextmanager
def ts_loop_fma():
    """Simulations built inside compile TS's many-steps kernel with FMA contraction on (results then
    differ from the NumPy runtime by rounding; for reference only)."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    before = TranslatorRuntime.loop_options
    TranslatorRuntime.loop_options = ("--fmad=true", "-std=c++14")
    try:
        yield
    finally:
        TranslatorRuntime.loop_options = before


@contextlib.contextmanager
def ts_fit_one_wave(on: bool):
    """Simulations built inside cap (or not) the many-steps kernel's registers to one wave."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    before = TranslatorRuntime.fit_one_wave
    TranslatorRuntime.fit_one_wave = on
    try:
        yield
    finally:
        TranslatorRuntime.fit_one_wave = before


@contextlib.contextmanager
def ts_one_launch_a_step(runtime: str = "ts"):
    """Simulations built inside use TS's (or IS's) one-launch-a-step path (before issue 23)."""
    cls = RUNTIMES[runtime]
    cls.loop_enabled = False
    try:
        yield
    finally:
        cls.loop_enabled = True


@contextlib.contextmanager
def ts_coupled(mode: str, barrier: str | None = None):
    """Simulations built inside take coupled cells (lines, rings) by ``mode``: "sync" (the
    grid-synchronised many-steps kernels), "step" (one launch a step) or "auto"; ``barrier``: the
    sync kernels' barrier ("grid" or "neighbours"; None: the runtime's default)."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    before = TranslatorRuntime.coupled_mode, TranslatorRuntime.coupled_barrier
    TranslatorRuntime.coupled_mode = mode
    TranslatorRuntime.coupled_barrier = barrier or before[1]
    try:
        yield
    finally:
        TranslatorRuntime.coupled_mode, TranslatorRuntime.coupled_barrier = before


def check_grid_sync(model, n: int = 50, steps: int = 2000) -> str:
    """TS grid-synchronised vs one launch a step on a line of ``n`` cells (Euler, V and m sampled every
    10 steps): bit for bit, and against NumPy."""
    net, mp = Network("line", n, "V", 1.0), network_stimulus(model, n)
    ref = Simulation(model, "cpu", n=n, network=net, member_params=mp).advance(steps, DT, record=[0, 1], every=10)[1]
    got = {}
    for mode, barrier in (("sync", "grid"), ("sync", "neighbours"), ("step", None)):
        with ts_coupled(mode, barrier):
            got[barrier or mode] = Simulation(model, "ts", n=n, network=net, member_params=mp).advance(
                steps, DT, record=[0, 1], every=10)[1]
    rel = max(float(np.max(np.abs(v - ref) / np.maximum(np.abs(ref), 1e-12))) for v in got.values())
    same = all(np.array_equal(got[b], got["step"]) for b in ("grid", "neighbours"))
    return (f"TS on lines (issue 23): many steps a launch (grid-wide barrier, or barrier with the neighbouring "
            f"blocks) vs one launch a step, checked first ({n} cells, {steps} steps, V and m every 10 steps): "
            f"{'identical bit for bit' if same else 'DIFFER'}; max relative difference vs NumPy {rel:.1e}.")


def grid_sync_columns(model, n: int, steps: int, net) -> list[str]:
    """The lines table's TS columns: one launch a step, the grid-synchronised kernels (which one ran
    last and the tuned block size), and the path ``auto`` picks for this line."""
    with ts_coupled("step"):
        t_step, scaled, _ = time_runtime(model, "ts", n, steps, network=net)
    cols = [f"{t_step:.3f}{' (scaled)' if scaled else ''}"]
    for barrier in ("grid", "neighbours"):
        with ts_coupled("sync", barrier):
            t_sync, _, sim = time_runtime(model, "ts", n, steps, network=net)
        kern = {"flint_ts_coupled": "registers", "flint_ts_coupled_stride": "stride"}.get(
            sim.info()["coupled_kernel"], "?")
        cols.append(f"{t_sync:.3f} [{kern}, {sim.block_size}]")
    with ts_coupled("auto"):
        auto = Simulation(model, "ts", n=n, network=net, member_params=network_stimulus(model, n))
    return cols + ["grid-sync" if auto.engine.loops() else "one launch a step"]


def loop_section(model, steps: int, sizes, have_jax: bool) -> None:
    """Section 4 (issue 23): TS many steps a launch vs one launch a step vs jax.jit fori_loop."""
    from kernels.flint.runtimes.translator import TranslatorRuntime
    n = 64
    mp = {"g_Na": np.linspace(15, 25, n)}
    ref = Simulation(model, "cpu", n=n, member_params=mp)
    _, yr = ref.advance(2000, DT, record=[0, 1], every=10)
    got = {}
    for rt in ("ts", "is"):
        for name in ("loop", "step"):
            with (ts_one_launch_a_step(rt) if name == "step" else contextlib.nullcontext()):
                sim = Simulation(model, rt, n=n, member_params=mp)
            got[rt, name] = sim.advance(2000, DT, record=[0, 1], every=10)[1]
    rel = {k: float(np.max(np.abs(v - yr) / np.maximum(np.abs(yr), 1e-12))) for k, v in got.items()}
    out("\n## 4. TS and IS: many steps a launch (issue 23)\n")
    out("Checked first (64 members, 2000 steps, V and m sampled every 10): max relative difference vs NumPy "
        + "; ".join(f"{rt.upper()} {rel[rt, 'loop']:.1e} (many steps a launch) / {rel[rt, 'step']:.1e} (one launch "
                    f"a step), the two {rt.upper()} paths "
                    f"{'identical bit for bit' if np.array_equal(got[rt, 'loop'], got[rt, 'step']) else 'DIFFER'}"
                    for rt in ("ts", "is")) + ".\n")
    out("| cells | TS, many steps a launch | TS, one launch a step | " + ("jax.jit fori_loop | " if have_jax else "")
        + "speed-up | block size | registers | target | for reference: many steps, FMA on | many steps, "
        + ("registers uncapped |" if TranslatorRuntime.fit_one_wave else "registers capped to one wave |")
        + " c (1 core) | auto picks | IS, many steps a launch | IS, one launch a step | IS / TS (many steps) "
        "| IS target |")
    out("|---" * (15 + bool(have_jax)) + "|")
    from kernels.flint.runtimes.auto import choose_runtime
    def c_col(n):
        if n > 1000 or not find_compiler():
            return "—"
        sec, scaled, _ = time_runtime(model, "c", n, steps, cpu_budget_s=6.0)
        return f"{sec:.3f}{' (scaled)' if scaled else ''}"

    for n in sizes:
        t_loop, _, sim = time_runtime(model, "ts", n, steps)
        with ts_one_launch_a_step():
            t_step, scaled, _ = time_runtime(model, "ts", n, steps)
        with ts_loop_fma():
            t_fma = time_runtime(model, "ts", n, steps)[0]
        with ts_fit_one_wave(not TranslatorRuntime.fit_one_wave):
            t_other, _, other = time_runtime(model, "ts", n, steps)
        tj = f"{time_jax(model, n, steps)[0]:.3f} | " if have_jax else ""
        t_is, _, is_sim = time_runtime(model, "is", n, steps)
        with ts_one_launch_a_step("is"):
            t_is_step, is_scaled, _ = time_runtime(model, "is", n, steps)
        is_cols = (f" {t_is:.3f} (block {is_sim.block_size}) | {t_is_step:.3f}{' (scaled)' if is_scaled else ''} | "
                   f"{t_is / t_loop:.2f}× | ≤ 3× TS: **{'met' if t_is <= 3 * t_loop else 'NOT met'}** |")
        target = 0.85 if n >= 100_000 else (0.45 if n >= 1000 else None)
        verdict = "—" if target is None else f"≤ {target} s: **{'met' if t_loop <= target else 'NOT met'}**"
        regs = lambda s: "/".join(str(r) for r in s.engine.loop_registers if r) or "?"   # noqa: E731 (natural/capped)
        out(f"| {n:,} | {t_loop:.3f} | {t_step:.3f}{' (scaled)' if scaled else ''} | {tj}{t_step / t_loop:.1f}× | "
            f"{sim.block_size} | {regs(sim)} | {verdict} | {t_fma:.3f} | {t_other:.3f} ({regs(other)} registers, "
            f"block {other.block_size}) | {c_col(n)} | {choose_runtime(n).runtime} |{is_cols}")


def streaming(model, n: int = 100_000, seconds: float = 3.0, every: int = 100, chunk_s: float = 1 / 30) -> str:
    """The Flint workspace's streaming loop (explorer/flint/worker.py, without Qt): chunks of about
    ``chunk_s`` seconds, V of every cell recorded every ``every`` steps; chunks a second, and the steps
    a second against the same run recording once a chunk (the cost of recording)."""
    res = {}
    for ev in (every, None):
        sim = Simulation(model, "ts", n=n)
        sim.advance(300, DT, record=[0], every=300)
        chunk, done, t0, updates = 1000, 0, time.perf_counter(), 0
        while time.perf_counter() - t0 < seconds:
            e = ev or chunk
            t1 = time.perf_counter()
            sim.advance(chunk, DT, record=[0], every=e)
            took = time.perf_counter() - t1
            done += chunk
            updates += 1
            chunk = max(every, int(chunk * min(4.0, max(0.25, chunk_s / took))) // every * every)
        el = time.perf_counter() - t0
        res[ev] = (updates / el, done / el)
    (u, r), (_, r0) = res[every], res[None]
    return (f"Streaming like the workspace ({n:,} cells, V of every cell every {every} steps, chunks of ~"
            f"{chunk_s * 1000:.0f} ms): {u:.0f} updates a second, {r:,.0f} steps/s vs {r0:,.0f} steps/s recording "
            f"once a chunk (recording costs {100 * (1 - r / r0):.0f} %).")


def fused_check(model, runtimes, steps: int = 300) -> str:
    """The fused expression-mapping kernel vs one launch a phase over ``steps`` steps (every state
    recorded every 10): '' when bit-identical for every runtime, else a note naming the runtime."""
    bad = []
    for rt in runtimes:
        got = []
        try:
            for v in ("expression", "phases"):
                with expression_variant(v) as mp:
                    sim = Simulation(model, rt, mapping=mp)
                got.append(sim.advance(steps, DT, every=10)[1])
        except Exception as exc:                           # report, keep going
            bad.append(f"{rt}: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        if not np.array_equal(got[0], got[1]):
            bad.append(f"{rt}: fused ≠ per phase (max {np.abs(got[0] - got[1]).max():.1e})")
    return (" " + "; ".join(bad)) if bad else ""


def check_against_numpy(model, runtimes, n=64, steps=2000, network=None) -> dict:
    """max relative difference of each runtime's final state vs the NumPy runtime."""
    mp = network_stimulus(model, n) if network is not None else None
    ref = Simulation(model, "cpu", n=n, network=network, member_params=mp)
    ref.advance(steps, DT, record=[0], every=steps)
    yr = ref.state()
    res = {}
    for rt in runtimes:
        if rt == "jax":
            run, y0 = jax_euler(model, n, network)
            y = np.asarray(run(y0, 0, steps))
        else:
            sim = Simulation(model, rt, n=n, network=network, member_params=mp)
            sim.advance(steps, DT, record=[0], every=steps)
            y = sim.state()
        res[rt] = float(np.max(np.abs(y - yr) / np.maximum(np.abs(yr), 1e-12)))
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes and 10,000 steps (CPU smoke test)")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--no-gpu", action="store_true", help="NumPy and JAX only (no CUDA machine)")
    ap.add_argument("--flat-budget", type=float, default=8.0,
                    help="seconds per cell of the flattened-model table before it is measured over fewer "
                         "steps and scaled (default 8)")
    ap.add_argument("--only", choices=["ensembles", "lines", "flat", "loop", "peers", "first"], default=None,
                    help="run one section only (ensembles: 1, lines: 2–3, flat: 3b, loop: 4; issue 38: peers — "
                         "hand-written CUDA, jax, diffrax; first — the first advance of a new Simulation)")
    ap.add_argument("--flat-deadline", type=float, default=0.0,
                    help="seconds for the whole flattened-model table; cells after it are not run (0: none)")
    ap.add_argument("--flat-models", nargs="*", default=None, help="the flattened models to time")
    ap.add_argument("--flat-cols", default=None,
                    help="comma-separated columns of the flattened table, e.g. is-expression,c-is-cell,cpu-cell")
    ap.add_argument("--runtimes", default=None,
                    help="comma-separated columns of sections 1–3 (is, ts, cpu, c-is, c, c8, jax; default: all "
                         "available)")
    ap.add_argument("--cpu-budget", type=float, default=20.0,
                    help="seconds a CPU cell of sections 1–3 may take before it is measured over fewer steps and "
                         "scaled (default 20)")
    ap.add_argument("--lr1000-flat", action="store_true",
                    help="also the flattened LR-1000 (8000 ODEs; its expression-mapping kernels take minutes to compile)")
    ap.add_argument("--ensemble-sizes", default=None, type=lambda t: [int(v) for v in t.split(",")], metavar="N,N",
                    help="section 1's ensemble sizes (default 1,1000,10000,100000; --quick without 100000)")
    a = ap.parse_args()
    if a.ensemble_sizes is not None and min(a.ensemble_sizes) < 1:
        ap.error("--ensemble-sizes: every size must be ≥ 1")
    steps = a.steps or (10_000 if a.quick else 100_000)
    from kernels import backend as bk
    gpu_ok, why = bk.gpu_available()
    gpu = gpu_ok and not a.no_gpu
    try:
        import jax
        have_jax = True
        jdev = str(jax.devices()[0])
    except ImportError:
        have_jax, jdev = False, "not installed"
    gpu_rts = ["is", "ts"] if gpu else []
    cpu_rts = ["cpu"] + (["c-is", "c", "c8"] if find_compiler() else [])
    if a.runtimes:
        pick = a.runtimes.split(",")
        gpu_rts, cpu_rts = [r for r in gpu_rts if r in pick], [r for r in cpu_rts if r in pick]
        have_jax = have_jax and "jax" in pick
    cols13 = gpu_rts + cpu_rts + (["jax"] if have_jax else [])
    names = COLUMN_NAMES
    model = load_model("luo_rudy_1991")
    out(f"# Flint benchmark — {bk.select('gpu').describe() if gpu else 'CPU only: ' + why}")
    out(f"\nLR-1991 (8 ODEs), explicit Euler, dt = {DT} ms, {steps:,} steps ({steps * DT:g} ms), float64; "
        f"JAX device: {jdev}; compile/JIT time excluded.\n")

    if a.only in ("peers", "first"):
        if "ts" not in gpu_rts:
            out(f"Section {a.only} needs the GPU runtime ts.")
        else:
            from benchmarks.peers import flint_sections
            sizes = [1000, 10_000] + ([] if a.quick else [100_000])
            getattr(flint_sections, f"section_{a.only}")(model, steps, sizes, out)
        save_markdown("flint_bench.md", "\n".join(LINES))
        return 0

    if a.only == "loop":
        if "ts" not in gpu_rts:
            out("Section 4 needs the GPU runtime ts.")
        else:
            loop_section(model, steps, [1, 1000, 10_000] + ([] if a.quick else [100_000]), have_jax)
            out("\n" + streaming(model, 10_000 if a.quick else 100_000))
        save_markdown("flint_bench.md", "\n".join(LINES))
        return 0

    # ---- correctness first
    rts = [r for r in cols13 if r not in ("cpu", "c8")]
    if rts:
        c1 = check_against_numpy(model, rts)
        c2 = check_against_numpy(model, rts, n=50, network=Network("line", 50, "V", 1.0))
        out("Max relative difference of the final state vs the NumPy runtime after 2000 steps: "
            + ", ".join(f"{k} {c1[k]:.1e} (ensemble) / {c2[k]:.1e} (line)" for k in rts) + "\n")

    def want(section):
        return a.only is None or a.only == section

    # ---- 1. ensembles
    sizes = (a.ensemble_sizes or [1, 1000, 10_000] + ([] if a.quick else [100_000])) if want("ensembles") else []
    if sizes:
        out("## 1. LR-1991 ensembles (seconds for all steps)\n")
        out("| cells | " + " | ".join(names[r] for r in cols13) + " | TS/JAX |")
        out("|---" * (2 + len(cols13)) + "|")
    table3 = {}
    for n in sizes:
        cells, t = [], {}
        for rt in gpu_rts + cpu_rts:
            sec, scaled, _ = time_runtime(model, rt, n, steps, cpu_budget_s=a.cpu_budget)
            t[rt] = sec
            cells.append(f"{sec:.3f}{' (scaled)' if scaled else ''}")
        if have_jax:
            t["jax"] = time_jax(model, n, steps)[0]
            cells.append(f"{t['jax']:.3f}")
        ratio = f"{t['ts'] / t['jax']:.2f}" if "ts" in t and "jax" in t else "—"
        out(f"| {n:,} | " + " | ".join(cells) + f" | {ratio} |")
        table3[("ensemble", n)] = t
    if "ts" in gpu_rts and ("ensemble", 100_000) in table3:
        t = table3[("ensemble", 100_000)]["ts"]
        out(f"\nTarget 100k cells × 100k steps < 5 s: TS {t:.2f} s → **{'met' if t < 5 else 'NOT met'}**.")

    # ---- 2/3. lines: where the GPU starts to pay
    lens = ([2, 10, 100, 1000] + ([] if a.quick else [5000, 100_000])) if want("lines") else []
    sync_cols = "ts" in gpu_rts
    if lens:
        out("\n## 2–3. LR lines (thesis LR-100 … LR-5000; our layout: one thread per cell)\n")
        if sync_cols:
            out(check_grid_sync(model) + "\n")
        pairs = [(c, g) for c in ("cpu", "c-is", "c", "c8") for g in gpu_rts if c in cpu_rts]
        extra = ["TS one launch a step", "TS grid-sync [kernel, block]", "TS neighbour-block sync [kernel, block]",
                 "TS picks"] if sync_cols else []
        out("| cells | " + " | ".join(names[r] for r in cols13) + "".join(f" | {e}" for e in extra)
            + "".join(f" | {names[c].split(' (')[0]} / {g.upper()}" for c, g in pairs) + " |")
        out("|---" * (1 + len(cols13) + len(extra) + len(pairs)) + "|")
    for n in lens:
        net = Network("line", n, "V", 1.0)
        cells, t = [], {}
        for rt in gpu_rts + cpu_rts:
            sec, scaled, _ = time_runtime(model, rt, n, steps, network=net, cpu_budget_s=a.cpu_budget)
            t[rt] = sec
            cells.append(f"{sec:.3f}{' (scaled)' if scaled else ''}")
        if have_jax:
            t["jax"] = time_jax(model, n, steps, network=net)[0]
            cells.append(f"{t['jax']:.3f}")
        if sync_cols:
            cells += grid_sync_columns(model, n, steps, net)
        out(f"| {n:,} | " + " | ".join(cells) + "".join(f" | {t[c] / t[g]:.1f}×" for c, g in pairs) + " |")

    out("\nThesis (Tesla C2070 vs one i7 930 core, Table 5.4, seconds for 100,000 steps): Luo-Rudy "
        "CPU-1 TS 0.169 vs GPU TS 6.88 (GPU 41× slower); LR-1000 CPU-1 TS 64.2 vs GPU TS 11.4; "
        "LR-5000 ~250× over the CPU interpreter.")
    try:
        from kernels.flint import catalog
    except ImportError:
        catalog = None
    if catalog is not None and hasattr(catalog, "CATALOG") and want("flat"):
        out("\n## 3b. Flattened thesis models (Table 5.4: one model holding every cell's equations)\n")
        out("GPU columns: the thesis's expression mapping (one thread a bytecode, all six optimizations), "
            "\"phases\": one launch a phase plus an update launch (the thesis's scheme), \"fused\": the fused "
            "kernel (issue 23: a chunk of steps in one launch, a block barrier between phases; both checked "
            "bit for bit against each other first); --flat-cols adds our cell mapping (one thread runs the "
            "whole model) and the fused variants block / grid (that barrier), global (block, slots in global "
            "memory), slots (block, slots in shared memory) and states (block, slots, states and parameters in "
            "shared memory).\n")
        out("Each GPU cell also gives, in brackets, the set-up seconds (NVRTC compile + 100 warm-up steps); "
            "cells not reached within --flat-deadline say so.\n")
        # default: the thesis's mapping only — one thread running a whole flattened model (our cell
        # mapping) took 384 s (IS) / 43 s + 84 s compile (TS) for Wang on an H100; ask with --flat-cols
        # (one cell: c8's threads have nothing to share)
        cols = ([(rt, v) for rt in gpu_rts for v in ("phases", "expression")]
                + [(rt, "cell") for rt in cpu_rts if rt != "c8"])
        if a.flat_cols:
            cols = [tuple(c.rsplit("-", 1)) for c in a.flat_cols.split(",")]
        t_flat = time.perf_counter()
        checks: list = []
        head = {"expression": "fused", "phases": "per phase"}
        out("| model | ODEs | " + " | ".join(f"{rt.upper()} {head.get(mp, mp)}" if rt in RUNTIMES and RUNTIMES[rt].device == "gpu"
                                           else names[rt] for rt, mp in cols) + " |")
        out("|---" * (2 + len(cols)) + "|")
        names = a.flat_models or (["luo_rudy_1991", "wang", "rybak", "lr-ring", "lr-100", "mix"]
                                  + (["lr-1000"] if a.lr1000_flat else []))
        for name in names:
            if name != "luo_rudy_1991" and name not in catalog.CATALOG:
                continue
            m = load_model(name)
            cells = []
            fused_rts = [rt for rt in gpu_rts if any(r == rt and mp in FLAT_VARIANTS for r, mp in cols)]
            if fused_rts:
                checks.append((name, fused_check(m, fused_rts)))
            for rt, mp in cols:
                if a.flat_deadline and time.perf_counter() - t_flat > a.flat_deadline:
                    cells.append("not run (deadline)")
                    continue
                try:
                    sec, scaled, sim = time_runtime(m, rt, 1, steps, cpu_budget_s=a.flat_budget, mapping=mp,
                                                    gpu_budget_s=a.flat_budget)
                    setup = f" [{sim.setup_seconds:.1f}]" if rt != "cpu" else ""    # c, c-is: the C++ compile
                    cells.append(f"{sec:.2f}{' (scaled)' if scaled else ''}{setup}")
                except Exception as exc:                   # report, keep going
                    cells.append(f"error: {type(exc).__name__}: {str(exc)[:60]}")
                print(f"  {name} {rt} {mp}: {cells[-1]}", file=sys.stderr, flush=True)
            out(f"| {name} | {m.n_states} | " + " | ".join(cells) + " |")
        bad = [f"{nm}:{c}" for nm, c in checks if c]
        if checks:
            out("\nChecked first (300 steps, every state every 10): fused kernel vs one launch a phase "
                + ("bit for bit identical on every model." if not bad else "DIFFER — " + "; ".join(bad)))
    save_markdown("flint_bench.md", "\n".join(LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
