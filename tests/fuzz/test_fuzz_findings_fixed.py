"""Issue 35, the fuzzer's findings 5, 6, 8, 9, 10 and 11 fixed at their causes: each minimal input
(and variants of it) through the library and through the CLI (in-process; in a subprocess where the
old outcome was the process killed by a signal)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kernels import limits
from kernels.errors import InvalidParameter
from kernels.flint.cellml import read_cellml
from kernels.flint.expr import Expr, const, inline, sym, tree_size
from support.cli_calls import one_error, run
from support.paths import ROOT

M = 'xmlns="http://www.w3.org/1998/Math/MathML"'


# --- SBML ------------------------------------------------------------------------------------------
def sbml(body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
            f'level="3" version="2"><model id="fuzz">{body}</model></sbml>')


def chain(levels: int, events: str = "", x0: str = "1") -> str:
    """f0(a) = a + 1, f_k(a) = f_{k-1}(a) + f_{k-1}(a); dx/dt = f_levels(x)."""
    fds = [f'<functionDefinition id="f0"><math {M}><lambda><bvar><ci>a</ci></bvar><apply><plus/><ci>a</ci><cn>1</cn>'
           '</apply></lambda></math></functionDefinition>']
    for k in range(1, levels + 1):
        fds.append(f'<functionDefinition id="f{k}"><math {M}><lambda><bvar><ci>a</ci></bvar><apply><plus/><apply>'
                   f'<ci>f{k - 1}</ci><ci>a</ci></apply><apply><ci>f{k - 1}</ci><ci>a</ci></apply></apply></lambda>'
                   '</math></functionDefinition>')
    return sbml(f'<listOfFunctionDefinitions>{"".join(fds)}</listOfFunctionDefinitions><listOfParameters>'
                f'<parameter id="x" value="{x0}" constant="false"/><parameter id="z" value="0" constant="false"/>'
                f'</listOfParameters><listOfRules><rateRule variable="x"><math {M}><apply><ci>f{levels}</ci><ci>x</ci>'
                f'</apply></math></rateRule></listOfRules>{events}')


def test_finding5_a_doubling_chain_is_refused_at_once_naming_the_definition(tmp_path, capsys, rng):
    levels = int(rng.integers(30, 60))
    f = tmp_path / "chain.xml"
    f.write_text(chain(levels))
    t0 = time.process_time()
    status, _out, err = run(["flint", f, "--t-end", "1", "--dt", "0.1"], capsys)
    spent = time.process_time() - t0
    line = one_error(err)
    assert status == 2 and "functionDefinition f16" in line and "--max-expression-nodes" in line
    assert spent < 3.0, spent            # was ~10 s CPU: the size is now predicted before building


def test_finding5_predicted_size_is_exact_at_the_limit(rng):
    """A random body calling its parameters several times: the refusal comes exactly when the
    inlined tree passes the limit, and the result (when built) has the predicted size."""
    a, b = sym("a"), sym("b")
    body = Expr("add", (Expr("mul", (a, const(rng.random()))), Expr("sub", (b, a)), Expr("neg", (a,))))
    arg_a = Expr("add", tuple(const(float(v)) for v in rng.random(int(rng.integers(2, 9)))))
    arg_b = Expr("exp", (sym("q"),))
    want = tree_size(body)[0] + 3 * (tree_size(arg_a)[0] - 1) + (tree_size(arg_b)[0] - 1)
    with limits.raised(expression_nodes=want):
        out = inline(body, {"a": arg_a, "b": arg_b}, "f()")
    assert tree_size(out)[0] == want
    with limits.raised(expression_nodes=want - 1), pytest.raises(limits.ExpansionLimit, match=r"f\(\)"):
        inline(body, {"a": arg_a, "b": arg_b}, "f()")


def test_finding5_chain_of_inlines_stops_in_linear_work(rng):
    """f_k = f_{k-1}(a) + f_{k-1}(a) built by inline itself, 60 levels: refused at the first level
    past the limit (2^(k+1) − 1 > limit), in well under a second."""
    lim = int(rng.integers(1_000, 200_000))
    body = Expr("add", (sym("a"), const(1.0)))
    t0 = time.process_time()
    with limits.raised(expression_nodes=lim), pytest.raises(limits.ExpansionLimit) as info:
        for k in range(1, 60):
            body = Expr("add", (inline(body, {"a": sym("a")}, f"f{k}"), inline(body, {"a": sym("a")}, f"f{k}")))
    assert time.process_time() - t0 < 1.0
    k = int(str(info.value).split(" ", 1)[0][1:])
    assert 2 ** (k + 1) - 1 > lim >= 2 ** k - 1            # body_{k-1} has 2^(k+1) − 1 nodes


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-INF", "INF"])
def test_finding6_non_finite_initial_value_is_one_model_error(tmp_path, capsys, value):
    f = tmp_path / "nonfinite.xml"
    f.write_text(chain(0, x0=value))
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.1"], capsys)
    line = one_error(err)
    assert status == 2 and "initial value of x" in line and "not a finite number" in line


def test_finding6_finite_values_still_run(tmp_path, capsys, rng):
    x0 = float(rng.uniform(0.1, 2.0))
    f = tmp_path / "finite.xml"
    f.write_text(chain(0, x0=repr(x0)))
    status, out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.5", "--json"], capsys)
    assert status == 0, err


def _slow_events() -> str:
    ev = (f'<event id="e1" useValuesFromTriggerTime="true"><trigger initialValue="false" persistent="true"><math {M}>'
          f'<true/></math></trigger><delay><math {M}><cn>0</cn></math></delay><listOfEventAssignments>'
          f'<eventAssignment variable="x"><math {M}><cn>0</cn></math></eventAssignment></listOfEventAssignments>'
          '</event>')
    return f"<listOfEvents>{ev}</listOfEvents>"


def test_finding9_step_budget_ends_a_slow_run_naming_the_flag(tmp_path, capsys):
    f = tmp_path / "slow.xml"
    f.write_text(chain(8, _slow_events(), x0="9.8e-244"))
    t0 = time.process_time()
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.1"], capsys)
    line = one_error(err)
    assert status == 2 and "--max-solver-steps" in line and f"{limits.MAX_SOLVER_STEPS:,}" in line
    assert time.process_time() - t0 < 10.0


def test_finding9_the_flag_sets_the_budget(tmp_path, capsys, rng):
    """A model needing more than a handful of steps stops at a small budget, runs at the default;
    and the small budget is not inherited by the next run in the same process."""
    f = tmp_path / "grow.xml"
    f.write_text(chain(2, x0=repr(float(rng.uniform(0.5, 1.5)))))
    argv = ["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.5", "--json"]
    status, _out, err = run(argv + ["--max-solver-steps", "3"], capsys)
    line = one_error(err)
    assert status == 2 and "more than 3 steps" in line
    status, _out, err = run(argv, capsys)
    assert status == 0, err


# --- CellML ----------------------------------------------------------------------------------------
def cellml(math: str, units: str = "", var_units: str = "dimensionless") -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" '
            'xmlns:cellml="http://www.cellml.org/cellml/2.0#" name="m">'
            f'{units}<component name="c"><variable name="t" units="dimensionless" interface="public_and_private"/>'
            f'<variable name="x" units="{var_units}" initial_value="1" interface="public_and_private"/>'
            f'<math {M}><apply><eq/><apply><diff/><bvar><ci>t</ci></bvar><ci>x</ci></apply>{math}</apply></math>'
            '</component></model>')


@pytest.mark.parametrize("markup", ["<!-- c -->", "<!---->", "<?pi data?>", "<!--\n multi\n line -->"])
def test_finding8_comments_and_processing_instructions_inside_mathml(markup, rng):
    k = float(rng.uniform(0.5, 3.0))
    plain = read_cellml(cellml(f"<apply><times/><cn cellml:units='dimensionless'>{k!r}</cn><ci>x</ci></apply>"),
                        "m.cellml")
    marked = read_cellml(cellml(f"<apply><times/><cn cellml:units='dimensionless'>{markup}{k!r}</cn><ci>{markup}x</ci>{markup}</apply>"),
                         "m.cellml")
    y = {"x": float(rng.uniform(-2, 2))}
    assert marked.rhs_reference(0.0, [y["x"]]) == pytest.approx(plain.rhs_reference(0.0, [y["x"]]))


def test_finding10_undefined_units_are_refused_naming_them(rng):
    name = "u" + "".join(rng.choice(list("abcdefgh"), 6))
    with pytest.raises(InvalidParameter, match=f"'per_s' is built from units '{name}'"):
        read_cellml(cellml("<apply><minus/><ci>x</ci></apply>",
                           f'<units name="per_s"><unit units="{name}" exponent="-1"/></units>', "per_s"), "m.cellml")
    for spelling in ("liter", "meter"):                      # not libcellml standard units
        with pytest.raises(InvalidParameter, match=spelling):
            read_cellml(cellml("<apply><minus/><ci>x</ci></apply>",
                               f'<units name="v"><unit units="{spelling}"/></units>', "v"), "m.cellml")
    with pytest.raises(InvalidParameter, match=f"variable 'x' has units '{name}'"):
        read_cellml(cellml("<apply><minus/><ci>x</ci></apply>", "", name), "m.cellml")
    ok = read_cellml(cellml("<apply><minus/><ci>x</ci></apply>", '<units name="per_s"><unit units="second" '
                            'exponent="-1"/></units><units name="v"><unit units="per_s"/></units>', "v"), "m.cellml")
    assert "x" in ok.states


@pytest.mark.parametrize("first", ["<ci>x</ci>", "<cn>2</cn>", "<apply><minus/><ci>x</ci></apply>", ""])
def test_finding11_apply_without_an_operator(first):
    with pytest.raises(InvalidParameter, match="<apply> starts with"):
        read_cellml(cellml(f"<apply>{first}<apply><minus/><ci>x</ci></apply></apply>"), "m.cellml")


def test_signal_cases_exit_2_in_a_subprocess(tmp_path):
    """The inputs that killed the process (SIGSEGV in libcellml) now give one error line, exit 2."""
    cases = {
        "comment.cellml": (cellml("<apply><minus/><ci><!-- c -->x</ci></apply>"), 0),
        "units.cellml": (cellml("<apply><minus/><ci>x</ci></apply>",
                                '<units name="per_s"><unit units="nosuch" exponent="-1"/></units>', "per_s"), 2),
        "apply.cellml": (cellml("<apply><minus/><ci>x</ci></apply>")
                         .replace("</math>", "<apply><ci>x</ci><apply><minus/><ci>x</ci></apply></apply></math>"), 2),
    }
    env = dict(os.environ, GSE_BACKEND="cpu")
    for name, (text, want) in cases.items():
        f = tmp_path / name
        f.write_text(text)
        p = subprocess.run([sys.executable, str(ROOT / "main.py"), "flint", str(f), "--t-end", "0.5"],
                           capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
        assert p.returncode == want, (name, p.returncode, p.stderr[-500:])
        if want == 2:
            one_error(p.stderr)


def reaction_model(stoich: str, k: str) -> str:
    return sbml('<listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>'
                '<listOfSpecies><species id="S" compartment="c" initialAmount="1" hasOnlySubstanceUnits="true" '
                'boundaryCondition="false" constant="false"/></listOfSpecies><listOfParameters>'
                f'<parameter id="k" value="{k}" constant="true"/></listOfParameters><listOfReactions>'
                '<reaction id="r" reversible="false"><listOfReactants><speciesReference species="S" '
                f'stoichiometry="{stoich}" constant="true"/></listOfReactants><kineticLaw><math {M}><apply><times/>'
                '<ci>k</ci><ci>S</ci></apply></math></kineticLaw></reaction></listOfReactions>')


@pytest.mark.parametrize("stoich, k, words", [("INF", "1", "stoichiometry of S is not a finite"),
                                              ("1", "INF", "rate of change of S is not a finite")])
def test_finding6_non_finite_stoichiometry_or_rate_is_named(tmp_path, capsys, stoich, k, words):
    f = tmp_path / "reaction.xml"
    f.write_text(reaction_model(stoich, k))
    status, _out, err = run(["flint", f, "--runtime", "sbml", "--t-end", "1", "--dt", "0.5",
                             "--max-solver-steps", "2000"], capsys)
    assert status == 2 and words in one_error(err)
