// Register-tiled min-plus products and the fast blocked Floyd-Warshall built on them.
//
// mp_tile: one thread block computes a BM x BN tile of
//     Cout = min(Cin, A (x) B),   (A (x) B)[i][j] = min_k A[i][k] + B[k][j],
// for A: M x K, B: K x N (row-major, leading dimensions lda / ldb / ldc*).  Each thread keeps a
// TM x TN block of the tile in registers (rows in TM/4 groups of 4 spaced BM/(TM/4) apart, the
// same for columns, so its operands are 16-byte shared-memory reads); K runs in BK-deep chunks,
// A stored transposed in shared memory, the next chunk fetched into registers while the current
// one is consumed (double buffer, one __syncthreads per chunk).  Out-of-range rows, columns and
// k read as "no path"; stores skip rows in [sr0, sr1) or [sr2, sr3) and columns in [sc0, sc1) or
// [sc2, sc3) (the bands that other blocks, or kernels running beside this one, read or write).  M, N, K, the leading dimensions and the band edges
// must be multiples of 4.  PRED: predecessors of B's rows (PB, same layout as B) follow the
// strict improvements.
//
// Users: the recursive blocked FW (paper 004 §4.2.2, Buluc et al.'s R-Kleene with min-plus
// products), the fast three-phase FW below (phases 2 and 3 as min-plus products: the pivot tile
// is closed first, so the panel updates need no k order), and the ceiling benchmark (a plain
// N x N x N min-plus product: FW's update count without its dependencies).
#include "fw_common.cuh"

// The shared memory of one mp_tile: its caller declares it (__shared__), so that a kernel running
// tiles of several shapes (the persistent FW, fw_persist.cu) can overlay them in a union.
template <typename T, bool PRED, int BM, int BN, int BK>
struct __align__(16) MpShared {
    T As[2][BK][BM];
    T Bs[2][BK][BN];
    int Ps[PRED ? 2 : 1][PRED ? BK : 1][PRED ? BN : 1];
};

template <typename T, int OP, bool PRED, int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void mp_tile(MpShared<T, PRED, BM, BN, BK>& sm,
                                        const T* Cin, T* Cout, const int* PCin, int* PCout, int ldci, int ldco,
                                        const T* A, int lda, const T* B, const int* PB, int ldb,
                                        int M, int N, int K, int row0, int col0,
                                        int sr0, int sr1, int sr2, int sr3, int sc0, int sc1, int sc2, int sc3)
{
    typedef typename Vec4<T>::type V;
    constexpr int TX = BN / TN, TY = BM / TM, NT = TX * TY;
    constexpr int GM = TM / 4, GN = TN / 4;             // 4-wide groups per thread
    constexpr int SM_ = BM / GM, SN = BN / GN;          // spacing of the groups
    constexpr int AV = BM * BK / 4 / NT, BV = BK * BN / 4 / NT;   // float4 loads per thread per chunk
    static_assert(AV >= 1 && BV >= 1 && BM * BK % (4 * NT) == 0 && BK * BN % (4 * NT) == 0, "tile shape");
    auto& As = sm.As;
    auto& Bs = sm.Bs;
    auto& Ps = sm.Ps;
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    const T INF = FwInf<T>::get();

    T acc[TM][TN];
    int pacc[PRED ? TM : 1][PRED ? TN : 1];
#pragma unroll
    for (int g = 0; g < GM; ++g)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int i = row0 + g * SM_ + ty * 4 + r;
#pragma unroll
            for (int h = 0; h < GN; ++h) {
                const int j = col0 + h * SN + tx * 4;
                V v;
                v.x = v.y = v.z = v.w = INF;
                if (i < M && j < N) v = *reinterpret_cast<const V*>(Cin + (long long)i * ldci + j);
                acc[g * 4 + r][h * 4 + 0] = v.x; acc[g * 4 + r][h * 4 + 1] = v.y;
                acc[g * 4 + r][h * 4 + 2] = v.z; acc[g * 4 + r][h * 4 + 3] = v.w;
                if (PRED) {
                    int4 q = make_int4(-1, -1, -1, -1);
                    if (i < M && j < N) q = *reinterpret_cast<const int4*>(PCin + (long long)i * ldci + j);
                    pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 0 : 0] = q.x;
                    pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 1 : 0] = q.y;
                    pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 2 : 0] = q.z;
                    pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 3 : 0] = q.w;
                }
            }
        }

    V ra[AV], rb[BV];
    int4 rp[PRED ? BV : 1];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int u = 0; u < AV; ++u) {
            const int f = tid + u * NT, m = f / (BK / 4), kq = (f % (BK / 4)) * 4;
            ra[u].x = ra[u].y = ra[u].z = ra[u].w = INF;
            if (row0 + m < M && k0 + kq < K) ra[u] = *reinterpret_cast<const V*>(A + (long long)(row0 + m) * lda + k0 + kq);
        }
