"""Driver for Nsight Compute on the Cahn–Hilliard kernels (run on a CUDA machine under ncu):
a few RK2 steps of one kernel at the benchmark sizes (2D 4096², 3D 256³, float32, periodic).

    ncu --clock-control none --section SpeedOfLight -k regex:ch_fused_wmarch2d -s 3 -c 1 \\
        python benchmarks/ch_ncu.py E 2 [attr=value ...]

attr=value sets a CudaStepper attribute (value evaluated as a Python literal), e.g.
fused_impl='sliding' or tile_impl='march'; @FILE takes this dimension's attributes from the JSON
that benchmarks/ch_scan.py --best writes."""
from __future__ import annotations

import ast
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.ch import apply_attrs, field  # noqa: E402
from kernels.backend import gpu_backend  # noqa: E402
from kernels.cahn_hilliard.params import CHParams  # noqa: E402


def main(argv):
    import cupy as cp
    from kernels.cahn_hilliard.cuda_stepper import CudaStepper
    variant, dim = argv[0], int(argv[1])
    n, dt = (4096, 0.01) if dim == 2 else (256, 0.005)
    p = CHParams(dim=dim, size=n, dt=dt, integrator="rk2", boundary="periodic", variant=variant)
    attrs = {}
    for a in argv[2:]:
        if a.startswith("@"):
            with open(a[1:]) as fh:
                attrs.update(json.load(fh).get(str(dim), {}))
        else:
            k, v = a.split("=", 1)
            attrs[k] = ast.literal_eval(v)
    st = apply_attrs(CudaStepper(p, gpu_backend()), attrs)
    print("attributes:", attrs)
    phi = st.step(field(p.shape, cp), 6)
    cp.cuda.Device().synchronize()
    print(variant, dim, float(phi.mean()))


if __name__ == "__main__":
    main(sys.argv[1:])
