"""The register form of the interpreter's loop kernel (issue 23; option ``loop_form="registers"`` of
runtime ``is``): the stack bytecode translated once on the host into three-address instructions over
a per-thread register file, so that a push, a pop or an ``ASSIGN`` is no instruction of its own.

Register file ``R``: the stage's states ``R[0 .. n_states)`` (``y``, or ``y + cdt·k`` in an RK4 stage,
computed once a stage), then the values of the functions and intermediate results, numbered by a
linear scan so that a register whose value is read no more is reused.  An instruction is two words
and a constant::

    code[2 pc]     = op | dst << 8
    code[2 pc + 1] = src1 | src2 << 16     (a source: a register, IMM = imm[pc], or TIME = (REAL) t)

``R[dst] = op(src1, src2)`` — the bytecode's binary and unary operations, ``ADD``/``MUL`` of two
operands (an n-ary sum is a chain, left to right, as ``flint_exec`` sums), ``MOV``, ``LOADP``
(``R[dst] = P[src1·n + i]``, a per-member parameter), ``SELECT`` (``R[dst] = src1 != 0 ? src2 :
R[dst]``, ``dst`` loaded with the third operand first) and ``END``.  Same operations on the same
operands in the same order as the stack interpreter, so the states are bit-identical."""
from __future__ import annotations

import numpy as np

from ..bytecode import N_ARGS, OPCODES, OPNAMES
from ..compiler import Program
from .packed import Packed, immediates, packable

#: the register form's own opcodes (after the bytecode's)
OPR = {"MOV": 90, "LOADP": 91}
#: source codes of a constant operand (imm[pc]) and of the time
IMM, TIME = 0xFFFF, 0xFFFE
_BINARY = {"ADD", "MUL", "SUB", "DIV", "POW", "MIN", "MAX", "LT", "LE", "GT", "GE", "EQ", "NE", "AND", "OR"}


def pack_registers(prog: Program, dtype):
    """The register form of ``prog`` (an ensemble sharing one bytecode, :func:`.packed.packable`):
    a :class:`.packed.Packed` whose ``code`` holds two words an instruction (``END`` three times at
    the end: the kernel fetches ahead), ``imm`` one constant an instruction (padded to ``code``'s
    length), ``dslot`` the registers of the derivatives and ``n_slots`` the registers used.

    Only the constants' values depend on ``dtype``: the translation is made once per program
    (:meth:`Program.derive`)."""
    if not packable(prog):
        raise ValueError("the many-steps interpreter needs an ensemble sharing one bytecode")
    words, kidx, dslot, top = prog.derive(("packed-regs",), lambda: _translate(prog))
    return Packed(words.copy(), immediates(prog.consts, kidx, dtype, words.size), dslot.copy(), top)


