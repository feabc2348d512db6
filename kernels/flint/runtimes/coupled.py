"""Coupled cells many steps a launch (issue 23): the translator's grid-synchronised kernels for lines
and rings, and the helper that launches them for :class:`~.translator.TranslatorRuntime`.

A cell of a line or ring reads its neighbours' states (``NB(s, off)``, diffusive coupling on V) at
every step — at every RK4 stage — so the one-launch-a-step path (:func:`.codegen.ts_source`) makes
each launch the barrier between steps (≈ 12 µs a step on an H100).  Here one launch takes a whole
chunk of steps and the barrier is a grid-wide synchronisation inside the kernel: the launch is
cooperative (``cuLaunchCooperativeKernel`` through CuPy's ``Function(...,
enable_cooperative_groups=True)``), which refuses a grid whose blocks cannot all be resident at once,
so no block ever waits on one that has not started.  The barrier (:data:`GRID_SYNC`) has the form of
``cooperative_groups::this_grid().sync()`` (block masters fence, count in on one word whose top bit
flips when the last block arrives, fence again; a one-block grid is just ``__syncthreads``) but is
written out, so the kernel needs no CUDA headers nor separate compilation (``-rdc``).

Two kernels, one source (:func:`coupled_source`):

* ``flint_ts_coupled`` — one cell a thread, the cell's states in registers for the whole launch
  (functions of constants and per-cell parameters computed once before the loop); only the states
  the neighbours read (:func:`coupled_states`, V for the LR lines) go through global memory,
  double-buffered: step j reads buffer j % 2 and writes buffer (j + 1) % 2, RK4 stage derivatives
  likewise, so one barrier a step (Euler) or a stage (RK4) suffices.  Needs every cell's thread
  resident: n ≤ the co-resident grid (blocks a multiprocessor × multiprocessors, CUDA occupancy API).
* ``flint_ts_coupled_stride`` — any n: a grid-stride loop over cells, all states in global memory
  (the runtime's y / y2 / k1 / k2 / acc, as the one-launch path keeps them), one barrier a step or
  stage, the final states copied back into y when the launch took an odd number of steps.

The barrier may instead be one with the neighbouring blocks only (``barrier="neighbours"``:
sequence-number flags; measured no faster, so not the default).

Both read exactly what the one-launch-a-step path reads — a neighbour's state of the previous step,
or ``y + (REAL)cdt·k`` of the previous stage — and evaluate the same generated expressions with the
same operations in the same order (Euler ``y + (REAL)dt·f``; RK4 ``acc = w·k1 (+ w·k2 + w·k3)``,
``y + (REAL)dt·(acc + w·k4)``), so with NVRTC's ``--fmad=false`` the states are bit-identical to it.
Buffers written during the launch are read with plain (coherent) loads: never through a ``const
__restrict__`` pointer, which would let the compiler use the non-coherent read-only cache.

Which path a line takes (:meth:`~.translator.TranslatorRuntime.coupled_plan`) rests on measurements
recorded in benchmarks/RESULTS.md (docs/flint.md, "Lines and rings, many steps a launch")."""
from __future__ import annotations

import numpy as np

from ..compiler import Program
from .codegen import RK4_C, expr_code, invariant_functions, rk4_stage_lines
from .cuda import cuda_module

