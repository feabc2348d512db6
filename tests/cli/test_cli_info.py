"""``main.py --version``, ``--info`` and ``--reset-settings`` (issue 36): the same versions as the
About box, the settings file through platformdirs, and the error contract."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy
import pytest

import main as entry
from kernels import appdirs, sysinfo
from support.paths import ROOT



@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    monkeypatch.setenv("GSE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("GSE_DATA_DIR", str(tmp_path / "data"))


def test_version_prints_the_installed_version(capsys):
    assert entry.main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == f"gpu-science-explorer {sysinfo.app_version()}"


def test_info_lists_backend_versions_and_paths(capsys, tmp_path):
    assert entry.main(["--backend", "cpu", "--info"]) == 0
    out = capsys.readouterr().out
    for name in ("Backend", "Python", "PyQt6", "Qt", "VisPy", "pyqtgraph", "NumPy", "SciPy", "CuPy",
                 "CUDA driver", "CUDA runtime", "GPU", "Settings", "User presets", "Cache"):
        assert any(line.startswith(name + " ") for line in out.splitlines()), name
    assert numpy.__version__ in out
    assert str(tmp_path / "config") in out                      # the settings path it would use
    assert entry.main(["--backend", "cpu", "--info", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["versions"]["NumPy"] == numpy.__version__
    assert d["paths"]["Settings"] == str(appdirs.settings_file())


def test_reset_settings_deletes_the_settings_file_only(capsys):
    f = appdirs.settings_file()
    f.parent.mkdir(parents=True)
    f.write_text("[main]\ntheme=dark\n")
    keep = appdirs.data_dir("presets") / "occupancy.json"
    keep.parent.mkdir(parents=True)
    keep.write_text('{"presets": []}')
    assert entry.main(["--reset-settings"]) == 0
    assert not f.exists() and keep.exists()
    assert str(f) in capsys.readouterr().out
    assert entry.main(["--reset-settings"]) == 0                # none left: says so, still fine
    assert "there were none" in capsys.readouterr().out


def test_info_options_refuse_a_command_and_a_missing_gpu(capsys):
    assert entry.main(["--info", "occupancy"]) == 2
    assert capsys.readouterr().err.startswith("error:")
    if sysinfo.dist_version("cupy-cuda13x", "cupy-cuda12x", "cupy"):
        pytest.skip("CuPy is installed: --backend gpu may work here")
    assert entry.main(["--backend", "gpu", "--info"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")


def test_main_py_version_as_a_process(tmp_path):
    env = dict(os.environ, GSE_CONFIG_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "main.py", "--version"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0 and r.stdout.startswith("gpu-science-explorer ")
    assert "PyQt6" not in r.stderr


@pytest.mark.gpu
def test_info_names_cuda_and_the_gpu_on_a_gpu_backend():
    import re

    from kernels import backend as backend_mod
    try:
        b = backend_mod.select("gpu")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no GPU here: {exc}")
    rows = dict(sysinfo.versions(b))
    assert re.fullmatch(r"\d+\.\d+", rows["CUDA driver"]) and re.fullmatch(r"\d+\.\d+", rows["CUDA runtime"])
    assert b.device_name in rows["GPU"]
    assert rows["CuPy"] == b.xp.__version__
