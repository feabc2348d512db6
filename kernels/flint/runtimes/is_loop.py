"""The interpreter's many-steps-a-launch kernel (issue 23; paper 004 §5.5 interpreter, one thread a
cell): its source (:func:`is_loop_source`: ``flint_is.cu`` + ``flint_is_loop.cu``) and the packed
program it reads (:func:`pack`).

The kernel, like the translator's :func:`.codegen.ts_loop_source`, integrates a chunk of ``k`` steps
with a cell's states held by its thread and writes the recorded states itself (the same
``rec``/``col``/``out`` layout), for ensembles only (:func:`.codegen.loopable`).  It stays an
interpreter — one compiled kernel for every model of a size class (slots, stack depth, states,
integrator), the model is data — but reads a packed form of the bytecode, made once on the host:

* one 32-bit word an instruction (``op | arg << 8``), so the next word is fetched while the current
  one runs, and the constant of a ``CONST`` beside it (``imm``: no dependent load of the table);
* ``ADD 2`` / ``MUL 2`` become their own opcodes (no operand count), and a leaf (``CONST``, ``VAR``,
  ``STATE``) followed by a binary ``SUB``/``DIV``/``ADD 2``/``MUL 2`` becomes one fused instruction
  (the leaf is the right operand: the same operation on the same operands, one dispatch fewer);
  a constant and a leaf before such an operation become one instruction too;
* slots are renumbered so that a slot whose value is read no more is reused (fewer slots a thread).

Same operations in the same order as ``flint_exec``, so the states equal IS one launch a step bit
for bit (tests/test_flint_is_loop.py on the CPU, tests/test_flint_gpu.py on the GPU)."""
from __future__ import annotations

import numpy as np

from ..bytecode import N_ARGS, OPCODES, OPNAMES
from ..compiler import Program
from .codegen import CUDA_DIR, is_source
from .is_regs import IMM, OPR, TIME
from .packed import Packed, immediates, packable

IS_LOOP_SOURCE = CUDA_DIR / "flint_is_loop.cu"

#: the packed form's own opcodes (after the bytecode's): ADD 2 / MUL 2, and each binary operation
#: fused with the leaf pushed just before it (its right operand)
_BINARY = ("SUB", "DIV", "ADD2", "MUL2")
_LEAVES = ("CONST", "VAR", "STATE")
OPX = {name: 64 + j for j, name in enumerate(["ADD2", "MUL2"] + [f"{b}_{lf}" for b in _BINARY for lf in _LEAVES]
                                             + [f"{b}_{p}" for b in _BINARY for p in ("KVAR", "KSTATE", "VARK", "STATEK")])}
#: largest operand a packed word holds (24 bits, signed)
ARG_MAX = (1 << 23) - 1


#: the constant-memory copy of the packed program holds at most this many instructions (code and
#: immediates must fit the 64 KiB of __constant__ data); a longer program is read from shared or
#: global memory only
CONST_WORDS = 4096

def _reads_slot(name: str) -> bool:
    return name == "VAR" or name.endswith("_VAR") or "_KVAR" in name or "_VARK" in name


def pack(prog: Program, dtype, fuse_pairs: bool = True, reuse_slots: bool = True) -> Packed:
    """The packed program of :func:`packable` ``prog`` (module docstring), ``END`` twice at the end
    (the kernel fetches one word ahead); constants in ``dtype``.  ``fuse_pairs``: also a
    constant and a leaf with the binary operation after them, one instruction that pushes
    ``K op leaf`` or ``leaf op K``.  ``reuse_slots``: slots renumbered so that a slot whose value is
    no longer read (within the step; the derivative slots are read at its end) is reused — fewer
    slots a thread, the same values.

    Only the constants' values depend on ``dtype``: the packing itself is made once per program and
    options (:meth:`Program.derive`)."""
    if not packable(prog):
        raise ValueError("the many-steps interpreter needs an ensemble sharing one bytecode (no neighbour "
                         "coupling, option unify on or no per-member parameters)")
    words, kidx, dslot, n_slots = prog.derive(("packed-stack", bool(fuse_pairs), bool(reuse_slots)),
                                              lambda: _pack(prog, fuse_pairs, reuse_slots))
    return Packed(words.copy(), immediates(prog.consts, kidx, dtype, words.size), dslot.copy(), n_slots)


