// APSP by repeated breadth-first search: paper 000 §4.3's seven kernels (after Harish & Narayanan).
// One launch per BFS level.  Every kernel here is level-synchronous: a vertex is expanded only in
// the launch of its own level (its cost equals `level`), so every cost written in a launch is
// level + 1 and the result is exact whatever the thread order.
//
// Paper form: one source per BFS (count = 1).  Multi-source form (beyond the paper): `count`
// sources per launch, row s of the count x n cost / frontier matrices belongs to source s and
// thread tid handles (s = tid / n, vertex slot tid % n).
//
// Frontier bookkeeping, by kernel (paper 000 Fig. 10):
//   K1  bool frontier array, the host copies it back after every launch and scans it;
//   K2  one global frontier counter: atomicSub on removal, atomicAdd on insertion;
//   K3  K2 with a block-local shared counter flushed to the global one once per block (Listing 4);
//   K4  K3 on the int4 arc layout with the list length as element 0 (Listing 2);
//   K5  K3 on int2 vertices (first int4, length) + int4 arcs (Fig. 9f), threads take vertices in
//       degree order (verticesSorted, Listing 12);
//   K6  K5 with a separate frontier-update array written with plain stores and a frontier flag
//       (Listing 13; the host swaps the arrays and clears the update array); no atomics;
//   K7  K5 with a per-thread register count of the frontier changes, one shared atomic per thread.
// A vertex reached by two threads in one launch must enter the frontier once, or the counter of
// K2-K5/K7 never returns to zero: insertion flips the (int) frontier flag with atomicExch and
// counts only a 0 -> 1 flip (the paper does not say how it avoids the double count).

#define INF_COST 0x7fffffff

__device__ __forceinline__ long long bfs_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }

// ---------------------------------------------------------------- per-batch set-up / read-out
// cost = INF, frontier = 0, except the source of each row: cost 0, frontier 1.
template <typename F>
__global__ void bfs_init(int n, int count, const long long* __restrict__ src, int* cost, F* frontier)
{
    const long long t = bfs_tid();
    if (t >= (long long)n * count) return;
    const int s = (int)(t / n);
    const int v = (int)(t - (long long)s * n);
    const bool is_src = (v == (int)src[s]);
    cost[t] = is_src ? 0 : INF_COST;
    frontier[t] = is_src ? 1 : 0;
}

// int costs -> compact hop counts (INF -> all-ones); *overflow = 1 if a finite cost does not fit.
template <typename T>
__global__ void bfs_compact(long long total, const int* __restrict__ cost, T* out, unsigned int* overflow)
{
    const long long t = bfs_tid();
    if (t >= total) return;
    const int c = cost[t];
    const T top = (T)~(T)0;
    if (c == INF_COST) { out[t] = top; return; }
    if ((unsigned int)c >= (unsigned int)top) { *overflow = 1u; out[t] = top; return; }
    out[t] = (T)c;
}

// ---------------------------------------------------------------- K1 (Listing 10)
extern "C" __global__ void bfs_k1(const int* __restrict__ indptr, const int* __restrict__ indices, int n,
                                  int count, unsigned char* frontier, int* cost, int level)
{
    const long long t = bfs_tid();
    if (t >= (long long)n * count) return;
    const int s = (int)(t / n);
    const int v = (int)(t - (long long)s * n);
    unsigned char* F = frontier + (size_t)s * n;
    int* C = cost + (size_t)s * n;
    if (!F[v] || C[v] != level) return;
    F[v] = 0;                                             // remove the vertex from the frontier
    const int c = level + 1;                              // every arc costs 1
    const int e1 = indptr[v + 1];
    for (int e = indptr[v]; e < e1; ++e) {
        const int w = indices[e];
        if (C[w] > c) { C[w] = c; F[w] = 1; }
    }
}

// ---------------------------------------------------------------- K2 (Listing 11)
extern "C" __global__ void bfs_k2(const int* __restrict__ indptr, const int* __restrict__ indices, int n,
                                  int count, int* frontier, int* cost, int level, int* counter)
{
    const long long t = bfs_tid();
    if (t >= (long long)n * count) return;
    const int s = (int)(t / n);
    const int v = (int)(t - (long long)s * n);
    int* F = frontier + (size_t)s * n;
    int* C = cost + (size_t)s * n;
    if (!F[v] || C[v] != level) return;
    F[v] = 0;
    atomicSub(counter, 1);
    const int c = level + 1;
    const int e1 = indptr[v + 1];
    for (int e = indptr[v]; e < e1; ++e) {
        const int w = indices[e];
        if (C[w] > c) {
            C[w] = c;
            if (atomicExch(&F[w], 1) == 0) atomicAdd(counter, 1);
        }
    }
}

