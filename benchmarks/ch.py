"""Cahn–Hilliard kernel benchmark (run on a CUDA machine).

1. Side by side at 2D 4096² and 3D 256³ (float32, RK2 step): kernel variants
   A–E, the whole-array reference on CuPy ("naive CuPy"), torch.compile and
   jax.jit versions of the same step, and the memory floor = bytes moved /
   measured device-to-device copy bandwidth (two-pass RK2: stage 1 reads φ and
   writes φ*, stage 2 reads φ* and φ and writes φⁿ⁺¹ → 5 field transfers; fused
   E: 1 read + 1 write → 2).
2. The paper's experiment (paper 000 §3.1): CPU NumPy reference vs each variant
   over N ∈ {128 … 4096} in 2D, seconds per step, speed-up, fitted log–log slope.
3. ``--host`` (no GPU needed): kernels A–E as CUDA source run on the CPU (kernels.gpu's host
   device) at lecture sizes, next to the NumPy reference and cpu-threads: what runs live.
4. Kernel E's temporal blocking (issue #38, :mod:`kernels.cahn_hilliard.temporal`): k = 1–4 RK2 steps
   per pass, in table 1 and alone with ``--temporal`` (fast; ``--temporal --host``: on the host device),
   each with a check that the k-step field equals k single steps bit for bit.

5. ``--multigpu`` (issue #38): kernel E on 2 GPUs with k = 1–4 fused steps per halo exchange (a 4k-wide
   halo, :mod:`kernels.cahn_hilliard.multigpu`) against one GPU; targets 256³ ≥ 1.6×, 4096² ≥ 1.7×.

Usage:  python benchmarks/ch.py [--quick] [--host] [--temporal] [--multigpu]   (tables also to $OUT/ch_bench.md)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels import gpu  # noqa: E402
from kernels.backend import Backend, gpu_backend  # noqa: E402
from kernels.cahn_hilliard.params import CHParams  # noqa: E402
from kernels.cahn_hilliard.steppers import ReferenceStepper  # noqa: E402
from benchmarks.ch_temporal import TEMPORAL_LABELS, TEMPORAL_ROWS, temporal_results, temporal_table  # noqa: E402

VARIANTS = ("A", "B", "C", "D", "E")


def gpu_time(fn, steps_per_rep, reps, warm=3, device="cuda"):
    """Median seconds per step over blocks of ``steps_per_rep`` steps (the GPU layer's one timing
    helper: CUDA events on the GPU, perf_counter on the host device)."""
    t = gpu.timing.time_calls(lambda: fn(steps_per_rep), repeat=reps, warmup=warm, device=device)
    return t.median / steps_per_rep


def host_table(quick: bool) -> list[str]:
    """Kernels A–E as CUDA source run on the CPU (host device) at lecture sizes, float32 RK2 periodic,
    next to the NumPy reference and cpu-threads (seconds per step, median)."""
    from kernels.cahn_hilliard.steppers import make_stepper
    cpu = Backend("cpu", np)
    sizes = ((2, 128), (2, 256)) + (() if quick else ((3, 32), (3, 64)))
    names = ("reference", "cpu-threads") + VARIANTS
    res = {}
    for dim, n in sizes:
        for v in names:
            p = CHParams(dim=dim, size=n, dt=0.01 if dim == 2 else 0.005, integrator="rk2", variant=v)
            st = make_stepper(p, cpu)
            state = {"phi": field(p.shape, np)}

            def f(k, st=st, state=state):
                state["phi"] = st.step(state["phi"], k)
            res[(dim, n, v)] = gpu_time(f, 1 if quick else 2, 3 if quick else 5, warm=1, device="host")
            print(f"host {dim}D N={n} {v}: {fmt_ms(res[(dim, n, v)])} ms", flush=True)
    label = {"reference": "NumPy reference", "cpu-threads": "cpu-threads (C++ OpenMP)"}
    out = [f"### Host path: CUDA source run on the CPU ({os.cpu_count()} cores), RK2 float32 periodic, "
           "ms per step (median)", "",
           "| method | " + " | ".join(f"{d}D {n}{'²' if d == 2 else '³'}" for d, n in sizes) + " |",
           "|---|" + "---|" * len(sizes)]
    for v in names:
        out.append(f"| {label.get(v, 'kernel ' + v + ' (host)')} | "
                   + " | ".join(fmt_ms(res[(d, n, v)]) for d, n in sizes) + " |")
    return out + [""]


def copy_bandwidth():
    """Device-to-device copy bandwidth in bytes/s (read + write counted)."""
    import cupy as cp
    a = cp.ones(64 << 20, dtype=cp.float32)   # 256 MiB
    b = cp.empty_like(a)

    def f(k):
        for _ in range(k):
            cp.copyto(b, a)
    t = gpu_time(f, 10, 10)
    a = b = None                          # free the buffers (the closure no longer needs them)
    cp.get_default_memory_pool().free_all_blocks()
    return 2 * (64 << 20) * 4 / t


def field(shape, xp):
    rng = np.random.default_rng(0)
    return xp.asarray((rng.uniform(-0.1, 0.1, size=shape)).astype(np.float32))


#: CudaStepper attributes holding one shape per dtype: a bare shape sets the float32 one
PER_DTYPE = ("wmarch_shape", "zreg_shape", "fused_march_shape")


def apply_attrs(st, attrs):
    """Set CudaStepper attributes; a bare shape for a per-dtype attribute sets the float32 shape."""
    for k, v in attrs.items():
        if k in PER_DTYPE and isinstance(v, (list, tuple)):
            v = {**getattr(st, k), "float": tuple(v)}
        elif k == "march_shape" and isinstance(v, (list, tuple)):
            v = {**st.march_shape, st.params.dim: tuple(v)}
        setattr(st, k, v)
    return st


def time_variant(params, phi, steps, reps, **attrs):
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    st = apply_attrs(CudaStepper(params, gpu_backend()), attrs)
    state = {"phi": phi}

    def f(k):
        state["phi"] = st.step(state["phi"], k)
    return gpu_time(f, steps, reps)


def time_naive(params, phi, steps, reps):
    st = ReferenceStepper(params, gpu_backend())
    state = {"phi": phi}

    def f(k):
        state["phi"] = st.step(state["phi"], k)
    return gpu_time(f, steps, reps, warm=1)


# ---- torch.compile / jax.jit versions of the same RK2 step (periodic, roll) ----
def torch_step_fn(dim, p):
    import torch
    m, b, u, K, dt = p.m, p.b, p.u, p.K, p.dt
    idx2 = 1.0 / (p.dx * p.dx)
    axes = tuple(range(dim))

    def lap(g):
        s = None
        for ax in axes:
            t = torch.roll(g, 1, ax) + torch.roll(g, -1, ax)
            s = t if s is None else s + t
        return (s - 2 * dim * g) * idx2

    def F(phi):
        mu = -b * phi + u * phi * phi * phi - K * lap(phi)
        return m * lap(mu)

    def step(phi):
        ph = phi + (0.5 * dt) * F(phi)
        return phi + dt * F(ph)
    return torch.compile(step)


def time_torch(dim, p, phi_np, steps, reps):
    import torch
    fn = torch_step_fn(dim, p)
    x = torch.from_numpy(phi_np).cuda()
    state = {"x": x}

    def f(k):
        for _ in range(k):
            state["x"] = fn(state["x"])
    for _ in range(3):
        f(1)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, bb = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f(steps)
        bb.record()
        bb.synchronize()
        times.append(a.elapsed_time(bb) * 1e-3 / steps)
    state = x = None                      # free the tensors before emptying the cache
    torch.cuda.empty_cache()
    return float(np.median(times))


def time_jax(dim, p, phi_np, steps, reps):
    import jax
    import jax.numpy as jnp
    m, b, u, K, dt = p.m, p.b, p.u, p.K, p.dt
    idx2 = 1.0 / (p.dx * p.dx)

    def lap(g):
        s = None
        for ax in range(dim):
            t = jnp.roll(g, 1, ax) + jnp.roll(g, -1, ax)
            s = t if s is None else s + t
        return (s - 2 * dim * g) * idx2

    def F(phi):
        mu = -b * phi + u * phi * phi * phi - K * lap(phi)
        return m * lap(mu)

    @jax.jit
    def step(phi):
        ph = phi + (0.5 * dt) * F(phi)
        return phi + dt * F(ph)

    x = jnp.asarray(phi_np)
    for _ in range(3):
        x = step(x)
    x.block_until_ready()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(steps):
            x = step(x)
        x.block_until_ready()
        times.append((time.perf_counter() - t0) / steps)
    return float(np.median(times))


def tune(steps, reps):
    """Time candidate 2D tile shapes at 4096² (each first checked against the CPU reference)."""
    import cupy as cp
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    cpu = Backend("cpu", np)
    out = ["### 2D tile-shape tuning, 4096² RK2 float32 (ms per step)", "",
           "| kernel | shape (OX, OY) | ms | max rel. err. vs reference (200², 3 boundaries) |",
           "|---|---|---|---|"]
    cands = [("B", "sweep_shape", [(64, 64), (32, 64), (32, 128), (64, 32), (128, 32)]),
             ("E", "fused2d_shape", [(60, 28), (60, 60), (124, 28), (60, 12), (124, 60)])]
    for v, attr, shapes in cands:
        for shp in shapes:
            errs = []
            for bc in ("periodic", "mirror", "fixed"):
                for dt_ in ("float32", "float64"):
                    p = CHParams(dim=2, size=200, dt=0.01, boundary=bc, boundary_value=-0.8,
                                 integrator="rk2", variant=v, dtype=dt_)
                    x0 = np.random.default_rng(1).uniform(-0.5, 0.5, p.shape).astype(dt_)
                    ref = ReferenceStepper(p, cpu).step(x0.copy(), 20).astype(np.float64)
                    st = CudaStepper(p, gpu_backend())
                    setattr(st, attr, shp)
                    if attr == "fused2d_shape":   # the shared-tile E (the warp march has no tile)
                        st.fused_impl = "sliding"
                    got = cp.asnumpy(st.step(cp.asarray(x0), 20)).astype(np.float64)
                    errs.append(np.linalg.norm(got - ref) / np.linalg.norm(ref))
            p = CHParams(dim=2, size=4096, dt=0.01, integrator="rk2", variant=v)
            extra = {"fused_impl": "sliding"} if attr == "fused2d_shape" else {}
            t = time_variant(p, field(p.shape, cp), steps, reps, **{attr: shp}, **extra)
            out.append(f"| {v} | {shp} | {fmt_ms(t)} | {max(errs):.1e} |")
            print(out[-1], flush=True)
    return out + [""]


def fmt_ms(t):
    return "—" if t is None or not math.isfinite(t) else f"{t * 1e3:.4g}"


def loglog_slope(ns, ts):
    pts = [(math.log(n), math.log(t)) for n, t in zip(ns, ts) if t and math.isfinite(t)]
    if len(pts) < 2:
        return float("nan")
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def multigpu_k_table(quick: bool) -> list[str]:
    """Issue 38: kernel E on GPUs 0 and 1 with k fused steps per halo exchange (a 4k-wide halo; p2p,
    overlap, CUDA graphs) against one GPU's single steps, 2D 4096², 8192² and 3D 256³, float32, periodic
    (k lowered by kernels.cahn_hilliard.temporal.fits where the device or grid does not hold it).
    Targets: 256³ ≥ 1.6×, 4096² ≥ 1.7×.  Timing helpers: benchmarks/multigpu.py's."""
    import cupy as cp
    from benchmarks.multigpu import multi_gpu, single_gpu
    if cp.cuda.runtime.getDeviceCount() < 2:
        return ["Kernel E on 2 GPUs: needs 2 GPUs."]
    ks = ("1", "2") if quick else ("1", "2", "3", "4")
    lines = [f"## Kernel E on 2 GPUs, k steps per exchange — {gpu_backend().device_name}", "",
             "| field | 1 GPU k=1 ms/step | 1 GPU best k ms/step | " + " | ".join(f"2 GPUs k={k}" for k in ks)
             + " | best speed-up (k) | target |", "|---" * (5 + len(ks)) + "|"]
    for dim, n, target in ((2, 4096, 1.7), (2, 8192, None), (3, 256, 1.6)):
        shape = (n,) * dim
        base = dict(dim=dim, size=n, variant="E", boundary="periodic", dtype="float32")
        one = {k: single_gpu(CHParams(**base, steps_per_pass=k), shape) for k in ks}
        bk = min(one, key=one.get)
        two = {k: multi_gpu(CHParams(**base, steps_per_pass=k), shape, [0, 1], "p2p", graph=True)[0] for k in ks}
        best = max(ks, key=lambda k: one["1"] / two[k])
        s = one["1"] / two[best]
        verdict = "—" if target is None else f"≥ {target}×: **{'met' if s >= target else 'NOT met'}**"
        lines.append(f"| {'×'.join(map(str, shape))} | {one['1'] * 1e3:.4f} | {one[bk] * 1e3:.4f} (k={bk}) | "
                     + " | ".join(f"{two[k] * 1e3:.4f}" for k in ks) + f" | {s:.2f}× (k={best}) | {verdict} |")
        print(lines[-1], flush=True)
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and sizes")
    ap.add_argument("--tune", action="store_true",
                    help="also try other 2D sweep / fused tile shapes (checked against the reference)")
    ap.add_argument("--skip-frameworks", action="store_true", help="no torch / jax")
    ap.add_argument("--skip-paper", action="store_true", help="only the side-by-side table (no N sweep)")
    ap.add_argument("--dims", type=int, nargs="+", choices=(2, 3), default=(2, 3),
                    help="dimensions of the side-by-side table (default: 2 3)")
    ap.add_argument("--e-attrs", default="{}",
                    help='JSON {"2": {attr: value}, "3": {...}}: CudaStepper attributes for kernel E\'s row '
                         '(e.g. the best shapes benchmarks/ch_scan.py --set floor found)')
    ap.add_argument("--host", action="store_true",
                    help="only the host-path table: kernels A–E as CUDA source run on the CPU (no GPU needed)")
    ap.add_argument("--temporal", action="store_true",
                    help="only kernel E's temporal-blocking rows (k = 1–4 RK2 steps per pass, issue #38) at 2D "
                         "4096² and 3D 256³; with --host at 2D 256² and 3D 32³ on the host device")
    ap.add_argument("--multigpu", action="store_true",
                    help="only kernel E on 2 GPUs with k = 1–4 steps per halo exchange (issue #38)")
    args = ap.parse_args(argv)
    e_attrs = json.loads(args.e_attrs)
    if args.multigpu:
        text = "\n".join(multigpu_k_table(args.quick))
        print("\n" + text)
        save_markdown("ch_multigpu_k_bench.md", text)
        return
    if args.temporal:
        text = "\n".join(temporal_table(args.host, args.quick, args.dims))
        print("\n" + text)
        save_markdown("ch_temporal_host_bench.md" if args.host else "ch_temporal_bench.md", text)
        return
    if args.host:
        text = "\n".join(host_table(args.quick))
        print("\n" + text)
        save_markdown("ch_host_bench.md", text)
        return
    import cupy as cp
    gb = gpu_backend()
    steps, reps = (20, 5) if args.quick else (50, 15)
    bw = copy_bandwidth()
    lines = [f"Device: {gb.device_name}; CuPy {cp.__version__}; "
             f"date {time.strftime('%Y-%m-%d')}; copy bandwidth {bw / 1e9:.0f} GB/s "
             f"(read+write, 256 MiB cudaMemcpy-equivalent)", ""]

    if args.tune:
        lines += tune(steps, reps)

    # ---- 1. side by side ----
    configs = [c for c in ((2, 4096, 0.01), (3, 256, 0.005)) if c[0] in args.dims]
    rows = {}
    for dim, n, dt in configs:
        p = CHParams(dim=dim, size=n, dt=dt, integrator="rk2", boundary="periodic")
        shape = p.shape
        nbytes = int(np.prod(shape)) * 4
        res = {}
        for v in VARIANTS:
            phi = field(shape, cp)
            try:   # kernel E one step per pass here; its k-step passes are the temporal rows below
                res[v] = time_variant(p.with_changes(variant=v, steps_per_pass="1"), phi, steps, reps,
                                      **(e_attrs.get(str(dim), {}) if v == "E" else {}))
            except Exception as exc:  # keep going, report
                print(f"variant {v} {dim}D failed: {exc!r}", flush=True)
                res[v] = float("nan")
            print(f"{dim}D N={n} {v}: {fmt_ms(res[v])} ms", flush=True)
            del phi
        phi = field(shape, cp)
        if dim == 2:   # kernel E: the warp march (default) next to the shared-tile versions
            for key, impl in (("E shared tile", "sliding"), ("E generic tile", "generic")):
                res[key] = time_variant(p.with_changes(variant="E", steps_per_pass="1"), phi, steps, reps,
                                        fused_impl=impl)
                print(f"2D {key}: {fmt_ms(res[key])} ms", flush=True)
        if dim == 3:   # kernel E: the register z-march (default) next to the shared-ring march, 3D tiles
            for key, impl in (("E shared-ring march", "march"), ("E generic tile", "generic")):
                res[key] = time_variant(p.with_changes(variant="E", steps_per_pass="1"), phi, steps, reps,
                                        fused_impl3d=impl)
                print(f"3D {key}: {fmt_ms(res[key])} ms", flush=True)
        # the non-default B/D layouts of this dimension
        others = ("paper", "march") if dim == 2 else ("paper",)
        for impl in others:
            for v in ("B", "D"):
                key = f"{v} {impl} layout"
                res[key] = time_variant(p.with_changes(variant=v), phi, steps, reps, tile_impl=impl)
                print(f"{dim}D {key}: {fmt_ms(res[key])} ms", flush=True)
        del phi
        res.update(temporal_results(p, gb, "cuda", steps, reps, quick=args.quick))
        phi = field(shape, cp)
        res["naive CuPy"] = time_naive(p, phi, max(2, steps // 10), max(3, reps // 3))
        print(f"{dim}D naive: {fmt_ms(res['naive CuPy'])} ms", flush=True)
        del phi
        cp.get_default_memory_pool().free_all_blocks()
        phi_np = cp.asnumpy(field(shape, cp))
        if not args.skip_frameworks:
            for name, fn in (("torch.compile", time_torch), ("jax.jit", time_jax)):
                try:
                    res[name] = fn(dim, p, phi_np, steps, reps)
                except Exception as exc:
                    print(f"{name} failed: {exc!r}", flush=True)
                    res[name] = float("nan")
                print(f"{dim}D {name}: {fmt_ms(res[name])} ms", flush=True)
        res["floor two-pass (5 transfers)"] = 5 * nbytes / bw
        res["floor fused (2 transfers)"] = 2 * nbytes / bw
        rows[(dim, n)] = res

    names = list(VARIANTS) + ["B paper layout", "D paper layout", "B march layout", "D march layout",
                              "E shared tile", "E shared-ring march", "E generic tile"] + TEMPORAL_ROWS + [
                              "E steps bit-identical (k = 2, 3, 4)",
                              "naive CuPy", "torch.compile", "jax.jit",
                              "floor two-pass (5 transfers)", "floor fused (2 transfers)"]
    if e_attrs:
        lines += [f"Kernel E's row ran with {json.dumps(e_attrs)}.", ""]
    lines += ["### RK2 step time, float32, periodic (ms per step, median)", "",
              "| method | 2D 4096² | 2D Gcell/s | 3D 256³ | 3D Gcell/s |",
              "|---|---|---|---|---|"]
    for nm in names:
        cells = []
        for dim, n, _ in configs:
            t = rows[(dim, n)].get(nm)
            if isinstance(t, str):     # the bit-identity row
                cells += [t, ""]
                continue
            cells.append(fmt_ms(t))
            cells.append("—" if not t or not math.isfinite(t) else f"{n ** dim / t / 1e9:.1f}")
        label = {"A": "A global", "B": "B shared (2D: 64×64 sweep; 3D: z-march)", "C": "C texture",
                 "D": "D texture+shared (2D: sweep; 3D: z-march)",
                 "B paper layout": "B generic tile (2D: paper 16×16/12×12)",
                 "D paper layout": "D generic tile (2D: paper 16×16/12×12)",
                 "B march layout": "B y-march (2D)", "D march layout": "D y-march (2D)",
                 "E": "E fused RK2 (2D: warp march; 3D: register z-march)",
                 "E shared tile": "E shared tile + register sweeps (2D, the previous default)",
                 "E shared-ring march": "E z-march with shared plane rings (3D, the previous default)",
                 "E generic tile": "E generic tile (2D: tile loops; 3D: 3D tiles)",
                 **TEMPORAL_LABELS}.get(nm, nm)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")

    # ---- 2. paper experiment ----
    ns = [] if args.skip_paper else [128, 256, 512, 1024, 2048, 4096]
    cpu_max = 1024 if args.quick else 2048
    cpu = Backend("cpu", np)
    table = {}
    for n in ns:
        p = CHParams(dim=2, size=n, dt=0.01, integrator="rk2", boundary="periodic")
        t_cpu = None
        if n <= cpu_max:
            st = ReferenceStepper(p, cpu)
            x = field(p.shape, np)
            st.step(x, 1)
            k = max(1, int(2e6 // (n * n)))
            t0 = time.perf_counter()
            x = st.step(x, k)
            t_cpu = (time.perf_counter() - t0) / k
        row = {"CPU": t_cpu}
        for v in VARIANTS:
            phi = field(p.shape, cp)
            row[v] = time_variant(p.with_changes(variant=v), phi, steps, max(3, reps // 2))
        table[n] = row
        print(f"paper N={n}: " + ", ".join(f"{k}={fmt_ms(t)}" for k, t in row.items()), flush=True)
    if ns:
        cols = ["CPU"] + list(VARIANTS)
        lines += ["### Paper 000 experiment: 2D RK2 float32 periodic, seconds per step (speed-up vs CPU NumPy)", "",
                  "| N | " + " | ".join(("CPU NumPy" if c == "CPU" else c) for c in cols) + " |",
                  "|---|" + "---|" * len(cols)]
        for n in ns:
            row = table[n]
            cells = []
            for c in cols:
                t = row[c]
                if t is None:
                    cells.append("—")
                elif c == "CPU" or row["CPU"] is None:
                    cells.append(f"{t:.3e}")
                else:
                    cells.append(f"{t:.3e} ({row['CPU'] / t:.0f}×)")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        slopes = [loglog_slope(ns, [table[n][c] for n in ns]) for c in cols]
        lines.append("| log–log slope (all N) | " + " | ".join(f"{s:.2f}" for s in slopes) + " |")
        big = [n for n in ns if n >= 1024]
        slopes_b = [loglog_slope(big, [table[n][c] for n in big]) for c in cols]
        lines.append("| slope (N ≥ 1024) | " + " | ".join(f"{s:.2f}" for s in slopes_b) + " |")
        lines += ["", "Slope 2 = time ∝ cells (N²); small-N GPU times are launch-bound (slope < 2).", ""]

    text = "\n".join(lines)
    print("\n" + text)
    save_markdown("ch_bench.md", text)


if __name__ == "__main__":
    main()
