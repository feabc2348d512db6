"""JAX peers of the Flint ensemble benchmark (issues 23, 38): the same model's right-hand side traced by
JAX, integrated over an ensemble the ways a JAX user would write it.

* :func:`one_cell_rhs` — the one-cell right-hand side f(y, t) of a Flint model: Flint's generated
  NumPy code (:func:`kernels.flint.runtimes.numpy_source`) run with ``jax.numpy``, so JAX integrates
  exactly our equations.
* :func:`fori_euler` — ``jax.jit`` of ``vmap(f)`` with the whole Euler loop in ``lax.fori_loop``.
* :func:`diffrax_solve` — diffrax (Kidger, "On Neural Differential Equations", 2021), the JAX ODE
  library: ``diffeqsolve`` of one cell, ``vmap`` over the members, ``jax.jit`` around it; solvers
  ``Euler`` and ``Dopri5`` (fixed step ``dt``: the same number of steps as Flint's Euler/RK4 runs; or
  adaptive with a PID controller), saving only the final state.

DiffEqGPU's paper (Utkarsh et al., CMAME 2024) reports 20–100× over JAX/diffrax ``vmap`` ensembles
for its kernel-generating ensembles; benchmarks/flint.py says where TS stands.  :func:`available`
says why diffrax cannot run here (None when it can).
"""
from __future__ import annotations

import importlib
import math

import numpy as np

from kernels.flint.compiler import compile_model
from kernels.flint.runtimes import numpy_source


def available() -> str | None:
    """None when jax and diffrax import, else the reason (for a skipped row)."""
    try:
        for name in ("jax", "diffrax"):
            importlib.import_module(name)
    except ImportError as exc:
        return f"diffrax not importable ({exc})"
    return None


def one_cell_rhs(model):
    """(f, y0): ``f(y, t)`` the one-cell right-hand side (y of shape (n_states,)) in jax.numpy, float64;
    ``y0`` the model's initial states (NumPy)."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    ns = {"np": jnp, **{k: getattr(math, k) for k in dir(math) if not k.startswith("_")}}
    prog = compile_model(model, 1)
    exec(numpy_source(prog), ns)                     # noqa: S102 (our own generated code)
    rhs, K, P = ns["rhs"], jnp.asarray(prog.consts), jnp.asarray(prog.pvar_values)

    def f(y, t):
        return jnp.stack([jnp.asarray(v, dtype=jnp.float64).reshape(()) for v in rhs(y, None, 0.0, t, P, K, None)])
    return f, np.array([model.states[s] for s in model.states], dtype=np.float64)


def fori_euler(model, n: int, dt: float):
    """(run, y0): ``run(y, k0, steps)`` takes ``steps`` Euler steps from step ``k0`` of the (n_states, n)
    ensemble ``y`` (``jax.jit``, ``vmap`` over cells, ``lax.fori_loop`` over steps)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    f1, y0 = one_cell_rhs(model)
    f = jax.vmap(f1, in_axes=(1, None), out_axes=1)

    @jax.jit
    def run(y, k0, nsteps):
        return lax.fori_loop(0, nsteps, lambda i, y: y + dt * f(y, (k0 + i) * dt), y)
    return run, jnp.asarray(y0[:, None].repeat(n, 1))


def diffrax_solve(model, n: int, steps: int, dt: float, solver: str = "euler", adaptive: bool = False,
                  rtol: float = 1e-6, atol: float = 1e-9):
    """(run, y0): ``run(y0)`` integrates the (n, n_states) ensemble from t = 0 to ``steps``·``dt`` with
    diffrax and returns (final states (n, n_states), steps taken per member).  ``solver``: "euler" or
    "dopri5"; fixed steps of ``dt`` unless ``adaptive`` (PID controller, ``rtol``/``atol``, first step dt)."""
    import diffrax
    import jax
    import jax.numpy as jnp
    f1, y0 = one_cell_rhs(model)
    term = diffrax.ODETerm(lambda t, y, args: f1(y, t))
    sol = {"euler": diffrax.Euler, "dopri5": diffrax.Dopri5}[solver]()
    ctrl = diffrax.PIDController(rtol=rtol, atol=atol) if adaptive else diffrax.ConstantStepSize()
    t1 = steps * dt

    def one(y):
        s = diffrax.diffeqsolve(term, sol, 0.0, t1, dt, y, stepsize_controller=ctrl,
                                saveat=diffrax.SaveAt(t1=True), max_steps=int(steps * (4 if adaptive else 1)) + 16)
        return s.ys[-1], s.stats["num_steps"]

    return jax.jit(jax.vmap(one)), jnp.asarray(y0[None, :].repeat(n, 0))
