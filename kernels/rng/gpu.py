"""CUDA (CuPy RawKernel) versions of the Marsaglia generator, paper 001 §6.4.

* Approach 1 (Alg. 29–30): one lag table (L = 97) per thread, T threads
  (30 720 in the paper); table entry ``e`` of thread ``t`` lives at
  ``U[e*T + t]`` (interleaved) so the threads of a warp that draw together
  touch consecutive words (coalesced).  The user seed drives a host RANMAR
  generator that produces a distinct (ij, kl) seed pair per thread
  (:func:`thread_seeds`); the tables are initialised on the device with the
  RANMAR initialiser, one thread per table, exactly like the host fill.
* Approach 2 (Alg. 31–32): one big table (L = 92 153) of one stream; per L
  draws 3 launches at offsets 0, 30 718, 61 436 with 30 718, 30 718, 30 717
  threads (block 64).  ``c`` is carried in integer units of 2^-24
  (``c_t = (c - (t+1)·7654321) mod 16777213``), so the stream is *bit
  identical* to the sequential :class:`~kernels.rng.ranmar.Ranmar` with the
  same table — unlike the float version in the paper (digest P1 item 19).

Every generator runs on a device of the GPU layer (:mod:`kernels.gpu`): the GPU through CuPy, or
the host, where the same CUDA source is compiled by the host C++ compiler ("CUDA source run on the
CPU") — integer arithmetic only, so the host streams equal the GPU's bit for bit.  CuPy is
imported only by the cuda device; nothing here touches Qt/VisPy.
"""
from __future__ import annotations

import numpy as np

from .. import gpu as layer
from .. import launches
from .ranmar import (C0, D, L97, L_BIG, M, N_SEEDS, ONE, KL_MAX, RanmarVec,
                     batch_schedule, fill_tables, seed_to_ijkl, table_for, to_float)

#: thread count of Alg. 29 and block size of Alg. 31.
T_PAPER = 30720
BLOCK = 64

_OUT = {"f4": ("float", "(float)r * (1.0f/16777216.0f)"),
        "f8": ("double", "(double)r * (1.0/16777216.0)"),
        "i4": ("int", "r")}
_OUT_DTYPE = {"f4": np.float32, "f8": np.float64, "i4": np.int32}

_SRC = r"""
#define ONE 16777216
#define DD 7654321
#define MM 16777213

extern "C" __global__ void lf_init(const int* __restrict__ ij, const int* __restrict__ kl,
                                   int T, int L, int* __restrict__ U)
{   // RANMAR table initialisation (Marsaglia-Zaman-Tsang / James 1990), one table per thread
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    int a = ij[t], b = kl[t];
    int i = (a / 177) % 177 + 2, j = a % 177 + 2, k = (b / 169) % 178 + 1, l = b % 169;
    for (int e = 0; e < L; ++e) {
        int s = 0;
        for (int bit = 0; bit < 24; ++bit) {
            int m = ((i * j) % 179) * k % 179;
            i = j; j = k; k = m;
            l = (53 * l + 1) % 169;
            if ((l * m) % 64 >= 32) s |= 1 << (23 - bit);
        }
        U[(long long)e * T + t] = s;
    }
}

extern "C" __global__ void lf_per_thread(int* __restrict__ U, int T, int L,
                                         int* __restrict__ I, int* __restrict__ J,
                                         int* __restrict__ C, int n,
                                         OUT_T* __restrict__ out, int store,
                                         unsigned* __restrict__ sink)
{   // Alg. 30: thread t draws n numbers from its own interleaved lag table
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    int i = I[t], j = J[t], c = C[t];
    unsigned acc = 0u;
    for (int k = 0; k < n; ++k) {
        int r = U[i * T + t] - U[j * T + t];
        r += (r < 0) ? ONE : 0;
        U[i * T + t] = r;
        i = (i == 0) ? L - 1 : i - 1;
        j = (j == 0) ? L - 1 : j - 1;
        c -= DD;
        c += (c < 0) ? MM : 0;
        r -= c;
        r += (r < 0) ? ONE : 0;
        if (store) out[(long long)k * T + t] = CONV;
        else acc ^= (unsigned)r;
    }
    I[t] = i; J[t] = j; C[t] = c;
    if (!store) sink[t] ^= acc;
}

extern "C" __global__ void lf_single(int* __restrict__ U, int L, int i0, int j0, int count,
                                     long long c0, OUT_T* __restrict__ out, long long off,
                                     int store, unsigned* __restrict__ sink)
{   // Alg. 32: thread t makes draw t of a batch of <= L/3+1 draws of the single stream
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    int i = i0 - t; i += (i < 0) ? L : 0;
    int j = j0 - t; j += (j < 0) ? L : 0;
    long long cl = (c0 - (long long)(t + 1) * DD) % MM;
    int c = (int)(cl + ((cl < 0) ? MM : 0));
    int r = U[i] - U[j];
    r += (r < 0) ? ONE : 0;
    U[i] = r;
    r -= c;
    r += (r < 0) ? ONE : 0;
    if (store) out[off + t] = CONV;
    else sink[t] ^= (unsigned)r;
}
"""


