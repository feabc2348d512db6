"""Scratch scan of CH kernel layouts / shapes (one device call): each candidate is
checked against the NumPy reference on a small field (3 boundaries), then timed
(float32 RK2, 4096² / 256³, median ms per step).  Results also to $OUT/ch_scan.md."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.ch import apply_attrs, field, gpu_time  # noqa: E402
from kernels.backend import Backend, gpu_backend  # noqa: E402
from kernels.cahn_hilliard.params import CHParams  # noqa: E402
from kernels.cahn_hilliard.steppers import ReferenceStepper  # noqa: E402


def make(p, attrs):
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    return apply_attrs(CudaStepper(p, gpu_backend()), attrs)


def check(v, dim, attrs):
    import cupy as cp
    errs = []
    for bc in ("periodic", "mirror", "fixed"):
        n = 200 if dim == 2 else 40
        p = CHParams(dim=dim, size=n, dt=0.01 if dim == 2 else 0.005, boundary=bc,
                     boundary_value=-0.8, integrator="rk2", variant=v)
        x0 = np.random.default_rng().uniform(-0.5, 0.5, p.shape).astype(np.float32)
        ref = ReferenceStepper(p, Backend("cpu", np)).step(x0.copy(), 20).astype(np.float64)
        got = cp.asnumpy(make(p, attrs).step(cp.asarray(x0), 20)).astype(np.float64)
        errs.append(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    return max(errs)


def timeit(v, dim, attrs, steps=20, reps=7):
    import cupy as cp
    n, dt = (4096, 0.01) if dim == 2 else (256, 0.005)
    p = CHParams(dim=dim, size=n, dt=dt, integrator="rk2", boundary="periodic", variant=v)
    st = make(p, attrs)
    state = {"phi": field(p.shape, cp)}

    def f(k):
        state["phi"] = st.step(state["phi"], k)
    return gpu_time(f, steps, reps)


#: issue 26 §4 ("the floor"): kernel E's 2D warp-march shapes (warps per block, rows in flight, rows
#: per warp, min. blocks per SM; rows 0 = one wave) next to the shared-tile E it replaces, and the 3D
#: register z-march shapes (TX, TY, chunk, min. blocks per SM, planes in flight, cells per thread) next to the shared-ring march and D
FLOOR = [
    ("E", 2, {"fused_impl": "sliding"}),
    ("E", 2, {}),
    ("E", 2, {"wmarch_shape": (1, 3, 48, 24)}),
    ("E", 2, {"wmarch_shape": (1, 2, 0, 24)}),
    ("E", 2, {"wmarch_shape": (1, 3, 0, 28)}),
    ("E", 2, {"wmarch_shape": (1, 4, 0, 24)}),
    ("E", 2, {"wmarch_shape": (2, 3, 0, 12)}),
    ("E", 3, {"fused_impl3d": "march"}),
    ("E", 3, {}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 1, 1, 4)}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 3, 1, 4)}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 2, 2, 4)}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 2, 3, 4)}),
    ("E", 3, {"zreg_shape": (32, 8, 0, 4, 2, 4)}),
    ("E", 3, {"zreg_shape": (32, 24, 0, 2, 2, 4)}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 1, 2, 2)}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 2, 2, 2)}),
    ("E", 3, {"zreg_shape": (32, 16, 0, 2, 1, 2)}),
    ("E", 3, {"zreg_shape": (32, 8, 0, 3, 2, 2)}),
    ("E", 3, {"zreg_shape": (32, 8, 0, 4, 1, 2)}),
    ("D", 3, {}),
]

CANDS = [
    ("B", 2, {"tile_impl": "sweep", "sweep_minb": 1}),
    ("B", 2, {"tile_impl": "sweep", "sweep_minb": 5}),
    ("B", 2, {"tile_impl": "sweep", "sweep_minb": 5, "sweep_shape": (64, 32)}),
    ("B", 2, {"tile_impl": "march", "march_shape": (128, 1, 64)}),
    ("B", 2, {"tile_impl": "march", "march_shape": (256, 1, 64)}),
    ("B", 2, {"tile_impl": "march", "march_shape": (256, 1, 32)}),
    ("B", 2, {"tile_impl": "march", "march_shape": (128, 1, 128)}),
    ("B", 2, {"tile_impl": "march", "march_shape": (512, 1, 64)}),
    ("B", 2, {"tile_impl": "march", "march_shape": (64, 1, 128)}),
    ("D", 2, {"tile_impl": "sweep", "sweep_minb": 5}),
    ("D", 2, {"tile_impl": "march", "march_shape": (256, 1, 64)}),
    ("E", 2, {"fused2d_shape": (60, 60)}),
    ("E", 2, {"fused2d_shape": (60, 28)}),
    ("E", 2, {"fused2d_shape": (124, 60)}),
    ("B", 3, {"tile_impl": "paper"}),
    ("B", 3, {"tile_impl": "march", "march_shape": (32, 16, 32)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (32, 16, 64)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (32, 16, 16)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (32, 8, 32)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (64, 8, 32)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (64, 8, 64)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (32, 32, 64)}),
    ("B", 3, {"tile_impl": "march", "march_shape": (64, 16, 64)}),
    ("D", 3, {"tile_impl": "march", "march_shape": (32, 16, 32)}),
    ("D", 3, {"tile_impl": "march", "march_shape": (64, 8, 32)}),
    ("E", 3, {}),
]


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the first two candidates only (a smoke test)")
    ap.add_argument("--set", choices=("v2", "floor"), default="v2",
                    help="candidate set: v2 (the 2026-11-23 layout scan) or floor (issue 26 §4)")
    ap.add_argument("--best", metavar="FILE", help="write the fastest matching kernel E attributes per "
                    "dimension as JSON (for benchmarks/ch.py --e-attrs)")
    a = ap.parse_args()
    cands = FLOOR if a.set == "floor" else CANDS
    lines = ["| variant | dim | attrs | max rel err (20 steps, 3 BCs) | ms/step |", "|---|---|---|---|---|"]
    best = {}                     # dim -> (ms, attrs) of the fastest kernel E candidate that matched
    for v, dim, attrs in (cands[:2] if a.quick else cands):
        try:
            err = check(v, dim, attrs)
            t = timeit(v, dim, attrs) * 1e3
            lines.append(f"| {v} | {dim} | {attrs} | {err:.1e} | {t:.4g} |")
            if v == "E" and err < 1e-5 and t < best.get(str(dim), (np.inf,))[0]:
                best[str(dim)] = (t, attrs)
        except Exception as exc:  # keep going
            lines.append(f"| {v} | {dim} | {attrs} | FAILED {exc!r} | — |")
        print(lines[-1], flush=True)
    from kernels.cahn_hilliard.cuda_stepper import compiled_kernels
    lines += ["", "| kernel | registers | local (spill/stack) bytes | static shared bytes |", "|---|---|---|---|"]
    lines += [f"| `{e}` | {k.num_regs} | {k.local_size_bytes} | {k.shared_size_bytes} |"
              for e, k in compiled_kernels() if "float" in e]
    text = "\n".join(lines)
    print("\n" + text)
    save_markdown("ch_scan.md", text)
    if a.best:                    # for benchmarks/ch.py --e-attrs
        with open(a.best, "w") as fh:
            json.dump({d: attrs for d, (_t, attrs) in best.items()}, fh)


if __name__ == "__main__":
    main()