def _translate(prog: Program) -> tuple:
    """(words, the constant index of each instruction's immediate (−1: none, 0), dslot, registers)
    of :func:`pack_registers`."""
    ns = prog.n_states
    ins: list = []                    # [op, dst vreg, src1, src2, const index]; a source: ("R", k) / ("K",) / ("T",)
    nv = [0]

    def vreg():
        nv[0] += 1
        return ("V", nv[0] - 1)

    def emit(op, dst, a=("K",), b=("K",), k=-1):
        ins.append([op, dst, a, b, k])

    def two(a, b):
        """Operands a, b of one instruction: at most one constant (the other is loaded into a register)."""
        if a[0] == "K" and b[0] == "K":
            t = vreg()
            emit("MOV", t, ("K",), ("K",), a[1])
            a = t
        k = a[1] if a[0] == "K" else (b[1] if b[0] == "K" else -1)
        return (("K",) if a[0] == "K" else a), (("K",) if b[0] == "K" else b), k

    stack: list = []
    slot: dict = {}
    pc, code = 0, prog.code.tolist()           # Python ints: read word by word
    while True:
        op = OPNAMES[code[pc]]
        args = code[pc + 1: pc + 1 + N_ARGS.get(op, 0)]
        pc += 1 + len(args)
        if op == "END":
            break
        if op == "CONST":
            stack.append(("K", args[0]))                 # the constant's index
        elif op == "STATE":
            stack.append(("R", args[0]))
        elif op == "TIME":
            stack.append(("T",))
        elif op == "VAR":
            stack.append(slot[args[0]])
        elif op == "CONST_IND":
            t = vreg()
            emit("LOADP", t, ("P", args[0]))
            stack.append(t)
        elif op == "ASSIGN":
            slot[args[0]] = stack.pop()           # an alias: the value's register, constant, state or time
        elif op in ("ADD", "MUL"):
            ops = stack[len(stack) - args[0]:]
            del stack[len(stack) - args[0]:]
            r = ops[0]
            if len(ops) == 1 and r[0] != "V":
                t = vreg()
                a, _b, k = two(r, ("R", 0))
                emit("MOV", t, a, ("K",), k)
                r = t
            for x in ops[1:]:
                t = vreg()
                a, b, k = two(r, x)
                emit(op, t, a, b, k)
                r = t
            stack.append(r)
        elif op in _BINARY:
            b0, a0 = stack.pop(), stack.pop()
            t = vreg()
            a, b, k = two(a0, b0)
            emit(op, t, a, b, k)
            stack.append(t)
        elif op == "SELECT":
            b0, a0, c0 = stack.pop(), stack.pop(), stack.pop()
            t = vreg()
            src, _x, k = two(b0, ("R", 0))
            emit("MOV", t, src, ("K",), k)             # the third operand first
            a, b, k = two(c0, a0)
            emit("SELECT", t, a, b, k)
            stack.append(t)
        elif op in ("STATE_NB", "WARP_SUM", "LANE"):
            raise ValueError(f"the many-steps interpreter does not run {op}")
        else:                                          # unary
            a0 = stack.pop()
            t = vreg()
            a, _b, k = two(a0, ("R", 0))
            emit(op, t, a, ("K",), k)
            stack.append(t)
    deriv = []
    for d in prog.deriv_slots:                         # a derivative must live in a register
        v = slot[int(d)]
        if v[0] != "V":
            t = vreg()
            a, _b, k = two(v, ("R", 0))
            emit("MOV", t, a, ("K",), k)
            v = t
        deriv.append(v)
    return _allocate(ins, deriv, ns)


def _allocate(ins: list, deriv: list, ns: int) -> tuple:
    """Registers for the virtual ones (linear scan: a register is free again after its value's last
    read; the derivatives live to the end), then the words (and the constant indices, dslot and
    registers: :func:`_translate`)."""
    last: dict = {}
    for k, (_op, dst, a, b, _c) in enumerate(ins):
        for x in (a, b) + ((dst,) if _op == "SELECT" else ()):
            if x[0] == "V":
                last[x] = k
    end = len(ins)
    for d in deriv:
        last[d] = end
    phys: dict = {}
    free: list[int] = []
    top = ns
    expire: dict = {}
    for k, (_op, dst, a, b, _c) in enumerate(ins):
        for x in {a, b}:
            if x[0] == "V" and last.get(x) == k and x != dst:
                expire.setdefault(k, []).append(x)
        for x in expire.pop(k, []):                    # read here for the last time: free before the write
            free.append(phys[x])
        if dst not in phys:
            if free:
                phys[dst] = free.pop()
            else:
                phys[dst], top = top, top + 1
            if dst not in last:                        # never read: free at once
                free.append(phys[dst])

    def src(x):
        return IMM if x[0] == "K" else TIME if x[0] == "T" else x[1] if x[0] in ("R", "P") else phys[x]
    words, kidx = [], []
    for op, dst, a, b, c in ins:
        num = OPR[op] if op in OPR else OPCODES[op]
        words += [num | (phys[dst] << 8), src(a) | (src(b) << 16)]
        kidx.append(c)
    words += [OPCODES["END"], 0] * 2                   # imm: 0 past the instructions, as long as code
    return (np.array(words, dtype=np.uint32).view(np.int32), np.array(kidx, dtype=np.int64),
            np.array([phys[d] for d in deriv], dtype=np.int32), top)
