"""Kernel E's temporal blocking rows of benchmarks/ch.py (issue #38): k = 1–4 fused RK2 steps per pass.

Each k runs ``CudaStepper.step`` with ``steps_per_pass = k`` over a multiple of 12 steps (no single-step
remainder), median ms per step.  2D: the k-step warp march (``ch_fused_wmarch2d_tb``), plus the shared
tile (``ch_fused_tb``) and the warp march with fixed row chunks at k = 2; 3D: the k-step register z-march
(``ch_fused_zreg3d_tb``), plus the shared tile and fixed z chunks at k = 2 (k that do not fit the GPU's
shared memory say so).  One more row checks on a fresh field that a k-step pass equals
k single steps bit for bit (k = 2, 3, 4).

``python benchmarks/ch.py --temporal`` (GPU: 2D 4096², 3D 256³) or ``--temporal --host`` (the host device:
2D 256², 3D 32³, plus the cpu-threads variant's k-step bands).
"""
from __future__ import annotations

import numpy as np

from kernels import gpu
from kernels.cahn_hilliard.params import CHParams

KS = (1, 2, 3, 4)
#: rows (in table order) and their labels
TEMPORAL_ROWS = [f"E k={k}" for k in KS] + ["E k=2 shared tile", "E k=2 chunk 64", "E k=2 chunk 128",
                                            "E k=2 chunk 256", "E k=2 z chunk 32", "E k=2 z chunk 64"]
TEMPORAL_LABELS = {
    "E k=1": "E, 1 step per pass (2D: warp march; 3D: register z-march)",
    **{f"E k={k}": f"E temporal, {k} steps per pass (2D: warp march; 3D: register z-march)" for k in KS[1:]},
    "E k=2 shared tile": "E temporal k = 2, shared tile (2D: 64×64, 3D: 8³ outputs)",
    **{f"E k=2 z chunk {c}": f"E temporal k = 2, z-march, {c}-plane chunks (3D)" for c in (32, 64)},
    **{f"E k=2 chunk {c}": f"E temporal k = 2, warp march, {c}-row chunks (2D)" for c in (64, 128, 256)},
    "E steps bit-identical (k = 2, 3, 4)": "E: k-step pass == k single steps, bit for bit",
}
BIT_ROW = "E steps bit-identical (k = 2, 3, 4)"
#: host rows of the cpu-threads variant (compiled C++ with OpenMP: ch_rk2_tb bands)
THREAD_ROWS = [f"cpu-threads k={k}" for k in KS]
TEMPORAL_LABELS.update({f"cpu-threads k={k}": f"cpu-threads (C++ OpenMP), {k} step{'s' if k > 1 else ''} per pass"
                        for k in KS})


