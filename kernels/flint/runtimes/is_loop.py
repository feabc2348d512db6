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
  (the leaf is the right operand: the same operation on the same operands, one dispatch fewer).

Same operations in the same order as ``flint_exec``, so the states equal IS one launch a step bit
for bit (tests/test_flint_is_loop.py on the CPU, tests/test_flint_gpu.py on the GPU)."""
from __future__ import annotations

import numpy as np

from ..bytecode import N_ARGS, OPCODES, OPNAMES
from ..compiler import Program
from .codegen import CUDA_DIR, is_source, loopable

IS_LOOP_SOURCE = CUDA_DIR / "flint_is_loop.cu"

#: the packed form's own opcodes (after the bytecode's): ADD 2 / MUL 2, and each binary operation
#: fused with the leaf pushed just before it (its right operand)
_BINARY = ("SUB", "DIV", "ADD2", "MUL2")
_LEAVES = ("CONST", "VAR", "STATE")
OPX = {name: 64 + j for j, name in enumerate(["ADD2", "MUL2"] + [f"{b}_{lf}" for b in _BINARY for lf in _LEAVES])}
#: largest operand a packed word holds (24 bits, signed)
ARG_MAX = (1 << 23) - 1


def packable(prog: Program) -> bool:
    """Whether the many-steps interpreter applies: an ensemble (:func:`.codegen.loopable`) whose members
    share one bytecode (``index`` None: option ``unify`` on, or no per-member parameters)."""
    return loopable(prog) and prog.index is None


def pack(prog: Program, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(code, imm): the packed program of :func:`packable` ``prog`` (module docstring), ``END`` three times
    at the end (the kernel fetches up to two words ahead); ``imm`` holds a ``CONST``'s value in ``dtype``."""
    if not packable(prog):
        raise ValueError("the many-steps interpreter needs an ensemble sharing one bytecode (no neighbour "
                         "coupling, option unify on or no per-member parameters)")
    consts = np.asarray(prog.consts).astype(dtype)
    ins: list[tuple[str, int]] = []
    pc, code = 0, prog.code
    while True:
        op = OPNAMES[int(code[pc])]
        args = [int(a) for a in code[pc + 1: pc + 1 + N_ARGS.get(op, 0)]]
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
    words, imm = [], []
    j = 0
    while j < len(ins):
        op, a = ins[j]
        nxt = ins[j + 1][0] if j + 1 < len(ins) else None
        if op in _LEAVES and nxt in _BINARY:
            name, j = f"{nxt}_{op}", j + 2
            num = OPX[name]
        else:
            name, j = op, j + 1
            num = OPX[op] if op in OPX else OPCODES[op]
        if not -ARG_MAX <= a <= ARG_MAX:
            raise ValueError(f"operand {a} does not fit a packed instruction")
        words.append(num | (a << 8))
        imm.append(consts[a] if op == "CONST" else 0.0)
    words += [OPCODES["END"]] * 2
    imm += [0.0, 0.0]
    return np.array(words, dtype=np.int32), np.array(imm, dtype=dtype)


def is_loop_source(prog: Program, real: str = "double", integrator: str = "euler",
                   slots_shared: bool = False, stack_shared: bool = False, hot_first: bool = False,
                   ahead: int = 1) -> str:
    """CUDA source of kernels ``flint_is_loop`` (packed program in shared memory) and
    ``flint_is_loop_global`` (read from global memory): the interpreter (``flint_is.cu``, with
    ``flint_is_step``) and ``flint_is_loop.cu`` for ``prog``'s size class.  ``slots_shared`` /
    ``stack_shared``: each thread's slots / stack in a column of dynamic shared memory (after the
    packed program) instead of local arrays; ``hot_first``: the most frequent instructions tested
    before the switch; ``ahead``: instructions fetched ahead (1 or 2)."""
    base = is_source(prog, real)
    ns = 1 << max(0, prog.n_states - 1).bit_length()
    defs = [f"#define OPX_{k} {v}" for k, v in OPX.items()]
    defs += [f"#define NSTATE {max(ns, 1)}", f"#define RK4 {int(integrator == 'rk4')}",
             f"#define FLINT_LOOP_SLOTS_SHARED {int(slots_shared)}",
             f"#define FLINT_LOOP_STACK_SHARED {int(stack_shared)}", f"#define FLINT_LOOP_HOT {int(hot_first)}",
             f"#define FLINT_LOOP_AHEAD {int(ahead)}"]
    return base + "\n" + "\n".join(defs) + "\n" + IS_LOOP_SOURCE.read_text()


def shared_bytes(prog: Program, words: int, itemsize: int, block: int, slots_shared: bool = False,
                 stack_shared: bool = False, code_shared: bool = True) -> int:
    """Dynamic shared memory of a block of ``block`` threads: the packed program (``words`` words and
    as many REALs) when ``code_shared``, and the per-thread slot / stack columns (NSLOT / STACK of
    :func:`.codegen.is_source`)."""
    b = words * itemsize + -(-words * 4 // itemsize) * itemsize if code_shared else 0
    nslot, stack = is_sizes(prog)
    return b + itemsize * block * (nslot * int(slots_shared) + stack * int(stack_shared))


def is_sizes(prog: Program) -> tuple[int, int]:
    """(NSLOT, STACK) of the interpreter source for ``prog`` (read back from :func:`.codegen.is_source`)."""
    src = is_source(prog, "double")
    get = lambda k: int(src.split(f"#define {k} ", 1)[1].split("\n", 1)[0])    # noqa: E731
    return get("NSLOT"), get("STACK")

