"""The words the Graphs tabs put on a CUDA method that runs without a GPU (issue 33).

Without a GPU the CUDA methods run their own ``.cu`` source on the CPU (the host device of
:mod:`kernels.gpu`): the same results, host times.  Their controls stay enabled and say so.
"""
from __future__ import annotations

#: the suffix of a method's label when its CUDA source runs on the CPU
HOST_LABEL = "(CUDA source run on the CPU)"
#: appended to its tooltip
HOST_TIP = (". No GPU here: the same CUDA source is compiled for the CPU and run there (the GPU's results, "
            "host times; runs estimated above about 30 s are refused, naming the limit)")


def label(text: str, emulated: bool) -> str:
    """``text``, followed by :data:`HOST_LABEL` when ``emulated``."""
    return f"{text} {HOST_LABEL}" if emulated else text
