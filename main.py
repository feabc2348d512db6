"""GPU Science Explorer.

    python main.py                      open the desktop app
    python main.py ch [options]         run Cahn–Hilliard headless (batch / export / JSON)

Both paths use the same compute library (kernels/).  ``--backend cpu|gpu|auto``
or the GSE_BACKEND environment variable chooses CuPy or NumPy.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def _add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default=None,
                   help="array backend (default: GSE_BACKEND or auto = GPU if available)")


def _ch_parser(sub) -> None:
    from kernels.cahn_hilliard.params import BOUNDARIES, INITIALS, INTEGRATORS, VARIANTS, CHParams
    d = CHParams()
    p = sub.add_parser("ch", help="Cahn–Hilliard phase separation (paper 000 §3.1)",
                       description="Run a Cahn–Hilliard simulation headless.")
    _add_backend(p)
    p.add_argument("--dim", type=int, default=d.dim, choices=(2, 3))
    p.add_argument("--size", type=int, default=d.size, help="cells per side")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--dt", type=float, default=d.dt)
    p.add_argument("--m", type=float, default=d.m, help="mobility")
    p.add_argument("--b", type=float, default=d.b, help="coefficient of −bφ")
    p.add_argument("--u", type=float, default=d.u, help="coefficient of uφ³")
    p.add_argument("--K", type=float, default=d.K, help="gradient-energy coefficient")
    p.add_argument("--dx", type=float, default=d.dx)
    p.add_argument("--boundary", choices=BOUNDARIES, default=d.boundary)
    p.add_argument("--boundary-value", type=float, default=d.boundary_value)
    p.add_argument("--initial", choices=INITIALS[:2], default=d.initial)
    p.add_argument("--mean", type=float, default=None, help="initial mean φ (default by --initial)")
    p.add_argument("--noise", type=float, default=d.noise)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--integrator", choices=INTEGRATORS, default=d.integrator)
    p.add_argument("--variant", choices=VARIANTS, default=d.variant, help="kernel variant (A–E need the GPU)")
    p.add_argument("--dtype", choices=("float32", "float64"), default=d.dtype)
    p.add_argument("--load", metavar="FIELD.npz", help="start from a saved field")
    p.add_argument("--record-every", type=int, default=100, help="diagnostics every N steps")
    p.add_argument("--export", metavar="PNG", help="write the final field as PNG (3D: middle slice)")
    p.add_argument("--colormap", default="viridis")
    p.add_argument("--save-field", metavar="NPZ", help="write the final field + parameters")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def run_ch(a) -> int:
    from kernels import backend as bk
    from kernels.cahn_hilliard import CahnHilliard, CHParams
    be = bk.select(a.backend)
    params = CHParams(m=a.m, b=a.b, u=a.u, K=a.K, dx=a.dx, dt=a.dt, dim=a.dim, size=a.size,
                      boundary=a.boundary, boundary_value=a.boundary_value, initial=a.initial,
                      mean=a.mean, noise=a.noise, seed=a.seed, integrator=a.integrator,
                      variant=a.variant, dtype=a.dtype).validate()
    if a.steps < 0:
        raise _usage("--steps must be ≥ 0")
    field0 = None
    if a.load:
        from kernels.cahn_hilliard.io import load_field
        field0, _saved_params, _meta = load_field(a.load)
        params = params.with_changes(initial="file")
    sim = CahnHilliard(params, be, field0=field0)
    if be.notice and not a.json:
        print(f"note: {be.notice}", file=sys.stderr)
    t0 = time.perf_counter()
    done = 0
    every = max(1, a.record_every)
    while done < a.steps:
        n = min(every, a.steps - done)
        sim.step(n)
        done += n
    be.synchronize()
    seconds = time.perf_counter() - t0
    out = sim.summary()
    out.update(seconds=seconds, steps_per_second=(done / seconds if seconds > 0 else None),
               size=params.size, dim=params.dim, integrator=params.integrator,
               variant=params.variant, boundary=params.boundary)
    if a.export:
        from explorer.field_image import save_field_png
        save_field_png(a.export, sim.field_numpy(), cmap=a.colormap)
        out["export"] = a.export
    if a.save_field:
        from kernels.cahn_hilliard.io import save_field
        save_field(a.save_field, sim.field_numpy(), sim.params, t=sim.t, steps=sim.step_count)
        out["saved_field"] = a.save_field
    if a.json:
        print(json.dumps(_json_safe(out), allow_nan=False))
    else:
        for k, v in out.items():
            print(f"{k:>22}: {v}")
    return 0


def _json_safe(d: dict) -> dict:
    """Strict JSON: NaN/Inf (e.g. no coarsening fit yet) become null."""
    import math
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


class _usage(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gpu-science-explorer", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_backend(ap)
    sub = ap.add_subparsers(dest="workspace", metavar="WORKSPACE")
    _ch_parser(sub)
    return ap


COMMANDS = {"ch": run_ch}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = build_parser()
    a = ap.parse_args(argv)
    if a.workspace is None:
        from explorer.app import run_gui
        return run_gui(a.backend)
    from kernels.errors import ExplorerError
    try:
        return COMMANDS[a.workspace](a)
    except (ExplorerError, _usage, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