#: the grid barrier and the coherent neighbour read, shared by both kernels
GRID_SYNC = r"""// Grid-wide barrier of a cooperative launch (all blocks resident): block masters fence, count in on
// *bar (block 0 adds 2^31 - (blocks - 1), the others 1, so the top bit flips when the last arrives),
// spin until it has flipped, fence.  The low 31 bits return to 0 every barrier (*bar starts at 0).
__device__ __forceinline__ void flint_grid_sync(unsigned int* bar) {
    if (gridDim.x == 1) { __syncthreads(); return; }
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
        __threadfence();
        const unsigned int old = atomicAdd(bar, add);
        while (((old ^ *(volatile unsigned int*)bar) & 0x80000000u) == 0u) { }
        __threadfence();
    }
    __syncthreads();
}

// Barrier with the neighbouring blocks only (blocks within `reach` of this one, wrapped when `wrap`):
// publish this block's sequence number `seq` in flags[blockIdx.x], wait until theirs reach it.  A block
// is then at most one barrier ahead of a neighbour, which double-buffered exchanges allow; flags are
// zeroed before the launch.
__device__ __forceinline__ void flint_block_sync(unsigned int* flags, unsigned int seq, int reach, bool wrap) {
    if (gridDim.x == 1) { __syncthreads(); return; }
    __syncthreads();
    if (threadIdx.x == 0) {
        const int nb = (int)gridDim.x;
        __threadfence();
        atomicExch(&flags[blockIdx.x], seq);
        for (int d = -reach; d <= reach; ++d) {
            int b = (int)blockIdx.x + d;
            if (wrap) { b %= nb; if (b < 0) b += nb; } else if (b < 0 || b >= nb) continue;
            while (*(volatile unsigned int*)&flags[b] < seq) { }
        }
        __threadfence();
    }
    __syncthreads();
}

// State s of cell j (wrapped on a ring, net 2; clamped at a line's ends otherwise) at the stage point
// Y + cdt*KI (KI null: Y itself) — flint_nb's arithmetic, with plain loads of buffers this launch writes.
__device__ __forceinline__ REAL flint_cnb(const REAL* Y, const REAL* KI, double cdt, int s, int j, int n, int net) {
    if (net == 2) { j %= n; if (j < 0) j += n; } else { if (j < 0) j = 0; if (j > n - 1) j = n - 1; }
    REAL v = Y[(size_t)s * n + j];
    if (KI) v = v + (REAL)cdt * KI[(size_t)s * n + j];
    return v;
}
#define NB(s, off) flint_cnb(Yc, Kc, cdt, s, i + (off), n, net)
"""

_ARGS = """const REAL* __restrict__ K, const REAL* __restrict__ P, REAL* y, REAL* B0, REAL* B1, REAL* B2, REAL* B3,
    unsigned int* bar, int reach, long long step0, int k, double dt, int n, int net, long long every,
    const int* __restrict__ rec, int n_rec, const int* __restrict__ col, int n_col, REAL* __restrict__ out"""


def coupled_states(prog: Program) -> list[int]:
    """The states a cell's neighbours read (``nb`` nodes), sorted: those exchanged through memory."""
    return sorted({v[0] for (op, _a, v) in prog.nodes if op == "nb"})


#: the barriers between steps / stages: name → (C call in the register kernel, in the stride kernel)
BARRIERS = {"grid": ("flint_grid_sync(bar);", "flint_grid_sync(bar);"),
            "neighbours": ("flint_block_sync(bar, ++seq, reach, net == 2);", "flint_grid_sync(bar);")}


