"""Occupancy on the live GPU: the driver's answer, real kernels' resources, the app's own kernels.

* :func:`device_spec`, :func:`kernel_resources`, :func:`max_active_blocks`,
  :func:`kernel_occupancy`, :func:`launch_occupancy` — the GPU layer's (:mod:`kernels.gpu.occupancy`),
  re-exported: this GPU's limits, a compiled kernel's resources, the driver's occupancy.
* :func:`app_kernels` / :func:`app_kernel_table` — every kernel recorded in the launch registry
  (:mod:`kernels.launches`: Cahn–Hilliard variants, the Marsaglia generators, the paper 003 case
  study, …) with its resources and occupancy at the block size it is launched with.
* :func:`register_sweep_kernels` / :func:`ground_truth_sweep` — kernels compiled with a forced
  register count (``--maxrregcount``) and static shared memory, and the comparison of the
  calculator with the driver over block sizes × registers × dynamic shared memory.

Needs CuPy and a CUDA device; everything else in ``kernels.occupancy`` runs without.
"""
from __future__ import annotations

import itertools
import time

from .. import gpu, launches
from ..gpu.calculator import occupancy
from ..gpu.cuda import cupy_or_raise
from ..gpu.occupancy import device_spec, kernel_occupancy, kernel_resources, launch_occupancy, max_active_blocks

__all__ = ["device_spec", "kernel_resources", "max_active_blocks", "kernel_occupancy", "launch_occupancy",
           "app_kernels", "app_kernel_table", "register_sweep_kernels", "ground_truth_sweep", "block_size_sweep"]


# --------------------------------------------------------------------------------- the app's kernels

def app_kernels(include_rng: bool = True) -> list[tuple[str, object]]:
    """(name, RawKernel) of every CUDA kernel recorded in :mod:`kernels.launches` so far (compile order;
    kernels the host GPU layer compiled are left out)."""
    return [(ln.name, ln.kernel) for ln in launches.recorded(device_only=True) if include_rng or ln.system != "rng"]


def app_kernel_table() -> list[dict]:
    """One row per recorded app kernel: name, registers, static smem, max threads/block and the
    occupancy here at the block size and dynamic shared memory it is launched with (CUDA kernels only:
    the host GPU layer's are not the driver's to answer for)."""
    spec = device_spec()
    rows = []
    for ln in launches.recorded(device_only=True):
        res = kernel_resources(ln.kernel)
        block = min(ln.block, res["max_threads_per_block"])
        row = kernel_occupancy(ln.kernel, block, ln.dynamic_smem, spec)
        row["name"] = ln.name
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------ ground-truth sweep

SWEEP_SRC = r"""
// NACC accumulators kept in registers (all indices compile-time after unrolling), so the
// register count is set by --maxrregcount; STATIC_FLOATS of static shared memory.
extern "C" __global__ void
hungry(const float* __restrict__ x, float* __restrict__ y, int n, int it)
{
#if STATIC_FLOATS > 0
    __shared__ float st[STATIC_FLOATS];
    st[threadIdx.x % STATIC_FLOATS] = x[threadIdx.x % n];
    __syncthreads();
#endif
    extern __shared__ float dyn[];
    float acc[NACC];
    int i0 = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = x[(i0 + 31 * i) % n];
    for (int k = 0; k < it; ++k) {
        float c = (float)k;
#pragma unroll
        for (int i = 0; i < NACC; ++i) acc[i] = fmaf(acc[i], acc[(i + 1) % NACC], c);
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < NACC; ++i) s += acc[i] * (float)(i + 1);
#if STATIC_FLOATS > 0
    s += st[(threadIdx.x + 1) % STATIC_FLOATS];
#endif
    if (n < 0) s += dyn[threadIdx.x];
    y[i0] = s;
}
"""


