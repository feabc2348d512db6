"""Flint: a biophysical ODE model runner (paper 004, Okuyama 2013, chapter 5).

Models (native text, SBML, CellML) → expression DAG → level-scheduled stack bytecode → runtimes:
NumPy (CPU), IS (bytecode interpreter on the GPU) and TS (generated CUDA C).  No Qt here.
"""
from .compiler import CompileOptions, Network, Program, compile_model
from .loaders import load_model, shipped_models
from .model import Model, parse_text
from .runtimes import INTEGRATORS, RUNTIMES, Simulation

__all__ = ["CompileOptions", "Network", "Program", "compile_model", "Model", "load_model", "parse_text",
           "shipped_models", "INTEGRATORS", "RUNTIMES", "Simulation"]
