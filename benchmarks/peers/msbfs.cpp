// Bit-parallel multi-source BFS (MS-BFS) on the CPU: Then, Kaufmann, Chirigati, Hoang-Vu, Pham,
// Kemper, Neumann, Vo, "The More the Merrier: Efficient Multi-Source Graph Traversal",
// PVLDB 8(4), 2014 (VLDB 2015).
//
// One batch = 64·W sources.  Every vertex v holds three bitsets of 64·W bits: seen[v] (sources that
// have reached v), visit[v] (sources whose frontier holds v at this level) and next[v] (visitNext).
// One level is one pass over the arcs, for all sources of the batch at once:
//   top-down  (few frontier arcs):  next[u] |= visit[v]   for every arc v→u with visit[v] ≠ 0
//   bottom-up (large frontier):     next[v]  = ⋁ visit[u] over the in-arcs u→v, for v not fully seen
// followed by next[v] &= ~seen[v]; seen[v] |= next[v]; every bit b set in next[v] is the hop distance
// lvl of source b to v.  The direction switch is the paper's §4.2 (direction-optimising MS-BFS):
// top-down while the frontier's arcs are under 1/ALPHA of all arcs.  Batches run in parallel, one per
// OpenMP thread (the paper's "one MS-BFS per core"), each with its own bitsets.
//
// Output: dist[s * n + v] = hops from sources[s] to v, T's all-ones value when unreachable.
// Each batch records its hop counts vertex-major in a per-thread buffer and writes its rows of dist
// with one tiled transpose at the end (writing 64·W rows at once per level would miss the TLB).
// Returns 0, or -1 when a hop count does not fit in T (the caller retries with a wider type).
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef uint64_t u64;
static const long ALPHA = 14;

template <int W, class T>
static int one_batch(int n, const int* ip, const int* ix, const int* rip, const int* rix, long arcs,
                     const int* src, int ns, T* dist, u64* seen, u64* visit, u64* next, T* lv) {
    const T NONE = (T)~(T)0;
    const int B = 64 * W;
    // hop counts first go to lv[v * B + b] (vertex-major: a level's writes for v stay in one place),
    // then one tiled transpose writes the batch's rows of dist
    std::memset(lv, 0xFF, sizeof(T) * (size_t)n * B);
    u64 inactive[W];
    for (int w = 0; w < W; ++w) {
        int lo = w * 64, cnt = ns - lo;
        inactive[w] = cnt >= 64 ? 0 : (cnt <= 0 ? ~0ull : ~((1ull << cnt) - 1));
    }
    for (long v = 0; v < n; ++v)
        for (int w = 0; w < W; ++w) { seen[v * W + w] = inactive[w]; visit[v * W + w] = 0; next[v * W + w] = 0; }
    long frontier_arcs = 0;
    for (int b = 0; b < ns; ++b) {
        long v = src[b];
        u64 bit = 1ull << (b & 63);
        seen[v * W + (b >> 6)] |= bit;
        visit[v * W + (b >> 6)] |= bit;
        lv[(size_t)v * B + b] = 0;
    }
    for (long v = 0; v < n; ++v) {
        u64 any = 0;
        for (int w = 0; w < W; ++w) any |= visit[v * W + w];
        if (any) frontier_arcs += ip[v + 1] - ip[v];
    }
    for (long lvl = 1; frontier_arcs > 0; ++lvl) {
        if ((u64)lvl >= (u64)NONE) return -1;   // (lv is scratch: nothing of dist was written)
        if (frontier_arcs * ALPHA < arcs) {                       // top-down: push the frontier
            for (long v = 0; v < n; ++v) {
                u64 any = 0;
                for (int w = 0; w < W; ++w) any |= visit[v * W + w];
                if (!any) continue;
                for (int a = ip[v]; a < ip[v + 1]; ++a) {
                    long u = ix[a];
                    for (int w = 0; w < W; ++w) next[u * W + w] |= visit[v * W + w];
                }
            }
        } else {                                                  // bottom-up: pull into unseen
            for (long v = 0; v < n; ++v) {
                u64 full = ~0ull;
                for (int w = 0; w < W; ++w) full &= seen[v * W + w];
                if (full == ~0ull) continue;
                u64 acc[W];
                for (int w = 0; w < W; ++w) acc[w] = 0;
                for (int a = rip[v]; a < rip[v + 1]; ++a) {
                    long u = rix[a];
                    for (int w = 0; w < W; ++w) acc[w] |= visit[u * W + w];
                }
                for (int w = 0; w < W; ++w) next[v * W + w] = acc[w];
            }
        }
        frontier_arcs = 0;
        for (long v = 0; v < n; ++v) {
            u64 any = 0;
            for (int w = 0; w < W; ++w) {
                u64 nw = next[v * W + w] & ~seen[v * W + w];
                next[v * W + w] = 0;
                visit[v * W + w] = nw;
                seen[v * W + w] |= nw;
                any |= nw;
                while (nw) {
                    int b = __builtin_ctzll(nw);
                    lv[(size_t)v * B + w * 64 + b] = (T)lvl;
                    nw &= nw - 1;
                }
            }
            if (any) frontier_arcs += ip[v + 1] - ip[v];
        }
    }
    const int TV = 64;
    for (int v0 = 0; v0 < n; v0 += TV) {
        const int v1 = v0 + TV < n ? v0 + TV : n;
        for (int b = 0; b < ns; ++b) {
            T* row = dist + (size_t)b * n;
            for (int v = v0; v < v1; ++v) row[v] = lv[(size_t)v * B + b];
        }
    }
    return 0;
}

