"""Headless CLI: python main.py ch … --json (same code as the GUI)."""
import json

import numpy as np
import pytest
from support.paths import ROOT as PROJECT_ROOT
from support.cli_calls import cli, cli_here

ROOT = str(PROJECT_ROOT)


def test_ch_json_export_and_field_roundtrip(tmp_path):
    png, npz = tmp_path / "field.png", tmp_path / "field.npz"
    r = cli("ch", "--dim", "2", "--size", "64", "--steps", "400", "--integrator", "rk2", "--seed", "1",
            "--export", str(png), "--save-field", str(npz), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    for key in ("backend", "steps", "dt", "mean_initial", "mean_final", "free_energy_initial",
                "free_energy_final", "length_scale_final", "seconds"):
        assert key in out
    assert out["backend"] == "cpu" and out["steps"] == 400
    assert abs(out["mean_final"] - out["mean_initial"]) < 1e-6
    assert out["free_energy_final"] < out["free_energy_initial"]
    import imageio.v3 as iio
    img = iio.imread(png)
    assert img.shape[:2] == (64, 64) and img.std() > 10  # not blank
    # the PNG shows the saved field: brightness (viridis) rises with φ
    from kernels.cahn_hilliard.io import load_field
    field, params, _ = load_field(npz)
    lum = img[..., :3].astype(float).mean(axis=2)
    assert np.corrcoef(lum.ravel(), field.ravel())[0, 1] > 0.9
    assert params.size == 64 and params.integrator == "rk2"
    # continue from the saved field
    r2 = cli_here("ch", "--load", str(npz), "--steps", "10", "--json")
    assert r2.returncode == 0, r2.stderr
    assert json.loads(r2.stdout)["mean_initial"] == pytest.approx(out["mean_final"], abs=1e-6)


def test_ch_same_seed_same_result_different_seed_differs():
    a = json.loads(cli("ch", "--size", "32", "--steps", "50", "--seed", "5", "--json").stdout)   # own process
    b = json.loads(cli_here("ch", "--size", "32", "--steps", "50", "--seed", "5", "--json").stdout)
    c = json.loads(cli_here("ch", "--size", "32", "--steps", "50", "--seed", "6", "--json").stdout)
    assert a["free_energy_final"] == b["free_energy_final"]
    assert a["free_energy_final"] != c["free_energy_final"]


@pytest.mark.parametrize("args,needle", [
    (("ch", "--dt", "-1"), "dt"),
    (("ch", "--size", "4"), "size"),
    (("ch", "--integrator", "spectral", "--boundary", "fixed"), "periodic"),
    (("ch", "--size", "32", "--dt", "0.2", "--steps", "2000"), "blew up"),
    (("ch", "--load", "/nonexistent/field.npz"), "field.npz"),
])
def test_bad_input_exits_nonzero_with_one_clear_line(args, needle):
    r = cli_here(*args)
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert needle in lines[0]


def test_forced_gpu_without_gpu_is_a_clear_error():
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present here")
    r = cli_here("ch", "--backend", "gpu", "--size", "32", "--steps", "1")
    assert r.returncode == 2 and r.stderr.startswith("error:")
    assert "CUDA" in r.stderr or "CuPy" in r.stderr


def test_cli_loads_no_gui_modules_even_when_exporting(tmp_path):
    """At run time, not only in the import graph (the contracts of tests/project/test_import_contracts.py
    see no third-party module's own imports): every command module and a whole ``ch --export`` run
    load no Qt, VisPy, pyqtgraph or explorer."""
    import pkgutil
    import subprocess
    import sys

    import cli as cli_package
    names = [m.name for m in pkgutil.walk_packages(cli_package.__path__, "cli.")]
    assert {"cli.common", "cli.ch", "cli.flint_suite"} <= set(names)
    png = tmp_path / "f.png"
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}:\n"
        "    importlib.import_module(n)\n"
        "import cli\n"
        f"rc = cli.main(['--backend', 'cpu', 'ch', '--size', '16', '--steps', '2', '--export', {str(png)!r}, '--json'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PyQt6', 'PyQt5', 'PySide6', 'vispy', 'pyqtgraph', 'explorer'))\n"
        "print(rc, ','.join(bad), file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "0", f"cli pulled in GUI modules: {r.stderr.strip()}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
