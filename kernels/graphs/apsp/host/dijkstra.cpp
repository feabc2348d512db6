// CPU comparator of paper 004 ch. 3 (§3.5): Dijkstra's algorithm with a binary heap, one
// sequential Dijkstra per source, the sources split over threads ("we do not parallelize this
// algorithm but run a sequential program with different sources on each CPU core").
// The heap is std::priority_queue (a binary heap) with lazy deletion: a vertex is pushed again
// when its distance drops and stale entries are skipped when popped.  Distances are accumulated
// in double and stored as float (exact for integer path costs below 2^24).  w == nullptr: unit
// weights.  Threads take sources from a shared atomic counter (std::thread; no OpenMP needed).
#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

namespace {

void sssp(int n, const int* indptr, const int* indices, const float* w, int s, std::vector<double>& dist,
          std::vector<char>& done, float* row)
{
    typedef std::pair<double, int> Item;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    const double inf = std::numeric_limits<double>::infinity();
    std::fill(dist.begin(), dist.end(), inf);
    std::fill(done.begin(), done.end(), 0);
    dist[s] = 0.0;
    heap.push(Item(0.0, s));
    while (!heap.empty()) {
        const Item top = heap.top();
        heap.pop();
        const int v = top.second;
        if (done[v]) continue;                            // a stale entry
        done[v] = 1;
        const double dv = top.first;
        for (int e = indptr[v]; e < indptr[v + 1]; ++e) {
            const int u = indices[e];
            const double nd = dv + (w ? (double)w[e] : 1.0);
            if (nd < dist[u]) { dist[u] = nd; heap.push(Item(nd, u)); }
        }
    }
    for (int v = 0; v < n; ++v) row[v] = (float)dist[v];
}

}  // namespace

extern "C" int dijkstra_rows(int n, const int* indptr, const int* indices, const float* w, int nsrc,
                             const long long* sources, float* out, int threads)
{
    if (threads < 1) threads = 1;
    std::atomic<int> next(0);
    auto work = [&]() {
        std::vector<double> dist(n);
        std::vector<char> done(n);
        for (int i = next++; i < nsrc; i = next++)
            sssp(n, indptr, indices, w, (int)sources[i], dist, done, out + (size_t)i * n);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
    return 0;
}
