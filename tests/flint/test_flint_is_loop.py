"""The interpreter's many-steps-a-launch kernel (issue 23; ``flint_is_loop.cu``, packed bytecode of
``runtimes.is_loop``) checked on the CPU: its CUDA source is compiled for the host (the CUDA keywords
defined away, as runtime ``c-is`` does with the one-step interpreter) and launched over every cell in
chunks of random lengths through the driver (``Simulation._advance_looped``).  Its samples and final
states must equal runtime ``c-is`` (``flint_exec``, one step a call: the same operations in the same
order) bit for bit and the NumPy runtime to 1e-10 — Euler and RK4, float64 and float32, fresh random
parameters, initial states, ``every``, recorded states and cells.  The GPU side: tests/flint/test_flint_gpu.py."""
from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from kernels import hostcc
from kernels.flint import CompileOptions, load_model
from kernels.flint.bytecode import N_ARGS, OPCODES, OPNAMES
from kernels.flint.compiler import compile_model
from kernels.flint.runtimes import register, unregister
from kernels.flint.runtimes.host_is import HostInterpreterRuntime
from kernels.flint.runtimes.is_loop import OPX, is_loop_source, pack, packable, shared_bytes
from kernels.flint.runtimes.is_regs import pack_registers
from support.flint_host_loop import HostChunks, check_loop_equals_reference, ptr

needs_cxx = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                               reason="no host C++ compiler (g++/clang++)")

_HOST_LAUNCH = r"""
extern "C" void flint_is_loop_launch(const int* code, const REAL* imm, int ncode, const REAL* P, REAL* y,
                                     long long step0, int k, double dt, int n, long long every, const int* rec,
                                     int n_rec, const int* col, int n_col, REAL* out, const int* dslot, int ns,
                                     REAL* cols) {
    flint_host_cols = cols; blockIdx.x = 0; blockDim.x = (unsigned)n;
    for (int i = 0; i < n; ++i) { threadIdx.x = (unsigned)i;
        flint_is_loop_global(code, imm, ncode, P, y, step0, k, dt, n, every, rec, n_rec, col, n_col, out, dslot, ns); }
}
"""


