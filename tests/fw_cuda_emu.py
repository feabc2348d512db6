"""Run the Floyd–Warshall CUDA kernels on the host: the tests' stand-in for a GPU.

Each kernel source (``kernels/graphs/cuda/*.cu``) is compiled by the host C++ compiler
(kernels.hostcc) after ``kernels.hostcc.CUDA_HOST_PRELUDE`` and the few CUDA names the FW kernels
add (shared memory as function statics, ``__syncthreads`` as a barrier, ``__viaddmin_s32`` as the
integer min(a + b, c), …).  A launch runs every thread of a block as an OS thread, blocks one
after another (their shared memory is the same statics); kernels that need every block resident
at once (the grid barriers of paper 002's V4 / V5) run all blocks together.

:class:`EmuDevice` has the interface of ``kernels.graphs.fw_gpu.CudaDevice`` with NumPy arrays, so
the GPU launch sequences (``fw_gpu.run_*``) run unchanged: only the CUDA compiler is left out.
Each kernel instantiation is its own small library, compiled once and cached.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import re

import numpy as np

from kernels import hostcc
from kernels.graphs import fw_gpu

CUDA_DIR = os.path.join(os.path.dirname(fw_gpu.__file__), "cuda")

EMU_PRELUDE = hostcc.CUDA_HOST_PRELUDE + r"""
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include <algorithm>
#define __shared__ static
#define __launch_bounds__(...)
#define __CUDA_EMU__ 1
struct EmuBarrier {
    std::mutex m; std::condition_variable cv; int count, waiting = 0; long gen = 0;
    explicit EmuBarrier(int c) : count(c) {}
    void wait() {
        std::unique_lock<std::mutex> lk(m);
        long g = gen;
        if (++waiting == count) { waiting = 0; ++gen; cv.notify_all(); return; }
        cv.wait(lk, [&] { return gen != g; });
    }
};
static thread_local D3 emu_block_idx;
static D3 gridDim;
static thread_local EmuBarrier* emu_block_barrier;
static EmuBarrier* emu_grid_barrier;
#define blockIdx emu_block_idx
inline void __syncthreads() { emu_block_barrier->wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> inline T __ldg(const T* p) { return *p; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __viaddmin_s32(int a, int b, int c) { int s = (int)((unsigned)a + (unsigned)b); return s < c ? s : c; }
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) int4 { int x, y, z, w; };
inline int4 make_int4(int x, int y, int z, int w) { int4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
namespace cooperative_groups {
struct grid_group { void sync() { emu_grid_barrier->wait(); } };
inline grid_group this_grid() { return grid_group(); }
}
// blocks one after another (shared statics), or all at once (conc: grid barriers)
static void emu_run(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, int conc,
                    const std::function<void()>& body)
{
    gridDim.x = gx; gridDim.y = gy; gridDim.z = gz;
    blockDim.x = bx; blockDim.y = by; blockDim.z = bz;
    const int nt = (int)(bx * by * bz), nb = (int)(gx * gy * gz);
    auto thread_idx = [&](int t) { D3 d; d.x = t % bx; d.y = (t / bx) % by; d.z = t / (bx * by); return d; };
    auto block_idx = [&](int b) { D3 d; d.x = b % gx; d.y = (b / gx) % gy; d.z = b / (gx * gy); return d; };
    std::vector<std::thread> th;
    if (conc) {
        std::vector<EmuBarrier*> bars;
        for (int b = 0; b < nb; ++b) bars.push_back(new EmuBarrier(nt));
        EmuBarrier grid(nt * nb);
        emu_grid_barrier = &grid;
        for (int b = 0; b < nb; ++b)
            for (int t = 0; t < nt; ++t)
                th.emplace_back([&, b, t] {
                    threadIdx = thread_idx(t); emu_block_idx = block_idx(b); emu_block_barrier = bars[b];
                    body();
                });
        for (auto& x : th) x.join();
        for (auto* p : bars) delete p;
        return;
    }
    EmuBarrier bar(nt);
    for (int t = 0; t < nt; ++t)
        th.emplace_back([&, t] {
            threadIdx = thread_idx(t); emu_block_barrier = &bar;
            for (int b = 0; b < nb; ++b) {
                emu_block_idx = block_idx(b);
                body();
                bar.wait();                    // the next block reuses the shared statics
            }
        });
    for (auto& x : th) x.join();
}
template <class... A, std::size_t... I>
static void emu_call(void (*f)(A...), void** args, std::index_sequence<I...>)
{
    f(*static_cast<typename std::remove_reference<A>::type*>(args[I])...);
}
template <class... A>
static void emu_invoke(void (*f)(A...), unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, int conc, void** args)
{
    emu_run(gx, gy, gz, bx, by, bz, conc, [&] { emu_call(f, args, std::index_sequence_for<A...>{}); });
}
"""

#: kernels whose blocks must all be resident at once (grid barriers)
CONCURRENT = re.compile(r"^fw_v[45]<")
FLAGS = ("-std=c++14", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-pthread", f"-I{CUDA_DIR}")


class EmuKernel:
    def __init__(self, file: str, name: str):
        self.file, self.name = file, name
        src = (EMU_PRELUDE + f'#include "{file}"\n'
               "extern \"C\" void emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, "
               f"unsigned bz, int conc, void** args) {{ emu_invoke(&{name}, gx, gy, gz, bx, by, bz, conc, args); }}\n")
        # the include is resolved by the compiler: hash the sources it reads too
        deps = "".join(open(os.path.join(CUDA_DIR, f)).read() for f in sorted(os.listdir(CUDA_DIR)))
        lib = hostcc.compile_library(src + _digest(deps),
                                     what=f"the host emulation of {name}", kind="graphs-emu", prefix="fwemu",
                                     flags=FLAGS)
        self.fn = lib.emu_launch
        self.fn.restype = None
        self.attributes = {"num_regs": 0, "shared_size_bytes": 0}


def _digest(text: str) -> str:
    import hashlib
    return "// sources " + hashlib.sha1(text.encode()).hexdigest() + "\n"


def _cvalue(a):
    if isinstance(a, np.ndarray):
        return ctypes.c_void_p(a.ctypes.data)
    if isinstance(a, (np.int32,)):
        return ctypes.c_int32(int(a))
    if isinstance(a, (np.int64,)):
        return ctypes.c_int64(int(a))
    if isinstance(a, (np.uintp, np.uint64)):
        return ctypes.c_void_p(int(a) or None)
    if isinstance(a, np.float32):
        return ctypes.c_float(float(a))
    raise TypeError(f"emulated launch: unsupported argument {type(a)}")


def _dims(v):
    v = tuple(v) if isinstance(v, (tuple, list)) else (int(v),)
    return tuple(int(x) for x in v) + (1,) * (3 - len(v))


class EmuDevice:
    """fw_gpu's device interface on the host: NumPy arrays, emulated kernels, a small 'GPU'
    (``sms`` multiprocessors, ``block`` threads per block from the occupancy queries)."""

    def __init__(self, sms: int = 2, block: int = 64, per_sm: int = 2):
        self.xp = np
        self.sms, self.block, self.per_sm = sms, block, per_sm
        self.kernels: dict = {}
        self.launches: list[str] = []

    def kernel(self, file: str, name: str):
        if name not in fw_gpu.NAMES.get(file, ()):
            raise KeyError(f"{name} is not instantiated for {file}")
        k = self.kernels.get((file, name))
        if k is None:
            k = self.kernels[(file, name)] = EmuKernel(file, name)
        return k

    def launch(self, k, grid, block, args, shared_mem: int = 0, cooperative: bool = False):
        vals = [_cvalue(a) for a in args]
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        conc = int(cooperative or bool(CONCURRENT.match(k.name)))
        k.fn(*_dims(grid), *_dims(block), ctypes.c_int(conc), ptrs)
        self.launches.append(k.name)

    def potential_block(self, k):
        return self.sms * self.per_sm, self.block

    def active_blocks(self, k, block):
        return self.per_sm

    def synchronize(self):
        pass

    # streams run in issue order here (a valid serialisation of the overlapping GPU schedule)
    def stream(self):
        return contextlib.nullcontext()

    def on(self, stream):
        return stream

    def record(self):
        return None

    def wait(self, event):
        pass
