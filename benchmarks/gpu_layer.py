"""The GPU timings of every system, for comparing two trees in one device call (issue 33).

Run it from the root of each tree in the same call; each row is the median of several timed runs
through the public API the CLI and GUI use (compile excluded, warm):

- Cahn–Hilliard kernel E, one RK2 step at 4096² (2D) and 256³ (3D), float32, CUDA events;
- fw-fast at n = 4096, float32 (kernel seconds as ``apsp`` reports them);
- MS-BFS APSP on a Barabási–Albert graph of 30 000 vertices (m = 5);
- Flint TS, LR-1991, 100 000 cells, 20 000 Euler steps of 0.01 ms.

Prints one JSON object {row: seconds} (``--json FILE`` writes it too).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def _events(fn, reps: int, warm: int = 2) -> float:
    """Median seconds of ``fn`` by CUDA events.  Not kernels.gpu.timing: this script also runs in trees
    from before that layer existed (the "before" side of the comparison)."""
    import cupy as cp
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1e-3)
    return statistics.median(times)


def ch_kernel_e(dim: int, size: int, steps: int = 50) -> float:
    import cupy as cp
    from kernels.backend import gpu_backend
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    from kernels.cahn_hilliard.params import CHParams
    p = CHParams(dim=dim, size=size, variant="E")
    st = CudaStepper(p, gpu_backend())
    shape = (size,) * dim
    state = {"phi": cp.asarray(np.random.default_rng(0).uniform(-0.1, 0.1, shape).astype(np.float32))}

    def f():
        state["phi"] = st.step(state["phi"], steps)
    return _events(f, 7) / steps


def fw_fast(n: int = 4096) -> float:
    from kernels.backend import gpu_backend
    from kernels.graphs.data import generators as G
    from kernels.graphs.apsp import apsp
    g = G.barabasi_albert(n, 5, 1)
    be = gpu_backend()
    apsp(g, "fw-fast", backend=be, dtype="float32")
    return min(apsp(g, "fw-fast", backend=be, dtype="float32").kernel_seconds for _ in range(5))


def msbfs(n: int = 30000) -> float:
    from kernels.backend import gpu_backend
    from kernels.graphs.data import generators as G
    from kernels.graphs.apsp import apsp
    csr = G.barabasi_albert(n, 5, 1).csr()
    be = gpu_backend()
    apsp(csr, "gpu-msbfs", backend=be)
    return min(apsp(csr, "gpu-msbfs", backend=be).kernel_seconds for _ in range(3))


def flint_ts(n: int = 100_000, steps: int = 20_000) -> float:
    import cupy as cp
    from kernels.flint import Simulation, load_model
    sim = Simulation(load_model("luo_rudy_1991"), "ts", n=n)
    sim.advance(200, 0.01, record=[0], every=1000)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        sim.advance(steps, 0.01, record=[0], every=1000)
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


ROWS = {
    "ch_E_2d_4096_step_s": lambda: ch_kernel_e(2, 4096),
    "ch_E_3d_256_step_s": lambda: ch_kernel_e(3, 256, steps=20),
    "fw_fast_4096_f32_s": fw_fast,
    "msbfs_ba30000_s": msbfs,
    "flint_ts_lr1991_100k_20000steps_s": flint_ts,
}
#: --quick: the same rows at small sizes (a smoke run)
QUICK = {
    "ch_E_2d_1024_step_s": lambda: ch_kernel_e(2, 1024),
    "ch_E_3d_64_step_s": lambda: ch_kernel_e(3, 64, steps=20),
    "fw_fast_1024_f32_s": lambda: fw_fast(1024),
    "msbfs_ba5000_s": lambda: msbfs(5000),
    "flint_ts_lr1991_1k_2000steps_s": lambda: flint_ts(1000, 2000),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--label", default=os.path.basename(os.getcwd()))
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    a = ap.parse_args(argv)
    out = {"label": a.label}
    for name, fn in (QUICK if a.quick else ROWS).items():
        try:
            out[name] = fn()
        except Exception as exc:   # a row that fails is reported, the others still run
            out[name] = f"failed: {type(exc).__name__}: {exc}"[:300]
        print(name, out[name], flush=True)
    print(json.dumps(out))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
