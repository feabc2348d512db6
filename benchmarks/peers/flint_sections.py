"""Issue 38's Flint sections of ``benchmarks/flint.py`` (``--only peers``, ``--only first``).

* ``peers``: LR-1991 ensembles of 1k–100k cells, 100,000 steps of 0.01 ms, float64, seconds: TS (Euler,
  RK4) beside the hand-written CUDA kernel (``benchmarks/peers/lr1991.cu``, same integrator), jax.jit
  ``fori_loop`` Euler, and diffrax (Euler and Dopri5 at the same fixed step, ``vmap`` over members;
  Dopri5 adaptive too) — each checked first against Flint's NumPy runtime.  diffrax rows are skipped,
  with the reason, where it does not import.
* ``first``: the first ``advance`` of a new Simulation against a warm one (target ≤ 1.2×), with the
  block-size tuning cache (kernels/flint/runtimes/tuning.py) cold and then filled.
"""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np

from benchmarks.peers import flint_jax as FJ
from benchmarks.peers.lr1991_cuda import HandLR91, initial_states
from kernels.flint import Simulation

DT = 0.01


def _rel(a, b) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-9)))


def _ts(model, n, steps, integrator):
    sim = Simulation(model, "ts", n=n, integrator=integrator)
    sim.advance(min(steps, 2000), DT, record=[0], every=1000)          # compile, tune
    sim.engine.synchronize()
    t0 = time.perf_counter()
    sim.advance(steps, DT, record=[0], every=1000)
    sim.engine.synchronize()
    return time.perf_counter() - t0


def _hand(model, n, steps, rk4):
    best = None
    for block in (64, 128, 256):
        k = HandLR91(initial_states(model, n), block=block)
        k.run(100, DT, rk4)                                                # compile, warm
        t0 = time.perf_counter()
        k.run(steps, DT, rk4)
        t = time.perf_counter() - t0
        best = (t, block) if best is None or t < best[0] else best
    return best


def _diffrax(model, n, steps, solver, adaptive=False):
    run, y0 = FJ.diffrax_solve(model, n, steps, DT, solver, adaptive)
    run(y0)[0].block_until_ready()                                         # compile (steps are traced static)
    t0 = time.perf_counter()
    y, ns = run(y0)
    y.block_until_ready()
    return time.perf_counter() - t0, int(np.asarray(ns).max())


def checks(model, out) -> None:
    """Each peer against the NumPy runtime over 1500 steps (64 cells): max relative difference."""
    n, steps = 64, 1500
    ref = {i: Simulation(model, "cpu", n=n, integrator=i) for i in ("euler", "rk4")}
    for s in ref.values():
        s.advance(steps, DT)
    ref = {i: s.state() for i, s in ref.items()}
    rows = []
    for integ in ("euler", "rk4"):
        k = HandLR91(initial_states(model, n))
        k.run(steps, DT, integ == "rk4")
        rows.append(f"hand-written CUDA {integ} {_rel(k.state(), ref[integ]):.1e}")
        ts = Simulation(model, "ts", n=n, integrator=integ)
        ts.advance(steps, DT)
        rows.append(f"TS {integ} {_rel(ts.state(), ref[integ]):.1e}")
    why = FJ.available()
    if why is None:
        for solver, integ in (("euler", "euler"), ("dopri5", "rk4")):
            run, y0 = FJ.diffrax_solve(model, n, steps, DT, solver)
            rows.append(f"diffrax {solver} vs NumPy {integ} {_rel(np.asarray(run(y0)[0]).T, ref[integ]):.1e}")
    out("Checked first (64 cells, 1500 steps, every state; max relative difference vs Flint's NumPy runtime): "
        + "; ".join(rows) + (f"; diffrax: {why}" if why else "") + ".\n")