def threads_results(p: CHParams, steps: int, reps: int) -> dict:
    """{"cpu-threads k=…": seconds per step} on the host (the field's shape of ``p``)."""
    from kernels.backend import Backend
    from kernels.cahn_hilliard.cpu_threads import ThreadedStepper
    steps = -(-max(steps, 12) // 12) * 12
    res = {}
    for k in KS:
        st = ThreadedStepper(p.with_changes(variant="cpu-threads", integrator="rk2", steps_per_pass=str(k)),
                             Backend("cpu", np))
        res[f"cpu-threads k={k}"] = _time(st, p.shape, steps, reps, None)
        print(f"{p.dim}D N={p.size} cpu-threads k={k}: {res[f'cpu-threads k={k}']}", flush=True)
    return res


def _field(shape, xp, seed=0):
    rng = np.random.default_rng(seed)
    return xp.asarray(rng.uniform(-0.1, 0.1, size=shape).astype(np.float32))


def _stepper(p, backend, **attrs):
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    st = CudaStepper(p, backend)
    for a, v in attrs.items():
        setattr(st, a, v)
    return st


def _time(st, shape, steps, reps, device):
    state = {"phi": _field(shape, st.xp)}

    def f():
        state["phi"] = st.step(state["phi"], steps)
    return gpu.timing.time_calls(f, repeat=reps, warmup=1, device=device).median / steps


def _bit_identical(p, backend) -> str:
    """"yes" when a k-step pass equals k single steps bit for bit for every k = 2, 3, 4 that fits."""
    bad, ran = [], []
    for k in KS[1:]:
        st = _stepper(p.with_changes(steps_per_pass=str(k)), backend)
        if st.steps_per_pass() < k:
            continue
        xp = st.xp
        phi = _field(p.shape, xp, seed=k) * 10
        one = _stepper(p.with_changes(steps_per_pass="1"), backend).step(phi.copy(), k)
        fused = st.fused_steps(phi.copy(), xp.empty_like(phi), k)
        ran.append(k)
        if not bool(xp.array_equal(one, fused)):
            bad.append(k)
    if bad:
        return f"NO (k = {', '.join(map(str, bad))})"
    return f"yes (k = {', '.join(map(str, ran))})" if ran else "—"


def temporal_results(p: CHParams, backend, device: str, steps: int, reps: int, quick: bool = False) -> dict:
    """{row: seconds per step (or a note)} of the temporal rows for ``p`` (its dim and size)."""
    p = p.with_changes(variant="E", integrator="rk2")
    steps = -(-max(steps, 12) // 12) * 12
    res = {}
    for k in KS:
        q = p.with_changes(steps_per_pass=str(k))
        st = _stepper(q, backend)
        eff = st.steps_per_pass()
        if eff < k:
            res[f"E k={k}"] = f"does not fit (runs k = {eff})"
        else:
            res[f"E k={k}"] = _time(st, p.shape, steps, reps, device)
        print(f"{p.dim}D N={p.size} E k={k}: {res[f'E k={k}']}", flush=True)
    from kernels.cahn_hilliard import temporal
    q = p.with_changes(steps_per_pass="2")
    if p.dim == 2:
        extra = {"E k=2 shared tile": dict(fused_impl="generic")}
        if not quick:
            for c in (64, 128, 256):
                shapes = {d: (w, pd, c, mb) for d, (w, pd, _, mb) in temporal.WMARCH_TB_SHAPE.items()}
                extra[f"E k=2 chunk {c}"] = dict(tb_wmarch_shape=shapes)
    else:
        extra = {"E k=2 shared tile": dict(fused_impl3d="generic")}
        if not quick:
            for c in (32, 64):
                shapes = {d: (tx, ty, c) + rest for d, (tx, ty, _, *rest) in temporal.ZREG_TB_SHAPE.items()}
                extra[f"E k=2 z chunk {c}"] = dict(tb_zreg_shape=shapes)
    for key, attrs in extra.items():
        st = _stepper(q, backend, **attrs)
        if st.steps_per_pass() < 2:
            res[key] = "does not fit"
        else:
            res[key] = _time(st, p.shape, steps, reps, device)
        print(f"{p.dim}D N={p.size} {key}: {res[key]}", flush=True)
    res[BIT_ROW] = _bit_identical(p, backend)
    print(f"{p.dim}D N={p.size} {BIT_ROW}: {res[BIT_ROW]}", flush=True)
    return res


def _fmt(t) -> str:
    if isinstance(t, str):
        return t
    return "—" if t is None or not np.isfinite(t) else f"{t * 1e3:.4f}"


def temporal_table(host: bool, quick: bool, dims=(2, 3)) -> list[str]:
    """The temporal rows alone (markdown lines): on the GPU at 2D 4096² and 3D 256³, on the host device
    (``host``) at 2D 256² (quick 128²) and 3D 32³ (quick 24³)."""
    from kernels.backend import Backend, gpu_backend
    if host:
        backend, device = Backend("cpu", np), "host"
        sizes = ((2, 128), (3, 24)) if quick else ((2, 256), (3, 32))
        steps, reps = (12, 2) if quick else (12, 3)
    else:
        backend, device = gpu_backend(), "cuda"
        sizes = ((2, 4096), (3, 256))
        steps, reps = (24, 5) if quick else (60, 15)
    sizes = [s for s in sizes if s[0] in dims]
    cols = {}
    for dim, n in sizes:
        p = CHParams(dim=dim, size=n, dt=0.01 if dim == 2 else 0.005, boundary="periodic", variant="E")
        cols[(dim, n)] = temporal_results(p, backend, device, steps, reps, quick=quick)
        if host:
            cols[(dim, n)].update(threads_results(p, steps, reps))
    where = "host device, CUDA source run on the CPU" if host else backend.device_name
    out = [f"### Kernel E temporal blocking ({where}), RK2 float32 periodic, ms per step (median)", "",
           "| method | " + " | ".join(f"{d}D {n}{'²' if d == 2 else '³'}" for d, n in sizes) + " |",
           "|---|" + "---|" * len(sizes)]
    for row in TEMPORAL_ROWS + [BIT_ROW] + THREAD_ROWS:
        if not any(row in c for c in cols.values()):
            continue
        out.append(f"| {TEMPORAL_LABELS[row]} | " + " | ".join(_fmt(cols[s].get(row)) for s in sizes) + " |")
    return out + [""]
