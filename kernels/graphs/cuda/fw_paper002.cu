// Paper 002 (Carrega & Ferreira, "A Study in CUDA Usage"): the five Floyd-Warshall versions' GPU
// kernels, V2-V5, on a dense row-major matrix (T = float or int; PRED keeps predecessors).
//
// V3-V5 share the paper's work split: a 1-D grid of the co-resident size, each thread a
// contiguous run of WORK = ceil(n^2 / threads) cells starting at totalID = global thread * WORK,
// walking j, then wrapping to (i + 1, 0).  Bounds checks are added (the paper's threads run past
// n^2 when the division has a remainder).
//
// fw_coop.cu includes this file with FW_COOP defined: the V4/V5 instantiations whose grid barrier
// is cooperative_groups::this_grid().sync() instead of the paper's flag array.
#include "fw_common.cuh"
#if defined(FW_COOP) && defined(__CUDACC__)
#include <cooperative_groups.h>
#endif

// V2, Listing 4: the whole triple loop in one thread (<<<1, 1>>>).
template <typename T, bool PRED>
__global__ void fw_v2(T* d, int* p, int n)
{
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const T v = d[(long long)i * n + k] + d[(long long)k * n + j];
                if (v < d[(long long)i * n + j]) {
                    d[(long long)i * n + j] = v;
                    if (PRED) p[(long long)i * n + j] = p[(long long)k * n + j];
                }
            }
}

// One thread's run of cells for step k (Listing 5's loop body).
template <typename T, bool PRED>
__device__ __forceinline__ void v3_cells(T* d, int* p, int n, int k, long long first, long long work)
{
    const long long total = (long long)n * n;
    if (first >= total) return;
    int i = (int)(first / n), j = (int)(first % n);
    const long long last = first + work < total ? first + work : total;
    for (long long c = first; c < last; ++c) {
        const T v = d[(long long)i * n + k] + d[(long long)k * n + j];
        if (v < d[(long long)i * n + j]) {
            d[(long long)i * n + j] = v;
            if (PRED) p[(long long)i * n + j] = p[(long long)k * n + j];
        }
        if (j + 1 < n) ++j;
        else { ++i; j = 0; }
    }
}

// The same run with D(i,k) kept in a register (Listing 7): reloaded at each new row and each k.
template <typename T, bool PRED>
__device__ __forceinline__ void v5_cells(T* d, int* p, int n, int k, long long first, long long work)
{
    const long long total = (long long)n * n;
    if (first >= total) return;
    int i = (int)(first / n), j = (int)(first % n);
    T dik = d[(long long)i * n + k];
    const long long last = first + work < total ? first + work : total;
    for (long long c = first; c < last; ++c) {
        const T v = dik + d[(long long)k * n + j];
        if (v < d[(long long)i * n + j]) {
            d[(long long)i * n + j] = v;
            if (PRED) p[(long long)i * n + j] = p[(long long)k * n + j];
        }
        if (j + 1 < n) ++j;
        else {
            i += (i + 1 < n);
            j = 0;
            dik = d[(long long)i * n + k];
        }
    }
}

// V3, Listing 5: one launch per k.
template <typename T, bool PRED>
__global__ void fw_v3(T* d, int* p, int n, int k, long long work)
{
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * work;
    v3_cells<T, PRED>(d, p, n, k, first, work);
}

// The grid-wide barrier between two k steps.  Paper 002 §III-D: one slot per block, written by
// thread 0, which then spins until every slot is set, and __syncthreads releases the block.  Two
// repairs: the block first waits for all its threads (the paper signals as soon as thread 0 is
// done), and a slot holds the generation k + 1 instead of 1 (the paper's reset to 0 at the start
// of the next k can erase a flag that a slower block has not read yet).  The fences order the
// matrix writes before the flag (release) and the flag before the next reads (acquire).
// Correct only when every block is resident at once: the host sizes the grid by the occupancy API.
template <bool COOP>
__device__ __forceinline__ void fw_grid_barrier(volatile int* flags, int gen)
{
#if defined(FW_COOP)
    if (COOP) {
        cooperative_groups::this_grid().sync();
        return;
    }
#endif
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        flags[blockIdx.x] = gen;
        int count;
        do {
            count = 0;
            for (int b = 0; b < (int)gridDim.x; ++b) count += flags[b] >= gen;
#if defined(__CUDA_HOST_EMU__)
            if (count != (int)gridDim.x) __nanosleep(0);   // host device: give the core to the blocks awaited
#endif
        } while (count != (int)gridDim.x);
        __threadfence();
    }
    __syncthreads();
}

// V4, Listing 6: the k loop inside one launch, a grid barrier after each k.
template <typename T, bool PRED, bool COOP>
__global__ void fw_v4(T* d, int* p, int n, long long work, int* flags)
{
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * work;
    for (int k = 0; k < n; ++k) {
        v3_cells<T, PRED>(d, p, n, k, first, work);
        fw_grid_barrier<COOP>(flags, k + 1);
    }
}

// V5, Listing 7: V4 with D(i,k) in a register.
template <typename T, bool PRED, bool COOP>
__global__ void fw_v5(T* d, int* p, int n, long long work, int* flags)
{
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * work;
    for (int k = 0; k < n; ++k) {
        v5_cells<T, PRED>(d, p, n, k, first, work);
        fw_grid_barrier<COOP>(flags, k + 1);
    }
}
