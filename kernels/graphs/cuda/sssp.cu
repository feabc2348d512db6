// SSSP-based APSP on the GPU, paper 004 ch. 3: Harish & Narayanan's iterative method (scatter /
// check kernels, mask Ma, cost Ca, updated cost Ua, a changed flag) and the task-parallel method
// that solves S problems per launch.  Harish's method is the S = 1 case of the same arrays.
//
// Layout (Fig. 3.8b): Ma, Ca, Ua hold S problems interleaved, element (v, s) at v*S + s; thread
// t -> v = t / S, s = t % S, so the threads of a warp share v (same loop length, broadcast reads of
// Va/Ea/Wa) and touch consecutive words.  Costs are non-negative float32: atomicMin on their bit
// patterns as int keeps their order (refuse negative weights before launching).  w == nullptr:
// unit weights (hop counts).

__device__ __forceinline__ long long ss_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }

// Ca = Ua = inf and Ma = 0, except (src[s], s): cost 0, in M.  src[s] < 0: an unused problem slot.
extern "C" __global__ void sssp_init(int n, int S, const int* __restrict__ src, float* cost, float* upd,
                                     unsigned char* mask)
{
    const long long t = ss_tid();
    if (t >= (long long)n * S) return;
    const int v = (int)(t / S);
    const int s = (int)(t - (long long)v * S);
    const bool is_src = (src[s] == v);
    const float c = is_src ? 0.0f : __int_as_float(0x7f800000);
    cost[t] = c;
    upd[t] = c;
    mask[t] = is_src ? 1 : 0;
}

// Scatter phase (Fig. 3.5 for S = 1, Fig. 3.7 lines 10-14 for S problems), device memory only
// (the "unshared" variant of Table 3.1).  The weight of arc e is Wa[e] (Fig. 3.5 prints Wa[n]).
extern "C" __global__ void sssp_scatter(const int* __restrict__ indptr, const int* __restrict__ indices,
                                        const float* __restrict__ w, int n, int S,
                                        unsigned char* mask, const float* __restrict__ cost, float* upd)
{
    const long long t = ss_tid();
    if (t >= (long long)n * S || !mask[t]) return;
    mask[t] = 0;
    const int v = (int)(t / S);
    const int s = (int)(t - (long long)v * S);
    const float c = cost[t];
    const int e1 = indptr[v + 1];
    for (int e = indptr[v]; e < e1; ++e) {
        const float nc = c + (w ? w[e] : 1.0f);
        atomicMin((int*)&upd[(long long)indices[e] * S + s], __float_as_int(nc));
    }
}

// Scatter phase with shared-memory staging (Fig. 3.9).  S is a multiple of 32, so every warp holds
// 32 problems of one vertex.  ms[v] (the OR of the warp's masks) decides whether the warp copies
// Va[v], Va[v+1] and the vertex's edges and weights into shared memory; then the threads whose own
// mask is set relax from the shared copies.  Fig. 3.9 stages only the first N edges of a vertex
// (thread s copies edge from + s) but loops over all of them: here the warp stages the list in
// chunks of 32 edges, so vertices of any degree are right.  The staging is per warp (for S = 32 =
// the thesis's N that is the vertex's whole group; for S = 64, 96, … each warp stages for itself),
// so __syncwarp suffices (the thesis: "N = warp size … eliminates synchronization").
extern "C" __global__ void sssp_scatter_staged(const int* __restrict__ indptr, const int* __restrict__ indices,
                                               const float* __restrict__ w, int n, int S,
                                               unsigned char* mask, const float* __restrict__ cost, float* upd)
{
    __shared__ int es[1024];
    __shared__ float ws[1024];
    __shared__ int from_to[64];                           // per warp: Va[v], Va[v + 1]
    const long long t = ss_tid();
    const bool in = t < (long long)n * S;
    const bool mine = in && mask[t];
    if (__ballot_sync(0xffffffffu, mine) == 0u) return;   // ms[v] = false: the whole warp leaves
    const int lane = threadIdx.x & 31;
    const int wbase = threadIdx.x & ~31;
    const int wid = threadIdx.x >> 5;
    const int v = (int)(t / S);                           // the same for all 32 lanes (S % 32 == 0)
    const int s = (int)(t - (long long)v * S);
    if (lane == 0) { from_to[2 * wid] = indptr[v]; from_to[2 * wid + 1] = indptr[v + 1]; }
    __syncwarp();
    const int from = from_to[2 * wid], to = from_to[2 * wid + 1];
    float c = 0.0f;
    if (mine) { mask[t] = 0; c = cost[t]; }
    for (int base = from; base < to; base += 32) {
        const int e = base + lane;
        if (e < to) { es[threadIdx.x] = indices[e]; ws[threadIdx.x] = w ? w[e] : 1.0f; }
        __syncwarp();
        if (mine) {
            const int cnt = min(32, to - base);
            for (int i = 0; i < cnt; ++i)
                atomicMin((int*)&upd[(long long)es[wbase + i] * S + s], __float_as_int(c + ws[wbase + i]));
        }
        __syncwarp();
    }
}

// Check phase: a cost that went down is taken and its vertex enters M; Ua := Ca otherwise.  One
// per-block flag in shared memory, written to the global flag by one thread per block — as the
// iteration number, so the host needs no reset between iterations (it compares with `iter`).
extern "C" __global__ void sssp_check(long long total, unsigned char* mask, float* cost, float* upd,
                                      int* flag, int iter)
{
    __shared__ int any;
    if (threadIdx.x == 0) any = 0;
    __syncthreads();
    const long long t = ss_tid();
    if (t < total) {
        const float u = upd[t];
        if (cost[t] > u) { cost[t] = u; mask[t] = 1; any = 1; }
        else upd[t] = cost[t];
    }
    __syncthreads();
    if (threadIdx.x == 0 && any) *flag = iter;
}

// Path recording (§3.4.3): after convergence, thread (v, s) finds a direct predecessor u of v in the
// inverted graph G' (rptr/ridx/rw: the in-arcs of v) with c(v, s) = c(u, s) + w(u, v) — the same
// float32 addition the scatter made — and stores it in Pa, which reuses Ua's memory (int view).
// The source and unreachable vertices get -1.
extern "C" __global__ void sssp_record(const int* __restrict__ rptr, const int* __restrict__ ridx,
                                       const float* __restrict__ rw, int n, int S, const int* __restrict__ src,
                                       const float* __restrict__ cost, int* pred)
{
    const long long t = ss_tid();
    if (t >= (long long)n * S) return;
    const int v = (int)(t / S);
    const int s = (int)(t - (long long)v * S);
    const float c = cost[t];
    int p = -1;
    if (src[s] != v && c != __int_as_float(0x7f800000)) {
        const int e1 = rptr[v + 1];
        for (int e = rptr[v]; e < e1; ++e) {
            const int u = ridx[e];
            const float cu = cost[(long long)u * S + s];
            if (__fadd_rn(cu, rw ? rw[e] : 1.0f) == c) { p = u; break; }
        }
    }
    pred[t] = p;
}
