"""Runtime ``ts``: the translator — the model as generated CUDA C (:func:`.codegen.ts_source`,
thread per cell; :func:`.codegen.ts_phase_build`, thread per expression), compiled per model with
NVRTC (paper 004 §5.6).  In the cell mapping the block size is tuned while it runs (thesis §5.6):
every 100 steps the next block size (+32) is tried until a window gets slower.

Many steps a launch (issue 23): for cells without neighbour coupling (ensembles, cell mapping) the
kernel of :func:`.codegen.ts_loop_source` takes a whole chunk of steps with the states in registers
and records the samples itself; the driver is the one TS shares with IS (:meth:`.gpu.GpuRuntime.run_loop`:
each launch timed with CUDA events and the next one sized to about ``LAUNCH_S`` seconds, so a caller
streaming chunks still gets its updates; the block size tuned between launches of ``TUNE_STEPS``
steps), this class supplies the kernel and its arguments.  Lines and rings read their neighbours'
states every step (every RK4 stage): they take many steps a launch with a grid-wide barrier between
steps/stages (:mod:`.coupled`, a cooperative launch) where :meth:`TranslatorRuntime.coupled_plan`
says it pays, else one launch a step (a stage)."""
from __future__ import annotations

# CuPy is imported inside the methods that use it: the app runs without it.
# Imports inside functions: CuPy, so that it stays optional (asked only for the GPU's limits).
import numpy as np

from ... import gpu
from .codegen import NVRTC_OPTIONS, loopable, ts_loop_source, ts_phase_build, ts_source
from .coupled import CoupledLoop, cooperative_launch_supported
from .cuda import cuda_module
from .fused import fused_ts_source
from .gpu import GpuRuntime
from .printers import LiteralCPrinter


