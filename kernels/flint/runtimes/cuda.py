"""The one compile path of Flint's CUDA runtimes: :func:`cuda_module` (NVRTC through the GPU layer,
:mod:`kernels.gpu`) with :data:`~.codegen.NVRTC_OPTIONS` (no FMA contraction).

A base piece of :mod:`.gpu`, :mod:`.fused`, :mod:`.coupled`, :mod:`.interpreter` and :mod:`.translator`:
it imports none of them, so :mod:`.gpu` can import :mod:`.fused` at module level (no circle)."""
from __future__ import annotations

from ... import gpu
from .codegen import NVRTC_OPTIONS


def cuda_module(source: str, options=NVRTC_OPTIONS, cooperative: bool = False):
    """A module of ``source`` on the current GPU through the GPU layer (:mod:`kernels.gpu`): compiled
    once per device and source, its kernels recorded in the launch registry as Flint's."""
    return gpu.device("cuda").module(source, options=tuple(options), system="flint", prefix="Flint",
                                     cooperative=cooperative)
