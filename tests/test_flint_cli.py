"""`python main.py flint …`: JSON fields, CSV, and one 'error:' line with exit 2 on bad input."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args):
    return subprocess.run([sys.executable, "main.py", "flint", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_flint_cli_json_and_csv(tmp_path):
    out = tmp_path / "o.csv"
    r = _cli("luo_rudy_1991", "--t-end", "50", "--dt", "0.01", "--runtime", "cpu", "--record", "V",
             "--csv", str(out), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["model"] == "luo_rudy_1991" and d["n_states"] == 8 and d["n_cells"] == 1 and d["steps"] == 5000
    assert d["runtime"] == "cpu" and d["seconds"] > 0
    v = d["variables"]["V"]
    assert v["min"] < -80 and v["max"] > 30 and isinstance(v["final"], float)
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["t", "V"] and len(rows) == 51


def test_flint_cli_line_and_ensemble():
    r = _cli("luo_rudy_1991", "--t-end", "5", "--line", "8", "--record", "V", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_cells"] == 8
    r = _cli("luo_rudy_1991.xml", "--t-end", "5", "--ensemble", "4", "--vary", "g_Na=10:20", "--integrator", "rk4",
             "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_cells"] == 4
    r = _cli("luo_rudy_1991", "--t-end", "2", "--mapping", "expression", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["mapping"] == "expression", r.stderr


@pytest.mark.parametrize("args, msg", [
    (["nosuch.flint"], "no such model"),
    (["luo_rudy_1991", "--dt", "-1"], "--dt"),
    (["luo_rudy_1991", "--runtime", "gpu"], "--runtime"),
    (["luo_rudy_1991", "--record", "Q"], "not a state"),
    (["luo_rudy_1991", "--t-end", "abc"], "--t-end"),
    (["luo_rudy_1991", "--mapping", "warp"], "--mapping"),
])
def test_flint_cli_bad_input(args, msg, tmp_path):
    r = _cli(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and msg in lines[0], r.stderr


def test_flint_cli_malformed_file(tmp_path):
    p = tmp_path / "m.xml"
    p.write_text("<sbml><model")
    r = _cli(str(p))
    assert r.returncode == 2 and r.stderr.startswith("error:") and "malformed" in r.stderr
