"""Confinement (issue 35): files named inside a model — SBML comp external model definitions,
CellML imports, paths in a session — resolve inside the folder of the model (or session) unless
outside references are allowed (``--allow-outside-references``, ``allow_outside=True``); the
files actually read are reported (``files_read``).  Also the CellML units pre-check (cycles,
zero multipliers) that keeps libcellml from crashing.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from kernels.errors import InvalidParameter
from kernels.flint.loaders import read_model
from support.sbml_docs import SUB_SBML, TOP_SBML, sbml_top

X_CELLML = """<?xml version="1.0" encoding="UTF-8"?>
<model xmlns="http://www.cellml.org/cellml/2.0#" name="x">
  <component name="c">
    <variable name="t" units="second" interface="public_and_private"/>
    <variable name="y" units="dimensionless" initial_value="{y0}" interface="public_and_private"/>
    <math xmlns="http://www.w3.org/1998/Math/MathML" xmlns:cellml="http://www.cellml.org/cellml/2.0#">
      <apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>y</ci></apply>
        <apply><times/><cn cellml:units="per_second">-1</cn><ci>y</ci></apply></apply>
    </math>
  </component>
  <units name="per_second"><unit units="second" exponent="-1"/></units>
</model>
"""
IMP_CELLML = """<?xml version="1.0" encoding="UTF-8"?>
<model xmlns="http://www.cellml.org/cellml/2.0#" xmlns:xlink="http://www.w3.org/1999/xlink" name="imp">
  <import xlink:href="{href}"><component name="c" component_ref="c"/></import>
</model>
"""
UNITS_CELLML = """<?xml version="1.0" encoding="UTF-8"?>
<model xmlns="http://www.cellml.org/cellml/2.0#" name="u">
  {units}
  <component name="k">
    <variable name="t" units="second"/>
    <variable name="y" units="{first}" initial_value="1"/>
  </component>
