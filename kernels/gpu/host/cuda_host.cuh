// The CUDA prelude of the host backend (kernels.gpu.host): a .cu source compiled by the host C++
// compiler after this header runs on the CPU with CUDA's execution model.
//
//  * A launch runs its blocks on OS worker threads (blocks in parallel over the cores); inside a
//    block every CUDA thread is a fiber (its own stack) and the block's fibers take turns on the
//    worker: a fiber runs until it reaches a barrier (__syncthreads, a warp collective, a grid sync)
//    and the next one runs.  Threads therefore meet at barriers exactly as on the GPU, at the cost
//    of one context switch per thread and barrier.
//  * Shared memory: __shared__ variables are thread_local statics (one copy per worker = per
//    resident block); extern __shared__ arrays are rewritten by the loader to the worker's dynamic
//    buffer (cuda_emu::t_dyn, shared_mem bytes, 16-byte aligned).
//  * Warp collectives (shuffles, votes, __syncwarp, __reduce_*_sync): the lanes of a warp post their
//    value in a double-buffered slot, meet at a warp barrier and read; the lanes that take part are
//    the mask's lanes still running.
//  * Grid sync (cooperative_groups::this_grid().sync()): the block meets at its barrier, then one
//    thread per block waits at an OS barrier of all blocks (cooperative launches run every block on
//    its own worker; so do launches no larger than the device's resident grid, for paper 002's
//    spinning flag barrier).
//  * Atomics are GCC/Clang __atomic builtins on the same addresses (global memory is shared by the
//    workers).  The DPX and integer intrinsics are plain code with CUDA's definitions.
#pragma once
// light headers only (each kernel is its own translation unit: the compile time is the prelude's)
#if defined(__APPLE__) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700           // macOS: the (deprecated) ucontext routines of the fallback switch
#define _DARWIN_C_SOURCE 1          // ... and MAP_ANON beside them
#endif
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
using namespace std;

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __constant__
#define __managed__
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
#define __CUDA_HOST_EMU__ 1
#define __CUDA_EMU__ 1
#define warpSize 32
#define CUDART_INF_F __int_as_float(0x7f800000)
#define CUDART_INF __longlong_as_double(0x7ff0000000000000LL)


// ------------------------------------------------------------------ vector types
#define CUDA_EMU_VEC(T, N, A)                                                                         \
    struct __attribute__((aligned(A))) N##1 { T x; };                                                \
    struct __attribute__((aligned(2 * A))) N##2 { T x, y; };                                         \
    struct N##3 { T x, y, z; };                                                                       \
    struct __attribute__((aligned(4 * A > 16 ? 16 : 4 * A))) N##4 { T x, y, z, w; };                 \
    inline N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }                                       \
    inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }                         \
    inline N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; }           \
    inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
CUDA_EMU_VEC(char, char, 1)
CUDA_EMU_VEC(unsigned char, uchar, 1)
CUDA_EMU_VEC(short, short, 2)
CUDA_EMU_VEC(unsigned short, ushort, 2)
CUDA_EMU_VEC(int, int, 4)
CUDA_EMU_VEC(unsigned, uint, 4)
CUDA_EMU_VEC(float, float, 4)
CUDA_EMU_VEC(long long, longlong, 8)
CUDA_EMU_VEC(unsigned long long, ulonglong, 8)
CUDA_EMU_VEC(double, double, 8)
#undef CUDA_EMU_VEC
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

// ------------------------------------------------------------------ the execution model
namespace cuda_emu {

// ---- the context switch: a few instructions of assembly on x86-64 and AArch64 (ELF), ucontext elsewhere
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__ELF__) && !defined(CUDA_EMU_UCONTEXT)
#define CUDA_EMU_ASM 1
// cuda_emu_swap(save, to): push the callee-saved registers, store sp in *save, load sp = to, pop, return
#if defined(__x86_64__)
asm(".text\n.p2align 4\n.type cuda_emu_swap, @function\ncuda_emu_swap:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
    ".size cuda_emu_swap, .-cuda_emu_swap\n");
