// One shortest-path row from one source over CSR: the distance overlay of a clicked vertex
// (kernels/graphs/frontier.py).  Every kernel gives one warp to one vertex, so a hub's arcs are
// read by 32 lanes at once; discovered vertices are appended to the next frontier with one
// atomicAdd per warp (warp-aggregated: ballot, popc, shuffle).
//
//   frontier_bfs_level   level-synchronous top-down BFS: a vertex is claimed by the first warp
//                        that swaps its level from -1 (atomicCAS), then appended.
//   frontier_sssp_round  work-list Bellman-Ford: relax the arcs of every vertex whose distance fell
//                        in the previous round; distances are non-negative doubles held as their
//                        IEEE bits, whose unsigned order is the numeric order (atomicMin on u64);
//                        stamp[v] = round of v's last append keeps the next frontier free of repeats.
//   frontier_pred        after the distances: pred[v] = the smallest neighbour u with
//                        dist[u] < dist[v] and dist[u] + w(u, v) == dist[v] (-1: none), so the
//                        predecessors are deterministic and every chain strictly descends.

#define FULL 0xffffffffu

__device__ __forceinline__ void warp_append(bool found, int v, int lane, int* next, int* count_out)
{
    unsigned mask = __ballot_sync(FULL, found);
    if (!mask) return;
    int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count_out, __popc(mask));
    base = __shfl_sync(FULL, base, leader);
    if (found) next[base + __popc(mask & ((1u << lane) - 1u))] = v;
}

// One warp per frontier vertex u: each lane takes every 32nd arc u -> v and asks ``claim``
// whether v joins the next frontier; the lanes that say yes are appended together.
template <class Claim>
__device__ __forceinline__ void expand(const int* __restrict__ indptr, const int* __restrict__ indices,
                                       const int* __restrict__ frontier, int count, int* __restrict__ next,
                                       int* count_out, Claim claim)
{
    long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= count) return;                       // whole warps leave together (blockDim % 32 == 0)
    int u = frontier[w];
    claim.begin(u);
    int lo = indptr[u], hi = indptr[u + 1];
    for (int base = lo; base < hi; base += 32) {
        int a = base + lane;
        bool found = false;
        int v = 0;
        if (a < hi) {
            v = indices[a];
            found = claim(a, v);
        }
        warp_append(found, v, lane, next, count_out);
    }
}

struct BFSClaim {                                 // v unvisited: the first warp to set its level wins
    int* level_of;
    int level;
    __device__ void begin(int) {}
    __device__ bool operator()(int, int v) {
        return level_of[v] < 0 && atomicCAS(&level_of[v], -1, level + 1) == -1;
    }
};

struct RelaxClaim {                               // d(u) + w(u, v) < d(v): lower d(v); append once a round
    const float* weights;
    unsigned long long* dist_bits;
    int* stamp;
    int round;
    double du;
    __device__ void begin(int u) { du = __longlong_as_double((long long)atomicAdd(&dist_bits[u], 0ull)); }
    __device__ bool operator()(int a, int v) {
        unsigned long long nd = (unsigned long long)__double_as_longlong(du + (double)weights[a]);
        if (nd >= dist_bits[v]) return false;
        unsigned long long old = atomicMin(&dist_bits[v], nd);
        return nd < old && atomicExch(&stamp[v], round) != round;
    }
};

extern "C" __global__ void frontier_bfs_level(const int* __restrict__ indptr, const int* __restrict__ indices,
                                              const int* __restrict__ frontier, int count, int* level_of,
                                              int level, int* __restrict__ next, int* count_out)
{
    expand(indptr, indices, frontier, count, next, count_out, BFSClaim{level_of, level});
}

extern "C" __global__ void frontier_sssp_round(const int* __restrict__ indptr, const int* __restrict__ indices,
                                               const float* __restrict__ weights, const int* __restrict__ frontier,
                                               int count, unsigned long long* dist_bits, int* stamp, int round,
                                               int* __restrict__ next, int* count_out)
{
    expand(indptr, indices, frontier, count, next, count_out, RelaxClaim{weights, dist_bits, stamp, round, 0.0});
}

extern "C" __global__ void frontier_pred(const int* __restrict__ indptr, const int* __restrict__ indices,
                                         const float* __restrict__ weights, int weighted,
                                         const double* __restrict__ dist, int n, int source, int* __restrict__ pred)
{
    long long v = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (v >= n) return;
    double dv = dist[v];
    int best = 0x7fffffff;
    if (v != source && dv < __longlong_as_double(0x7ff0000000000000ll)) {
        int lo = indptr[v], hi = indptr[v + 1];
        for (int a = lo + lane; a < hi; a += 32) {
            int u = indices[a];
            double du = dist[u];
            double wt = weighted ? (double)weights[a] : 1.0;
            if (du < dv && du + wt == dv && u < best) best = u;
        }
    }
    for (int off = 16; off > 0; off >>= 1) best = min(best, __shfl_down_sync(FULL, best, off));
    if (lane == 0) pred[v] = best == 0x7fffffff ? -1 : best;
}