</model>
"""


@pytest.fixture
def tree(tmp_path, rng):
    """models/ (the model's folder) beside outside/; values drawn fresh."""
    (tmp_path / "models").mkdir()
    (tmp_path / "outside").mkdir()
    x0, y0 = float(rng.uniform(1, 9)), float(rng.uniform(1, 9))
    (tmp_path / "outside" / "sub.xml").write_text(SUB_SBML.format(x0=x0))
    (tmp_path / "outside" / "x.cellml").write_text(X_CELLML.format(y0=y0))
    return tmp_path, x0, y0


def run_cli(argv, capsys):
    from cli import main
    status = main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, [ln for ln in out.err.splitlines() if ln.strip()]


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink"])
def test_comp_external_definition_outside_is_refused_then_allowed(tree, how):
    root, x0, _ = tree
    sub = root / "outside" / "sub.xml"
    if how == "symlink":
        (root / "models" / "link.xml").symlink_to(sub)
    source = {"relative": "../outside/sub.xml", "absolute": str(sub), "symlink": "link.xml"}[how]
    top = sbml_top(root / "models", source)
    with pytest.raises(InvalidParameter, match="outside the model's folder"):
        read_model(top)
    from kernels.flint.sbml.reference import load_reference
    with pytest.raises(InvalidParameter, match="outside the model's folder"):
        load_reference(top)
    loaded = read_model(top, allow_outside=True)
    assert loaded.model.states == {"s1__x": x0}
    assert loaded.files_read == [str(top.resolve()), str(sub.resolve())]
    assert load_reference(top, allow_outside=True).system.files_read == [str(top.resolve()), str(sub.resolve())]


def test_comp_inside_is_read_and_reported(tree):
    root, x0, _ = tree
    inner = root / "models" / "parts"
    inner.mkdir()
    (inner / "sub.xml").write_text((root / "outside" / "sub.xml").read_text())
    top = sbml_top(root / "models", "parts/sub.xml")
    loaded = read_model(top)
    assert loaded.model.states == {"s1__x": x0}
    assert loaded.files_read[1] == str((inner / "sub.xml").resolve())


def test_comp_chain_that_leaves_the_folder_later_is_refused(tree):
    """An inside external file that itself names an outside one: the top model's folder still rules."""
    root, *_ = tree
    sbml_top(root / "models", "../outside/sub.xml", name="mid.xml")
    top = root / "models" / "top.xml"
    top.write_text(TOP_SBML.format(source="mid.xml").replace('comp:modelRef="sub"', 'comp:modelRef="top"'))
    with pytest.raises(InvalidParameter, match="outside the model's folder"):
        read_model(top)


def test_comp_url_and_missing_file_are_refused(tree):
    root, *_ = tree
    with pytest.raises(InvalidParameter, match="is a URL"):
        read_model(sbml_top(root / "models", "http://example.org/sub.xml"), allow_outside=True)
    with pytest.raises(InvalidParameter, match="refers to a source 'nothere.xml' that cannot be accessed"):
        read_model(sbml_top(root / "models", "nothere.xml"))
    with pytest.raises(InvalidParameter, match="outside the model's folder"):
        read_model(sbml_top(root / "models", f"file://{root / 'outside' / 'sub.xml'}"))


def test_cli_flag_and_files_read_in_json(tree, capsys):
    root, x0, _ = tree
    top = sbml_top(root / "models", "../outside/sub.xml")
    status, out, err = run_cli(["flint", top, "--t-end", "0.1", "--runtime", "cpu"], capsys)
    assert status == 2 and len(err) == 1 and err[0].startswith("error:") and "--allow-outside-references" in err[0]
    status, out, err = run_cli(["flint", top, "--t-end", "0.1", "--runtime", "cpu", "--json",
                                "--allow-outside-references"], capsys)
    assert status == 0, err
    assert json.loads(out)["files_read"] == [str(top.resolve()), str((root / "outside" / "sub.xml").resolve())]


def test_cellml_import_outside_is_refused_then_allowed(tree, capsys):
    root, _, y0 = tree
    imp = root / "models" / "imp.cellml"
    imp.write_text(IMP_CELLML.format(href="../outside/x.cellml"))
    with pytest.raises(InvalidParameter, match="CellML import '../outside/x.cellml'.*outside the model's folder"):
        read_model(imp)
    loaded = read_model(imp, allow_outside=True)
    assert loaded.model.states == {"y": y0}
    assert loaded.files_read == [str(imp.resolve()), str((root / "outside" / "x.cellml").resolve())]
    status, _out, err = run_cli(["flint", imp, "--t-end", "0.1", "--runtime", "cpu"], capsys)
    assert status == 2 and len(err) == 1 and "outside the model's folder" in err[0]


def test_cellml_imported_file_passes_the_gate(tree):
    root, *_ = tree
    (root / "models" / "deep.cellml").write_text("<model>" + "<a>" * 2000 + "</a>" * 2000 + "</model>")
    imp = root / "models" / "imp.cellml"
    imp.write_text(IMP_CELLML.format(href="deep.cellml"))
    with pytest.raises(InvalidParameter, match="deep.cellml: XML elements nested more than"):
        read_model(imp)


@pytest.mark.parametrize("cycle", [["a", "a"], ["a", "b", "a"], ["a", "b", "c", "a"]])
def test_cellml_cyclic_units_are_refused_naming_them(tmp_path, cycle, capsys, rng):
    names = cycle[:-1]
    order = list(rng.permutation(len(names)))                       # definitions in a random order
    units = " ".join(f'<units name="{names[i]}"><unit units="{cycle[i + 1]}" exponent="{int(rng.integers(1, 4))}"/>'
                     f'</units>' for i in order)
    p = tmp_path / "cyc.cellml"
    p.write_text(UNITS_CELLML.format(units=units, first=names[0]))
    with pytest.raises(InvalidParameter, match="defined in a cycle") as exc:
        read_model(p)
    assert all(f"{n} →" in str(exc.value) or f"→ {n}" in str(exc.value) for n in names)
    status, _out, err = run_cli(["flint", p, "--t-end", "0.1"], capsys)
    assert status == 2 and len(err) == 1 and "defined in a cycle" in err[0]


def test_cellml_zero_multiplier_is_refused(tmp_path):
    p = tmp_path / "zero.cellml"
    p.write_text(UNITS_CELLML.format(units='<units name="a"><unit units="second" multiplier="0"/></units>', first="a"))
    with pytest.raises(InvalidParameter, match="units 'a' has a unit multiplier of '0'"):
        read_model(p)


def test_acyclic_units_chain_is_accepted():
    from kernels.flint.cellml_check import find_cycle
    assert find_cycle({"a": ["b", "second"], "b": ["c"], "c": ["metre"]}) == []
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["b"]}) == ["b", "c", "b"]


# ------------------------------------------------------------------------------ sessions
def write_session(path: Path, state: dict) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "gsession", "version": 1, "workspace": "flint",
                                                 "state": state, "arrays": []}))
    return path


def test_session_paths_resolve_inside_the_sessions_folder(tree):
    from explorer.session import SessionError, load_session
    from kernels.flint.loaders import models_dir
    root, *_ = tree
    (root / "models" / "m.xml").write_text("x")
    s = write_session(root / "models" / "in.gsession", {"model_path": "m.xml", "run": {"path": "m.xml"}})
    _ws, state, _arrays, manifest = load_session(s)
    assert state["model_path"] == str((root / "models" / "m.xml").resolve())
    assert manifest["files_referenced"] == [str((root / "models" / "m.xml").resolve())] * 2
    outside = str(root / "outside" / "sub.xml")
    bad = write_session(root / "models" / "out.gsession", {"model_path": "../outside/sub.xml"})
    with pytest.raises(SessionError, match="outside the model's folder"):
        load_session(bad)
    nested = write_session(root / "models" / "nested.gsession", {"run": {"deep": [{"data_path": outside}]}})
    with pytest.raises(SessionError, match="outside"):
        load_session(nested)
    assert load_session(bad, allow_outside=True)[1]["model_path"] == str(Path(outside).resolve())
    shipped = str(models_dir() / "luo_rudy_1991.flint")                  # the app's own files are always fine
    assert load_session(write_session(root / "models" / "ship.gsession", {"model_path": shipped}))[1]["model_path"] \
        == str(Path(shipped).resolve())
    assert not os.environ.get("GSE_ALLOW_OUTSIDE_REFERENCES")