class TranslatorRuntime(GpuRuntime):
    name = "ts"
    help = "the translator: the model as generated CUDA C on the GPU (compiled per model)"
    compiler = "NVRTC"
    #: the many-steps kernel: constants kept in __constant__ memory at most (more: read from a kernel
    #: argument); launches sized and tuned by :meth:`GpuRuntime.run_loop`
    CONST_MAX = 4096
    #: whether ensembles use the many-steps kernel (False: one launch a step, as before issue 23)
    loop_enabled = True
    #: NVRTC options of the many-steps kernel (benchmarks/flint.py also times FMA contraction on)
    loop_options = NVRTC_OPTIONS
    #: cap the many-steps kernel's registers so that every cell's thread is resident at once
    #: (:meth:`one_wave_cap`; results unchanged: the same instructions, spills aside), at least
    #: MIN_REGISTERS a thread
    fit_one_wave = True
    #: the many-steps kernel writes the model's constants as literals (when at most CONST_MAX, all
    #: finite) instead of reading a ``__constant__`` table: the compiler folds them (bit-identical)
    literal_constants = True
    MIN_REGISTERS = 64
    #: largest step body (functions × RK stages) compiled as a many-steps kernel: a flattened network
    #: of thousands of equations in one thread keeps the one-step kernel (its compile time)
    LOOP_MAX_FUNCTIONS = 6000
    #: coupled cells (lines, rings): "auto" (:meth:`coupled_plan`), "sync" (always the grid-synchronised
    #: kernels of :mod:`.coupled`) or "step" (one launch a step); with ``loop_enabled`` False: "step"
    coupled_mode = "auto"
    #: the stride kernel's grid at most this many blocks (None: the co-resident grid; tests force the
    #: grid-stride path with a small value)
    coupled_max_blocks: int | None = None
    #: the barrier between the coupled kernels' steps (:data:`.coupled.BARRIERS`): "grid" (grid-wide)
    #: or "neighbours" (each block waits for its neighbouring blocks only)
    coupled_barrier = "grid"
    #: coupled cells up to this many run as one block, untuned: the grid barrier becomes a
    #: ``__syncthreads`` (LR line of 100 cells, H200: 0.43 s per 100,000 steps in one block of 128
    #: against 0.69–0.72 s in the 2–4 blocks the +32 tuning settled on)
    COUPLED_ONE_BLOCK = 128
    #: the block size at which :meth:`coupled_plan` counts the co-resident threads
    COUPLED_RULE_BLOCK = 128

    def _compile(self, cp, real: str) -> None:
        prog = self.prog
        self._loop = None
        self.coupled = None
        self.loop_source = None
        self._loop_const = self._loop_literal = False
        body = len(prog.order) * (4 if self.integrator == "rk4" else 1)
        coupled = self.mapping == "cell" and self.loop_enabled and not loopable(prog) and \
            body <= self.LOOP_MAX_FUNCTIONS and self.coupled_mode != "step" and cooperative_launch_supported(cp)
        if coupled:                              # lines and rings: grid-synchronised, many steps a launch
            self.coupled = CoupledLoop(cp, prog, real, self.integrator, self.loop_options, self.coupled_barrier)
            self.coupled.max_blocks = self.coupled_max_blocks
            resident = self.coupled.resident_threads(self.COUPLED_RULE_BLOCK)
            if self.coupled_mode == "auto" and self.coupled_plan(self.n, resident) == "step":
                self.coupled = None
            else:
                self.loop_source = self.coupled.source
                self._loop_steps, self._rec_key = self.TUNE_STEPS, None
                self._loop_max_block = self.coupled.max_block()
        if self.mapping == "cell" and self.loop_enabled and loopable(prog) and body <= self.LOOP_MAX_FUNCTIONS:
            self._loop_const = len(prog.consts) <= self.CONST_MAX
            self._loop_literal = self._loop_const and self.literal_constants and LiteralCPrinter.applies(prog.consts)
            self.loop_source = ts_loop_source(prog, real, self.integrator, self._loop_const, self._loop_literal)
            self._loop_mod = cuda_module(self.loop_source, self.loop_options)
            loop = self._loop_mod.function("flint_ts_loop", block=32)
            self.loop_registers = (self._registers(loop), None)
            natural = self.loop_registers[0]
            cap = self.one_wave_cap(natural) if self.fit_one_wave and natural else None
            if cap:
                self._loop_mod = cuda_module(self.loop_source, tuple(self.loop_options) + (f"--maxrregcount={cap}",))
                loop = self._loop_mod.function("flint_ts_loop", block=32, label=f"flint_ts_loop (maxrregcount {cap})")
                self.loop_registers = (self.loop_registers[0], self._registers(loop))
            self._loop_ready(loop)
        if self.mapping == "expression":
            self.source, lt = ts_phase_build(prog, real)
            self.d_ltab = cp.asarray(lt)
            mod = cuda_module(self.source)
            self._phase_kernels = [mod.function(f"flint_ts_p{p}", block=32) for p in range(len(prog.layout.phase_warps))]
            self._update_kernel = mod.function("flint_update", block=128)
        else:
            self.source = ts_source(prog, real)
            # compiled at build, or (with the many-steps kernel) lazily should a caller step it
            self._step_kernel = cuda_module(self.source).function("flint_ts_step", block=self.block_size, lazy=True)
            self._kernel = None if self.loops() else self._step_kernel
        # the expression mapping keeps blocks of one warp (warp-parallel sums, redundant threads)
        self._tuning = self.mapping == "cell"
        self._tune_ev = None
        if self.loops():
            self.block_size = 32                 # the first tuning launch
        if self.coupled is not None and self.n <= self.COUPLED_ONE_BLOCK:
            self.block_size = -(-self.n // 32) * 32   # one block: the barrier is a __syncthreads
            self._tuning = False

    @staticmethod
    def _registers(fn) -> int | None:
        """Registers a thread of the compiled kernel ``fn`` uses (CuPy's ``RawKernel.num_regs``), or
        None where this CuPy does not say."""
        try:
            return int(fn.num_regs)
        except Exception:                    # noqa: BLE001 (an informational attribute only)
            return None

    def one_wave_cap(self, regs: int) -> int | None:
        """The register cap that lets all ``n`` threads be resident at once, or None when they already
        are, cannot be (more threads than the SMs hold), or the cap would be below
        :attr:`MIN_REGISTERS`.  Each thread runs a whole launch, so threads that do not fit wait for
        a second wave of the full launch time (e.g. 100,000 cells at 128 registers: 1.5 waves)."""
        import cupy as cp
        a = cp.cuda.Device().attributes
        sms, regs_sm, thr_sm = a["MultiProcessorCount"], a["MaxRegistersPerMultiprocessor"], \
            a["MaxThreadsPerMultiProcessor"]
        per_sm = -(-self.n // sms)
        per_sm = -(-per_sm // 64) * 64                 # whole warps, a little slack for the block size
        if per_sm > thr_sm:
            return None
        resident = regs_sm // (-(-regs // 8) * 8 * 32) * 32
        if resident >= per_sm:
            return None
        cap = regs_sm // per_sm // 8 * 8
        return cap if cap >= self.MIN_REGISTERS else None

    def build(self, prog, dtype) -> None:
        super().build(prog, dtype)
        if self.mapping == "cell":
            self._kernel = self._step_kernel
        if self._loop is not None and self._loop_const and not self._loop_literal and self.K.size:
            cp = self.cp
            kc = cp.ndarray((self.K.size,), dtype=self.dtype, memptr=self._loop_mod.compiled.get_global("K"))
            kc[...] = self.K

    def loops(self) -> bool:
        return self.coupled is not None or super().loops()

    @staticmethod
    def coupled_plan(n: int, resident: int) -> str:
        """"sync" (the grid-synchronised kernels of :mod:`.coupled`) or "step" (one launch a step) for
        ``n`` coupled cells when ``resident`` threads of the register kernel (one cell a thread) fit
        the device at once at :attr:`COUPLED_RULE_BLOCK` threads a block.  The measured rule
        (docs/flint.md; numbers in benchmarks/RESULTS.md): while every cell has its resident thread
        the grid barrier (a few µs) beats a launch a step; past that the grid-stride kernel runs
        several cells a thread one after another and loses to one launch a step, whose cells all
        run in parallel."""
        return "sync" if n <= resident else "step"

    def _fused_source(self, mode: str, threads: int, shared_v: int) -> str:
        return fused_ts_source(self.prog, "double" if self.dtype == np.float64 else "float", mode, threads, shared_v)

    def _loop_args(self, common: list) -> tuple:
        return tuple(([] if self._loop_const else [self.K]) + common)

    def _loop_launch(self, grid, block, args, shared, step, kl, dt, every, n_rec, n_col, buf) -> None:
        """Lines and rings: the grid-synchronised kernels of :mod:`.coupled` (their own grid and
        arguments); ensembles: the shared driver's launch."""
        if self.coupled is not None:
            self.coupled.launch(self, step, kl, dt, every, self._d_rec, n_rec, self._d_col, n_col, buf)
        else:
            super()._loop_launch(grid, block, args, shared, step, kl, dt, every, n_rec, n_col, buf)

    def _cell_args(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        f64 = np.float64
        return (self.K, self.P, y, kin, f64(cdt), f64(t), f64(dt), np.int32(mode), f64(w), kout, self.acc, yout,
                np.int32(self.n), np.int32(self.net_code))

    def _phase_args(self, p, y, kin, cdt, t):
        f64, i32 = np.float64, np.int32
        return (self.K, self.P, y, kin, f64(cdt), f64(t), self.V, i32(self.n), i32(self.net_code), self.d_ltab)

    def start(self) -> None:
        self._tune_ev = None          # a tuning window never spans two advance() calls

    def before_step(self, step: int) -> None:
        if self._tuning and step % self.TUNE_WINDOW == 0:
            self._tune_ev = self._tune_step(self._tune_ev)

    def _tune_step(self, window):
        """Every window try the next block size (+32); stop when a window gets slower (thesis §5.6).
        ``window``: the stopwatch started at the last window's start (None: none yet); returns the
        next window's."""
        if window is None:
            self.block_size = 32
            return gpu.timing.Stopwatch("cuda").start()
        now = window.lap()
        ms = window.ms
        self.block_history.append((self.block_size, ms))
        if len(self.block_history) >= 2 and ms > self.block_history[-2][1]:
            self.block_size = self.block_history[-2][0]
            self._tuning = False
            return None
        if self.block_size + 32 > 1024:
            self._tuning = False
            return None
        self.block_size += 32
        return now

    def info(self) -> dict:
        return {**super().info(), "block_size": self.block_size,
                "coupled_kernel": getattr(getattr(self, "coupled", None), "last", None)}
