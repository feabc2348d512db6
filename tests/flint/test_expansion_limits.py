"""Issue 35: expansion limits that name the model element, with a flag to raise them — the size and
depth of an inlined expression (SBML function definitions), and event firings at one instant
(Zeno events, events that re-trigger each other) in the SBML reference simulator."""
from __future__ import annotations

import math

import pytest

from kernels import limits
from kernels.flint.expr import Expr, const, inline, sym, tree_size
from support.cli_calls import one_error, run

M = 'xmlns="http://www.w3.org/1998/Math/MathML"'


def sbml(body: str, model: str = "m") -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core" '
            f'level="3" version="1"><model id="{model}">{body}</model></sbml>')


def bomb(levels: int, factor: float) -> str:
    """f0(x) = factor·x, f_i(x) = f_{i-1}(x) + f_{i-1}(x): f_k(x) = 2^k·factor·x as 2^(k+1) − 1 nodes."""
    fds = [f'<functionDefinition id="f0"><math {M}><lambda><bvar><ci>x</ci></bvar><apply><times/><ci>x</ci>'
           f'<cn>{factor!r}</cn></apply></lambda></math></functionDefinition>']
    for i in range(1, levels + 1):
        fds.append(f'<functionDefinition id="f{i}"><math {M}><lambda><bvar><ci>x</ci></bvar><apply><plus/><apply>'
                   f'<ci>f{i - 1}</ci><ci>x</ci></apply><apply><ci>f{i - 1}</ci><ci>x</ci></apply></apply></lambda>'
                   f'</math></functionDefinition>')
    return sbml(f'<listOfFunctionDefinitions>{"".join(fds)}</listOfFunctionDefinitions>'
                '<listOfParameters><parameter id="p" value="1" constant="false"/></listOfParameters>'
                f'<listOfRules><rateRule variable="p"><math {M}><apply><ci>f{levels}</ci><ci>p</ci></apply></math>'
                '</rateRule></listOfRules>', "bomb")


def deep(depth: int) -> str:
    """dp/dt = −(−(…(k)…)) with ``depth`` minus signs."""
    math_ = "<apply><minus/>" * depth + "<ci>k</ci>" + "</apply>" * depth
    return sbml('<listOfParameters><parameter id="p" value="0" constant="false"/>'
                '<parameter id="k" value="2" constant="true"/></listOfParameters>'
                f'<listOfRules><rateRule variable="p"><math {M}>{math_}</math></rateRule></listOfRules>', "deep")


def _event(eid, trig, assigns):
    a = "".join(f'<eventAssignment variable="{v}"><math {M}>{x}</math></eventAssignment>' for v, x in assigns)
    return (f'<event id="{eid}" useValuesFromTriggerTime="true"><trigger initialValue="false" persistent="true">'
            f'<math {M}>{trig}</math></trigger><listOfEventAssignments>{a}</listOfEventAssignments></event>')


def ping_pong() -> str:
    """A fires when p > 0.5 and sets q = 1, p = 0; B fires when q > 0.5 and sets p = 1, q = 0: at
    t = 0.5 they re-trigger each other for ever."""
    gt = lambda v: f'<apply><gt/><ci>{v}</ci><cn>0.5</cn></apply>'        # noqa: E731
    return sbml('<listOfParameters><parameter id="p" value="0" constant="false"/>'
                '<parameter id="q" value="0" constant="false"/></listOfParameters>'
                f'<listOfRules><rateRule variable="p"><math {M}><cn>1</cn></math></rateRule></listOfRules>'
                '<listOfEvents>' + _event("A", gt("p"), [("q", "<cn>1</cn>"), ("p", "<cn>0</cn>")])
                + _event("B", gt("q"), [("p", "<cn>1</cn>"), ("q", "<cn>0</cn>")]) + '</listOfEvents>', "pingpong")


