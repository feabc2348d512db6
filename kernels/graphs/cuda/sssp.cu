// Task-parallel SSSP-based APSP (paper 004 ch. 3): S single-source problems per launch, each solved
// by Harish & Narayanan's scatter/check relaxation.  Mask, cost and updated cost are replicated
// per problem and interleaved: element (v, s) at v*S + s, thread t -> v = t / S, s = t % S, so the
// threads of a warp share v (same loop length, broadcast CSR reads) and touch consecutive words.
// Costs are non-negative float32; atomicMin on their bit patterns as int preserves the order.
// (The paper's shared-memory staging of the edge list is left to the L1 cache here.)
extern "C" __global__ void sssp_scatter(const int* __restrict__ indptr, const int* __restrict__ indices,
                                        const float* __restrict__ w, int n, int S,
                                        unsigned char* mask, const float* __restrict__ cost, float* upd)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
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

extern "C" __global__ void sssp_check(long long total, unsigned char* mask, float* cost, float* upd,
                                      unsigned int* flag)
{
    __shared__ int any;
    if (threadIdx.x == 0) any = 0;
    __syncthreads();
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) {
        const float u = upd[t];
        if (cost[t] > u) { cost[t] = u; mask[t] = 1; any = 1; }
        else upd[t] = cost[t];
    }
    __syncthreads();
    if (threadIdx.x == 0 && any) atomicAdd(flag, 1u);
}