#else
asm(".text\n.p2align 4\n.type cuda_emu_swap, %function\ncuda_emu_swap:\n"
    "  sub sp, sp, #160\n"
    "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
    "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
    "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n  stp d14, d15, [sp, #144]\n"
    "  mov x2, sp\n  str x2, [x0]\n  mov sp, x1\n"
    "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
    "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
    "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n  ldp d14, d15, [sp, #144]\n"
    "  add sp, sp, #160\n  ret\n"
    ".size cuda_emu_swap, .-cuda_emu_swap\n");
#endif
extern "C" void cuda_emu_swap(void** save, void* to) __attribute__((visibility("hidden")));
struct Context { void* sp; };
inline void swap_to(Context& save, Context& to) { cuda_emu_swap(&save.sp, to.sp); }
// a new context whose first switch "returns" into entry() on the given stack
inline void make_context(Context& c, char* stack, size_t size, void (*entry)(), Context*) {
    uintptr_t top = ((uintptr_t)(stack + size)) & ~(uintptr_t)15;
#if defined(__x86_64__)
    void** sp = (void**)(top - 8);          // entry's own return slot: rsp = 8 mod 16 at entry
    *--sp = (void*)entry;                   // popped by ret
    for (int i = 0; i < 6; ++i) *--sp = nullptr;   // rbp rbx r12-r15
    --sp;
    ((unsigned*)sp)[0] = 0x1F80u;           // MXCSR default
    ((unsigned short*)sp)[2] = 0x037F;       // x87 control word default
    c.sp = sp;
#else
    void** sp = (void**)(top - 160);
    for (int i = 0; i < 20; ++i) sp[i] = nullptr;
    sp[11] = (void*)entry;                  // x30 (lr)
    c.sp = sp;
#endif
}
#else
struct Context { ucontext_t uc; };
inline void swap_to(Context& save, Context& to) { swapcontext(&save.uc, &to.uc); }
inline void make_context(Context& c, char* stack, size_t size, void (*entry)(), Context* link) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack; c.uc.uc_stack.ss_size = size; c.uc.uc_link = &link->uc;
    makecontext(&c.uc, entry, 0);
}
#endif

enum { RUN = 0, AT_BAR = 1, AT_WARP = 2, DONE = 3 };
struct Fiber { Context ctx; uint3 tid; int lin, state; long gen; };
struct Warp {
    int arrived; long gen; unsigned alive, mask;
    unsigned long long slot[2][32];
    unsigned part[2];
};
struct Launch;
struct Block {
    int nt = 0, alive = 0, arrived = 0, cur = 0, acc[2] = {0, 0}, result[2] = {0, 0};
    long gen = 0;
    bool abort = false;
    Fiber* f = nullptr;
    Warp warps[32];
    Context main;
};

struct Launch {
    void (*body)(void**);
    void** args;
    unsigned gx, gy, gz, bx, by, bz, smem;
    int nb, nt, plain = 0, next = 0, failed = 0, waiting = 0, members = 0;
    long ggen = 0;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    char error[400] = {0};
    void fail(const char* why) {
        pthread_mutex_lock(&m);
        if (!__atomic_exchange_n(&failed, 1, __ATOMIC_SEQ_CST)) snprintf(error, sizeof error, "%s", why);
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&m);
    }
    bool has_failed() { return __atomic_load_n(&failed, __ATOMIC_SEQ_CST) != 0; }
    // a worker with no block left no longer joins grid barriers (like a thread that has exited):
    // the others may be complete now
    void leave() {
        pthread_mutex_lock(&m);
        if (--members > 0 && waiting > 0 && waiting >= members) { waiting = 0; ++ggen; pthread_cond_broadcast(&cv); }
        pthread_mutex_unlock(&m);
    }
    // every block meets here (one thread per block); false when the launch failed meanwhile
    bool grid_wait() {
        pthread_mutex_lock(&m);
        long g = ggen;
        if (++waiting >= members) { waiting = 0; ++ggen; pthread_cond_broadcast(&cv); }
        else while (ggen == g && !has_failed()) pthread_cond_wait(&cv, &m);
        bool ok = ggen != g;
        pthread_mutex_unlock(&m);
        return ok;
    }
};

static thread_local uint3 t_tid, t_bid;
static thread_local dim3 t_bdim, t_gdim;
static thread_local char* t_dyn;
static thread_local Block* t_blk;
static thread_local Launch* t_launch;

