"""Runtime ``c-is``: the bytecode interpreter's CUDA source compiled for host cores, one compile for
every model of a size class (the thesis's "IS CPU-1", paper 004 Table 5.4; :mod:`.host_c`)."""
from __future__ import annotations

from .host_c import HostRuntime


class HostInterpreterRuntime(HostRuntime):
    name = "c-is"
    help = "the bytecode interpreter compiled for the CPU (one compile for every model of a size)"
    flavour = "is"
