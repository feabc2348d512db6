// The host backend's worker pool (one per process, kernels.gpu.host): launches hand their blocks to
// these threads instead of creating threads per launch.  pool_run(fn, arg, n) runs fn(arg) on n pool
// threads and on the calling thread, and returns n when all n + 1 calls have returned (-1, running
// nothing, when the pool cannot grow to n threads).  The pool grows to the largest n asked for (a
// cooperative launch needs one thread per block) and keeps its threads; one job at a time.
#include <pthread.h>
#include <stdlib.h>

namespace {
typedef void* (*Fn)(void*);
pthread_mutex_t job_m = PTHREAD_MUTEX_INITIALIZER;   // one job at a time
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t start = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
long gen = 0;
int threads = 0, want = 0, remaining = 0;
Fn job_fn = nullptr;
void* job_arg = nullptr;

void* loop(void* p) {
    const int me = (int)(long)p;
    long seen = 0;
    pthread_mutex_lock(&m);
    for (;;) {
        while (gen == seen) pthread_cond_wait(&start, &m);
        seen = gen;
        if (me >= want) continue;
        Fn fn = job_fn;
        void* arg = job_arg;
        pthread_mutex_unlock(&m);
        fn(arg);
        pthread_mutex_lock(&m);
        if (--remaining == 0) pthread_cond_signal(&done);
    }
    return nullptr;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int pool_run(Fn fn, void* arg, int n) {
    pthread_mutex_lock(&job_m);
    pthread_mutex_lock(&m);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (threads < n) {
        pthread_t t;
        if (pthread_create(&t, &attr, loop, (void*)(long)threads)) break;
        ++threads;
    }
    pthread_attr_destroy(&attr);
    if (threads < n) {                                  // cannot start them all: run nothing
        pthread_mutex_unlock(&m);
        pthread_mutex_unlock(&job_m);
        return -1;
    }
    want = n; remaining = n; job_fn = fn; job_arg = arg; ++gen;
    pthread_cond_broadcast(&start);
    pthread_mutex_unlock(&m);
    fn(arg);
    pthread_mutex_lock(&m);
    while (remaining > 0) pthread_cond_wait(&done, &m);
    pthread_mutex_unlock(&m);
    pthread_mutex_unlock(&job_m);
    return n;
}
