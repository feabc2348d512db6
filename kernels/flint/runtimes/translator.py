"""Runtime ``ts``: the translator — the model as generated CUDA C (:func:`.codegen.ts_source`,
thread per cell; :func:`.codegen.ts_phase_build`, thread per expression), compiled per model with
NVRTC (paper 004 §5.6).  In the cell mapping the block size is tuned while it runs (thesis §5.6):
every 100 steps the next block size (+32) is tried until a window gets slower.

Many steps a launch (issue 23): for cells without neighbour coupling (ensembles, cell mapping) the
kernel of :func:`.codegen.ts_loop_source` takes a whole chunk of steps with the states in registers
and records the samples itself (:meth:`TranslatorRuntime.run_loop`); each launch is timed with CUDA
events and the next one sized to about :attr:`LAUNCH_S` seconds, so a caller streaming chunks still
gets its updates; the block size is tuned between launches of :attr:`TUNE_STEPS` steps.  Lines and
rings read their neighbours' states every step and keep one launch a step (a stage)."""
from __future__ import annotations

import numpy as np

from .codegen import NVRTC_OPTIONS, loopable, ts_loop_source, ts_phase_build, ts_source
from .fused import fused_ts_source
from .gpu import GpuRuntime
from .memory import samples_in


class TranslatorRuntime(GpuRuntime):
    name = "ts"
    help = "the translator: the model as generated CUDA C on the GPU (compiled per model)"
    compiler = "NVRTC"
    #: steps a block size is timed over while tuning
    TUNE_WINDOW = 100
    #: the many-steps kernel: seconds a launch aims at (≥ 30 launches a second, each a chance to
    #: stream), steps a launch while the block size is tuned, constants kept in __constant__ memory
    #: at most (more: read from a kernel argument), device bytes of recorded samples a launch at most
    LAUNCH_S = 1.0 / 30.0
    TUNE_STEPS = 256
    CONST_MAX = 4096
    OUT_MAX_BYTES = 1 << 28
    #: whether ensembles use the many-steps kernel (False: one launch a step, as before issue 23)
    loop_enabled = True
    #: NVRTC options of the many-steps kernel (benchmarks/flint.py also times FMA contraction on)
    loop_options = NVRTC_OPTIONS
    #: cap the many-steps kernel's registers so that every cell's thread is resident at once
    #: (:meth:`one_wave_cap`; results unchanged: the same instructions, spills aside), at least
    #: MIN_REGISTERS a thread
    fit_one_wave = False
    MIN_REGISTERS = 64
    #: largest step body (functions × RK stages) compiled as a many-steps kernel: a flattened network
    #: of thousands of equations in one thread keeps the one-step kernel (its compile time)
    LOOP_MAX_FUNCTIONS = 6000

    def _compile(self, cp, real: str) -> None:
        prog = self.prog
        self._loop = None
        self.loop_source = None
        body = len(prog.order) * (4 if self.integrator == "rk4" else 1)
        if self.mapping == "cell" and self.loop_enabled and loopable(prog) and body <= self.LOOP_MAX_FUNCTIONS:
            self._loop_const = len(prog.consts) <= self.CONST_MAX
            self.loop_source = ts_loop_source(prog, real, self.integrator, self._loop_const)
            self._loop_mod = cp.RawModule(code=self.loop_source, options=tuple(self.loop_options))
            self._loop = self._loop_mod.get_function("flint_ts_loop")
            self.loop_registers = (self._registers(self._loop), None)
            natural = self.loop_registers[0]
            cap = self.one_wave_cap(natural) if self.fit_one_wave and natural else None
            if cap:
                self._loop_mod = cp.RawModule(code=self.loop_source,
                                              options=tuple(self.loop_options) + (f"--maxrregcount={cap}",))
                self._loop = self._loop_mod.get_function("flint_ts_loop")
                self.loop_registers = (self.loop_registers[0], self._registers(self._loop))
            self._loop_steps = self.TUNE_STEPS
            self._rec_key = None
            try:                                     # the largest block its registers allow
                self._loop_max_block = min(1024, int(self._loop.max_threads_per_block)) // 32 * 32
            except Exception:                        # noqa: BLE001 (a CuPy that does not say: stay small)
                self._loop_max_block = 256
        if self.mapping == "expression":
            self.source, lt = ts_phase_build(prog, real)
            self.d_ltab = cp.asarray(lt)
            mod = cp.RawModule(code=self.source, options=NVRTC_OPTIONS)
            self._phase_kernels = [mod.get_function(f"flint_ts_p{p}") for p in range(len(prog.layout.phase_warps))]
            self._update_kernel = mod.get_function("flint_update")
        else:
            self.source = ts_source(prog, real)
            # compiled at build, or (with the many-steps kernel) lazily should a caller step it
            self._step_kernel = cp.RawKernel(self.source, "flint_ts_step", options=NVRTC_OPTIONS)
            self._kernel = None if self._loop is not None else self._step_kernel
        # the expression mapping keeps blocks of one warp (warp-parallel sums, redundant threads)
        self._tuning = self.mapping == "cell"
        self._tune_ev = None
        if self._loop is not None:
            self.block_size = 32                 # the first tuning launch

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
        if self._loop is not None and self._loop_const and self.K.size:
            cp = self.cp
            kc = cp.ndarray((self.K.size,), dtype=self.dtype, memptr=self._loop_mod.get_global("K"))
            kc[...] = self.K

    def loops(self) -> bool:
        return self._loop is not None or super().loops()

    def _fused_source(self, mode: str, threads: int, shared_v: int) -> str:
        return fused_ts_source(self.prog, "double" if self.dtype == np.float64 else "float", mode, threads, shared_v)

    def run_loop(self, k, dt, step0, every, record, cells) -> list:
        """``k`` steps in launches of the many-steps kernel; the samples are views of device buffers."""
        if self._loop is None:                   # the expression mapping's fused kernel (GpuRuntime)
            return super().run_loop(k, dt, step0, every, record, cells)
        cp, n = self.cp, self.n
        key = (tuple(record), np.asarray(cells).tobytes())
        if key != self._rec_key:
            col = np.full(n, -1, dtype=np.int32)
            col[np.asarray(cells, dtype=np.int64)] = np.arange(len(cells), dtype=np.int32)
            self._d_rec = cp.asarray(np.asarray(record, dtype=np.int32).reshape(-1))
            self._d_col = cp.asarray(col)
            self._rec_key = key
        n_rec, n_col = len(record), len(cells)
        per_sample = max(1, n_rec * n_col * self.dtype.itemsize)
        max_steps = max(1, self.OUT_MAX_BYTES // per_sample) * every
        out, step, end = [], int(step0), int(step0) + int(k)
        while step < end:
            kl = min(end - step, self._loop_steps, max_steps)
            m = samples_in(step, kl, every)
            buf = cp.empty((max(m, 1), max(n_rec, 1), max(n_col, 1)), dtype=self.dtype)
            bs = self.block_size
            args = ([] if self._loop_const else [self.K]) + [
                self.P, self.y, np.int64(step), np.int32(kl), np.float64(dt), np.int32(n), np.int64(every),
                self._d_rec, np.int32(n_rec), self._d_col, np.int32(n_col), buf]
            ev0 = cp.cuda.Event()
            ev0.record()
            self._loop(((n + bs - 1) // bs,), (bs,), tuple(args))
            ev1 = cp.cuda.Event()
            ev1.record()
            ev1.synchronize()
            self._adapt(kl, cp.cuda.get_elapsed_time(ev0, ev1))
            out.extend(buf[j, :n_rec, :n_col] for j in range(m))
            step += kl
        return out

    def _adapt(self, kl: int, ms: float) -> None:
        """After a launch of ``kl`` steps that took ``ms``: while tuning, the next block size (+32)
        until a launch gets slower per step (thesis §5.6, one launch a window); then the next launch's
        length, about :attr:`LAUNCH_S` seconds (at most 4× the last)."""
        if self._tuning:
            if kl < self.TUNE_STEPS:             # the tail of a chunk: too short to judge
                return
            per = ms * self.TUNE_WINDOW / kl     # ms per TUNE_WINDOW steps, as the stepped tuning records
            hist = self.block_history
            hist.append((self.block_size, per))
            if len(hist) >= 2 and per > hist[-2][1]:
                self.block_size = hist[-2][0]
                self._tuning = False
            elif self.block_size + 32 > self._loop_max_block:
                self._tuning = False
            else:
                self.block_size += 32
            return
        want = int(kl * self.LAUNCH_S * 1000.0 / ms) if ms > 0 else 4 * kl
        self._loop_steps = max(1, min(4 * kl, want))

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

    def _tune_step(self, ev):
        """Every window try the next block size (+32); stop when a window gets slower (thesis §5.6)."""
        cp = self.cp
        now = cp.cuda.Event()
        now.record()
        if ev is not None:
            now.synchronize()
            ms = cp.cuda.get_elapsed_time(ev, now)
            self.block_history.append((self.block_size, ms))
            if len(self.block_history) >= 2 and ms > self.block_history[-2][1]:
                self.block_size = self.block_history[-2][0]
                self._tuning = False
                return None
            if self.block_size + 32 > 1024:
                self._tuning = False
                return None
            self.block_size += 32
        else:
            self.block_size = 32
        return now

    def info(self) -> dict:
        return {**super().info(), "block_size": self.block_size}