// Every way a thread can wait for another calls this (empty, never inlined): when the kernel's code
// cannot reach it the linker drops it, and the loader, not finding it in the library, runs each
// block's threads as a plain loop (no fibers).
static __attribute__((noinline)) void cuda_emu_meets() { __asm__ __volatile__(""); }

inline Fiber& me() { return t_blk->f[t_blk->cur]; }
inline void park(Fiber& f, int state, long gen) {
    f.state = state; f.gen = gen;
    swap_to(f.ctx, t_blk->main);
    if (t_blk->abort) { f.state = DONE; swap_to(f.ctx, t_blk->main); }
}

// the block barrier; grid: one thread of the block then waits for every block
inline void block_barrier(bool grid, int pred = 0) {
    cuda_emu_meets();
    Block& b = *t_blk;
    long g = b.gen;
    b.acc[g & 1] += pred;
    if (++b.arrived >= b.alive) {
        b.arrived = 0;
        b.result[g & 1] = b.acc[g & 1]; b.acc[g & 1] = 0; b.acc[(g + 1) & 1] = 0;
        if (grid && !t_launch->grid_wait()) { b.abort = true; me().state = DONE; swap_to(me().ctx, b.main); }
        ++b.gen;
        return;
    }
    park(me(), AT_BAR, g);
}

inline void warp_barrier(Warp& w, unsigned mask) {
    cuda_emu_meets();
    long g = w.gen;
    if (w.arrived == 0) w.mask = mask;
    unsigned part = mask & w.alive;
    if (++w.arrived >= __builtin_popcount(part)) {
        w.arrived = 0; w.part[g & 1] = part; ++w.gen;
        return;
    }
    park(me(), AT_WARP, g);
}

// a fiber's thread ends: the barriers it no longer joins may be complete now
inline void thread_exit() {
    Block& b = *t_blk;
    Fiber& f = me();
    f.state = DONE;
    --b.alive;
    Warp& w = b.warps[f.lin >> 5];
    w.alive &= ~(1u << (f.lin & 31));
    if (w.arrived > 0 && w.arrived >= __builtin_popcount(w.mask & w.alive)) {
        w.part[w.gen & 1] = w.mask & w.alive; w.arrived = 0; ++w.gen;
    }
    if (b.arrived > 0 && b.arrived >= b.alive) {
        long g = b.gen;
        b.result[g & 1] = b.acc[g & 1]; b.acc[g & 1] = 0; b.acc[(g + 1) & 1] = 0;
        b.arrived = 0; ++b.gen;
    }
}

static void fiber_entry() {
    t_launch->body(t_launch->args);
    thread_exit();
    swap_to(me().ctx, t_blk->main);     // never resumed
    abort();
}

inline uint3 unflat(unsigned i, unsigned x, unsigned y) {
    uint3 d; d.x = i % x; d.y = (i / x) % y; d.z = i / (x * y); return d;
}

// run one block: every thread a fiber on this worker, round robin between barriers
static bool run_block(Launch& L, Block& b, char* stacks, size_t ss) {
    const int nt = L.nt;
    if (L.plain) {      // no thread can wait for another: they run one after another
        for (int i = 0; i < nt; ++i) { t_tid = unflat(i, L.bx, L.by); L.body(L.args); }
        return true;
    }
    if (nt == 1) { t_tid = uint3{0, 0, 0}; L.body(L.args); return true; }
    b.alive = nt; b.arrived = 0; b.gen = 0; b.abort = false; b.acc[0] = b.acc[1] = 0;
    for (int w = 0; w < (nt + 31) / 32; ++w) {
        Warp& x = b.warps[w];
        int lanes = nt - 32 * w < 32 ? nt - 32 * w : 32;
        x.arrived = 0; x.gen = 0; x.mask = 0;
        x.alive = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1);
    }
    for (int i = 0; i < nt; ++i) {
        Fiber& f = b.f[i];
        f.lin = i; f.state = RUN; f.gen = 0;
        f.tid = unflat(i, L.bx, L.by);
        make_context(f.ctx, stacks + (size_t)i * ss, ss, fiber_entry, &b.main);
    }
    while (b.alive > 0) {
        bool progress = false;
        for (int i = 0; i < nt; ++i) {
            Fiber& f = b.f[i];
            if (f.state == DONE) continue;
            if (f.state == AT_BAR && f.gen == b.gen) continue;
            if (f.state == AT_WARP && f.gen == b.warps[i >> 5].gen) continue;
            f.state = RUN; b.cur = i; t_tid = f.tid;
            swap_to(b.main, f.ctx);
            progress = true;
            if (b.abort) return false;
        }
        if (!progress) {
            L.fail("deadlock: the threads of a block wait at different barriers (a __syncthreads or warp "
                   "collective in divergent code, or a mask naming lanes that never arrive)");
            return false;
        }
    }
    return true;
}

