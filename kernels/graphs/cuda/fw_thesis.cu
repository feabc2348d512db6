// Paper 004 (Okuyama 2013) ch. 4: the two iterative blocked FW designs of §4.3 on a dense
// row-major matrix padded to a multiple of 64 (T = float or int, OP = plain / DPX min-plus,
// PRED keeps predecessors).
//
//  * fw_th_pivot / fw_th_rowcol (§4.3.1, Fig. 4.7): one block of t*h threads per tile, thread
//    <i, jx> keeps the t/h elements A[i][jx + h*e] in registers; before each k the k-th row and
//    column go to shared memory (2t elements), two __syncthreads per k.  The pivot-row/column
//    kernel takes 2(n/t - 1) blocks (blockIdx.y: 0 row tiles, 1 column tiles).
//  * fw_mm_nonpivot (§4.3.2, Figs. 4.8-4.9): Volkov's GEMM with min-plus.  16 x 64 sub-blocks,
//    64 threads per block, thread x owns the 16 elements of column x in registers; the 16 x t
//    strip B' of the pivot-column tiles goes to shared memory whole (one __syncthreads per
//    kernel); each element of the t x 64 pivot-row strip C' is loaded by the one thread that
//    needs it; a block takes l sub-blocks along the row (B' reused); no blocks for the
//    pivot-row band, and threads in pivot-column tiles skip the store.  U = ceil(n/64/l) *
//    (n/16 - t/16) blocks (Eq. 4.10).
//  * fw_2l_nonpivot (§4.3.3, Fig. 4.10): two-level blocking, t' x t' sub-tiles, t*t' threads,
//    t/t' elements per thread; per k1 chunk t' columns of T_IK (transposed) and t' rows of T_KJ
//    go to shared memory (2 t t' elements); read-only cache loads (__ldg) stand in for the
//    thesis's texture fetches.  l tiles per block along the row.
#include "fw_common.cuh"