def coupled_source(prog: Program, real: str = "double", integrator: str = "euler", barrier: str = "grid") -> str:
    """CUDA C of the coupled-cells kernels ``flint_ts_coupled`` (states in registers) and
    ``flint_ts_coupled_stride`` (grid-stride loop, states in global memory), both with the argument
    list ``(K, P, y, B0, B1, B2, B3, bar, reach, step0, k, dt, n, net, every, rec, n_rec, col, n_col, out)``:
    ``k`` steps from step number ``step0`` (t = step·dt) of the ``n`` cells whose states are ``y``
    (n_states × n, updated in place), ``net`` 1 line / 2 ring, ``bar`` a zeroed barrier word kept
    between launches, B0–B3 scratch arrays of n_states × n (the runtime's y2, k1, k2, acc).  After
    every step whose number is a multiple of ``every`` the states ``rec[0..n_rec)`` of cell i go to
    ``out[row][r][col[i]]`` (col[i] < 0: not recorded), as :func:`.codegen.ts_loop_source` records.
    Launch cooperatively; the first kernel only with every cell's thread in the grid.

    ``barrier`` (:data:`BARRIERS`): "grid", a grid-wide barrier on the word ``bar``; or "neighbours":
    in the register kernel each block waits only for the blocks within ``reach`` of it (the largest
    neighbour offset ÷ block size, rounded up; wrapped on a ring) on the flags ``bar[0..blocks)``,
    zeroed before each launch (the stride kernel, whose passes make far blocks neighbours on a
    ring, keeps the grid barrier on ``bar[0]``)."""
    if barrier not in BARRIERS:
        raise ValueError(f"barrier must be one of {', '.join(BARRIERS)}, got {barrier!r}")
    sync_reg, sync_stride = BARRIERS[barrier]
    ns = prog.n_states
    used = sorted({v for (op, _a, v) in prog.nodes if op == "state"})
    cs = coupled_states(prog)
    code = expr_code(prog, "c")
    fixed = {f"v{prog.slots[name]}" for name in invariant_functions(prog)}
    d = prog.deriv_slots
    pick = " ".join(f"case {s}: v = y{s}; break;" for s in range(ns))

    def record(ind: str) -> str:
        """Cell i's recorded states (y<k> after the step) into out, on a sampled step."""
        return (f"{ind}if (take && c >= 0) for (int r = 0; r < n_rec; ++r) {{\n"
                f"{ind}    REAL v = 0;\n{ind}    switch (rec[r]) {{ {pick} default: break; }}\n"
                f"{ind}    out[(row * n_rec + r) * n_col + c] = v;\n{ind}}}")

    def stage(ind: str, kin: str | None, exprs) -> list[str]:
        """The stage's own stage values s<k> (from y<k> and, after RK4's first stage, q<k>) and the
        generated expressions."""
        out = [f"{ind}const REAL s{s} = {f'y{s} + (REAL)cdt*{kin}{s}' if kin else f'y{s}'};" for s in used]
        return out + [f"{ind}const REAL {v} = {e};" for v, e in exprs]

    # ---- flint_ts_coupled: one cell a thread, states in registers --------------------------------
    ind = "        "

    def put(buf: str, ind: str) -> list[str]:
        """The live cell's coupled states y<k> into ``buf``."""
        return [f"{ind}if (live) {{ " + " ".join(f"{buf}[(size_t){s}*n+i] = y{s};" for s in cs) + " }"] if cs else []
    loop = [f"    {' '.join(f'const REAL {v} = {e};' for v, e in code if v in fixed)}"] if fixed else []
    exprs = [(v, e) for v, e in code if v not in fixed]
    b = ["        const REAL* Yc = (j & 1) ? B1 : B0; REAL* Yn = (j & 1) ? B0 : B1; (void)Yn;"]
    if integrator == "euler":
        b.append("        { const double t = (double)step * dt; const double cdt = 0.0; const REAL* Kc = nullptr;"
                 " (void)t; (void)cdt; (void)Kc;")
        b += stage(ind + "  ", None, exprs)
        b += [f"          y{s} = y{s} + (REAL)dt * v{d[s]};" for s in range(ns)]
        b += put("Yn", ind + "  ") + ["        }", f"        {sync_reg}"]
    else:
        b.append("        const double t0 = (double)step * dt;")
        b.append("        " + " ".join(f"REAL q{s}, a{s};" for s in range(ns)))
        for j, (c, w) in enumerate(RK4_C):
            kc = "nullptr" if j == 0 else ("B2" if j % 2 else "B3")
            kw = "B2" if j % 2 == 0 else "B3"
            b.append(f"        {{ const double cdt = {c} * dt; const double t = t0 + cdt; const REAL* Kc = {kc};"
                     " (void)cdt; (void)t; (void)Kc;")
            b += stage(ind + "  ", "q" if j else None, exprs)
            b += rk4_stage_lines(ns, d, j, w)
            if j < 3 and cs:
                b.append("          if (live) { " + " ".join(f"{kw}[(size_t){s}*n+i] = v{d[s]};" for s in cs) + " }")
            if j == 3:
                b += put("Yn", ind + "  ")
            b += ["        }", f"        {sync_reg}"]
    load = " ".join(f"REAL y{s} = y[(size_t){s}*n+i];" for s in range(ns))
    store = " ".join(f"y[(size_t){s}*n+i] = y{s};" for s in range(ns))
    reg = f"""extern "C" __global__ void flint_ts_coupled(
    {_ARGS})
{{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = g < n;                     // threads past the last cell still take every barrier
    const int i = live ? g : n - 1;
    {load}
    {f'if (live) {{ {" ".join(f"B0[(size_t){s}*n+i] = y{s};" for s in cs)} }}' if cs else ''}
    unsigned int seq = 0; (void)seq; (void)reach;
    {sync_reg}
    const int c = live ? col[i] : -1;
    long long until = every - step0 % every;     // steps to the next sample
    size_t row = 0;                              // its row in out
{chr(10).join(loop)}
    for (int j = 0; j < k; ++j) {{
        const long long step = step0 + j;
        const bool take = until == 1;
{chr(10).join(b)}
{record("        ")}
        if (--until == 0) {{ until = every; ++row; }}
    }}
    if (live) {{ {store} }}
}}
"""
    # ---- flint_ts_coupled_stride: a grid-stride loop, states in global memory ------------------
    sb = ["        const REAL* Yc = (j & 1) ? B0 : y; REAL* Yn = (j & 1) ? y : B0;"]
    cell = "        for (int i = g; i < n; i += G) {"
    if integrator == "euler":
        sb += [cell, "          const double t = (double)step * dt; const double cdt = 0.0; const REAL* Kc = nullptr;"
               " (void)t; (void)cdt; (void)Kc;",
               "          " + " ".join(f"REAL y{s} = Yc[(size_t){s}*n+i];" for s in range(ns))]
        sb += stage("          ", None, code)
        sb += [f"          y{s} = y{s} + (REAL)dt * v{d[s]};" for s in range(ns)]
        sb += ["          " + " ".join(f"Yn[(size_t){s}*n+i] = y{s};" for s in range(ns)),
               "          const int c = col[i];", record("          "),
               "        }", f"        {sync_stride}"]
    else:
        sb.append("        const double t0 = (double)step * dt;")
        for j, (c, w) in enumerate(RK4_C):
            kc = "nullptr" if j == 0 else ("B1" if j % 2 else "B2")
            kw = "B1" if j % 2 == 0 else "B2"
            sb += [cell, f"          const double cdt = {c} * dt; const double t = t0 + cdt; const REAL* Kc = {kc};"
                   " (void)cdt; (void)t; (void)Kc;",
                   "          " + " ".join(f"REAL y{s} = Yc[(size_t){s}*n+i];" for s in range(ns))]
            if j:
                sb.append("          " + " ".join(f"const REAL q{s} = Kc[(size_t){s}*n+i];" for s in used))
            sb += stage("          ", "q" if j else None, code)
            sb += rk4_stage_lines(ns, d, j, w, acc=lambda s: f"B3[(size_t){s}*n+i]",
                                  keep=lambda s, v, kw=kw: f"{kw}[(size_t){s}*n+i] = {v};")
            if j == 3:
                sb += ["          " + " ".join(f"Yn[(size_t){s}*n+i] = y{s};" for s in range(ns)),
                       "          const int c = col[i];", record("          ")]
            sb += ["        }", f"        {sync_stride}"]
    stride = f"""extern "C" __global__ void flint_ts_coupled_stride(
    {_ARGS})
{{
    const int g = blockIdx.x * blockDim.x + threadIdx.x, G = gridDim.x * blockDim.x;
    unsigned int seq = 0; (void)seq; (void)reach;
    long long until = every - step0 % every;
    size_t row = 0;
    for (int j = 0; j < k; ++j) {{
        const long long step = step0 + j;
        const bool take = until == 1;
{chr(10).join(sb)}
        if (--until == 0) {{ until = every; ++row; }}
    }}
    if (k & 1) for (int i = g; i < n; i += G) {{          // the states ended in B0: back into y
        {" ".join(f"y[(size_t){s}*n+i] = B0[(size_t){s}*n+i];" for s in range(ns))}
    }}
}}
"""
    head = "translator TS, coupled cells, many steps a launch"
    return f"""// Generated by kernels/flint/runtimes/coupled.py ({head}, {integrator}) for model {prog.model.name}
typedef {real} REAL;
{GRID_SYNC}
{reg}
{stride}"""