static const size_t STACK = 256 * 1024;

// fiber stacks are mapped once and kept (a pool per library): launches reuse their touched pages
static pthread_mutex_t pool_m = PTHREAD_MUTEX_INITIALIZER;
static char* pool_p[64];
static size_t pool_n[64];
static int pool_len = 0;
static char* take_stacks(size_t bytes) {
    pthread_mutex_lock(&pool_m);
    for (int i = 0; i < pool_len; ++i)
        if (pool_n[i] >= bytes) {
            char* p = pool_p[i];
            pool_p[i] = pool_p[pool_len - 1]; pool_n[i] = pool_n[pool_len - 1]; --pool_len;
            pthread_mutex_unlock(&pool_m);
            return p;
        }
    pthread_mutex_unlock(&pool_m);
#if !defined(MAP_NORESERVE)
#define MAP_NORESERVE 0
#endif
#if !defined(MAP_ANONYMOUS)
#define MAP_ANONYMOUS MAP_ANON
#endif
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : (char*)p;
}
static void give_stacks(char* p, size_t bytes) {
    pthread_mutex_lock(&pool_m);
    if (pool_len < 64) { pool_p[pool_len] = p; pool_n[pool_len] = bytes; ++pool_len; p = nullptr; }
    pthread_mutex_unlock(&pool_m);
    if (p) munmap(p, bytes);
}

static void* worker(void* arg) {
    Launch* L = (Launch*)arg;
    t_launch = L;
    t_bdim = dim3(L->bx, L->by, L->bz);
    t_gdim = dim3(L->gx, L->gy, L->gz);
    char* dyn = (char*)malloc(L->smem + 16);
    Fiber* fibers = (Fiber*)calloc(L->nt, sizeof(Fiber));
    size_t bytes = L->nt > 1 && !L->plain ? STACK * (size_t)L->nt : 0;
    char* stacks = bytes ? take_stacks(bytes) : nullptr;
    if (!dyn || !fibers || (bytes && !stacks)) L->fail("out of memory for the block's threads");
    else {
        t_dyn = (char*)(((uintptr_t)dyn + 15) & ~(uintptr_t)15);
        Block b;
        b.f = fibers; b.nt = L->nt;
        t_blk = &b;
        while (!L->has_failed()) {
            int i = __atomic_fetch_add(&L->next, 1, __ATOMIC_SEQ_CST);
            if (i >= L->nb) break;
            t_bid = unflat(i, L->gx, L->gy);
            if (!run_block(*L, b, stacks, STACK)) break;
        }
        t_blk = nullptr;
    }
    L->leave();
    if (stacks) give_stacks(stacks, bytes);
    free(fibers);
    free(dyn);
    return nullptr;
}

// one launch: `workers` OS threads take the blocks in turn (all at once when workers == blocks)
typedef int (*PoolRun)(void* (*)(void*), void*, int);
static int launch(void (*body)(void**), void** args, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                  unsigned by, unsigned bz, unsigned smem, int workers, int plain, PoolRun pool, char* err,
                  int errlen) {
    Launch L;
    L.plain = plain;
    L.body = body; L.args = args;
    L.gx = gx; L.gy = gy; L.gz = gz; L.bx = bx; L.by = by; L.bz = bz; L.smem = smem;
    L.nb = (int)(gx * gy * gz); L.nt = (int)(bx * by * bz);
    workers = workers < 1 ? 1 : (workers > L.nb ? L.nb : workers);
    L.members = workers;
    if (L.nt > 1024) { snprintf(err, errlen, "%d threads per block: at most 1024", L.nt); return 1; }
    if (workers == 1) worker(&L);
    else {
        // the process's pool runs workers - 1 of them beside this thread
        if (pool(worker, &L, workers - 1) < 0) {
            snprintf(err, errlen, "could not start %d host threads for %d blocks", workers, L.nb);
            return 1;
        }
    }
    if (L.has_failed()) { snprintf(err, errlen, "%s", L.error); return 1; }
    return 0;
}

