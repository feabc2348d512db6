"""Issue 37 §1: the Flint runtimes, the launch tables, the app's sweep kernels and the CLI's commands
are each one :class:`kernels.registry.Registry` (one duplicate policy, an error naming the choices),
and a Runtime class is accepted wherever a runtime name is."""
import subprocess
import sys
import types

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.registry import Registry


def test_flint_runtimes_registry_accepts_a_class(rng):
    from kernels.flint import Simulation, load_model
    from kernels.flint.runtimes import RUNTIMES, CpuRuntime, register, runtime_class
    assert isinstance(RUNTIMES, Registry) and RUNTIMES.names()[:2] == ["cpu", "is"]

    class Unregistered(CpuRuntime):
        """The NumPy runtime under no name: accepted as a class, never registered."""
        name = ""
    lr = load_model("luo_rudy_1991")
    n = int(rng.integers(2, 6))
    member = {"g_Na": rng.uniform(16.0, 23.0, n)}
    a = Simulation(lr, runtime=Unregistered, n=n, member_params=member)
    b = Simulation(lr, runtime="cpu", n=n, member_params=member)
    steps = int(rng.integers(50, 200))
    np.testing.assert_array_equal(a.advance(steps, 0.01, record=[0], every=5)[1],
                                  b.advance(steps, 0.01, record=[0], every=5)[1])
    assert a.runtime == "Unregistered" and "Unregistered" not in RUNTIMES
    assert runtime_class(CpuRuntime) is CpuRuntime and register(CpuRuntime) is CpuRuntime   # again: no-op
    with pytest.raises(ValueError, match="registered twice"):
        register(type("Impostor", (CpuRuntime,), {"name": "cpu"}))
    with pytest.raises(InvalidParameter, match="unknown Flint runtime 'nope': use one of cpu, is"):
        runtime_class("nope")
    with pytest.raises(InvalidParameter, match="not a registered Flint runtime"):
        runtime_class(dict)


def test_launch_tables_are_registries():
    from kernels import app_kernels, launches
    for reg in (launches.LAUNCHES, launches.PROVIDERS, launches.COMPILERS, launches.SWEEPS, app_kernels.SWEEP_CASES):
        assert isinstance(reg, Registry)
    assert list(app_kernels.SWEEP_CASES) == list(app_kernels.SWEEP_KERNELS) == ["ch_point", "rng_per_thread"]
    assert set(app_kernels.SWEEP_CASES) <= set(launches.sweep_kernels())
    app_kernels.register()                              # again: the providers are replaced, not doubled
    assert launches.provided().count("fw-mm t=64") == 1
    with pytest.raises(ValueError, match="unknown sweep kernel 'nope': use one of ch_point, rng_per_thread"):
        launches.sweep_case("nope", 64)
    with pytest.raises(InvalidParameter, match="unknown sweep kernel 'nope'"):
        app_kernels.block_size_sweep("nope")


def test_app_kernels_import_no_compute_system():
    """The sweep kernels are lazy "module:function" entries: importing app_kernels (the main window does
    at start-up) imports neither Cahn–Hilliard's CUDA stepper nor the RNG's GPU module."""
    code = ("import sys, kernels.app_kernels as a; "
            "print(sorted(m for m in ('kernels.cahn_hilliard.cuda_stepper', 'kernels.rng.gpu') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_commands_registry_in_help_order(capsys):
    import cli
    assert isinstance(cli.COMMANDS, Registry)
    assert all(cli.COMMANDS[name].NAME == name for name in cli.COMMANDS)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--help"])
    helptext = capsys.readouterr().out
    section = helptext.split("WORKSPACE\n", 1)[1].split("\noptions:", 1)[0]
    listed = [line.split()[0] for line in section.splitlines() if line.startswith("    ") and not line.startswith("     ")]
    assert listed == cli.COMMANDS.names()                  # --help lists the registry, in its order
    fake = types.SimpleNamespace(NAME="ch")
    with pytest.raises(ValueError, match="command 'ch' is registered twice"):
        cli.COMMANDS.register(fake)


def test_every_house_registry_is_one_type():
    """Issue 37: one Registry type serves every name → implementation table of the app."""
    import cli
    from explorer import workspaces
    from kernels import app_kernels, launches
    from kernels.cahn_hilliard.steppers import VARIANT_STEPPERS
    from kernels.flint.runtimes import RUNTIMES
    from kernels.flint.schemes import ADAPTIVE_BACKENDS, ENGINES, METHODS
    from kernels.graphs.apsp import METHODS as APSP
    from kernels.graphs.layout import LAYOUTS
    from kernels.graphs.algorithms.overlays import OVERLAYS
    from kernels.rng.streams import APPROACHES
    from kernels.sweep import TASKS
    regs = (cli.COMMANDS, workspaces.WORKSPACES, launches.LAUNCHES, app_kernels.SWEEP_CASES, VARIANT_STEPPERS,
            RUNTIMES, ADAPTIVE_BACKENDS, ENGINES, METHODS, APSP, LAYOUTS, OVERLAYS, APPROACHES, TASKS)
    assert all(isinstance(r, Registry) for r in regs), [type(r) for r in regs if not isinstance(r, Registry)]
    for r in regs:                                       # every one refuses an unknown name the same way
        with pytest.raises(InvalidParameter, match="use one of"):
            r.get("no-such-entry")
