"""Flint's fixed-step runtimes, one :class:`Runtime` class a module, and their registry.

  cpu   NumPy (:mod:`.cpu`)                 is    bytecode interpreter, GPU (:mod:`.interpreter`)
  ts    generated CUDA C, GPU (:mod:`.translator`)
  c     the TS source on host cores (:mod:`.host_ts`)   c-is  the IS source on host cores (:mod:`.host_is`)

:class:`Simulation` drives any of them; :mod:`.codegen` prints the sources, :mod:`.emulate` runs the
bytecode with NumPy, :mod:`.memory` checks a run's memory first.  A new runtime: one module with a
:class:`Runtime` subclass and one :func:`register` line below (or from the caller's code).
"""
from .base import INTEGRATORS, MAPPINGS, RUNTIMES, Runtime, register, runtime_class, runtime_help, unregister
from .codegen import NVRTC_OPTIONS, expr_code, is_source, numpy_source, ts_phase_build, ts_phase_source, ts_source
from .cpu import CpuRuntime
from .emulate import interpret
from .host_is import HostInterpreterRuntime
from .host_ts import HostTranslatorRuntime
from .interpreter import InterpreterRuntime
from .memory import check_memory, memory_estimate, record_bytes, samples_in
from .simulation import Simulation, network_stimulus
from .translator import TranslatorRuntime

register(CpuRuntime)
register(InterpreterRuntime)
register(TranslatorRuntime)
register(HostTranslatorRuntime)
register(HostInterpreterRuntime)

__all__ = ["INTEGRATORS", "MAPPINGS", "RUNTIMES", "Runtime", "register", "runtime_class", "runtime_help",
           "unregister", "NVRTC_OPTIONS", "expr_code", "is_source", "numpy_source", "ts_phase_build",
           "ts_phase_source", "ts_source", "interpret", "check_memory", "memory_estimate", "record_bytes",
           "samples_in", "Simulation", "network_stimulus"]