def register_sweep_kernels(maxrreg=(16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 255),
                           static_floats=(0, 3000), nacc: int = 240):
    """Compile the register-hungry kernel for each forced register cap and static smem size.

    Returns a list of (maxrregcount, static floats, RawKernel); the real register count is read
    from the kernel, not assumed.  Dynamic shared memory up to the device's opt-in maximum is
    enabled on each kernel (``cudaFuncAttributeMaxDynamicSharedMemorySize``).  The kernels are
    compiled through the GPU layer (once per device and configuration) and recorded in the launch
    registry; ``ground_truth_sweep(carveout=…)`` leaves its carve-out set on them."""
    dev = gpu.device("cuda")
    spec = device_spec()
    out = []
    for r, sf in itertools.product(maxrreg, static_floats):
        src = SWEEP_SRC.replace("STATIC_FLOATS", str(sf)).replace("NACC", str(nacc))
        mod = dev.module(src, options=(f"--maxrregcount={r}",), system="occupancy", prefix="Occupancy")
        k = mod.function("hungry", label=f"hungry (maxrregcount {r}, {sf} static floats)")
        static = kernel_resources(k)["static_smem"]
        k.max_dynamic_shared_size_bytes = max(0, spec.max_smem_per_block_optin - static)
        out.append((r, sf, k))
    return out


def ground_truth_sweep(kernels=None, blocks=(32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024),
                       dyn_smem=(0, 1, 1000, 4096, 12288, 30000, 48 * 1024, 70000, 100000, 160000, 200000),
                       carveout=None) -> dict:
    """Compare the calculator with the CUDA occupancy API on every configuration.

    Returns {"n": configurations, "agree": count, "mismatches": [...], "rows": [...], "api": …,
    "seconds": …}.  ``carveout`` (percent) sets the kernels' preferred carve-out first."""
    cupy_or_raise()
    spec = device_spec()
    kernels = kernels if kernels is not None else register_sweep_kernels()
    rows, mism, api = [], [], ""
    t0 = time.perf_counter()
    for r, sf, k in kernels:
        if carveout is not None:
            k.preferred_shared_memory_carveout = carveout
        res = kernel_resources(k)
        for b, d in itertools.product(blocks, dyn_smem):
            if d > res["max_dynamic_smem"]:
                continue
            drv, api = max_active_blocks(k, b, d)
            calc = occupancy(spec, b, res["registers"], res["static_smem"], d,
                             carveout=carveout, strict=False)
            row = {"maxrregcount": r, "registers": res["registers"], "static_smem": res["static_smem"],
                   "block": b, "dynamic_smem": d, "carveout": carveout, "driver": drv,
                   "calculator": calc.active_blocks_per_sm, "limiter": calc.limiter}
            rows.append(row)
            if drv != calc.active_blocks_per_sm:
                mism.append(row)
    return {"n": len(rows), "agree": len(rows) - len(mism), "mismatches": mism, "rows": rows, "api": api,
            "seconds": time.perf_counter() - t0, "device": spec.examples, "cc": spec.cc}


# ------------------------------------------------------------------ measured vs theoretical occupancy

def block_size_sweep(case: launches.SweepCase, blocks=None, repeats: int = 20) -> list[dict]:
    """Time a kernel at every block size and put the theoretical occupancy beside it
    (paper 003's argument that occupancy hides latency; paper 004's idea of tuning by a model).

    ``case``: a :class:`kernels.launches.SweepCase` built by the system owning the kernel
    (:func:`kernels.app_kernels.block_size_sweep` picks one by name)."""
    spec = device_spec()
    k, launch, work, unit = case.kernel, case.launch, case.work, case.unit
    res = kernel_resources(k)
    blocks = blocks or [b for b in range(32, min(1024, res["max_threads_per_block"]) + 1, 32)]
    rows = []
    for b in blocks:
        t = gpu.timing.time_calls(lambda: launch(b), repeat=repeats, warmup=1, device="cuda").median
        r = occupancy(spec, b, res["registers"], res["static_smem"], 0, strict=False)
        rows.append({"kernel": case.name, "block": b, "seconds": t, "throughput": work / t, "unit": unit,
                     "registers": res["registers"], "occupancy": r.occupancy,
                     "active_warps_per_sm": r.active_warps_per_sm, "limiter": r.limiter})
    return rows
