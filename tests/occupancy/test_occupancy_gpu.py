"""Occupancy ground truth on a real GPU: the calculator must agree exactly with the CUDA API.

Kernels are compiled with a forced register count (``--maxrregcount``) and with/without static
shared memory; for every block size × dynamic shared memory the calculator's active blocks per SM
must equal ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (≥ 500 configurations).  The app's own
kernels are introspected the same way.  Set OCC_SWEEP_JSON=path to keep the sweep's rows.
"""
import json
import os

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def sweep_kernels():
    from kernels.occupancy.gpu import register_sweep_kernels
    return register_sweep_kernels()


def test_device_limits_match_the_table():
    from kernels.occupancy.gpu import device_spec
    from kernels.occupancy.specs import SPECS
    live = device_spec()
    table = SPECS[live.cc]
    for f in ("max_threads_per_block", "max_warps_per_sm", "max_blocks_per_sm", "regs_per_sm",
              "max_regs_per_block", "smem_per_sm", "max_smem_per_block", "max_smem_per_block_optin",
              "reserved_smem_per_block"):
        assert getattr(live, f) == getattr(table, f), f


def test_forced_register_counts_span_the_range(sweep_kernels):
    from kernels.occupancy.gpu import kernel_resources
    regs = sorted({kernel_resources(k)["registers"] for _r, _s, k in sweep_kernels})
    assert regs[0] <= 24 and regs[-1] >= 200 and len(regs) >= 10, regs
    for r, sf, k in sweep_kernels:
        res = kernel_resources(k)
        assert res["registers"] <= max(r, 24)      # NVRTC does not go below 24 (--maxrregcount=16 → 24)
        assert res["static_smem"] == 4 * sf


def test_ground_truth_sweep_agrees_exactly(sweep_kernels):
    from kernels.occupancy.gpu import ground_truth_sweep
    out = ground_truth_sweep(sweep_kernels)
    if os.environ.get("OCC_SWEEP_JSON"):
        with open(os.environ["OCC_SWEEP_JSON"], "w") as fh:
            json.dump({k: v for k, v in out.items()}, fh)
    print(f"\n{out['agree']}/{out['n']} configurations agree ({out['api']}, {out['device']}, "
          f"{out['seconds']:.1f} s)")
    assert out["n"] >= 500
    assert out["mismatches"] == [], out["mismatches"][:10]
    # the sweep covers every limiter and the 0-blocks (cannot launch) case
    lim = {r["limiter"] for r in out["rows"]}
    assert {"registers", "shared_memory"} <= {x for s in lim for x in s.split("+")}
    assert any(r["driver"] == 0 for r in out["rows"])


@pytest.mark.parametrize("carveout", [0, 25, 50, 100])
def test_carveout_agrees(carveout):
    from kernels.occupancy.gpu import ground_truth_sweep, register_sweep_kernels
    ks = register_sweep_kernels(maxrreg=(32, 64, 128), static_floats=(0, 3000))
    try:
        out = ground_truth_sweep(ks, blocks=(64, 128, 256, 512), carveout=carveout,
                                 dyn_smem=(0, 4096, 12288, 30000, 70000, 150000))
    finally:
        for _r, _s, k in ks:
            k.preferred_shared_memory_carveout = -1
    print(f"\ncarve-out {carveout} %: {out['agree']}/{out['n']} agree")
    assert out["mismatches"] == [], out["mismatches"][:10]


def test_app_kernels_introspection_matches_the_driver():
    from kernels.app_kernels import compile_app_kernels
    from kernels.occupancy.gpu import app_kernel_table
    compile_app_kernels()
    rows = app_kernel_table()
    names = [r["name"] for r in rows]
    assert any(n.startswith("CH ") for n in names) and any(n.startswith("RNG ") for n in names)
    for r in rows:
        print(f"{r['name']:60s} regs {r['registers']:3d} smem {r['static_smem']:6d} "
              f"maxT {r['max_threads_per_block']:4d} block {r['block']:4d} "
              f"occ {r['occupancy']:.3f} ({r['limiter']}) driver {r['driver_blocks_per_sm']}")
        assert r["registers"] > 0 and r["block"] <= r["max_threads_per_block"]
        assert r["active_blocks_per_sm"] == r["driver_blocks_per_sm"], r
    # the launch registry holds the shapes the modules launch with (no name parsing)
    from kernels import launches
    from kernels.cahn_hilliard.cuda_stepper import POINT_BLOCK, WMARCH_SHAPE, ZREG_SHAPE
    ch = {ln.name: ln for ln in launches.recorded("cahn_hilliard")}
    assert ch["CH ch_point<float, 0, 2, 0>"].block == 16 * 16
    assert ch["CH ch_point<float, 0, 3, 0>"].block == int(np.prod(POINT_BLOCK[3]))
    wpb, pd, _chunk, minb = WMARCH_SHAPE["float"]
    assert ch[f"CH ch_fused_wmarch2d<float, 0, {wpb}, {pd}, {minb}>"].block == 32 * wpb
    tx, ty, _chunk, minb, pd, vw = ZREG_SHAPE["float"]
    nt = -(-((tx + 8) // vw * (ty + 8)) // 32) * 32
    assert ch[f"CH ch_fused_zreg3d<float, 0, {tx}, {ty}, {nt}, {minb}, {pd}, {vw}>"].block == nt
    assert {ln.block for ln in launches.recorded("rng")} == {64}


def test_block_size_sweep_measures_and_predicts():
    from kernels.app_kernels import block_size_sweep
    rows = block_size_sweep("ch_point", size=1024, blocks=[64, 256, 1024], repeats=3)
    assert [r["block"] for r in rows] == [64, 256, 1024]
    assert all(r["throughput"] > 0 and 0 < r["occupancy"] <= 1 for r in rows)
