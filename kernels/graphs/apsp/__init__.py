"""All-pairs shortest paths (papers 000, 002, 004): the API, the method registry and one module per family.

* :mod:`.api` — :func:`apsp` (dispatch by name or class), the memory and weight checks, one path;
* :mod:`.core` — :class:`APSPMethod`, the registry :data:`METHODS`, :class:`APSPResult`, compact hop
  storage, ``cpu`` (scipy.sparse.csgraph, the reference);
* :mod:`.bfs` — paper 000 §4.3's seven BFS kernels and ``gpu-bfs``; :mod:`.msbfs` — bit-parallel
  multi-source BFS;
* :mod:`.fw` (with :mod:`.fw_core` the dense solver, :mod:`.fw_gpu` / :mod:`.fw_cpu` the kernels,
  :mod:`.fw_tune` the timing tuner) — the Floyd–Warshall family, papers 002 and 004 ch. 4;
* :mod:`.sssp` — paper 004 ch. 3's SSSP methods; :mod:`.dijkstra` — its CPU comparator;
* :mod:`.multi` — rows over several GPUs (issue 27); :mod:`.paths` — paths from recorded predecessors.

Registration is explicit, here, in :data:`FAMILIES` order (the CLI's ``--apsp`` choices and the
GUI's list): a new method is one class in its family's module and one entry below.
"""
from .api import (METHODS, apsp, check_memory, check_weights, estimate_bytes, method_names, path_between,
                  shortest_path)
from .bfs import (BFSKernel1, BFSKernel2, BFSKernel3, BFSKernel4, BFSKernel5, BFSKernel6, BFSKernel7,
                  BFSKernel7Paper)
from .core import REGISTRY, APSPMethod, APSPResult, DistanceOverflow, ScipyAPSP, hop_dtype, register, sentinel
from .dijkstra import CPUDijkstra
from .fw import (FWV1, FWV2, FWV3, FWV4, FWV5, FWBlocked, FWFast, FWMM, FWPlain, FWRecursive, FWTuned, FWTwoLevel,
                 FWV4Coop)
from .fw_core import floyd_warshall
from .msbfs import MultiSourceBFS
from .multi import MultiGPUBFS, MultiGPUSSSP
from .sssp import HarishSSSP, PathSSSP, StagedSSSP, TaskParallelSSSPMethod

#: every APSP method, by family, in the order :data:`METHODS` lists them (CLI choices, GUI list)
FAMILIES = {
    "cpu": (ScipyAPSP,),
    "bfs": (BFSKernel7, BFSKernel1, BFSKernel2, BFSKernel3, BFSKernel4, BFSKernel5, BFSKernel6, BFSKernel7Paper),
    "fw": (FWV1, FWV2, FWV3, FWV4, FWV4Coop, FWV5, FWPlain, FWBlocked, FWMM, FWTwoLevel, FWTuned, FWRecursive,
           FWFast),
    "sssp": (TaskParallelSSSPMethod, HarishSSSP, StagedSSSP, PathSSSP, CPUDijkstra),
    "msbfs": (MultiSourceBFS,),
    "multi-gpu": (MultiGPUBFS, MultiGPUSSSP),
}
for _family in FAMILIES.values():
    for _cls in _family:
        register(_cls)

__all__ = ["FAMILIES", "METHODS", "REGISTRY", "APSPMethod", "APSPResult", "DistanceOverflow", "apsp",
           "check_memory", "check_weights", "estimate_bytes", "floyd_warshall", "hop_dtype", "method_names",
           "path_between", "register", "sentinel", "shortest_path"]
