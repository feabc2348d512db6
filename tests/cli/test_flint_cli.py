"""`python main.py flint …`: JSON fields, CSV, and one 'error:' line with exit 2 on bad input."""
from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from support.paths import ROOT
from support.paths import SUITE as SUITE_ROOT



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
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--ensemble", "4"], "--ensemble"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--line", "5"], "--line"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--ring", "5"], "--line/--ring"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--integrator", "rk4"], "--integrator"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--dtype", "float32"], "--dtype"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--mapping", "expression"], "--mapping"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--vary", "g_Na=1:2"], "--vary"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--record", "Q"], "not a variable"),
    (["luo_rudy_1991.xml", "--runtime", "sbml", "--set", "Q=1"], "not a parameter"),
    (["luo_rudy_1991", "--runtime", "sbml"], "needs an SBML file"),
    (["luo_rudy_1991", "--ensemble", "2000000000", "--runtime", "cpu"], "GiB of host memory"),
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


# --- --runtime sbml: the SBML reference simulator -------------------------------------------------
SUITE = SUITE_ROOT / "cases"
EVENT_CASE = "00026"          # componentTags: … EventNoDelay (checked below)


def _suite_case(case):
    d = SUITE / case
    xml = d / f"{case}-sbml-l3v2.xml"
    if not xml.is_file():
        pytest.skip(f"SBML Test Suite case {case} is not at {d}")
    settings = dict(line.split(":", 1) for line in (d / f"{case}-settings.txt").read_text().splitlines() if ":" in line)
    return d, xml, {k.strip(): v.strip() for k, v in settings.items()}


