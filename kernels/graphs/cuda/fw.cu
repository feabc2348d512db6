// Floyd-Warshall on a dense float32 distance matrix (inf = no path, 0 on the diagonal).

// Paper 002 (V3): one launch per k, grid-stride over all n^2 cells.  Row k and column k do
// not change during step k (d[k][k] = 0), so the in-place update has no race.
extern "C" __global__ void fw_naive(float* d, int n, int k)
{
    const long long total = (long long)n * n;
    const float* rowk = d + (long long)k * n;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / n;
        const int j = (int)(idx - i * n);
        const float via = d[i * n + k] + rowk[j];
        if (via < d[idx]) d[idx] = via;
    }
}

// Blocked three-phase FW (Venkataraman et al.; paper 004 ch. 4): tiles TxT, 16x16 threads, each
// thread owns an (T/16)x(T/16) register block (rows ty+16r, columns tx+16c).  n is padded to a
// multiple of T with inf.  Shared tiles are padded by one column against bank conflicts.
#define FW_LOOP _Pragma("unroll") for (int r = 0; r < R; ++r) _Pragma("unroll") for (int c = 0; c < R; ++c)

template <int T>
__global__ void fw_phase1(float* d, int n, int K)
{
    constexpr int R = T / 16;
    __shared__ float t[T][T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, b = K * T;
    FW_LOOP t[ty + 16 * r][tx + 16 * c] = d[(long long)(b + ty + 16 * r) * n + b + tx + 16 * c];
    __syncthreads();
    for (int k = 0; k < T; ++k) {
        FW_LOOP {
            const float v = t[ty + 16 * r][k] + t[k][tx + 16 * c];
            if (v < t[ty + 16 * r][tx + 16 * c]) t[ty + 16 * r][tx + 16 * c] = v;
        }
        __syncthreads();
    }
    FW_LOOP d[(long long)(b + ty + 16 * r) * n + b + tx + 16 * c] = t[ty + 16 * r][tx + 16 * c];
}

// blockIdx.y == 0: pivot-row tile (K, J = blockIdx.x); == 1: pivot-column tile (I = blockIdx.x, K).
template <int T>
__global__ void fw_phase2(float* d, int n, int K)
{
    constexpr int R = T / 16;
    if ((int)blockIdx.x == K) return;
    __shared__ float piv[T][T + 1];
    __shared__ float cur[T][T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, b = K * T;
    const bool row = blockIdx.y == 0;
    const int i0 = row ? b : blockIdx.x * T, j0 = row ? blockIdx.x * T : b;
    FW_LOOP {
        piv[ty + 16 * r][tx + 16 * c] = d[(long long)(b + ty + 16 * r) * n + b + tx + 16 * c];
        cur[ty + 16 * r][tx + 16 * c] = d[(long long)(i0 + ty + 16 * r) * n + j0 + tx + 16 * c];
    }
    __syncthreads();
    for (int k = 0; k < T; ++k) {
        FW_LOOP {
            const int i = ty + 16 * r, j = tx + 16 * c;
            const float v = row ? piv[i][k] + cur[k][j] : cur[i][k] + piv[k][j];
            if (v < cur[i][j]) cur[i][j] = v;
        }
        __syncthreads();
    }
    FW_LOOP d[(long long)(i0 + ty + 16 * r) * n + j0 + tx + 16 * c] = cur[ty + 16 * r][tx + 16 * c];
}

template <int T>
__global__ void fw_phase3(float* d, int n, int K)
{
    constexpr int R = T / 16;
    const int I = blockIdx.y, J = blockIdx.x;
    if (I == K || J == K) return;
    __shared__ float col[T][T + 1];   // tile (I, K)
    __shared__ float rowt[T][T + 1];  // tile (K, J)
    const int tx = threadIdx.x, ty = threadIdx.y, b = K * T;
    float acc[R][R];
    FW_LOOP {
        col[ty + 16 * r][tx + 16 * c] = d[(long long)(I * T + ty + 16 * r) * n + b + tx + 16 * c];
        rowt[ty + 16 * r][tx + 16 * c] = d[(long long)(b + ty + 16 * r) * n + J * T + tx + 16 * c];
        acc[r][c] = d[(long long)(I * T + ty + 16 * r) * n + J * T + tx + 16 * c];
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < T; ++k) {
        float a[R], bb[R];
#pragma unroll
        for (int r = 0; r < R; ++r) { a[r] = col[ty + 16 * r][k]; bb[r] = rowt[k][tx + 16 * r]; }
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int c = 0; c < R; ++c) acc[r][c] = fminf(acc[r][c], a[r] + bb[c]);
    }
    FW_LOOP d[(long long)(I * T + ty + 16 * r) * n + J * T + tx + 16 * c] = acc[r][c];
}
