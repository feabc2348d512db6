"""Runtime ``c``: the translator's thread-per-cell CUDA C compiled for host cores by the host C++
compiler, per model (the thesis's "TS CPU-1" / "TS CPU-8", paper 004 Table 5.4; :mod:`.host_c`)."""
from __future__ import annotations

from .host_c import HostRuntime


class HostTranslatorRuntime(HostRuntime):
    name = "c"
    help = "the translator's C compiled for the CPU by the host C++ compiler (g++/clang++), per model"
    flavour = "ts"
