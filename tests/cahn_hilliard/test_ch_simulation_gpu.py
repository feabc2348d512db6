"""End to end on the GPU: a seeded run on CuPy (any kernel variant) matches the NumPy run."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from kernels.backend import Backend
from kernels.cahn_hilliard import CahnHilliard, CHParams
from kernels.cahn_hilliard.params import stability_limit
from kernels.errors import GridTooLarge, SimulationBlowUp
from support.paths import ROOT as PROJECT_ROOT

pytestmark = pytest.mark.gpu
ROOT = str(PROJECT_ROOT)


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import gpu_backend
    return gpu_backend()


@pytest.mark.parametrize("variant", ["reference", "A", "B", "C", "D", "E"])
@pytest.mark.parametrize("dim", [2, 3])
def test_seeded_gpu_run_matches_cpu(variant, dim, gpu):
    seed = int(np.random.default_rng().integers(0, 10**6))
    p = CHParams(dim=dim, size=96 if dim == 2 else 24, seed=seed, noise=0.3,
                 dt=0.01 if dim == 2 else 0.005, variant=variant, boundary="mirror")
    g = CahnHilliard(p, gpu)
    c = CahnHilliard(p.with_changes(variant="reference"), Backend("cpu", np))
    np.testing.assert_array_equal(g.field_numpy(), c.field_numpy())  # same initial field (RNG)
    for _ in range(5):
        g.step(20)
        c.step(20)
    a, b = g.field_numpy(), c.field_numpy()
    assert np.linalg.norm(a - b) / np.linalg.norm(b) < 1e-5
    assert g.history.mean[-1] == pytest.approx(c.history.mean[-1], abs=1e-6)


def test_gpu_blowup_caught_and_last_good_field_kept(gpu):
    p = CHParams(size=64, variant="B", seed=2, noise=0.3)
    sim = CahnHilliard(p.with_changes(dt=1.3 * stability_limit(p)), gpu)
    with pytest.raises(SimulationBlowUp, match="blew up"):
        for _ in range(100):
            sim.step(50)
    f = sim.field_numpy()
    assert np.isfinite(f).all() and np.abs(f).max() < 1e3


def test_grid_too_large_for_gpu_memory_refused(gpu):
    p = CHParams(dim=3, size=1024, dtype="float64", variant="reference")
    from kernels.cahn_hilliard.simulation import estimate_bytes
    if estimate_bytes(p, 10) <= gpu.free_memory():
        pytest.skip("this GPU has room even for the largest grid")
    used = gpu.xp.get_default_memory_pool().used_bytes()
    with pytest.raises(GridTooLarge, match="GPU memory"):
        CahnHilliard(p, gpu)
    assert gpu.xp.get_default_memory_pool().used_bytes() == used  # nothing was allocated


@pytest.mark.parametrize("variant", ["B", "E"])
def test_cli_on_gpu(variant, tmp_path):
    env = dict(os.environ, GSE_BACKEND="gpu")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "ch", "--size", "512", "--steps", "500",
                        "--variant", variant, "--export", str(tmp_path / "f.png"), "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["backend"] == "gpu" and out["variant"] == variant and out["steps"] == 500
    assert abs(out["mean_final"] - out["mean_initial"]) < 1e-6
