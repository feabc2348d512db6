"""Multi-GPU Cahn–Hilliard benchmark (paper 001 §4.6): step time and speed-up over one GPU.

Strong scaling: 2D 4096², 8192², 16384² and 3D 512³ (float32, RK2), the
single-GPU CudaStepper against the slab decomposition on all visible GPUs,
per exchange mode (host = the paper's staging through host memory, p2p, nccl),
eager (one Python call per kernel/copy, overlap of bulk and halo exchange)
and with CUDA graphs (a block of steps replayed as one graph).  Weak scaling:
a fixed 8192×8192 (2D) / 512×512×512 (3D) block per GPU.

NCCL's NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the GPU host requires.

Usage:  python benchmarks/multigpu.py [--quick] [--variants B,E] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.report import save_markdown  # noqa: E402

import numpy as np  # noqa: E402

from kernels.backend import gpu_backend  # noqa: E402
from kernels.cahn_hilliard.cuda_stepper import CudaStepper  # noqa: E402
from kernels.cahn_hilliard.multigpu import MultiGPUStepper  # noqa: E402
from kernels.cahn_hilliard.params import CHParams  # noqa: E402

STRONG = [(2, (4096, 4096)), (2, (8192, 8192)), (2, (16384, 16384)), (3, (512, 512, 512))]
QUICK = [(2, (4096, 4096)), (2, (8192, 8192)), (3, (256, 256, 256))]
MODES = [("host", False), ("p2p", False), ("nccl", False),
         ("host", True), ("p2p", True), ("nccl", True)]


def _sync_all(n):
    import cupy as cp
    for d in range(n):
        cp.cuda.Device(d).synchronize()


def timed(fn, ngpu, target=0.4, reps=3):
    """Median seconds per step; steps per rep chosen to run ≥ ``target`` s."""
    fn(20)
    _sync_all(ngpu)
    t = time.perf_counter()
    fn(20)
    _sync_all(ngpu)
    per = max((time.perf_counter() - t) / 20, 1e-6)
    k = int(min(max(20, target / per), 4000) // 20 * 20)
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(k)
        _sync_all(ngpu)
        out.append((time.perf_counter() - t) / k)
    return float(np.median(out))


def _field(shape):
    import cupy as cp
    rng = cp.random.default_rng(1)
    return (rng.random(shape, dtype=cp.float32) - 0.5) * cp.float32(0.2)


def single_gpu(p, shape):
    import cupy as cp
    be = gpu_backend()
    with cp.cuda.Device(0):
        st = CudaStepper(p, be)
        box = {"phi": _field(shape)}

        def run(k):
            box["phi"] = st.step(box["phi"], k)
        t = timed(run, 1)
        box.clear()
    cp.get_default_memory_pool().free_all_blocks()
    return t


def multi_gpu(p, shape, devices, exchange, graph, overlap=True):
    import cupy as cp
    be = gpu_backend()
    st = MultiGPUStepper(p, be, devices, exchange, overlap=overlap, graph=graph)
    with cp.cuda.Device(0):
        phi = _field(shape)
        st.scatter(phi)
        del phi
    t = timed(st.advance, max(devices) + 1)
    notes = list(st.notes)
    st.synchronize()
    del st
    for d in set(devices):
        with cp.cuda.Device(d):
            cp.get_default_memory_pool().free_all_blocks()
    return t, notes


def _label(shape):
    return "×".join(map(str, shape)) if len(set(shape)) > 1 else f"{shape[0]}{'²' if len(shape) == 2 else '³'}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--variants", default="B,E")
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-weak", action="store_true")
    ap.add_argument("--no-overlap-row", action="store_true")
    a = ap.parse_args(argv)
    import cupy as cp
    ngpu = cp.cuda.runtime.getDeviceCount()
    devices = list(range(ngpu))
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"{ngpu} × {name}, CuPy {cp.__version__}, NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
    rows, notes_all = [], set()
    cases = QUICK if a.quick else STRONG
    for variant in a.variants.split(","):
        for dim, shape in cases:
            p = CHParams(dim=dim, size=shape[0], variant=variant, integrator="rk2")
            t1 = single_gpu(p, shape)
            row = {"variant": variant, "size": _label(shape), "gpus": ngpu, "t1_ms": t1 * 1e3}
            line = f"{variant} {_label(shape):>7}  1 GPU {t1 * 1e3:8.3f} ms"
            for exchange, graph in MODES:
                t, notes = multi_gpu(p, shape, devices, exchange, graph)
                notes_all.update(notes)
                key = f"{exchange}{'+graph' if graph else ''}"
                row[key + "_ms"] = t * 1e3
                line += f" | {key} {t * 1e3:7.3f} ({t1 / t:4.2f}×)"
            if not a.no_overlap_row and shape == (8192, 8192):
                t, _ = multi_gpu(p, shape, devices, "p2p", True, overlap=False)
                row["p2p+graph_no_overlap_ms"] = t * 1e3
                line += f" | no-overlap {t * 1e3:7.3f}"
            t, _ = multi_gpu(p, shape, [0], "p2p", True)
            row["1gpu_slab_graph_ms"] = t * 1e3
            line += f" | 1-slab graph {t * 1e3:7.3f}"
            rows.append(row)
            print(line, flush=True)
    weak = []
    if not a.no_weak and ngpu > 1:
        for variant in a.variants.split(","):
            for dim, block in [(2, (8192, 8192)), (3, (512, 512, 512))] if not a.quick else \
                    [(2, (4096, 4096))]:
                base = None
                for g in range(1, ngpu + 1):
                    shape = (block[0] * g,) + block[1:]
                    p = CHParams(dim=dim, size=block[-1], variant=variant)
                    if g == 1:
                        t = single_gpu(p, shape)
                        base = t
                        rec = {"variant": variant, "block": _label(block), "gpus": 1,
                               "field": _label(shape), "ms": t * 1e3, "efficiency": 1.0}
                    else:
                        best = None
                        for exchange, graph in MODES:
                            tt, _ = multi_gpu(p, shape, list(range(g)), exchange, graph)
                            if best is None or tt < best[0]:
                                best = (tt, f"{exchange}{'+graph' if graph else ''}")
                        t = best[0]
                        rec = {"variant": variant, "block": _label(block), "gpus": g,
                               "field": _label(shape), "ms": t * 1e3, "efficiency": base / t,
                               "mode": best[1]}
                    weak.append(rec)
                    print(f"weak {variant} {rec['field']:>12} on {g} GPU(s): {t * 1e3:8.3f} ms/step, "
                          f"efficiency {rec['efficiency']:.2f} {rec.get('mode', '')}", flush=True)
    if notes_all:
        print("notes:", *sorted(notes_all), sep="\n  ")
    md = _markdown(rows, weak, ngpu, name)
    print(md)
    save_markdown("multigpu_bench.md", md)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"strong": rows, "weak": weak, "device": name, "gpus": ngpu}, fh, indent=1)


def _markdown(rows, weak, ngpu, name):
    keys = [f"{e}{'+graph' if g else ''}" for e, g in MODES]
    out = [f"### Strong scaling, RK2 float32, ms per step ({ngpu} × {name})", "",
           "| kernel | field | 1 GPU | " + " | ".join(f"{ngpu} GPUs {k}" for k in keys) +
           " | best speed-up |",
           "|---|---|---|" + "---|" * len(keys) + "---|"]
    for r in rows:
        best = min(r[k + "_ms"] for k in keys)
        out.append(f"| {r['variant']} | {r['size']} | {r['t1_ms']:.3f} | " +
                   " | ".join(f"{r[k + '_ms']:.3f} ({r['t1_ms'] / r[k + '_ms']:.2f}×)" for k in keys) +
                   f" | **{r['t1_ms'] / best:.2f}×** |")
    if weak:
        out += ["", "### Weak scaling (fixed block per GPU; best exchange mode)", "",
                "| kernel | block per GPU | GPUs | field | ms per step | efficiency | mode |",
                "|---|---|---|---|---|---|---|"]
        for w in weak:
            out.append(f"| {w['variant']} | {w['block']} | {w['gpus']} | {w['field']} | "
                       f"{w['ms']:.3f} | {w['efficiency']:.2f} | {w.get('mode', '1 GPU')} |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