#pragma unroll
        for (int u = 0; u < BV; ++u) {
            const int f = tid + u * NT, kk = f / (BN / 4), nq = (f % (BN / 4)) * 4;
            rb[u].x = rb[u].y = rb[u].z = rb[u].w = INF;
            const bool in = k0 + kk < K && col0 + nq < N;
            if (in) rb[u] = *reinterpret_cast<const V*>(B + (long long)(k0 + kk) * ldb + col0 + nq);
            if (PRED) {
                rp[PRED ? u : 0] = make_int4(-1, -1, -1, -1);
                if (in) rp[PRED ? u : 0] = *reinterpret_cast<const int4*>(PB + (long long)(k0 + kk) * ldb + col0 + nq);
            }
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int u = 0; u < AV; ++u) {
            const int f = tid + u * NT, m = f / (BK / 4), kq = (f % (BK / 4)) * 4;
            As[buf][kq + 0][m] = ra[u].x; As[buf][kq + 1][m] = ra[u].y;
            As[buf][kq + 2][m] = ra[u].z; As[buf][kq + 3][m] = ra[u].w;
        }
#pragma unroll
        for (int u = 0; u < BV; ++u) {
            const int f = tid + u * NT, kk = f / (BN / 4), nq = (f % (BN / 4)) * 4;
            *reinterpret_cast<V*>(&Bs[buf][kk][nq]) = rb[u];
            if (PRED) *reinterpret_cast<int4*>(&Ps[PRED ? buf : 0][PRED ? kk : 0][PRED ? nq : 0]) = rp[PRED ? u : 0];
        }
    };

    fetch(0);
    stash(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more) fetch(k0 + BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            T a[TM], b[TN];
            int pb[PRED ? TN : 1];
#pragma unroll
            for (int g = 0; g < GM; ++g) {
                const V v = *reinterpret_cast<const V*>(&As[buf][kk][g * SM_ + ty * 4]);
                a[g * 4 + 0] = v.x; a[g * 4 + 1] = v.y; a[g * 4 + 2] = v.z; a[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int h = 0; h < GN; ++h) {
                const V v = *reinterpret_cast<const V*>(&Bs[buf][kk][h * SN + tx * 4]);
                b[h * 4 + 0] = v.x; b[h * 4 + 1] = v.y; b[h * 4 + 2] = v.z; b[h * 4 + 3] = v.w;
                if (PRED) {
                    const int4 q = *reinterpret_cast<const int4*>(&Ps[PRED ? buf : 0][PRED ? kk : 0][PRED ? h * SN + tx * 4 : 0]);
                    pb[PRED ? h * 4 + 0 : 0] = q.x; pb[PRED ? h * 4 + 1 : 0] = q.y;
                    pb[PRED ? h * 4 + 2 : 0] = q.z; pb[PRED ? h * 4 + 3 : 0] = q.w;
                }
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    if (PRED) mp_relax_pred(acc[i][j], pacc[PRED ? i : 0][PRED ? j : 0], a[i], b[j], pb[PRED ? j : 0]);
                    else acc[i][j] = MinPlus<T, OP>::relax(acc[i][j], a[i], b[j]);
                }
        }
        if (more) stash(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }

#pragma unroll
    for (int g = 0; g < GM; ++g)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int i = row0 + g * SM_ + ty * 4 + r;
            if (i >= M || (i >= sr0 && i < sr1) || (i >= sr2 && i < sr3)) continue;
#pragma unroll
            for (int h = 0; h < GN; ++h) {
                const int j = col0 + h * SN + tx * 4;
                if (j >= N || (j >= sc0 && j < sc1) || (j >= sc2 && j < sc3)) continue;
                V v;
                v.x = acc[g * 4 + r][h * 4 + 0]; v.y = acc[g * 4 + r][h * 4 + 1];
                v.z = acc[g * 4 + r][h * 4 + 2]; v.w = acc[g * 4 + r][h * 4 + 3];
                *reinterpret_cast<V*>(Cout + (long long)i * ldco + j) = v;
                if (PRED)
                    *reinterpret_cast<int4*>(PCout + (long long)i * ldco + j) = make_int4(
                        pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 0 : 0], pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 1 : 0],
                        pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 2 : 0], pacc[PRED ? g * 4 + r : 0][PRED ? h * 4 + 3 : 0]);
            }
        }
}

