"""Occupancy calculator (kernels/occupancy): data tables, rules, papers 000/003/004, bad input.

Expected values are derived by hand from the published rules (worked in the comments) or
copied from the papers' tables; an independent re-implementation of NVIDIA's spreadsheet
formula cross-checks the calculator on random inputs.
"""
import math

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.occupancy import curve, default_axis, get_spec, known_ccs, max_potential_block_size, occupancy
from kernels.occupancy import choosers as ch
from kernels.occupancy.specs import SPECS, spec_from_properties

ISSUE_CCS = ["1.0", "1.1", "1.2", "1.3", "2.0", "2.1", "3.0", "3.5", "3.7", "5.0", "5.2", "5.3", "6.0",
             "6.1", "6.2", "7.0", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "12.0"]


# ------------------------------------------------------------------------------------ data tables

def test_every_cc_of_the_issue_has_a_table_with_consistent_limits():
    assert set(ISSUE_CCS) <= set(known_ccs())
    for cc in known_ccs():
        s = get_spec(cc)
        assert s.max_threads_per_block <= s.max_threads_per_sm
        assert s.max_smem_per_block <= s.max_smem_per_block_optin <= s.smem_per_sm
        assert s.max_regs_per_block <= s.regs_per_sm
        if s.smem_configs:
            assert s.smem_configs[-1] == s.smem_per_sm and list(s.smem_configs) == sorted(s.smem_configs)
        assert (s.reserved_smem_per_block == 1024) == (s.major >= 8)
        assert s.reg_alloc_granularity == ("block" if s.major == 1 else "warp")


@pytest.mark.parametrize("alias", ["9.0", "9", 9.0, (9, 0), "sm_90", "90", "sm_90a"])
def test_cc_aliases(alias):
    assert get_spec(alias).cc == "9.0"


def test_spec_from_device_properties_matches_the_table_for_an_h100():
    props = {"name": b"NVIDIA H100 80GB HBM3", "major": 9, "minor": 0, "maxThreadsPerBlock": 1024,
             "maxThreadsPerMultiProcessor": 2048, "regsPerMultiprocessor": 65536, "regsPerBlock": 65536,
             "sharedMemPerMultiprocessor": 233472, "sharedMemPerBlock": 49152,
             "sharedMemPerBlockOptin": 232448, "reservedSharedMemPerBlock": 1024,
             "maxBlocksPerMultiProcessor": 32, "warpSize": 32}
    live, table = spec_from_properties(props), get_spec("9.0")
    for f in ("max_threads_per_block", "max_warps_per_sm", "regs_per_sm", "max_regs_per_block",
              "smem_per_sm", "max_smem_per_block", "max_smem_per_block_optin", "reserved_smem_per_block",
              "max_blocks_per_sm"):
        assert getattr(live, f) == getattr(table, f), f
    assert live.examples.startswith("NVIDIA H100")


# --------------------------------------------------------------------------- hand-derived cases

@pytest.mark.parametrize("cc,threads,regs,static,dyn,blocks,warps,limiter", [
    # 9.0: R_warp = 64·32 = 2048; 16384/2048 = 8 warps per sub-partition → 32 warps → 4 blocks of 8 warps
    ("9.0", 256, 64, 0, 16384, 4, 32, "registers"),
    # 9.0: smem 48 KB + 1 KB reserved = 50176 B → 233472 // 50176 = 4 blocks of 4 warps
    ("9.0", 128, 32, 0, 49152, 4, 16, "shared_memory"),
    # 8.6: 4 blocks by registers (as above) vs 48/8 = 6 by warps → 32 of 48 warps
    ("8.6", 256, 64, 0, 0, 4, 32, "registers"),
    # 8.0: 1024 threads × 64 regs = 65536 = the per-block maximum → 1 block, 32 of 64 warps
    ("8.0", 1024, 64, 0, 0, 1, 32, "registers"),
    # 7.5: 1024 threads = the 32-warp maximum → 1 block, 100 %
    ("7.5", 1024, 32, 0, 0, 1, 32, "warps"),
    # 3.0: 63 regs → 2016 → 2048 per warp → 8 warps per sub-partition → 32 warps = 4 blocks of 8
    ("3.0", 256, 63, 0, 0, 4, 32, "registers"),
    # 2.0: 21 regs → 672 → 704 (unit 64); 2 sub-partitions × (16384 // 704 = 23) = 46 warps → 5 blocks
    ("2.0", 256, 21, 0, 0, 5, 40, "registers"),
    # 5.0: 32 threads, few regs → the 32-block limit → 32 of 64 warps
    ("5.0", 32, 16, 0, 0, 32, 32, "blocks"),
    # 12.0: 24 blocks per SM (CCCL), 48 warps: 64-thread blocks → 24 blocks = 48 warps
    ("12.0", 64, 32, 0, 0, 24, 48, "warps+blocks"),
    # 1.3 (T10/GTX 280): 512 threads × 16 regs → 8192 regs per block → 2 blocks, 32 warps = 100 %
    ("1.3", 512, 16, 0, 0, 2, 32, "warps+registers"),
])
def test_hand_derived_cases(cc, threads, regs, static, dyn, blocks, warps, limiter):
    r = occupancy(cc, threads, regs, static, dyn)
    assert (r.active_blocks_per_sm, r.active_warps_per_sm) == (blocks, warps)
    assert r.limiter == limiter
    assert r.occupancy == pytest.approx(warps / get_spec(cc).max_warps_per_sm)
    assert r.active_blocks_per_sm == min(v for v in r.limits.values() if v is not None)


