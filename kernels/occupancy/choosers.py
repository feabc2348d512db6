"""The papers' own block-size choosers and occupancy models, reproduced.

* :func:`max_occupancy_000` — paper 000 (Leist, Playne & Hawick 2009) §2.1, Listing 1
  ``maxOccupancy``: the block size (512 … 32 threads) with the highest occupancy, larger
  blocks winning ties, written for CC 1.x.
* :func:`paper003_occupancy` — paper 003 (Solano-Quinde et al. 2011) Eqs. 2–4 with the
  Tesla T10 parameters of Table 2, plus the quick estimates of Eqs. 11/12.
* :func:`bfw_autotune` — paper 004 (Okuyama 2013) §4.4, Eqs. 4.4–4.10: the static performance
  model that picks ``l`` (sub-blocks per thread block) of the MM-based blocked Floyd–Warshall
  non-pivot kernel; with Table 4.4's resources it reproduces the thesis's Table 4.5.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InvalidParameter
from .calculator import occupancy
from .specs import get_spec


# ---------------------------------------------------------------------------- paper 000, Listing 1

def device_properties(cc) -> dict:
    """The ``cudaDeviceProp`` fields Listing 1 reads, as a GPU of capability ``cc`` reports them."""
    s = get_spec(cc)
    return {"major": s.major, "minor": s.minor, "warpSize": s.warp_size,
            "sharedMemPerBlock": s.max_smem_per_block, "regsPerBlock": s.max_regs_per_block}


def _next_multiple_of_pow2(x: int, m: int) -> int:
    return (x + m - 1) & ~(m - 1)


def max_occupancy_000(props, registers: int, smem_per_thread: int = 0, smem_per_block: int = 0,
                      trace: list | None = None) -> int:
    """Paper 000 Listing 1, line by line.

    ``props``: a CC ("1.3") or a dict with major, minor, warpSize, sharedMemPerBlock,
    regsPerBlock.  Returns the threads per block with the highest occupancy.  ``trace``, if
    given, receives (threads, blocks, occupancy) for every block size tried.

    Faithful to the listing, including its CC 1.x assumptions: 8 blocks and 24 warps per SM,
    32 warps when ``major >= 1 && minor >= 2`` (so a CC 2.0 device is treated as 24 warps),
    block sizes up to 512, and ``sharedMemPerBlock``/``regsPerBlock`` used as the per-SM totals
    (equal on CC 1.x).  Registers are allocated for the block rounded up to an even number of
    warps; shared memory in 512-byte units.
    """
    if not isinstance(props, dict):
        props = device_properties(props)
    if registers < 0 or smem_per_thread < 0 or smem_per_block < 0:
        raise InvalidParameter("registers and shared memory sizes must be ≥ 0")
    limit_blocks = 8
    limit_warps = 24
    if props["major"] >= 1 and props["minor"] >= 2:
        limit_warps = 32
    warp = props["warpSize"]
    smem_sm = props["sharedMemPerBlock"]
    regs_sm = props["regsPerBlock"]
    best_occ, best_threads = 0.0, 0
    for n in range(512, 31, -32):
        smem = smem_per_block + smem_per_thread * n
        warps = math.ceil(n / warp)
        smem_alloc = _next_multiple_of_pow2(smem, 512)
        regs_alloc = _next_multiple_of_pow2(warps * 2, 4) * 16 * registers
        by_warps = min(limit_blocks, math.floor(limit_warps / warps))
        by_smem = math.floor(smem_sm / smem_alloc) if smem > 0 else limit_blocks
        by_regs = math.floor(regs_sm / regs_alloc) if registers > 0 else limit_blocks
        blocks = min(by_warps, by_smem, by_regs)
        occ = blocks * warps / limit_warps
        if trace is not None:
            trace.append((n, blocks, occ))
        if occ > best_occ:
            best_occ, best_threads = occ, n
    return best_threads


# ----------------------------------------------------------------------------- paper 003, Eqs. 2–4

#: Table 2 of paper 003: NVIDIA Tesla T10 (CC 1.3)
T10 = {"sms": 30, "sps_per_sm": 8, "total_registers": 16 * 1024, "total_shared_memory": 16 * 1024,
       "threads_per_warp": 32, "max_active_warps": 32, "max_blocks_per_sm": 8}


def paper003_occupancy(threads_per_block: int, registers_per_block: int, smem_per_block: int,
                       arch: dict = T10) -> dict:
    """Paper 003 Eqs. 2–4 (no allocation granularity): blocks by shared memory and registers
    (Eq. 2), warps per block (Eq. 4), active warps (Eq. 3), occupancy = active / max warps."""
    if threads_per_block < 1:
        raise InvalidParameter("threads per block must be ≥ 1")
    big = 1 << 30
    by_smem = arch["total_shared_memory"] // smem_per_block if smem_per_block > 0 else big
    by_regs = arch["total_registers"] // registers_per_block if registers_per_block > 0 else big
    blocks = min(by_smem, by_regs)                                       # Eq. 2
    warps_b = math.ceil(threads_per_block / arch["threads_per_warp"])   # Eq. 4
    active = min(arch["max_active_warps"], arch["max_blocks_per_sm"] * warps_b, blocks * warps_b)  # Eq. 3
    return {"thread_blocks": blocks, "warps_per_block": warps_b, "active_warps": active,
            "occupancy": active / arch["max_active_warps"]}


def solution_points(faces: int, k: int, inner: int) -> int:
    """Paper 003 Eq. 1: points of a cell with ``k`` points per face (corners shared)."""
    return faces * (k - 1) + inner


def paper003_quick_estimates(smem_per_solution_point: float = 0, regs_per_solution_point: float = 0) -> dict:
    """Eqs. 11/12: active warps ≈ 512 / shared bytes per solution point and ≈ 500 / registers per
    solution point (T10), each capped at the 32-warp maximum."""
    out = {}
    if smem_per_solution_point > 0:
        out["warps_by_smem"] = min(32.0, 512.0 / smem_per_solution_point)
    if regs_per_solution_point > 0:
        out["warps_by_regs"] = min(32.0, 500.0 / regs_per_solution_point)
    return out


# ------------------------------------------------------------------ paper 004, §4.4 auto-tuning of l

@dataclass(frozen=True)
class BFWGpu:
    """Table 4.2 GPU parameters the model reads (S_g assumed 8 cores/SM, as the thesis does)."""
    name: str
    sms: int            # M_g
    mhz: float          # H_g
    cc: str
    cores_per_sm: int = 8   # S_g
    warp: int = 32          # W_g


GTX280 = BFWGpu("GeForce GTX 280", 30, 1296.0, "1.3")
BFW_GPUS = {g.name: g for g in (
    GTX280, BFWGpu("Quadro FX 5800", 30, 1296.0, "1.3"), BFWGpu("GeForce GTX 260", 24, 1242.0, "1.3"),
    BFWGpu("GeForce 9800 GX2", 16, 1500.0, "1.1"), BFWGpu("GeForce 8800 GTS 512", 16, 1625.0, "1.1"),
    BFWGpu("GeForce 8800 GTX", 16, 1350.0, "1.0"), BFWGpu("GeForce 8800 GTS", 12, 1200.0, "1.0"))}

#: Table 4.4: non-pivot kernel resources (GTX 280 compile): t -> (TB size X, shared bytes, registers)
TABLE_4_4 = {
    ("MM", 16): (64, 1144, 39), ("MM", 32): (64, 2232, 40), ("MM", 64): (64, 4408, 40),
    ("2L", 16): (64, 576, 18), ("2L", 32): (64, 576, 30), ("2L", 64): (256, 2112, 30),
}
#: Table 4.4 Y (max concurrently executing warps per SM) as printed (2L t=64: the merged cell)
TABLE_4_4_Y = {
    "GT200": {("MM", 16): 12, ("MM", 32): 12, ("MM", 64): 6, ("2L", 16): 16, ("2L", 32): 16, ("2L", 64): 16},
    "G80/G90": {("MM", 16): 6, ("MM", 32): 6, ("MM", 64): 6, ("2L", 16): 12, ("2L", 32): 8, ("2L", 64): 8},
}
#: Eq. 4.9: L = alpha + beta·l instructions per thread
EQ_4_9 = {16: (72, 609), 32: (84, 1166), 64: (108, 2844)}
#: Table 4.5, MM-based columns (auto-tuned l on the GTX 280): n -> (t=16, t=32, t=64)
TABLE_4_5_MM = {128: (1, 1, 1), 256: (1, 1, 1), 512: (2, 2, 3), 1024: (2, 2, 1), 2048: (8, 8, 1),
                4096: (4, 4, 4), 8192: (16, 16, 4), 9216: (29, 29, 18), 10240: (8, 8, 16),
                11264: (16, 16, 16)}


def bfw_warps_per_sm(t: int, cc: str = "1.3", method: str = "MM") -> int:
    """Y of Table 4.4 from the occupancy calculator (the thesis used NVIDIA's spreadsheet)."""
    x, smem, regs = TABLE_4_4[(method, t)]
    return occupancy(cc, x, regs, smem).active_warps_per_sm


def bfw_estimate(n: int, t: int, l: int, gpu: BFWGpu = GTX280, y: int | None = None,
                 z_model: bool = True) -> float:
    """Eq. 4.4: estimated non-pivot kernel time F (seconds) for sub-block count ``l``.

    ``z_model=False`` is the thesis's "FT" variant (Z = 1)."""
    if t not in EQ_4_9:
        raise InvalidParameter(f"tile size t must be 16, 32 or 64 (Eq. 4.9), got {t}")
    if n % 64 or n < 64:
        raise InvalidParameter(f"n must be a positive multiple of 64 (Eq. 4.10), got {n}")
    if not 1 <= l <= n // 64:
        raise InvalidParameter(f"l must be in 1 … n/64 = {n // 64}, got {l}")
    x = TABLE_4_4[("MM", t)][0]
    y = bfw_warps_per_sm(t, gpu.cc) if y is None else y
    a, b = EQ_4_9[t]
    L = a + b * l                                   # Eq. 4.9
    U = math.ceil(n / 64 / l) * (n // 16 - t // 16)   # Eq. 4.10
    L_tb = L * x                                    # Eq. 4.5
    U_sm = math.ceil(U / gpu.sms)                   # Eq. 4.6
    Y_sm = U_sm * x / gpu.warp
    Z = (Y_sm / y) / math.ceil(Y_sm / y) if z_model else 1.0   # Eq. 4.8
    R_sm = gpu.cores_per_sm * gpu.mhz * 1e6 * Z     # Eq. 4.7
    return L_tb * U_sm / R_sm                       # Eq. 4.4


def bfw_autotune(n: int, t: int, gpu: BFWGpu = GTX280, y: int | None = None, z_model: bool = True) -> int:
    """The l in 1 … n/64 minimising Eq. 4.4 (ties → the smallest l)."""
    best_l, best_f = 1, math.inf
    for l in range(1, n // 64 + 1):
        f = bfw_estimate(n, t, l, gpu, y, z_model)
        if f < best_f:
            best_l, best_f = l, f
    return best_l
