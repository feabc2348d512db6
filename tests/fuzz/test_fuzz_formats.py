"""Fuzzing every file format the app reads (issue 35), with Hypothesis.

Each test draws a document (strategies.py: generated, mutated, damaged), writes it into a fresh
folder and hands it to the reader the user would reach — through the command line (``cli.main``
in the fuzz worker: harness.py) or, for the GUI's loaders of sessions and presets, by calling the
loader in the worker.  The property is the house contract (harness.contract_problems): exit 0, or
exit 2 with exactly one ``error:`` line; no traceback; no internal exception shown as
"unexpected"; the worker alive, within its memory cap (RLIMIT_AS) and its time; and every sentinel
file at an output path unchanged after a failed run.  The loaders must return or raise the
project's own error (ExplorerError), nothing else.

Seeds: SBML and CellML are also fuzzed from small valid models read at test time from
``resources/models`` and ``../shared`` (the SBML Test Suite and curated models beside the checkout;
skipped where absent, never copied into the project).

The fixed seed and example counts keep this file to a few tens of seconds; ``GSE_FUZZ_LONG=1``
runs a randomly seeded, 20× longer profile, and ``GSE_FUZZ_SURVEY=FILE`` records every broken
contract in FILE instead of stopping at the first (conftest.py).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import model_docs as M
import strategies as S
from harness import ROOT, check, examples, place_sentinels
from support import paths

MODELS = ROOT / "resources" / "models"
SUITE = paths.SUITE / "cases"
#: small SBML Test Suite cases used as seeds: plain, function definitions, events with delays,
#: algebraic rules, comp external model definitions (their external files are copied beside them)
SUITE_SEEDS = ("00001", "00025", "00026", "00039", "01165")
FLINT_SEED = MODELS / "luo_rudy_1991.flint"


def _write(d: Path, name: str, data: bytes) -> Path:
    p = d / name
    p.write_bytes(data)
    return p


def _fuzz_file(harness, name: str, data: bytes, argv: list, outputs=(), what: str = "", may_fail=False):
    """Write ``data`` as ``name`` in a fresh folder, place a sentinel at each of ``outputs`` (names
    in that folder), run ``argv`` — ``{f}`` is the file, ``{out:NAME}`` an output — and check."""
    d = harness.scratch()
    f = _write(d, name, data)
    sent = place_sentinels([d / o for o in outputs])
    real = [str(f) if a == "{f}" else (str(d / a[5:-1]) if str(a).startswith("{out:") else a) for a in argv]
    check(harness.run(real, d), sent, may_fail=may_fail, what=what, cwd=d)


# ----------------------------------------------------------------------------------- graphs
@examples(100)
@given(data=S.edge_list(), apsp=st.sampled_from(["none", "none", "cpu", "cpu-dijkstra", "fw-v1"]),
       max_vertices=st.sampled_from([None, None, "5", "100000", "0", "-1"]),
       suffix=st.sampled_from([".edges", ".txt", ".edgelist"]))
def test_edge_lists(harness, data, apsp, max_vertices, suffix):
    d = harness.scratch()
    f = _write(d, f"g{suffix}", data)
    outs = [d / "out.graphml", d / "dist.npy"]
    argv = ["graph", "--load", f, "--apsp", apsp, "--export-graph", outs[0], "--json"]
    if apsp != "none":
        argv += ["--export-distances", outs[1]]
    if max_vertices is not None:
        argv += ["--max-vertices", max_vertices]
    sent = place_sentinels(outs)
    check(harness.run(argv, d), sent, what="edge list", cwd=d)


@examples(80)
@given(data=S.graphml(), apsp=st.sampled_from(["none", "cpu"]))
def test_graphml(harness, data, apsp):
    _fuzz_file(harness, "g.graphml", data, ["graph", "--load", "{f}", "--apsp", apsp, "--max-vertices", "1000",
                                            "--export-graph", "{out:o.edges}", "--json"], ["o.edges"], "GraphML")


# ----------------------------------------------------------------------------------- Cahn–Hilliard
@examples(100)
@given(doc=S.ch_field_file(), extra=st.sampled_from([[], [], ["--dtype", "float64"], ["--size", "8"], ["--dim", "3"]]))
def test_ch_field_files(harness, doc, extra):
    suffix, data = doc
    _fuzz_file(harness, f"field{suffix}", data, ["ch", "--load", "{f}", "--steps", "1", "--record-every", "1",
                                                 "--save-field", "{out:o.npz}", "--export", "{out:o.png}", "--json",
                                                 *extra], ["o.npz", "o.png"], "CH field")


@examples(120)
@given(data=S.session_file())
def test_sessions(harness, data):
    """The GUI's session loader (explorer.session.load_session, Qt-free): returns or raises SessionError."""
    d = harness.scratch()
    f = _write(d, "s.gsession", data)
    check(harness.call("explorer.session:load_session", [f], d), what="session", cwd=d)


