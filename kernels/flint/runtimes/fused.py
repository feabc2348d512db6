"""The fused expression mapping (issue 23): the thesis's thread-per-expression layout (paper 004 §5.5,
Fig. 5.7; :class:`~kernels.flint.bytecode.ExpressionLayout`) with a whole chunk of steps in ONE launch
(``flint_fused.cuh``) instead of one launch a phase plus an update launch a stage.

Each step runs every phase in order, a barrier after each, then the integrator update (the
``flint_integrate`` calls of ``flint_update``), a barrier, and the next RK4 stage.  The phase work is
the per-phase kernels' own — IS: :func:`flint_exec` on the lane's bytecode (``flint_is.cu``); TS: the
phase's generated statements (:func:`~.codegen.ts_phase_bodies`) — so the states are bit-identical to
the one-launch-a-phase path (same operations, same order; NVRTC ``--fmad=false``).

Two barriers (:data:`MODES`):

``block``  one block per member (ensembles, a flattened network: independent members): up to 1024
           threads whose warps take the phase's warps w, w + 32, …; ``__syncthreads()`` between
           phases — far cheaper than a grid barrier.  The member's slots, states, stage arrays and
           parameters live in shared memory where they fit (:data:`SHARED`).
``grid``   a cooperative launch (``cooperative_groups::this_grid().sync()``) whose warps take the
           (member, phase warp) pairs: needed where members are coupled (a line or ring reads its
           neighbours' states every stage), and an alternative for a single very wide member.

:func:`choose` picks ``grid`` for coupled cells and ``block`` otherwise — except that the interpreter
takes ``grid`` for a phase of more than ``InterpreterRuntime.fused_grid_warps`` warps (measured:
benchmarks/flint.py, section 3b) — and ``GpuRuntime.fused_mode`` overrides it.  :class:`FusedPhases` is the driver: launches sized to about :attr:`LAUNCH_S` seconds
with CUDA events, recording inside the kernel (the interface of :meth:`Runtime.run_loop`)."""
from __future__ import annotations

# CuPy is imported inside cuda_include only: the app runs without it.
# Imports inside functions: CuPy, so that it stays optional (the host builds and NumPy runtimes run without it).
import os

import numpy as np

from ... import gpu
from ...errors import InvalidParameter
from .codegen import COMMON_SOURCE, CUDA_DIR, NVRTC_OPTIONS, is_source, loopable, ts_phase_bodies
from .cuda import cuda_module
from .memory import samples_in

FUSED_SOURCE = CUDA_DIR / "flint_fused.cuh"
MODES = ("block", "grid")
#: what block mode keeps in shared memory: nothing (global V), the member's slots V, or also its states,
#: RK4 stage arrays and parameters (``GpuRuntime.fused_shared``: None = as much as fits, "states" first;
#: measured 0–22 % faster than "slots", which ran like global V: benchmarks/flint.py section 3b)
SHARED = {False: 0, "slots": 1, "states": 2}
MAX_BLOCK = 1024          # threads a block (block mode: one member's warps)
GRID_BLOCK = 256          # threads a block of a cooperative (grid-mode) launch

_ARGS = ("int p, int i, int w, int lane, const int* __restrict__ code, const int* __restrict__ index, "
         "const int* __restrict__ pstart, const REAL* __restrict__ K, const REAL* __restrict__ P, REAL* V, int vn, "
         "int vi, const REAL* y, const REAL* kin, double cdt, double t, int n, int net, const int* __restrict__ LT")


def choose(prog, grid_warps: int | None = None) -> str:
    """``grid`` where members are coupled (a network: neighbours' states every stage) or where a phase
    has more than ``grid_warps`` warps (the interpreter: spread over SMs rather than a block's rounds),
    else ``block``."""
    wide = grid_warps is not None and max(prog.layout.phase_warps or [0]) > grid_warps
    return "grid" if wide or not loopable(prog) else "block"


def block_threads(prog) -> int:
    """Block mode: threads a block — one warp per warp of the widest phase, at most :data:`MAX_BLOCK`."""
    return max(32, min(MAX_BLOCK, 32 * max(prog.layout.phase_warps or [1])))


def _defines(mode: str, threads: int, shared_v: int) -> str:
    if mode not in MODES:
        raise InvalidParameter(f"fused mode must be one of {', '.join(MODES)}, got {mode!r}")
    return (f"#define FLINT_GRID {int(mode == 'grid')}\n#define FLINT_SHARED_V {int(shared_v) if mode == 'block' else 0}\n"
            f"#define FLINT_THREADS {int(threads)}\n")


