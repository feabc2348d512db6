"""Issue 35: one parser for every number option (finite, bounded, documented ranges), sizes that the
options determine checked before any work, and the misreports that came from options.

The table is generated from the argparse parsers (cli.build_parser): every option whose ``type`` is
a :func:`cli.common.num_type` parser is tried with inf, nan, 1e308, -1 and 0, so a new number
option is covered without editing this file.  Everything runs in-process through ``cli.main``.
"""
from __future__ import annotations

import os
import socket
import threading

import numpy as np
import pytest

from cli import build_parser, main
from cli.common import FLOAT_LIMIT, INT_LIMIT, UsageError, number

BAD_ALWAYS = ("inf", "-inf", "nan", "1e308", "-1e308")
EDGE = ("-1", "0")


def number_options():
    """[(command, option string, action)] of every number option of every command."""
    ap = build_parser()
    sub = next(a for a in ap._actions if a.choices and isinstance(a.choices, dict))
    out = []
    for cmd, parser in sub.choices.items():
        for act in parser._actions:
            if getattr(act.type, "number_kind", None) and act.option_strings:
                out.append((cmd, act.option_strings[-1], act))
    return out


OPTIONS = number_options()
IDS = [f"{c} {o}" for c, o, _ in OPTIONS]
PARSER = build_parser()
SUBPARSERS = next(a for a in PARSER._actions if a.choices and isinstance(a.choices, dict)).choices


def run(argv, capsys):
    status = main(list(argv))
    cap = capsys.readouterr()
    return status, cap.out, cap.err


def one_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "unexpected" not in err, err
    return lines[0]


def required_args(cmd: str) -> list[str]:
    """Values for the command's required arguments (so that parsing can succeed)."""
    out = []
    for act in SUBPARSERS[cmd]._actions:
        if not act.required:
            continue
        value = next(iter(act.choices)) if act.choices else ("seed=1" if act.dest == "vary" else "x")
        out += [act.option_strings[-1], value] if act.option_strings else [value]
    return out


def option_argv(cmd, opt, act, v):
    n = act.nargs if isinstance(act.nargs, int) else 1
    return [cmd, *required_args(cmd)] + ([f"{opt}={v}"] if n == 1 else [opt, *[v] * n])


def test_the_table_covers_every_command():
    cmds = {c for c, _o, _a in OPTIONS}
    for cmd in ("ch", "ch-sweep", "graph", "graph-reproduce", "graph-clustering", "graph-fw", "graph-bfs",
                "graph-sssp", "occupancy", "rng", "flint", "flint-suite"):
        assert cmd in cmds, f"{cmd} has no number option parsed by num_type"
    assert len(OPTIONS) >= 60


@pytest.mark.parametrize("cmd", sorted({c for c, _o, _a in OPTIONS}))
def test_every_command_gives_one_error_line_for_inf(cmd, capsys):
    """Through cli.main: exit 2, one ``error:`` line naming the option, nothing on stdout."""
    _c, opt, act = next(x for x in OPTIONS if x[0] == cmd)
    status, out, err = run(option_argv(cmd, opt, act, "inf"), capsys)
    assert status == 2 and opt in one_error(err) and out == ""


@pytest.mark.parametrize("cmd,opt,act", OPTIONS, ids=IDS)
def test_number_option_refuses_non_finite_and_huge(cmd, opt, act):
    """inf, nan and ±1e308 are refused while parsing (nothing runs), in one line naming the option."""
    for v in BAD_ALWAYS:
        with pytest.raises(UsageError) as exc:
            PARSER.parse_args(option_argv(cmd, opt, act, v))
        assert opt in str(exc.value) and "\n" not in str(exc.value), (v, exc.value)


