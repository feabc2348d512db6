// Clustering coefficient on the GPU, one thread per arc (paper 001 §5.4, Alg. 18-20).
// Thread i takes arc (vi = S[i], vj = A[i]): p += |A_j|; if vi > vj, for vk in A_j:
// vk == vi -> p -= 2 (the 2-cycles vi->vj->vi, vj->vi->vj); vk < vi -> t += [vi in A_k].
// t = 2 x triangles, p = 2 x connected triples, C = 3t/p.  Lists are sorted, so the
// search in A_k stops past vi.  Per-thread register counters -> block __shared__ counters
// -> one 64-bit global atomicAdd per counter per block (Alg. 20).  Signed p is added as
// its two's complement, so the unsigned 64-bit sum is exact.  Self-arcs are removed on the host.
// tri (optional, may be null): per-vertex count of 2 x triangles, for local clustering.
extern "C" __global__ void cc_per_arc(const int* __restrict__ indptr, const int* __restrict__ indices,
                                      const int* __restrict__ S, const int* __restrict__ A,
                                      long long n_arcs, unsigned long long* counters,
                                      unsigned int* tri)
{
    __shared__ unsigned long long st, sp;
    if (threadIdx.x == 0) { st = 0ULL; sp = 0ULL; }
    __syncthreads();
    long long t = 0, p = 0;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_arcs) {
        const int vi = S[i], vj = A[i];
        const int bj = indptr[vj], ej = indptr[vj + 1];
        p += ej - bj;
        if (vi > vj) {
            for (int a = bj; a < ej; ++a) {
                const int vk = indices[a];
                if (vk == vi) { p -= 2; continue; }
                if (vk < vi) {
                    const int ek = indptr[vk + 1];
                    for (int b = indptr[vk]; b < ek; ++b) {
                        const int vl = indices[b];
                        if (vl >= vi) {
                            if (vl == vi) {
                                ++t;
                                if (tri) { atomicAdd(&tri[vi], 1u); atomicAdd(&tri[vj], 1u); atomicAdd(&tri[vk], 1u); }
                            }
                            break;
                        }
                    }
                }
            }
        }
    }
    if (t) atomicAdd(&st, (unsigned long long)t);
    if (p) atomicAdd(&sp, (unsigned long long)p);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (st) atomicAdd(&counters[0], st);
        if (sp) atomicAdd(&counters[1], sp);
    }
}
