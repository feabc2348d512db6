// fw-fast as ONE persistent cooperative kernel (issue 38): the same three-phase blocked FW as the
// launch sequence of fw_gpu.run_fast (pivot tile TT), with the same arithmetic per element, so the
// result is bit-identical to fw-fast's — but no launch per phase, and the one-block pivot closure
// off the critical path (look-ahead inside the kernel).
//
// The grid is every block that can be resident (cooperative launch, 256 threads a block).  Before
// the k loop: block 0 closes pivot tile 0, grid.sync(), all blocks compute the panels of band 0,
// grid.sync().  Then one round per pivot band kb = s * TT (next band nb = kb + TT), with one
// grid.sync() at its end.  The round's work is a queue of items taken by atomicAdd on a per-round
// counter (sync[3 s]):
//   1. band items: the TT x TT tiles of band nb's rows and columns (outside bands kb and nb)
//      updated by pivot band kb — D <- min(D, D[:, kb band] (x) D[kb band, :]), a thin mp_tile;
//      each finished one increments sync[3 s + 1];
//   2. product items: every BM x BN tile of the non-pivot update of band kb, stores skipping the
//      rows and columns of bands kb and nb (the bands are updated by items 1 and 3);
//   3. panel items of band nb: the row and column panel slices R <- P (x) R, C <- C (x) P with the
//      closed pivot P of band nb.  They wait until block 0 has set sync[3 s + 2] (pivot closed) and
//      every band item is done (their slices were updated by the band items).
// Block 0 first updates the pivot tile (nb, nb) by band kb, closes it (fw_fast_close), sets the flag,
// then joins the queue: the closure runs beside the product instead of before it.  Items 3 of
// round s only write bands nb (rows and columns), which the product items of round s neither store
// nor use for a stored output (a product tile reads its own C, D[rows, kb band] and D[kb band, cols];
// where such a value is in band nb the output it feeds is in band nb too, and not stored).  Ordering:
// a writer block stores, __syncthreads, thread 0 __threadfence + atomicAdd; a waiting block's thread 0
// sees the count (volatile load), __threadfence, __syncthreads, then loads (paper 002's flag-barrier
// pattern).  Per element the updates are those of run_fast in the same k order: the same result bit
// for bit (float32 too).
//
// TT = 64 or 128 (a 128 pivot closed by 256 threads, 8 x 8 each: half the rounds, hence half the
// passes over the matrix, the longer closure hidden all the same).  Needs n a multiple of 128 (of TT,
// BM and BN); sync: 3 * n / TT zeroed ints.
#include "fw_gemm.cu"
#if defined(__CUDACC__)
#include <cooperative_groups.h>
#endif

template <typename T, bool PRED, int BM, int BN, int BK, int TT>
union FwPersistShared {
    MpShared<T, PRED, BM, BN, BK> big;
    MpShared<T, PRED, TT, TT, 16> thin;
};

__device__ __forceinline__ void fw_persist_grid_sync()
{
    cooperative_groups::this_grid().sync();
}

// wait (thread 0 spins, the block follows) until *flag != 0 and *count >= want
__device__ __forceinline__ void fw_persist_wait(int* flag, int* count, int want)
{
    if (threadIdx.x == 0) {
        while (*(volatile int*)flag == 0 || *(volatile int*)count < want) {
#if defined(__CUDA_HOST_EMU__)
            __nanosleep(0);
#endif
        }
        __threadfence();
    }
    __syncthreads();
}

// after a block's global stores: make them visible, then count (or flag) them
__device__ __forceinline__ void fw_persist_signal(int* where)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(where, 1);
    }
}