@pytest.mark.parametrize("cmd,opt,act", OPTIONS, ids=IDS)
def test_number_option_edges_follow_the_documented_range(cmd, opt, act):
    """-1 and 0: refused with one line naming the option exactly when the documented range
    (the type's limits, shown by --help) excludes them; else parsed as that number."""
    kind, lim = act.type.number_kind, act.type.limits
    n = act.nargs if isinstance(act.nargs, int) else 1
    for v in EDGE:
        x = kind(v)
        lo_ok = (lim.get("minimum") is None or x >= lim["minimum"]) and (lim.get("above") is None or x > lim["above"])
        hi_ok = lim.get("maximum") is None or x <= lim["maximum"]
        try:
            ns = PARSER.parse_args(option_argv(cmd, opt, act, v))
        except UsageError as exc:
            assert not (lo_ok and hi_ok), f"{cmd} {opt} {v}: refused although in its range: {exc}"
            assert opt in str(exc) and "\n" not in str(exc)
        else:
            assert lo_ok and hi_ok, f"{cmd} {opt} {v} accepted outside its range {act.type.range_text}"
            got = getattr(ns, act.dest)
            assert got == x or got == [x] * n
    assert act.type.range_text in " ".join(SUBPARSERS[cmd].format_help().split())


def test_number_parser_bounds(rng):
    """The one parser: finite, inside ±FLOAT_LIMIT / ±INT_LIMIT and the option's own range."""
    for _ in range(50):
        x = float(rng.uniform(-FLOAT_LIMIT, FLOAT_LIMIT))
        assert number("--x", repr(x)) == x
        k = int(rng.integers(-2 ** 62, 2 ** 62))
        assert number("--k", str(k), int) == k
    for bad in ("inf", "nan", "1e16", "-1e16", "1e400", "", "abc", "0x10"):
        with pytest.raises(UsageError, match="--x"):
            number("--x", bad)
    with pytest.raises(UsageError, match="--k"):
        number("--k", str(INT_LIMIT + 1), int)
    with pytest.raises(UsageError, match="must be > 0"):
        number("--t", "0", above=0)


def test_threads_are_capped_at_cores_times_the_factor(capsys):
    from kernels import limits
    top = limits.max_host_threads()
    assert top == (os.cpu_count() or 1) * limits.HOST_THREADS_PER_CORE
    for argv in (["flint", "wang", "--threads", str(top + 1)], ["graph-clustering", "--threads", str(top + 1)],
                 ["graph-sssp", "table", "--threads", str(top + 1)], ["rng", "--threads", str(top + 1)],
                 ["graph", "--apsp", "cpu-dijkstra", "--threads", "100000"]):
        status, _out, err = run(argv, capsys)
        assert status == 2 and "--threads" in one_error(err)


def test_cpu_dijkstra_caps_threads_at_the_kernel(capsys):
    """The kernel refuses too many threads itself (it aborted in std::system_error)."""
    from kernels.errors import InvalidParameter
    from kernels.graphs.apsp import METHODS
    from kernels.limits import max_host_threads
    with pytest.raises(InvalidParameter, match="threads"):
        METHODS["cpu-dijkstra"](threads=max_host_threads() + 1)
    status, _out, err = run(["graph", "--n", "30", "--apsp", "cpu-dijkstra", "--threads",
                             str(max_host_threads() + 1), "--backend", "cpu"], capsys)
    assert status == 2 and "threads must be in 1 …" in one_error(err)


@pytest.mark.parametrize("argv,words", [
    (["ch", "--dx", "1e308"], "--dx"),
    (["flint", "wang", "--max-model-mb", "1e308"], "--max-model-mb"),
    (["graph", "--n", "20", "--apsp", "fw-fast", "--fw-option", "lookahead=-1", "--backend", "cpu"], "lookahead"),
    (["graph", "--n", "20", "--apsp", "fw-fast", "--fw-option", "lookahead=2", "--backend", "cpu"], "lookahead"),
    (["graph", "--n", "20", "--apsp", "fw-mm", "--fw-option", "l=1000000000", "--backend", "cpu"], "l must be ≤"),
    (["ch-sweep", "--vary", "dx=1e308,1", "--scheduler", "none", "--size", "16", "--backend", "cpu"], "1e308"),
    (["ch-sweep", "--vary", "steps=1,99999999999999999999", "--scheduler", "none", "--size", "16", "--backend", "cpu"],
     "integer range"),
])
def test_issue_examples(argv, words, capsys):
    status, _out, err = run(argv, capsys)
    assert status == 2 and words in one_error(err)