@examples(120)
@given(data=S.presets_file())
def test_presets(harness, data):
    """The presets loader (explorer.presets.load_presets, Qt-free): returns or raises PresetError."""
    d = harness.scratch()
    _write(d, "fuzz.json", data)
    check(harness.call("explorer.presets:load_presets", ["fuzz", d], d), what="presets", cwd=d)


# ----------------------------------------------------------------------------------- models
@examples(100)
@given(text=M.flint_text(FLINT_SEED.read_text(encoding="utf-8")) if FLINT_SEED.exists() else st.just(""),
       damage=st.integers(0, 4), data=st.data())
def test_flint_models(harness, text, damage, data):
    raw = text.encode("utf-8", "surrogatepass")
    if damage == 0:
        raw = data.draw(S.mutated_bytes(raw))
    _fuzz_file(harness, "m.flint", raw, ["flint", "{f}", "--t-end", "0.5", "--dt", "0.1", "--csv", "{out:trace.csv}",
                                         "--json"], ["trace.csv"], ".flint")


def _suite_seeds() -> list[tuple[str, str, dict]]:
    """(name, text, {external file name: bytes}) of the SBML seeds that exist here."""
    out = []
    for case in SUITE_SEEDS:
        folder = SUITE / case
        mains = sorted(folder.glob(f"{case}-sbml-*.xml")) if folder.is_dir() else []
        if mains:
            ext = {p.name: p.read_bytes() for p in folder.glob("*.xml") if p != mains[-1]}
            out.append((mains[-1].name, mains[-1].read_text(encoding="utf-8"), ext))
    return out


SBML_SEEDS = _suite_seeds()


@pytest.mark.skipif(not SBML_SEEDS, reason=f"the SBML Test Suite is not at {SUITE}")
@examples(30)
@given(data=st.data(), runtime=st.sampled_from(["auto", "auto", "sbml"]))
def test_sbml_suite_mutations(harness, data, runtime):
    name, text, ext = data.draw(st.sampled_from(SBML_SEEDS))
    raw = data.draw(S.mutated_xml(text))
    d = harness.scratch()
    for n, b in ext.items():
        _write(d, n, b)
    f = _write(d, data.draw(st.sampled_from([name, "model.sbml", "model.txt", "model"])), raw)
    out = d / "trace.csv"
    sent = place_sentinels([out])
    check(harness.run(["flint", f, "--runtime", runtime, "--t-end", "0.5", "--dt", "0.1", "--csv", out, "--json"], d),
          sent, what="SBML (suite seed)", cwd=d)


@examples(30)
@given(raw=M.sbml_model(), runtime=st.sampled_from(["auto", "sbml"]))
def test_sbml_generated(harness, raw, runtime):
    _fuzz_file(harness, "gen.xml", raw, ["flint", "{f}", "--runtime", runtime, "--t-end", "1", "--dt", "0.1",
                                         "--csv", "{out:trace.csv}", "--json"], ["trace.csv"], "SBML (generated)")


@examples(30)
@given(raw=M.cellml_model(), name=st.sampled_from(["m.cellml", "m.cellml", "m.xml"]))
def test_cellml_generated(harness, raw, name):
    _fuzz_file(harness, name, raw, ["flint", "{f}", "--t-end", "0.5", "--dt", "0.1", "--csv", "{out:trace.csv}",
                                    "--json"], ["trace.csv"], "CellML (generated)")


CELLML_SEED = MODELS / "luo_rudy_1991.cellml"


@pytest.mark.skipif(not CELLML_SEED.exists(), reason="no shipped CellML model")
@examples(10)
@given(data=st.data())
def test_cellml_shipped_mutations(harness, data):
    raw = data.draw(S.mutated_xml(CELLML_SEED.read_text(encoding="utf-8")))
    _fuzz_file(harness, "m.cellml", raw, ["flint", "{f}", "--t-end", "0.5", "--dt", "0.1", "--json"],
               what="CellML (shipped seed)")