class HostIsLoopRuntime(HostChunks, HostInterpreterRuntime):
    """The IS loop kernel on the host: ``run_loop`` launches it in chunks of random lengths."""
    name = "test-c-is-loop"
    help = "tests only: the interpreter's many-steps kernel compiled for the host"
    fuse_pairs = reuse_slots = True
    slots_shared = stack_shared = registers = False

    def build(self, prog, dtype) -> None:
        super().build(prog, dtype)
        real = "double" if self.dtype == np.float64 else "float"
        self.packed = pack_registers(prog, self.dtype) if self.registers else \
            pack(prog, self.dtype, self.fuse_pairs, self.reuse_slots)
        src = is_loop_source(prog, self.packed.n_slots, real, self.integrator, self.slots_shared, self.stack_shared,
                             registers=self.registers)
        # the shared-memory columns' stand-in: one column a cell (blockDim.x = n on the host)
        self.cols = np.full((shared_bytes(prog, self.packed, 8, self.n, True, True, False) // 8), np.nan, self.dtype)
        lib = hostcc.compile_library(hostcc.CUDA_HOST_PRELUDE + src.replace('extern "C" __global__', "static")
                                     + _HOST_LAUNCH, kind="flint-c", prefix="flint-is-loop-test")
        self._fn = lib.flint_is_loop_launch
        self.code, self.imm, self.dslot = self.packed.code, self.packed.imm, self.packed.dslot

    def launch(self, step, kl, dt, every, rec, col, n_cells, buf) -> None:
        i32 = ctypes.c_int
        self._fn(ptr(self.code), ptr(self.imm), i32(self.code.size), ptr(self.P), ptr(self.y), ctypes.c_longlong(step),
                 i32(kl), ctypes.c_double(dt), i32(self.n), ctypes.c_longlong(every), ptr(rec), i32(len(rec)),
                 ptr(col), i32(n_cells), ptr(buf), ptr(self.dslot), i32(self.prog.n_states), ptr(self.cols))


@pytest.fixture
def host_is_loop(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg"))
    register(HostIsLoopRuntime)
    yield HostIsLoopRuntime
    unregister(HostIsLoopRuntime.name)


@pytest.fixture(scope="module")
def lr():
    return load_model("luo_rudy_1991.flint")


@needs_cxx
@pytest.mark.parametrize("integrator, dtype, steps, packing, storage", [
    ("euler", "float64", 2300, (True, True), (False, False)), ("rk4", "float64", 1100, (True, True), (False, False)),
    ("euler", "float32", 1700, (True, True), (False, False)), ("rk4", "float32", 700, (True, True), (False, False)),
    ("euler", "float64", 900, (False, False), (False, False)), ("rk4", "float64", 500, (True, False), (False, False)),
    ("euler", "float64", 900, (True, True), (True, False)), ("rk4", "float64", 500, (True, True), (False, True)),
    ("rk4", "float32", 500, (True, True), (True, True)),
    ("euler", "float64", 2300, "registers", (False, False)), ("rk4", "float64", 1100, "registers", (False, False)),
    ("euler", "float32", 1700, "registers", (True, False)), ("rk4", "float32", 700, "registers", (False, False))])
def test_is_loop_kernel_equals_one_step_interpreter(lr, host_is_loop, monkeypatch, integrator, dtype, steps, packing,
                                                    storage):
    """packing: (constant-leaf pairs fused, slots reused) or the register form; storage: (slots, stack) in the shared-memory
    columns (on the host: a buffer of one column a cell) instead of local arrays."""
    if packing == "registers":
        monkeypatch.setattr(host_is_loop, "registers", True)
    else:
        monkeypatch.setattr(host_is_loop, "fuse_pairs", packing[0])
        monkeypatch.setattr(host_is_loop, "reuse_slots", packing[1])
    monkeypatch.setattr(host_is_loop, "slots_shared", storage[0])
    monkeypatch.setattr(host_is_loop, "stack_shared", storage[1])
    check_loop_equals_reference(lr, "test-c-is-loop", "c-is", integrator, dtype, steps)


@pytest.mark.parametrize("pairs, reuse", [(False, False), (True, False), (True, True)])
def test_pack_fuses_and_keeps_every_operation(lr, pairs, reuse):
    """The packed program: one word an instruction, END doubled, a constant's value beside it, leaves
    (and constant-leaf pairs) fused into the binary operation after them — and no operation lost:
    each word stands for 1, 2 or 3 of the bytecode's instructions, which add up; reused slots stay
    below ``n_slots``, fewer than the bytecode's."""
    prog = compile_model(lr, 3, {"g_Na": np.array([15.0, 20.0, 25.0])})
    pk = pack(prog, np.float64, fuse_pairs=pairs, reuse_slots=reuse)
    code, imm = pk.code, pk.imm
    assert code[-1] == code[-2] == OPCODES["END"] and code.size == imm.size
    ops, args = code & 255, code >> 8
    name = {**{v: k for k, v in OPCODES.items()}, **{v: k for k, v in OPX.items()}}
    names = [name[int(o)] for o in ops]
    pair = np.array(["_K" in x or x.endswith(("VARK", "STATEK")) for x in names])
    fused = np.array(["_" in x and x != "CONST_IND" for x in names]) & ~pair
    assert fused.sum() > 20 and (pair.sum() > 20) == pairs             # LR has many x*K, x+VAR, K*VAR, …
    with_k = np.array([x == "CONST" or x.endswith("_CONST") for x in names]) | pair
    np.testing.assert_array_equal(imm[with_k & ~pair], prog.consts[args[with_k & ~pair]])
    assert set(imm[pair].tolist()) <= set(prog.consts.tolist()) and not imm[~with_k].any()
    words, pc, n_ins = prog.code, 0, 0
    while pc < words.size:
        n_ins += 1
        pc += 1 + N_ARGS.get(OPNAMES[int(words[pc])], 0)
    assert code.size - 1 + fused.sum() + 2 * pair.sum() == n_ins
    slot_ops = np.array([x in ("VAR", "ASSIGN") or x.endswith("_VAR") or "KVAR" in x or "VARK" in x
                         for x in names])
    assert args[slot_ops].max() < pk.n_slots and pk.dslot.max() < pk.n_slots
    assert (pk.n_slots < prog.n_slots / 2) == reuse                     # LR: 52 slots, far fewer live at once
    assert len(set(pk.dslot.tolist())) == prog.n_states


def test_packable_needs_one_shared_bytecode(lr):
    from kernels.flint import Network
    member = {"g_Na": np.array([15.0, 20.0])}
    assert packable(compile_model(lr, 2, member))
    off = compile_model(lr, 2, member, None, CompileOptions(unify=False))
    assert off.index is not None and not packable(off)
    ring = compile_model(lr, 4, None, Network("ring", 4, "V", 1.0))
    assert not packable(ring)
    with pytest.raises(ValueError, match="one bytecode"):
        pack(off, np.float64)
