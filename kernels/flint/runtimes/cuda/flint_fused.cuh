// The fused expression mapping (issue 23; paper 004 §5.5, Fig. 5.7): a chunk of k steps in ONE launch.
// Each step runs every phase in order with a barrier after each, then the integrator update (the same
// flint_integrate calls as flint_update), a barrier, and (RK4) the next stage; so a step costs barriers
// instead of ~10 kernel launches.  The phase work itself is the per-phase kernels' (same operations,
// same order: bit-identical results): flint_fused_phase(p, member, phase warp, lane, …) is defined by
// the runtime's source before this file (IS: flint_exec on the lane's bytecode; TS: the phase's
// generated statements).
//   FLINT_GRID 0   one block per member (independent members: ensembles, one flattened model): the
//                  block's warps take the phase's warps w, w + warps-a-block, …; __syncthreads().
//   FLINT_GRID 1   cooperative launch (coupled cells: lines, rings): the grid's warps take the
//                  (member, phase warp) pairs; cooperative_groups::this_grid().sync().
//   FLINT_SHARED_V 1: the slots V of the block's member in shared memory (block mode only); 2: also its
//                  states, RK4 stage arrays and parameters (copied in at the start, the states out at
//                  the end; inside, the member is member 0 of 1).
// A warp always takes whole phase warps, so the 32 lanes of a warp-parallel sum reach its
// __shfl_xor_sync together.  States stay in global memory (ya/yb swap each step: the new states end
// in ya when k is even); after every step whose number is a multiple of `every` the states rec[r] of
// member i are written to out[row][r][col[i]] (col[i] < 0: not recorded), as flint_ts_loop does.
#if FLINT_GRID
#include <cooperative_groups.h>
#define FLINT_SYNC() cooperative_groups::this_grid().sync()
#else
#define FLINT_SYNC() __syncthreads()
#endif

extern "C" __global__ void __launch_bounds__(FLINT_THREADS) flint_fused(
    const int* __restrict__ code, const int* __restrict__ index, const int* __restrict__ pstart,
    const int* __restrict__ pwarps, int nphase, const REAL* __restrict__ K, const REAL* __restrict__ P, int npv,
    REAL* V, int nslot, const int* __restrict__ ltab, const int* __restrict__ dslot, int ns, int n, int net,
    REAL* ya, REAL* yb, REAL* k1, REAL* k2, REAL* acc, long long step0, int k, double dt, int rk4,
    long long every, const int* __restrict__ rec, int n_rec, const int* __restrict__ col, int n_col,
    REAL* __restrict__ out)
{
    const int lane = (int)(threadIdx.x & 31);
    (void)nslot; (void)npv;
#if FLINT_GRID
    const int nt = (int)(gridDim.x * blockDim.x), gt = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    REAL* Vp = V;
    const int vn = n;
#else
    const int nt = (int)blockDim.x, gt = (int)threadIdx.x, i0 = (int)blockIdx.x;
#if FLINT_SHARED_V
    extern __shared__ double flint_smem[];
    REAL* Vp = reinterpret_cast<REAL*>(flint_smem);
    const int vn = 1, vi = 0;
    for (int q = gt; q < nslot; q += nt) Vp[q] = (REAL)0;
#else
    REAL* Vp = V;
    const int vn = n, vi = i0;
#endif
#endif
#if FLINT_SHARED_V == 2 && !FLINT_GRID
    // the member's states (two buffers), stage arrays and parameters after the slots; inside the loop
    // member si = 0 of sn = 1, as the slots
    REAL* Y0 = Vp + nslot;
    REAL* Y1 = Y0 + ns;
    REAL* K1 = Y1 + ns;
    REAL* K2 = K1 + ns;
    REAL* ACC = K2 + ns;
    REAL* PP = ACC + ns;
    const int sn = 1, si = 0;
    for (int q = gt; q < ns; q += nt) Y0[q] = ya[(size_t)q * n + i0];
    for (int q = gt; q < npv; q += nt) PP[q] = P[(size_t)q * n + i0];
#else
    REAL* Y0 = ya;
    REAL* Y1 = yb;
    REAL* K1 = k1;
    REAL* K2 = k2;
    REAL* ACC = acc;
    const REAL* PP = P;
#if !FLINT_GRID
    const int sn = n, si = i0;
#endif
#endif
#if FLINT_SHARED_V && !FLINT_GRID
    __syncthreads();
#endif
    const int nw = nt >> 5, gw = gt >> 5;
    REAL* y = Y0;
    REAL* yo = Y1;
    long long until = every - step0 % every;      // steps to the next sample
    size_t row = 0;
    for (int j = 0; j < k; ++j) {
        const double t0 = (double)(step0 + j) * dt;
        const REAL* kin = 0;
        REAL* kout = K1;
        for (int s = 0; s < (rk4 ? 4 : 1); ++s) {  // RK4 stages as GpuRuntime._step: (c, w) of RK4_STAGES
            const double c = rk4 ? (s == 0 ? 0.0 : (s == 3 ? 1.0 : 0.5)) : 0.0;
            const double w = rk4 ? ((s == 0 || s == 3) ? 1.0 / 6.0 : 1.0 / 3.0) : 0.0;
            const int mode = rk4 ? (s == 0 ? 1 : (s == 3 ? 3 : 2)) : 0;
            const double cdt = c * dt, t = t0 + cdt;
            for (int p = 0; p < nphase; ++p) {
                const int pw = pwarps[p];
                if (pw == 0) continue;
#if FLINT_GRID
                for (int q = gw; q < n * pw; q += nw) {
                    const int i = q / pw;
                    flint_fused_phase(p, i, q - i * pw, lane, code, index, pstart, K, PP, Vp, vn, i, y, kin, cdt, t,
                                      n, net, ltab);
                }
#else
                for (int wq = gw; wq < pw; wq += nw)
                    flint_fused_phase(p, si, wq, lane, code, index, pstart, K, PP, Vp, vn, vi, y, kin, cdt, t,
                                      sn, net, ltab);
#endif
                FLINT_SYNC();
            }
#if FLINT_GRID
            for (int q = gt; q < ns * n; q += nt) {
                const int sq = q / n, i = q - sq * n;
                flint_integrate(Vp[(size_t)dslot[sq] * vn + i], (size_t)sq * n + i, y, dt, mode, w, kout, ACC, yo);
            }
#else
            for (int sq = gt; sq < ns; sq += nt)
                flint_integrate(Vp[(size_t)dslot[sq] * vn + vi], (size_t)sq * sn + si, y, dt, mode, w, kout, ACC, yo);
#endif
            FLINT_SYNC();
            kin = kout;
            kout = kout == K1 ? K2 : K1;
        }
        REAL* tmp = y;
        y = yo;
        yo = tmp;
        if (--until == 0) {
            until = every;
#if FLINT_GRID
            for (int q = gt; q < n_rec * n; q += nt) {
                const int r = q / n, i = q - r * n, c2 = col[i];
                if (c2 >= 0) out[(row * n_rec + r) * n_col + c2] = y[(size_t)rec[r] * n + i];
            }
#else
            const int c2 = col[i0];
            if (c2 >= 0)
                for (int r = gt; r < n_rec; r += nt) out[(row * n_rec + r) * n_col + c2] = y[(size_t)rec[r] * sn + si];
#endif
            ++row;
        }
    }
#if FLINT_SHARED_V == 2 && !FLINT_GRID
    REAL* dst = (k % 2) ? yb : ya;                 // where the one-step path would have left them
    for (int q = gt; q < ns; q += nt) dst[(size_t)q * n + i0] = y[q];
#endif
}
