"""Theoretical occupancy of a kernel launch: NVIDIA's occupancy calculator, for every CC.

Occupancy = active warps per SM / maximum warps per SM (paper 000 Eq. 1; paper 003 Eqs. 2–4).
The number of resident blocks per SM is the minimum of four limits::

    warps:          floor(max_warps_per_sm / warps_per_block)         (0 if the block is too big)
    blocks:         max_blocks_per_sm
    registers:      CC 1.x  floor(regs_per_sm / R_block),
                            R_block = ceil(ceil(warps, 2)·32·regs, unit)       (per block)
                    CC ≥ 2  P · floor((regs_per_sm / P) / R_warp) / warps_per_block,
                            R_warp  = ceil(32·regs, unit), P sub-partitions    (per warp)
    shared memory:  floor(S_sm / S_block),
                    S_block = ceil(static + dynamic + reserved, smem_unit),
                    S_sm = the carve-out in force (CC ≥ 7: the preferred size rounded up to a
                           supported configuration, or the smallest one holding one block)

The CC ≥ 2 rules are those of ``cuda_occupancy.h`` (the driver's
``cuOccupancyMaxActiveBlocksPerMultiprocessor``), including the hardware's per-block register
check that rounds the warps of a block up to the sub-partitions, so that the results agree
exactly with ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` on a real GPU (the ``-m gpu``
sweep in tests/test_occupancy_gpu.py).  CC 1.x follows NVIDIA's occupancy spreadsheet and
reproduces paper 004 Table 4.4.

Inputs that cannot launch at all (too many threads, registers or shared memory) raise
:class:`~kernels.errors.InvalidParameter` with the exact reason; pass ``strict=False`` to get
a result with 0 active blocks and the reason in ``problems`` instead (used by the charts and
the GPU comparison, where such points are part of the curve).
"""
from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, field

from ..errors import InvalidParameter
from .specs import KB, ArchSpec, get_spec

#: resource names, in the order the results table lists them
RESOURCES = ("warps", "blocks", "registers", "shared_memory")
LABELS = {"warps": "warps per SM", "blocks": "blocks per SM", "registers": "registers",
          "shared_memory": "shared memory"}
UNLIMITED = 1 << 30


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _cdiv(a, b) * b


@dataclass
class OccupancyResult:
    """Everything the calculator derives for one launch configuration."""

    cc: str
    threads_per_block: int
    regs_per_thread: int
    smem_static: int
    smem_dynamic: int
    carveout: int | None                 # percent, None = driver default
    warps_per_block: int
    regs_per_block: int                  # allocated (after the allocation granularity)
    smem_per_block: int                  # allocated, incl. the per-block reservation
    smem_per_sm: int                     # the shared-memory configuration in force
    limits: dict                         # resource -> blocks per SM it allows (None = no limit)
    active_blocks_per_sm: int
    active_warps_per_sm: int
    active_threads_per_sm: int
    max_warps_per_sm: int
    occupancy: float                     # 0–1
    limiters: list                       # resources whose limit equals the active blocks
    problems: list = field(default_factory=list)   # why it cannot launch (strict=False)
    notes: list = field(default_factory=list)

    @property
    def limiter(self) -> str:
        return "+".join(self.limiters)

    @property
    def fits(self) -> bool:
        return not self.problems and self.active_blocks_per_sm > 0

    def as_dict(self) -> dict:
        d = asdict(self)
        d["limiter"] = self.limiter
        d["fits"] = self.fits
        return d


