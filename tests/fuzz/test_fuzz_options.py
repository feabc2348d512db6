"""Fuzzing the options of every command (issue 35), with Hypothesis.

For each command of ``cli.COMMANDS`` the parser is built and walked: every option gets a value
drawn by what it is — number options (``num_type``, with their documented range: values inside,
at and beyond it, and inf, nan, 1e308, huge integers, malformed text), choices (valid and not),
flags, output paths (right and wrong extensions, missing folders, folders, a symlink to /dev/null,
two outputs naming one file; a sentinel file at each beforehand), input paths (missing, folders,
/dev/zero through a symlink, a FIFO, empty files), lists and NAME=VALUES specs (nasty items).  A
command line is a small valid base (tiny sizes, so that an accepted line runs in milliseconds)
plus one to four drawn options; the options that set the amount of work (sizes, steps, counts)
are drawn from tiny valid values or clearly invalid ones only.

Each line runs through ``cli.main`` in the fuzz worker (harness.py) and must keep the house
contract: exit 0, or exit 2 with exactly one ``error:`` line (commands whose runs can partly fail
may exit 1), no traceback, no "unexpected" internal exception, no memory cap reached, within the
time limit, no child process left, the sentinels unchanged after a failure.

Not drawn here: ``--scheduler local`` and cluster addresses (a Dask cluster per example would take
seconds; test_cli_bad_inputs.py and the sweep tests cover them), GPU-only paths beyond their
refusal (no GPU here).  ``GSE_FUZZ_LONG=1`` / ``GSE_FUZZ_SURVEY=FILE``: see conftest.py.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import strategies as S
from harness import ROOT, check, examples, place_sentinels
from support.paths import SUITE

MODEL = str(ROOT / "resources" / "models" / "luo_rudy_1991.flint")

#: the valid base of each command line: tiny work, no cluster, quiet
BASE = {
    "ch": ["--size", "8", "--steps", "2", "--record-every", "1"],
    "ch-sweep": ["--vary", "seed=1..2", "--size", "8", "--steps", "2", "--record-every", "1", "--scheduler", "none",
                 "--quiet"],
    "graph": ["--n", "24", "--apsp", "cpu"],
    "graph-reproduce": ["--sizes", "60,64", "--instances", "1", "--types", "ba", "--sources", "4", "--quiet"],
    "graph-clustering": ["--ws-sizes", "100,120", "--ba-sizes", "100,120", "--repeats", "1", "--methods", "cpu",
                         "--quiet"],
    "graph-fw": ["--sizes", "8,16", "--repeats", "1", "--versions", "fw-v1", "--quiet"],
    "graph-bfs": ["--sizes", "120,140", "--types", "alpha-ring", "--kernels", "gpu-bfs-k1,gpu-bfs-k7", "--quiet"],
    "graph-sssp": ["table", "--n", "40", "--arcs", "100", "--w-max", "10", "--methods", "cpu-dijkstra", "--quiet"],
    "occupancy": ["--cc", "8.0"],
    "rng": ["--count", "1000"],
    "flint": [MODEL, "--t-end", "0.5", "--dt", "0.1"],
    "flint-suite": ["1", "--timeout", "20", "--scheduler", "none"],   # not an embedded Dask cluster per example
}
#: options whose value sets the amount of work: drawn from these tiny valid values, or invalid ones
TINY = {
    "ch": {"--size": ["8", "16"], "--size-y": ["0", "8"], "--size-z": ["0", "8"], "--steps": ["0", "1", "3"],
           "--record-every": ["1", "2"], "--t-end": ["0.01", "0.1"], "--energy-every": ["0", "0.01"],
           "--threads": ["1", "2"]},
    "ch-sweep": {"--size": ["8"], "--size-y": ["0", "8"], "--size-z": ["0", "8"], "--steps": ["0", "1", "2"],
                 "--record-every": ["1"], "--vary": ["seed=1..2", "mean=-0.5:0.5:2", "noise=0.1,0.2", "steps=1,2",
                                                     "size=8,16", "dt=0.01"],
                 "--threads": ["1"]},
    "graph": {"--n": ["2", "10", "30"], "--k": ["2", "4"], "--layout-iterations": ["0", "3"],
              "--max-vertices": ["2", "100", "5000000"], "--sources": ["0", "0,1,2", "1"], "--batch": ["1", "4"],
              "--view-size": ["16x16", "64x48"], "--threads": ["1", "2"], "--S": ["1", "32"]},
    "graph-reproduce": {"--sizes": ["60,64", "60,70"], "--instances": ["1", "2"], "--sources": ["2", "4"],
                        "--max-redraws": ["0", "1"]},
    "graph-clustering": {"--ws-sizes": ["100,120"], "--ba-sizes": ["100,120"], "--repeats": ["1"],
                         "--threads": ["1", "2"]},
    "graph-fw": {"--sizes": ["8", "8,16", "1"], "--repeats": ["1", "2"]},
    "graph-bfs": {"--sizes": ["120,140", "60,80"], "--instances": ["1"], "--repeats": ["1"]},
    "graph-sssp": {"--n": ["20", "40"], "--arcs": ["40", "100"], "--w-max": ["1", "10"], "--values": ["64,128"],
                   "--sizes": ["64,128"], "--max-sources": ["1", "4"], "--check-paths": ["1", "4"],
                   "--threads": ["1", "2"], "--arcs-per-vertex": ["2", "4"]},
    "rng": {"--count": ["0", "1", "1000", "1e3"], "--streams": ["4", "64"], "--threads": ["1", "2"]},
    "flint": {"--t-end": ["0.1", "0.5"], "--dt": ["0.1", "0.05"], "--ensemble": ["1", "2", "3"],
              "--line": ["2", "3"], "--ring": ["2", "3"], "--every": ["1", "2"], "--slice": ["1", "2"],
              "--sweep": ["g_Na=1,2", "g_si=0.05:0.1:2", "C=1"], "--threads": ["1", "2"]},
    "flint-suite": {"cases": ["1", "2", "1-2", "00001"], "--timeout": ["5", "20"], "--workers": ["1", "2"]},
}
#: clearly invalid values of a work-amount option (refused before any work)
INVALID_AMOUNTS = ["-1", "-5", "nan", "inf", "-inf", "1e308", "abc", "", "1.5e", "9" * 40, "0x10", "--", "1,,2"]
#: values never drawn for an option (an embedded Dask cluster per example, or a cluster address)
SKIP_VALUES = {"--scheduler": {"local"}}
#: options not drawn at all (help; the common ones; a cluster address)
NOT_DRAWN = {"help", "backend", "debug", "workers", "scheduler"}
OUTPUT_DESTS = {"csv", "out", "export", "save_field", "energy_csv", "export_graph", "export_distances",
                "export_paths", "export_positions", "export_view", "rows_file"}
DIR_DESTS = {"fields_dir", "traces_dir", "out_dir", "suite_dir"}
INPUT_DESTS = {"load", "model", "reference"}
LIST_DESTS = {"sizes", "types", "methods", "versions", "values", "kernels", "families", "ws_sizes", "ba_sizes",
              "topologies", "sources", "record", "cases", "blocks", "gpus"}
SPEC_DESTS = {"vary", "sweep", "set", "fw_option", "max_sources"}
EXTS = [".csv", ".json", ".png", ".svg", ".npz", ".npy", ".graphml", ".edges", ".txt", "", ".CSV", ".tar.gz"]
WORDS = ["cpu", "gpu", "auto", "none", "ba", "ws", "alpha", "alpha-ring", "fw-v1", "fw-mm:tile=16,l=auto",
         "cpu-dijkstra", "sssp", "random", "ring", "gpu-bfs-k1", "networkx", "V", "S_*", "*", "device", "this-gpu",
         "512M", "80G", "1e400G", "9.0", "1.3", "99.9", "x", "tile=0", "l=-1", "lookahead=-1", "g_Na", "3.10"]


def parsers() -> dict[str, argparse.ArgumentParser]:
    import cli
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


PARSERS = parsers()


def _opt(a: argparse.Action) -> str:
    return a.option_strings[-1] if a.option_strings else a.dest


@st.composite
def _number(draw, a: argparse.Action) -> str:
    """A value for a number option: inside its documented range, at its ends, just beyond, or nasty."""
    t = a.type
    kind = getattr(t, "number_kind", None) or (t if t in (int, float) else float)
    lim = getattr(t, "limits", {}) or {}
    edges = []
    for key in ("minimum", "above", "maximum"):
        if lim.get(key) is not None:
            v = lim[key]
            edges += [v, v - 1, v + 1, v * 10 + 1] if kind is int else [v, v - 1e-9, v + 1e-9, v * 10]
    inside = st.integers(0, 64).map(str) if kind is int else st.floats(0.001, 10).map(repr)
    at_edges = st.sampled_from([repr(kind(e)) if kind is float else str(int(e)) for e in edges] or ["0"])
    return draw(st.one_of(inside, inside, at_edges, S.nasty_number()))


@st.composite
def _list(draw, a: argparse.Action) -> str:
    items = st.one_of(st.integers(0, 60).map(str), S.nasty_number(), st.sampled_from(WORDS))
    sep = draw(st.sampled_from([",", ",", ";", " ", ",,"]))
    return sep.join(draw(st.lists(items, min_size=0, max_size=4)))


@st.composite
def _spec(draw, a: argparse.Action) -> str:
    name = draw(st.sampled_from(["seed", "mean", "noise", "size", "steps", "dt", "g_Na", "C", "V", "tile", "l",
                                 "lookahead", "nosuch", "", "x" * 50, "cpu-dijkstra"]))
    value = draw(st.one_of(S.nasty_number(), _list(a), st.sampled_from(["1..3", "0:1:3", "1:0:0", "0:1:1e9",
                                                                        "1..1000000000", "a..b", "1:2", "::", ""])))
    return draw(st.sampled_from(["{}={}", "{}:{}", "{}{}", "{}=={}"])).format(name, value)


def _output(a: argparse.Action):
    """An output path: "{o}" marks the example folder where the path is an output (a sentinel goes there)."""
    return st.one_of(st.sampled_from(EXTS).map(lambda e: f"{{o}}/o{e}"),
                     st.sampled_from(["{o}/same.csv", "{o}/same.npy", "{d}/missing/o.csv", "{d}", "",
                                      "{d}/devnull.csv", "{d}/devnull.npy", "{d}/o.csv/", "{o}/ö ü.csv",
                                      "{d}/afile.csv"]))


def _input(a: argparse.Action):
    return st.sampled_from(["{d}/missing.xml", "{d}", "{d}/zero.xml", "{d}/zero.npz", "{d}/zero.flint",
                            "{d}/fifo.flint", "{d}/empty.npz", "{d}/empty.flint", "", MODEL, "luo_rudy_1991",
                            "nosuch_model", "{d}/devnull.edges", "cpu", "networkx"])


def value_for(cmd: str, a: argparse.Action):
    """The strategy of ``a``'s value in command ``cmd``."""
    name = _opt(a)
    tiny = TINY.get(cmd, {}).get(name)
    if tiny is not None:
        return st.one_of(st.sampled_from(tiny), st.sampled_from(tiny), st.sampled_from(INVALID_AMOUNTS))
    if a.choices:
        good = [str(c) for c in a.choices if str(c) not in SKIP_VALUES.get(name, ())]
        return st.one_of(*[st.sampled_from(good)] * 5, S.nasty_text(8))
    if a.dest in OUTPUT_DESTS or (a.dest == "json" and a.nargs != 0):
        return _output(a)
    if a.dest in DIR_DESTS:
        return st.sampled_from(["{d}/outdir", "{d}/missing/deeper", "{d}/afile.csv", "", "{d}/zero.xml", "/"])
    if a.dest in INPUT_DESTS:
        return _input(a)
    if a.dest in SPEC_DESTS:
        return _spec(a)
    if a.dest in LIST_DESTS:
        return _list(a)
    if getattr(a.type, "number_kind", None) or a.type in (int, float):
        return _number(a)
    return st.one_of(S.nasty_number(), S.nasty_text(12), st.sampled_from(WORDS))


