"""A new Flint runtime is one Runtime subclass plus one registry line (issue 22): a toy runtime
registered from this test runs through Simulation, the CLI's ``--runtime`` (choices and help) and the
GUI's runtime list, and agrees with the NumPy runtime's bytecode emulation to the last bit."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import Simulation, load_model
from kernels.flint.runtimes import RUNTIMES, Runtime, register, runtime_help, unregister
from kernels.flint.runtimes.emulate import interpret


class ToyEulerRuntime(Runtime):
    """Forward Euler on the bytecode interpreter's NumPy emulation, written from scratch here."""
    name = "toy-euler"
    help = "a toy: Euler over the emulated bytecode (tests only)"
    mappings = ("cell",)

    def build(self, prog, dtype) -> None:
        if self.integrator != "euler":
            raise InvalidParameter("the toy runtime integrates with euler only")
        self.prog, self.dtype = prog, np.dtype(dtype)
        self.P = prog.pvar_values.astype(self.dtype)

    def advance(self, k, dt, step0) -> None:
        for step in range(step0, step0 + k):
            self.y = self.y + dt * interpret(self.prog, self.y, None, 0.0, step * dt, self.P)

    def info(self) -> dict:
        return {**super().info(), "toy": True}


@pytest.fixture
def toy():
    register(ToyEulerRuntime)              # the one registry line
    yield ToyEulerRuntime
    unregister(ToyEulerRuntime.name)


def test_toy_runtime_runs_through_simulation(toy):
    lr = load_model("luo_rudy_1991")
    member = {"g_Na": np.linspace(16.0, 23.0, 3)}
    a = Simulation(lr, runtime="toy-euler", n=3, member_params=member)
    b = Simulation(lr, runtime="cpu", n=3, member_params=member, bytecode_on_cpu=True)
    ta, ya = a.advance(230, 0.01, record=[0, 1], every=7)
    tb, yb = b.advance(230, 0.01, record=[0, 1], every=7)
    np.testing.assert_array_equal(ta, tb)
    np.testing.assert_array_equal(ya, yb)                 # same operations in the same order
    assert ya.shape == (230 // 7, 2, 3) and a.steps == 230
    assert a.info()["toy"] is True and a.info()["compile_seconds"] >= 0
    with pytest.raises(InvalidParameter, match="toy-euler runs the cell mapping"):
        Simulation(lr, runtime="toy-euler", mapping="expression")


def test_toy_runtime_in_cli_choices_and_gui_list(toy, capsys):
    from cli import main
    with pytest.raises(SystemExit):
        main(["flint", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert "euler: a toy: Euler over the emulated bytecode" in helptext.replace("toy- euler", "toy-euler")
    assert main(["flint", "luo_rudy_1991", "--runtime", "toy-euler", "--t-end", "1", "--record", "V",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runtime"] == "toy-euler" and out["steps"] == 100 and out["block_size"] is None
    from explorer.flint.run_form import gui_engines
    assert "toy-euler" in gui_engines(gpu=False) and "toy-euler" in runtime_help()


def test_unknown_runtime_names_the_registry(toy):
    from cli import main
    assert main(["flint", "luo_rudy_1991", "--runtime", "nope"]) == 2
    with pytest.raises(InvalidParameter, match="toy-euler"):
        Simulation(load_model("luo_rudy_1991"), runtime="nope")


def test_unregistered_toy_is_gone():
    assert "toy-euler" not in RUNTIMES
