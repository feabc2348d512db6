"""Per-compute-capability limits: :mod:`kernels.gpu.specs` (the GPU layer's hardware model),
re-exported here for the Occupancy system's users."""
from ..gpu.specs import *  # noqa: F401,F403 - the re-export is this module's purpose
from ..gpu.specs import __all__  # noqa: F401
