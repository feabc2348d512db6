"""The occupancy calculator: :mod:`kernels.gpu.calculator` (the GPU layer's hardware model, used by
:func:`kernels.gpu.launch_occupancy` too), re-exported here for the Occupancy system's users."""
from ..gpu.calculator import *  # noqa: F401,F403 - the re-export is this module's purpose
from ..gpu.calculator import __all__  # noqa: F401