def drawable(cmd: str) -> list[argparse.Action]:
    return [a for a in PARSERS[cmd]._actions if a.dest not in NOT_DRAWN and a.option_strings]


@st.composite
def command_line(draw, cmd: str) -> list[str]:
    """BASE[cmd] with one to four drawn options (a drawn option replaces the base's value)."""
    actions = drawable(cmd)
    chosen = draw(st.lists(st.sampled_from(actions), min_size=1, max_size=4, unique_by=lambda a: a.dest))
    base = list(BASE[cmd])
    names = {_opt(a) for a in chosen} | {s for a in chosen for s in a.option_strings}
    out, i = [], 0
    while i < len(base):                                 # drop the base's value of a drawn option
        if base[i] in names:
            i += 2
            continue
        out.append(base[i])
        i += 1
    pos = [a for a in PARSERS[cmd]._actions if not a.option_strings and a.dest not in NOT_DRAWN]
    if pos and draw(st.integers(0, 3)) == 0:             # a positional: replace the base's first word
        out[0] = draw(value_for(cmd, pos[0]))
    if cmd == "flint" and any(a.dest == "sweep" for a in chosen):
        out += ["--scheduler", "none"]                  # not an embedded Dask cluster per example
    for a in chosen:
        if a.nargs == 0:
            out.append(draw(st.sampled_from(a.option_strings)))
            continue
        n = a.nargs if isinstance(a.nargs, int) else 1
        vals = [draw(value_for(cmd, a)) for _ in range(n)]
        out += [f"{_opt(a)}={vals[0]}"] if n == 1 and vals[0].startswith("-") else [_opt(a), *vals]
    return out