def bouncing_ball() -> str:
    """The Zeno ball: h' = v, v' = −9.81, bounce at h < 0 with v → −v/2: infinitely many bounces
    before t* = 3·sqrt(2/9.81) ≈ 1.3546."""
    return sbml('<listOfParameters><parameter id="h" value="1" constant="false"/>'
                '<parameter id="v" value="0" constant="false"/></listOfParameters>'
                f'<listOfRules><rateRule variable="h"><math {M}><ci>v</ci></math></rateRule>'
                f'<rateRule variable="v"><math {M}><cn>-9.81</cn></math></rateRule></listOfRules>'
                '<listOfEvents>' + _event("bounce", '<apply><lt/><ci>h</ci><cn>0</cn></apply>',
                                          [("v", "<apply><times/><cn>-0.5</cn><ci>v</ci></apply>"),
                                           ("h", "<cn>0</cn>")]) + '</listOfEvents>', "zeno")


@pytest.fixture(autouse=True)
def default_limits():
    token = limits.set_limits(expression_nodes=limits.MAX_EXPRESSION_NODES,
                              events_per_instant=limits.MAX_EVENTS_PER_INSTANT,
                              expression_depth=limits.MAX_EXPRESSION_DEPTH)
    yield token
    limits.set_limits(expression_nodes=limits.MAX_EXPRESSION_NODES,
                      events_per_instant=limits.MAX_EVENTS_PER_INSTANT,
                      expression_depth=limits.MAX_EXPRESSION_DEPTH)


# ------------------------------------------------------------------ inlined expression size
@pytest.mark.parametrize("runtime", ["sbml", "cpu"])
def test_exponential_function_definitions_are_refused_naming_them(tmp_path, capsys, runtime):
    f = tmp_path / "bomb.xml"
    f.write_text(bomb(40, 1.0))                   # 2^41 nodes if expanded: it hung past 2.5 GiB
    status, _out, err = run(["flint", f, "--runtime", runtime, "--t-end", "1", "--dt", "0.1",
                             "--max-expression-nodes", "2000"], capsys)
    line = one_error(err)
    assert status == 2 and "function definition f" in line and "--max-expression-nodes" in line


def test_the_flag_raises_the_node_limit(tmp_path, capsys, rng):
    levels, factor = 9, float(rng.uniform(0.5, 1.5))
    f = tmp_path / "small.xml"
    f.write_text(bomb(levels, factor))           # 2^10 − 1 nodes
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "0.01", "--dt", "0.01", "--every", "1",
                             "--max-expression-nodes", "500", "--json"], capsys)
    assert status == 2 and "function definition f" in one_error(err)
    status, out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "0.01", "--dt", "0.01", "--every", "1",
                            "--max-expression-nodes", "5000", "--json"], capsys)
    assert status == 0, err
    import json
    final = json.loads(out)["variables"]["p"]["final"]
    assert final == pytest.approx(math.exp(2 ** levels * factor * 0.01), rel=1e-6)


def test_inline_keeps_sharing_and_counts_the_tree(rng):
    """inline(): time follows the distinct nodes; tree_size is the exact size of the expanded tree."""
    def naive(e):
        return (1 + sum(naive(a)[0] for a in e.args), 1 + max((naive(a)[1] for a in e.args), default=0))
    x = sym("x")
    for _ in range(20):
        e = Expr("mul", (x, const(float(rng.normal()))))
        for _level in range(int(rng.integers(1, 8))):
            op = str(rng.choice(["add", "mul", "sub"]))
            e = Expr(op, (e, e) if rng.random() < 0.5 else (e, Expr("neg", (e,))))
        assert tree_size(e) == naive(e)
        y = const(float(rng.normal()))
        out = inline(e, {"x": y}, "test")
        assert tree_size(out) == tree_size(e)
        assert "x" not in out.symbols()
    big = x
    for _ in range(60):                           # 2^60 tree nodes, 61 distinct ones
        big = Expr("add", (big, big))
    with pytest.raises(limits.ExpansionLimit, match="the big one"):
        inline(big, {"x": const(1.0)}, "the big one")


