"""``occupancy``: the CUDA occupancy calculator headless (papers 003, 004, 000).

Numbers are parsed in :func:`run` so that bad input gives one ``error:`` line."""
from __future__ import annotations

# Imports inside functions: keep `--help` fast (cli loads every command module; kernels.occupancy
# loads only when the command runs).
from kernels import backend as bk

from .common import UsageError, dumps, num_type, number

NAME = "occupancy"
USES_BACKEND = True


def _int(name: str, v) -> int:
    return number(name, v, int)


def add_parser(sub, parents) -> None:
    p = sub.add_parser(NAME, parents=parents, help="CUDA occupancy calculator (papers 003, 004, 000)",
                       description="Theoretical occupancy of a kernel launch for a compute capability "
                                   "(1.0 … 12.0, or 'device' for the GPU in this machine).")
    p.add_argument("--cc", default=None, help="compute capability, e.g. 9.0, 8.6, 1.3; 'device' = this GPU "
                                              "(default: this GPU if there is one)")
    p.add_argument("--threads", default=256, type=num_type(int), help="threads per block")
    p.add_argument("--regs", default=32, type=num_type(int, minimum=0, maximum=65_536), help="registers per thread")
    p.add_argument("--smem", default=0, type=num_type(int, minimum=0, maximum=2**31 - 1), help="dynamic shared memory per block (bytes)")
    p.add_argument("--static-smem", default=0, type=num_type(int, minimum=0, maximum=2**31 - 1), help="static __shared__ memory per block (bytes)")
    p.add_argument("--carveout", default=None, type=num_type(int), help="preferred shared-memory carve-out in %% (CC ≥ 7.0; "
                                                    "default: the driver's, the largest)")
    p.add_argument("--curves", action="store_true", help="include the three occupancy curves in the JSON")
    p.add_argument("--list-ccs", action="store_true", help="print the per-CC data table and exit")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")




def run(a) -> int:
    from kernels.occupancy import curve, default_axis, get_spec, occupancy
    from kernels.occupancy.specs import table_rows
    if a.list_ccs:
        rows = table_rows()
        if a.json:
            print(dumps(rows))
        else:
            for r in rows:
                print(f"{r['cc']:>5} {r['arch']:<22} warps/SM {r['max_warps_per_sm']:3d}  blocks/SM "
                      f"{r['max_blocks_per_sm']:3d}  regs/SM {r['regs_per_sm']:6d}  smem/SM {r['smem_per_sm']:6d}")
        return 0
    if a.cc in (None, "device"):
        be = bk.select(a.backend or ("gpu" if a.cc == "device" else "auto"))
        if not be.is_gpu:
            raise UsageError(f"no GPU to take the compute capability from ({be.notice}); give --cc, e.g. --cc 9.0")
        from kernels.occupancy.gpu import device_spec
        spec = device_spec()
    else:
        spec = get_spec(a.cc)
    threads, regs = _int("--threads", a.threads), _int("--regs", a.regs)
    smem, static = _int("--smem", a.smem), _int("--static-smem", a.static_smem)
    carve = None if a.carveout is None else _int("--carveout", a.carveout)
    r = occupancy(spec, threads, regs, static, smem, carveout=carve)
    out = r.as_dict()
    out.update(arch=spec.arch, gpu_examples=spec.examples, occupancy_percent=round(100 * r.occupancy, 2))
    if a.curves:
        out["curves"] = {v: {"x": default_axis(spec, v),
                             "occupancy": curve(spec, v, default_axis(spec, v), threads, regs, static, smem, carve)}
                         for v in ("threads", "regs", "smem")}
    if a.json:
        print(dumps(out))
        return 0
    print(f"CC {spec.cc} ({spec.arch}): {threads} threads/block, {regs} registers/thread, "
          f"{static} + {smem} B shared memory per block")
    for k in ("warps_per_block", "regs_per_block", "smem_per_block", "smem_per_sm"):
        print(f"{k:>32}: {out[k]}")
    for k, v in r.limits.items():
        mark = "  <- limiter" if k in r.limiters else ""
        print(f"{'blocks limited by ' + k:>32}: {'no limit' if v is None else v}{mark}")
    print(f"{'active blocks per SM':>32}: {r.active_blocks_per_sm}")
    print(f"{'active warps per SM':>32}: {r.active_warps_per_sm} of {r.max_warps_per_sm}")
    print(f"{'occupancy':>32}: {r.occupancy:.1%}")
    for n in r.notes:
        print(f"note: {n}")
    return 0