// argument marshalling: the kernel's parameter types, as codes the loader reads
template <class T> inline void code(char* s, size_t cap) {
    size_t n = strlen(s);
    if (std::is_pointer<T>::value) snprintf(s + n, cap - n, "p,");
    else if (std::is_same<T, bool>::value) snprintf(s + n, cap - n, "b1,");
    else if (std::is_integral<T>::value) snprintf(s + n, cap - n, "%c%zu,", std::is_signed<T>::value ? 'i' : 'u', sizeof(T));
    else if (std::is_floating_point<T>::value) snprintf(s + n, cap - n, "f%zu,", sizeof(T));
    else snprintf(s + n, cap - n, "s%zu,", sizeof(T));
}
template <class... A> const char* signature(void (*)(A...)) {
    static char s[1024];
    s[0] = 0;
    int dummy[] = {0, (code<typename std::decay<A>::type>(s, sizeof s), 0)...};
    (void)dummy;
    return s;
}
template <class... A, std::size_t... I>
inline void call_with(void (*f)(A...), void** args, std::index_sequence<I...>) {
    f(*static_cast<typename std::decay<A>::type*>(args[I])...);
}
template <class... A> inline void call(void (*f)(A...), void** args) {
    call_with(f, args, std::index_sequence_for<A...>{});
}

}  // namespace cuda_emu

#define threadIdx (::cuda_emu::t_tid)
#define blockIdx (::cuda_emu::t_bid)
#define blockDim (::cuda_emu::t_bdim)
#define gridDim (::cuda_emu::t_gdim)