def section_peers(model, steps: int, sizes, out) -> None:
    out("\n## Issue 38: harder peers (LR-1991 ensembles, float64, seconds for all steps)\n")
    checks(model, out)
    why = FJ.available()
    out("| cells | TS Euler | hand-written CUDA Euler [block] | jax.jit fori_loop Euler | diffrax Euler (vmap) | "
        "TS RK4 | hand-written CUDA RK4 [block] | diffrax Dopri5 fixed dt (vmap) | diffrax Dopri5 adaptive [steps] "
        "| TS / hand (Euler) | diffrax Euler / TS |")
    out("|---" * 11 + "|")
    for n in sizes:
        t_ts, t_ts4 = _ts(model, n, steps, "euler"), _ts(model, n, steps, "rk4")
        (t_h, b_h), (t_h4, b_h4) = _hand(model, n, steps, False), _hand(model, n, steps, True)
        try:
            run, y = FJ.fori_euler(model, n, DT)
            run(y, 0, 100).block_until_ready()
            t0 = time.perf_counter()
            run(y, 100, steps).block_until_ready()
            t_j = f"{time.perf_counter() - t0:.3f}"
        except ImportError as exc:
            t_j = f"skipped: {exc}"
        if why is None:
            t_de = _diffrax(model, n, steps, "euler")[0]
            t_dd = _diffrax(model, n, steps, "dopri5")[0]
            t_da, n_da = _diffrax(model, n, steps, "dopri5", adaptive=True)
            dcols = f"{t_de:.3f} | {t_ts4:.3f} | {t_h4:.3f} [{b_h4}] | {t_dd:.3f} | {t_da:.3f} [{n_da:,}]"
            ratio = f"{t_de / t_ts:.1f}×"
        else:
            dcols, ratio = f"skipped: {why} | {t_ts4:.3f} | {t_h4:.3f} [{b_h4}] | skipped | skipped", "—"
        out(f"| {n:,} | {t_ts:.3f} | {t_h:.3f} [{b_h}] | {t_j} | {dcols} | {t_ts / t_h:.2f}× | {ratio} |")


def section_first(model, steps: int, sizes, out) -> None:
    """First advance of a new Simulation vs a warm one (TS, Euler): cache cold, then filled."""
    from kernels.flint.runtimes.tuning import ENV
    out("\n## Issue 38: the first `advance` of a new Simulation (TS, Euler, target ≤ 1.2× a warm one)\n")
    out("| cells | build s | first advance, tuning cache cold | first advance, cache filled | warm advance | "
        "first / warm (cached) | block (search → cache) | target |")
    out("|---" * 8 + "|")
    before = os.environ.get(ENV)
    with tempfile.TemporaryDirectory() as d:
        os.environ[ENV] = os.path.join(d, "blocks.json")
        try:
            for n in sizes:
                Simulation(model, "ts", n=n).advance(10, DT)             # NVRTC compile (in-process cache)
                times, blocks = [], []
                for _ in range(2):                                       # cold, then cached
                    t0 = time.perf_counter()
                    sim = Simulation(model, "ts", n=n)
                    t_build = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    sim.advance(steps, DT, record=[0], every=1000)
                    sim.engine.synchronize()
                    times.append(time.perf_counter() - t0)
                    blocks.append(f"{sim.block_size} ({getattr(sim.engine, 'tuned_from', '?')})")
                t0 = time.perf_counter()
                sim.advance(steps, DT, record=[0], every=1000)
                sim.engine.synchronize()
                warm = time.perf_counter() - t0
                r = times[1] / warm
                out(f"| {n:,} | {t_build:.3f} | {times[0]:.3f} | {times[1]:.3f} | {warm:.3f} | {r:.2f}× | "
                    f"{' → '.join(blocks)} | **{'met' if r <= 1.2 else 'NOT met'}** |")
            out("\nA new process (CuPy's compile cache on disk and the tuning cache filled by the runs above), "
                "seconds: import, Simulation(...) (build: NVRTC or its disk cache, register-cap probe), first and "
                "second advance.\n")
            out("| cells | import | build | first advance | second advance | first / second |")
            out("|---" * 6 + "|")
            for n in sizes:
                t = fresh_process(n, steps)
                out(f"| {n:,} | {t['import']:.2f} | {t['build']:.3f} | {t['first']:.3f} | {t['second']:.3f} | "
                    f"{t['first'] / t['second']:.2f}× |")
        finally:
            if before is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = before


FRESH = """
import json, sys, time
t0 = time.perf_counter()
from kernels.flint import Simulation, load_model
t1 = time.perf_counter()
lr = load_model("luo_rudy_1991")
sim = Simulation(lr, "ts", n={n})
t2 = time.perf_counter()
out = {{"import": t1 - t0, "build": t2 - t1}}
for key in ("first", "second"):
    t = time.perf_counter()
    sim.advance({steps}, 0.01, record=[0], every=1000)
    sim.engine.synchronize()
    out[key] = time.perf_counter() - t
print(json.dumps(out))
"""


def fresh_process(n: int, steps: int) -> dict:
    """Timings of one Simulation in a new Python process (the user's cold start of a run)."""
    import json
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, "-c", FRESH.format(n=n, steps=steps)], cwd=root, capture_output=True,
                       text=True, timeout=600)
    if r.returncode:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed")
    return json.loads(r.stdout.strip().splitlines()[-1])