# ----------------------------------------------------------------------------------- sweep CSVs
SWEEP = ["ch-sweep", "--vary", "seed=1..3", "--size", "8", "--steps", "2", "--record-every", "1",
         "--scheduler", "none", "--quiet", "--json"]
_VALID_CSV: dict = {}


def _valid_sweep_csv(harness) -> bytes:
    if "csv" not in _VALID_CSV:
        d = harness.scratch()
        o = harness.run([*SWEEP, "--csv", d / "s.csv"], d)
        assert o.status == 0, o.describe()
        _VALID_CSV["csv"] = (d / "s.csv").read_bytes()
    return _VALID_CSV["csv"]


@examples(50)
@given(data=st.data())
def test_sweep_csv_resume(harness, data):
    """``ch-sweep --csv F --resume`` on a damaged result file: the contract, the file unchanged when
    the run is refused, and after a successful resume every point in the file."""
    raw = data.draw(S.sweep_csv(_valid_sweep_csv(harness)))
    d = harness.scratch()
    f = _write(d, "s.csv", raw)
    sent = {f: raw}
    o = harness.run([*SWEEP, "--csv", f, "--resume"], d)
    check(o, sent, may_fail=True, what="sweep CSV --resume", cwd=d)
    if o.status == 0:
        from kernels.sweep.results import read_rows
        _ident, _cols, rows = read_rows(f)
        assert {r.get("point") for r in rows} >= {0, 1, 2}, f"a point is missing after --resume\n{o.describe()}"


MODEL_ARGV = ["flint", "{f}", "--t-end", "0.1"]


def test_special_files(harness):
    """Endless, blocking and non-regular inputs handed to every reader: /dev/zero (directly and
    through a symlink), a FIFO, a folder, /dev/null."""
    d = harness.scratch()
    import os
    os.mkfifo(d / "fifo")
    targets = {"zero": "/dev/zero", "null": "/dev/null", "fifo": str(d / "fifo"), "dir": str(d)}
    for key, target in targets.items():
        for name, argv in (("m.xml", MODEL_ARGV), ("m.flint", MODEL_ARGV), ("m.cellml", MODEL_ARGV),
                           ("g.edges", ["graph", "--load", "{f}"]), ("g.graphml", ["graph", "--load", "{f}"]),
                           ("f.npz", ["ch", "--load", "{f}", "--steps", "1"]),
                           ("s.csv", [*SWEEP, "--csv", "{f}", "--resume"])):
            link = d / f"{key}-{name}"
            if not link.exists() and not link.is_symlink():
                os.symlink(target, link)
            argv = [str(link) if a == "{f}" else a for a in argv]
            check(harness.run(argv, d, timeout=10.0), may_fail=True, what=f"special file {key} as {name}", cwd=None)
    for loader, args in (("explorer.session:load_session", [d / "zero-s.gsession"]),
                         ("explorer.presets:load_presets", ["x", d / "presets-dir"])):
        os.symlink("/dev/zero", d / "zero-s.gsession") if "session" in loader else (
            (d / "presets-dir").mkdir(), os.symlink("/dev/zero", d / "presets-dir" / "x.json"))
        check(harness.call(loader, args, d, timeout=10.0), what=f"{loader} on /dev/zero")
    shutil.rmtree(d, ignore_errors=True)


def test_zip_bombs(harness):
    """A 2 MB archive whose member inflates to a 2 GiB field (more than the worker may allocate):
    refused from the member's declared size before inflating — as a field file (``ch --load``) and
    as the data part nested inside a session (the GUI's loader)."""
    import json
    bomb = S.zip_bomb("phi.npy")
    d = harness.scratch()
    f = _write(d, "bomb.npz", bomb)
    out = d / "out.npz"
    sent = place_sentinels([out])
    check(harness.run(["ch", "--load", f, "--steps", "1", "--save-field", out], d), sent, what="zip bomb .npz")
    manifest = {"format": "gsession", "version": 1, "workspace": "cahn_hilliard", "state": {}, "arrays": ["phi"]}
    sess = S.zip_bytes({"manifest.json": json.dumps(manifest), "data.npz": bomb}, compress=False)
    f2 = _write(d, "bomb.gsession", sess)
    check(harness.call("explorer.session:load_session", [f2], d), what="zip bomb inside a session", cwd=None)