#: the generator source per output code (f4 / f8 / i4): compiled once per device by the GPU layer
_SOURCES = {code: _SRC.replace("OUT_T", typ).replace("CONV", conv) for code, (typ, conv) in _OUT.items()}

#: the kernels of every generator module
KERNEL_NAMES = ("lf_init", "lf_per_thread", "lf_single")


def _kernel(dev, out_code: str, name: str):
    """Kernel ``name`` of the generator module for output type ``out_code`` on device ``dev`` (a
    :class:`kernels.gpu.Device`: the GPU, or the host running the same source); compiled and
    recorded in :mod:`kernels.launches` (``"RNG <name> <code>"``, BLOCK threads) by the layer."""
    mod = dev.module(_SOURCES[out_code], options=("-std=c++11",), system="rng", prefix="RNG")
    return mod.function(name, block=BLOCK, label=f"{name} <{out_code}>")


def _device(device):
    """The device to run on: ``device`` (a kernels.gpu Device), else the GPU."""
    return device if device is not None else layer.device("cuda")


def to_host(a) -> np.ndarray:
    """A device array (CuPy or the host device's NumPy) as a NumPy array."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _out_code(dtype) -> str:
    dt = np.dtype(dtype)
    return {np.dtype(np.float32): "f4", np.dtype(np.float64): "f8"}.get(dt, "i4")


def _finish(raw, dtype, xp):
    """Kernels write f4/f8 directly; other dtypes go via 24-bit ints."""
    dt = np.dtype(dtype)
    if _out_code(dt) == "i4" and dt.kind == "f":
        return to_float(raw, xp, dt)
    return raw                      # f4/f8 as written, or the raw 24-bit ints


# ---------------------------------------------------------------------------
# approach 1: a table per thread
# ---------------------------------------------------------------------------

def thread_seeds(seed: int, n_threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct RANMAR (ij, kl) pairs for ``n_threads`` streams (Alg. 29).

    A host RANMAR generator (L = 97) seeded with ``seed`` draws two 24-bit
    deviates per candidate, ``s = (u1·2^24 + u2) mod 31329·30082``;
    duplicates are dropped (first occurrence kept, more drawn as needed) so
    that no two threads share a table.
    """
    host = RanmarVec(*seed_to_ijkl(seed), lag=L97)
    chosen: list[np.ndarray] = []
    seen: set[int] = set()
    need = int(n_threads)
    while need > 0:
        u = host.integers24(2 * (need + 16)).astype(np.int64).reshape(-1, 2)
        cand = (u[:, 0] * ONE + u[:, 1]) % N_SEEDS
        _, first = np.unique(cand, return_index=True)
        cand = cand[np.sort(first)]
        cand = np.array([x for x in cand.tolist() if x not in seen], np.int64)[:need]
        seen.update(cand.tolist())
        chosen.append(cand)
        need -= len(cand)
    s = np.concatenate(chosen)
    return (s // (KL_MAX + 1)).astype(np.int32), (s % (KL_MAX + 1)).astype(np.int32)


def per_thread_reference(n_threads: int, n_per_thread: int, seed: int,
                         dtype=np.float32, lag: int = L97) -> np.ndarray:
    """NumPy reference of approach 1: shape ``(n_threads, n_per_thread)``;
    row t is thread t's stream.  Vectorised over threads (all threads share
    i, j and c, so a batch is a 2-D fancy index)."""
    ij, kl = thread_seeds(seed, n_threads)
    gen = RanmarVec(lag=lag, table=fill_tables(ij, kl, lag))
    return to_float(gen.integers24(n_per_thread), np, dtype)


class PerThreadGPU:
    """Approach 1 (Alg. 29–30) on the GPU: ``T`` streams with L = 97 tables."""

    def __init__(self, n_threads: int = T_PAPER, seed: int = 0, lag: int = L97, seeds=None, device=None):
        """``seeds``: the threads' (ij, kl) arrays (default :func:`thread_seeds` of ``seed``), e.g.
        one device's share of a multi-GPU run's seeds (paper 001 §6.5); ``device``: a
        :class:`kernels.gpu.Device` (default the GPU; ``kernels.gpu.device("host")`` runs the same
        kernels on the CPU)."""
        self.dev = _device(device)
        xp = self.xp = self.dev.xp
        self.T = int(n_threads)
        self.lag = int(lag)
        ij, kl = thread_seeds(seed, self.T) if seeds is None else (np.asarray(s, np.int32) for s in seeds)
        self.U = xp.empty(self.T * self.lag, xp.int32)
        grid = (-(-self.T // BLOCK),)
        self.dev.launch(_kernel(self.dev, "f4", "lf_init"), grid, (BLOCK,),
                        (xp.asarray(ij, xp.int32), xp.asarray(kl, xp.int32), np.int32(self.T),
                         np.int32(self.lag), self.U))
        self.I = xp.full(self.T, self.lag - 1, xp.int32)
        self.J = xp.full(self.T, self.lag // 3, xp.int32)
        self.C = xp.full(self.T, C0, xp.int32)
        self.sink = xp.zeros(self.T, xp.uint32)

    def _launch(self, n, out, store, code):
        grid = (-(-self.T // BLOCK),)
        self.dev.launch(_kernel(self.dev, code, "lf_per_thread"), grid, (BLOCK,),
                        (self.U, np.int32(self.T), np.int32(self.lag), self.I, self.J,
                         self.C, np.int32(n), out, np.int32(store), self.sink))

    def generate(self, n_per_thread: int, dtype=np.float32):
        """Next ``n_per_thread`` numbers of every stream: ``(T, n)`` (row t =
        thread t; stored interleaved ``(n, T)`` for coalescing, returned as
        its transpose)."""
        xp = self.xp
        code = _out_code(dtype)
        out = xp.empty((int(n_per_thread), self.T), _OUT_DTYPE[code])
        self._launch(int(n_per_thread), out, 1, code)
        return _finish(out, dtype, xp).T

    def discard(self, n_per_thread: int) -> None:
        """Draw and discard (xor into a sink), as timed in paper Table 1."""
        self._launch(int(n_per_thread), self.sink, 0, "f4")


def gpu_per_thread(n_threads: int, n_per_thread: int, seed: int, dtype=np.float32, device=None):
    """Approach 1: ``(n_threads, n_per_thread)`` array of ``device`` (default the GPU: CuPy), row t =
    stream t."""
    return PerThreadGPU(n_threads, seed, device=device).generate(n_per_thread, dtype)


# ---------------------------------------------------------------------------
# approach 2: one stream from one big table
# ---------------------------------------------------------------------------

class SingleTableGPU:
    """Approach 2 (Alg. 31–32): a single stream from one L = 92 153 table.

    ``SingleTableGPU(seed)`` or ``SingleTableGPU(table=...)`` (int 2^-24
    units).  Bit-identical to ``Ranmar``/``RanmarVec`` with the same table.
    """

    def __init__(self, seed: int = 0, lag: int = L_BIG, table=None, device=None):
        self.dev = _device(device)
        xp = self.xp = self.dev.xp
        self.lag = int(lag)
        if table is None:
            table = table_for(*seed_to_ijkl(seed), self.lag)
        self.U = xp.array(np.asarray(table, np.int32))
        self.i = self.lag - 1
        self.j = self.lag // 3
        self.c = C0
        self.count = 0
        self.sink = xp.zeros(self.lag // 3 + 1, xp.uint32)

    def _run(self, n, out, store, code):
        fn = _kernel(self.dev, code, "lf_single")
        L = self.lag
        done = 0
        for b in batch_schedule(self.count, n, L):
            self.dev.launch(fn, (-(-b // BLOCK),), (BLOCK,),
                            (self.U, np.int32(L), np.int32(self.i), np.int32(self.j), np.int32(b),
                             np.int64(self.c), out, np.int64(done), np.int32(store), self.sink))
            done += b
            self.i = (self.i - b) % L
            self.j = (self.j - b) % L
            self.c = (self.c - b * D) % M
            self.count += b

    def generate(self, n: int, dtype=np.float32):
        code = _out_code(dtype)
        out = self.xp.empty(int(n), _OUT_DTYPE[code])
        self._run(int(n), out, 1, code)
        return _finish(out, dtype, self.xp)

    def discard(self, n: int) -> None:
        self._run(int(n), self.sink, 0, "f4")


def gpu_single_table(n: int, seed: int, dtype=np.float32, lag: int = L_BIG, device=None):
    """Approach 2: first ``n`` numbers of the single stream for ``seed`` (an array of ``device``,
    default the GPU)."""
    return SingleTableGPU(seed, lag, device=device).generate(n, dtype)


def block_sweep_case(size: int) -> launches.SweepCase:
    """The table-per-thread kernel (approach 1) prepared for a block-size sweep: ``size``
    streams, 256 numbers each per launch (a :class:`kernels.launches.SweepCase`)."""
    gen = PerThreadGPU(n_threads=int(size), seed=1)
    k = _kernel(gen.dev, "f4", "lf_per_thread")
    count = 256

    def launch(block: int):
        gen.dev.launch(k, (-(-gen.T // block),), (block,),
                       (gen.U, np.int32(gen.T), np.int32(gen.lag), gen.I, gen.J, gen.C, np.int32(count),
                        gen.sink, np.int32(0), gen.sink))
    return launches.SweepCase("rng_per_thread", k, launch, gen.T * count, "numbers/s")
