// Bit-parallel multi-source BFS (MS-BFS; Then et al., "The More the Merrier", VLDB 2015), beyond
// papers 000 and 004: one bit per source, 64 sources per 64-bit word, W words per vertex
// (a batch of B = 64 W sources).  Per vertex v and word w three bit sets: seen (sources that have
// reached v), visit (sources whose frontier holds v at this level) and next (the next level's).
//
// One launch per level, one thread per (v, w), the W threads of a vertex adjacent (they read the
// same adjacency list, a broadcast, and consecutive words of every neighbour — the interleaving of
// paper 004 Fig. 3.8, one bit per problem instead of one word).  Pull form: v gathers the visit
// words of its out-neighbours u, so bit s arrives at v one level after it reached u, and the level
// it arrives at is dist(v -> s): the result is written into row v, column s of D — 64 sources of a
// word are 64 adjacent elements, written with one 64-bit atomicAnd per 8 bytes.  On an undirected
// graph D is the distance matrix itself (symmetric); on a directed one the pull over out-arcs gives
// dist(v -> s) as well, so D[v, s] is row v's entry either way.
//
// D is pre-filled with all-ones (unreached); an element is written once, when its bit first
// appears, so AND-ing the level into all-ones bytes is exact.  ld (the row pitch) and col0 (the
// column of the batch's first source) are multiples of 64 elements: every word's 64 elements are
// 8-byte aligned.

typedef unsigned long long u64;

__device__ __forceinline__ long long ms_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }

// thread per (v, w): seen = the bits of word w that hold no source of this batch (never to be
// reached: they count as seen), visit = 0.
extern "C" __global__ void msbfs_clear(int n, int W, int count, u64* seen, u64* visit)
{
    const long long t = ms_tid();
    if (t >= (long long)n * W) return;
    const int w = (int)(t % W);
    const int valid = count - 64 * w;                     // sources of the batch in this word
    seen[t] = valid >= 64 ? 0ull : (valid <= 0 ? ~0ull : (~0ull << valid));
    visit[t] = 0ull;
}

// thread per source j of the batch: bit j at vertex targets[j] in seen and visit; D[v, j] = 0.
template <typename T>
__global__ void msbfs_seed(int W, int count, const long long* __restrict__ targets, u64* seen, u64* visit,
                           T* D, long long ld, long long col0)
{
    const int j = (int)ms_tid();
    if (j >= count) return;
    const long long v = targets[j];
    const u64 bit = 1ull << (j & 63);
    atomicOr(&seen[v * W + (j >> 6)], bit);               // two sources may share a vertex (duplicates)
    atomicOr(&visit[v * W + (j >> 6)], bit);
    D[v * ld + col0 + j] = (T)0;
}

// One BFS level for all B sources: next = (OR of the out-neighbours' visit words) & ~seen.
// Writes `nxt` (= level + 1) into D for every new bit; *active = nxt when any bit was new (the host
// compares it with the level it launched, so the flag needs no reset).
template <typename T>
__global__ void msbfs_level(const int* __restrict__ indptr, const int* __restrict__ indices, int n, int W,
                            const u64* __restrict__ visit, u64* next, u64* seen, T* D, long long ld,
                            long long col0, unsigned int nxt, unsigned int* active)
{
    const long long t = ms_tid();
    u64 nw = 0ull;
    if (t < (long long)n * W) {
        const int v = (int)(t / W);
        const int w = (int)(t - (long long)v * W);
        const u64 sn = seen[t];
        if (~sn) {                                        // some source of this word has not reached v
            u64 acc = 0ull;
            const int e1 = indptr[v + 1];
            for (int e = indptr[v]; e < e1; ++e) acc |= visit[(long long)indices[e] * W + w];
            nw = acc & ~sn;
            if (nw) {
                seen[t] = sn | nw;
                const int per = 8 / (int)sizeof(T);       // elements per 64-bit word of D
                const u64 one = (u64)(T)~(T)0;            // one element's all-ones pattern
                u64 pattern = 0ull;
                for (int j = 0; j < per; ++j) pattern |= ((u64)(T)nxt) << (j * 8 * (int)sizeof(T));
                u64* q = reinterpret_cast<u64*>(D + (long long)v * ld + col0 + 64LL * w);
                const u64 sel = (per == 8) ? 0xffull : ((1ull << per) - 1ull);
                for (int k = 0; k < 64 / per; ++k) {
                    const u64 bits = (nw >> (k * per)) & sel;
                    if (!bits) continue;
                    u64 mask = 0ull;
                    for (int j = 0; j < per; ++j)
                        if ((bits >> j) & 1ull) mask |= one << (j * 8 * (int)sizeof(T));
                    atomicAnd(q + k, ~mask | (pattern & mask));
                }
            }
        }
        next[t] = nw;
    }
    const unsigned int any = __ballot_sync(0xffffffffu, nw != 0ull);
    if (any && (threadIdx.x & 31) == 0) *active = nxt;
}
