"""The host path (CUDA source run on the CPU) and the GPU give the same numbers bit for bit for paper
001's approaches 1 and 2 (integer arithmetic: the streams are deterministic), on a fresh seed."""
from __future__ import annotations

import os

import numpy as np
import pytest

from kernels import gpu
from kernels.backend import gpu_available

_ok, _why = gpu_available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _ok, reason=f"needs a CUDA GPU with CuPy: {_why}"),
              pytest.mark.skipif(not gpu.available("host"), reason="needs the host device (a C++ compiler)")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_gpu_and_host_streams_are_identical(dtype):
    from kernels.rng.gpu import PerThreadGPU, SingleTableGPU, to_host
    s = int.from_bytes(os.urandom(6), "little")
    host, cuda = gpu.device("host"), gpu.device("cuda")
    a = [PerThreadGPU(333, s, device=d) for d in (host, cuda)]
    for g in a:
        g.discard(41)
    one = [to_host(g.generate(29, dtype)) for g in a]
    assert np.array_equal(one[0], one[1])
    b = [SingleTableGPU(s, device=d) for d in (host, cuda)]
    two = [to_host(g.generate(100_000, dtype)) for g in b]
    assert np.array_equal(two[0], two[1])
