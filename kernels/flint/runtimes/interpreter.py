"""Runtime ``is``: the bytecode interpreter on the GPU (``flint_is.cu``, paper 004 §5.5): one
compiled kernel for every model of a size class — the model is data (bytecode, constants, per-member
parameter table)."""
from __future__ import annotations

import numpy as np

from .codegen import NVRTC_OPTIONS, is_source
from .fused import fused_is_source
from .gpu import GpuRuntime


class InterpreterRuntime(GpuRuntime):
    name = "is"
    help = "the bytecode interpreter on the GPU (one compiled kernel for every model)"
    #: fused expression mapping: the grid barrier beyond 3 rounds of a 1024-thread block (Mix's 127-warp
    #: phase ran faster spread over SMs; TS's compiled phases did not, see benchmarks/RESULTS.md)
    fused_grid_warps = 96

    def _compile(self, cp, real: str) -> None:
        prog = self.prog
        self.source = is_source(prog, real)
        if self.mapping == "expression":
            lay = prog.layout
            mod = cp.RawModule(code=self.source, options=NVRTC_OPTIONS)
            self._phase_kernels = [mod.get_function("flint_is_phase")] * len(lay.phase_warps)
            self._update_kernel = mod.get_function("flint_update")
            self.d_code = cp.asarray(lay.code if lay.code.size else np.zeros(1, np.int32))
            self.d_index = cp.asarray(lay.index)
            self.d_ltab = cp.asarray(lay.lane_table)
        else:
            self._kernel = cp.RawKernel(self.source, "flint_is_step", options=NVRTC_OPTIONS)
            self.d_code = cp.asarray(prog.code)
            self.d_index = cp.asarray(prog.index) if prog.index is not None else None

    def _fused_source(self, mode: str, threads: int, shared_v: int) -> str:
        return fused_is_source(self.prog, "double" if self.dtype == np.float64 else "float", mode, threads, shared_v)

    def _fused_code(self) -> tuple:
        return self.d_code, self.d_index

    def _cell_args(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        f64 = np.float64
        return (self.d_code, self.d_index, self.K, self.P, y, kin, f64(cdt), f64(t), f64(dt), np.int32(mode),
                f64(w), kout, self.acc, yout, self.d_dslot, np.int32(self.prog.n_states), np.int32(self.n),
                np.int32(self.net_code))

    def _phase_args(self, p, y, kin, cdt, t):
        lay, f64, i32 = self.prog.layout, np.float64, np.int32
        return (self.d_code, self.d_index, i32(lay.phase_start[p]), self.K, self.P, y, kin, f64(cdt), f64(t),
                self.V, i32(self.n), i32(self.net_code), self.d_ltab)
