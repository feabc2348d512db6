"""The host backend of the GPU layer: the same CUDA sources compiled by the host C++ compiler after a
CUDA prelude and run on the CPU cores ("CUDA source run on the CPU").

    from kernels.gpu.host import HostDevice
    dev = HostDevice()                        # dev.xp is numpy, dev.emulated is True
    k = dev.module(path_or_source, name_expressions=("fw_v3<int,true>",)).function("fw_v3<int,true>")
    dev.launch(k, grid, block, args, shared_mem=0, cooperative=False)

Execution model: ``cuda_host.cuh``; intrinsics: ``cuda_intrinsics.cuh``; loading: :mod:`.source`;
device, modules, kernels and argument marshalling: :mod:`.device`.
"""
from .device import HostDevice, HostKernel, HostModule

__all__ = ["HostDevice", "HostKernel", "HostModule"]
