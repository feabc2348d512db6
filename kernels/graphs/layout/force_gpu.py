"""CuPy parts of the force layout (:mod:`.force`) on the GPU: one iteration in about 20 launches and
one FFT pair, without host synchronisation, deterministic.

The fused path (:data:`SOURCE`, compiled once per device with NVRTC) runs per iteration: the
bounding box (two CuPy reductions and a one-thread kernel), the mass deposit, its conversion to
float32, ``cupy.fft.rfft2`` and two ``irfft2`` (the x and y fields), the attraction, the force, the
swing/traction terms and their two sums, the global speed (one thread) and the position update.

* Deposit: cloud-in-cell weights × masses are added to the grid as 64-bit fixed-point integers
  (``atomicAdd`` on ``unsigned long long``), so the sum does not depend on the order the atomics
  land in.  The scale is the largest power of two ≤ 2⁴⁰ with (total mass × scale) < 2⁶².
* Attraction Σ_{j ∈ N(i)} (x_j − x_i): one warp per vertex over its CSR row, double-precision
  partial sums combined by a fixed shuffle tree (no atomics; hubs split over 32 lanes).
* Every other step mirrors :class:`~kernels.graphs.layout.force.ForceLayout`'s NumPy code line by
  line (same float32/float64 choices), so the CPU is the reference.

If NVRTC cannot compile the source, :class:`GpuOps` keeps the reason in ``fallback_reason`` and
the layout runs the generic CuPy code (the NumPy code on CuPy arrays: the same maths in about
150 launches per iteration, with a prefix-sum attraction and the fixed-point deposit kernel).
"""
from __future__ import annotations

# Imports inside functions: CuPy stays optional: it is imported only when the GPU force layout runs.
import math

import numpy as np

from ... import gpu