def _materialise(argv: list[str], d: Path) -> tuple[list[str], list[Path]]:
    """Substitute the example folder; create the special inputs; return (argv, output paths)."""
    os.mkfifo(d / "fifo.flint")
    for name in ("zero.xml", "zero.npz", "zero.flint"):
        os.symlink("/dev/zero", d / name)
    for name in ("devnull.csv", "devnull.npy", "devnull.edges"):
        os.symlink("/dev/null", d / name)
    (d / "empty.npz").write_bytes(b"")
    (d / "empty.flint").write_bytes(b"")
    (d / "outdir").mkdir()
    (d / "afile.csv").write_bytes(b"x\n")
    outs = [Path(v.replace("{o}", str(d))) for v in argv if v.startswith("{o}")]
    real = [a.replace("{d}", str(d)).replace("{o}", str(d)) for a in argv]
    return real, outs


MAY_FAIL = {"ch-sweep", "flint", "flint-suite", "rng"}
#: the SBML Test Suite flint-suite reads by default (beside the checkout, or GSE_SBML_SUITE)
SUITE_HERE = SUITE.is_dir()


@pytest.mark.parametrize("cmd", sorted(BASE))
@examples(25)
@given(data=st.data())
def test_command_options(harness, cmd, data):
    argv = [cmd, *data.draw(command_line(cmd))]
    d = harness.scratch()
    real, outs = _materialise(argv, d)
    sent = place_sentinels(outs)
    sent_dir = d / "outdir" / "keep.txt"
    sent_dir.write_bytes(b"keep\n")
    sent[sent_dir] = b"keep\n"
    sent[d / "afile.csv"] = b"x\n"
    o = harness.run(real, d)
    check(o, sent, may_fail=cmd in MAY_FAIL, what=f"{cmd} options", cwd=d)


def test_bases_run(harness):
    """Each base line is accepted (exit 0) and quick, so the drawn options are what is tested (flint-suite
    is refused with its one line where the suite is absent).  graph-bfs runs its CUDA kernels on the CPU
    where there is no GPU (issue 33)."""
    for cmd, base in BASE.items():
        d = harness.scratch()
        o = harness.run([cmd, *base], d)
        if cmd == "flint-suite" and not SUITE_HERE:
            assert o.status == 2 and "SBML Test Suite not found" in o.stderr, o.describe()
        else:
            assert o.status == 0 and o.seconds < 15, o.describe()


def test_every_command_is_fuzzed():
    """A new command gets a base line here (and so is fuzzed) or this fails."""
    assert sorted(PARSERS) == sorted(BASE)
