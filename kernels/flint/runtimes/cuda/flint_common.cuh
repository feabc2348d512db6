// Shared by the interpreter (flint_is.cu) and the translator's generated kernels (runtimes.ts_source,
// runtimes.ts_phase_source); REAL is typedef'd before it.

// State s of member/cell j at the stage point y + cdt·kin (kin = 0: y itself).  A neighbour index j is
// wrapped on a ring (net 2) or clamped at a line's ends (zero flux; net 1, and net 0 when j = i).
__device__ __forceinline__ REAL flint_nb(const REAL* __restrict__ y, const REAL* __restrict__ kin, double cdt,
                                         int s, int j, int n, int net) {
    if (net == 2) { j %= n; if (j < 0) j += n; } else { if (j < 0) j = 0; if (j > n - 1) j = n - 1; }
    REAL v = y[(size_t)s * n + j];
    if (kin) v = v + (REAL)cdt * kin[(size_t)s * n + j];
    return v;
}

// Warp-parallel sum (thesis §5.4.6): a butterfly of __shfl_xor_sync, after 5 rounds every lane of the
// warp holds the total (the same order in IS's WARP_SUM and TS's sum warps).
__device__ __forceinline__ REAL flint_warp_sum(REAL v) {
    for (int o = 16; o > 0; o >>= 1) v = v + __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// One state's integrator update from its derivative d (index k = state*n + member): explicit Euler
// (mode 0: y' = y + dt d) or a classic RK4 stage (mode 1: first stage, acc = w d; mode 2: middle
// stages, acc += w d; mode 3: last stage, y' = y + dt (acc + w d)).  kout keeps the stage derivative.
__device__ __forceinline__ void flint_integrate(REAL d, size_t k, const REAL* __restrict__ y, double dt,
                                                int mode, double w, REAL* __restrict__ kout,
                                                REAL* __restrict__ acc, REAL* __restrict__ yout) {
    if (mode == 0) yout[k] = y[k] + (REAL)dt * d;
    else if (mode == 1) { kout[k] = d; acc[k] = (REAL)w * d; }
    else if (mode == 2) { kout[k] = d; acc[k] = acc[k] + (REAL)w * d; }
    else yout[k] = y[k] + (REAL)dt * (acc[k] + (REAL)w * d);
}

// Expression mapping (thesis §5.5): after the ODE phase the derivatives are in V[slot*n + member].
extern "C" __global__ void flint_update(
    const REAL* __restrict__ V, const int* __restrict__ dslot, const REAL* __restrict__ y,
    double dt, int mode, double w, REAL* __restrict__ kout, REAL* __restrict__ acc, REAL* __restrict__ yout,
    int ns, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int s = 0; s < ns; ++s)
        flint_integrate(V[(size_t)dslot[s] * n + i], (size_t)s * n + i, y, dt, mode, w, kout, acc, yout);
}