def test_allocation_units_and_reserved_shared_memory():
    r = occupancy("9.0", 128, 33, 0, 1)            # 1 B dynamic + 1024 reserved → 1152 (unit 128)
    assert r.smem_per_block == 1152
    assert r.regs_per_block == 4 * 1280            # 33·32 = 1056 → 1280 (unit 256) per warp
    r7 = occupancy("7.0", 128, 33, 0, 1)           # no reservation before 8.0, unit 256
    assert r7.smem_per_block == 256
    r1 = occupancy("1.3", 32, 10, 100, 0)          # 1.x: 2-warp rounding, 512-register unit, 512-B smem unit
    assert r1.regs_per_block == 1024 and r1.smem_per_block == 512


def test_carveout_selects_a_supported_shared_memory_size():
    full = occupancy("9.0", 128, 32, 0, 32 * 1024)
    half = occupancy("9.0", 128, 32, 0, 32 * 1024, carveout=50)
    # 50 % of 228 KB = 114 KB → rounded up to the 132 KB configuration; 33 KB per block
    assert half.smem_per_sm == 132 * 1024 and half.active_blocks_per_sm == 132 * 1024 // (33 * 1024)
    assert full.smem_per_sm == 228 * 1024 and full.active_blocks_per_sm == 228 // 33
    # carve-out 0: one block needs 1 KB → the driver picks the 8 KB configuration → 8 blocks
    assert occupancy("9.0", 32, 16, carveout=0).active_blocks_per_sm == 8
    # Turing's smallest configuration is 32 KB
    assert occupancy("7.5", 32, 16, 0, 1024, carveout=0).smem_per_sm == 32 * 1024
    # fixed shared memory (Pascal): noted, no effect
    r = occupancy("6.1", 128, 32, 0, 1024, carveout=0)
    assert r.smem_per_sm == 96 * 1024 and r.notes


# ------------------------------------------------------------------------------- the papers' numbers

def test_paper_004_table_4_4_every_cell():
    pct = {12: 38, 6: 19, 16: 50}
    for key in ch.TABLE_4_4:
        y_gt200 = ch.bfw_warps_per_sm(key[1], "1.3", key[0])
        y_g80 = ch.bfw_warps_per_sm(key[1], "1.1", key[0])
        assert y_gt200 == ch.TABLE_4_4_Y["GT200"][key], key
        assert y_g80 == ch.TABLE_4_4_Y["G80/G90"][key], key
        assert round(100 * y_gt200 / 32) == pct[y_gt200]
    # the printed G80/G90 occupancies: 25 % (6 of 24 warps), 50 % (12), 33 % (8)
    assert [round(100 * ch.bfw_warps_per_sm(t, "1.0", m) / 24) for m, t in ch.TABLE_4_4] == [25, 25, 25, 50, 33, 33]


def test_paper_003_t10_one_cell_per_block_is_25_percent():
    # triangles, k = 10, one inner point: 3·9 + 1 = 28 solution points = threads → 1 warp per block
    pts = ch.solution_points(3, 10, 1)
    assert pts == 28
    r = occupancy("1.3", pts, 16, 1024)
    assert (r.active_blocks_per_sm, r.active_warps_per_sm, r.occupancy) == (8, 8, 0.25)
    assert r.limiter == "blocks"
    m = ch.paper003_occupancy(pts, registers_per_block=pts * 16, smem_per_block=1024)
    assert m["active_warps"] == 8 and m["occupancy"] == 0.25
    # Eq. 6: 8 blocks per SM need ≤ 2 KB shared memory and ≤ 2 K registers per block
    assert occupancy("1.3", 64, 8, 2048).limits["shared_memory"] == 8
    assert occupancy("1.3", 64, 8, 2049).limits["shared_memory"] == 6      # 2560 B allocated
    assert occupancy("1.3", 64, 32, 0).limits["registers"] == 8             # 64 × 32 = 2048
    assert occupancy("1.3", 64, 33, 0).limits["registers"] == 6             # 2112 → 2560
    assert ch.paper003_quick_estimates(16, 25) == {"warps_by_smem": 32.0, "warps_by_regs": 20.0}