SOURCE = r"""
// cloud-in-cell: the 4 cells (indices into the padded 2G x 2G grid) and weights of vertex i
__device__ __forceinline__ void cic(const float* x, int i, const float* box, int G, long long* idx, float* w)
{
    const float h = box[2];
    const float ux = (x[2 * i] - box[0]) / h - 0.5f;
    const float uy = (x[2 * i + 1] - box[1]) / h - 0.5f;
    const float ix = fminf(fmaxf(floorf(ux), 0.0f), (float)(G - 2));
    const float iy = fminf(fmaxf(floorf(uy), 0.0f), (float)(G - 2));
    const float fx = fminf(fmaxf(ux - ix, 0.0f), 1.0f);
    const float fy = fminf(fmaxf(uy - iy, 0.0f), 1.0f);
    const float gx = 1.0f - fx, gy = 1.0f - fy;
    const long long P = 2LL * G, base = (long long)iy * P + (long long)ix;
    idx[0] = base; idx[1] = base + 1; idx[2] = base + P; idx[3] = base + P + 1;
    w[0] = gx * gy; w[1] = fx * gy; w[2] = gx * fy; w[3] = fx * fy;
}

extern "C" __global__ void fa2_box(const float* lo, const float* hi, float* box, int G)
{
    const float L = fmaxf(hi[0] - lo[0], hi[1] - lo[1]) * ((float)G / ((float)G - 2.0f)) + 1e-6f;
    box[0] = 0.5f * (lo[0] + hi[0]) - 0.5f * L;
    box[1] = 0.5f * (lo[1] + hi[1]) - 0.5f * L;
    box[2] = L / (float)G;
}

extern "C" __global__ void fa2_deposit(const float* x, const float* mass, const float* box,
                                       unsigned long long* grid, int n, int G, double scale)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long idx[4]; float w[4];
    cic(x, i, box, G, idx, w);
    for (int c = 0; c < 4; ++c)
        atomicAdd(grid + idx[c], (unsigned long long)llrint((double)(w[c] * mass[i]) * scale));
}

extern "C" __global__ void fa2_to_float(const unsigned long long* grid, float* rho, long long size, double inv)
{
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < size) rho[k] = (float)((double)grid[k] * inv);
}

extern "C" __global__ void fa2_attraction(const long long* indptr, const int* indices, const float* x,
                                          float* out, int n)
{
    const int v = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (v >= n) return;                       // uniform per warp
    const float xi = x[2 * v], yi = x[2 * v + 1];
    double sx = 0.0, sy = 0.0;
    for (long long k = indptr[v] + lane; k < indptr[v + 1]; k += 32) {
        const int j = indices[k];
        sx += (double)(x[2 * j] - xi);
        sy += (double)(x[2 * j + 1] - yi);
    }
    for (int o = 16; o > 0; o >>= 1) {
        sx += __shfl_down_sync(0xffffffffu, sx, o);
        sy += __shfl_down_sync(0xffffffffu, sy, o);
    }
    if (lane == 0) { out[2 * v] = (float)sx; out[2 * v + 1] = (float)sy; }
}

extern "C" __global__ void fa2_force(const float* x, const float* mass, const float* freem, const float* box,
                                     const float* ex, const float* ey, const float* att, float* f,
                                     int n, int G, float scaling, float gravity)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long idx[4]; float w[4];
    cic(x, i, box, G, idx, w);
    float sx = ex[idx[0]] * w[0], sy = ey[idx[0]] * w[0];
    for (int c = 1; c < 4; ++c) { sx += ex[idx[c]] * w[c]; sy += ey[idx[c]] * w[c]; }
    const float coef = (scaling / box[2]) * mass[i];
    float fx = att[2 * i] + coef * sx, fy = att[2 * i + 1] + coef * sy;
    if (gravity > 0.0f) {
        const float xi = x[2 * i], yi = x[2 * i + 1];
        const float gc = -gravity * mass[i] / fmaxf(sqrtf(xi * xi + yi * yi), 1e-12f);
        fx += gc * xi; fy += gc * yi;
    }
    f[2 * i] = fx * freem[i];
    f[2 * i + 1] = fy * freem[i];
}

extern "C" __global__ void fa2_swing(const float* f, const float* fp, const float* mass, float* swing_i,
                                     float* ms, float* mt, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float dx = f[2 * i] - fp[2 * i], dy = f[2 * i + 1] - fp[2 * i + 1];
    const float sx = f[2 * i] + fp[2 * i], sy = f[2 * i + 1] + fp[2 * i + 1];
    const float sw = sqrtf(dx * dx + dy * dy);
    swing_i[i] = sw;
    ms[i] = mass[i] * sw;
    mt[i] = mass[i] * (0.5f * sqrtf(sx * sx + sy * sy));
}

extern "C" __global__ void fa2_speed(const double* swing_p, const double* traction_p, double* state,
                                     double tol, double n)
{
    const double swing = *swing_p, traction = *traction_p;
    double speed = state[0], eff = state[1];
    const double est = 0.05 * sqrt(n);
    double jt = tol * fmax(sqrt(est), fmin(10.0, est * traction / (n * n)));
    const bool jumpy = traction > 0.0 && swing > 2.0 * traction;
    if (jumpy && eff > 0.05) eff *= 0.5;
    if (jumpy) jt = fmax(jt, tol);
    const double target = swing > 0.0 ? jt * eff * traction / fmax(swing, 1e-300) : 1e30;
    if (swing > jt * traction) { if (eff > 0.05) eff *= 0.7; }
    else if (speed < 1000.0) eff *= 1.3;
    speed = speed + fmin(target - speed, 0.5 * speed);
    state[0] = speed;
    state[1] = eff;
}

extern "C" __global__ void fa2_update(float* x, float* fp, const float* f, const float* swing_i,
                                      const double* state, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double speed = state[0];
    const float factor = (float)(speed / (1.0 + sqrt(speed * (double)swing_i[i])));
    x[2 * i] += f[2 * i] * factor;
    x[2 * i + 1] += f[2 * i + 1] * factor;
    fp[2 * i] = f[2 * i];
    fp[2 * i + 1] = f[2 * i + 1];
}
"""

NAMES = ("fa2_box", "fa2_deposit", "fa2_to_float", "fa2_attraction", "fa2_force", "fa2_swing", "fa2_speed",
         "fa2_update")
THREADS = 256
#: kernels launched as one thread (the rest: blocks of THREADS)
SINGLE_THREAD = ("fa2_box", "fa2_speed")


def functions() -> dict:
    """The kernels of :data:`SOURCE` by name, for the current device (compiled on first use, once per
    device, by the GPU layer, which records them in the launch registry)."""
    mod = gpu.device("cuda").module(SOURCE, options=("-std=c++14",), system="graphs", prefix="Layout")
    return {k: mod.function(k, block=1 if k in SINGLE_THREAD else THREADS) for k in NAMES}


def fixed_point_scale(total_mass: float) -> float:
    """2^k ≤ 2⁴⁰ with total_mass · 2^k < 2⁶²."""
    k = min(40, int(math.floor(62 - math.log2(max(total_mass, 1.0)))) - 1)
    return float(2.0 ** k)