template <int W, class T>
static int run(int n, const int* ip, const int* ix, const int* rip, const int* rix, const int* src, int ns,
               T* dist, int threads) {
    const int B = 64 * W;
    const int nb = (ns + B - 1) / B;
    const long arcs = ip[n];
    int status = 0;
#ifdef _OPENMP
    if (threads > 0) omp_set_num_threads(threads);
#pragma omp parallel
#endif
    {
        std::vector<u64> seen((size_t)n * W), visit((size_t)n * W), next((size_t)n * W);
        std::vector<T> lv((size_t)n * 64 * W);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int k = 0; k < nb; ++k) {
            int lo = k * B, cnt = ns - lo < B ? ns - lo : B;
            if (one_batch<W, T>(n, ip, ix, rip, rix, arcs, src + lo, cnt, dist + (size_t)lo * n,
                                seen.data(), visit.data(), next.data(), lv.data())) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                status = -1;
            }
        }
    }
    return status;
}

template <class T>
static int dispatch(int width, int n, const int* ip, const int* ix, const int* rip, const int* rix,
                    const int* src, int ns, T* dist, int threads) {
    switch (width) {
        case 1: return run<1, T>(n, ip, ix, rip, rix, src, ns, dist, threads);
        case 2: return run<2, T>(n, ip, ix, rip, rix, src, ns, dist, threads);
        case 4: return run<4, T>(n, ip, ix, rip, rix, src, ns, dist, threads);
        case 8: return run<8, T>(n, ip, ix, rip, rix, src, ns, dist, threads);
    }
    return -2;
}

extern "C" {
int msbfs_u8(int w, int n, const int* ip, const int* ix, const int* rip, const int* rix, const int* src, int ns,
             uint8_t* d, int th) { return dispatch<uint8_t>(w, n, ip, ix, rip, rix, src, ns, d, th); }
int msbfs_u16(int w, int n, const int* ip, const int* ix, const int* rip, const int* rix, const int* src, int ns,
              uint16_t* d, int th) { return dispatch<uint16_t>(w, n, ip, ix, rip, rix, src, ns, d, th); }
int msbfs_u32(int w, int n, const int* ip, const int* ix, const int* rip, const int* rix, const int* src, int ns,
              uint32_t* d, int th) { return dispatch<uint32_t>(w, n, ip, ix, rip, rix, src, ns, d, th); }
int msbfs_max_threads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
}