# ------------------------------------------------------------------ depth
def test_deep_mathml_is_a_depth_limit_not_recursion(tmp_path, capsys):
    f = tmp_path / "deep.xml"
    f.write_text(deep(400))
    for runtime in ("sbml", "cpu"):
        status, _out, err = run(["flint", f, "--runtime", runtime, "--t-end", "1", "--dt", "0.5"], capsys)
        line = one_error(err)
        assert status == 2 and "nested too deeply" in line and "--max-expression-depth" in line


def test_the_flag_raises_the_depth_limit(tmp_path, capsys):
    f = tmp_path / "deep.xml"
    f.write_text(deep(150))                       # even: dp/dt = k = 2
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.5", "--every", "1",
                             "--max-expression-depth", "100"], capsys)
    assert status == 2 and "nested too deeply" in one_error(err)
    status, out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.5", "--every", "1",
                            "--max-expression-depth", "160", "--json"], capsys)
    assert status == 0, err
    import json
    assert json.loads(out)["variables"]["p"]["final"] == pytest.approx(2.0, rel=1e-8)


# ------------------------------------------------------------------ events per instant
def events_error(tmp_path, capsys, name: str, text: str, limit: int) -> str:
    """The one error line of ``flint MODEL --runtime sbml`` with ``--max-events-per-instant limit``."""
    f = tmp_path / name
    f.write_text(text)
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "2", "--dt", "0.1", "--every", "1",
                             "--max-events-per-instant", limit], capsys)
    line = one_error(err)
    assert status == 2 and "--max-events-per-instant" in line
    return line


def test_events_that_retrigger_each_other_stop_naming_them(tmp_path, capsys):
    line = events_error(tmp_path, capsys, "pingpong.xml", ping_pong(), 20)
    assert "A" in line and "B" in line and "t = 0.5" in line


def test_zeno_events_stop_naming_them(tmp_path, capsys):
    line = events_error(tmp_path, capsys, "zeno.xml", bouncing_ball(), 10)
    assert "bounce" in line
    t = float(line.split("t = ")[1].split()[0])
    assert t == pytest.approx(3 * math.sqrt(2 / 9.81), rel=1e-4)


def test_a_few_events_at_one_instant_are_fine(tmp_path, capsys, rng):
    """A cascade within the limit runs: k events chained at one instant (e_i sets x_{i+1}).  What
    counts: each firing, and each located trigger change (here e0's), so k + 1 at t = 0.5."""
    k = int(rng.integers(3, 8))
    params = '<parameter id="p" value="0" constant="false"/>' + "".join(
        f'<parameter id="x{i}" value="0" constant="false"/>' for i in range(k + 1))
    evs = _event("e0", '<apply><gt/><ci>p</ci><cn>0.5</cn></apply>', [("x1", "<cn>1</cn>")]) + "".join(
        _event(f"e{i}", f'<apply><gt/><ci>x{i}</ci><cn>0.5</cn></apply>', [(f"x{i + 1}", "<cn>1</cn>")])
        for i in range(1, k))
    f = tmp_path / "cascade.xml"
    f.write_text(sbml(f'<listOfParameters>{params}</listOfParameters><listOfRules><rateRule variable="p"><math {M}>'
                      f'<cn>1</cn></math></rateRule></listOfRules><listOfEvents>{evs}</listOfEvents>', "cascade"))
    status, out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.25", "--every", "1",
                            "--max-events-per-instant", str(k + 1), "--json", "--record", f"x{k}"], capsys)
    assert status == 0, err
    import json
    assert json.loads(out)["variables"][f"x{k}"]["final"] == 1.0
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.25", "--every", "1",
                             "--max-events-per-instant", str(k)], capsys)
    assert status == 2 and "--max-events-per-instant" in one_error(err)


def test_limits_context():
    before = limits.current()
    with limits.raised(expression_nodes=7) as lim:
        assert lim.expression_nodes == 7 and limits.current().expression_nodes == 7
    assert limits.current() == before