def _pack(prog: Program, fuse_pairs: bool, reuse_slots: bool) -> tuple:
    """(words, the constant index of each instruction's immediate (−1: none, 0), dslot, n_slots) of
    :func:`pack`."""
    ins: list[tuple[str, int]] = []
    pc, code = 0, prog.code.tolist()           # Python ints: read word by word
    while True:
        op = OPNAMES[code[pc]]
        args = code[pc + 1: pc + 1 + N_ARGS.get(op, 0)]
        pc += 1 + len(args)
        if op in ("STATE_NB", "WARP_SUM", "LANE"):
            raise ValueError(f"the many-steps interpreter does not run {op}")
        if op in ("ADD", "MUL") and args[0] < 2:      # one operand: nothing to do
            continue
        if op in ("ADD", "MUL") and args[0] == 2:
            op, args = op + "2", [0]
        ins.append((op, args[0] if args else 0))
        if op == "END":
            break
    # (name, operand, constant's index): a leaf and the binary operation after it fuse, then
    # (fuse_pairs) a constant and a leaf with it
    out: list[tuple[str, int, int]] = []
    j = 0
    while j < len(ins):
        op, a = ins[j]
        nxt = ins[j + 1][0] if j + 1 < len(ins) else None
        val = a if op == "CONST" else -1
        if op in _LEAVES and nxt in _BINARY:
            out.append((f"{nxt}_{op}", a, val))
            j += 2
        else:
            out.append((op, a, val))
            j += 1
    if fuse_pairs:
        fused, j = [], 0
        while j < len(out):
            (n0, a0, v0), (n1, a1, v1) = out[j], out[j + 1] if j + 1 < len(out) else ("", 0, -1)
            b1, _, leaf1 = n1.partition("_")
            if n0 == "CONST" and leaf1 in ("VAR", "STATE"):
                fused.append((f"{b1}_K{leaf1}", a1, v0))
                j += 2
            elif n0 in ("VAR", "STATE") and leaf1 == "CONST":
                fused.append((f"{b1}_{n0}K", a0, v1))
                j += 2
            else:
                fused.append(out[j])
                j += 1
        out = fused
    dslot = np.array(prog.deriv_slots, dtype=np.int32)
    n_slots = max(prog.n_slots, 1)
    if reuse_slots:
        out, dslot, n_slots = _reuse_slots(out, dslot)
    words = []
    for name, a, _v in out:
        if not -ARG_MAX <= a <= ARG_MAX:
            raise ValueError(f"operand {a} does not fit a packed instruction")
        words.append((OPX[name] if name in OPX else OPCODES[name]) | (a << 8))
    words.append(OPCODES["END"])
    return np.array(words, dtype=np.int32), np.array([v for (_n, _a, v) in out], dtype=np.int64), dslot, n_slots


def _reuse_slots(ins: list, dslot: np.ndarray) -> tuple[list, np.ndarray, int]:
    """Linear scan over the straight-line program: a slot gets a free number at its first ASSIGN, and
    its number is free again after its last read (never for a derivative slot)."""
    last: dict[int, int] = {}
    for k, (name, a, _v) in enumerate(ins):
        if _reads_slot(name):
            last[a] = k
    keep = {int(d) for d in dslot}
    new: dict[int, int] = {}
    free: list[int] = []
    expire: dict[int, list[int]] = {}
    top = 0
    out = []
    for k, (name, a, v) in enumerate(ins):
        if name == "ASSIGN" and a not in new:
            if free:
                new[a] = free.pop()
            else:
                new[a], top = top, top + 1
            if a not in keep and a in last and last[a] > k:
                expire.setdefault(last[a], []).append(new[a])
            elif a not in keep:
                free.append(new[a])            # never read: its number is free at once
        if name == "ASSIGN" or _reads_slot(name):
            out.append((name, new[a], v))
        else:
            out.append((name, a, v))
        free.extend(expire.pop(k, []))
    return out, np.array([new[int(d)] for d in dslot], dtype=np.int32), max(top, 1)


