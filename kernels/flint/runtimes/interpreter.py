"""Runtime ``is``: the bytecode interpreter on the GPU (``flint_is.cu``, paper 004 §5.5): one
compiled kernel for every model of a size class — the model is data (bytecode, constants, per-member
parameter table).

Many steps a launch (issue 23): ensembles whose members share one bytecode (:func:`.is_loop.packable`)
run the interpreter's loop kernel (``flint_is_loop.cu``, source :func:`.is_loop.is_loop_source`): one
thread a cell interprets a packed form of the bytecode (:func:`.is_loop.pack`) step after step with
the states held by the thread, and records the samples itself; the packed program is copied to
shared memory by each block (read from global memory when it does not fit :attr:`SHARED_MAX`).
Launches are sized and the block size tuned by the driver shared with TS
(:meth:`.gpu.GpuRuntime.run_loop`).  Lines and rings keep one launch a step."""
from __future__ import annotations

import numpy as np

from .codegen import is_source
from .cuda import cuda_module
from .fused import fused_is_source
from .gpu import GpuRuntime
from .is_loop import CONST_WORDS, is_loop_source, pack, packable, shared_bytes
from .is_regs import pack_registers


class InterpreterRuntime(GpuRuntime):
    name = "is"
    help = "the bytecode interpreter on the GPU (one compiled kernel for every model)"
    #: whether ensembles use the many-steps kernel (False: one launch a step, as before issue 23)
    loop_enabled = True
    #: the loop kernel's program: "registers" (three-address instructions,
    #: :func:`.is_regs.pack_registers`) or "stack" (the packed stack bytecode, :func:`.is_loop.pack`).
    #: Measured on an H200 (issue 23): the register form takes 0.65–0.8× the stack form's time
    loop_form = "registers"
    #: the loop kernel's storage: each thread's slots (registers) / stack in columns of shared memory
    #: (True) or in local arrays (False); None: in shared memory for ensembles of at most
    #: SHARED_SLOTS_CELLS members (measured faster there, slower at 100,000).  The stack (stack
    #: form only) in shared memory was faster at every size measured.
    loop_slots_shared: bool | None = None
    loop_stack_shared = True
    SHARED_SLOTS_CELLS = 10_000
    #: the stack form's packing (:func:`.is_loop.pack`): constant-and-leaf pairs fused, slots reused
    loop_fuse_pairs = True
    loop_reuse_slots = True
    #: where the loop kernel reads the packed program: "shared" (copied by each block) or "constant"
    #: (constant memory, at most CONST_WORDS instructions); either falls back to global memory
    loop_code = "shared"
    CONST_WORDS = CONST_WORDS
    #: dynamic shared memory a block may use (the packed program, shared columns); more: the packed
    #: program is read from global memory
    SHARED_MAX = 48 * 1024
    #: fused expression mapping: the grid barrier beyond 3 rounds of a 1024-thread block (Mix's 127-warp
    #: phase ran faster spread over SMs; TS's compiled phases did not, see benchmarks/RESULTS.md)
    fused_grid_warps = 96

    def _compile(self, cp, real: str) -> None:
        prog = self.prog
        self.source = is_source(prog, real)
        self.loop_source = None
        if self.mapping == "expression":
            lay = prog.layout
            mod = cuda_module(self.source)
            self._phase_kernels = [mod.function("flint_is_phase", block=32)] * len(lay.phase_warps)
            self._update_kernel = mod.function("flint_update", block=128)
            self.d_code = cp.asarray(lay.code if lay.code.size else np.zeros(1, np.int32))
            self.d_index = cp.asarray(lay.index)
            self.d_ltab = cp.asarray(lay.lane_table)
            return
        self.d_code = cp.asarray(prog.code)
        self.d_index = cp.asarray(prog.index) if prog.index is not None else None
        self._step_kernel = cuda_module(self.source).function("flint_is_step", block=self.block_size, lazy=True)
        self._kernel = self._step_kernel
        self._tuning = False
        if self.loop_enabled and packable(prog):
            regs = self.loop_form == "registers"
            self.packed = pk = pack_registers(prog, self.dtype) if regs else \
                pack(prog, self.dtype, self.loop_fuse_pairs, self.loop_reuse_slots)
            self.d_pcode, self.d_imm, self.d_pdslot = cp.asarray(pk.code), cp.asarray(pk.imm), cp.asarray(pk.dslot)
            # the choices as this build made them (a later change of the class attributes is not this kernel's)
            for k in ("loop_slots_shared", "loop_stack_shared", "loop_code"):
                setattr(self, k, getattr(self, k))
            if regs:
                self.loop_stack_shared = False           # no stack
            if self.loop_slots_shared is None:           # auto: small ensembles, and blocks of 64 fit
                self.loop_slots_shared = self.n <= self.SHARED_SLOTS_CELLS and shared_bytes(
                    prog, pk, self.dtype.itemsize, 64, True, self.loop_stack_shared) <= self.SHARED_MAX
            self.loop_source = is_loop_source(prog, pk.n_slots, real, self.integrator, self.loop_slots_shared,
                                              self.loop_stack_shared, pk.code.size, regs)
            self._loop_mod = mod = cuda_module(self.loop_source)
            self.loop_code_shared = self.loop_code == "shared" and \
                self._loop_shared_bytes(0, True) <= self.SHARED_MAX // 2
            self.loop_code_const = self.loop_code == "constant" and pk.code.size <= self.CONST_WORDS
            loop = mod.function("flint_is_loop" if self.loop_code_shared else
                                "flint_is_loop_const" if self.loop_code_const else "flint_is_loop_global", block=32)
            self._loop_ready(loop)
            while self._loop_max_block > 32 and self._loop_shared_bytes(self._loop_max_block) > self.SHARED_MAX:
                self._loop_max_block -= 32           # shared columns: the blocks that fit
            if self._loop_shared_bytes(32) > self.SHARED_MAX:
                self._loop = None                    # they never fit: one launch a step
                return
            self._kernel = None                      # the one-step kernel compiles when a caller steps
            self._tuning = True

    def build(self, prog, dtype) -> None:
        super().build(prog, dtype)
        if self.mapping == "cell":
            self._kernel = self._step_kernel
        if self._loop is not None and self.loop_code_const:
            cp, pk = self.cp, self.packed
            for name, a in (("flint_ccode", pk.code), ("flint_cimm", pk.imm)):
                dst = cp.ndarray((a.size,), dtype=a.dtype, memptr=self._loop_mod.compiled.get_global(name))
                dst[...] = cp.asarray(a)

    def _loop_shared_bytes(self, block: int, code_shared: bool | None = None) -> int:
        code_shared = self.loop_code_shared if code_shared is None else code_shared
        return shared_bytes(self.prog, self.packed, self.dtype.itemsize, block, self.loop_slots_shared,
                            self.loop_stack_shared, code_shared)

    def _loop_args(self, common: list) -> tuple:
        return (self.d_pcode, self.d_imm, np.int32(self.d_pcode.size), *common, self.d_pdslot,
                np.int32(self.prog.n_states))

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

    def info(self) -> dict:
        return {**super().info(), "block_size": self.block_size if self._loop is not None else None}