// Cout = min(Cin, A (x) B) over the whole M x N output; grid (ceil(N/BN), ceil(M/BM)); MB: the
// blocks per SM the register allocation must allow (__launch_bounds__).
template <typename T, int OP, bool PRED, int BM, int BN, int BK, int TM, int TN, int MB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), MB)
mp_gemm(const T* Cin, T* Cout, const int* PCin, int* PCout, int ldci, int ldco,
        const T* A, int lda, const T* B, const int* PB, int ldb, int M, int N, int K,
        int sr0, int sr1, int sr2, int sr3, int sc0, int sc1, int sc2, int sc3)
{
    __shared__ MpShared<T, PRED, BM, BN, BK> sm;
    mp_tile<T, OP, PRED, BM, BN, BK, TM, TN>(sm, Cin, Cout, PCin, PCout, ldci, ldco, A, lda, B, PB, ldb, M, N, K,
                                              blockIdx.y * BM, blockIdx.x * BN, sr0, sr1, sr2, sr3,
                                              sc0, sc1, sc2, sc3);
}

// Fast FW, phase 1: close the TT x TT pivot tile at corner (b, b) with plain FW, one block of
// (TT/4)^2 threads, each holding a 4 x 4 block in registers; row k and column k pass through
// shared memory, double-buffered by the parity of k (one __syncthreads per k).
template <typename T, bool PRED, int TT, int R = 4>
__device__ __forceinline__ void fw_fast_close(T* d, int* p, int n, int b)
{
    // (TT/R)^2 threads, each holding an R x R block (R = 4 for the fw_fast_closure kernel; the
    // persistent kernel closes a 128 tile with 256 threads, R = 8); same updates in the same k order
    constexpr int TX = TT / R;
    __shared__ T srow[2][TT];
    __shared__ T scol[2][TT];
    __shared__ int sprow[PRED ? 2 : 1][PRED ? TT : 1];
    const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
    T a[R][R];
    int pa[PRED ? R : 1][PRED ? R : 1];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < R; ++c) {
            const long long g = (long long)(b + ty * R + r) * n + b + tx * R + c;
            a[r][c] = d[g];
            if (PRED) pa[PRED ? r : 0][PRED ? c : 0] = p[g];
        }
    for (int k = 0; k < TT; ++k) {
        const int s = k & 1, q = k % R;
        if (ty == k / R) {                        // this thread holds row k: publish it
#pragma unroll
            for (int c = 0; c < R; ++c) {
                T v = a[0][c];
                int pv = pa[0][PRED ? c : 0];
#pragma unroll
                for (int r = 1; r < R; ++r)
                    if (q == r) {
                        v = a[r][c];
                        if (PRED) pv = pa[PRED ? r : 0][PRED ? c : 0];
                    }
                srow[s][tx * R + c] = v;
                if (PRED) sprow[PRED ? s : 0][PRED ? tx * R + c : 0] = pv;
            }
        }
        if (tx == k / R) {                        // this thread holds column k
#pragma unroll
            for (int r = 0; r < R; ++r) {
                T v = a[r][0];
#pragma unroll
                for (int c = 1; c < R; ++c)
                    if (q == c) v = a[r][c];
                scol[s][ty * R + r] = v;
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const T ci = scol[s][ty * R + r];
#pragma unroll
            for (int c = 0; c < R; ++c) {
                if (PRED) mp_relax_pred(a[r][c], pa[PRED ? r : 0][PRED ? c : 0], ci, srow[s][tx * R + c],
                                        sprow[PRED ? s : 0][PRED ? tx * R + c : 0]);
                else a[r][c] = MinPlus<T, 0>::relax(a[r][c], ci, srow[s][tx * R + c]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < R; ++c) {
            const long long g = (long long)(b + ty * R + r) * n + b + tx * R + c;
            d[g] = a[r][c];
            if (PRED) p[g] = pa[PRED ? r : 0][PRED ? c : 0];
        }
}

template <typename T, bool PRED, int TT>
__global__ void __launch_bounds__((TT / 4) * (TT / 4)) fw_fast_closure(T* d, int* p, int n, int b)
{
    fw_fast_close<T, PRED, TT>(d, p, n, b);
}

// Fast FW, phase 2: both panels of band [b, b + TT) as min-plus products with the closed pivot
// tile P: blockIdx.y == 0 the row panel R <- P (x) R (block x: columns x*TT ...), == 1 the column
// panel C <- C (x) P (block x: rows x*TT ...).  A block owns all TT rows (columns) of its panel
// slice, so the operand it reads from its own panel is in shared memory before it stores; the
// pivot tile itself is not stored (every block reads it).
// One TT-wide slice of a panel: side 0 the row panel's columns x*TT ..., side 1 the column
// panel's rows x*TT ...
template <typename T, int OP, bool PRED, int TT, int TM>
__device__ __forceinline__ void fw_fast_panel(MpShared<T, PRED, TT, TT, 16>& sm, T* d, int* p, int n, int b,
                                              int side, int x)
{
    const T* P = d + (long long)b * n + b;
    if (side == 0) {
        T* R = d + (long long)b * n;
        int* PR = p ? p + (long long)b * n : p;
        mp_tile<T, OP, PRED, TT, TT, 16, TM, TM>(sm, R, R, PR, PR, n, n, P, n, R, PR, n, TT, n, TT,
                                                 0, x * TT, 0, 0, 0, 0, b, b + TT, 0, 0);
    } else {
        T* C = d + b;
        int* PC = p ? p + b : p;
        const int* PP = p ? p + (long long)b * n + b : p;
        mp_tile<T, OP, PRED, TT, TT, 16, TM, TM>(sm, C, C, PC, PC, n, n, C, n, P, PP, n, n, TT, TT,
                                                 x * TT, 0, b, b + TT, 0, 0, 0, 0, 0, 0);
    }
}

template <typename T, int OP, bool PRED, int TT, int TM>
__global__ void __launch_bounds__((TT / TM) * (TT / TM))
fw_fast_panels(T* d, int* p, int n, int b)
{
    __shared__ MpShared<T, PRED, TT, TT, 16> sm;
    fw_fast_panel<T, OP, PRED, TT, TM>(sm, d, p, n, b, blockIdx.y, blockIdx.x);
}