def blocks(total: int, threads: int = THREADS) -> int:
    return max(1, (int(total) + threads - 1) // threads)


class GpuOps:
    """CuPy versions of :class:`~kernels.graphs.layout.force.CpuOps`'s operations, plus the fused
    :meth:`forces` and :meth:`iterate` (``fused`` is False when the kernels did not compile)."""

    def __init__(self, g, backend, total_mass: float):
        import cupy as cp
        import cupy.fft
        self.xp = cp
        csr = g.csr()
        self.n = g.n
        self.indptr = cp.asarray(csr.indptr.astype(np.int64))
        self.indices = cp.asarray(csr.indices.astype(np.int32))
        self.src = cp.asarray(csr.sources().astype(np.int64))
        self.scale = fixed_point_scale(total_mass)
        self.rfft2, self.irfft2 = cupy.fft.rfft2, cupy.fft.irfft2
        self.fallback_reason = ""
        try:
            self.k = functions()
        except Exception as exc:  # noqa: BLE001 - NVRTC/driver problems: run the generic CuPy path
            self.k, self.fallback_reason = {}, f"{exc.__class__.__name__}: {exc}"
        self.fused = bool(self.k)
        self.box = cp.zeros(3, dtype=cp.float32)
        self.state = cp.asarray([1.0, 1.0], dtype=cp.float64)     # global speed, speed efficiency
        self.swing_i = cp.zeros(g.n, dtype=cp.float32)
        self.ms = cp.zeros(g.n, dtype=cp.float32)
        self.mt = cp.zeros(g.n, dtype=cp.float32)

    # ------------------------------------------------------------------ the operations
    def attraction(self, x):
        cp = self.xp
        out = cp.zeros_like(x)
        if self.indices.size == 0:
            return out
        if self.fused:
            self.k["fa2_attraction"]((blocks(32 * self.n),), (THREADS,),
                                     (self.indptr, self.indices, x, out, np.int32(self.n)))
            return out
        for c in range(2):
            xc = x[:, c]
            d = (xc[self.indices] - xc[self.src]).astype(cp.float64)
            s = cp.concatenate([cp.zeros(1, cp.float64), cp.cumsum(d)])
            out[:, c] = (s[self.indptr[1:]] - s[self.indptr[:-1]]).astype(cp.float32)
        return out

    def deposit(self, idx, w, size):
        """Σ of ``w`` per cell ``idx`` (the generic path), through the fixed-point elementwise kernel."""
        cp = self.xp
        grid = cp.zeros(size, dtype=cp.uint64)
        deposit_elementwise()(idx, w.astype(cp.float32), self.scale, grid)
        return (grid.astype(cp.float64) * (1.0 / self.scale)).astype(cp.float32)

    def scalar(self, v):
        return self.xp.asarray(v, dtype=self.xp.float64)

    # ------------------------------------------------------------------ fused iteration
    def forces(self, lay, x):
        cp, n, G = self.xp, self.n, lay.G
        P = 2 * G
        self.k["fa2_box"]((1,), (1,), (x.min(axis=0), x.max(axis=0), self.box, np.int32(G)))
        grid = cp.zeros(P * P, dtype=cp.uint64)
        self.k["fa2_deposit"]((blocks(n),), (THREADS,), (x, lay.mass, self.box, grid, np.int32(n), np.int32(G),
                                                         np.float64(self.scale)))
        rho = cp.empty((P, P), dtype=cp.float32)
        self.k["fa2_to_float"]((blocks(P * P),), (THREADS,), (grid, rho, np.int64(P * P),
                                                              np.float64(1.0 / self.scale)))
        rh = self.rfft2(rho)
        ex = cp.ascontiguousarray(self.irfft2(rh * lay.khat_x, s=(P, P)), dtype=cp.float32)
        ey = cp.ascontiguousarray(self.irfft2(rh * lay.khat_y, s=(P, P)), dtype=cp.float32)
        att = self.attraction(x)
        f = cp.empty_like(x)
        p = lay.params
        self.k["fa2_force"]((blocks(n),), (THREADS,), (x, lay.mass, lay.free, self.box, ex, ey, att, f, np.int32(n),
                                                       np.int32(G), np.float32(p["scaling"]),
                                                       np.float32(p["gravity"])))
        return f

    def iterate(self, lay):
        n = self.n
        f = self.forces(lay, lay.x)
        self.k["fa2_swing"]((blocks(n),), (THREADS,), (f, lay.f_prev, lay.mass, self.swing_i, self.ms, self.mt,
                                                       np.int32(n)))
        swing = self.ms.sum(dtype=self.xp.float64)
        traction = self.mt.sum(dtype=self.xp.float64)
        self.k["fa2_speed"]((1,), (1,), (swing, traction, self.state, np.float64(lay.params["jitter_tolerance"]),
                                         np.float64(n)))
        self.k["fa2_update"]((blocks(n),), (THREADS,), (lay.x, lay.f_prev, f, self.swing_i, self.state, np.int32(n)))


_ELEMENTWISE: dict = {}


def deposit_elementwise():
    """The generic path's fixed-point deposit (an ElementwiseKernel, compiled once per process)."""
    k = _ELEMENTWISE.get("deposit")
    if k is None:
        import cupy as cp
        k = _ELEMENTWISE["deposit"] = cp.ElementwiseKernel(
            "int64 idx, float32 w, float64 scale", "raw uint64 grid",
            "atomicAdd(&grid[idx], (unsigned long long)llrint((double)w * scale));",
            "gse_layout_deposit_fixed")
    return k