template <typename T, int OP, bool PRED, int TT, int BM, int BN, int BK, int TM, int TN, int MB>
__global__ void __launch_bounds__(256, MB) fw_persist(T* d, int* p, int n, int* sync)
{
    constexpr int TMT = TT / 16;                                // thin tiles, panels and closure: 16 x 16 threads
    static_assert(TT == 64 || TT == 128, "pivot tile 64 or 128");
    static_assert((BM / TM) * (BN / TN) == 256, "the product tile needs 256 threads");
    __shared__ FwPersistShared<T, PRED, BM, BN, BK, TT> sm;
    __shared__ int s_item, s_round;
    const int nt = n / TT, tc = n / BN, nprod = (n / BM) * tc;

    // Every item is the same update of one tile at (r0, c0): D <- min(D, D[:, band] (x) D[band, :]) with
    // K = TT, stores skipping rows and columns in [lo, hi).  A panel slice of band b is this update with
    // band = b (R <- P (x) R reads D[b rows, b band] = P and D[b band, cols] = R: the same values in the
    // same k order as fw_fast_panel).  "big": the product's BM x BN shape, else a TT x TT tile; one call
    // site when the two shapes are the same (fewer inlined copies of the tile, fewer spills).
    constexpr bool SAME = BM == TT && BN == TT && BK == 16 && TM == TMT && TN == TMT;
    auto tile = [&](bool big, int band, int r0, int c0, int lo, int hi) {
        const T* A = d + band;
        const T* B = d + (long long)band * n;
        const int* PB = PRED ? p + (long long)band * n : p;
        if constexpr (SAME) {
            mp_tile<T, OP, PRED, BM, BN, BK, TM, TN>(sm.big, d, d, p, p, n, n, A, n, B, PB, n, n, n, TT, r0, c0,
                                                      lo, hi, 0, 0, lo, hi, 0, 0);
        } else if (big) {
            mp_tile<T, OP, PRED, BM, BN, BK, TM, TN>(sm.big, d, d, p, p, n, n, A, n, B, PB, n, n, n, TT, r0, c0,
                                                      lo, hi, 0, 0, lo, hi, 0, 0);
        } else {
            mp_tile<T, OP, PRED, TT, TT, 16, TMT, TMT>(sm.thin, d, d, p, p, n, n, A, n, B, PB, n, n, n, TT, r0, c0,
                                                        0, 0, 0, 0, 0, 0, 0, 0);
        }
    };
    // panel item i of band b: side 0 the row panel's slices, side 1 the column panel's, the pivot's own skipped
    auto panel = [&](int b, int i) {
        const int side = i / (nt - 1), x0 = i % (nt - 1), x = (x0 < b / TT ? x0 : x0 + 1) * TT;
        tile(false, b, side == 0 ? b : x, side == 0 ? x : b, 0, 0);
    };

    if (blockIdx.x == 0) fw_fast_close<T, PRED, TT, TMT>(d, p, n, 0);
    fw_persist_grid_sync();
    for (int i = blockIdx.x; i < 2 * (nt - 1); i += gridDim.x) panel(0, i);
    fw_persist_grid_sync();

    for (int round = 0; round < nt; ++round) {
        if (threadIdx.x == 0) s_round = round;
        {
            const int kb = round * TT, nb = kb + TT;
            if (nb < n && blockIdx.x == 0) {                    // the next pivot: update, close, flag
                tile(false, kb, nb, nb, 0, 0);
                __syncthreads();
                fw_fast_close<T, PRED, TT, TMT>(d, p, n, nb);
                fw_persist_signal(sync + 3 * round + 2);
            }
        }
        for (;;) {
            if (threadIdx.x == 0) s_item = atomicAdd(sync + 3 * s_round, 1);
            __syncthreads();
            // the round's values are re-derived from shared memory after each barrier instead of kept
            // in registers across the product tile (which needs all 128 of them)
            const int item = *(volatile int*)&s_item, s = *(volatile int*)&s_round;
            __syncthreads();
            const int kb = s * TT, nb = kb + TT;
            const bool next = nb < n;
            const int nband = next ? 2 * (nt - 2) : 0, npanel = next ? 2 * (nt - 1) : 0;
            const int skip1 = kb + (next ? 2 : 1) * TT;        // bands kb and nb are adjacent
            int* counter = sync + 3 * s;
            if (item >= nband + nprod + npanel) break;
            if (item < nband) {                                 // 1. band nb, updated by band kb
                const int half = item / (nt - 2), j0 = item % (nt - 2), j = (j0 < s ? j0 : j0 + 2) * TT;
                tile(false, kb, half == 0 ? nb : j, half == 0 ? j : nb, 0, 0);
                fw_persist_signal(counter + 1);
            } else if (item < nband + nprod) {                  // 2. the non-pivot product
                const int t = item - nband, row0 = (t / tc) * BM, col0 = (t % tc) * BN;
                if ((row0 >= kb && row0 + BM <= skip1) || (col0 >= kb && col0 + BN <= skip1)) continue;
                tile(true, kb, row0, col0, kb, skip1);
            } else {                                            // 3. the panels of band nb
                fw_persist_wait(counter + 2, counter + 1, nband);
                panel(nb, item - nband - nprod);
            }
        }
        fw_persist_grid_sync();
    }
}
