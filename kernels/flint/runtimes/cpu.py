"""Runtime ``cpu``: the program as generated NumPy code, vectorised over members/cells (or, with
``bytecode_on_cpu``, the bytecode interpreter emulated with NumPy: :mod:`.emulate`).  No compiler
needed; the reference the other runtimes are checked against."""
from __future__ import annotations

import math

import numpy as np

from ...errors import SimulationBlowUp
from .base import RK4_STAGES, Runtime
from .codegen import numpy_source
from .emulate import interpret


class CpuRuntime(Runtime):
    name = "cpu"
    help = "NumPy on the CPU, vectorised over members/cells (no compiler needed)"

    @classmethod
    def memory(cls, n_states, n_functions, n, n_pvar, mapping, itemsize):
        return 8 * n * (n_functions + 4 * n_states), 0        # one temporary a function, RK4 stages

    def build(self, prog, dtype) -> None:
        self.prog, self.dtype = prog, np.dtype(dtype)
        self.scalar = self.n == 1 and not self.bytecode_on_cpu
        ns = {"np": np, "nb": None, **{k: getattr(math, k) for k in dir(math) if not k.startswith("_")}}
        exec(numpy_source(prog, scalar=self.scalar), ns)      # noqa: S102 (our own generated code)
        self.rhs = ns["rhs"]
        self.P = prog.pvar_values.astype(self.dtype)
        self.K = prog.consts.astype(self.dtype)

    def _nb(self, S, s, off):
        n = self.n
        idx = np.arange(n) + off
        idx = np.mod(idx, n) if self.net_code == 2 else np.clip(idx, 0, n - 1)
        return S[s, idx]

    def deriv(self, S, kin, cdt, t):
        """f at the stage values S + cdt·kin (kin None: at S), (n_states, n)."""
        if self.bytecode_on_cpu:
            return interpret(self.prog, S, kin, cdt, t, self.P, mapping=self.mapping)
        if self.scalar:
            d = self.rhs([float(v) for v in S[:, 0]], None if kin is None else [float(v) for v in kin[:, 0]],
                         cdt, t, [float(p) for p in self.P[:, 0]] if self.P.size else None,
                         [float(k) for k in self.K], None)
            return np.array(d, dtype=self.dtype)[:, None]
        if self.net_code:
            Sk = S if kin is None else S + cdt * kin          # neighbours' stage values
            nbf = lambda _S, s, off: self._nb(Sk, s, off)    # noqa: E731
        else:
            nbf = None
        d = self.rhs(S, kin, cdt, t, self.P, self.K, nbf)
        return np.stack([np.broadcast_to(np.asarray(v, dtype=self.dtype), (self.n,)) for v in d])

    def _step(self, dt, t):
        if self.integrator == "euler":
            return self.y + dt * self.deriv(self.y, None, 0.0, t)
        acc = kin = None
        for j, (c, w) in enumerate(RK4_STAGES):
            d = self.deriv(self.y, kin, c * dt, t + c * dt) if j else self.deriv(self.y, None, 0.0, t)
            if j == 0:
                acc = w * d
            elif j < 3:
                acc = acc + w * d
            else:
                return self.y + dt * (acc + w * d)
            kin = d

    def advance(self, k: int, dt: float, step0: int) -> None:
        for step in range(int(step0), int(step0) + int(k)):
            with np.errstate(all="ignore"):
                try:
                    self.y = self._step(dt, step * dt)
                except (ValueError, OverflowError, ZeroDivisionError) as exc:
                    raise SimulationBlowUp(f"math error at {self.prog.model.at(step * dt)}: "
                                           f"{exc}") from None