def test_overflow_is_not_unexpected():
    from cli.common import message
    text = message(OverflowError(34, "Numerical result out of range"))
    assert "unexpected" not in text and "too large" in text


def test_two_outputs_naming_one_file(tmp_path, capsys):
    d = tmp_path / "d.npy"
    (tmp_path / "sub").mkdir()
    status, _out, err = run(["graph", "--n", "30", "--apsp", "fw-fast", "--backend", "cpu", "--export-distances", str(d),
                             "--export-paths", str(tmp_path / "sub" / ".." / "d.npy")], capsys)
    assert status == 2 and "name the same file" in one_error(err)
    link = tmp_path / "link.npy"
    os.symlink(d, link)
    status, _out, err = run(["graph", "--n", "30", "--apsp", "fw-fast", "--backend", "cpu", "--export-distances", str(d),
                             "--export-paths", str(link)], capsys)
    assert status == 2 and "name the same file" in one_error(err)
    assert not d.exists()
    status, _out, err = run(["graph", "--n", "30", "--apsp", "fw-fast", "--backend", "cpu", "--export-distances", str(d),
                             "--export-paths", str(tmp_path / "p.npy")], capsys)
    assert status == 0, err
    assert d.exists() and (tmp_path / "p.npy").exists()


def test_graph_n_checks_the_matrix_before_building(monkeypatch, capsys):
    from kernels.graphs.data import generators
    monkeypatch.setattr(generators, "generate", lambda *a, **k: pytest.fail("the graph was built"))
    status, _out, err = run(["graph", "--n", "5000001", "--backend", "cpu"], capsys)
    assert status == 2 and "5000001 × 5000001" in one_error(err)


def test_graph_reproduce_checks_every_instance_first(monkeypatch, capsys):
    from kernels.graphs.experiments import reproduce
    monkeypatch.setattr(reproduce, "run_sweep", lambda *a, **k: pytest.fail("an instance ran"))
    status, _out, err = run(["graph-reproduce", "--sizes", "20,30", "--instances", "2", "--backend", "cpu"], capsys)
    assert status == 2 and "type ba, N = 20" in one_error(err)


def test_check_instances_passes_good_sizes():
    from kernels.errors import InvalidParameter
    from kernels.graphs.experiments import reproduce
    reproduce.check_instances(["alpha-ring", "alpha", "ba"], [200, 1000])
    with pytest.raises(InvalidParameter, match="alpha"):
        reproduce.check_instances(["alpha"], [200], {"alpha": {"k": 300}})


def test_ch_sweep_runs_gpu_variants_on_the_cpu_backend(tmp_path):
    """Kernels A–E once made a CPU sweep refuse before its first point; since issue 33 they run their
    CUDA source on the host device, so a CPU sweep over variants gives a row per point, and kernel E's
    row agrees with the reference stepper's to rounding."""
    from kernels import hostcc
    from kernels.sweep import Sweep, make_task
    if hostcc.find_compiler() is None:
        pytest.skip("needs a host C++ compiler")
    task = make_task("ch", steps=4, record_every=2, size=16, backend="cpu", seed=int(np.random.default_rng().integers(1 << 20)))
    assert not task.needs_gpu()
    rows = {r["variant"]: r for r in Sweep(task, [{"variant": "reference"}, {"variant": "E"}], scheduler="none").rows()}
    assert set(rows) == {"reference", "E"} and not any(r.get("error") for r in rows.values()), rows
    assert rows["E"]["free_energy_final"] == pytest.approx(rows["reference"]["free_energy_final"], rel=1e-5)


def _junk_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            try:
                c.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(range(256)) * 4)
            except OSError:
                pass
    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_a_non_dask_scheduler_is_one_line(capsys):
    """A tcp:// address where another protocol answers: one line naming the address (it was a
    MemoryError, then a traceback from a half-built client)."""
    pytest.importorskip("distributed")
    srv = _junk_server()
    try:
        addr = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
        status, _out, err = run(["ch-sweep", "--vary", "seed=1,2", "--size", "16", "--steps", "2", "--scheduler",
                                 addr, "--quiet"], capsys)
    finally:
        srv.close()
    line = one_error(err)
    assert status == 2 and addr in line and "not a Dask scheduler" in line and "memory" not in line
