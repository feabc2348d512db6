"""Per-compute-capability occupancy data: the limits NVIDIA's occupancy calculator works from.

One :class:`ArchSpec` per compute capability (CC) from 1.0 (G80, the era of papers 000,
003 and 004) to 12.0 (consumer Blackwell).  Sources, cited per field below:

* [PG]   CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
         (warps/SM, blocks/SM, registers, shared memory per SM and per block).
* [XLS]  NVIDIA CUDA Occupancy Calculator spreadsheet (CUDA SDK), its "GPU data" sheet:
         register allocation unit and granularity, shared-memory allocation unit, warp
         allocation granularity, for CC 1.0–8.6 (as ported e.g. by the open-source
         cuda-calculator web page).
* [OCC]  ``cuda_occupancy.h`` (CUDA toolkit; the header-only version of the driver's
         ``cuOccupancyMaxActiveBlocksPerMultiprocessor``): register granularity 256,
         shared-memory granularity 256 (CC 3–7) / 128 (CC ≥ 8), 4 register sub-partitions
         (2 on CC 6.0), the supported shared-memory carve-outs per architecture.
* [CCCL] NVIDIA CCCL ``cuda/__device/arch_traits.h`` (2025): per-SM shared memory, blocks,
         threads, opt-in per-block shared memory and the 1 KB per-block reservation
         (CC ≥ 8.0), for CC 6.0–12.1.
* [T44]  Paper 004 Table 4.4 and the digest's cross-check: the CC 1.x rules below reproduce
         every Y/occupancy cell of that table (tests/test_occupancy.py).

Values marked *assumed* are not in the sources above and are stated as such in ``notes``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..errors import InvalidParameter

KB = 1024


@dataclass(frozen=True)
class ArchSpec:
    """Per-SM and per-block limits of one compute capability (all sizes in bytes or counts)."""

    cc: str                          # "9.0"
    arch: str                        # "Hopper"
    examples: str                    # GPUs with this CC
    max_threads_per_block: int       # [PG]
    max_warps_per_sm: int            # [PG]
    max_blocks_per_sm: int           # [PG]/[CCCL]
    regs_per_sm: int                 # 32-bit registers per SM [PG]
    max_regs_per_block: int          # [PG]
    max_regs_per_thread: int         # [PG]
    reg_alloc_unit: int              # registers allocated in units of this many [XLS]/[OCC]
    reg_alloc_granularity: str       # "block" (CC 1.x) or "warp" (CC ≥ 2.0) [XLS]
    warp_alloc_granularity: int      # CC 1.x: threads rounded up to this many warps;
                                     # CC ≥ 2: register sub-partitions per SM [XLS]/[OCC]
    smem_per_sm: int                 # maximum shared memory per SM (largest carve-out) [PG]
    max_smem_per_block: int          # per block without opt-in [PG]
    max_smem_per_block_optin: int    # per block with opt-in (dynamic shared memory) [PG]/[CCCL]
    smem_alloc_unit: int             # [XLS]/[OCC]
    reserved_smem_per_block: int = 0  # taken by the driver for every block, CC ≥ 8.0 [OCC]/[CCCL]
    smem_configs: tuple = ()         # selectable shared-memory sizes per SM (carve-outs) [OCC]
    warp_size: int = 32
    notes: str = ""

    @property
    def major(self) -> int:
        return int(self.cc.split(".")[0])

    @property
    def minor(self) -> int:
        return int(self.cc.split(".")[1])

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size

    @property
    def max_static_smem_per_block(self) -> int:
        """Statically declared ``__shared__`` is capped at the non-opt-in limit (48 KB)."""
        return self.max_smem_per_block

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["smem_configs"] = list(self.smem_configs)
        d["max_threads_per_sm"] = self.max_threads_per_sm
        return d


_K = lambda *kb: tuple(k * KB for k in kb)   # noqa: E731

# CC 1.x: registers per *block*, threads rounded up to 2 warps; shared memory in 512-byte
# units; no L1/shared split.  [PG] (CUDA 2.x–4.x guides) + [XLS]; max registers/thread 128
# is nvcc's sm_1x cap (the later Fermi limit is 63).
_CC1_0 = ArchSpec("1.0", "Tesla (G80)", "GeForce 8800 GTX/GTS, Quadro FX 5600",
                  512, 24, 8, 8192, 8192, 128, 256, "block", 2,
                  16 * KB, 16 * KB, 16 * KB, 512)
_CC1_2 = replace(_CC1_0, cc="1.2", arch="Tesla (GT21x)", examples="GeForce GT 240",
                 max_warps_per_sm=32, regs_per_sm=16384, max_regs_per_block=16384, reg_alloc_unit=512)

SPECS: dict[str, ArchSpec] = {}


def _add(spec: ArchSpec) -> None:
    SPECS[spec.cc] = spec


_add(_CC1_0)
_add(replace(_CC1_0, cc="1.1", arch="Tesla (G84/G92)", examples="GeForce 8800 GTS 512, 9800 GX2"))
_add(_CC1_2)
_add(replace(_CC1_2, cc="1.3", arch="Tesla (GT200)",
             examples="GeForce GTX 280/260, Tesla T10/C1060, Quadro FX 5800"))
# Fermi: registers per warp in units of 64, 2 warp schedulers; 64 KB L1/shared split 16/48.
_CC2_0 = ArchSpec("2.0", "Fermi (GF100)", "GeForce GTX 480, Tesla C2050/C2070",
                  1024, 48, 8, 32768, 32768, 63, 64, "warp", 2,
                  48 * KB, 48 * KB, 48 * KB, 128, smem_configs=_K(16, 48))
_add(_CC2_0)
_add(replace(_CC2_0, cc="2.1", arch="Fermi (GF10x)", examples="GeForce GTX 460"))
# Kepler: 64 KB L1/shared split 16/32/48 (3.7: 112 KB shared, split 80/96/112).
_CC3_0 = ArchSpec("3.0", "Kepler (GK104)", "GeForce GTX 680, Tesla K10",
                  1024, 64, 16, 65536, 65536, 63, 256, "warp", 4,
                  48 * KB, 48 * KB, 48 * KB, 256, smem_configs=_K(16, 32, 48))
_add(_CC3_0)
_add(replace(_CC3_0, cc="3.5", arch="Kepler (GK110)", examples="Tesla K20/K40, GeForce GTX 780 Ti",
             max_regs_per_thread=255))
_add(replace(_CC3_0, cc="3.7", arch="Kepler (GK210)", examples="Tesla K80", max_regs_per_thread=255,
             regs_per_sm=131072, smem_per_sm=112 * KB, smem_configs=_K(80, 96, 112)))
# Maxwell / Pascal: dedicated shared memory (no carve-out).
_CC5_0 = ArchSpec("5.0", "Maxwell (GM107)", "GeForce GTX 750 Ti",
                  1024, 64, 32, 65536, 65536, 255, 256, "warp", 4,
                  64 * KB, 48 * KB, 48 * KB, 256)
_add(_CC5_0)
_add(replace(_CC5_0, cc="5.2", arch="Maxwell (GM20x)", examples="GeForce GTX 980, Titan X (Maxwell)",
             smem_per_sm=96 * KB))
_add(replace(_CC5_0, cc="5.3", arch="Maxwell (GM20B)", examples="Jetson TX1", max_regs_per_block=32768))
_add(replace(_CC5_0, cc="6.0", arch="Pascal (GP100)", examples="Tesla P100", warp_alloc_granularity=2))
_add(replace(_CC5_0, cc="6.1", arch="Pascal (GP10x)", examples="GeForce GTX 1080, Tesla P40",
             smem_per_sm=96 * KB))
_add(replace(_CC5_0, cc="6.2", arch="Pascal (GP10B)", examples="Jetson TX2", max_regs_per_block=32768))
# Volta onwards: unified L1/shared with carve-outs, opt-in above 48 KB per block.
_CC7_0 = ArchSpec("7.0", "Volta (GV100)", "Tesla V100, Titan V",
                  1024, 64, 32, 65536, 65536, 255, 256, "warp", 4,
                  96 * KB, 48 * KB, 96 * KB, 256, smem_configs=_K(0, 8, 16, 32, 64, 96))
_add(_CC7_0)
_add(replace(_CC7_0, cc="7.5", arch="Turing (TU10x)", examples="GeForce RTX 2080, Tesla T4",
             max_warps_per_sm=32, max_blocks_per_sm=16, smem_per_sm=64 * KB,
             max_smem_per_block_optin=64 * KB, smem_configs=_K(32, 64)))
_AMPERE_CONFIGS = _K(0, 8, 16, 32, 64, 100, 132, 164)
_GA10X_CONFIGS = _K(0, 8, 16, 32, 64, 100)
_CC8_0 = ArchSpec("8.0", "Ampere (GA100)", "A100, A30",
                  1024, 64, 32, 65536, 65536, 255, 256, "warp", 4,
                  164 * KB, 48 * KB, 163 * KB, 128, reserved_smem_per_block=1 * KB,
                  smem_configs=_AMPERE_CONFIGS)
_add(_CC8_0)
_add(replace(_CC8_0, cc="8.6", arch="Ampere (GA10x)", examples="GeForce RTX 3090, A40, A10",
             max_warps_per_sm=48, max_blocks_per_sm=16, smem_per_sm=100 * KB,
             max_smem_per_block_optin=99 * KB, smem_configs=_GA10X_CONFIGS))
_add(replace(_CC8_0, cc="8.7", arch="Ampere (GA10B)", examples="Jetson AGX Orin",
             max_warps_per_sm=48, max_blocks_per_sm=16))
_add(replace(_CC8_0, cc="8.9", arch="Ada Lovelace (AD10x)", examples="GeForce RTX 4090, L4, L40",
             max_warps_per_sm=48, max_blocks_per_sm=24, smem_per_sm=100 * KB,
             max_smem_per_block_optin=99 * KB, smem_configs=_GA10X_CONFIGS))
_HOPPER_CONFIGS = _K(0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
_add(replace(_CC8_0, cc="9.0", arch="Hopper (GH100)", examples="H100, H200, GH200",
             smem_per_sm=228 * KB, max_smem_per_block_optin=227 * KB, smem_configs=_HOPPER_CONFIGS))
_add(replace(_CC8_0, cc="10.0", arch="Blackwell (GB100)", examples="B200, GB200",
             smem_per_sm=228 * KB, max_smem_per_block_optin=227 * KB, smem_configs=_HOPPER_CONFIGS,
             notes="carve-out sizes and 128-byte shared-memory unit assumed as for 9.0"))
_add(replace(_CC8_0, cc="12.0", arch="Blackwell (GB20x)", examples="GeForce RTX 5090, RTX PRO 6000",
             max_warps_per_sm=48, max_blocks_per_sm=24, smem_per_sm=100 * KB,
             max_smem_per_block_optin=99 * KB, smem_configs=_GA10X_CONFIGS,
             notes="blocks/SM, shared memory from [CCCL]; carve-out sizes assumed as for 8.6/8.9"))

#: the paper-era GPUs by name → CC (papers 003 and 004)
PAPER_GPUS = {
    "Tesla T10": "1.3", "GeForce GTX 280": "1.3", "GeForce GTX 260": "1.3", "Quadro FX 5800": "1.3",
    "GeForce 9800 GX2": "1.1", "GeForce 8800 GTS 512": "1.1", "GeForce 8800 GTX": "1.0",
    "GeForce 8800 GTS": "1.0", "Tesla C2070": "2.0",
}


def known_ccs() -> list[str]:
    """Compute capabilities with a data table, oldest first."""
    return sorted(SPECS, key=lambda c: tuple(int(p) for p in c.split(".")))


def get_spec(cc) -> ArchSpec:
    """The :class:`ArchSpec` for ``cc`` ("9.0", "9", 9.0, (9, 0), 90 or an ArchSpec)."""
    if isinstance(cc, ArchSpec):
        return cc
    key = _normalise(cc)
    if key not in SPECS:
        raise InvalidParameter(
            f"unknown compute capability {cc!r}: known are {', '.join(known_ccs())}")
    return SPECS[key]


def _normalise(cc) -> str:
    """"9.0", 9.0, (9, 0), "sm_90", "90", "9" → "9.0" ("sm_XY": last digit is the minor)."""
    if isinstance(cc, tuple) and len(cc) == 2:
        return f"{int(cc[0])}.{int(cc[1])}"
    if isinstance(cc, float):
        return f"{cc:.1f}"
    s = str(cc).strip().lower()
    sm = s.startswith("sm_") or s.startswith("sm") or s.startswith("compute_")
    s = re.sub(r"^(sm_?|compute_|cc)", "", s).rstrip("a")
    if "." in s:
        major, _, minor = s.partition(".")
        return f"{int(major)}.{int(minor)}" if major.isdigit() and minor.isdigit() else s
    if s.isdigit():
        if not sm and f"{int(s)}.0" in SPECS:
            return f"{int(s)}.0"                   # "9" → 9.0, "12" → 12.0
        if len(s) >= 2:
            return f"{int(s[:-1])}.{s[-1]}"        # "86" / "sm_86" → 8.6
    return s


def spec_from_properties(props: dict, base: ArchSpec | None = None) -> ArchSpec:
    """An ArchSpec for a real device: its table entry, overridden by what the driver reports.

    ``props`` is ``cupy.cuda.runtime.getDeviceProperties(i)`` (cudaDeviceProp as a dict).
    Granularities the driver does not report come from the table.
    """
    cc = f"{int(props['major'])}.{int(props['minor'])}"
    if base is None:
        base = SPECS.get(cc)
        if base is None:     # an unknown, newer CC: start from the newest of the same major, else 9.0
            same = [c for c in known_ccs() if c.split(".")[0] == cc.split(".")[0]]
            base = SPECS[same[-1] if same else "9.0"]
    upd = dict(cc=cc, examples=_decode(props.get("name", base.examples)))
    pairs = (("maxThreadsPerBlock", "max_threads_per_block"),
             ("regsPerMultiprocessor", "regs_per_sm"), ("regsPerBlock", "max_regs_per_block"),
             ("sharedMemPerMultiprocessor", "smem_per_sm"), ("sharedMemPerBlock", "max_smem_per_block"),
             ("sharedMemPerBlockOptin", "max_smem_per_block_optin"),
             ("reservedSharedMemPerBlock", "reserved_smem_per_block"),
             ("maxBlocksPerMultiProcessor", "max_blocks_per_sm"), ("warpSize", "warp_size"))
    for src, dst in pairs:
        if props.get(src):
            upd[dst] = int(props[src])
    if props.get("maxThreadsPerMultiProcessor"):
        upd["max_warps_per_sm"] = int(props["maxThreadsPerMultiProcessor"]) // int(props.get("warpSize", 32))
    if "reservedSharedMemPerBlock" in props:
        upd["reserved_smem_per_block"] = int(props["reservedSharedMemPerBlock"])
    return replace(base, **upd)


def _decode(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def table_rows() -> list[dict]:
    """Every CC's limits as plain dicts (for export and the GUI's reference table)."""
    return [SPECS[c].as_dict() for c in known_ccs()]


__all__ = ["ArchSpec", "SPECS", "PAPER_GPUS", "KB", "get_spec", "known_ccs", "spec_from_properties",
           "table_rows"]