def fused_is_source(prog, real: str, mode: str, threads: int, shared_v: int) -> str:
    """The interpreter (``flint_is.cu``) plus ``flint_fused``: a lane runs its bytecode (index −1: idle)."""
    phase = f"""__device__ __forceinline__ void flint_fused_phase({_ARGS})
{{
    const int pc = index[pstart[p] + w * 32 + lane];
    if (pc >= 0) flint_exec(code, pc, GlobalSlots{{V, vn, vi}}, K, P, y, kin, cdt, t, n, net, i, LT, lane);
}}
"""
    return is_source(prog, real) + "\n" + _defines(mode, threads, shared_v) + phase + FUSED_SOURCE.read_text(encoding="utf-8")


def fused_ts_source(prog, real: str, mode: str, threads: int, shared_v: int) -> str:
    """The translator's phase statements (:func:`~.codegen.ts_phase_bodies`) as device functions
    ``flint_tsf_p<k>`` (the sum warps test the phase warp ``wy``) plus ``flint_fused``."""
    bodies, _table = ts_phase_bodies(prog, warp="wy")
    fns = [f"""__device__ __noinline__ void flint_tsf_p{p}(
    const REAL* __restrict__ K, const REAL* __restrict__ P, const REAL* y, const REAL* kin, double cdt, double t,
    REAL* V, int vn, int vi, int n, int net, const int* __restrict__ LT, int i, int wy, int lane)
{{
    const int tid = wy * 32 + lane;
    (void)lane; (void)tid; (void)LT;
{body}
}}
""" for p, body in enumerate(bodies)]
    cases = " ".join(f"case {p}: flint_tsf_p{p}(K, P, y, kin, cdt, t, V, vn, vi, n, net, LT, i, w, lane); break;"
                     for p in range(len(bodies)))
    return f"""// Generated by kernels/flint/runtimes/fused.py (translator TS, fused expression mapping) for model {prog.model.name}
typedef {real} REAL;
{COMMON_SOURCE.read_text(encoding="utf-8")}
#define NB(s, off) flint_nb(y, kin, cdt, s, i + (off), n, net)
#define ST(s) flint_nb(y, kin, cdt, s, i, n, 0)
#define VS(k) V[(size_t)(k)*vn+vi]
{chr(10).join(fns)}
{_defines(mode, threads, shared_v)}__device__ __forceinline__ void flint_fused_phase({_ARGS})
{{
    (void)code; (void)index; (void)pstart;
    switch (p) {{ {cases} default: break; }}
}}
{FUSED_SOURCE.read_text(encoding="utf-8")}"""


def cuda_include() -> tuple[str, ...]:
    """``-I`` of the CUDA toolkit's headers (``<cooperative_groups.h>``), where CuPy knows them."""
    try:
        import cupy as cp
        inc = os.path.join(cp.cuda.get_cuda_path() or "", "include")
        return (f"-I{inc}",) if os.path.isdir(inc) else ()
    except Exception:                        # noqa: BLE001 (NVRTC's own headers only)
        return ()