def _check_int(name: str, v, lo: int | None = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise InvalidParameter(f"{name} must be an integer, got {v!r}")
    v = int(v)
    if lo is not None and v < lo:
        raise InvalidParameter(f"{name} must be ≥ {lo}, got {v}")
    return v


def align_up_smem_config(spec: ArchSpec, size: int) -> int:
    """The smallest selectable shared-memory size per SM holding ``size`` bytes
    (``cudaOccAlignUpShmemSizeVoltaPlus``); the full size if none is configurable."""
    if not spec.smem_configs:
        return spec.smem_per_sm
    for c in spec.smem_configs:
        if size <= c:
            return c
    return spec.smem_configs[-1]


def smem_per_sm_preference(spec: ArchSpec, carveout: int | None) -> int:
    """Shared memory per SM that a carve-out preference (percent, None = default) selects."""
    if carveout is None or carveout == -1 or not spec.smem_configs:
        return spec.smem_per_sm
    pref = carveout * spec.smem_per_sm // 100
    return align_up_smem_config(spec, pref)


def occupancy(cc, threads_per_block, regs_per_thread, smem_static=0, smem_dynamic=0,
              carveout=None, strict: bool = True) -> OccupancyResult:
    """Theoretical occupancy of one launch.

    Parameters
    ----------
    cc : compute capability ("9.0", (9, 0), …) or an :class:`ArchSpec` (e.g. of the live GPU)
    threads_per_block : int, 1 … max threads per block of the CC
    regs_per_thread : int, registers per thread as the compiler reports them (0 … 255)
    smem_static, smem_dynamic : int, bytes of static (``__shared__``) and dynamic shared memory
    carveout : int or None, preferred shared-memory carve-out in percent of the maximum
        (``cudaFuncAttributePreferredSharedMemoryCarveout``; CC ≥ 7, and the L1/shared split of
        CC 2.x/3.x); None or -1 = the driver default (the largest configuration)
    strict : raise InvalidParameter for a configuration that cannot launch (default), or
        return 0 active blocks with the reasons in ``problems``
    """
    spec = get_spec(cc)
    threads = _check_int("threads per block", threads_per_block, 1)
    regs = _check_int("registers per thread", regs_per_thread, 0)
    s_static = _check_int("static shared memory (bytes)", smem_static, 0)
    s_dyn = _check_int("dynamic shared memory (bytes)", smem_dynamic, 0)
    if carveout is not None:
        carveout = _check_int("shared-memory carve-out (%)", carveout, -1)
        if carveout > 100:
            raise InvalidParameter(f"shared-memory carve-out is a percentage (0–100, or -1 for the "
                                   f"default), got {carveout}")
    problems: list[str] = []
    notes: list[str] = []
    cc_name = f"CC {spec.cc}"

    warps = _cdiv(threads, spec.warp_size)
    # ---------------------------------------------------------------- warps / blocks
    if threads > spec.max_threads_per_block:
        problems.append(f"{threads} threads per block exceed the {cc_name} limit of "
                        f"{spec.max_threads_per_block}")
        lim_warps = 0
    else:
        lim_warps = spec.max_warps_per_sm // warps
    lim_blocks = spec.max_blocks_per_sm
    if threads % spec.warp_size:
        notes.append(f"{threads} is not a multiple of the warp size {spec.warp_size}: the last warp "
                     f"of each block has {threads % spec.warp_size} active threads")

    # -------------------------------------------------------------------- registers
    if regs > spec.max_regs_per_thread:
        problems.append(f"{regs} registers per thread exceed the {cc_name} limit of "
                        f"{spec.max_regs_per_thread}")
    if spec.reg_alloc_granularity == "block":          # CC 1.x: per block
        regs_block = _round_up(_round_up(warps, spec.warp_alloc_granularity) * spec.warp_size * regs,
                               spec.reg_alloc_unit)
        if regs_block > spec.max_regs_per_block:
            problems.append(f"{threads} threads × {regs} registers need {regs_block} registers per block "
                            f"(threads rounded up to {spec.warp_alloc_granularity * spec.warp_size}, "
                            f"units of {spec.reg_alloc_unit}); the {cc_name} limit is "
                            f"{spec.max_regs_per_block}")
            lim_regs = 0
        elif regs > spec.max_regs_per_thread:
            lim_regs = 0
        else:
            lim_regs = spec.regs_per_sm // regs_block if regs_block else UNLIMITED
    else:                                               # CC ≥ 2: per warp, per sub-partition
        parts = spec.warp_alloc_granularity
        regs_warp = _round_up(regs * spec.warp_size, spec.reg_alloc_unit)
        regs_block = regs_warp * warps
        regs_assumed = regs_warp * _round_up(warps, parts)
        if regs_block > spec.max_regs_per_block or regs_assumed > spec.max_regs_per_block:
            problems.append(f"{threads} threads × {regs} registers need {regs_assumed} registers per "
                            f"block (per warp {regs_warp} = 32·{regs} rounded up to "
                            f"{spec.reg_alloc_unit}, warps rounded up to {parts} sub-partitions); "
                            f"the {cc_name} limit is {spec.max_regs_per_block}")
            lim_regs = 0
        elif regs > spec.max_regs_per_thread:
            lim_regs = 0
        elif regs_warp == 0:
            lim_regs = UNLIMITED
        else:
            warps_per_part = (spec.regs_per_sm // parts) // regs_warp
            lim_regs = warps_per_part * parts // warps

    # ---------------------------------------------------------------- shared memory
    if s_static > spec.max_static_smem_per_block:
        problems.append(f"static shared memory {s_static} B exceeds the {spec.max_static_smem_per_block} B "
                        f"({spec.max_static_smem_per_block // KB} KB) that __shared__ declarations may use "
                        f"on {cc_name}; larger buffers must be dynamic")
    total = s_static + s_dyn + spec.reserved_smem_per_block
    smem_block = _round_up(total, spec.smem_alloc_unit)
    limit_block = spec.max_smem_per_block_optin + spec.reserved_smem_per_block
    pref = smem_per_sm_preference(spec, carveout)
    if carveout not in (None, -1) and not spec.smem_configs:
        notes.append(f"{cc_name} has a fixed shared memory of {spec.smem_per_sm} B per SM: "
                     "the carve-out does not apply")
    if smem_block > limit_block:
        extra = "" if spec.reserved_smem_per_block == 0 else \
            f" incl. the {spec.reserved_smem_per_block} B the driver reserves per block"
        problems.append(f"shared memory per block {smem_block} B{extra} exceeds the {cc_name} limit of "
                        f"{limit_block} B")
        lim_smem = 0
        smem_sm = pref
    else:
        if pref >= smem_block:
            smem_sm = pref
        elif spec.major >= 7:
            smem_sm = align_up_smem_config(spec, smem_block)
            notes.append(f"the carve-out preference ({pref} B) is smaller than one block's shared memory: "
                         f"the driver selects {smem_sm} B")
        else:
            smem_sm = spec.smem_per_sm
        lim_smem = smem_sm // smem_block if smem_block else UNLIMITED

    limits = {"warps": lim_warps, "blocks": lim_blocks, "registers": lim_regs, "shared_memory": lim_smem}
    active = min(limits.values())
    if problems:
        if strict:
            raise InvalidParameter(problems[0])
        active = 0
    limiters = [k for k in RESOURCES if limits[k] == active]
    active_warps = active * warps
    return OccupancyResult(
        cc=spec.cc, threads_per_block=threads, regs_per_thread=regs, smem_static=s_static,
        smem_dynamic=s_dyn, carveout=carveout, warps_per_block=warps, regs_per_block=regs_block,
        smem_per_block=smem_block, smem_per_sm=smem_sm,
        limits={k: (None if v >= UNLIMITED else v) for k, v in limits.items()},
        active_blocks_per_sm=active, active_warps_per_sm=active_warps,
        active_threads_per_sm=active * threads, max_warps_per_sm=spec.max_warps_per_sm,
        occupancy=active_warps / spec.max_warps_per_sm, limiters=limiters, problems=problems,
        notes=notes)


# ------------------------------------------------------------------------ curves (the three charts)

def curve(cc, vary: str, values, threads_per_block=256, regs_per_thread=32, smem_static=0,
          smem_dynamic=0, carveout=None):
    """Occupancy (0–1) as one input varies, the others fixed: ``vary`` is "threads", "regs" or
    "smem" (static + dynamic together, counted as dynamic).  Points that cannot launch give 0."""
    base = dict(threads_per_block=threads_per_block, regs_per_thread=regs_per_thread,
                smem_static=smem_static, smem_dynamic=smem_dynamic, carveout=carveout, strict=False)
    key = {"threads": "threads_per_block", "regs": "regs_per_thread", "smem": "smem_dynamic"}[vary]
    out = []
    for v in values:
        kw = dict(base)
        kw[key] = int(v)
        if vary == "smem":
            kw["smem_static"] = 0
        out.append(occupancy(cc, **kw).occupancy)
    return out


def default_axis(cc, vary: str) -> list[int]:
    """The x values NVIDIA's spreadsheet plots: block sizes in warps, every register count, and
    shared memory in allocation-unit steps up to the per-block maximum."""
    spec = get_spec(cc)
    if vary == "threads":
        return list(range(spec.warp_size, spec.max_threads_per_block + 1, spec.warp_size))
    if vary == "regs":
        return list(range(0, spec.max_regs_per_thread + 1))
    if vary == "smem":
        top = spec.max_smem_per_block_optin
        step = max(spec.smem_alloc_unit, _round_up(top // 256, spec.smem_alloc_unit))
        return list(range(0, top + 1, step))
    raise InvalidParameter(f"unknown axis {vary!r}: use threads, regs or smem")


def max_potential_block_size(cc, regs_per_thread, smem_static=0, smem_per_block=0, smem_per_thread=0,
                             carveout=None, max_threads=None):
    """Block size with the most active threads per SM, larger blocks first on ties
    (``cudaOccupancyMaxPotentialBlockSize``, used by paper 002).  Returns (block, blocks per SM)."""
    spec = get_spec(cc)
    top = min(spec.max_threads_per_block, max_threads or spec.max_threads_per_block)
    best = (0, 0, 0)
    for b in range(_round_up(top, spec.warp_size), 0, -spec.warp_size):
        b = min(b, top)
        r = occupancy(spec, b, regs_per_thread, smem_static, smem_per_block + smem_per_thread * b,
                      carveout, strict=False)
        threads = r.active_blocks_per_sm * b
        if threads > best[0]:
            best = (threads, b, r.active_blocks_per_sm)
        if threads == spec.max_threads_per_sm:
            break
    return best[1], best[2]


__all__ = ["RESOURCES", "LABELS", "UNLIMITED", "OccupancyResult", "align_up_smem_config", "smem_per_sm_preference",
           "occupancy", "curve", "default_axis", "max_potential_block_size"]
