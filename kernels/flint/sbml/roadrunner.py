"""libRoadRunner as a peer backend of the adaptive scheme (``flint-suite --runtime roadrunner``)."""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
# Imports inside functions: libRoadRunner is an optional peer (the `peers` extra).


def simulate_roadrunner(model, times, variables, amount, concentration) -> dict[str, np.ndarray]:
    """libRoadRunner as a peer: CVODE, rtol 1e-10, atol 1e-12, fixed output grid; its refusals → Unsupported."""
    import roadrunner
    roadrunner.Logger.setLevel(roadrunner.Logger.LOG_ERROR)
    try:
        rr = roadrunner.RoadRunner(str(model))
    except RuntimeError as exc:  # libRoadRunner names what it refuses: "Unable to support 'fast' reactions …"
        if "Unable to support" in str(exc):
            raise Unsupported(f"libRoadRunner: {str(exc).split(', at ')[0]}") from None
        raise
    integ = rr.getIntegrator()
    integ.setValue("relative_tolerance", 1e-10)
    integ.setValue("absolute_tolerance", 1e-12)
    integ.setValue("variable_step_size", False)
    sel = ["time"] + [f"[{v}]" if v in concentration and v not in amount else v for v in variables]
    times = np.asarray(times, float)
    out = rr.simulate(float(times[0]), float(times[-1]), len(times), selections=sel)
    arr = np.asarray(out, dtype=float)
    return {v: arr[:, k + 1] for k, v in enumerate(variables)}