def test_flint_cli_sbml_runtime_event_case_matches_suite(tmp_path):
    d, xml, st = _suite_case(EVENT_CASE)
    assert "EventNoDelay" in (d / f"{EVENT_CASE}-model.m").read_text()
    r = _cli(str(xml), "--t-end", "5", "--runtime", "other")
    assert r.returncode == 2 and "--runtime" in r.stderr
    # the Flint importer refuses the event and points to the reference simulator
    r = _cli(str(xml), "--t-end", "5", "--runtime", "cpu")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "event" in lines[0] and "--runtime sbml" in lines[0], r.stderr
    dur, steps = float(st["duration"]), int(st["steps"])
    out = tmp_path / "o.csv"
    names = [v.strip() for v in st["variables"].split(",")]
    rec = [a for n in names for a in ("--record", n)]
    r = _cli(str(xml), "--runtime", "sbml", "--t-end", str(dur), "--dt", str(dur / steps), "--every", "1",
             *rec, "--csv", str(out), "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert {"model", "n_states", "n_cells", "steps", "runtime", "seconds", "variables"} <= set(j)
    assert j["n_cells"] == 1 and j["steps"] == steps and j["runtime"] == "sbml" and j["seconds"] > 0
    assert set(j["variables"]) == set(names)
    for v in j["variables"].values():
        assert v["min"] <= v["final"] <= v["max"]
    got = list(csv.DictReader(out.open()))
    want = list(csv.DictReader((d / f"{EVENT_CASE}-results.csv").open()))
    assert len(got) == len(want) == steps + 1
    atol, rtol = float(st["absolute"]), float(st["relative"])
    # the case's species are amounts in a compartment of size 1 (so the symbol value is the amount)
    for i in (0, 1, steps // 4, steps // 2, 3 * steps // 4, steps):
        assert float(got[i]["t"]) == pytest.approx(float(want[i]["time"]), abs=1e-12)
        for n in names:
            e = float(want[i][n])
            assert abs(float(got[i][n]) - e) <= atol + rtol * abs(e), (i, n, got[i][n], e)
    # the event fired: S1 is not a plain exponential decay (S1 + S2 jumps)
    tot = [float(w[names[0]]) + float(w[names[1]]) for w in got]
    assert max(tot) - min(tot) > 0.5


def test_flint_cli_sbml_runtime_set_and_default_record():
    _, xml, _st = _suite_case(EVENT_CASE)
    base = _cli(str(xml), "--runtime", "sbml", "--t-end", "5", "--dt", "0.1", "--json")
    assert base.returncode == 0, base.stderr
    b = json.loads(base.stdout)
    assert set(b["variables"]) >= {"S1", "S2"}        # default: every species
    r = _cli(str(xml), "--runtime", "sbml", "--t-end", "5", "--dt", "0.1", "--set", "k1=2", "--json")
    assert r.returncode == 0, r.stderr
    assert abs(json.loads(r.stdout)["variables"]["S1"]["final"] - b["variables"]["S1"]["final"]) > 1e-3


def test_flint_cli_sbml_runtime_malformed(tmp_path):
    p = tmp_path / "m.xml"
    p.write_text("<sbml><model")
    r = _cli(str(p), "--runtime", "sbml")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and "malformed" in lines[0]
    r = _cli(str(p))                                      # no hint for a file nobody can read
    assert r.returncode == 2 and "--runtime sbml" not in r.stderr


def test_flint_cli_record_patterns():
    """--record takes comma lists and patterns (the shipped Rybak network's population traces)."""
    r = _cli("rybak_2006.flint", "--t-end", "0.5", "--runtime", "cpu", "--record", "S_RG_*,S_Mn_F", "--json")
    assert r.returncode == 0, r.stderr
    assert list(json.loads(r.stdout)["variables"]) == ["S_RG_F", "S_RG_E", "S_Mn_F"]


def test_flint_cli_cellml_import_resolves_beside_the_model(tmp_path):
    """A CellML import is looked up in the model file's folder, not the current directory."""
    (tmp_path / "sub.cellml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" name="sub">'
        '<units name="per_second"><unit units="second" exponent="-1"/></units><component name="decay">'
        '<variable name="t" units="second" interface="public_and_private"/>'
        '<variable name="x" units="dimensionless" initial_value="1" interface="public_and_private"/>'
        '<variable name="k" units="per_second" initial_value="0.5" interface="public_and_private"/>'
        '<math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/><apply><diff/><bvar><ci>t</ci></bvar>'
        '<ci>x</ci></apply><apply><times/><apply><minus/><ci>k</ci></apply><ci>x</ci></apply></apply></math>'
        '</component></model>')
    top = tmp_path / "top.cellml"
    top.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" '
                   'xmlns:xlink="http://www.w3.org/1999/xlink" name="top"><import xlink:href="sub.cellml">'
                   '<component name="decay" component_ref="decay"/></import></model>')
    r = _cli(str(top), "--t-end", "1", "--dt", "0.001", "--every", "1000", "--json")      # cwd: the project root
    assert r.returncode == 0, r.stderr
    x = json.loads(r.stdout)["variables"]["x"]["final"]
    assert x == pytest.approx(np.exp(-0.5), rel=1e-3)                                   # dx/dt = -k x, Euler


# --- issue 34: --method / --engine, and --runtime as an alias ---------------------------------------

def _alias_cases():
    from kernels.flint.schemes import FLINT_RUNTIME_ALIASES, SUITE_RUNTIME_ALIASES
    return ([("flint", k, v) for k, v in FLINT_RUNTIME_ALIASES.items()]
            + [("flint-suite", k, v) for k, v in SUITE_RUNTIME_ALIASES.items()])


@pytest.mark.parametrize("command, old, pair", _alias_cases())
def test_every_old_runtime_spelling_maps_to_its_pair_with_one_note(command, old, pair, capsys):
    """resolve_axes maps each old --runtime to (method, engine) and keeps ONE note line, said by
    say_alias once (not an error, not twice); both engine and method resolve in the schemes table."""
    import argparse

    from cli.flint_options import resolve_axes, say_alias
    from kernels.flint import schemes
    a = argparse.Namespace(runtime=old, engine=None, method=None, integrator=None)
    method, engine = resolve_axes(a, command)
    assert (method, engine) == pair and capsys.readouterr().err == ""
    say_alias(a)
    say_alias(a)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: ") and f"--runtime {old} " in err[0] and f"--engine {engine}" in err[0]
    assert (f"--method {method}" in err[0]) == (method is not None)
    p = schemes.pair(method, engine, command)          # the pair runs: the old target is reached
    if command == "flint-suite":
        assert p.target == old
    elif old == "sbml":
        assert p.kind == "reference"
    else:
        assert p.target == (old if old != "cpu" else "cpu") and p.engine == ("numpy" if old == "cpu" else old)


def test_old_spelling_runs_with_one_note_and_conflicts_refused():
    r = _cli("luo_rudy_1991", "--t-end", "1", "--runtime", "cpu", "--integrator", "rk4", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["method"], d["engine"], d["runtime"]) == ("rk4", "numpy", "cpu")
    assert r.stderr.strip().splitlines() == ["note: --runtime cpu is the old spelling of --engine numpy"]
    new = _cli("luo_rudy_1991", "--t-end", "1", "--method", "rk4", "--engine", "numpy", "--json")
    assert new.returncode == 0 and new.stderr == "" and json.loads(new.stdout)["variables"] == d["variables"]
    for args, msg in ((["--runtime", "cpu", "--engine", "c"], "--runtime is the old spelling"),
                      (["--method", "lsoda", "--engine", "c"], "--method lsoda runs on --engine numpy only"),
                      (["--engine", "gpu"], "--engine must be numpy, c, c-is, is, ts or auto"),
                      (["--method", "dopri9"], "--method must be euler or rk4")):
        r = _cli("luo_rudy_1991", "--t-end", "1", *args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and msg in lines[0], r.stderr


def test_help_lists_the_methods_of_each_engine(capsys):
    """--help of flint and flint-suite: each engine with the methods it offers, from the registries."""
    from cli import main
    from kernels.flint.schemes import ENGINES, engine_table
    for command in ("flint", "flint-suite"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        table = engine_table(command)
        assert table and all(f"{e} ({ENGINES[e].device}): {', '.join(ms)}" in text for e, ms in table.items())
    assert "lsoda" in engine_table("flint")["numpy"] and "lsoda" not in engine_table("flint")["ts"]
    # the SBML ensembles (issue 34): dopri5 and rodas4 on every engine whose backend integrates ensembles
    assert all({"dopri5", "rodas4"} <= set(engine_table("flint")[e]) for e in ("numpy", "c", "c-is", "is", "ts"))
    assert "roadrunner" in engine_table("flint-suite") and "roadrunner" not in engine_table("flint")
    assert "cvode" not in {m for ms in engine_table("flint").values() for m in ms}
    with pytest.raises(SystemExit):
        main(["flint", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "on c, c-is, is, ts the engine's own pick (dopri5, rodas4 when stiff)" in text


def test_suite_pairs_follow_the_backend_and_the_engines_auto():
    """flint-suite: engine auto follows --backend (gpu: ts first); method auto on an engine with its own
    pick (is/ts/c/c-is: Dormand–Prince, Rodas4 when stiff) is that pick; an engine on the other device
    than --backend is refused."""
    from kernels.errors import InvalidParameter
    from kernels.flint.schemes import ENGINES, engine_table, pair
    table = engine_table("flint-suite")
    assert all("rodas4" in table[e] for e in ("numpy", "c", "c-is", "is", "ts"))
    assert pair(None, None, "flint-suite", backend="cpu").target == "cpu"             # lsoda, the reference
    assert pair(None, None, "flint-suite", backend="gpu").engine == "ts"
    assert pair("rodas4", None, "flint-suite", backend="gpu").target == "rodas-ts"
    for e in ("c", "c-is", "is", "ts"):
        p = pair(None, e, "flint-suite")
        assert (p.method, p.target) == ("auto", ENGINES[e].backend("auto")) and p.target == f"auto-{e}"
    with pytest.raises(InvalidParameter, match="runs on the GPU"):
        pair("dopri5", "is", "flint-suite", backend="cpu")
    with pytest.raises(InvalidParameter, match="no GPU engine offers method lsoda"):
        pair("lsoda", None, "flint-suite", backend="gpu")


def test_flint_pairs_of_the_sbml_ensembles():
    """flint: dopri5 / rodas4 resolve to the engine's ensemble backend (kind "ensemble"; engine auto is
    left to EnsembleRun); an engine without ensembles, or the suite's peer, is refused."""
    from kernels.errors import InvalidParameter
    from kernels.flint.schemes import ADAPTIVE_BACKENDS, ENGINES, pair
    for e in ("numpy", "c", "c-is", "is", "ts"):
        for m in ("dopri5", "rodas4"):
            p = pair(m, e, "flint")
            assert (p.method, p.engine, p.kind, p.target) == (m, e, "ensemble", ENGINES[e].backend(m))
            assert ADAPTIVE_BACKENDS[p.target].ensemble
    assert pair("rodas4", None, "flint").target == "auto" and pair("rodas4", None, "flint").kind == "ensemble"
    assert pair(None, "c", "flint").kind == "fixed" and pair("lsoda", None, "flint").kind == "reference"
    for m, e in (("dopri5", "roadrunner"), ("cvode", "numpy")):
        with pytest.raises(InvalidParameter):
            pair(m, e, "flint")