def is_loop_source(prog: Program, n_slots: int, real: str = "double", integrator: str = "euler",
                   slots_shared: bool = False, stack_shared: bool = False, code_words: int = 1,
                   registers: bool = False) -> str:
    """CUDA source of kernels ``flint_is_loop`` (packed program in shared memory),
    ``flint_is_loop_global`` (read from global memory) and ``flint_is_loop_const`` (read from constant
    memory): the interpreter (``flint_is.cu``, with
    ``flint_is_step``) and ``flint_is_loop.cu`` for ``prog``'s size class and a packed program of
    ``n_slots`` slots (:attr:`Packed.n_slots`).  ``slots_shared`` / ``stack_shared``: each thread's
    slots / stack in a column of dynamic shared memory (after the packed program) instead of local
    arrays; ``code_words``: the packed program's length, for the size of
    kernel ``flint_is_loop_const``'s constant-memory copy (``flint_ccode`` / ``flint_cimm``);
    ``registers``: the program is the register form of :mod:`.is_regs` (``n_slots`` registers)."""
    base = is_source(prog, real)
    defs = [f"#define OPX_{k} {v}" for k, v in OPX.items()]
    defs += [f"#define NSTATE {_pow2(prog.n_states)}", f"#define FLINT_LOOP_NSLOT {_pow2(n_slots)}",
             f"#define RK4 {int(integrator == 'rk4')}",
             f"#define FLINT_LOOP_SLOTS_SHARED {int(slots_shared)}",
             f"#define FLINT_LOOP_STACK_SHARED {int(stack_shared)}", f"#define FLINT_LOOP_CODE {_pow2(min(code_words, CONST_WORDS))}"]
    defs += [f"#define FLINT_LOOP_REGS {int(registers)}", f"#define FLINT_IMM {IMM}", f"#define FLINT_TIME {TIME}"]
    defs += [f"#define OPR_{k} {v}" for k, v in OPR.items()]
    return base + "\n" + "\n".join(defs) + "\n" + IS_LOOP_SOURCE.read_text(encoding="utf-8")


def _pow2(k: int) -> int:
    """The size class of ``k`` entries: the next power of two (at least 1)."""
    return 1 << max(0, int(k) - 1).bit_length()


def shared_bytes(prog: Program, packed: Packed, itemsize: int, block: int, slots_shared: bool = False,
                 stack_shared: bool = False, code_shared: bool = True) -> int:
    """Dynamic shared memory of a block of ``block`` threads: the packed program (its words and as many
    REALs) when ``code_shared``, and the per-thread slot / stack columns (FLINT_LOOP_NSLOT, and
    STACK of :func:`.codegen.is_source`)."""
    words = int(packed.code.size)
    b = words * itemsize + -(-words * 4 // itemsize) * itemsize if code_shared else 0
    stack = is_sizes(prog)[1]
    return b + itemsize * block * (_pow2(packed.n_slots) * int(slots_shared) + stack * int(stack_shared))


def is_sizes(prog: Program) -> tuple[int, int]:
    """(NSLOT, STACK) of the interpreter source for ``prog`` (read back from :func:`.codegen.is_source`)."""
    src = is_source(prog, "double")
    get = lambda k: int(src.split(f"#define {k} ", 1)[1].split("\n", 1)[0])    # noqa: E731
    return get("NSLOT"), get("STACK")

