// Floyd-Warshall on a dense distance matrix (row-major, "no path" = FwInf, 0 on the diagonal):
// the plain algorithm (paper 004 Fig. 4.1) and the iterative three-phase blocked algorithm
// (Venkataraman et al.; paper 004 Figs. 4.2-4.3).  T = float or int; PRED keeps predecessors.
#include "fw_common.cuh"

// Plain FW, one launch per k, grid-stride over all n^2 cells (coalesced: neighbouring threads
// take neighbouring cells).  Row k and column k do not change during step k (d[k][k] >= 0), so
// the in-place update has no race.
template <typename T, bool PRED>
__global__ void fw_naive(T* d, int* p, int n, int k)
{
    const long long total = (long long)n * n;
    const T* rowk = d + (long long)k * n;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / n;
        const int j = (int)(idx - i * n);
        const T via = d[i * n + k] + rowk[j];
        if (via < d[idx]) {
            d[idx] = via;
            if (PRED) p[idx] = p[(long long)k * n + j];
        }
    }
}

// Blocked three-phase FW: tiles TxT, 16x16 threads, each thread owns an (T/16)x(T/16) block of
// the tile (rows ty+16r, columns tx+16c).  n is padded to a multiple of T with "no path".
// Shared tiles are padded by one column against bank conflicts.
#define FW_LOOP _Pragma("unroll") for (int r = 0; r < R; ++r) _Pragma("unroll") for (int c = 0; c < R; ++c)

// Phase 1: the pivot tile (K, K), plain FW inside shared memory.
template <typename T, bool PRED, int TT>
__global__ void fw_phase1(T* d, int* p, int n, int K)
{
    constexpr int R = TT / 16;
    __shared__ T t[TT][TT + 1];
    __shared__ int pt[PRED ? TT : 1][PRED ? TT + 1 : 1];
    const int tx = threadIdx.x, ty = threadIdx.y, b = K * TT;
    FW_LOOP {
        const long long g = (long long)(b + ty + 16 * r) * n + b + tx + 16 * c;
        t[ty + 16 * r][tx + 16 * c] = d[g];
        if (PRED) pt[ty + 16 * r][tx + 16 * c] = p[g];
    }
    __syncthreads();
    for (int k = 0; k < TT; ++k) {
        FW_LOOP {
            const int i = ty + 16 * r, j = tx + 16 * c;
            const T v = t[i][k] + t[k][j];
            if (v < t[i][j]) {
                t[i][j] = v;
                if (PRED) pt[i][j] = pt[k][j];
            }
        }
        __syncthreads();
    }
    FW_LOOP {
        const long long g = (long long)(b + ty + 16 * r) * n + b + tx + 16 * c;
        d[g] = t[ty + 16 * r][tx + 16 * c];
        if (PRED) p[g] = pt[ty + 16 * r][tx + 16 * c];
    }
}

// Phase 2: blockIdx.y == 0 the pivot-row tile (K, J = blockIdx.x), == 1 the pivot-column tile
// (I = blockIdx.x, K).  Row tiles take predecessors from their own row k, column tiles from the
// pivot tile's row k (read from global memory: the pivot tile is final in this phase).
template <typename T, bool PRED, int TT>
__global__ void fw_phase2(T* d, int* p, int n, int K)
{
    constexpr int R = TT / 16;
    if ((int)blockIdx.x == K) return;
    __shared__ T piv[TT][TT + 1];
    __shared__ T cur[TT][TT + 1];
    __shared__ int pc[PRED ? TT : 1][PRED ? TT + 1 : 1];
    const int tx = threadIdx.x, ty = threadIdx.y, b = K * TT;
    const bool row = blockIdx.y == 0;
    const int i0 = row ? b : blockIdx.x * TT, j0 = row ? blockIdx.x * TT : b;
    FW_LOOP {
        const int i = ty + 16 * r, j = tx + 16 * c;
        piv[i][j] = d[(long long)(b + i) * n + b + j];
        cur[i][j] = d[(long long)(i0 + i) * n + j0 + j];
        if (PRED) pc[i][j] = p[(long long)(i0 + i) * n + j0 + j];
    }
    __syncthreads();
    for (int k = 0; k < TT; ++k) {
        FW_LOOP {
            const int i = ty + 16 * r, j = tx + 16 * c;
            const T v = row ? piv[i][k] + cur[k][j] : cur[i][k] + piv[k][j];
            if (v < cur[i][j]) {
                cur[i][j] = v;
                if (PRED) pc[i][j] = row ? pc[k][j] : p[(long long)(b + k) * n + b + j];
            }
        }
        __syncthreads();
    }
    FW_LOOP {
        const int i = ty + 16 * r, j = tx + 16 * c;
        d[(long long)(i0 + i) * n + j0 + j] = cur[i][j];
        if (PRED) p[(long long)(i0 + i) * n + j0 + j] = pc[i][j];
    }
}

// Phase 3: every other tile (I, J), a min-plus product of the pivot column and row tiles.
template <typename T, bool PRED, int TT>
__global__ void fw_phase3(T* d, int* p, int n, int K)
{
    constexpr int R = TT / 16;
    const int I = blockIdx.y, J = blockIdx.x;
    if (I == K || J == K) return;
    __shared__ T col[TT][TT + 1];   // tile (I, K)
    __shared__ T rowt[TT][TT + 1];  // tile (K, J)
    __shared__ int prow[PRED ? TT : 1][PRED ? TT + 1 : 1];
    const int tx = threadIdx.x, ty = threadIdx.y, b = K * TT;
    T acc[R][R];
    int pacc[PRED ? R : 1][PRED ? R : 1];
    FW_LOOP {
        const int i = ty + 16 * r, j = tx + 16 * c;
        col[i][j] = d[(long long)(I * TT + i) * n + b + j];
        rowt[i][j] = d[(long long)(b + i) * n + J * TT + j];
        acc[r][c] = d[(long long)(I * TT + i) * n + J * TT + j];
        if (PRED) {
            prow[i][j] = p[(long long)(b + i) * n + J * TT + j];
            pacc[PRED ? r : 0][PRED ? c : 0] = p[(long long)(I * TT + i) * n + J * TT + j];
        }
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < TT; ++k) {
        T a[R], bb[R];
#pragma unroll
        for (int r = 0; r < R; ++r) { a[r] = col[ty + 16 * r][k]; bb[r] = rowt[k][tx + 16 * r]; }
        FW_LOOP {
            if (PRED) mp_relax_pred(acc[r][c], pacc[PRED ? r : 0][PRED ? c : 0], a[r], bb[c], prow[k][tx + 16 * c]);
            else acc[r][c] = MinPlus<T, 0>::relax(acc[r][c], a[r], bb[c]);
        }
    }
    FW_LOOP {
        const long long g = (long long)(I * TT + ty + 16 * r) * n + J * TT + tx + 16 * c;
        d[g] = acc[r][c];
        if (PRED) p[g] = pacc[PRED ? r : 0][PRED ? c : 0];
    }
}
