"""Printers of a compiled program's scheduled DAG, one class a target language, like SymPy's
``CodePrinter`` family: :class:`DagPrinter` walks the DAG (a node another function materialises is
read as that function's variable; leaves as the target's arrays) and each subclass says how a leaf
reads; every operation is written from the one operator table, :data:`kernels.flint.expr.OPERATORS`.

A power with a small whole constant exponent of a plain operand (a state, a parameter, a function's
variable), ``pow(x, 2|3|4)``, is written as the product ``x*x*x`` in every target (issue 23): the
GPU's double ``pow`` is a long instruction sequence on the step's critical path (LR-1991's m³), and one
spelling for every printer keeps the NumPy, C and CUDA runtimes on the same roundings.

* :class:`NumpyPrinter` — NumPy, vectorised over members (runtime ``cpu``, the adaptive twin);
* :class:`PythonPrinter` — Python floats and ``math`` (one member);
* :class:`CPrinter` — C / CUDA (the translator TS, host runtime ``c``, the adaptive kernel).
"""
from __future__ import annotations

import numpy as np

from ..expr import print_op


#: exponents :meth:`DagPrinter.small_power` writes as products
SMALL_POWERS = (2.0, 3.0, 4.0)


class DagPrinter:
    """``p(nid, top, cur, subst)`` → the expression text of node ``nid`` inside function ``cur``
    (``top``: nid is that function's root); ``subst`` maps node ids to replacement text (a
    warp-parallel sum's total).  ``var(name)``: how a function's value is read; ``state(s)``: how
    state s is read (default ``s<s>``)."""
    target = ""
    #: write ``pow(x, 2|3|4)`` as a product (:meth:`small_power`); the translator's expression
    #: mapping turns it off, to print the same operations as its unified bytecode (``POW``)
    powers_as_products = True

    def __init__(self, prog, var, state=None):
        self.nodes, self.functions, self.var = prog.nodes, prog.functions, var
        self.mat: dict = {}
        for name in prog.order:
            self.mat.setdefault(prog.functions[name].root, name)
        self.cidx = {np.float64(v).tobytes(): i for i, v in enumerate(prog.consts)}
        self.state = state or (lambda s: f"s{s}")
        seen: set = set()
        self.shared: set = set()          # nodes that are an operand more than once (:meth:`__call__`)
        for _op, args, _v in self.nodes:
            for a in args:
                (self.shared if a in seen else seen).add(a)
        self.memo: dict = {}              # shared node id → its text as an inner node

    # --- leaves ----------------------------------------------------------------------------------
    def const(self, value) -> str:
        return f"K[{self.cidx[np.float64(value).tobytes()]}]"

    def pvar(self, k) -> str:
        return f"P[{k}]"

    def nb(self, s, off) -> str:
        return f"nb(S, {s}, {off})"

    def op(self, op: str, args: list) -> str:
        return print_op(op, args, self.target)

    def small_power(self, args, cur, subst) -> str | None:
        """``x*x…`` for ``pow(x, k)`` with ``k`` in :data:`SMALL_POWERS` and ``x`` a leaf or a
        materialised function (printed as one name, so the product repeats no work), else None."""
        base, ex = (self.nodes[a] for a in args)
        if ex[0] != "const" or float(ex[2]) not in SMALL_POWERS:
            return None
        if not (base[0] in ("state", "pvar", "fvar", "const", "time") or args[0] in self.mat):
            return None
        x = self(args[0], False, cur, subst)
        return "(" + "*".join([x] * int(ex[2])) + ")"

    def __call__(self, nid, top=False, cur=None, subst=None) -> str:
        if top or subst or nid not in self.shared:
            return self.text(nid, top, cur, subst)
        txt = self.memo.get(nid)
        if txt is None:
            txt = self.memo[nid] = self.text(nid, False, cur, None)
        return txt

    def text(self, nid, top=False, cur=None, subst=None) -> str:
        """:meth:`__call__`, printed anew.  An inner node's text (``top`` False, no ``subst``) depends
        on the node alone (``cur`` matters at a function's root only), so :meth:`__call__` prints a
        node the DAG shares once per printer and reads it back after (the same text; set
        :attr:`powers_as_products` before printing)."""
        if subst and nid in subst:
            return subst[nid]
        mat, var = self.mat, self.var
        if not top and nid in mat:
            return var(mat[nid])
        op, args, value = self.nodes[nid]
        if op == "fvar":
            return var(mat.get(self.functions[value].root, value))
        if top and nid in mat and mat[nid] != cur:
            return var(mat[nid])
        if op == "const":
            return self.const(value)
        if op == "pvar":
            return self.pvar(value)
        if op == "state":
            return self.state(value)
        if op == "nb":
            return self.nb(*value)
        if op == "time":
            return "t"
        if op == "pow" and self.powers_as_products:
            prod = self.small_power(args, cur, subst)
            if prod is not None:
                return prod
        return self.op(op, [self(x, False, cur, subst) for x in args])


class NumpyPrinter(DagPrinter):
    target = "numpy"


class PythonPrinter(DagPrinter):
    target = "python"


class CPrinter(DagPrinter):
    target = "c"

    def pvar(self, k) -> str:
        return f"P[(size_t){k}*n+i]"

    def nb(self, s, off) -> str:
        return f"NB({s}, {off})"


class LiteralCPrinter(CPrinter):
    """C / CUDA with the constants written as literals instead of reads of the table ``K`` (the
    many-steps translator kernel, issue 23): ``repr`` of a float64 round-trips, so each literal is
    the table's value, and the compiler folds what IEEE arithmetic allows (``x / 1.0``, ``1.0 * x``)
    and keeps the constants in instructions.  Finite constants only (:meth:`applies`)."""

    @staticmethod
    def applies(consts) -> bool:
        return bool(np.all(np.isfinite(np.asarray(consts, dtype=np.float64))))

    def const(self, value) -> str:
        return f"((REAL){float(value)!r})"


PRINTERS = {"np": NumpyPrinter, "py": PythonPrinter, "c": CPrinter, "c-literal": LiteralCPrinter}