def cooperative_launch_supported(cp) -> bool:
    """Whether this device takes cooperative launches (CUDA's CooperativeLaunch attribute; assumed
    when this CuPy does not list it)."""
    try:
        return bool(cp.cuda.Device().attributes.get("CooperativeLaunch", 1))
    except Exception:                            # noqa: BLE001 (no attributes: let the launch say)
        return True


class CoupledLoop:
    """The translator's coupled-cells kernels for one program: compiled, sized and launched.

    :meth:`launch` takes ``k`` steps of all cells in one cooperative launch with the runtime's block
    size: the register kernel when every cell's thread fits the co-resident grid at that block size,
    else the grid-stride kernel on the co-resident grid (at most :attr:`max_blocks` blocks, when
    set: tests force the stride path with it).  :attr:`last` names the kernel of the last launch."""

    #: the two kernels' names in :func:`coupled_source`
    KERNELS = ("flint_ts_coupled", "flint_ts_coupled_stride")

    def __init__(self, cp, prog: Program, real: str, integrator: str, options: tuple, barrier: str = "grid"):
        self.cp, self.barrier = cp, barrier
        self.source = coupled_source(prog, real, integrator, barrier)
        self.module = cuda_module(self.source, tuple(options), cooperative=False)
        self.kernels = {name: self.module.function(name) for name in self.KERNELS}
        self.sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
        self.bar = cp.zeros(1, dtype=np.uint32)   # the grid barrier's word, or the blocks' flags
        #: the largest neighbour offset (cells)
        self.reach_cells = max([abs(v[1]) for (op, _a, v) in prog.nodes if op == "nb"] or [1])
        self.max_blocks: int | None = None
        self.last: str | None = None
        self._occupancy: dict = {}

    def max_block(self) -> int:
        """The largest block size (a multiple of 32) both kernels can launch with."""
        try:
            m = min(int(f.max_threads_per_block) for f in self.kernels.values())
        except Exception:                        # noqa: BLE001 (a CuPy that does not say: stay small)
            m = 256
        return max(32, min(1024, m) // 32 * 32)

    def resident_blocks(self, name: str, block: int) -> int:
        """Blocks of ``block`` threads of kernel ``name`` resident at once on the device (the CUDA
        occupancy API × multiprocessors): the largest grid a cooperative launch accepts."""
        key = (name, block)
        if key not in self._occupancy:
            fn = self.kernels[name].kernel
            per_sm = self.cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.ptr, int(block), 0)
            self._occupancy[key] = max(0, int(per_sm)) * self.sms
        return self._occupancy[key]

    def resident_threads(self, block: int = 128) -> int:
        """Threads of the register kernel resident at once at block size ``block``."""
        return self.resident_blocks(self.KERNELS[0], block) * block

    def grid(self, n: int, block: int) -> tuple[str, int]:
        """(kernel, blocks) of a launch of ``n`` cells at block size ``block``."""
        need = -(-n // block)
        reg, stride = self.KERNELS
        if self.max_blocks is None and need <= self.resident_blocks(reg, block):
            return reg, need
        blocks = min(need, self.resident_blocks(stride, block), self.max_blocks or need)
        if blocks < 1:
            raise RuntimeError(f"the coupled-cells kernel cannot launch blocks of {block} threads here")
        return stride, blocks

    def launch(self, rt, step: int, k: int, dt: float, every: int, rec, n_rec: int, col, n_col: int, buf) -> None:
        """``k`` steps of runtime ``rt``'s cells (``rt.y`` in place; ``rt.y2/k1/k2/acc`` scratch): the
        states ``rec`` (device int32, n_rec) of the cells with ``col[i]`` ≥ 0 (device int32, n) into
        ``buf`` as :meth:`~.translator.TranslatorRuntime.run_loop` lays it out."""
        n, bs = rt.n, rt.block_size
        name, blocks = self.grid(n, bs)
        if self.barrier == "neighbours":
            if self.bar.size < blocks:
                self.bar = self.cp.zeros(blocks, dtype=np.uint32)
            else:
                self.bar[:blocks].fill(0)
        reach = -(-self.reach_cells // bs)
        args = (rt.K, rt.P, rt.y, rt.y2, rt.k1, rt.k2, rt.acc, self.bar, np.int32(reach), np.int64(step), np.int32(k),
                np.float64(dt), np.int32(n), np.int32(rt.net_code), np.int64(every), rec, np.int32(n_rec), col,
                np.int32(n_col), buf)
        self.kernels[name].kernel((blocks,), (bs,), args, enable_cooperative_groups=True)
        self.last = name
