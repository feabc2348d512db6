"""Runtime ``ts``: the translator — the model as generated CUDA C (:func:`.codegen.ts_source`,
thread per cell; :func:`.codegen.ts_phase_build`, thread per expression), compiled per model with
NVRTC (paper 004 §5.6).  In the cell mapping the block size is tuned while it runs (thesis §5.6):
every 100 steps the next block size (+32) is tried until a window gets slower."""
from __future__ import annotations

import numpy as np

from .codegen import NVRTC_OPTIONS, ts_phase_build, ts_source
from .gpu import GpuRuntime


class TranslatorRuntime(GpuRuntime):
    name = "ts"
    help = "the translator: the model as generated CUDA C on the GPU (compiled per model)"
    compiler = "NVRTC"
    #: steps a block size is timed over while tuning
    TUNE_WINDOW = 100

    def _compile(self, cp, real: str) -> None:
        prog = self.prog
        if self.mapping == "expression":
            self.source, lt = ts_phase_build(prog, real)
            self.d_ltab = cp.asarray(lt)
            mod = cp.RawModule(code=self.source, options=NVRTC_OPTIONS)
            self._phase_kernels = [mod.get_function(f"flint_ts_p{p}") for p in range(len(prog.layout.phase_warps))]
            self._update_kernel = mod.get_function("flint_update")
        else:
            self.source = ts_source(prog, real)
            self._kernel = cp.RawKernel(self.source, "flint_ts_step", options=NVRTC_OPTIONS)
        # the expression mapping keeps blocks of one warp (warp-parallel sums, redundant threads)
        self._tuning = self.mapping == "cell"
        self._tune_ev = None

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