def test_paper_004_autotuner_reproduces_table_4_5():
    for n, row in ch.TABLE_4_5_MM.items():
        assert tuple(ch.bfw_autotune(n, t) for t in (16, 32, 64)) == row, n
    # the thesis's FT variant (Z = 1) picks l = 8 at n = 512, where AT picks 2
    assert ch.bfw_autotune(512, 32, z_model=False) == 8
    # n = 512, l = 8, t = 32: U = 1 · 30 = 30 blocks → one per SM → 2 warps per SM
    assert math.ceil(512 / 64 / 8) * (512 // 16 - 32 // 16) == 30
    with pytest.raises(InvalidParameter, match="multiple of 64"):
        ch.bfw_autotune(500, 32)


def test_paper_000_max_occupancy_listing():
    assert ch.max_occupancy_000("1.3", 0) == 512
    trace = []
    best = ch.max_occupancy_000("1.3", 24, 0, 0, trace)
    assert [t[0] for t in trace] == list(range(512, 31, -32))
    top = max(t[2] for t in trace)
    assert best == max(t[0] for t in trace if t[2] == top)      # larger blocks win ties
    # the listing treats any CC with minor < 2 as 24 warps, e.g. CC 2.0 (a bug we keep)
    t20 = []
    ch.max_occupancy_000("2.0", 20, 0, 0, t20)
    assert max(o for *_, o in t20) <= 1.0 and any(abs(o - 1.0) < 1e-12 for *_, o in t20)


@pytest.mark.parametrize("cc", ["1.0", "1.1", "1.2", "1.3"])
def test_paper_000_listing_agrees_with_the_calculator_on_cc1(cc, rng):
    # registers multiple of 8: the listing's unrounded block registers equal the spreadsheet's
    for _ in range(60):
        regs = int(rng.integers(0, 16)) * 8
        spt, spb = int(rng.integers(0, 33)), int(rng.integers(0, 4096))
        best = ch.max_occupancy_000(cc, regs, spt, spb)
        occ = lambda n: occupancy(cc, n, regs, spb + spt * n, 0, strict=False).occupancy  # noqa: E731
        top = max(occ(n) for n in range(32, 513, 32))
        if top > 0:
            assert occ(best) == pytest.approx(top)


# --------------------------------------------------------------- an independent cross-check (spreadsheet)

def _spreadsheet(cc, threads, regs, smem):
    """NVIDIA's spreadsheet formula for CC ≥ 2 (as in its open-source JavaScript port)."""
    s = get_spec(cc)
    ceil_to = lambda a, b: math.ceil(a / b) * b     # noqa: E731
    floor_to = lambda a, b: math.floor(a / b) * b   # noqa: E731
    bw = math.ceil(threads / 32)
    by_warps = min(s.max_blocks_per_sm, s.max_warps_per_sm // bw)
    rpw = ceil_to(regs * 32, s.reg_alloc_unit)
    by_regs = (floor_to(s.max_regs_per_block / rpw, s.warp_alloc_granularity) // bw
               * (s.regs_per_sm // s.max_regs_per_block)) if regs > 0 else s.max_blocks_per_sm
    by_smem = s.smem_per_sm // ceil_to(smem, s.smem_alloc_unit) if smem > 0 else s.max_blocks_per_sm
    return min(by_warps, by_regs, by_smem)


@pytest.mark.parametrize("cc", ["2.0", "3.0", "3.5", "5.0", "5.2", "6.1", "7.0", "7.5"])
def test_calculator_matches_the_spreadsheet_formula(cc, rng):
    s = get_spec(cc)
    n = 0
    while n < 300:
        threads = int(rng.integers(1, s.max_threads_per_block + 1))
        regs = int(rng.integers(0, s.max_regs_per_thread + 1))
        smem = int(rng.integers(0, s.max_smem_per_block + 1))
        r = occupancy(cc, threads, regs, 0, smem, strict=False)
        if not r.fits:
            continue
        n += 1
        assert r.active_blocks_per_sm == _spreadsheet(cc, threads, regs, smem), (threads, regs, smem)


# ---------------------------------------------------------------------------- curves and choosers

@pytest.mark.parametrize("cc", ["1.3", "3.5", "8.6", "9.0", "12.0"])
def test_curves_are_monotone_and_contain_the_current_point(cc, rng):
    threads, regs, smem = 32 * int(rng.integers(1, 9)), int(rng.integers(8, 64)), int(rng.integers(0, 8000))
    cur = occupancy(cc, threads, regs, 0, smem).occupancy
    for vary, cur_x in (("regs", regs), ("smem", smem)):
        xs = default_axis(cc, vary)
        ys = curve(cc, vary, xs, threads, regs, 0, smem)
        assert all(b <= a + 1e-12 for a, b in zip(ys, ys[1:])), vary   # more resources never help
        assert curve(cc, vary, [cur_x], threads, regs, 0, smem) == [cur]
    xs = default_axis(cc, "threads")
    assert xs[0] == 32 and xs[-1] == get_spec(cc).max_threads_per_block
    assert curve(cc, "threads", [threads], threads, regs, 0, smem) == [cur]


@pytest.mark.parametrize("cc", ["2.0", "8.0", "9.0"])
def test_max_potential_block_size_is_the_best_block(cc, rng):
    regs, spt = int(rng.integers(16, get_spec(cc).max_regs_per_thread + 1)), int(rng.integers(0, 64))
    b, nb = max_potential_block_size(cc, regs, smem_per_thread=spt)
    threads = {t: occupancy(cc, t, regs, 0, spt * t, strict=False).active_blocks_per_sm * t
               for t in range(32, get_spec(cc).max_threads_per_block + 1, 32)}
    assert nb * b == max(threads.values())
    assert b == max(t for t, v in threads.items() if v == nb * b)     # larger blocks win ties


# ------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("args,needle", [
    (("4.0", 128, 32), "unknown compute capability '4.0'"),
    (("9.0", 0, 32), "threads per block must be ≥ 1"),
    (("9.0", 1025, 32), "1025 threads per block exceed the CC 9.0 limit of 1024"),
    (("1.3", 513, 16), "513 threads per block exceed the CC 1.3 limit of 512"),
    (("9.0", 128, 256), "256 registers per thread exceed the CC 9.0 limit of 255"),
    (("2.0", 128, 64), "64 registers per thread exceed the CC 2.0 limit of 63"),
    (("9.0", 1024, 72), "need 73728 registers per block"),
    (("9.0", 128, 32, 0, 240000), "exceeds the CC 9.0 limit of 233472 B"),
    (("9.0", 128, 32, 60000, 0), "static shared memory 60000 B exceeds"),
    (("1.3", 128, 16, 0, 20000), "exceeds the CC 1.3 limit of 16384 B"),
    (("9.0", 128, -1), "registers per thread must be ≥ 0"),
    (("9.0", 128.5, 32), "threads per block must be an integer"),
])
def test_bad_input_gives_the_exact_reason(args, needle):
    with pytest.raises(InvalidParameter) as ei:
        occupancy(*args)
    assert needle in str(ei.value)


def test_carveout_must_be_a_percentage():
    with pytest.raises(InvalidParameter, match="percentage"):
        occupancy("9.0", 128, 32, carveout=101)


def test_non_strict_gives_zero_blocks_with_the_reason():
    r = occupancy("9.0", 1024, 72, strict=False)
    assert r.active_blocks_per_sm == 0 and r.occupancy == 0 and not r.fits
    assert "73728" in r.problems[0] and r.limits["registers"] == 0 and r.limiter == "registers"


def test_result_dict_is_json_ready():
    import json
    d = occupancy("9.0", 256, 64, 0, 16384).as_dict()
    s = json.dumps(d, allow_nan=False)
    assert '"limiter": "registers"' in s and d["occupancy"] == 0.5


def test_table_rows_cover_all():
    from kernels.occupancy.specs import table_rows
    rows = table_rows()
    assert [r["cc"] for r in rows] == known_ccs() and len(SPECS) == len(rows)
    assert np.all(np.diff([float(r["cc"]) for r in rows]) > 0)


def test_launch_registry_records_validates_and_filters():
    """kernels.launches: what each module records is what the occupancy tables read back."""
    from kernels import launches
    launches.forget("test")
    k1, k2 = object(), object()
    assert launches.record("T a<1>", k1, 128, system="test") is k1
    launches.record("T b", k2, 256, 4096, system="test")
    launches.record("T a<1>", k1, 64, system="test")             # re-recorded: latest shape, same place
    got = launches.recorded("test")
    assert [(ln.name, ln.block, ln.dynamic_smem) for ln in got] == [("T a<1>", 64, 0), ("T b", 256, 4096)]
    for bad in ((0, 0), (1025, 0), (32, -1)):
        with pytest.raises(ValueError):
            launches.record("T bad", k1, *bad, system="test")
    from kernels.gpu.host.device import HostKernel
    hk = object.__new__(HostKernel)                              # a host-compiled kernel (no library needed)
    launches.record("T host", hk, 128, system="test")
    assert [ln.on_host for ln in launches.recorded("test")] == [False, False, True]
    assert [ln.name for ln in launches.recorded("test", device_only=True)] == ["T a<1>", "T b"]
    from kernels.occupancy.gpu import app_kernels
    names = [n for n, _ in app_kernels()]
    assert "T a<1>" in names and "T b" in names and "T host" not in names   # the driver cannot answer for it
    launches.forget("test")
    assert launches.recorded("test") == []
