"""Flint: a biophysical ODE model runner (paper 004, Okuyama 2013, chapter 5).

Models (native text, SBML, CellML; :mod:`.loaders`) → expression DAG → level-scheduled stack bytecode
(:mod:`.compiler`) → the fixed-step runtimes of :mod:`.runtimes` (NumPy, IS, TS, C, C-IS), driven by
:class:`Simulation` from a :class:`FlintRun`; SBML's adaptive scheme in :mod:`.sbml` and
:mod:`.ensemble` (backends: :mod:`.schemes`).  No Qt here.
"""
from .compiler import CompileOptions, Network, Program, compile_model
from .loaders import load_model, shipped_models
from .model import Model, parse_text
from .run import FlintRun, Vary
from .runtimes import INTEGRATORS, RUNTIMES, Runtime, Simulation, register

__all__ = ["CompileOptions", "Network", "Program", "compile_model", "Model", "load_model", "parse_text",
           "shipped_models", "FlintRun", "Vary", "INTEGRATORS", "RUNTIMES", "Runtime", "Simulation", "register"]