// MODE 0: the pivot tile; 1: a pivot-row tile T_KJ = FWI(T_KJ, T_KK, T_KJ); 2: a pivot-column
// tile T_IK = FWI(T_IK, T_IK, T_KK).  (i0, j0): the tile's corner, b = K * t.
template <typename T, bool PRED, int TT, int H, int MODE>
__device__ __forceinline__ void thesis_tile(T* d, int* p, int n, int i0, int j0, int b)
{
    constexpr int E = TT / H;
    __shared__ T srow[TT];
    __shared__ T scol[TT];
    __shared__ int sprow[PRED ? TT : 1];
    const int jx = threadIdx.x, i = threadIdx.y;
    T a[E];
    int pa[PRED ? E : 1];
#pragma unroll
    for (int e = 0; e < E; ++e) {
        const long long g = (long long)(i0 + i) * n + j0 + jx + H * e;
        a[e] = d[g];
        if (PRED) pa[PRED ? e : 0] = p[g];
    }
    for (int k = 0; k < TT; ++k) {
        if (MODE != 2 && i == k) {                 // the tile's own row k
#pragma unroll
            for (int e = 0; e < E; ++e) {
                srow[jx + H * e] = a[e];
                if (PRED) sprow[PRED ? jx + H * e : 0] = pa[PRED ? e : 0];
            }
        }
        if (MODE == 2 && i == 0) {                 // the pivot tile's row k
#pragma unroll
            for (int e = 0; e < E; ++e) {
                const long long g = (long long)(b + k) * n + b + jx + H * e;
                srow[jx + H * e] = d[g];
                if (PRED) sprow[PRED ? jx + H * e : 0] = p[g];
            }
        }
        if (MODE != 1) {                           // the tile's own column k
            if (jx == k % H) {
#pragma unroll
                for (int e = 0; e < E; ++e)
                    if (e == k / H) scol[i] = a[e];
            }
        } else if (jx == 0) {                      // the pivot tile's column k
            scol[i] = d[(long long)(b + i) * n + b + k];
        }
        __syncthreads();
        const T ci = scol[i];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            if (PRED) mp_relax_pred(a[e], pa[PRED ? e : 0], ci, srow[jx + H * e], sprow[PRED ? jx + H * e : 0]);
            else a[e] = MinPlus<T, 0>::relax(a[e], ci, srow[jx + H * e]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int e = 0; e < E; ++e) {
        const long long g = (long long)(i0 + i) * n + j0 + jx + H * e;
        d[g] = a[e];
        if (PRED) p[g] = pa[PRED ? e : 0];
    }
}

// The pivot kernel: one block of (h, t) threads on tile (K, K).  Also the recursive BFW's base
// case (§4.5: "we use the pivot kernel ... with t_R = 32 and t_R = 64"): corner (b, b).
template <typename T, bool PRED, int TT, int H>
__global__ void fw_th_pivot(T* d, int* p, int n, int b)
{
    thesis_tile<T, PRED, TT, H, 0>(d, p, n, b, b, b);
}

template <typename T, bool PRED, int TT, int H>
__global__ void fw_th_rowcol(T* d, int* p, int n, int K)
{
    const int b = K * TT, t = blockIdx.x;
    if (t == K) return;
    if (blockIdx.y == 0) thesis_tile<T, PRED, TT, H, 1>(d, p, n, b, t * TT, b);
    else thesis_tile<T, PRED, TT, H, 2>(d, p, n, t * TT, b, b);
}

template <typename T, int OP, bool PRED, int TT>
__global__ void __launch_bounds__(64) fw_mm_nonpivot(T* d, int* p, int n, int K, int l)
{
    __shared__ T bs[16][TT];
    const int tid = threadIdx.x, b = K * TT;
    int rb = blockIdx.y;
    if (rb >= b / 16) rb += TT / 16;               // no blocks on the pivot-row band
    const int r0 = rb * 16;
    for (int e = tid; e < 16 * TT; e += 64)
        bs[e / TT][e % TT] = d[(long long)(r0 + e / TT) * n + b + e % TT];
    __syncthreads();
    for (int s = 0; s < l; ++s) {
        const int col = (blockIdx.x * l + s) * 64 + tid;
        if (col >= n) break;                       // n is a multiple of 64: uniform per block
        T acc[16];
        int pacc[PRED ? 16 : 1];
#pragma unroll
        for (int r = 0; r < 16; ++r) {
            acc[r] = d[(long long)(r0 + r) * n + col];
            if (PRED) pacc[PRED ? r : 0] = p[(long long)(r0 + r) * n + col];
        }
#pragma unroll 8
        for (int k = 0; k < TT; ++k) {
            const T c = d[(long long)(b + k) * n + col];
            const int pc = PRED ? p[(long long)(b + k) * n + col] : 0;
#pragma unroll
            for (int r = 0; r < 16; ++r) {
                if (PRED) mp_relax_pred(acc[r], pacc[PRED ? r : 0], bs[r][k], c, pc);
                else acc[r] = MinPlus<T, OP>::relax(acc[r], bs[r][k], c);
            }
        }
        if (col < b || col >= b + TT) {            // pivot-column tiles: computed, not stored
#pragma unroll
            for (int r = 0; r < 16; ++r) {
                d[(long long)(r0 + r) * n + col] = acc[r];
                if (PRED) p[(long long)(r0 + r) * n + col] = pacc[PRED ? r : 0];
            }
        }
    }
}

template <typename T, int OP, bool PRED, int TT, int TP>
__global__ void fw_2l_nonpivot(T* d, int* p, int n, int K, int l)
{
    constexpr int E = TT / TP;
    __shared__ T bt[TP][TT];                       // t' columns of T_IK, transposed
    __shared__ T cs[TP][TT];                       // t' rows of T_KJ
    __shared__ int pcs[PRED ? TP : 1][PRED ? TT : 1];
    const int I = blockIdx.y, b = K * TT;
    if (I == K) return;
    const int tid = threadIdx.x, j = tid % TT, i1 = tid / TT;
    for (int s = 0; s < l; ++s) {
        const int J = blockIdx.x * l + s;
        if (J * TT >= n) break;
        if (J == K) continue;
        T acc[E];
        int pacc[PRED ? E : 1];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const long long g = (long long)(I * TT + e * TP + i1) * n + J * TT + j;
            acc[e] = d[g];
            if (PRED) pacc[PRED ? e : 0] = p[g];
        }
        for (int k1 = 0; k1 < TT; k1 += TP) {
            bt[i1][j] = __ldg(d + (long long)(I * TT + j) * n + b + k1 + i1);
            cs[i1][j] = __ldg(d + (long long)(b + k1 + i1) * n + J * TT + j);
            if (PRED) pcs[PRED ? i1 : 0][PRED ? j : 0] = __ldg(p + (long long)(b + k1 + i1) * n + J * TT + j);
            __syncthreads();
#pragma unroll
            for (int k2 = 0; k2 < TP; ++k2) {
                const T c = cs[k2][j];
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    if (PRED) mp_relax_pred(acc[e], pacc[PRED ? e : 0], bt[k2][e * TP + i1], c, pcs[PRED ? k2 : 0][PRED ? j : 0]);
                    else acc[e] = MinPlus<T, OP>::relax(acc[e], bt[k2][e * TP + i1], c);
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const long long g = (long long)(I * TT + e * TP + i1) * n + J * TT + j;
            d[g] = acc[e];
            if (PRED) p[g] = pacc[PRED ? e : 0];
        }
    }
}