// ------------------------------------------------------------------ synchronisation
inline void __syncthreads() { cuda_emu::cuda_emu_meets(); if (cuda_emu::t_blk->nt > 1) cuda_emu::block_barrier(false); }
inline int __syncthreads_count(int p) {
    cuda_emu::cuda_emu_meets();
    if (cuda_emu::t_blk->nt == 1) return p != 0;
    long g = cuda_emu::t_blk->gen;
    cuda_emu::block_barrier(false, p != 0);
    return cuda_emu::t_blk->result[g & 1];
}
inline int __syncthreads_or(int p) { return __syncthreads_count(p) > 0; }
inline int __syncthreads_and(int p) {
    int all = cuda_emu::t_blk->alive;
    return __syncthreads_count(p) == all;
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __nanosleep(unsigned) { sched_yield(); }

namespace cooperative_groups {
struct grid_group {
    void sync() {
        cuda_emu::cuda_emu_meets();
        if (cuda_emu::t_blk->nt > 1) cuda_emu::block_barrier(true);
        else if (!cuda_emu::t_launch->grid_wait()) cuda_emu::t_blk->abort = true;
    }
    unsigned long long thread_rank() const {
        unsigned long long b = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        return b * (blockDim.x * blockDim.y * blockDim.z) + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    }
    unsigned long long size() const {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
    }
    bool is_valid() const { return true; }
};
struct thread_block {
    void sync() { __syncthreads(); }
    unsigned thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
    unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
};
inline grid_group this_grid() { return grid_group(); }
inline thread_block this_thread_block() { return thread_block(); }
inline void sync(grid_group& g) { g.sync(); }
inline void sync(thread_block& b) { b.sync(); }
}  // namespace cooperative_groups

// ------------------------------------------------------------------ warp collectives
namespace cuda_emu {
inline int lane() { return me().lin & 31; }
inline Warp& my_warp() { return t_blk->warps[me().lin >> 5]; }
// post v, meet the mask's lanes, return the slot buffer used (read it before the next collective)
template <class T> inline int post(unsigned mask, T v) {
    static_assert(sizeof(T) <= 8, "warp collectives move at most 8 bytes");
    cuda_emu_meets();
    Warp& w = my_warp();
    int par = (int)(w.gen & 1);
    unsigned long long s = 0;
    std::memcpy(&s, &v, sizeof(T));
    w.slot[par][lane()] = s;
    if (t_blk->nt > 1) warp_barrier(w, mask);
    else w.part[par] = 1u;
    return par;
}
template <class T> inline T read(int par, int src) {
    T r; std::memcpy(&r, &my_warp().slot[par][src], sizeof(T)); return r;
}
}  // namespace cuda_emu

inline unsigned __activemask() { cuda_emu::cuda_emu_meets(); return cuda_emu::my_warp().alive; }
inline void __syncwarp(unsigned mask = 0xffffffffu) { cuda_emu::cuda_emu_meets(); if (cuda_emu::t_blk->nt > 1) cuda_emu::warp_barrier(cuda_emu::my_warp(), mask); }
template <class T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    int par = cuda_emu::post(mask, v), l = cuda_emu::lane();
    return cuda_emu::read<T>(par, (l & ~(width - 1)) + (src & (width - 1)));
}
template <class T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    int par = cuda_emu::post(mask, v), l = cuda_emu::lane(), s = l - (int)delta;
    return s < (l & ~(width - 1)) ? v : cuda_emu::read<T>(par, s);
}
template <class T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    int par = cuda_emu::post(mask, v), l = cuda_emu::lane(), s = l + (int)delta;
    return s >= (l & ~(width - 1)) + width ? v : cuda_emu::read<T>(par, s);
}
template <class T> inline T __shfl_xor_sync(unsigned mask, T v, int lm, int width = 32) {
    int par = cuda_emu::post(mask, v), l = cuda_emu::lane(), s = l ^ lm;
    return s >= (l & ~(width - 1)) + width ? v : cuda_emu::read<T>(par, s);
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
    int par = cuda_emu::post(mask, (unsigned)(pred != 0));
    unsigned part = cuda_emu::my_warp().part[par], r = 0;
    for (int i = 0; i < 32; ++i)
        if ((part >> i & 1u) && cuda_emu::read<unsigned>(par, i)) r |= 1u << i;
    return r;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) {
    int par = cuda_emu::post(mask, (unsigned)(pred != 0));
    unsigned part = cuda_emu::my_warp().part[par];
    for (int i = 0; i < 32; ++i)
        if ((part >> i & 1u) && !cuda_emu::read<unsigned>(par, i)) return 0;
    return 1;
}
#define CUDA_EMU_REDUCE(NAME, T, INIT, OP)                                                             \
    inline T NAME(unsigned mask, T v) {                                                                \
        int par = cuda_emu::post(mask, v);                                                             \
        unsigned part = cuda_emu::my_warp().part[par];                                                 \
        T r = INIT;                                                                                    \
        for (int i = 0; i < 32; ++i)                                                                   \
            if (part >> i & 1u) { T x = cuda_emu::read<T>(par, i); r = OP; }                          \
        return r;                                                                                      \
    }
CUDA_EMU_REDUCE(__reduce_add_sync, unsigned, 0u, r + x)
CUDA_EMU_REDUCE(__reduce_add_sync, int, 0, (int)((unsigned)r + (unsigned)x))
CUDA_EMU_REDUCE(__reduce_min_sync, unsigned, 0xffffffffu, x < r ? x : r)
CUDA_EMU_REDUCE(__reduce_min_sync, int, INT_MAX, x < r ? x : r)
CUDA_EMU_REDUCE(__reduce_max_sync, unsigned, 0u, x > r ? x : r)
CUDA_EMU_REDUCE(__reduce_max_sync, int, INT_MIN, x > r ? x : r)
CUDA_EMU_REDUCE(__reduce_and_sync, unsigned, 0xffffffffu, r & x)
CUDA_EMU_REDUCE(__reduce_or_sync, unsigned, 0u, r | x)
CUDA_EMU_REDUCE(__reduce_xor_sync, unsigned, 0u, r ^ x)
#undef CUDA_EMU_REDUCE