class FusedPhases:
    """Many steps a launch for a built :class:`~.gpu.GpuRuntime` in the expression mapping.

    ``source(mode, threads, shared level)`` gives the runtime's CUDA source holding ``flint_fused``;
    ``code``/``index``: the IS bytecode and lane index (None for TS).  The runtime's arrays (y, y2,
    k1, k2, acc, V, K, P, its lane table) are used in place; after a chunk of odd length the runtime's
    y and y2 are swapped, as its one-step path swaps them every step."""
    #: seconds a launch aims at (≥ 30 launches a second, each a chance to stream), first launch's steps
    LAUNCH_S = 1.0 / 30.0
    FIRST_STEPS = 128

    def __init__(self, rt, source, code=None, index=None, mode: str | None = None, shared_v=None):
        cp = rt.cp
        self.rt, self.cp = rt, cp
        prog = rt.prog
        lay = prog.layout
        self.mode = mode or choose(prog, rt.fused_grid_warps)
        if self.mode == "block" and not loopable(prog):
            raise InvalidParameter("the fused block mode needs independent members (no neighbour coupling)")
        item = rt.dtype.itemsize
        self.nslot = max(prog.n_slots, 1)
        self.npv = int(rt.P.shape[0])
        if shared_v not in (None, *SHARED):
            raise InvalidParameter(f"fused_shared must be None or one of {', '.join(map(str, SHARED))}, got {shared_v!r}")
        level = SHARED["states" if shared_v is None else shared_v] if self.mode == "block" else 0
        words = (self.nslot, self.nslot + 5 * prog.n_states + self.npv)
        smem_max = int(cp.cuda.Device().attributes.get("MaxSharedMemoryPerBlockOptin", 48 * 1024))
        while level and words[level - 1] * item > smem_max:
            level -= 1                          # what fits
        self.shared_v = level
        self.threads = block_threads(prog) if self.mode == "block" else GRID_BLOCK
        self.source = source(self.mode, self.threads, self.shared_v)
        coop = self.mode == "grid"
        # cooperative_groups.h (CUDA 13's libcu++) wants C++17; the language level leaves the arithmetic alone
        opts = tuple(o.replace("c++14", "c++17") if coop else o for o in NVRTC_OPTIONS) + (cuda_include() if coop else ())
        self.smem = words[level - 1] * item if level else 0
        self._mod = cuda_module(self.source, opts, cooperative=coop)
        self._kernel = self._mod.function("flint_fused", block=self.threads, shared_mem=self.smem,
                                          label=f"flint_fused ({rt.name.upper()}, {self.mode})")
        if self.smem > 48 * 1024:
            self._kernel.max_dynamic_shared_size_bytes = self.smem
        self.blocks = prog.n_members if self.mode == "block" else self._grid_blocks(max(lay.phase_warps or [1]))
        self.d_pstart = cp.asarray(np.asarray(lay.phase_start, dtype=np.int32))
        self.d_pwarps = cp.asarray(np.asarray(lay.phase_warps, dtype=np.int32))
        self.code, self.index = code, index
        self._steps = self.FIRST_STEPS
        self._rec_key = None

    def _grid_blocks(self, max_warps: int) -> int:
        """Co-resident blocks of GRID_BLOCK threads (a cooperative launch's limit), no more than the
        widest phase's (member, warp) pairs need."""
        cp = self.cp
        per_sm = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(self._kernel.kernel.ptr, self.threads, 0))
        sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
        need = -(-self.rt.n * max_warps * 32 // self.threads)
        if per_sm < 1:
            raise InvalidParameter("the fused grid-mode kernel cannot be resident with "
                                   f"{self.threads} threads a block")
        return max(1, min(per_sm * sms, need))

    def info(self) -> dict:
        return {"fused_mode": self.mode, "fused_threads": self.threads, "fused_blocks": self.blocks,
                "fused_shared": {v: k for k, v in SHARED.items()}[self.shared_v]}

    def launch(self, k: int, dt: float, step0: int, every: int, rec, n_rec: int, col, n_col: int, out) -> None:
        """One launch of ``k`` steps from step number ``step0``."""
        rt, i32, f64 = self.rt, np.int32, np.float64
        prog = rt.prog
        args = (self.code, self.index, self.d_pstart, self.d_pwarps, i32(len(prog.layout.phase_warps)), rt.K, rt.P,
                i32(self.npv), rt.V, i32(self.nslot), rt.d_ltab, rt.d_dslot, i32(prog.n_states), i32(rt.n), i32(rt.net_code),
                rt.y, rt.y2, rt.k1, rt.k2, rt.acc, np.int64(step0), i32(k), f64(dt), i32(rt.integrator == "rk4"),
                np.int64(every), rec, i32(n_rec), col, i32(n_col), out)
        self._kernel((self.blocks,), (self.threads,), args, shared_mem=self.smem)
        if k % 2:
            rt.y, rt.y2 = rt.y2, rt.y

    def run_loop(self, k, dt, step0, every, record, cells) -> list:
        """``k`` steps in launches of about :attr:`LAUNCH_S` seconds (timed with CUDA events); the
        samples (after every step whose number is a multiple of ``every``) as views of device buffers."""
        cp, rt = self.cp, self.rt
        n = rt.n
        key = (tuple(record), np.asarray(cells).tobytes())
        if key != self._rec_key:
            colmap = np.full(n, -1, dtype=np.int32)
            colmap[np.asarray(cells, dtype=np.int64)] = np.arange(len(cells), dtype=np.int32)
            self._d_rec = cp.asarray(np.asarray(record, dtype=np.int32).reshape(-1) if len(record) else np.zeros(1, np.int32))
            self._d_col = cp.asarray(colmap)
            self._rec_key = key
        n_rec, n_col = len(record), len(cells)
        out, step, end = [], int(step0), int(step0) + int(k)
        while step < end:
            kl = min(end - step, self._steps)
            m = samples_in(step, kl, every)
            buf = cp.empty((max(m, 1), max(n_rec, 1), max(n_col, 1)), dtype=rt.dtype)
            with gpu.timing.Stopwatch("cuda") as sw:
                self.launch(kl, dt, step, every, self._d_rec, n_rec, self._d_col, n_col, buf)
            ms = sw.ms
            want = int(kl * self.LAUNCH_S * 1000.0 / ms) if ms > 0 else 4 * kl
            if kl == self._steps:                 # a full launch: size the next one from it
                self._steps = max(1, min(4 * kl, want))
            out.extend(buf[j, :n_rec, :n_col] for j in range(m))
            step += kl
        return out

    def advance(self, k: int, dt: float, step0: int) -> None:
        """``k`` steps, nothing recorded."""
        self.run_loop(k, dt, step0, 1 << 62, [], np.zeros(0, dtype=np.int64))
