"""What the interpreter's loop kernel reads (issue 23): :class:`Packed`, a program packed for it, and
:func:`packable`, whether it applies.  A base piece of :mod:`.is_loop` (the stack form, :func:`.is_loop.pack`)
and :mod:`.is_regs` (the register form, :func:`.is_regs.pack_registers`): it imports neither, so they
import it, and each other one way only (``is_loop`` → ``is_regs``), at module level."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compiler import Program
from .codegen import loopable


def packable(prog: Program) -> bool:
    """Whether the many-steps interpreter applies: an ensemble (:func:`.codegen.loopable`) whose members
    share one bytecode (``index`` None: option ``unify`` on, or no per-member parameters)."""
    return loopable(prog) and prog.index is None


@dataclass(frozen=True)
class Packed:
    """A program packed for the loop kernel: ``code`` (one word an instruction), ``imm`` (a constant
    operand's value, else 0), ``dslot`` (the derivative slots, renumbered) and ``n_slots`` (slots the
    renumbered program uses)."""
    code: np.ndarray
    imm: np.ndarray
    dslot: np.ndarray
    n_slots: int


def immediates(consts, kidx: np.ndarray, dtype, size: int) -> np.ndarray:
    """``size`` immediates in ``dtype``: ``consts[kidx[j]]`` where ``kidx[j]`` ≥ 0, else 0 (and 0 past
    ``kidx``)."""
    imm = np.zeros(size, dtype=dtype)
    has = kidx >= 0
    imm[:kidx.size][has] = np.asarray(consts).astype(dtype)[kidx[has]]
    return imm
