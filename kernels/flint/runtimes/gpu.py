"""What the GPU runtimes (``is``, ``ts``) share: CuPy arrays, the integrator's launch sequence, the
thread-per-expression phase launches, device-side sampling and blow-up check.  Sources are compiled
with NVRTC through CuPy with :data:`~.codegen.NVRTC_OPTIONS` (no FMA contraction).

Cell mapping: one thread integrates one member/cell (blocks of :attr:`block_size`).  Expression
mapping (thesis §5.5.2, Fig. 5.8): one launch a phase, grid (members, warps), 32 threads a block,
then ``flint_update`` (flint_common.cuh) applies the integrator — or, by default (issue 23), the
fused kernel of :mod:`.fused`: a chunk of steps in one launch, barriers between the phases, the same
bits."""
from __future__ import annotations

import numpy as np

from ...errors import BackendUnavailable
from .base import RK4_STAGES, Runtime


class GpuRuntime(Runtime):
    """Base of the CUDA runtimes: subclasses set :meth:`_compile` (kernels, sources) and the
    argument lists :meth:`_cell_args` / :meth:`_phase_args`."""
    device = "gpu"
    #: expression mapping: run chunks of steps through the fused kernel (:mod:`.fused`; False: one
    #: launch a phase and an update launch a stage, the thesis's own scheme); its barrier: "block",
    #: "grid" or None (:func:`.fused.choose`: grid for coupled cells); what its blocks keep in shared
    #: memory (:data:`.fused.SHARED`; None: as much as fits)
    fused_enabled = True
    fused_mode: str | None = None
    fused_shared: str | bool | None = None
    #: take the grid barrier for a member whose widest phase has more warps than this (None: never)
    fused_grid_warps: int | None = None

    @classmethod
    def unavailable(cls) -> str | None:
        from ... import backend as bk
        ok, why = bk.gpu_available()
        return None if ok else f"runtime {cls.name} needs a GPU: {why}"

    @classmethod
    def memory(cls, n_states, n_functions, n, n_pvar, mapping, itemsize):
        return 0, itemsize * n * (5 * n_states + n_pvar + (n_functions if mapping == "expression" else 0))

    def build(self, prog, dtype) -> None:
        why = self.unavailable()
        if why:
            raise BackendUnavailable(why)
        import cupy as cp
        self.cp = cp
        self.prog, self.dtype = prog, np.dtype(dtype)
        real = "double" if self.dtype == np.float64 else "float"
        self.d_dslot = cp.asarray(np.array(prog.deriv_slots, dtype=np.int32))
        self._kernel = None
        self._compile(cp, real)
        if self.mapping == "expression":
            self.V = cp.zeros((max(prog.n_slots, 1), self.n), dtype=self.dtype)
        if self._kernel is not None:
            self._kernel.compile()
        self.y = cp.zeros((prog.n_states, self.n), dtype=self.dtype)
        self.y2 = cp.empty_like(self.y)
        self.P = cp.asarray(prog.pvar_values.astype(self.dtype)) if prog.pvar_values.size \
            else cp.zeros((1, self.n), dtype=self.dtype)
        self.K = cp.asarray(prog.consts.astype(self.dtype))
        self.k1 = cp.zeros_like(self.y)
        self.k2 = cp.zeros_like(self.y)
        self.acc = cp.zeros_like(self.y)
        self._fused = None
        if self.mapping == "expression" and self.fused_enabled:
            from .fused import FusedPhases
            self._fused = FusedPhases(self, self._fused_source, *self._fused_code(), mode=self.fused_mode,
                                      shared_v=self.fused_shared)

    def _fused_source(self, mode: str, threads: int, shared_v: int) -> str:
        """The CUDA source holding ``flint_fused`` (:mod:`.fused`) for this runtime."""
        raise NotImplementedError

    def _fused_code(self) -> tuple:
        """(bytecode, lane index) device arrays the fused kernel reads (the interpreter's), or Nones."""
        return None, None

    def _compile(self, cp, real: str) -> None:
        raise NotImplementedError

    # --- launches ------------------------------------------------------------------------------
    def _launch(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        if self.mapping == "expression":
            return self._launch_phases(y, kin, cdt, t, dt, mode, w, kout, yout)
        bs = self.block_size
        grid = ((self.n + bs - 1) // bs,)
        self._kernel(grid, (bs,), self._cell_args(y, kin, cdt, t, dt, mode, w, kout, yout))

    def _launch_phases(self, y, kin, cdt, t, dt, mode, w, kout, yout):
        """Thesis mapping: one launch a phase, grid (members, warps), 32 threads a block."""
        lay, f64, i32 = self.prog.layout, np.float64, np.int32
        for p, kern in enumerate(self._phase_kernels):
            if lay.phase_warps[p] == 0:
                continue
            grid = (self.n, lay.phase_warps[p])
            kern(grid, (32,), self._phase_args(p, y, kin, cdt, t))
        bs = 128
        self._update_kernel(((self.n + bs - 1) // bs,), (bs,),
                            (self.V, self.d_dslot, y, f64(dt), i32(mode), f64(w), kout, self.acc, yout,
                             i32(self.prog.n_states), i32(self.n)))

    def _step(self, dt, t):
        if self.integrator == "euler":
            self._launch(self.y, None, 0.0, t, dt, 0, 0.0, None, self.y2)
        else:
            kin, kout = None, self.k1
            for j, (c, w) in enumerate(RK4_STAGES):
                mode = 1 if j == 0 else (3 if j == 3 else 2)
                self._launch(self.y, kin, c * dt, t + c * dt, dt, mode, w, kout, self.y2)
                kin, kout = kout, (self.k2 if kout is self.k1 else self.k1)
        self.y, self.y2 = self.y2, self.y

    def before_step(self, step: int) -> None:
        """Hook before each step (the translator's block-size tuning)."""

    def advance(self, k: int, dt: float, step0: int) -> None:
        if self._fused is not None:
            return self._fused.advance(k, dt, step0)
        for step in range(int(step0), int(step0) + int(k)):
            self.before_step(step)
            self._step(dt, step * dt)

    def loops(self) -> bool:
        return self._fused is not None

    def run_loop(self, k, dt, step0, every, record, cells) -> list:
        if self._fused is not None:
            return self._fused.run_loop(k, dt, step0, every, record, cells)
        return super().run_loop(k, dt, step0, every, record, cells)

    def info(self) -> dict:
        return {**super().info(), **(self._fused.info() if self._fused is not None else {})}

    # --- states --------------------------------------------------------------------------------
    def state(self) -> np.ndarray:
        return self.cp.asnumpy(self.y)

    def set_state(self, y) -> None:
        y = np.asarray(y, dtype=self.dtype).reshape(self.prog.n_states, self.n)
        self.y = self.cp.asarray(y)

    def collect(self, samples: list, n_record: int) -> np.ndarray:
        cp = self.cp
        return cp.asnumpy(cp.stack(samples)) if samples else np.zeros((0, n_record, 0))

    def finite(self) -> bool:
        return bool(self.cp.all(self.cp.isfinite(self.y)))

    def synchronize(self) -> None:
        self.cp.cuda.Device().synchronize()