// ---------------------------------------------------------------- K3 (Listing 4 counter)
extern "C" __global__ void bfs_k3(const int* __restrict__ indptr, const int* __restrict__ indices, int n,
                                  int count, int* frontier, int* cost, int level, int* counter)
{
    __shared__ int block_count;
    if (threadIdx.x == 0) block_count = 0;
    __syncthreads();
    const long long t = bfs_tid();
    if (t < (long long)n * count) {
        const int s = (int)(t / n);
        const int v = (int)(t - (long long)s * n);
        int* F = frontier + (size_t)s * n;
        int* C = cost + (size_t)s * n;
        if (F[v] && C[v] == level) {
            F[v] = 0;
            atomicSub(&block_count, 1);
            const int c = level + 1;
            const int e1 = indptr[v + 1];
            for (int e = indptr[v]; e < e1; ++e) {
                const int w = indices[e];
                if (C[w] > c) {
                    C[w] = c;
                    if (atomicExch(&F[w], 1) == 0) atomicAdd(&block_count, 1);
                }
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && block_count) atomicAdd(counter, block_count);
}

// ---------------------------------------------------------------- K4 (Listing 2 layout)
// arcs4: every list starts on a fresh int4, element 0 = its length, the arc ends follow.
extern "C" __global__ void bfs_k4(const int4* __restrict__ arcs4, const int* __restrict__ first, int n,
                                  int count, int* frontier, int* cost, int level, int* counter)
{
    __shared__ int block_count;
    if (threadIdx.x == 0) block_count = 0;
    __syncthreads();
    const long long t = bfs_tid();
    if (t < (long long)n * count) {
        const int s = (int)(t / n);
        const int v = (int)(t - (long long)s * n);
        int* F = frontier + (size_t)s * n;
        int* C = cost + (size_t)s * n;
        if (F[v] && C[v] == level) {
            F[v] = 0;
            atomicSub(&block_count, 1);
            const int c = level + 1;
            const int4* q = arcs4 + first[v];
            int4 a = q[0];
            const int len = a.x;                          // slot 0: the length; arcs in slots 1 … len
            for (int slot = 1; slot <= len; ++slot) {
                if ((slot & 3) == 0) a = q[slot >> 2];
                const int k = slot & 3;
                const int w = k == 0 ? a.x : (k == 1 ? a.y : (k == 2 ? a.z : a.w));
                if (C[w] > c) {
                    C[w] = c;
                    if (atomicExch(&F[w], 1) == 0) atomicAdd(&block_count, 1);
                }
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && block_count) atomicAdd(counter, block_count);
}

// ---------------------------------------------------------------- K5 / K7 (Fig. 9f, Listing 12)
// vertices[v] = (first int4, length); the thread takes vertex sorted[slot] (ascending degree).
// REG = false: K5 (one shared atomic per frontier change); REG = true: K7 (register count).
template <bool REG>
__device__ __forceinline__ void bfs_k57_body(const int4* __restrict__ arcs4, const int2* __restrict__ vertices,
                                             const int* __restrict__ sorted, int n, int count, int* frontier,
                                             int* cost, int level, int* counter)
{
    __shared__ int block_count;
    if (threadIdx.x == 0) block_count = 0;
    __syncthreads();
    int mine = 0;
    const long long t = bfs_tid();
    if (t < (long long)n * count) {
        const int s = (int)(t / n);
        const int v = sorted[t - (long long)s * n];       // the extra coalesced read of kernel 5
        int* F = frontier + (size_t)s * n;
        int* C = cost + (size_t)s * n;
        if (F[v] && C[v] == level) {
            F[v] = 0;
            if (REG) --mine; else atomicSub(&block_count, 1);
            const int c = level + 1;
            const int2 vi = vertices[v];                  // one load: first int4 and length
            const int4* q = arcs4 + vi.x;
            for (int i = 0; i < vi.y; i += 4) {
                const int4 a = q[i >> 2];
                const int lim = vi.y - i;
                #pragma unroll
                for (int k = 0; k < 4; ++k) {
                    if (k >= lim) break;
                    const int w = k == 0 ? a.x : (k == 1 ? a.y : (k == 2 ? a.z : a.w));
                    if (C[w] > c) {
                        C[w] = c;
                        if (atomicExch(&F[w], 1) == 0) { if (REG) ++mine; else atomicAdd(&block_count, 1); }
                    }
                }
            }
        }
    }
    if (REG && mine) atomicAdd(&block_count, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_count) atomicAdd(counter, block_count);
}

extern "C" __global__ void bfs_k5(const int4* __restrict__ arcs4, const int2* __restrict__ vertices,
                                  const int* __restrict__ sorted, int n, int count, int* frontier, int* cost,
                                  int level, int* counter)
{
    bfs_k57_body<false>(arcs4, vertices, sorted, n, count, frontier, cost, level, counter);
}

extern "C" __global__ void bfs_k7p(const int4* __restrict__ arcs4, const int2* __restrict__ vertices,
                                   const int* __restrict__ sorted, int n, int count, int* frontier, int* cost,
                                   int level, int* counter)
{
    bfs_k57_body<true>(arcs4, vertices, sorted, n, count, frontier, cost, level, counter);
}

// ---------------------------------------------------------------- K6 (Listing 13)
// frontier holds exactly the vertices of this level (the host swaps frontier and update arrays and
// clears the update array and the flag before every launch), so no level test is needed: every
// vertex in it has cost = level and writes cost + 1.
extern "C" __global__ void bfs_k6(const int4* __restrict__ arcs4, const int2* __restrict__ vertices,
                                  const int* __restrict__ sorted, int n, int count, const int* __restrict__ frontier,
                                  int* update, int* cost, int* flag)
{
    __shared__ int shared_flag;
    if (threadIdx.x == 0) shared_flag = 0;
    __syncthreads();
    const long long t = bfs_tid();
    if (t < (long long)n * count) {
        const int s = (int)(t / n);
        const int v = sorted[t - (long long)s * n];
        const size_t row = (size_t)s * n;
        if (frontier[row + v]) {
            int* C = cost + row;
            const int c = C[v] + 1;
            const int2 vi = vertices[v];
            const int4* q = arcs4 + vi.x;
            for (int i = 0; i < vi.y; i += 4) {
                const int4 a = q[i >> 2];
                const int lim = vi.y - i;
                #pragma unroll
                for (int k = 0; k < 4; ++k) {
                    if (k >= lim) break;
                    const int w = k == 0 ? a.x : (k == 1 ? a.y : (k == 2 ? a.z : a.w));
                    if (C[w] > c) {
                        C[w] = c;
                        update[row + w] = 1;              // always 1, never 0: no atomics needed
                        shared_flag = 1;
                    }
                }
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && shared_flag) *flag = 1;
}

// ---------------------------------------------------------------- K7, compact (gpu-bfs)
// Kernel 7's layout and counter, with the frontier implicit: a vertex is in the frontier when its
// hop count equals the level, so neither a frontier array nor an int cost matrix is kept (beyond
// the paper).  nsrc sources at once; dist is an nsrc x n matrix of compact hop counts
// (T = unsigned char / unsigned short / unsigned int, all-ones = unreached).
template <typename T>
__global__ void bfs_k7(const int4* __restrict__ arcs4, const int2* __restrict__ vertices,
                       const int* __restrict__ sorted, int n, int nsrc, T* dist, int level,
                       unsigned int* changed)
{
    __shared__ unsigned int block_count;
    if (threadIdx.x == 0) block_count = 0;
    __syncthreads();
    unsigned int mine = 0;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < (long long)n * nsrc) {
        const int s = (int)(tid / n);
        const int v = sorted[tid - (long long)s * n];
        T* row = dist + (size_t)s * n;
        if (row[v] == (T)level) {
            const int2 vi = vertices[v];
            const int4* q = arcs4 + vi.x;
            const T nxt = (T)(level + 1);
            const T unreached = (T)~(T)0;
            for (int i = 0; i < vi.y; i += 4) {
                const int4 a = q[i >> 2];
                const int lim = vi.y - i;
                if (row[a.x] == unreached) { row[a.x] = nxt; ++mine; }
                if (lim > 1 && row[a.y] == unreached) { row[a.y] = nxt; ++mine; }
                if (lim > 2 && row[a.z] == unreached) { row[a.z] = nxt; ++mine; }
                if (lim > 3 && row[a.w] == unreached) { row[a.w] = nxt; ++mine; }
            }
        }
    }
    if (mine) atomicAdd(&block_count, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_count) atomicAdd(changed, block_count);
}
