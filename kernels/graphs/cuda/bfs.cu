// APSP by repeated breadth-first search (paper 000 §4.3, after Harish & Narayanan).
// One kernel launch per BFS level.  Both kernels are level-synchronous: a vertex is expanded
// only when its cost equals the current level, so every write in a launch stores the same value
// (level + 1) and the result is exact whatever the thread order.

// Kernel 1: CSR (Fig. 9e), one source, bool frontier array; the host copies the whole
// frontier back after every launch and scans it.
extern "C" __global__ void bfs_k1(const int* __restrict__ indptr, const int* __restrict__ indices,
                                  int n, unsigned char* frontier, int* cost, int level)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !frontier[v] || cost[v] != level) return;
    frontier[v] = 0;
    const int c = level + 1;
    const int e1 = indptr[v + 1];
    for (int e = indptr[v]; e < e1; ++e) {
        const int w = indices[e];
        if (cost[w] > c) { cost[w] = c; frontier[w] = 1; }
    }
}

// Kernel 7 (paper's best): layout (f) — int4-packed arc ends, int2 vertices (first int4, length),
// thread handles verticesSorted[tid] (similar loop lengths per warp), per-thread register count
// of frontier changes -> one shared atomic per thread -> one global atomic per block.
// Beyond the paper: nsrc sources at once, dist is an nsrc x n matrix of compact hop counts
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
